"""File > Export Audio and Export Image: the options, asked before the file name.

Audio: format, sample format (bit depth), sample rate and dither, starting from the source's own
(an unedited file then exports bit for bit). Image: what part (as shown, or the whole sound), what
size (the canvas's, one pixel per frame and bin, or any), colormap and dB range (the view's at
first), and axes. Both dialogs are window-modal and answer through ``accepted``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from spectropaint.app.files.audio_export import (
    FORMATS,
    INTEGER_BITS,
    RATES,
    SAMPLE_FORMATS,
    AudioExportOptions,
    sample_formats,
)
from spectropaint.gpu.colormaps import MAGNITUDE_COLORMAPS
from spectropaint.gpu.png_export import native_size
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.files.audio_file import default_export_subtype
from spectropaint.transforms.geometry import seconds_span_label

MAX_IMAGE_SIDE = 65_535


def _buttons(dialog: QDialog, ok: str) -> QDialogButtonBox:
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    buttons.addButton(ok, QDialogButtonBox.ButtonRole.AcceptRole)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons


class AudioExportDialog(QDialog):
    """Options for writing ``document``'s edited sound; :meth:`options` once accepted."""

    def __init__(self, document, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Export Audio")
        self.source = document.audio.format
        self.source_rate = int(document.sample_rate)
        form = QFormLayout(self)
        self.format = QComboBox()
        self.format.setObjectName("export_format")
        self.format.addItems(list(FORMATS))
        self.sample_format = QComboBox()
        self.sample_format.setObjectName("export_sample_format")
        self.rate = QComboBox()
        self.rate.setObjectName("export_rate")
        for rate in sorted({*RATES, self.source_rate}):
            mark = " (the source's)" if rate == self.source_rate else ""
            self.rate.addItem(f"{rate} Hz{mark}", rate)
        self.rate.setCurrentIndex(self.rate.findData(self.source_rate))
        self.dither = QComboBox()
        self.dither.setObjectName("export_dither")
        self.dither.addItem("TPDF (when rounding is needed)", True)
        self.dither.addItem("None", False)
        self.dither.setToolTip(
            "Triangular noise of one least significant bit before rounding to integers: the "
            "rounding error becomes steady noise instead of distortion. Samples that need no "
            "rounding are written exactly."
        )
        form.addRow("Format", self.format)
        form.addRow("Samples", self.sample_format)
        form.addRow("Sample rate", self.rate)
        form.addRow("Dither", self.dither)
        form.addRow(_buttons(self, "Export..."))
        self.format.currentTextChanged.connect(self._format_chosen)
        self.sample_format.currentIndexChanged.connect(self._update_dither)
        source_format = self.source.format if self.source.format in FORMATS else "WAV"
        self.format.setCurrentText(source_format)
        self._format_chosen(source_format)

    def _format_chosen(self, format: str) -> None:
        try:
            preferred = default_export_subtype(self.source, format)
        except SettingsError:  # a format soundfile does not know: the first offered
            preferred = ""
        self.sample_format.blockSignals(True)
        self.sample_format.clear()
        for subtype in sample_formats(format):
            self.sample_format.addItem(SAMPLE_FORMATS[subtype], subtype)
        index = self.sample_format.findData(preferred)
        self.sample_format.setCurrentIndex(max(0, index))
        self.sample_format.blockSignals(False)
        self._update_dither()

    def _update_dither(self) -> None:
        subtype = self.sample_format.currentData()
        self.dither.setEnabled(subtype in INTEGER_BITS and INTEGER_BITS[subtype] < 32)

    def options(self) -> AudioExportOptions:
        return AudioExportOptions(
            self.format.currentText(),
            self.sample_format.currentData(),
            self.rate.currentData(),
            dither=bool(self.dither.currentData()) and self.dither.isEnabled(),
        )


@dataclass(frozen=True)
class ImageExportOptions:
    """What :func:`spectropaint.gpu.png_export.export_png` is asked to draw, in physical units: an
    export may wait for a change of analysis (:class:`~spectropaint.app.window.when_idle.WhenIdle`)
    and then draws the same seconds and Hz of the document it finds (:meth:`view_on`).

    Attributes
    ----------
    view : ViewSettings
        The look and the frequencies shown (``freq_range``, Hz); its ``time_range`` is None.
    seconds : (float, float) or None
        The part of the sound drawn, seconds ``[start, stop)``; None: all of it.
    size : (int, int) or None
        Width and height in pixels; None: a pixel per frame and bin of the document exported.
    axes : bool
    """

    view: ViewSettings
    seconds: tuple[float, float] | None
    size: tuple[int, int] | None
    axes: bool

    def view_on(self, geometry, duration_s: float) -> ViewSettings:
        """:attr:`view` with :attr:`seconds` as frame positions of a block of ``geometry``
        (:class:`~spectropaint.gpu.geometry.BlockGeometry`) of a sound ``duration_s`` long.

        Raises
        ------
        SettingsError
            :attr:`seconds` lie wholly outside the sound (nothing of it would be drawn).
        """
        if self.seconds is None:
            return self.view
        start, stop = self.seconds
        if stop <= 0.0 or start >= duration_s:
            raise SettingsError(
                f"the part of the sound to draw, {seconds_span_label(start, stop)}, lies outside "
                f"the sound ({seconds_span_label(0.0, duration_s)})"
            )
        frames = geometry.frame_position(np.asarray(self.seconds, dtype=np.float64))
        return dataclasses.replace(self.view, time_range=(float(frames[0]), float(frames[1])))

    def size_on(self, view: ViewSettings, geometry) -> tuple[int, int]:
        """:attr:`size`, or a pixel per frame and bin of ``view`` on a block of ``geometry``."""
        return self.size if self.size is not None else native_size(view, geometry)


class ImageExportDialog(QDialog):
    """Options for a PNG of ``view`` (the canvas's) on a ``canvas_size`` canvas; :meth:`options`."""

    def __init__(self, view: ViewSettings, geometry, canvas_size: tuple[int, int], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Export Image")
        self.view, self.geometry, self.canvas_size = view, geometry, canvas_size
        form = QFormLayout(self)
        self.part = QComboBox()
        self.part.setObjectName("image_part")
        self.part.addItem("As shown (the visible part)", True)
        self.part.addItem("The whole sound", False)
        self.size_mode = QComboBox()
        self.size_mode.setObjectName("image_size_mode")
        self.size_mode.addItem("Like the canvas", "canvas")
        self.size_mode.addItem("Native: a pixel per frame and bin", "native")
        self.size_mode.addItem("Custom", "custom")
        self.width_box, self.height_box = QSpinBox(), QSpinBox()
        for box, name in ((self.width_box, "image_width"), (self.height_box, "image_height")):
            box.setObjectName(name)
            box.setRange(1, MAX_IMAGE_SIDE)
            box.setSuffix(" px")
        size_row = QWidget()
        row = QHBoxLayout(size_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.width_box)
        row.addWidget(QLabel("x"))
        row.addWidget(self.height_box)
        self.colormap = QComboBox()
        self.colormap.setObjectName("image_colormap")
        self.colormap.addItems(list(MAGNITUDE_COLORMAPS))
        self.colormap.setCurrentText(view.colormap)
        self.floor = QDoubleSpinBox()
        self.floor.setObjectName("image_floor")
        self.floor.setRange(-240.0, 60.0)
        self.floor.setSuffix(" dB")
        self.floor.setValue(view.resolved_floor_db)
        self.range = QDoubleSpinBox()
        self.range.setObjectName("image_range")
        self.range.setRange(1.0, 240.0)
        self.range.setSuffix(" dB")
        self.range.setValue(view.range_db)
        self.axes = QCheckBox("Time and frequency axes, dB colour bar")
        self.axes.setObjectName("image_axes")
        self.axes.setChecked(True)
        form.addRow("Part", self.part)
        form.addRow("Size", self.size_mode)
        form.addRow("", size_row)
        form.addRow("Colormap", self.colormap)
        form.addRow("Floor", self.floor)
        form.addRow("Range", self.range)
        form.addRow("", self.axes)
        form.addRow(_buttons(self, "Export..."))
        self.part.currentIndexChanged.connect(self._update_size)
        self.size_mode.currentIndexChanged.connect(self._update_size)
        self._update_size()

    def _view(self) -> ViewSettings:
        """The look chosen and the frequencies of the part, with no time range (see
        :meth:`_seconds`) and no overlays."""
        view = dataclasses.replace(
            self.view,
            colormap=self.colormap.currentText(),
            floor_db=self.floor.value(),
            range_db=self.range.value(),
            mode="magnitude",
            time_range=None,
            overlays=type(self.view.overlays)(),
        )
        return view if self.part.currentData() else dataclasses.replace(view, freq_range=None)

    def _seconds(self) -> tuple[float, float] | None:
        """The part's time span, seconds (None: the whole sound)."""
        if not self.part.currentData() or self.view.time_range is None:
            return None
        start, stop = self.geometry.seconds_at(np.asarray(self.view.time_range, dtype=np.float64))
        return float(start), float(stop)

    def _update_size(self) -> None:
        mode = self.size_mode.currentData()
        custom = mode == "custom"
        self.width_box.setEnabled(custom)
        self.height_box.setEnabled(custom)
        if custom:
            return
        if mode == "canvas":
            width, height = self.canvas_size
        else:  # of this analysis: an export after a change of it has its own (ImageExportOptions)
            time_range = self.view.time_range if self.part.currentData() else None
            view = dataclasses.replace(self._view(), time_range=time_range)
            width, height = native_size(view, self.geometry)
        self.width_box.setValue(min(width, MAX_IMAGE_SIDE))
        self.height_box.setValue(min(height, MAX_IMAGE_SIDE))

    def options(self) -> ImageExportOptions:
        native = self.size_mode.currentData() == "native"
        size = None if native else (self.width_box.value(), self.height_box.value())
        return ImageExportOptions(self._view(), self._seconds(), size, self.axes.isChecked())
