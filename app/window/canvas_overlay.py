"""Marks the window paints over the rendered spectrogram with QPainter: the brush's footprint, the
clone source and the grid.

They change with every pointer move, so they are not part of the GPU picture: moving the outline
repaints the widget from the last rendered frame (a copy of pixels) instead of rendering and reading
back the whole canvas, which on a software GPU costs more than a frame. A canvas that presents to a
wgpu surface paints them into an image instead, whose changed box the GPU composes over the kept
picture (:mod:`spectropaint.gpu.screen_frame`). Where they go is computed
without Qt (:mod:`spectropaint.app.tools.footprint`, :mod:`spectropaint.gpu.axis_ticks`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF

from spectropaint.app.tools.footprint import Footprint, outline_polygon
from spectropaint.gpu.axis_ticks import freq_ticks, time_ticks
from spectropaint.gpu.view_mapping import ViewMapping

OUTLINE_RGB = QColor(245, 245, 245)
HALO_RGB = QColor(0, 0, 0, 160)
CLONE_RGB = QColor(90, 220, 120)
GRID_RGB = QColor(255, 255, 255, 48)
NAME_RGB = QColor(240, 170, 80)
NAME_BACK = QColor(0, 0, 0, 150)
CLONE_MARK_PX = 7.0


def channel_names(count: int) -> list[str]:
    """What each lane is called: ``L``, ``R`` for stereo; ``1``, ``2``... otherwise."""
    return ["L", "R"] if count == 2 else [str(index + 1) for index in range(count)]


OUTLINES_KEPT = 8
"""Outlines :class:`CanvasOverlay` keeps, by footprint and lane view: a pointer move asks for the
old outline's area, the new one's, and paints the new one (once per lane)."""

HALO_MARGIN = 3.0
"""Logical pixels around the outline's points that its halo (3 pixels wide) and antialiasing may
touch."""


def _pen(colour: QColor, width: float) -> QPen:
    pen = QPen(colour, width)
    pen.setCosmetic(True)
    return pen


class CanvasOverlay:
    """What is drawn over one canvas; the canvas asks for a repaint after changing it."""

    def __init__(self) -> None:
        self.footprint: Footprint | None = None
        self.clone_source: tuple[float, float] | None = None
        """``(frame, bin)`` of the clone brush's source."""
        self.grid = False
        self._outlines: dict[tuple[Footprint, ViewMapping], list] = {}
        """Kept outlines: ``[points, QPolygonF or None]`` by footprint and lane view."""

    def outline(self, footprint: Footprint, mapping: ViewMapping) -> np.ndarray:
        """:func:`~spectropaint.app.tools.footprint.outline_polygon` of ``footprint`` in a lane
        seen through ``mapping``, computed once while it is among the last few asked for."""
        return self._kept(footprint, mapping)[0]

    def _polygon(self, footprint: Footprint, mapping: ViewMapping) -> QPolygonF:
        """The same outline as Qt draws it, made once too (96 points: 0.05 ms from Python's
        floats, 0.1 ms from numpy's)."""
        kept = self._kept(footprint, mapping)
        if kept[1] is None:
            kept[1] = QPolygonF([QPointF(x, y) for x, y in kept[0].tolist()])
        return kept[1]

    def _kept(self, footprint: Footprint, mapping: ViewMapping) -> list:
        key = (footprint, mapping)
        kept = self._outlines.get(key)
        if kept is None:
            if len(self._outlines) >= OUTLINES_KEPT:
                del self._outlines[next(iter(self._outlines))]
            kept = self._outlines[key] = [outline_polygon(footprint, mapping), None]
        return kept

    def paint(
        self, painter: QPainter, mapping: ViewMapping, channel: int | None = None, name: str = ""
    ) -> None:
        """Draw the marks of a lane showing ``channel`` with ``mapping`` (its size in logical
        pixels): the outline only in the lane it paints (every lane for a linked brush), and the
        lane's ``name`` in its corner."""
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if name:
            self._paint_name(painter, name)
        if self.grid:
            self._paint_grid(painter, mapping)
        here = self.footprint is None or self.footprint.channel in (None, channel)
        if self.footprint is not None and here:
            polygon = self._polygon(self.footprint, mapping)
            if not polygon.isEmpty():
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(_pen(HALO_RGB, 3.0))
                painter.drawPolygon(polygon)
                painter.setPen(_pen(OUTLINE_RGB, 1.2))
                painter.drawPolygon(polygon)
        if self.clone_source is not None and here:
            self._paint_clone_source(painter, mapping, *self.clone_source)

    def outline_bounds(
        self, mapping: ViewMapping, channel: int | None = None
    ) -> tuple[float, float, float, float] | None:
        """``(left, top, right, bottom)`` in the lane's logical pixels of what :meth:`paint` draws
        for the footprint in a lane showing ``channel`` (the halo's width included), or None when
        it draws nothing there."""
        footprint = self.footprint
        if footprint is None or footprint.channel not in (None, channel):
            return None
        points = self.outline(footprint, mapping)
        if not len(points):
            return None
        (left, top), (right, bottom) = points.min(axis=0), points.max(axis=0)
        return (left - HALO_MARGIN, top - HALO_MARGIN, right + HALO_MARGIN, bottom + HALO_MARGIN)

    @staticmethod
    def _paint_clone_source(painter: QPainter, mapping: ViewMapping, frame: float, bin_: float):
        geometry = mapping.geometry
        hz = geometry.first_hz + bin_ * geometry.step_hz
        if mapping.view.freq_scale == "log" and hz <= 0:
            return
        x, y = float(mapping.x_of_frame(frame)), float(mapping.y_of_hz(hz))
        r = CLONE_MARK_PX
        lines = [QLineF(x - 2 * r, y, x - r / 2, y), QLineF(x + r / 2, y, x + 2 * r, y)]
        lines += [QLineF(x, y - 2 * r, x, y - r / 2), QLineF(x, y + r / 2, x, y + 2 * r)]
        for pen in (_pen(HALO_RGB, 3.5), _pen(CLONE_RGB, 1.6)):
            painter.setPen(pen)
            painter.drawEllipse(QPointF(x, y), r, r)
            painter.drawLines(lines)

    @staticmethod
    def _paint_name(painter: QPainter, name: str) -> None:
        metrics = painter.fontMetrics()
        box = QRectF(4, 4, metrics.horizontalAdvance(name) + 10, metrics.height() + 2)
        painter.fillRect(box, NAME_BACK)
        painter.setPen(NAME_RGB)
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, name)

    @staticmethod
    def _paint_grid(painter: QPainter, mapping: ViewMapping) -> None:
        painter.setPen(_pen(GRID_RGB, 1.0))
        width, height = mapping.width, mapping.height
        for tick in time_ticks(*mapping.seconds_span, width):
            if tick.major:
                x = tick.position * width
                painter.drawLine(QLineF(x, 0, x, height))
        _, _, low, high = mapping.visible
        for tick in freq_ticks(low, high, mapping.view.freq_scale, height):
            if tick.major:
                y = (1 - tick.position) * height
                painter.drawLine(QLineF(0, y, width, y))
