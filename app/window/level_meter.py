"""Level meters: one horizontal bar per channel, the RMS filled and the held peak as a line, from
-90 dB to 0 dB of full scale (:mod:`spectropaint.app.playback.levels` computes the numbers)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QLinearGradient, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

from spectropaint.app.playback.levels import FLOOR_DB, Ballistics, db_fraction

BAR_HEIGHT = 5
GAP = 2
TROUGH = QColor(40, 40, 40)
PEAK_RGB = QColor(250, 250, 250)


class LevelMeter(QWidget):
    """Peak and RMS meters of ``channels`` channels (L above R); :meth:`show_levels` feeds them."""

    def __init__(self, channels: int = 2, parent: QWidget | None = None):
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setToolTip("Peak (line) and RMS (bar) of each channel, -90 to 0 dB")
        self.ballistics = Ballistics(channels)

    def set_channels(self, channels: int) -> None:
        self.ballistics = Ballistics(channels)
        self.updateGeometry()
        self.update()

    def show_levels(self, peak_db: np.ndarray, rms_db: np.ndarray, dt: float) -> None:
        self.ballistics.update(peak_db, rms_db, dt)
        self.update()

    def reset(self) -> None:
        self.ballistics.reset()
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        channels = len(self.ballistics.peak)
        return QSize(180, max(12, channels * (BAR_HEIGHT + GAP)))

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        width = self.width()
        channels = len(self.ballistics.peak)
        bar = max(2, min(BAR_HEIGHT * 2, (self.height() - GAP * (channels - 1)) // channels))
        gradient = QLinearGradient(0, 0, width, 0)
        gradient.setColorAt(0.0, QColor(40, 160, 80))
        gradient.setColorAt(db_fraction(-12.0), QColor(200, 200, 60))
        gradient.setColorAt(db_fraction(-3.0), QColor(230, 120, 40))
        gradient.setColorAt(1.0, QColor(220, 40, 40))
        for channel in range(channels):
            top = channel * (bar + GAP)
            painter.fillRect(QRectF(0, top, width, bar), TROUGH)
            rms = db_fraction(float(self.ballistics.rms[channel]))
            painter.fillRect(QRectF(0, top, rms * width, bar), gradient)
            peak = float(self.ballistics.peak[channel])
            if peak > FLOOR_DB:
                x = db_fraction(peak) * (width - 2)
                painter.fillRect(QRectF(x, top, 2, bar), PEAK_RGB)
        painter.end()
