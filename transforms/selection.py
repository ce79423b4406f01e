"""A selection: shapes combined by set operations, feathered or inverted, rasterised per block.

A :class:`Selection` is data in seconds and Hz: an ordered list of :class:`Term` (a shape and how
it combines with what came before: ``add`` takes the larger weight, ``subtract`` caps the weight
at one minus the shape's, ``intersect`` takes the smaller), a feather (a Gaussian of standard
deviation ``feather_seconds`` by ``feather_hz``) and an ``inverted`` flag. It never holds frames or
bins, so it survives a change of transform.

:func:`rasterise` turns it into a :class:`Mask` on one block of a document (:func:`rasterise_blocks`
on each of them): a soft weight
``[bins, frames]`` in 0..1 over the smallest :class:`~.regions.Region` that holds every cell of
weight above 0. The cost is that of the selection's own box (plus the feather), never the file's,
except for what covers all time (a band, an inverted selection). :func:`resolve` fills in the
shapes that depend on the sound (a harmonic's pitch track, a wand's cells) from a document.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import hz_to_bins, seconds_to_frames
from spectropaint.transforms.regions import Region
from spectropaint.transforms.shapes import INF, Bounds, CellGrid, Shape, shape_from_dict

MODES = ("add", "subtract", "intersect")
FEATHER_TRUNCATE = 3.0
"""The feather's Gaussian is cut at this many standard deviations (weights beyond are exactly 0)."""
MAIN_LOBE_BINS = {"hann": 2.0, "hamming": 2.0, "blackman": 3.0}
"""Half-width of a window's main lobe in bins: a harmonic selection is never narrower."""


@dataclass(frozen=True)
class Term:
    """One shape of a selection and how it combines with the terms before it."""

    mode: str
    shape: Shape

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SettingsError(f"combine must be one of {', '.join(MODES)}, not {self.mode!r}")


@dataclass(frozen=True)
class Selection:
    """Shapes combined in order, then feathered, then inverted.

    Attributes
    ----------
    terms : tuple of Term
        The first term's mode is ignored (it starts from nothing).
    feather_seconds, feather_hz : float
        Standard deviations of the feather's Gaussian along time and frequency (0: hard edges).
    inverted : bool
        Everything but the selection.
    """

    terms: tuple[Term, ...] = ()
    feather_seconds: float = 0.0
    feather_hz: float = 0.0
    inverted: bool = False

    def __post_init__(self) -> None:
        for name in ("feather_seconds", "feather_hz"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 <= value < INF):
                raise SettingsError(f"{name} must be 0 or more, not {value!r}")

    @classmethod
    def of(cls, shape: Shape) -> Selection:
        return cls((Term("add", shape),))

    @property
    def empty(self) -> bool:
        return not self.terms

    def combined(self, shape: Shape, mode: str = "replace") -> Selection:
        """This selection with ``shape`` added, subtracted or intersected; ``replace`` starts anew
        (keeping the feather)."""
        if mode == "replace" or self.empty:
            return replace(self, terms=(Term("add", shape),), inverted=False)
        return replace(self, terms=(*self.terms, Term(mode, shape)))

    def feathered(self, seconds: float, hz: float) -> Selection:
        return replace(self, feather_seconds=float(seconds), feather_hz=float(hz))

    def invert(self) -> Selection:
        return replace(self, inverted=not self.inverted)

    @property
    def resolved(self) -> bool:
        return all(term.shape.resolved for term in self.terms)

    def bounds(self) -> Bounds:
        """Seconds and Hz that hold every selected cell, the feather included."""
        if self.inverted or self.empty:
            return -INF, INF, -INF, INF
        t0, t1, f0, f1 = self.terms[0].shape.bounds()
        for term in self.terms[1:]:
            a0, a1, b0, b1 = term.shape.bounds()
            if term.mode == "add":
                t0, t1, f0, f1 = min(t0, a0), max(t1, a1), min(f0, b0), max(f1, b1)
            elif term.mode == "intersect":
                t0, t1, f0, f1 = max(t0, a0), min(t1, a1), max(f0, b0), min(f1, b1)
        dt = FEATHER_TRUNCATE * self.feather_seconds
        df = FEATHER_TRUNCATE * self.feather_hz
        return t0 - dt, t1 + dt, f0 - df, f1 + df

    def weights(self, grid: CellGrid) -> np.ndarray:
        """The selection's weight on every cell of ``grid``: float32 ``[B, T]``, 0..1.

        The grid must hold the selection's :meth:`bounds` (or all of the sound) for the feather's
        edges to be right; cells of weight 0 are exactly 0.
        """
        out = np.zeros(grid.shape, dtype=np.float32)
        for index, term in enumerate(self.terms):
            weight = term.shape.weights(grid)
            if index == 0 or term.mode == "add":
                np.maximum(out, weight, out=out)
            elif term.mode == "subtract":
                np.minimum(out, 1.0 - weight, out=out)
            else:
                np.minimum(out, weight, out=out)
        if (self.feather_seconds > 0 or self.feather_hz > 0) and out.any():
            out = _feather(out, grid, self.feather_seconds, self.feather_hz)
        if self.inverted:
            out = 1.0 - out
        return out

    # ------------------------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """``{"shapes": [{"shape": ..., "combine": ...}, ...], "feather": [s, hz], "invert": b}``."""
        shapes = []
        for index, term in enumerate(self.terms):
            values = term.shape.to_dict()
            if index:
                values["combine"] = term.mode
            shapes.append(values)
        out: dict[str, Any] = {"shapes": shapes}
        if self.feather_seconds or self.feather_hz:
            out["feather"] = [self.feather_seconds, self.feather_hz]
        if self.inverted:
            out["invert"] = True
        return out

    @classmethod
    def from_dict(cls, values: Any) -> Selection:
        """From one shape's object, a list of them, or :meth:`to_dict`'s object."""
        if isinstance(values, Mapping) and "shape" in values:
            values = {"shapes": [values]}
        elif isinstance(values, list):
            values = {"shapes": values}
        if not isinstance(values, Mapping):
            raise SettingsError(f"a selection must be a shape or a list of shapes, not {values!r}")
        unknown = sorted(set(values) - {"shapes", "feather", "invert"})
        if unknown:
            raise SettingsError(f"unknown selection key {', '.join(map(repr, unknown))}")
        shapes = values.get("shapes")
        if not isinstance(shapes, list) or not shapes:
            raise SettingsError("a selection needs at least one shape")
        terms = []
        for index, shape in enumerate(shapes):
            mode = shape.get("combine", "add") if isinstance(shape, Mapping) else "add"
            terms.append(Term(mode if index else "add", shape_from_dict(shape)))
        feather = values.get("feather", [0.0, 0.0])
        if not (isinstance(feather, list) and len(feather) == 2):
            raise SettingsError("'feather' must be [seconds, hz]")
        invert = values.get("invert", False)
        if not isinstance(invert, bool):
            raise SettingsError(f"'invert' must be true or false, not {invert!r}")
        return cls(tuple(terms), float(feather[0]), float(feather[1]), invert)


