"""Strokes: input events in document coordinates, and the spacing of dabs along them.

As in libmypaint, the spacer walks the pointer's path, puts a dab every ``spacing`` radii (measured in
the ellipse's own metric, so time and frequency radii can differ), carries the distance left over at
the end of each event to the next one, and interpolates time, position and pressure per dab. The
spacing uses the brush's full-size radii, not the pressure-scaled ones, so dab positions depend only
on the path: events merged into one per display frame give the same dabs as the unmerged stream
wherever the merged points lie on the same segments, and feeding events one at a time or in batches
gives identical dabs.

Bounds, so that no stroke can run for minutes or exhaust memory (a recorded file or a pointer):

- given the document's ``bounds``, each segment is clipped to where a dab can touch the document
  (the centres of its first and last cells, widened by the radii): a stroke leaving it dabs nothing outside, and where it comes back in it
  dabs at the point of entry. Positions as far out as ``1e308`` are handled without overflow.
- an event whose segment would need more than :data:`MAX_DABS_PER_EVENT` dabs gets exactly that
  many, spread evenly along it (wider spacing), and :attr:`DabSpacer.thinned` counts such events;
- a stroke dabs at most :data:`MAX_DABS_PER_STROKE` times; the rest of its path is not painted, and
  :attr:`DabSpacer.limited` says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from spectropaint.brushes import plan_compiled
from spectropaint.brushes.validation import check_number

_EPSILON = 1e-9
"""Slack in radius units so a dab landing exactly on an event is not lost to rounding."""
MAX_DABS_PER_EVENT = 256
"""The most dabs one input event adds (a stroke across a ten-minute file at the smallest radius
would otherwise stamp millions at once)."""
MAX_DABS_PER_STROKE = 1 << 17
"""The most dabs one stroke stamps (131,072: a ten-minute file seen whole crossed about five times
at the default radius, some 3 s of dab work on a 2-core CPU)."""


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


@dataclass(frozen=True)
class Dabs:
    """Dabs as arrays, in the order they are stamped (what :meth:`DabSpacer.feed` gives): a move
    across a long file seen whole holds hundreds, and every step after this one works on arrays.

    Attributes
    ----------
    t, x, y, pressure, step_x, step_y : np.ndarray [shape=(n,)], float64
        As :class:`Dab`'s fields, one entry per dab.
    """

    t: np.ndarray
    x: np.ndarray
    y: np.ndarray
    pressure: np.ndarray
    step_x: np.ndarray
    step_y: np.ndarray

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int | slice) -> Dab | Dabs:
        """Dab ``index``, or the :class:`Dabs` of a slice."""
        if isinstance(index, slice):
            return Dabs(*(getattr(self, name)[index] for name in _DAB_FIELDS))
        return Dab(*(float(getattr(self, name)[index]) for name in _DAB_FIELDS))

    def __iter__(self) -> Iterator[Dab]:
        return (self[index] for index in range(len(self)))


_DAB_FIELDS = ("t", "x", "y", "pressure", "step_x", "step_y")


class DabSpacer:
    """Turns a stream of :class:`InputEvent` into evenly spaced dabs (:class:`Dabs`).

    Parameters
    ----------
    radius_frames, radius_bins : float
        The ellipse whose metric measures distance: a step of ``radius_frames`` frames along time, or
        of ``radius_bins`` bins along frequency, is one radius.
    spacing : float
        Radii between consecutive dabs.
    bounds : (float, float, float, float), optional
        ``(x0, x1, y0, y1)``: the document's first and last cell centres in these coordinates (for
        one STFT block in frames and bins, ``(0, n_frames - 1, 0, n_bins - 1)``); dabs are placed
        only where they can touch it. None: the whole plane.
    max_dabs : int
        The most dabs the stroke stamps (:data:`MAX_DABS_PER_STROKE`).

    Attributes
    ----------
    thinned : int
        Events whose dabs were spread wider than ``spacing`` to stay within
        :data:`MAX_DABS_PER_EVENT`.
    limited : bool
        Whether the stroke reached ``max_dabs`` and the rest of its path was not painted.
    """

    def __init__(
        self,
        *,
        radius_frames: float,
        radius_bins: float,
        spacing: float,
        bounds: tuple[float, float, float, float] | None = None,
        max_dabs: int = MAX_DABS_PER_STROKE,
    ):
        self.radius_frames = radius_frames
        self.radius_bins = radius_bins
        self.spacing = spacing
        self.box = None
        if bounds is not None:  # a dab reaches a radius around its centre
            x0, x1, y0, y1 = bounds
            self.box = (x0 - radius_frames, x1 + radius_frames, y0 - radius_bins, y1 + radius_bins)
        self.max_dabs = max_dabs
        self.thinned = 0
        self.limited = False
        self._count = 0
        self._last: InputEvent | None = None
        self._last_dab: tuple[float, float] | None = None
        self._travelled = 0.0

    def feed(self, events: Iterable[InputEvent]) -> Dabs:
        """The dabs the path up to and including ``events`` adds. The first event inside the
        document (or the point where the path enters it) always dabs."""
        pieces: list[Dabs] = []
        for event in events:
            last, self._last = self._last, event
            if last is None:
                if self._inside(event.x, event.y):  # (the stroke's first dab has not moved)
                    one = [np.array([value]) for value in _values(event)]
                    self._emit(pieces, *one, np.zeros(1), np.zeros(1))
                continue
            part = self._clipped(last, event)
            if part is not None:
                self._space(pieces, *part)
        if len(pieces) == 1:
            return pieces[0]
        empty = np.zeros(0)
        return Dabs(
            *(np.concatenate([getattr(p, n) for p in pieces] or [empty]) for n in _DAB_FIELDS)
        )

    def _inside(self, x: float, y: float) -> bool:
        if self.box is None:
            return True
        x0, x1, y0, y1 = self.box
        return x0 <= x <= x1 and y0 <= y <= y1

    def _clipped(self, a: InputEvent, b: InputEvent) -> tuple[InputEvent, InputEvent, bool] | None:
        """The part of the segment ``a`` to ``b`` inside the box, and whether it starts where the
        path enters the box; None when it misses the box or has no length.

        Each end of the part is computed from the nearer of ``a`` and ``b`` (a fraction of at most
        one half, so an event at ``1e308`` costs no precision near the other), from differences of
        halves, which cannot overflow.
        """
        if a.x == b.x and a.y == b.y:
            return None
        if self.box is None:
            return a, b, False
        forward = _fractions_inside(a, b, self.box)
        if forward is None:
            return None
        f0, f1 = forward
        if f0 == 0.0 and f1 == 1.0:  # (the whole segment: most of a stroke's)
            return self._clamped(a), self._clamped(b), False
        g0, g1 = _fractions_inside(b, a, self.box) or (1.0 - f1, 1.0 - f0)
        start = a if f0 == 0.0 else _between(a, b, f0) if f0 <= 0.5 else _between(b, a, g1)
        end = b if f1 == 1.0 else _between(b, a, g0) if g0 <= 0.5 else _between(a, b, f1)
        return self._clamped(start), self._clamped(end), f0 > 0.0

    def _clamped(self, event: InputEvent) -> InputEvent:
        """``event`` moved onto the box should rounding have left it a hair outside."""
        x0, x1, y0, y1 = self.box
        x, y = min(max(event.x, x0), x1), min(max(event.y, y0), y1)
        if (x, y) == (event.x, event.y):
            return event
        return InputEvent(event.t, x, y, event.pressure)

    def _space(
        self, pieces: list[Dabs], last: InputEvent, event: InputEvent, entering: bool
    ) -> None:
        """Dabs every ``spacing`` radii along the segment ``last`` to ``event`` (inside the box)."""
        dx, dy = event.x - last.x, event.y - last.y
        length = math.hypot(dx / self.radius_frames, dy / self.radius_bins)
        if length == 0.0:
            return
        step = self.spacing
        along = 0.0 if entering or self._last_dab is None else step - self._travelled
        count = (
            math.floor((length + _EPSILON - along) / step) + 1 if along <= length + _EPSILON else 0
        )
        if count > MAX_DABS_PER_EVENT:  # spread them evenly, the last one on the event
            self.thinned += 1
            step = length / MAX_DABS_PER_EVENT
            along = step if self._last_dab is not None and not entering else 0.0
            count = MAX_DABS_PER_EVENT
        dabs, after = plan_compiled.spaced(
            count, along, step, length, _values(last), _values(event), self._last_dab
        )  # (the distances summed one step after another, as a walk would)
        if count:
            self._emit(pieces, *dabs)
        self._travelled = min(length - (after - step), self.spacing)

    def _emit(self, pieces: list[Dabs], *fields: np.ndarray) -> None:
        """Add dabs (:class:`Dabs`' fields, steps included), up to the stroke's limit."""
        room = max(0, self.max_dabs - self._count)
        if len(fields[1]) > room:
            self.limited = True
            fields = tuple(field[:room] for field in fields)
        if not len(fields[1]):
            return
        self._count += len(fields[1])
        self._last_dab = (float(fields[1][-1]), float(fields[2][-1]))
        pieces.append(Dabs(*fields))


def _values(event: InputEvent) -> tuple[float, float, float, float]:
    return event.t, event.x, event.y, event.pressure


def _fractions_inside(
    a: InputEvent, b: InputEvent, box: tuple[float, float, float, float]
) -> tuple[float, float] | None:
    """``(f0, f1)``: the segment ``a + f (b - a)`` lies inside ``box`` for ``f0 <= f <= f1``
    (Liang-Barsky, on halves of the coordinates); None when it misses the box."""
    x0, x1, y0, y1 = box
    hx, hy = b.x / 2 - a.x / 2, b.y / 2 - a.y / 2
    f0, f1 = 0.0, 1.0
    for p, q in (
        (-hx, a.x / 2 - x0 / 2),
        (hx, x1 / 2 - a.x / 2),
        (-hy, a.y / 2 - y0 / 2),
        (hy, y1 / 2 - a.y / 2),
    ):
        if p == 0.0:
            if q < 0.0:
                return None
        elif p < 0.0:
            f0 = max(f0, q / p)
        else:
            f1 = min(f1, q / p)
    return (f0, f1) if f0 < f1 else None


def _between(a: InputEvent, b: InputEvent, f: float) -> InputEvent:
    """The event a fraction ``f`` of the way from ``a`` to ``b`` (halves: no overflow)."""

    def mix(u: float, v: float) -> float:
        return 2 * (u / 2 + f * (v / 2 - u / 2))

    return InputEvent(
        mix(a.t, b.t), mix(a.x, b.x), mix(a.y, b.y), min(1.0, max(0.0, mix(a.pressure, b.pressure)))
    )
