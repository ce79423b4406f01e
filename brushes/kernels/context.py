"""What a kernel is given besides the region's values, and the kernel signature itself.

A kernel is a pure torch function of one dab's region (no document inside)::

    kernel(magnitude, phase, mask, params, context) -> (magnitude, phase)

``magnitude`` and ``phase`` are ``[C, Bm, Tm]``: the dab's bounding box plus the margin the kernel
asked for (reflected where the grid ends, never wrapped). ``mask`` is the dab's weight ``[B, T]`` on
the box alone, ``context.inner`` locates that box inside the region, and the kernel returns the fully
applied result on the box, ``[C, B, T]``. Blending through the weight is the caller's job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from spectropaint.brushes.kernels.originals_fused import Kept


@dataclass(frozen=True)
class Source:
    """The clone source for one dab: the box's ``B x T`` cells moved by the offset.

    Attributes
    ----------
    magnitude, phase : torch.Tensor [shape=(C, B, T + 1)]
        Values at the source cells with the frame before them in front (column 0), so the phase
        advance can be measured; zeros where the source leaves the grid.
    valid : torch.Tensor [shape=(B, T)], bool, or None
        Where the source cell (of columns 1..T) lies inside the grid; None: everywhere (or a
        ``kept`` source: ``grid`` says).
    bin_hz : torch.Tensor [shape=(B,)], float64
        Centre frequency of each source row, Hz (the nearest row's in the grid past it); of a
        ``kept`` source, of its rows in the grid alone.
    kept : Kept or None
        Instead of ``magnitude`` and ``phase`` (then None), where those values lie (the stroke's
        kept tiles and the document's cells, :class:`.originals_fused.Kept`), for the fused
        kernel once it has run (:func:`.clone_fused.reads_kept`): it reads them in the grid alone.
    grid : tuple of int, or None
        The rows and columns of the source's cells (the frame before included) that lie in the
        grid, ``(row0, row1, column0, column1)``; None: all of them.
    """

    magnitude: torch.Tensor | None
    phase: torch.Tensor | None
    valid: torch.Tensor | None
    bin_hz: torch.Tensor
    kept: Kept | None = None
    grid: tuple[int, int, int, int] | None = None


@dataclass(frozen=True)
class DabContext:
    """Geometry and signal facts of one dab's region.

    Attributes
    ----------
    inner : tuple of slice
        (bins, frames) slices of the dab's box inside the region arrays.
    bin_hz : torch.Tensor [shape=(Bm,)], float64, or None
        Centre frequency of each region row (the reflected row's, in the margin past the grid).
    frames : torch.Tensor [shape=(Tm,)], int64, or None
        Frame index of each region column (the reflected column's past the grid).
    bins : torch.Tensor [shape=(Bm,)], int64, or None
        Bin index of each region row (the reflected row's past the grid).

        These three are None for a brush that reads none of them (a stamping brush without
        :attr:`~spectropaint.brushes.registry.BrushKind.reads_frames`).
    hop : int
        Samples per frame step.
    sample_rate : int
        Samples per second.
    radius : tuple of float
        The brush's full-size radii (frames, bins).
    hardness : float
        The brush's hardness (0..1).
    step : tuple of float
        Motion (frames, bins) since the stroke's previous dab.
    centre : tuple
        The dab's centre (frame, bin), fractional. The bin may be a tensor ``[B, T]`` (float64):
        per cell of the box, the centre bin of the dab that painted it last (the dabs of one
        event applied together).
    band_step_hz : float or None
        Hz between neighbouring bands of the block, where they are evenly spaced (an STFT's bins),
        whatever rows the region holds; None: read from ``bin_hz``.
    full_scale : float
        Magnitude of the peak bin of a full-scale (amplitude 1) sinusoid in this transform.
    source : Source or None
        The clone source, for brushes that read one.
    original : torch.Tensor or None [shape=(2, C, Bm, Tm)]
        Dragging brushes only: the region's magnitude and phase as they were when the stroke began
        (measurements taken from these do not drift as the dabs pile up).
    prepared : dict of str to torch.Tensor, or None
        What the brush's ``prepare`` computed once for the event's region (from the stroke's
        starting values), sliced to this dab's region ``[..., Bm, Tm]``; None where it has none.
    frame_weight : torch.Tensor or None [shape=(Tm,)], float32
        The share of the signal each region column carries, where the transform splits the
        signal between blocks over time (the NSGT's two slice parities: their windows sum to 1);
        energy a brush adds is weighted by it. None: the whole signal (the STFT).
    """

    inner: tuple[slice, slice]
    bin_hz: torch.Tensor | None
    frames: torch.Tensor | None
    hop: int
    sample_rate: int
    radius: tuple[float, float]
    hardness: float = 0.5
    step: tuple[float, float] = (0.0, 0.0)
    bins: torch.Tensor | None = None
    centre: tuple[float, float | torch.Tensor] = (0.0, 0.0)
    band_step_hz: float | None = None
    full_scale: float = 1.0
    source: Source | None = None
    original: torch.Tensor | None = None
    prepared: dict[str, torch.Tensor] | None = None
    frame_weight: torch.Tensor | None = None

    def with_inner(self, inner: tuple[slice, slice]) -> DabContext:
        """This context for another box of the region, at ``inner``: what
        ``dataclasses.replace(self, inner=inner)`` gives, in a tenth of its time (which walks
        every field and runs the frozen class's ``__init__``: some 4 us a group)."""
        other = object.__new__(DabContext)
        other.__dict__.update(self.__dict__)
        other.__dict__["inner"] = inner
        return other


Kernel = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor | None, object, DabContext],
    tuple[torch.Tensor, torch.Tensor],
]
"""``kernel(magnitude, phase, mask, params, context)``: the dab's result on its box. ``mask`` is
its weight; a stamping brush's kernel computes its result everywhere in the box and the blend
weighs it, so the dab path gives those kernels None where the weights were computed on the host
(:func:`~spectropaint.brushes.dab._masks`: one upload fewer)."""


class PointwiseParams:
    """Mixin for the parameters of kernels that read no cell beyond the dab's box."""

    def margin(self, settings) -> tuple[int, int]:
        """Cells of context (bins, frames) the kernel reads around the box: none."""
        return 0, 0


@dataclass(frozen=True)
class DragDabs:
    """A group of a dragging brush's dabs, each on a window of one size ``H x W`` that holds its
    box, laid out so that everything not read from the values can be computed for all at once.

    Each dab's "own region" is its box plus the kernel's margin (reflected past the grid): what
    the dab's kernel would be given alone. The group's region is the joint box plus the margin.

    Attributes
    ----------
    mask : torch.Tensor [shape=(K, H, W)], float32
        Each dab's weight on its window (0 outside its box).
    outside : torch.Tensor [shape=(K, H, W)], bool
        The cells of the window outside the dab's box.
    step : torch.Tensor [shape=(K, 2)], float64
        Motion (frames, bins) since the previous dab.
    dest_columns, dest_rows : torch.Tensor [shape=(K, W) and (K, H)], float32
        The own region's column and row of each window column and row.
    high : torch.Tensor [shape=(K, 2)], float32
        The own region's last column and row.
    columns, rows : torch.Tensor [shape=(2, K, Tm) and (2, K, Bm)], int32
        For each own-region column (row; padded to the widest): its column in the group's region
        (``[0]``) and in the values held, the joint box's cells clipped to the grid (``[1]``),
        reflected past the grid as the dab alone would be.
    window_cells : torch.Tensor [shape=(K, H, W)], int32
        The group's region cell of each window cell, as a place in its flattened ``[Bm, Tm]``.
    alone : tuple of slice, or None
        One dab on its own region (``K`` 1), which the values held are: its window is its box,
        at these (bins, frames) slices of the region, and ``outside``, ``columns``, ``rows`` and
        ``window_cells`` are None.
    """

    mask: torch.Tensor
    outside: torch.Tensor | None
    step: torch.Tensor
    dest_columns: torch.Tensor
    dest_rows: torch.Tensor
    high: torch.Tensor
    columns: torch.Tensor | None
    rows: torch.Tensor | None
    window_cells: torch.Tensor | None
    alone: tuple[slice, slice] | None = None
