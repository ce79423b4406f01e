"""The Analysis dialog: which transform the document is edited in, and its settings.

STFT (FFT size, hop, window) or NSGT (scale, bins per octave, fmin, fmax). Accepting re-analyses the
open document keeping its edits, as one step of the session's undo history
(:mod:`spectropaint.app.analysis_change`), on a worker thread with progress and Cancel
(:mod:`spectropaint.app.window.analysis_jobs`); undo brings the previous analysis back.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from spectropaint.transforms.analysis import AnalysisSettings, transform_name
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.nsgt_design import SCALES, NSGTSettings
from spectropaint.transforms.stft import WINDOWS, STFTSettings

FFT_SIZES = (256, 512, 1024, 2048, 4096, 8192, 16384)


class AnalysisDialog(QDialog):
    """Edits an :data:`AnalysisSettings`; :meth:`settings` gives the chosen one (validated)."""

    def __init__(self, current: AnalysisSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Analysis")
        layout = QVBoxLayout(self)
        self.transform = QComboBox()
        self.transform.setObjectName("analysis_transform")
        self.transform.addItems(["STFT", "NSGT"])
        layout.addWidget(self.transform)

        self.stft_group = QGroupBox("STFT")
        form = QFormLayout(self.stft_group)
        self.n_fft = QComboBox()
        self.n_fft.addItems([str(size) for size in FFT_SIZES])
        self.hop = QSpinBox()
        self.hop.setRange(1, max(FFT_SIZES) // 2)
        self.window_name = QComboBox()
        self.window_name.addItems(list(WINDOWS))
        form.addRow("FFT size", self.n_fft)
        form.addRow("Hop", self.hop)
        form.addRow("Window", self.window_name)
        layout.addWidget(self.stft_group)

        self.nsgt_group = QGroupBox("NSGT")
        form = QFormLayout(self.nsgt_group)
        self.scale = QComboBox()
        self.scale.addItems(list(SCALES))
        self.bins_per_octave = QSpinBox()
        self.bins_per_octave.setRange(12, 96)
        self.fmin = QDoubleSpinBox()
        self.fmin.setRange(1.0, 20000.0)
        self.fmin.setSuffix(" Hz")
        self.fmax = QDoubleSpinBox()
        self.fmax.setRange(0.0, 100000.0)
        self.fmax.setSuffix(" Hz")
        self.fmax.setSpecialValueText("Nyquist")
        form.addRow("Scale", self.scale)
        form.addRow("Bins per octave", self.bins_per_octave)
        form.addRow("Lowest band", self.fmin)
        form.addRow("Highest band", self.fmax)
        layout.addWidget(self.nsgt_group)

        self.problem = QLabel()
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.transform.currentIndexChanged.connect(self._show_group)
        self.set_settings(current)

    def set_settings(self, settings: AnalysisSettings) -> None:
        stft = settings if isinstance(settings, STFTSettings) else STFTSettings()
        nsgt = settings if isinstance(settings, NSGTSettings) else NSGTSettings()
        self.n_fft.setCurrentText(str(stft.n_fft))
        self.hop.setValue(stft.hop)
        self.window_name.setCurrentText(stft.window)
        self.scale.setCurrentText(nsgt.scale)
        self.bins_per_octave.setValue(nsgt.bins_per_octave)
        self.fmin.setValue(nsgt.fmin)
        self.fmax.setValue(nsgt.fmax or 0.0)
        self.transform.setCurrentIndex(1 if transform_name(settings) == "nsgt" else 0)
        self._show_group()

    def _show_group(self) -> None:
        nsgt = self.transform.currentIndex() == 1
        self.nsgt_group.setVisible(nsgt)
        self.stft_group.setVisible(not nsgt)

    def settings(self) -> AnalysisSettings:
        """The settings shown; :class:`SettingsError` naming what is wrong."""
        if self.transform.currentIndex() == 1:
            return NSGTSettings(
                scale=self.scale.currentText(),
                bins_per_octave=self.bins_per_octave.value(),
                fmin=self.fmin.value(),
                fmax=self.fmax.value() or None,
            )
        return STFTSettings(
            n_fft=int(self.n_fft.currentText()),
            hop=self.hop.value(),
            window=self.window_name.currentText(),
        )

    def _accept(self) -> None:
        try:
            self.settings()
        except SettingsError as err:
            self.problem.setText(str(err))
            return
        self.accept()


def change_analysis(window, chosen: Callable[[AnalysisSettings], None]) -> AnalysisDialog | None:
    """Open the dialog for ``window``'s document (not blocking); on OK with other settings,
    ``chosen(settings)`` (the window analyses the edited sound anew as one undoable step:
    :func:`spectropaint.app.window.analysis_jobs.change`). Returns the dialog, or None without a
    document."""
    session = window.session
    if session is None:
        return None
    dialog = AnalysisDialog(session.document.settings, window)

    def accepted() -> None:
        settings = dialog.settings()
        if settings != session.document.settings:
            chosen(settings)

    dialog.accepted.connect(accepted)
    dialog.open()
    return dialog
