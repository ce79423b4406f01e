"""Time and frequency rulers beside the canvas, and the colour bar.

Tick placement is plain functions (:mod:`spectropaint.gpu.axis_ticks`, tested without Qt); the widgets
only paint what they return. The frequency ruler is linear in the view's warp (linear, log or mel
Hz), exactly as the shader draws, and on a log scale it also marks every C with its note name. With
no document the rulers are blank. Pressing on the time ruler sets the edit cursor; dragging along it
scrubs (the window plays from under the pointer).
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from spectropaint.gpu.axis_ticks import (
    freq_ticks,
    label_left,
    level_ticks,
    note_ticks,
    time_ticks,
)
from spectropaint.gpu.colormaps import lookup


class _Ruler(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        font = QFont(self.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        self.setFont(font)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)

    def _painter(self) -> QPainter:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().window())
        painter.setPen(QPen(self.palette().windowText().color()))
        return painter


class TimeRuler(_Ruler):
    """Seconds along the top of the canvas, with the playhead marked.

    Signals: ``pressed(seconds)`` when the button goes down, ``dragged(seconds)`` as it moves held
    (scrubbing), ``released(seconds, moved)`` when it comes up.
    """

    HEIGHT = 26
    MINOR_TICK, MAJOR_TICK = 3, 7
    pressed = Signal(float)
    dragged = Signal(float)
    released = Signal(float, bool)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFixedHeight(self.HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.SplitHCursor)
        self.setToolTip("Click to set the cursor; drag to scrub")
        self.span: tuple[float, float] | None = None
        self.playhead: float | None = None
        self._moved = False

    def set_span(self, span: tuple[float, float] | None) -> None:
        """Show seconds ``(start, stop)`` across the ruler, or nothing."""
        self.span = span
        self.update()

    def set_playhead(self, seconds: float | None) -> None:
        if seconds != self.playhead:
            self.playhead = seconds
            self.update()

    def seconds_at(self, x: float) -> float:
        start, stop = self.span
        return start + x / max(1, self.width()) * (stop - start)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.span is not None and event.button() == Qt.MouseButton.LeftButton:
            self._moved = False
            self.pressed.emit(self.seconds_at(event.position().x()))

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.span is not None and event.buttons() & Qt.MouseButton.LeftButton:
            self._moved = True
            self.dragged.emit(self.seconds_at(event.position().x()))

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.span is not None and event.button() == Qt.MouseButton.LeftButton:
            self.released.emit(self.seconds_at(event.position().x()), self._moved)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = self._painter()
        if self.span is None:
            painter.end()
            return
        width, height = self.width(), self.height()
        metrics = painter.fontMetrics()
        for tick in time_ticks(*self.span, width):
            x = round(tick.position * (width - 1))
            size = self.MAJOR_TICK if tick.major else self.MINOR_TICK
            painter.drawLine(x, height - size, x, height)
            if tick.major:
                left = label_left(x, metrics.horizontalAdvance(tick.label), width)
                painter.drawText(round(left), height - self.MAJOR_TICK - 2, tick.label)
        if self.playhead is not None:
            start, stop = self.span
            x = (self.playhead - start) / (stop - start) * width
            if 0 <= x <= width:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                painter.setBrush(QColor(230, 90, 60))
                painter.setPen(Qt.PenStyle.NoPen)
                painter.drawPolygon(
                    QPolygonF([QPointF(x - 5, 0), QPointF(x + 5, 0), QPointF(x, 7)])
                )
        painter.end()


class FrequencyRuler(_Ruler):
    """Hz down the left of the canvas; note names (every C) as well on a log scale."""

    WIDTH = 78
    MINOR_TICK, MAJOR_TICK = 3, 7

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFixedWidth(self.WIDTH)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.span: tuple[float, float] | None = None
        self.scale = "linear"
        self.lanes: list[tuple[int, int]] = []
        """``(first_row, rows)`` of each lane when channels are stacked."""

    def set_span(
        self,
        span: tuple[float, float] | None,
        scale: str = "linear",
        lanes: list[tuple[int, int]] | None = None,
    ) -> None:
        """Show Hz ``(low, high)`` bottom to top on ``scale``, or nothing; with ``lanes``
        (``(first_row, rows)``), once in each lane."""
        self.span, self.scale, self.lanes = span, scale, lanes or []
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = self._painter()
        if self.span is None:
            painter.end()
            return
        for first, rows in self.lanes or [(0, self.height())]:
            painter.save()
            painter.translate(0, first)
            painter.setClipRect(0, 0, self.width(), rows)
            self._paint_axis(painter, rows)
            painter.restore()
        painter.end()

    def _paint_axis(self, painter: QPainter, height: int) -> None:
        width = self.width()
        metrics = painter.fontMetrics()
        for tick in freq_ticks(*self.span, self.scale, height):
            y = round((1 - tick.position) * (height - 1))
            size = self.MAJOR_TICK if tick.major else self.MINOR_TICK
            painter.drawLine(width - size, y, width, y)
            if tick.major:
                text_width = metrics.horizontalAdvance(tick.label)
                baseline = min(max(y + metrics.ascent() // 2, metrics.ascent()), height - 1)
                painter.drawText(width - 9 - text_width, baseline, tick.label)
        if self.scale == "log":
            painter.setPen(QPen(QColor(70, 130, 200)))
            for tick in note_ticks(*self.span, height):
                y = round((1 - tick.position) * (height - 1))
                painter.drawLine(0, y, 4, y)
                painter.drawText(6, y + metrics.ascent() // 2, tick.label)


PHASE_LABELS = (
    (-math.pi, "−π"),
    (-math.pi / 2, "−π/2"),
    (0.0, "0"),
    (math.pi / 2, "π/2"),
    (math.pi, "π"),
)


class ColorBar(_Ruler):
    """The colour scale of what the canvas shows: the colormap from the dB floor (bottom) to floor +
    range (top), gamma applied, for magnitude; the cyclic map from −π to π for phase."""

    WIDTH = 64
    BAR = 14

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFixedWidth(self.WIDTH)
        self.colormap, self.floor_db, self.range_db, self.gamma = "magma", -80.0, 80.0, 1.0
        self.phase = False
        self._image: QImage | None = None

    def set_mapping(self, colormap: str, floor_db: float, range_db: float, gamma: float) -> None:
        """Show magnitude: ``colormap`` over ``[floor_db, floor_db + range_db]`` with ``gamma``."""
        self.colormap, self.floor_db, self.range_db, self.gamma = (
            colormap,
            floor_db,
            range_db,
            gamma,
        )
        self.phase = False
        self._image = None
        self.update()

    def set_phase(self, colormap: str) -> None:
        """Show phase: the cyclic ``colormap`` from −π (bottom) to π (top)."""
        self.colormap, self.gamma, self.phase = colormap, 1.0, True
        self._image = None
        self.update()

    @property
    def unit(self) -> str:
        return "rad" if self.phase else "dB"

    def labels(self) -> list[tuple[float, str]]:
        """``(fraction from the bottom, text)`` of each label."""
        if self.phase:
            return [((value + math.pi) / (2 * math.pi), text) for value, text in PHASE_LABELS]
        ticks = level_ticks(self.floor_db, self.range_db, self.height(), 40)
        return [(tick.position, tick.label) for tick in ticks]

    def _gradient(self, height: int) -> QImage:
        levels = np.linspace(1.0, 0.0, height) ** self.gamma
        rgb = (lookup(self.colormap, levels) * 255 + 0.5).astype(np.uint8)
        rows = np.ascontiguousarray(np.repeat(rgb[:, None, :], self.BAR, axis=1))
        image = QImage(rows.data, self.BAR, height, 3 * self.BAR, QImage.Format.Format_RGB888)
        return image.copy()  # own the pixels: ``rows`` dies with this frame

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = self._painter()
        metrics = painter.fontMetrics()
        top = metrics.height() + metrics.height() // 2  # room for the unit above the bar
        bottom = metrics.height() // 2
        bar_height = max(2, self.height() - top - bottom)
        if self._image is None or self._image.height() != bar_height:
            self._image = self._gradient(bar_height)
        painter.drawText(4, metrics.ascent() + 2, self.unit)
        painter.drawImage(QRectF(4, top, self.BAR, bar_height), self._image)
        for fraction, text in self.labels():
            y = round(top + (1 - fraction) * (bar_height - 1))
            painter.drawLine(4 + self.BAR, y, 8 + self.BAR, y)
            painter.drawText(10 + self.BAR, y + metrics.ascent() // 2, text)
        painter.end()
