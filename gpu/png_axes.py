"""Axes around an exported spectrogram: time and frequency ticks with labels, and a dB colour bar.

The margins are small pictures drawn with Pillow: a band above and below the spectrogram (full
width) and a strip left and right of it (spectrogram height). Every tick and label is placed in the
coordinates of the whole picture and drawn into each margin it overlaps, so a label that crosses
from one margin into another is drawn whole; the spectrogram itself never passes through Pillow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spectropaint.gpu.axis_ticks import format_hz, freq_ticks, level_ticks, time_ticks
from spectropaint.gpu.colormaps import lookup
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings

LEFT, TOP, RIGHT, BOTTOM = 48, 22, 64, 24
"""Margin widths in pixels when axes are drawn."""
PAPER = (255, 255, 255)
INK = (0, 0, 0)
FONT_SIZE = 11
TICK = 4
UNIT_ROW = 7
"""Row of the unit names ("Hz", "dB") in the top margin, clear of a label on the top row."""
BAR_GAP, BAR_WIDTH = 6, 14
TIME_SPACING, FREQ_SPACING, LEVEL_SPACING = 90, 24, 24
"""Labels of the time, frequency and dB axes at least this many pixels apart."""


@dataclass(frozen=True)
class _Label:
    x: float
    y: float
    text: str
    anchor: str


class PictureFrame:
    """Margins of a ``width`` x ``height`` spectrogram; empty when ``axes`` is false.

    Attributes
    ----------
    total_width, total_height : int
        The whole picture.
    top, bottom : np.ndarray [shape=(rows, total_width, 3)], uint8
    left, right : np.ndarray [shape=(height, columns, 3)], uint8
    """

    def __init__(
        self,
        width: int,
        height: int,
        *,
        view: ViewSettings,
        geometry: BlockGeometry,
        axes: bool,
    ):
        self.width, self.height = width, height
        left, top, right, bottom = (LEFT, TOP, RIGHT, BOTTOM) if axes else (0, 0, 0, 0)
        self.total_width = left + width + right
        self.total_height = top + height + bottom
        self._labels: list[_Label] = []
        self._ticks: list[tuple[float, float, float, float]] = []
        if axes:
            self._font = ImageFont.load_default(size=FONT_SIZE)
            self._place_time_axis(view, geometry, left, top + height)
            self._place_freq_axis(view, geometry, left, top)
            self._place_db_labels(view, left + width + BAR_GAP + BAR_WIDTH, top)
        self.top = self._window(0, 0, self.total_width, top)
        self.bottom = self._window(0, top + height, self.total_width, bottom)
        self.left = self._window(0, top, left, height)
        self.right = self._window(left + width, top, right, height)
        if axes:
            self.right[:, BAR_GAP : BAR_GAP + BAR_WIDTH] = self._colour_bar(view)[:, None]

    # ----------------------------------------------------------------------------- placement
    def _place_time_axis(
        self, view: ViewSettings, geometry: BlockGeometry, x0: int, y0: int
    ) -> None:
        start, stop, _, _ = view.visible(geometry)
        first, last = (float(s) for s in geometry.seconds_at([start, stop]))
        for tick in time_ticks(first, last, self.width, spacing_px=TIME_SPACING):
            if tick.major:
                x = x0 + tick.position * self.width
                self._ticks.append((x, y0, x, y0 + TICK))
                self._labels.append(_Label(x, y0 + TICK + 1, tick.label, "mt"))

    def _place_freq_axis(
        self, view: ViewSettings, geometry: BlockGeometry, x0: int, y0: int
    ) -> None:
        _, _, low, high = view.visible(geometry)
        for tick in freq_ticks(low, high, view.freq_scale, self.height, spacing_px=FREQ_SPACING):
            if tick.major:
                row = y0 + (1 - tick.position) * self.height
                self._ticks.append((x0 - TICK, row, x0 - 1, row))
                self._labels.append(
                    _Label(x0 - TICK - 2, row, format_hz(tick.value, short=True), "rm")
                )
        self._labels.append(_Label(x0 - TICK - 2, UNIT_ROW, "Hz", "rm"))

    def _place_db_labels(self, view: ViewSettings, x0: int, y0: int) -> None:
        floor = view.resolved_floor_db
        for tick in level_ticks(floor, view.range_db, self.height, LEVEL_SPACING):
            row = y0 + (1 - tick.position) * self.height
            self._ticks.append((x0, row, x0 + TICK - 1, row))
            self._labels.append(_Label(x0 + TICK + 2, row, tick.label, "lm"))
        self._labels.append(_Label(x0 + TICK + 2, UNIT_ROW, "dB", "lm"))

    def _colour_bar(self, view: ViewSettings) -> np.ndarray:
        """``[height, 3]`` uint8: the colour of each row's dB level, top level at the top."""
        level = 1.0 - (np.arange(self.height) + 0.5) / self.height
        rgb = lookup(view.colormap, level**view.gamma)
        return np.round(rgb * 255).astype(np.uint8)

    # ------------------------------------------------------------------------------- drawing
    def _window(self, x0: int, y0: int, width: int, height: int) -> np.ndarray:
        """The part ``[x0, x0 + width) x [y0, y0 + height)`` of the frame, as uint8 RGB."""
        if width == 0 or height == 0:
            return np.zeros((height, width, 3), np.uint8)
        image = Image.new("RGB", (width, height), PAPER)
        draw = ImageDraw.Draw(image)
        for x_a, y_a, x_b, y_b in self._ticks:
            if x_b >= x0 and x_a < x0 + width and y_b >= y0 and y_a < y0 + height:
                draw.line((x_a - x0, y_a - y0, x_b - x0, y_b - y0), fill=INK)
        for label in self._labels:
            box = self._font.getbbox(label.text, anchor=label.anchor)
            if (
                label.x + box[2] >= x0
                and label.x + box[0] < x0 + width
                and label.y + box[3] >= y0
                and label.y + box[1] < y0 + height
            ):
                draw.text(
                    (label.x - x0, label.y - y0),
                    label.text,
                    fill=INK,
                    font=self._font,
                    anchor=label.anchor,
                )
        return np.array(image)

    def rows(self, band: np.ndarray, row0: int) -> np.ndarray:
        """Spectrogram rows ``[row0, row0 + len(band))`` (RGB, or RGBA whose alpha is left out with
        margins) with the left and right margins added."""
        if self.left.shape[1] == self.right.shape[1] == 0:
            return band
        rows = slice(row0, row0 + len(band))
        return np.concatenate([self.left[rows], band[..., :3], self.right[rows]], axis=1)
