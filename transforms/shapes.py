"""Selection shapes as data, in seconds and Hz, and their weights on any grid of cells.

A shape knows nothing of frames and bins: :meth:`Shape.weights` is given the centre times and
centre frequencies of a grid's cells (a :class:`CellGrid`, made from any block of any transform,
or from a display's sampling of one) and says how much of each cell it selects, 0..1. That is what
lets a selection outlive a change of transform or settings.

Shapes: :class:`Rectangle` (time x frequency), :class:`Lasso` (a polygon), :class:`Band` (a
frequency band over all time), :class:`Range` (a time range over all frequencies),
:class:`Harmonic` (a fundamental's track and its overtones, ``width_cents`` wide),
:class:`Painted` (soft elliptical dabs of the selection brush) and :class:`Wand` (a connected region
found on the document, kept as a :class:`Raster`). Shapes that depend on the sound
(:class:`Harmonic` without a track, :class:`Wand` without a raster) are *resolved* against a
document first (:mod:`spectropaint.transforms.selection`).

A rectangle, band or range narrower than a cell still selects the cell nearest its middle, and a
harmonic line is never narrower than the transform's main lobe (``CellGrid.lobe_hz``): a partial's
energy lies in that whole lobe, so a thinner selection could not attenuate it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from spectropaint.transforms.errors import SettingsError

INF = math.inf
Bounds = tuple[float, float, float, float]
"""``(t0, t1, f0, f1)``: seconds and Hz, infinite where a shape has no limit."""


@dataclass(frozen=True, eq=False)
class CellGrid:
    """Centres of a grid of cells.

    Attributes
    ----------
    seconds : np.ndarray [shape=(T,)]
        Centre time of each column, ascending.
    hz : np.ndarray [shape=(B,)]
        Centre frequency of each row, ascending.
    step_seconds : float
        Time between columns.
    spacing_hz : np.ndarray [shape=(B,)]
        Distance between neighbouring rows at each row, Hz.
    lobe_hz : np.ndarray [shape=(B,)]
        Half-width of a steady sinusoid's main lobe at each row, Hz.
    """

    seconds: np.ndarray
    hz: np.ndarray
    step_seconds: float
    spacing_hz: np.ndarray
    lobe_hz: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.hz), len(self.seconds)


def axis_cells(centres: np.ndarray, low: float, high: float) -> np.ndarray:
    """Cells (bool ``[N]``) whose centre lies in ``[low, high]``; when none does but the interval
    meets the cells' span, the cell nearest the interval's middle (a lone cell, such as the NSGT's
    block of the 0 Hz band, has no span: only an interval holding its centre selects it)."""
    inside = (centres >= low) & (centres <= high)
    if inside.any() or len(centres) == 0 or not (math.isfinite(low) and math.isfinite(high)):
        return inside
    middle = 0.5 * (low + high)
    index = int(np.argmin(np.abs(centres - middle)))
    half = 0.5 * (centres[1] - centres[0]) if len(centres) > 1 else 0.0
    if abs(centres[index] - middle) <= half + 0.5 * (high - low):
        inside[index] = True
    return inside


def _number(values: Mapping[str, Any], key: str, what: str, default: Any = None) -> float:
    value = values.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SettingsError(f"{what} needs a finite number '{key}', not {value!r}")
    return float(value)


def _check_span(low: float, high: float, what: str) -> None:
    if not low < high:
        raise SettingsError(f"{what} must go from low to high, not {low!r} .. {high!r}")


class Shape:
    """A region of the time-frequency plane. Subclasses are frozen dataclasses."""

    kind: ClassVar[str] = ""

    def bounds(self) -> Bounds:
        """The box holding every cell the shape can select (seconds, Hz)."""
        raise NotImplementedError

    def weights(self, grid: CellGrid) -> np.ndarray:
        """How much of each cell of ``grid`` is selected: float32 ``[B, T]`` in 0..1."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def resolved(self) -> bool:
        """The shape can be rasterised without the document."""
        return True


@dataclass(frozen=True)
class Rectangle(Shape):
    """Time ``[t0, t1]`` seconds by frequency ``[f0, f1]`` Hz (cells whose centre is inside)."""

    t0: float
    t1: float
    f0: float
    f1: float
    kind: ClassVar[str] = "rectangle"

    def __post_init__(self) -> None:
        _check_span(self.t0, self.t1, "a rectangle's time")
        _check_span(self.f0, self.f1, "a rectangle's frequency")

    def bounds(self) -> Bounds:
        return self.t0, self.t1, self.f0, self.f1

    def weights(self, grid: CellGrid) -> np.ndarray:
        rows = axis_cells(grid.hz, self.f0, self.f1)
        columns = axis_cells(grid.seconds, self.t0, self.t1)
        return (rows[:, None] & columns[None, :]).astype(np.float32)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.kind, "t0": self.t0, "t1": self.t1, "f0": self.f0, "f1": self.f1}


