"""Scroll bars and zoom sliders as numbers (no Qt): where the view is in the whole sound, and the view
a scroll position or a zoom setting asks for.

Scroll bars count in :data:`STEPS_PER_TEXEL` steps per frame (time) and :data:`FREQ_STEPS` steps over
the whole warped frequency axis; zoom sliders go from 0 (everything) to 1 (the closest view) on a
logarithmic scale of the visible span.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import MIN_VISIBLE_BINS, MIN_VISIBLE_FRAMES, ViewMapping

STEPS_PER_TEXEL = 8
FREQ_STEPS = 10_000
MIN_WARPED_FRACTION = 1e-3
"""The closest frequency zoom on a log or mel axis: this fraction of the whole axis."""


@dataclass(frozen=True)
class ScrollState:
    """A scroll bar's ``maximum`` (its minimum is 0), ``page`` step and ``value``."""

    maximum: int
    page: int
    value: int


def time_scroll(mapping: ViewMapping) -> ScrollState:
    """The horizontal scroll bar for ``mapping``: the left edge's position among all frames."""
    (low, high), _ = mapping.limits
    t0, t1, _, _ = mapping.visible
    page = max(1, round((t1 - t0) * STEPS_PER_TEXEL))
    maximum = max(0, round((high - low) * STEPS_PER_TEXEL) - page)
    return ScrollState(maximum, page, min(maximum, max(0, round((t0 - low) * STEPS_PER_TEXEL))))


def view_at_time_scroll(mapping: ViewMapping, value: int) -> ViewSettings:
    (low, _), _ = mapping.limits
    t0, t1, _, _ = mapping.visible
    start = low + value / STEPS_PER_TEXEL
    return mapping.with_time(start, start + (t1 - t0))


def view_at_seconds(mapping: ViewMapping, start: float, stop: float) -> ViewSettings:
    """``mapping``'s view showing the seconds ``[start, stop)`` (the overview's choice, the place
    a coarse picture was moved to)."""
    t0, t1 = (float(t) for t in mapping.geometry.frame_position([start, stop]))
    return mapping.with_time(t0, t1)


def freq_scroll(mapping: ViewMapping) -> ScrollState:
    """The vertical scroll bar: 0 shows the top of the axis, the maximum its bottom (as a page
    scrolls down)."""
    _, (low, high) = mapping.limits
    w_lo, w_hi = mapping.warped
    scale = FREQ_STEPS / (high - low)
    page = max(1, round((w_hi - w_lo) * scale))
    maximum = max(0, FREQ_STEPS - page)
    return ScrollState(maximum, page, min(maximum, max(0, round((high - w_hi) * scale))))


def view_at_freq_scroll(mapping: ViewMapping, value: int) -> ViewSettings:
    _, (low, high) = mapping.limits
    w_lo, w_hi = mapping.warped
    top = high - value * (high - low) / FREQ_STEPS
    return mapping.with_warped(top - (w_hi - w_lo), top)


def _closest(mapping: ViewMapping, axis: str) -> float:
    """The smallest span the view may show along ``axis`` (texels, or warped units)."""
    (t_low, t_high), (w_low, w_high) = mapping.limits
    if axis == "time":
        return min(MIN_VISIBLE_FRAMES, t_high - t_low)
    if mapping.view.freq_scale == "linear":
        return min(MIN_VISIBLE_BINS * mapping.geometry.step_hz, w_high - w_low)
    return (w_high - w_low) * MIN_WARPED_FRACTION


def zoom_fraction(mapping: ViewMapping, axis: str) -> float:
    """How far zoomed in along ``axis`` (``'time'`` or ``'freq'``): 0 everything, 1 the closest."""
    (t_low, t_high), (w_low, w_high) = mapping.limits
    t0, t1, _, _ = mapping.visible
    w_lo, w_hi = mapping.warped
    whole, span = (t_high - t_low, t1 - t0) if axis == "time" else (w_high - w_low, w_hi - w_lo)
    closest = _closest(mapping, axis)
    if whole <= closest:
        return 0.0
    return min(1.0, max(0.0, math.log(whole / span) / math.log(whole / closest)))


def view_at_zoom(mapping: ViewMapping, axis: str, fraction: float) -> ViewSettings:
    """The view zoomed to ``fraction`` along ``axis`` about the middle of what is shown."""
    (t_low, t_high), (w_low, w_high) = mapping.limits
    whole = t_high - t_low if axis == "time" else w_high - w_low
    closest = _closest(mapping, axis)
    span = whole * (closest / whole) ** min(1.0, max(0.0, fraction))
    if axis == "time":
        t0, t1, _, _ = mapping.visible
        centre = 0.5 * (t0 + t1)
        return mapping.with_time(centre - span / 2, centre + span / 2)
    w_lo, w_hi = mapping.warped
    centre = 0.5 * (w_lo + w_hi)
    return mapping.with_warped(centre - span / 2, centre + span / 2)