def _feather(weights: np.ndarray, grid: CellGrid, seconds: float, hz: float) -> np.ndarray:
    from scipy.ndimage import gaussian_filter

    spacing = float(np.median(grid.spacing_hz)) if len(grid.hz) else 1.0
    sigma = (hz / spacing, seconds / grid.step_seconds if grid.step_seconds > 0 else 0.0)
    out = gaussian_filter(
        weights.astype(np.float64), sigma, mode="nearest", truncate=FEATHER_TRUNCATE
    )
    out[out < 1e-6] = 0.0
    return np.clip(out, 0.0, 1.0).astype(np.float32)


# ------------------------------------------------------------------------------- rasterising
@dataclass(frozen=True, eq=False)
class Mask:
    """A selection on one block: ``weight`` (float32 ``[bins, frames]``, 0..1, on the document's
    device) over ``region``; every cell outside ``region`` has weight 0."""

    region: Region
    weight: torch.Tensor

    def padded(self, region: Region) -> torch.Tensor:
        """The weight on a larger ``region`` that holds this one, zeros around."""
        out = torch.zeros(region.shape, dtype=self.weight.dtype, device=self.weight.device)
        rows = slice(self.region.bin0 - region.bin0, self.region.bin1 - region.bin0)
        columns = slice(self.region.frame0 - region.frame0, self.region.frame1 - region.frame0)
        out[rows, columns] = self.weight
        return out


def main_lobe_bins(document) -> float:
    """Half-width of the main lobe of ``document``'s analysis window, in bins."""
    return MAIN_LOBE_BINS.get(getattr(document.settings, "window", "hann"), 2.0)


def block_grid(document, region: Region) -> CellGrid:
    """The cells of ``region`` in its block of ``document``."""
    block = document.blocks[region.block]
    band = np.asarray(block.band_hz, dtype=np.float64)
    spacing = np.abs(np.gradient(band)) if len(band) > 1 else np.ones(1)
    rows = slice(region.bin0, region.bin1)
    return CellGrid(
        seconds=np.asarray(block.frame_seconds[region.frame0 : region.frame1], dtype=np.float64),
        hz=band[rows],
        step_seconds=block.hop / document.sample_rate,
        spacing_hz=spacing[rows],
        lobe_hz=main_lobe_bins(document) * spacing[rows],
    )