@dataclass(frozen=True)
class Band(Shape):
    """Frequency ``[f0, f1]`` Hz over all time."""

    f0: float
    f1: float
    kind: ClassVar[str] = "band"

    def __post_init__(self) -> None:
        _check_span(self.f0, self.f1, "a band")

    def bounds(self) -> Bounds:
        return -INF, INF, self.f0, self.f1

    def weights(self, grid: CellGrid) -> np.ndarray:
        rows = axis_cells(grid.hz, self.f0, self.f1).astype(np.float32)
        return np.repeat(rows[:, None], len(grid.seconds), axis=1)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.kind, "f0": self.f0, "f1": self.f1}


@dataclass(frozen=True)
class Range(Shape):
    """Time ``[t0, t1]`` seconds over all frequencies."""

    t0: float
    t1: float
    kind: ClassVar[str] = "range"

    def __post_init__(self) -> None:
        _check_span(self.t0, self.t1, "a time range")

    def bounds(self) -> Bounds:
        return self.t0, self.t1, -INF, INF

    def weights(self, grid: CellGrid) -> np.ndarray:
        columns = axis_cells(grid.seconds, self.t0, self.t1).astype(np.float32)
        return np.repeat(columns[None, :], len(grid.hz), axis=0)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.kind, "t0": self.t0, "t1": self.t1}


@dataclass(frozen=True)
class Lasso(Shape):
    """A closed polygon of ``(seconds, hz)`` points (even-odd rule); cells whose centre is inside."""

    points: tuple[tuple[float, float], ...]
    kind: ClassVar[str] = "lasso"

    def __post_init__(self) -> None:
        points = tuple((float(t), float(f)) for t, f in self.points)
        if len(points) < 3:
            raise SettingsError(f"a lasso needs at least 3 points, not {len(points)}")
        if not all(math.isfinite(v) for point in points for v in point):
            raise SettingsError("a lasso's points must be finite numbers")
        object.__setattr__(self, "points", points)

    def bounds(self) -> Bounds:
        array = np.asarray(self.points)
        return (
            float(array[:, 0].min()),
            float(array[:, 0].max()),
            float(array[:, 1].min()),
            float(array[:, 1].max()),
        )

    def weights(self, grid: CellGrid) -> np.ndarray:
        """One scan line per row: the polygon's crossings of the row's frequency, sorted; a cell is
        inside when an odd number of crossings lie before its time."""
        array = np.asarray(self.points)
        t, f = array[:, 0], array[:, 1]
        t_next, f_next = np.roll(t, -1), np.roll(f, -1)
        y = grid.hz[:, None]
        crosses = (f[None, :] <= y) != (f_next[None, :] <= y)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = t[None, :] + (y - f[None, :]) * (t_next - t)[None, :] / (f_next - f)[None, :]
        x = np.sort(np.where(crosses, x, INF), axis=1)
        out = np.zeros(grid.shape, dtype=np.float32)
        for row in np.flatnonzero(crosses.any(axis=1)):
            count = np.searchsorted(x[row], grid.seconds, side="right")
            out[row] = count % 2
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.kind, "points": [list(point) for point in self.points]}


@dataclass(frozen=True)
class Dab:
    """One dab of the selection brush: centre, radii (seconds, Hz), hardness 0..1, weight 0..1."""

    seconds: float
    hz: float
    radius_seconds: float
    radius_hz: float
    hardness: float = 0.5
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not (self.radius_seconds > 0 and self.radius_hz > 0):
            raise SettingsError("a selection dab's radii must be positive")
        if not (0 <= self.hardness <= 1 and 0 <= self.weight <= 1):
            raise SettingsError("a selection dab's hardness and weight must be 0..1")


