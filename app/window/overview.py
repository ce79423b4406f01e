"""The waveform overview above the spectrogram: the whole sound, the visible range marked; drag the
range to move it, drag its edges to resize it, click elsewhere to centre it there."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from spectropaint.app.waveform_summary import WaveformSummary

HEIGHT = 46
REFRESH_MS = 300
"""While edits come in, the waveform is drawn again at most this often."""
EDGE_GRAB_PX = 5
MIN_RANGE_PX = 6
BACKGROUND = QColor(24, 24, 28)
WAVE_RGB = QColor(120, 170, 220)
SHADE = QColor(0, 0, 0, 120)
RANGE_RGB = QColor(255, 255, 255, 200)


def waveform_pixels(low: np.ndarray, high: np.ndarray, height: int) -> np.ndarray:
    """``[height, W, 3]`` uint8: each channel's band (top to bottom) lit between its columns' low
    and high values (``[C, W]``, full scale +-1 at the band's edges)."""
    channels, width = low.shape
    rows = np.arange(height)[:, None] + 0.5
    lit = np.zeros((height, width), bool)
    lane = height / channels
    for channel in range(channels):
        middle, half = (channel + 0.5) * lane, 0.48 * lane
        top = middle - np.clip(high[channel], -1, 1) * half - 0.5
        bottom = middle - np.clip(low[channel], -1, 1) * half + 0.5
        lit |= (rows >= top[None, :]) & (rows <= bottom[None, :])
    background = np.array(BACKGROUND.getRgb()[:3], np.uint8)
    wave = np.array(WAVE_RGB.getRgb()[:3], np.uint8)
    return np.ascontiguousarray(np.where(lit[..., None], wave, background))


class Overview(QWidget):
    """Signal ``range_chosen(start_s, stop_s)`` asks the canvas to show that time range."""

    range_chosen = Signal(float, float)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFixedHeight(HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        self.setToolTip(
            "The whole sound: drag the bright range to move the view, its edges to resize it"
        )
        self.summary: WaveformSummary | None = None
        self.duration = 0.0
        self.visible = (0.0, 0.0)
        self._picture: QImage | None = None
        """The waveform drawn at the widget's size (the range is drawn over it on each paint)."""
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(REFRESH_MS)
        self._refresh.timeout.connect(self._redraw)
        self._drag: tuple[str, float, tuple[float, float]] | None = None

    def set_summary(self, summary: WaveformSummary | None, duration: float = 0.0) -> None:
        """Show ``summary`` (a sound ``duration`` seconds long); the same one again: it changed.
        Without a summary (its waveform not made yet) the range is shown and moved all the same."""
        if summary is self.summary and summary is not None:
            self.refresh()
            return
        self.summary, self.duration = summary, duration
        self._picture = None
        self.update()

    def refresh(self) -> None:
        """The waveform changed (an edit): draw it again, at most every :data:`REFRESH_MS`."""
        if not self._refresh.isActive():
            self._refresh.start()

    def _redraw(self) -> None:
        self._picture = None
        self.update()

    def set_visible(self, start: float, stop: float) -> None:
        self.visible = (start, stop)
        self.update()

    # ------------------------------------------------------------------------------ geometry
    def _x(self, seconds: float) -> float:
        return seconds / self.duration * self.width() if self.duration > 0 else 0.0

    def _seconds(self, x: float) -> float:
        return x / max(1, self.width()) * self.duration

    def _part_at(self, x: float) -> str:
        left, right = self._x(self.visible[0]), self._x(self.visible[1])
        if abs(x - left) <= EDGE_GRAB_PX and right - left > 2 * EDGE_GRAB_PX:
            return "left"
        if abs(x - right) <= EDGE_GRAB_PX:
            return "right"
        return "inside" if left < x < right else "outside"

    # -------------------------------------------------------------------------------- mouse
    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.duration <= 0 or event.button() != Qt.MouseButton.LeftButton:
            return
        x = event.position().x()
        part = self._part_at(x)
        start, stop = self.visible
        if part == "outside":  # centre the range on the click, then drag it
            half = (stop - start) / 2
            centre = self._seconds(x)
            self._choose(centre - half, centre + half)
            start, stop = centre - half, centre + half
            part = "inside"
        self._drag = (part, x, (start, stop))

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        x = event.position().x()
        if self._drag is None:
            part = self._part_at(x) if self.duration > 0 else "outside"
            edge = part in ("left", "right")
            self.setCursor(Qt.CursorShape.SizeHorCursor if edge else Qt.CursorShape.ArrowCursor)
            return
        part, x0, (start, stop) = self._drag
        shift = self._seconds(x) - self._seconds(x0)
        minimum = self._seconds(MIN_RANGE_PX)
        if part == "inside":
            self._choose(start + shift, stop + shift)
        elif part == "left":
            self._choose(min(start + shift, stop - minimum), stop)
        else:
            self._choose(start, max(stop + shift, start + minimum))

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self._drag = None

    def _choose(self, start: float, stop: float) -> None:
        span = stop - start
        start = min(max(start, 0.0), max(0.0, self.duration - span))
        self.range_chosen.emit(start, min(self.duration, start + span))

    # -------------------------------------------------------------------------------- paint
    def _waveform_picture(self, width: int, height: int) -> QImage:
        """The waveform of every channel, one band each, at ``width`` x ``height`` (made with
        numpy in one go: no Python loop over pixels on the window's thread)."""
        low, high = self.summary.columns(width)
        rgb = waveform_pixels(low, high, height)
        return QImage(rgb.data, width, height, 3 * width, QImage.Format.Format_RGB888).copy()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.fillRect(self.rect(), BACKGROUND)
        if self.duration <= 0:
            painter.end()
            return
        width, height = self.width(), self.height()
        if self.summary is not None:
            if self._picture is None or self._picture.size() != self.size():
                self._picture = self._waveform_picture(width, height)
            painter.drawImage(0, 0, self._picture)
        left, right = self._x(self.visible[0]), self._x(self.visible[1])
        painter.fillRect(QRectF(0, 0, left, height), SHADE)
        painter.fillRect(QRectF(right, 0, width - right, height), SHADE)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(RANGE_RGB, 1.5))
        painter.drawRect(QRectF(left, 0.75, max(1.0, right - left), height - 1.5))
        painter.end()