def bounds_region(document, bounds: Bounds, *, channels: tuple[int, ...], block: int = 0) -> Region:
    """The cells of ``block`` whose centres lie within ``bounds``, with one cell to spare on
    every side (clipped to the grid; empty when the bounds miss it)."""
    layout = document.blocks[block].layout
    n_bins, n_frames = layout.n_bins, layout.n_frames
    t0, t1, f0, f1 = bounds
    if not (t0 < t1 and f0 < f1):
        return Region(0, 0, 0, 0, channels, block)

    def frame(seconds: float, rounding) -> int:
        if not math.isfinite(seconds):
            return -1 if seconds < 0 else n_frames + 1
        position = seconds_to_frames(
            seconds,
            hop=layout.hop,
            sample_rate=document.sample_rate,
            frame0_sample=layout.frame0_sample,
        )
        return int(rounding(float(position)))

    def band(hz: float, rounding) -> int:
        if not math.isfinite(hz):
            return -1 if hz < 0 else n_bins + 1
        return int(rounding(float(hz_to_bins(hz, band_hz=layout.band_hz))))

    region = Region(
        band(f0, math.floor) - 1,
        band(f1, math.ceil) + 2,
        frame(t0, math.floor) - 1,
        frame(t1, math.ceil) + 2,
        channels,
        block,
    )
    return region.clipped(n_bins, n_frames)


def rasterise(
    selection: Selection,
    document,
    *,
    channels: tuple[int, ...] | None = None,
    block: int = 0,
) -> Mask | None:
    """``selection`` on ``block`` of ``document``: its :class:`Mask`, or None when it selects no
    cell. ``channels`` default to all. The selection must be :func:`resolve`-d."""
    if not selection.resolved:
        raise SettingsError("resolve the selection against the document before rasterising it")
    channels = tuple(range(document.n_channels)) if channels is None else tuple(channels)
    region = bounds_region(document, selection.bounds(), channels=channels, block=block)
    if region.empty or selection.empty:
        return None
    weights = selection.weights(block_grid(document, region))
    rows = np.flatnonzero(weights.any(axis=1))
    columns = np.flatnonzero(weights.any(axis=0))
    if not len(rows):
        return None
    weights = weights[rows[0] : rows[-1] + 1, columns[0] : columns[-1] + 1]
    trimmed = Region(
        region.bin0 + int(rows[0]),
        region.bin0 + int(rows[-1]) + 1,
        region.frame0 + int(columns[0]),
        region.frame0 + int(columns[-1]) + 1,
        channels,
        block,
    )
    weight = torch.from_numpy(np.ascontiguousarray(weights)).to(document.device)
    return Mask(trimmed, weight)


def rasterise_blocks(
    selection: Selection, document, *, channels: tuple[int, ...] | None = None
) -> list[Mask]:
    """``selection`` on every block of ``document`` (the STFT has one; the NSGT one per group of
    bands and slice parity, each with its own hop and bands): the :class:`Mask` of each block it
    selects cells of, in block order (none: an empty list)."""
    masks = (
        rasterise(selection, document, channels=channels, block=block)
        for block in range(len(document.blocks))
    )
    return [mask for mask in masks if mask is not None]


def resolve(selection: Selection, document) -> Selection:
    """``selection`` with every shape that depends on the sound measured on ``document`` as a
    whole (every block, in seconds and Hz): a harmonic's pitch track, a wand's cells."""
    from spectropaint.transforms.sound_analysis import resolve_shape

    if selection.resolved:
        return selection
    terms = tuple(Term(term.mode, resolve_shape(term.shape, document)) for term in selection.terms)
    return replace(selection, terms=terms)


def selection_audio(document, masks: Mask | list[Mask]) -> tuple[int, np.ndarray]:
    """What the selection alone sounds like: the edited coefficients of the cells of ``masks`` (one
    per block: :func:`rasterise_blocks`) times their weight, every other cell silent,
    resynthesised. Returns ``(first_sample, samples [C, n])`` (float64) over the samples the
    selection's frames reach."""
    pieces = []
    for mask in [masks] if isinstance(masks, Mask) else masks:
        region = mask.region
        block = document.blocks[region.block]
        magnitude, phase = document.read(region)
        coefficients = torch.zeros(
            (len(region.channels), block.n_bins, region.shape[1]),
            dtype=torch.complex64,
            device=document.device,
        )
        coefficients[:, region.bin0 : region.bin1] = torch.polar(magnitude * mask.weight, phase)
        pieces.append((region.block, region.frame0, coefficients))
    first, samples = document.transform.synthesise_many(pieces, document.n_samples)
    return first, samples.double().cpu().numpy()
