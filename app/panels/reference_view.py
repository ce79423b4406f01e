"""The reference view: nnAudio's CQT or VQT of the open document's audio (as edited), read-only.

Shown in a dock beside the view panel so that constant-Q content can be inspected while editing in
the STFT. It analyses the shown channel's first ``MAX_SECONDS`` on the document's device when asked
(the Analyse button), and draws it with the view's colormap, 80 dB down from its loudest cell.
"""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from spectropaint.gpu.colormaps import colormap_tables
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.reference import KINDS, ConstantQ, constant_q

MAX_SECONDS = 60.0
RANGE_DB = 80.0


def picture(result: ConstantQ, colormap: str = "magma") -> np.ndarray:
    """RGB ``[bins, frames, 3]`` uint8, low frequencies at the bottom, the loudest cell the top
    colour and ``RANGE_DB`` below it the first."""
    db = 20 * np.log10(np.maximum(result.magnitude, 1e-12))
    level = np.clip((db - (db.max() - RANGE_DB)) / RANGE_DB, 0.0, 1.0)
    table = colormap_tables()[colormap]
    return np.round(table[np.round(level[::-1] * 255).astype(int)] * 255).astype(np.uint8)


HINT = "CQT or VQT of the shown channel (nnAudio), not editable"
STALE = "; edited since: Analyse again to see the edits"


class ReferenceView(QWidget):
    """Kind (CQT or VQT), bins per octave, lowest band, an Analyse button and the picture."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        form = QFormLayout(self)
        self.kind = QComboBox()
        self.kind.addItems(list(KINDS))
        self.bins_per_octave = QSpinBox()
        self.bins_per_octave.setRange(12, 96)
        self.bins_per_octave.setValue(24)
        self.fmin = QDoubleSpinBox()
        self.fmin.setRange(10.0, 5000.0)
        self.fmin.setValue(32.70)
        self.fmin.setSuffix(" Hz")
        self.button = QPushButton("Analyse")
        self.button.clicked.connect(self.analyse)
        self.image = QLabel()
        self.image.setMinimumHeight(160)
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.info = QLabel(HINT)
        self.info.setWordWrap(True)
        form.addRow("Reference", self.kind)
        form.addRow("Bins per octave", self.bins_per_octave)
        form.addRow("Lowest band", self.fmin)
        form.addRow(self.button)
        form.addRow(self.image)
        form.addRow(self.info)
        self.document = None
        self.channel = 0
        self.result: ConstantQ | None = None

    def set_document(self, document, channel: int = 0) -> None:
        self.document, self.channel, self.result = document, channel, None
        self.image.clear()
        self.info.setText(HINT)

    def audio_changed(self) -> None:
        """The document's audio changed (an edit, an undo or a redo): a picture shown is of the
        audio before, and says so until analysed again."""
        if self.result is not None and not self.info.text().endswith(STALE):
            self.info.setText(self.info.text() + STALE)

    def analyse(self) -> ConstantQ | None:
        """Analyse the document's audio now and show it; the result (None without a document)."""
        document = self.document
        if document is None:
            return None
        count = int(min(document.n_samples, MAX_SECONDS * document.sample_rate))
        samples = document.edited_samples()[self.channel, :count]
        started = time.perf_counter()
        try:
            self.result = constant_q(
                samples,
                document.sample_rate,
                kind=self.kind.currentText(),
                bins_per_octave=self.bins_per_octave.value(),
                fmin=self.fmin.value(),
                device=document.device,
            )
        except SettingsError as err:
            self.info.setText(str(err))
            return None
        rgb = np.ascontiguousarray(picture(self.result))
        height, width, _ = rgb.shape
        image = QImage(rgb.data, width, height, 3 * width, QImage.Format.Format_RGB888).copy()
        self.image.setPixmap(
            QPixmap.fromImage(image).scaled(
                max(1, self.image.width()), 160, Qt.AspectRatioMode.IgnoreAspectRatio
            )
        )
        self.info.setText(
            f"{self.kind.currentText()}: {len(self.result.band_hz)} bands from "
            f"{self.fmin.value():g} Hz, {count / document.sample_rate:.1f} s, "
            f"{(time.perf_counter() - started) * 1e3:.0f} ms on {document.device}"
        )
        return self.result