@dataclass(frozen=True)
class Painted(Shape):
    """The selection brush's soft mask: the largest weight any of its dabs gives a cell (each dab
    is an ellipse with a raised-cosine edge, like the brushes' dabs)."""

    dabs: tuple[Dab, ...]
    kind: ClassVar[str] = "painted"

    def __post_init__(self) -> None:
        dabs = tuple(d if isinstance(d, Dab) else Dab(*d) for d in self.dabs)
        if not dabs:
            raise SettingsError("a painted selection needs at least one dab")
        object.__setattr__(self, "dabs", dabs)

    def bounds(self) -> Bounds:
        return (
            min(d.seconds - d.radius_seconds for d in self.dabs),
            max(d.seconds + d.radius_seconds for d in self.dabs),
            min(d.hz - d.radius_hz for d in self.dabs),
            max(d.hz + d.radius_hz for d in self.dabs),
        )

    def weights(self, grid: CellGrid) -> np.ndarray:
        out = np.zeros(grid.shape, dtype=np.float32)
        for dab in self.dabs:
            columns = np.flatnonzero(np.abs(grid.seconds - dab.seconds) < dab.radius_seconds)
            rows = np.flatnonzero(np.abs(grid.hz - dab.hz) < dab.radius_hz)
            if not len(columns) or not len(rows):
                continue
            box = (slice(rows[0], rows[-1] + 1), slice(columns[0], columns[-1] + 1))
            u = (grid.seconds[box[1]] - dab.seconds) / dab.radius_seconds
            v = (grid.hz[box[0]] - dab.hz) / dab.radius_hz
            r = np.sqrt(v[:, None] ** 2 + u[None, :] ** 2)
            if dab.hardness >= 1:
                weight = (r < 1).astype(np.float64)
            else:
                ramp = np.clip((r - dab.hardness) / (1 - dab.hardness), 0, 1)
                weight = np.where(r < 1, 0.5 + 0.5 * np.cos(np.pi * ramp), 0.0)
            np.maximum(out[box], (weight * dab.weight).astype(np.float32), out=out[box])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": self.kind,
            "dabs": [
                [d.seconds, d.hz, d.radius_seconds, d.radius_hz, d.hardness, d.weight]
                for d in self.dabs
            ],
        }


REACH_STEP_SECONDS = 0.002
"""Time step on which a harmonic selection follows its track over each cell's reach."""
MAX_REACH_SECONDS = 0.5
"""The longest reach of a cell a harmonic selection considers (bands a few Hz apart)."""


