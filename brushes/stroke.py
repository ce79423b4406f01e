"""Strokes: input events in document coordinates, and the spacing of dabs along them.

As in libmypaint, the spacer walks the pointer's path, puts a dab every ``spacing`` radii (measured in
the ellipse's own metric, so time and frequency radii can differ), carries the distance left over at
the end of each event to the next one, and interpolates time, position and pressure per dab. The
spacing uses the brush's full-size radii, not the pressure-scaled ones, so dab positions depend only
on the path: events merged into one per display frame give the same dabs as the unmerged stream
wherever the merged points lie on the same segments, and feeding events one at a time or in batches
gives identical dabs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from spectropaint.brushes.validation import check_number

_EPSILON = 1e-9
"""Slack in radius units so a dab landing exactly on an event is not lost to rounding."""


@dataclass(frozen=True)
class InputEvent:
    """One pointer sample.

    Attributes
    ----------
    t : float
        Time of the event in seconds (any origin).
    x : float
        Position in frames (time axis of the coefficient grid), fractional.
    y : float
        Position in bins (frequency axis), fractional.
    pressure : float
        Pen pressure 0..1 (1 for a mouse).
    """

    t: float
    x: float
    y: float
    pressure: float = 1.0

    def __post_init__(self) -> None:
        for name in ("t", "x", "y"):
            check_number(name, getattr(self, name), -math.inf, math.inf)
        check_number("pressure", self.pressure, 0.0, 1.0)


@dataclass(frozen=True)
class Dab:
    """One stamp of the brush.

    Attributes
    ----------
    t, x, y, pressure : float
        Interpolated time (s), frame, bin and pressure.
    step_x, step_y : float
        Motion in frames and bins since the previous dab (0 for a stroke's first dab).
    """

    t: float
    x: float
    y: float
    pressure: float
    step_x: float = 0.0
    step_y: float = 0.0


class DabSpacer:
    """Turns a stream of :class:`InputEvent` into evenly spaced :class:`Dab` objects.

    Parameters
    ----------
    radius_frames, radius_bins : float
        The ellipse whose metric measures distance: a step of ``radius_frames`` frames along time, or
        of ``radius_bins`` bins along frequency, is one radius.
    spacing : float
        Radii between consecutive dabs.
    """

    def __init__(self, *, radius_frames: float, radius_bins: float, spacing: float):
        self.radius_frames = radius_frames
        self.radius_bins = radius_bins
        self.spacing = spacing
        self._last: InputEvent | None = None
        self._last_dab: tuple[float, float] | None = None
        self._travelled = 0.0

    def feed(self, events: Iterable[InputEvent]) -> list[Dab]:
        """The dabs the path up to and including ``events`` adds. The first event always dabs."""
        dabs: list[Dab] = []
        for event in events:
            last, self._last = self._last, event
            if last is None:
                dabs.append(self._dab(event.t, event.x, event.y, event.pressure))
                continue
            dx, dy = event.x - last.x, event.y - last.y
            length = math.hypot(dx / self.radius_frames, dy / self.radius_bins)
            if length == 0.0:
                continue
            along = self.spacing - self._travelled
            while along <= length + _EPSILON:
                f = min(along / length, 1.0)
                dabs.append(
                    self._dab(
                        last.t + f * (event.t - last.t),
                        last.x + f * dx,
                        last.y + f * dy,
                        last.pressure + f * (event.pressure - last.pressure),
                    )
                )
                along += self.spacing
            self._travelled = length - (along - self.spacing)
        return dabs

    def _dab(self, t: float, x: float, y: float, pressure: float) -> Dab:
        previous, self._last_dab = self._last_dab, (x, y)
        if previous is None:
            return Dab(t, x, y, pressure)
        return Dab(t, x, y, pressure, x - previous[0], y - previous[1])
