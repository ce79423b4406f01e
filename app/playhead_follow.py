"""Keeping the playhead in view while playing (no Qt): stay, turn pages, or scroll smoothly."""

from __future__ import annotations

from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping

FOLLOW_MODES = ("off", "page", "smooth")
PAGE_EDGE = 0.98
"""Turn the page when the playhead passes this fraction of the width."""
PAGE_LEAD = 0.02
"""After turning, the playhead sits this fraction of the width from the left edge."""


def follow(mapping: ViewMapping, seconds: float, mode: str) -> ViewSettings | None:
    """The view that keeps the playhead at ``seconds`` in sight under ``mode``, or None when the
    view should stay as it is.

    ``page``: when the playhead leaves the view (or passes :data:`PAGE_EDGE` of it), the view jumps
    so that it is near the left edge. ``smooth``: the view scrolls so that the playhead is in the
    middle (at the sound's start and end, the view stops at the edge and the playhead moves).
    """
    if mode == "off":
        return None
    t0, t1, _, _ = mapping.visible
    span = t1 - t0
    texel = float(mapping.geometry.frame_position(seconds))
    if mode == "page":
        if t0 <= texel < t0 + PAGE_EDGE * span:
            return None
        start = texel - PAGE_LEAD * span
    elif mode == "smooth":
        start = texel - span / 2
    else:
        raise ValueError(f"follow mode must be one of {', '.join(FOLLOW_MODES)}, not {mode!r}")
    view = mapping.with_time(start, start + span)
    return None if view.time_range == mapping.view.time_range else view
