"""Canvas pixels to document coordinates and back, and the zoom and pan arithmetic of the view.

The mapping is the shader's (``shaders/spectrogram.wgsl``): pixel column ``x`` of a ``width``-pixel
canvas covers texel positions ``[t0 + x dt, t0 + (x + 1) dt)`` along time, and rows are linear in the
warped frequency ``warp(hz)`` from ``w_hi`` at the top edge to ``w_lo`` at the bottom. Texel position
``p`` is the centre of frame ``p - 0.5``; the brushes count frames and bins with cell centres on
integers, so a pointer over a cell's centre paints that cell. No Qt here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.geometry import unwarp, warp

MIN_VISIBLE_FRAMES = 8.0
MIN_VISIBLE_BINS = 4.0


def _same(span: tuple[float, float], limit: tuple[float, float]) -> bool:
    """``span`` is the whole ``limit`` (up to rounding): the view then stores None (everything)."""
    tolerance = 1e-9 * (limit[1] - limit[0])
    return abs(span[0] - limit[0]) <= tolerance and abs(span[1] - limit[1]) <= tolerance


@dataclass(frozen=True)
class Point:
    """A pointer position in document terms."""

    frame: float
    """Fractional frame, cell centres on integers (what the brushes take as ``x``)."""
    bin: float
    """Fractional bin, cell centres on integers (the brushes' ``y``)."""
    seconds: float
    hz: float


@dataclass(frozen=True)
class ViewMapping:
    """The view of one block on a ``width`` x ``height`` canvas (logical pixels)."""

    geometry: BlockGeometry
    view: ViewSettings
    width: float
    height: float

    @property
    def visible(self) -> tuple[float, float, float, float]:
        """``(t0, t1, low_hz, high_hz)``: texel positions and Hz at the canvas edges."""
        return self.view.visible(self.geometry)

    @property
    def warped(self) -> tuple[float, float]:
        _, _, low, high = self.visible
        return float(warp(low, self.view.freq_scale)), float(warp(high, self.view.freq_scale))

    @property
    def seconds_span(self) -> tuple[float, float]:
        """Times at the left and right edges."""
        t0, t1, _, _ = self.visible
        return float(self.geometry.seconds_at(t0)), float(self.geometry.seconds_at(t1))

    def to_document(self, x: float, y: float) -> Point:
        """The document point under canvas pixel position ``(x, y)`` (origin top-left)."""
        t0, t1, _, _ = self.visible
        w_lo, w_hi = self.warped
        texel = t0 + x / self.width * (t1 - t0)
        hz = float(unwarp(w_hi - y / self.height * (w_hi - w_lo), self.view.freq_scale))
        geometry = self.geometry
        return Point(
            frame=texel - 0.5,
            bin=(hz - geometry.first_hz) / geometry.step_hz,
            seconds=float(geometry.seconds_at(texel)),
            hz=hz,
        )

    def x_of_seconds(self, seconds: float) -> float:
        return float(self.x_of_frame(self.geometry.frame_position(seconds) - 0.5))

    def x_of_frame(self, frame):
        """Pixel column (fractional) of fractional frames ``frame`` (cell centres on integers)."""
        t0, t1, _, _ = self.visible
        return (np.asarray(frame, dtype=np.float64) + 0.5 - t0) / (t1 - t0) * self.width

    def y_of_hz(self, hz):
        """Pixel row (fractional, from the top) of frequencies ``hz`` (positive on a log axis)."""
        w_lo, w_hi = self.warped
        return (w_hi - warp(hz, self.view.freq_scale)) / (w_hi - w_lo) * self.height

    def cells_rect(
        self, frame0: int, frame1: int, bin0: int, bin1: int
    ) -> tuple[float, float, float, float] | None:
        """``(left, top, right, bottom)`` pixels of cells ``[frame0, frame1) x [bin0, bin1)``
        cut to the canvas, or None when none of it is in view. A zoomed-out pixel shows a reduced
        level whose columns pool up to four pixels' worth of frames: the rectangle grows by that
        much each side, so it holds every pixel the cells can change."""
        geometry = self.geometry
        t0, t1, low, _ = self.visible
        per_pixel = (t1 - t0) / self.width
        pool = 4 * per_pixel if per_pixel > 1 else 0.0
        left = float(self.x_of_frame(frame0 - 0.5 - pool)) - 1
        right = float(self.x_of_frame(frame1 - 0.5 + pool)) + 1
        hz = geometry.first_hz + (np.array([bin0, bin1], dtype=np.float64) - 0.5) * geometry.step_hz
        if self.view.freq_scale == "log":
            hz = np.maximum(hz, 0.5 * low)
        bottom, top = (float(y) for y in self.y_of_hz(hz))
        left, right = max(0.0, left), min(float(self.width), right)
        top, bottom = max(0.0, top - 1), min(float(self.height), bottom + 1)
        if right <= left or bottom <= top:
            return None
        return left, top, right, bottom

    # -------------------------------------------------------------------------- zoom and pan
    def _limits(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The widest time range (texels) and warped frequency range the view may show."""
        low, high = self.geometry.default_freq_range(self.view.freq_scale)
        scale = self.view.freq_scale
        return (0.0, float(self.geometry.n_frames)), (
            float(warp(low, scale)),
            float(warp(high, scale)),
        )

    @staticmethod
    def _fit(start: float, stop: float, limit: tuple[float, float], minimum: float):
        """``[start, stop)`` resized to at least ``minimum``, at most the limit, and moved inside it."""
        span = min(max(stop - start, minimum), limit[1] - limit[0])
        centre = 0.5 * (start + stop)
        start = min(max(centre - 0.5 * span, limit[0]), limit[1] - span)
        return start, start + span

    def _with_ranges(self, t: tuple[float, float], w: tuple[float, float]) -> ViewSettings:
        (t_limit, w_limit) = self._limits()
        scale = self.view.freq_scale
        min_w = MIN_VISIBLE_BINS * self.geometry.step_hz if scale == "linear" else 1e-3
        t = self._fit(*t, t_limit, MIN_VISIBLE_FRAMES)
        w = self._fit(*w, w_limit, min_w)
        time_range = None if _same(t, t_limit) else t
        freq_range = (
            None if _same(w, w_limit) else (float(unwarp(w[0], scale)), float(unwarp(w[1], scale)))
        )
        return dataclasses.replace(self.view, time_range=time_range, freq_range=freq_range)

    def zoomed(self, x: float, y: float, *, time_factor: float, freq_factor: float) -> ViewSettings:
        """The view zoomed in by the factors (> 1 in, < 1 out), keeping pixel ``(x, y)`` still."""
        t0, t1, _, _ = self.visible
        w_lo, w_hi = self.warped
        fx, fy = x / self.width, 1.0 - y / self.height
        anchor_t, anchor_w = t0 + fx * (t1 - t0), w_lo + fy * (w_hi - w_lo)
        t_span, w_span = (t1 - t0) / time_factor, (w_hi - w_lo) / freq_factor
        return self._with_ranges(
            (anchor_t - fx * t_span, anchor_t + (1 - fx) * t_span),
            (anchor_w - fy * w_span, anchor_w + (1 - fy) * w_span),
        )

    def panned(self, dx: float, dy: float) -> ViewSettings:
        """The view moved so content follows a drag of ``(dx, dy)`` pixels."""
        t0, t1, _, _ = self.visible
        w_lo, w_hi = self.warped
        shift_t = -dx / self.width * (t1 - t0)
        shift_w = dy / self.height * (w_hi - w_lo)
        return self._with_ranges((t0 + shift_t, t1 + shift_t), (w_lo + shift_w, w_hi + shift_w))

    def with_time(self, start: float, stop: float) -> ViewSettings:
        """The view showing texel positions ``[start, stop)`` (frequencies as they are), resized
        and moved to stay inside the block."""
        return self._with_ranges((start, stop), self.warped)

    def with_warped(self, low: float, high: float) -> ViewSettings:
        """The view showing warped frequencies ``[low, high)`` (times as they are), kept inside."""
        t0, t1, _, _ = self.visible
        return self._with_ranges((t0, t1), (low, high))

    @property
    def limits(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The widest time range (texels) and warped frequency range the view may show."""
        return self._limits()

    def fitted(self) -> ViewSettings:
        """The whole block."""
        return dataclasses.replace(self.view, time_range=None, freq_range=None)
