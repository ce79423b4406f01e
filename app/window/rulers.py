"""Time and frequency rulers beside the canvas, and the colour bar.

Tick placement is plain functions (tested without Qt); the widgets only paint what they return. The
frequency ruler is linear in the view's warp (linear, log or mel Hz, :mod:`spectropaint.gpu.geometry`),
exactly as the shader draws, and on a log scale it also marks every C with its note name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from spectropaint.gpu.colormaps import lookup
from spectropaint.transforms.geometry import octave_c_hz, warp

MIN_TICK_SPACING_PX = 64


def nice_step(span: float, max_ticks: int) -> float:
    """The smallest 1, 2 or 5 times a power of ten that cuts ``span`` into at most ``max_ticks``."""
    raw = span / max(1, max_ticks)
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def format_seconds(seconds: float, step: float) -> str:
    """``'1.25 s'`` under a minute, ``'2:05'`` or ``'2:05.5'`` above, with the step's precision."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    if seconds < 60:
        return f"{seconds:.{decimals}f} s"
    minutes, rest = divmod(seconds, 60)
    width = 2 + (decimals + 1 if decimals else 0)
    return f"{int(minutes)}:{rest:0{width}.{decimals}f}"


def format_hz(hz: float) -> str:
    if hz >= 1000:
        return f"{hz / 1000:g} kHz"
    return f"{hz:g} Hz"


@dataclass(frozen=True)
class Tick:
    value: float
    """Seconds or Hz."""
    position: float
    """0..1 along the ruler: left to right for time, bottom to top for frequency."""
    label: str


def time_ticks(start: float, stop: float, length_px: float) -> list[Tick]:
    """Ticks of a time axis showing ``[start, stop)`` seconds over ``length_px`` pixels."""
    if not stop > start or length_px <= 0:
        return []
    step = nice_step(stop - start, int(length_px // MIN_TICK_SPACING_PX))
    first = math.ceil(start / step)
    values = (k * step for k in range(first, int(math.floor(stop / step)) + 1))
    return [Tick(v, (v - start) / (stop - start), format_seconds(v, step)) for v in values]


def _decade_candidates(low: float, high: float) -> list[float]:
    """1, 2 and 5 times each power of ten in ``[low, high]``."""
    out = []
    for power in range(math.floor(math.log10(max(low, 1e-3))), math.ceil(math.log10(high)) + 1):
        out.extend(f * 10.0**power for f in (1, 2, 5))
    return [v for v in out if low <= v <= high]


def freq_ticks(low: float, high: float, scale: str, length_px: float) -> list[Tick]:
    """Ticks of a frequency axis ``[low, high]`` Hz drawn linear in ``warp(hz, scale)``."""
    if not high > low or length_px <= 0 or (scale == "log" and low <= 0):
        return []
    w_low, w_high = float(warp(low, scale)), float(warp(high, scale))
    if scale == "linear":
        step = nice_step(high - low, int(length_px // (MIN_TICK_SPACING_PX / 2)))
        values = [k * step for k in range(math.ceil(low / step), math.floor(high / step) + 1)]
    else:
        values = _decade_candidates(max(low, 1.0), high)
    ticks, last_px = [], -math.inf
    for value in values:
        position = (float(warp(value, scale)) - w_low) / (w_high - w_low)
        if position * length_px - last_px >= MIN_TICK_SPACING_PX / 2:
            ticks.append(Tick(value, position, format_hz(value)))
            last_px = position * length_px
    return ticks


def note_ticks(low: float, high: float, length_px: float) -> list[Tick]:
    """Every C (C0 = 16.35 Hz) within ``[low, high]`` Hz on a log axis, labelled ``C4``."""
    if not high > low > 0 or length_px <= 0:
        return []
    w_low, w_high = math.log(low), math.log(high)
    ticks = []
    for octave in range(0, 11):
        hz = octave_c_hz(octave)
        if low <= hz <= high:
            ticks.append(Tick(hz, (math.log(hz) - w_low) / (w_high - w_low), f"C{octave}"))
    return ticks


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
    """Seconds along the top of the canvas; a click emits ``clicked(seconds)`` (the edit cursor)."""

    HEIGHT = 24
    clicked = Signal(float)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFixedHeight(self.HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.span = (0.0, 1.0)

    def set_span(self, start: float, stop: float) -> None:
        self.span = (start, stop)
        self.update()

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        fraction = event.position().x() / max(1, self.width())
        self.clicked.emit(self.span[0] + fraction * (self.span[1] - self.span[0]))

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = self._painter()
        width, height = self.width(), self.height()
        for tick in time_ticks(*self.span, width):
            x = round(tick.position * (width - 1))
            painter.drawLine(x, height - 6, x, height)
            painter.drawText(x + 3, height - 8, tick.label)
        painter.end()


class FrequencyRuler(_Ruler):
    """Hz down the left of the canvas; note names (every C) as well on a log scale."""

    WIDTH = 78

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFixedWidth(self.WIDTH)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.span = (0.0, 1.0)
        self.scale = "linear"

    def set_span(self, low: float, high: float, scale: str) -> None:
        self.span, self.scale = (low, high), scale
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = self._painter()
        width, height = self.width(), self.height()
        metrics = painter.fontMetrics()
        for tick in freq_ticks(*self.span, self.scale, height):
            y = round((1 - tick.position) * (height - 1))
            painter.drawLine(width - 6, y, width, y)
            text_width = metrics.horizontalAdvance(tick.label)
            painter.drawText(width - 8 - text_width, y + metrics.ascent() // 2, tick.label)
        if self.scale == "log":
            painter.setPen(QPen(QColor(70, 130, 200)))
            for tick in note_ticks(*self.span, height):
                y = round((1 - tick.position) * (height - 1))
                painter.drawLine(0, y, 4, y)
                painter.drawText(6, y + metrics.ascent() // 2, tick.label)
        painter.end()


class ColorBar(_Ruler):
    """The colormap from the dB floor (bottom) to floor + range (top), gamma applied, with labels."""

    WIDTH = 64
    BAR = 14

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFixedWidth(self.WIDTH)
        self.colormap, self.floor_db, self.range_db, self.gamma = "magma", -80.0, 80.0, 1.0
        self._image: QImage | None = None

    def set_mapping(self, colormap: str, floor_db: float, range_db: float, gamma: float) -> None:
        self.colormap, self.floor_db, self.range_db, self.gamma = (
            colormap,
            floor_db,
            range_db,
            gamma,
        )
        self._image = None
        self.update()

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
        painter.drawText(4, metrics.ascent() + 2, "dB")
        painter.drawImage(QRectF(4, top, self.BAR, bar_height), self._image)
        step = nice_step(self.range_db, max(1, bar_height // 40))
        db = math.ceil(self.floor_db / step) * step
        while db <= self.floor_db + self.range_db + 1e-9:
            y = round(top + (1 - (db - self.floor_db) / self.range_db) * (bar_height - 1))
            painter.drawLine(4 + self.BAR, y, 8 + self.BAR, y)
            painter.drawText(10 + self.BAR, y + metrics.ascent() // 2, f"{db:g}")
            db += step
        painter.end()