@dataclass(frozen=True)
class Harmonic(Shape):
    """A fundamental and its overtones over ``[t0, t1)``: harmonic ``h`` is the band
    ``h * f(t)`` plus and minus half of ``width_cents`` (never narrower than the main lobe), where
    ``f(t)`` follows ``track``.

    Attributes
    ----------
    f0 : float
        The fundamental where the track starts looking (Hz), at ``seed_seconds`` (default ``t0``).
    count : int
        Harmonics selected, the fundamental included.
    track : tuple of (seconds, hz)
        The fundamental over time; empty until resolved against a document (a steady ``f0``
        when ``follow`` is False).
    follow : bool
        Follow the pitch over time (False: ``f0`` throughout, as for a hum).
    """

    t0: float
    t1: float
    f0: float
    count: int = 10
    width_cents: float = 50.0
    seed_seconds: float | None = None
    follow: bool = True
    track: tuple[tuple[float, float], ...] = field(default=(), compare=False)
    kind: ClassVar[str] = "harmonic"

    def __post_init__(self) -> None:
        _check_span(self.t0, self.t1, "a harmonic selection's time")
        if not self.f0 > 0:
            raise SettingsError(f"a harmonic selection's f0 must be above 0 Hz, not {self.f0!r}")
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise SettingsError(
                f"a harmonic selection's count must be 1 or more, not {self.count!r}"
            )
        if not 0 < self.width_cents <= 1200:
            raise SettingsError(
                f"a harmonic selection's width must be 0..1200 cents, not {self.width_cents!r}"
            )
        if not self.follow and not self.track:
            object.__setattr__(self, "track", ((self.t0, self.f0), (self.t1, self.f0)))

    @property
    def resolved(self) -> bool:
        return bool(self.track)

    def _track(self) -> np.ndarray:
        if not self.track:
            raise SettingsError("a harmonic selection must be resolved against the sound first")
        return np.asarray(self.track, dtype=np.float64)

    def bounds(self) -> Bounds:
        track = self._track() if self.track else np.array([[self.t0, self.f0]])
        top = self.count * float(track[:, 1].max()) * 2 ** (self.width_cents / 2400) * 1.2
        return self.t0, self.t1, 0.0, top

    def weights(self, grid: CellGrid) -> np.ndarray:
        """A cell is selected when a harmonic passes within the half-width of its band at some
        time its analysis reaches: ``1 / spacing_hz`` seconds around its centre (the window of a
        band that far from its neighbours), so that the long cells of low NSGT bands catch a
        vibrato's whole swing."""
        from scipy.ndimage import maximum_filter1d, minimum_filter1d

        track = self._track()
        columns = axis_cells(grid.seconds, self.t0, self.t1)
        out = np.zeros(grid.shape, dtype=np.float32)
        if not columns.any():
            return out
        seconds = grid.seconds[columns]
        reach = np.minimum(1.0 / np.maximum(grid.spacing_hz, 1e-9), MAX_REACH_SECONDS)
        sizes = 2 * np.round(0.5 * reach / REACH_STEP_SECONDS).astype(np.int64) + 1
        extra = REACH_STEP_SECONDS * (sizes.max() // 2)
        fine = np.arange(seconds[0] - extra, seconds[-1] + extra + 1e-9, REACH_STEP_SECONDS)
        pitch = np.interp(fine, track[:, 0], track[:, 1])
        ratio = 2 ** (self.width_cents / 2400) - 1
        inside = np.zeros((len(grid.hz), len(seconds)), dtype=bool)
        for size in np.unique(sizes):
            rows = np.flatnonzero(sizes == size)
            low = np.interp(seconds, fine, minimum_filter1d(pitch, int(size), mode="nearest"))
            high = np.interp(seconds, fine, maximum_filter1d(pitch, int(size), mode="nearest"))
            hz, lobe = grid.hz[rows, None], grid.lobe_hz[rows, None]
            for h in range(1, self.count + 1):
                below = np.maximum(h * low * ratio, lobe)
                above = np.maximum(h * high * ratio, lobe)
                inside[rows] |= (hz >= h * low[None, :] - below) & (hz <= h * high[None, :] + above)
        out[:, columns] = inside
        return out

    def to_dict(self) -> dict[str, Any]:
        values = {
            "shape": self.kind,
            "t0": self.t0,
            "t1": self.t1,
            "f0": self.f0,
            "count": self.count,
            "width_cents": self.width_cents,
        }
        if self.seed_seconds is not None:
            values["seed"] = self.seed_seconds
        if not self.follow:
            values["follow"] = False
        return values


@dataclass(frozen=True, eq=False)
class Raster(Shape):
    """Weights sampled on a grid of cells (a wand's result): a cell of another grid takes the
    weight of the nearest sample, when it lies within the samples' span."""

    seconds: np.ndarray
    hz: np.ndarray
    values: np.ndarray
    """float32 ``[len(hz), len(seconds)]``."""
    kind: ClassVar[str] = "raster"

    def bounds(self) -> Bounds:
        dt = self.seconds[1] - self.seconds[0] if len(self.seconds) > 1 else 0.0
        df = self.hz[1] - self.hz[0] if len(self.hz) > 1 else 0.0
        return (
            float(self.seconds[0] - dt / 2),
            float(self.seconds[-1] + dt / 2),
            float(self.hz[0] - df / 2),
            float(self.hz[-1] + df / 2),
        )

    def weights(self, grid: CellGrid) -> np.ndarray:
        def nearest(samples: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if len(samples) == 1:
                return np.zeros(len(wanted), dtype=np.int64), np.abs(wanted - samples[0]) <= 0.5
            index = np.clip(np.searchsorted(samples, wanted), 1, len(samples) - 1)
            left = wanted - samples[index - 1] < samples[index] - wanted
            index = np.where(left, index - 1, index)
            step = np.abs(np.gradient(samples))
            valid = np.abs(wanted - samples[index]) <= 0.5 * step[index] + 1e-9
            return index, valid

        columns, column_ok = nearest(self.seconds, grid.seconds)
        rows, row_ok = nearest(self.hz, grid.hz)
        out = self.values[np.ix_(rows, columns)].astype(np.float32)
        out *= row_ok[:, None] & column_ok[None, :]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": self.kind,
            "seconds": self.seconds.tolist(),
            "hz": self.hz.tolist(),
            "values": self.values.tolist(),
        }


@dataclass(frozen=True)
class Wand(Shape):
    """The connected cells around ``(seconds, hz)`` that stand at least ``tolerance_db`` above their
    surroundings (see :func:`~spectropaint.transforms.sound_analysis.wand_raster`).
    ``raster`` holds the cells once resolved against a document."""

    seconds: float
    hz: float
    tolerance_db: float = 12.0
    window_seconds: float = 4.0
    raster: Raster | None = field(default=None, compare=False)
    kind: ClassVar[str] = "wand"

    def __post_init__(self) -> None:
        if not 0 <= self.tolerance_db <= 120:
            raise SettingsError(f"a wand's tolerance must be 0..120 dB, not {self.tolerance_db!r}")
        if not 0 < self.window_seconds <= 60:
            raise SettingsError(
                f"a wand's window must be 0..60 seconds, not {self.window_seconds!r}"
            )

    @property
    def resolved(self) -> bool:
        return self.raster is not None

    def _raster(self) -> Raster:
        if self.raster is None:
            raise SettingsError("a wand selection must be resolved against the sound first")
        return self.raster

    def bounds(self) -> Bounds:
        return self._raster().bounds()

    def weights(self, grid: CellGrid) -> np.ndarray:
        return self._raster().weights(grid)

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": self.kind,
            "t": self.seconds,
            "f": self.hz,
            "tolerance_db": self.tolerance_db,
            "window_seconds": self.window_seconds,
        }


def _keys(values: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(values) - allowed - {"shape", "combine"})
    if unknown:
        raise SettingsError(f"unknown {what} key {', '.join(map(repr, unknown))}")


def shape_from_dict(values: Any) -> Shape:
    """A shape from its JSON object (``{"shape": "rectangle", "t0": ...}``); SettingsError if bad."""
    if not isinstance(values, Mapping):
        raise SettingsError(f"a selection shape must be an object, not {values!r}")
    kind = values.get("shape")
    if kind == "rectangle":
        _keys(values, {"t0", "t1", "f0", "f1"}, "rectangle")
        return Rectangle(*(_number(values, k, "a rectangle") for k in ("t0", "t1", "f0", "f1")))
    if kind == "band":
        _keys(values, {"f0", "f1"}, "band")
        return Band(_number(values, "f0", "a band"), _number(values, "f1", "a band"))
    if kind == "range":
        _keys(values, {"t0", "t1"}, "range")
        return Range(_number(values, "t0", "a range"), _number(values, "t1", "a range"))
    if kind == "lasso":
        _keys(values, {"points"}, "lasso")
        points = values.get("points")
        if not isinstance(points, list) or not all(
            isinstance(p, list) and len(p) == 2 for p in points
        ):
            raise SettingsError("a lasso needs 'points': a list of [seconds, hz]")
        return Lasso(tuple((p[0], p[1]) for p in points))
    if kind == "painted":
        _keys(values, {"dabs"}, "painted selection")
        dabs = values.get("dabs")
        if not isinstance(dabs, list) or not all(isinstance(d, list) and len(d) == 6 for d in dabs):
            raise SettingsError(
                "a painted selection needs 'dabs': a list of "
                "[seconds, hz, radius_seconds, radius_hz, hardness, weight]"
            )
        return Painted(tuple(Dab(*map(float, d)) for d in dabs))
    if kind == "harmonic":
        _keys(values, {"t0", "t1", "f0", "count", "width_cents", "seed", "follow"}, "harmonic")
        count = values.get("count", 10)
        if isinstance(count, float) and count.is_integer():
            count = int(count)
        seed = values.get("seed")
        return Harmonic(
            _number(values, "t0", "a harmonic selection"),
            _number(values, "t1", "a harmonic selection"),
            _number(values, "f0", "a harmonic selection"),
            count,
            _number(values, "width_cents", "a harmonic selection", 50.0),
            None if seed is None else _number(values, "seed", "a harmonic selection"),
            bool(values.get("follow", True)),
        )
    if kind == "wand":
        _keys(values, {"t", "f", "tolerance_db", "window_seconds"}, "wand")
        return Wand(
            _number(values, "t", "a wand"),
            _number(values, "f", "a wand"),
            _number(values, "tolerance_db", "a wand", 12.0),
            _number(values, "window_seconds", "a wand", 4.0),
        )
    if kind == "raster":
        _keys(values, {"seconds", "hz", "values"}, "raster")
        try:
            seconds = np.asarray(values["seconds"], dtype=np.float64)
            hz = np.asarray(values["hz"], dtype=np.float64)
            weights = np.asarray(values["values"], dtype=np.float32)
        except (KeyError, TypeError, ValueError):
            raise SettingsError("a raster needs 'seconds', 'hz' and 'values' arrays") from None
        if weights.shape != (len(hz), len(seconds)) or not len(hz) or not len(seconds):
            raise SettingsError("a raster's values must be [len(hz)][len(seconds)]")
        return Raster(seconds, hz, weights)
    known = "rectangle, lasso, band, range, harmonic, wand, painted, raster"
    raise SettingsError(f"unknown selection shape {kind!r} (known: {known})")
