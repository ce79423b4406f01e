"""The one function that applies the dabs of a pointer event to the document; every brush goes through it.

A dab is an ellipse in the stroke's plane (:mod:`.plane`: frames and bins, or seconds and semitones
or Hz); it is applied to every block it reaches, over that block's own frames and bands. The dabs of
one event are applied together, in groups whose joint box stays compact (:func:`apply_dabs`): per
group and block, the joint box is computed on the host from the dab centres, recorded once in the
stroke's open history step, read once (plus the kernel's margin, reflected past the grid's edges)
and written once; every dab's mask is built in one batched operation from the centres (on the
host in one compiled loop where the dabs are small, :mod:`.mask_compiled`); the kernel
runs once for the group where the brush allows (a kernel given, per cell, the centre of the dab that
painted it last), once per dab on slices of the group's region otherwise (the spectral filter's
whole-box spectrum, warp's dab-after-dab smudge); the blend goes through the weight, leaving every
cell of weight 0 bit-identical. Where a brush's fused kernels run, its kernel blends and writes
the document's cells in its own launches (``BrushKind.blends_into``: the blur, the filter, the pen,
the clone). Nothing in this path waits for the device: no value is read back to the host. One dab
at a time (``apply_dabs(..., fuse=False)``) is the same code with groups of one: the reference the
fused path is tested and measured against. Blocks that hold the same bands on frame
grids a whole number of frames apart (the NSGT's two slice parities of a group of bands) are one
:class:`BlockFamily`: an event's dabs skip families they come nowhere near, and a stamping brush
paints a family's two blocks together wherever the dabs cover the same cells in both.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from spectropaint.brushes import blend_fused, drag_compiled, mask_compiled, plan_compiled
from spectropaint.brushes.blend import WindowBlend, blend
from spectropaint.brushes.coverage_plane import CoveragePlane
from spectropaint.brushes.history import OpenStep, read_stacked
from spectropaint.brushes.kernels import (
    clone_fused,
    coverage_fused,
    staging,
    triton_math,
    warp_compiled,
    warp_fused,
)
from spectropaint.brushes.kernels.context import DabContext, DragDabs, Source
from spectropaint.brushes.kernels.kept import kept
from spectropaint.brushes.kernels.phase import constant, kept_indices
from spectropaint.brushes.kernels.select import select
from spectropaint.brushes.mask import FAR, mask_from_distances, mask_from_radius
from spectropaint.brushes.plane import BlockAxes, StrokePlane
from spectropaint.brushes.registry import BrushKind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import Dabs
from spectropaint.brushes.tiles import TileMap
from spectropaint.transforms.files.audio_file import format_bytes
from spectropaint.transforms.host_memory import available_memory
from spectropaint.transforms.regions import EMPTY, Region, Regions
from spectropaint.transforms.torch_device import to_device, to_device_together


@dataclass(frozen=True)
class CellRadii:
    """A brush's full-size radii in one block's cells, as kernels' ``margin`` reads them."""

    radius_frames: float
    radius_bins: float
    spacing: float


WORK_BYTES_PER_CELL = 160
"""Peak memory of one dab per cell of its region (box plus margin) and channel: the region's values,
the stroke's originals, the kernel's FFTs, the history's copy. The most any brush took in
``tests/benchmarks/bench_dab_memory.py`` (clone, 135 here) with room to spare."""


@dataclass
class BlockStroke:
    """What a stroke keeps for one block.

    Attributes
    ----------
    index : int
        The block.
    axes : BlockAxes
        The block's frames and bands in the stroke's plane.
    coverage : TileMap
        Per tile ``[bins, frames]`` float32 on the document's device: the largest weight any dab
        of the stroke gave each cell (stamping brushes only), unless the stroke's weights are
        computed on the host (:func:`_coverage_on_host`): then ``plane`` holds it.
    plane : CoveragePlane
        The same on the host, where the stroke's weights are computed there.
    band_hz : torch.Tensor [shape=(n_bins,)], float64
        Centre frequency of every band, on the document's device.
    radii : CellRadii
        The brush's radii in this block's cells (its densest part, for the margin).
    margin : tuple of int
        Cells of context (bins, frames) the kernel reads around each box.
    band_step_hz : float or None
        Hz between neighbouring bands when they are evenly spaced
        (:func:`~spectropaint.transforms.geometry.even_step`).
    """

    index: int
    axes: BlockAxes
    coverage: TileMap
    plane: CoveragePlane
    band_hz: torch.Tensor
    radii: CellRadii
    margin: tuple[int, int]
    band_step_hz: float | None = None
    host_coverage: bool | None = None
    """Whether ``coverage`` is kept on the host (decided at the stroke's first group,
    :func:`_coverage_on_host`)."""
    zeros: coverage_fused.ZeroedTiles | None = None
    """Where the coverage is raised by each group's launch (:func:`_raised`): the zeroed tiles it
    is made of, on the device."""
    dab_cells: int | None = None
    """The cells of a full-size dab's box in the block (:func:`_dab_cells`, computed at the
    stroke's first event)."""

    def release_coverage(self) -> None:
        """Drop the coverage (the stroke has ended)."""
        self.coverage.tiles.clear()
        self.plane.release()
        self.zeros = None


@dataclass
class StrokeState:
    """Everything a stroke's dabs share: the document, the brush, the plane, the sparse stores."""

    document: Any
    kind: BrushKind
    params: Any
    settings: BrushSettings
    step: OpenStep
    plane: StrokePlane
    blocks: list[BlockStroke]
    full_scale: float
    families: list[BlockFamily] = dataclasses.field(init=False)
    """The blocks grouped by the bands they hold (:func:`block_families`)."""

    def __post_init__(self) -> None:
        self.families = block_families(self.document, self.blocks)

    @property
    def channels(self) -> tuple[int, ...]:
        return self.step.channels

    def follow(self, device: torch.device) -> None:
        """Move the stroke's tensors (frequencies, coverage, original tiles) to ``device``.

        Called before each event's dabs with the document's device: the stroke's state is made on
        the CPU and moves there with the first dab, and follows the document to the CPU should its device
        run out of memory (an allocation that fails here is retried on the CPU too).
        """
        if self.blocks[0].band_hz.device == device:
            return
        stores = [block.coverage.tiles for block in self.blocks if not block.host_coverage]
        for block in self.blocks:  # (through pinned memory: the first event does not wait)
            block.band_hz = to_device(block.band_hz, device)
        for tiles in stores:
            for key, tensor in tiles.items():
                tiles[key] = tensor.to(device)
        self.step.follow(device)


@dataclass(frozen=True)
class BlockFamily:
    """Blocks that hold the same bands at the same rate on frame grids ``shift`` frames apart (the
    NSGT's parity pair: the odd block's frame ``j`` lies at the time of the even block's
    ``j + shift``), or one block alone.

    Attributes
    ----------
    strokes : tuple of BlockStroke
        One or two.
    shift : int
        Frames from the second block's grid to the first's (0 for a block alone).
    y_range : tuple of float
        The lowest and highest band in the stroke's plane: a dab farther than its radius from it
        touches none of the family's cells.
    """

    strokes: tuple[BlockStroke, ...]
    shift: int
    y_range: tuple[float, float]


def block_families(document, blocks: list[BlockStroke]) -> list[BlockFamily]:
    """``blocks`` grouped into :class:`BlockFamily`: a block with the next one whose layout has the
    same bands and hop and starts a whole number of hops later, else alone."""
    families, taken = [], set()
    for position, stroke in enumerate(blocks):
        if stroke.index in taken:
            continue
        layout, members, shift = document.blocks[stroke.index].layout, [stroke], 0
        for other in blocks[position + 1 :]:
            theirs = document.blocks[other.index].layout
            offset = theirs.frame0_sample - layout.frame0_sample
            if (
                other.index not in taken
                and theirs.hop == layout.hop
                and offset > 0
                and offset % layout.hop == 0
                and np.array_equal(theirs.band_hz, layout.band_hz)
            ):
                members.append(other)
                shift = offset // layout.hop
                break
        taken.update(member.index for member in members)
        y = stroke.axes.y
        families.append(BlockFamily(tuple(members), shift, (float(y[0]), float(y[-1]))))
    return families


def largest_region(radii: CellRadii, margin: tuple[int, int], n_bins: int, n_frames: int):
    """(bins, frames) of the largest region a dab of ``radii`` reads in a block of ``n_bins`` x
    ``n_frames``: its box, at most the grid, plus the kernel's ``margin`` (bins, frames) each side."""
    bins = min(2 * math.ceil(radii.radius_bins) + 1, n_bins) + 2 * margin[0]
    frames = min(2 * math.ceil(radii.radius_frames) + 1, n_frames) + 2 * margin[1]
    return bins, frames


def region_refusal(
    kind: BrushKind, blocks: list[BlockStroke], document, channels: int
) -> str | None:
    """Why a stroke cannot be painted: the region a dab reads in some block would need more memory
    than is available (None when every block's fits). Checked before the stroke begins."""
    budget = available_memory()
    for block in blocks:
        data = document.blocks[block.index]
        bins, frames = largest_region(block.radii, block.margin, data.n_bins, data.n_frames)
        need = bins * frames * channels * WORK_BYTES_PER_CELL
        if budget is not None and need > budget:
            radii = block.radii
            where = f" of block {block.index}" if len(blocks) > 1 else ""
            return (
                f"a {kind.name} dab of {radii.radius_frames:g} x {radii.radius_bins:g} cells{where} "
                f"reads {frames} frames x {bins} bins with its margin, about {format_bytes(need)} "
                f"of work, and {format_bytes(budget)} is available: use a smaller radius"
                + (" or sigma" if block.margin != (0, 0) else "")
            )
    return None


def reflect_index(index: torch.Tensor, n: int) -> torch.Tensor:
    """Indices past ``[0, n)`` reflected back, edge cell repeated (``... 1 0 | 0 1 ... n-1 | n-1 ...``)."""
    index = torch.remainder(index, 2 * n)
    return torch.where(index >= n, 2 * n - 1 - index, index)


def _read(
    state: StrokeState,
    index: int,
    box: Region,
    *,
    original: bool,
    fresh: frozenset = frozenset(),
    axes: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """Values ``[2, C, Bm, Tm]`` of ``box`` reflected past the grid, with its bin and frame indices
    (where ``axes`` asks for them; None otherwise).

    ``original`` picks the stroke's starting values instead of the current ones (``fresh``: the
    tiles :meth:`~.history.OpenStep.record` just kept, whose values the document still holds).
    """
    block = state.document.blocks[index]
    inside = box.clipped(block.n_bins, block.n_frames)
    values = (
        state.step.original(inside, fresh) if original else read_stacked(state.document, inside)
    )
    if (inside.bin0, inside.bin1) != (box.bin0, box.bin1):
        values = _reflect(values, inside.bin0 - box.bin0, box.bin1 - inside.bin1, dim=-2)
    if (inside.frame0, inside.frame1) != (box.frame0, box.frame1):
        values = _reflect(values, inside.frame0 - box.frame0, box.frame1 - inside.frame1, dim=-1)
    return values, *(_axes(box, block, state.document.device) if axes else (None, None))


def _axes(box: Region, block, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The bin and frame indices of ``box``'s cells in ``block``, reflected past its grid as
    :func:`_read` reflects the values. Inside the grid, views of the grid's indices (made once,
    :func:`.kernels.phase.kept_indices`): no launch on a GPU."""
    return (
        _indices_of(box.bin0, box.bin1, block.n_bins, device),
        _indices_of(box.frame0, box.frame1, block.n_frames, device),
    )


def _indices_of(first: int, stop: int, size: int, device: torch.device) -> torch.Tensor:
    """Indices ``first`` to ``stop`` along an axis of ``size`` cells, reflected past it."""
    if first >= 0 and stop <= size:
        return kept_indices(size, device)[first:stop]
    return reflect_index(torch.arange(first, stop, device=device), size)


def _bins_hz(stroke: BlockStroke, region: Region, bins: torch.Tensor, size: int) -> torch.Tensor:
    """The centre frequencies of ``region``'s bins (``bins``, as :func:`_axes` gives them for a
    grid of ``size`` bins): a slice of the stroke's inside the grid (no gather), else gathered."""
    if region.bin0 >= 0 and region.bin1 <= size:
        return stroke.band_hz[region.bin0 : region.bin1]
    return stroke.band_hz[bins]


def _reflect(values: torch.Tensor, before: int, after: int, *, dim: int) -> torch.Tensor:
    """``values`` (which reach the grid's edge on each padded side) extended by reflection."""
    size = values.shape[dim]
    if before > size or after > size:  # only for grids smaller than a margin
        index = reflect_index(torch.arange(-before, size + after, device=values.device), size)
        return values[(slice(None),) * (values.dim() + dim) + (index,)]
    pieces = [
        values.narrow(dim, 0, before).flip(dim),
        values,
        values.narrow(dim, size - after, after).flip(dim),
    ]
    return torch.cat(pieces, dim=dim)


def _source(state: StrokeState, stroke: BlockStroke, box: Region, params: Any) -> Source:
    """The clone source of ``box`` (the dab's region: its box and the kernel's margin, which may
    reach past the grid) as the stroke began, with the frame before it in front."""
    block = state.document.blocks[stroke.index]
    wanted = Region(
        box.bin0 + params.offset_bins,
        box.bin1 + params.offset_bins,
        box.frame0 + params.offset_frames - 1,
        box.frame1 + params.offset_frames,
        box.channels,
        box.block,
    )
    inside = wanted.clipped(block.n_bins, block.n_frames)
    device = state.document.device
    rows = slice(inside.bin0 - wanted.bin0, inside.bin1 - wanted.bin0)
    columns = slice(inside.frame0 - wanted.frame0, inside.frame1 - wanted.frame0)
    if inside == wanted:  # all of it in the grid
        grid = None
    elif inside.empty:  # none of it
        grid = (0, 0, 0, 0)
    else:
        grid = (rows.start, rows.stop, columns.start, columns.stop)
    if clone_fused.available(device) and clone_fused.reads_kept():
        # where the values lie, for the kernel to read them in the grid alone
        if inside.empty:
            return Source(None, None, None, stroke.band_hz[:1], clone_fused.nowhere(device), grid)
        kept = state.step.kept(inside)
        if kept is not None:
            bin_hz = stroke.band_hz[inside.bin0 : inside.bin1]
            return Source(None, None, None, bin_hz, kept.moved(-rows.start, -columns.start), grid)
    if grid is None:  # (no cell to mark invalid)
        values = state.step.original(inside)
        return Source(values[0], values[1], None, stroke.band_hz[wanted.bin0 : wanted.bin1])
    values = torch.zeros((2, len(box.channels), box.shape[0], box.shape[1] + 1), device=device)
    valid = torch.zeros(values.shape[-2:], device=device, dtype=torch.bool)
    if not inside.empty:
        values[:, :, rows, columns] = state.step.original(inside)
        valid[rows, columns] = True
        first = columns.start  # the column of the first frame inside the grid
        if inside.frame0 == 0 and first >= 1 and values.shape[-1] > first + 1:
            # the frame before lies outside the grid: extrapolate it, so the first frame's phase
            # advance is measured forwards (wherever the box begins: a fused box must agree)
            values[1, ..., first - 1] = 2 * values[1, ..., first] - values[1, ..., first + 1]
    bins = torch.arange(wanted.bin0, wanted.bin1, device=device).clamp(0, block.n_bins - 1)
    return Source(values[0], values[1], valid[:, 1:], stroke.band_hz[bins], grid=grid)


@dataclass(frozen=True)
class _BlockDabs:
    """Dabs as one block sees them, as arrays: one row per dab that covers some of its cells, in
    stamping order, all computed on the host (nothing here touches the device).

    Attributes
    ----------
    boxes : np.ndarray [shape=(K, 4)], int64
        ``bin0, bin1, frame0, frame1`` of the cells each dab can cover (clipped, never empty).
    at, reach : np.ndarray [shape=(K, 2)], float64
        Centres (x, y) and pressure-scaled radii in the stroke's plane: the masks'.
    weight : np.ndarray [shape=(K,)], float64
        Peak weights.
    radius, step, centre : np.ndarray [shape=(K, 2)], float64
        The brush's full-size radii, the motion since the previous dab and the centres, in the
        block's (frames, bins).
    offsets : np.ndarray [shape=(K, 2)], int64, or None
        The clone's offset rounded to the block's cells (frames, bins), where the stroke's plane is
        not the block's cells.
    channels : tuple of int
    block : int
    """

    boxes: np.ndarray
    at: np.ndarray
    reach: np.ndarray
    weight: np.ndarray
    radius: np.ndarray
    step: np.ndarray
    centre: np.ndarray
    offsets: np.ndarray | None
    channels: tuple[int, ...]
    block: int

    def __len__(self) -> int:
        return len(self.boxes)

    def part(self, start: int, stop: int) -> _BlockDabs:
        """Dabs ``start`` to ``stop`` (views)."""
        if (start, stop) == (0, len(self)):
            return self
        rows = slice(start, stop)
        return dataclasses.replace(
            self,
            **{name: getattr(self, name)[rows] for name in _PER_DAB},
            offsets=None if self.offsets is None else self.offsets[rows],
        )

    def box(self, index: int) -> Region:
        bin0, bin1, frame0, frame1 = (int(v) for v in self.boxes[index])
        return Region(bin0, bin1, frame0, frame1, self.channels, self.block)

    def joint_box(self) -> Region:
        """The smallest box holding every dab's (over Python's integers: for an event's few dabs,
        a third of numpy's reductions' time)."""
        bin0, bin1, frame0, frame1 = self.boxes.T.tolist()
        return Region(min(bin0), max(bin1), min(frame0), max(frame1), self.channels, self.block)

    def params(self, params: Any, index: int = 0) -> Any:
        """The kernel's parameters for dab ``index`` (the clone's offset in this block's cells)."""
        if self.offsets is None:
            return params
        frames, bins = (int(v) for v in self.offsets[index])
        return dataclasses.replace(params, offset_frames=frames, offset_bins=bins)

    def pair(self, name: str, index: int) -> tuple[float, float]:
        """Field ``name`` (``radius``, ``step``, ``centre``) of dab ``index`` as numbers."""
        x, y = getattr(self, name)[index].tolist()
        return x, y


_PER_DAB = ("boxes", "at", "reach", "weight", "radius", "step", "centre")


@dataclass(frozen=True)
class _EventDabs:
    """An event's dabs in the stroke's plane, as every block sees them (computed once per event).

    Attributes
    ----------
    at, reach, step : np.ndarray [shape=(K, 2)], float64
        Centres (x, y), pressure-scaled radii and the motion since the previous dab.
    weight : np.ndarray [shape=(K,)], float64
        Peak weights.
    """

    at: np.ndarray
    reach: np.ndarray
    step: np.ndarray
    weight: np.ndarray

    @classmethod
    def of(cls, state: StrokeState, dabs: Dabs) -> _EventDabs:
        settings = state.settings
        size = settings.size_at(dabs.pressure)
        reach = _columns(state.plane.radius[0] * size, state.plane.radius[1] * size)
        weight = settings.weight_at(dabs.pressure)  # (an array, as the pressures are)
        at = _columns(dabs.x, dabs.y)
        return cls(at, reach, _columns(dabs.step_x, dabs.step_y), weight)

    def __len__(self) -> int:
        return len(self.at)

    def rows(self, keep: np.ndarray) -> _EventDabs:
        """The dabs that ``keep`` (bool ``[K]``) marks."""
        return _EventDabs(self.at[keep], self.reach[keep], self.step[keep], self.weight[keep])


def _columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``np.stack((x, y), axis=1)`` in a third of the time on a few."""
    out = np.empty((len(x), 2))
    out[:, 0], out[:, 1] = x, y
    return out


def _block_dabs(state: StrokeState, strokes: Sequence[BlockStroke], dabs: _EventDabs):
    """``dabs`` on each of ``strokes``' blocks (one family: the same bands, frame grids that differ
    by an offset): per block, those that cover some of its cells, as a :class:`_BlockDabs`
    (decided on the host). What depends on the bands alone is computed once for the family, what
    depends on the frames for all its blocks at once."""
    at, reach, weight = dabs.at, dabs.reach, dabs.weight
    axes = strokes[0].axes
    grids = [state.document.blocks[stroke.index] for stroke in strokes]
    if axes.identity:  # the stroke's plane is this block's cells (a family of one)
        (stroke,), (block,) = strokes, grids
        boxes, keep = plan_compiled.dab_boxes(at, reach, n_bins=block.n_bins,
                                              n_frames=block.n_frames)  # fmt: skip
        radius = np.empty_like(at)
        radius[:] = state.plane.radius
        fields = (boxes, at, reach, weight, radius, dabs.step, at, None)
        return [_keep(state, stroke, keep, *fields)]
    # along frequency: the same for every block of the family
    bin0 = np.searchsorted(axes.y, at[:, 1] - reach[:, 1], side="right")
    bin1 = np.searchsorted(axes.y, at[:, 1] + reach[:, 1], side="left")
    nearest_band = np.searchsorted(axes.y, at[:, 1])
    bands = np.clip(nearest_band[:, None] + np.arange(-2, 2), bin0[:, None], bin1[:, None] - 1)
    v = (axes.y[bands.clip(0, max(0, len(axes.y) - 1))] - at[:, 1:]) / reach[:, 1:]
    v_min = (v * v).min(axis=1)
    per_y = axes.cells_per_unit(at[:, 1])[1]
    centre_y = axes.cell_of(at[:, 0], at[:, 1])[1]
    # along time: each block's own frames ([P, K]: one row per block)
    x_offset = np.array([[stroke.axes.x_offset] for stroke in strokes])
    x_scale = np.array([[stroke.axes.x_scale] for stroke in strokes])
    n_frames = np.array([[block.n_frames] for block in grids])
    low = np.clip(np.floor((at[:, 0] - reach[:, 0] - x_offset) / x_scale) + 1, 0, FAR)
    high = np.clip(np.ceil((at[:, 0] + reach[:, 0] - x_offset) / x_scale), -FAR, FAR)
    frame0, frame1 = low.astype(np.int64), np.minimum(high.astype(np.int64), n_frames)
    # the box's cell nearest the centre along each axis (the distance is monotonic in the index)
    nearest_frame = np.floor((at[:, 0] - x_offset) / x_scale).clip(-FAR, FAR)
    frames = np.clip(
        nearest_frame[..., None] + np.arange(-1, 3), frame0[..., None], frame1[..., None] - 1
    )
    u = (x_offset[..., None] + x_scale[..., None] * frames - at[:, :1]) / reach[:, :1]
    keep = (bin0 < bin1) & (frame0 < frame1) & ((u * u).min(axis=-1) + v_min < 1.0)
    per_x = 1.0 / x_scale  # [P, 1]
    offsets = None
    if state.kind.reads_source:
        params = state.params
        if state.plane.physical:
            offset = (params.offset_seconds, params.offset_pitch)
        else:
            offset = (params.offset_frames, params.offset_bins)
        offsets = np.stack(
            (
                np.broadcast_to(np.round(float(offset[0]) * per_x), frame0.shape),
                np.broadcast_to(np.round(float(offset[1]) * per_y), frame0.shape),
            ),
            axis=-1,
        ).astype(np.int64)  # [P, K, 2]
        keep &= offsets.any(axis=-1)  # else the source is the destination in this block's cells
    count = len(strokes)
    boxes = np.empty((count, len(at), 4), dtype=np.int64)
    boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3] = bin0, bin1, frame0, frame1
    per = np.empty((count, len(at), 2))
    per[..., 0], per[..., 1] = per_x, per_y
    centre = np.empty((count, len(at), 2))
    centre[..., 0], centre[..., 1] = (at[:, 0] - x_offset) / x_scale, centre_y
    radius, step = np.asarray(state.plane.radius, dtype=np.float64) * per, dabs.step * per
    return [
        _keep(
            state,
            stroke,
            keep[row],
            boxes[row],
            at,
            reach,
            weight,
            radius[row],
            step[row],
            centre[row],
            None if offsets is None else offsets[row],
        )
        for row, stroke in enumerate(strokes)
    ]


def _keep(state, stroke, keep, *fields) -> _BlockDabs:
    """The :class:`_BlockDabs` of the rows of ``fields`` that ``keep`` marks."""
    every = keep.all()
    kept = [
        None if field is None else np.ascontiguousarray(field if every else field[keep])
        for field in fields
    ]
    return _BlockDabs(*kept, state.channels, stroke.index)


FUSE_SLACK = 2.0
"""Dabs join one box while it holds at most this many times the cells of their own boxes."""
FUSE_CELLS = 1 << 22
"""And while dabs times the joint box's cells stay within this many values: the host's map of which
dab last holds each cell (a brush that reads each cell's dab centre, :func:`_masks`) is that big."""
FUSE_BOX = 1 << 16
"""And while the joint box holds at most this many cells, or one full-size dab's box where that is
more: the memory a group takes stays what :func:`region_refusal` checked a dab for, or a few MB."""


def apply_dabs(
    state: StrokeState,
    dabs: Dabs,
    *,
    fuse: bool = True,
    pair: bool = True,
    done: set | None = None,
) -> Region | Regions:
    """Apply the dabs of one input event; the boxes they wrote.

    Neighbouring dabs are applied together, in groups whose joint box stays within
    :data:`FUSE_SLACK` of the cells the dabs cover (one record, one read, one blend, one write per
    group; see the module's docstring); ``fuse=False`` makes every dab a group of its own. The
    result equals applying the dabs one by one: a stamping brush blends the stroke's starting
    values towards the kernel's result by the largest weight any dab gave a cell, and each cell
    takes the kernel's result of the last dab whose box holds it; warp's dabs each move what the
    previous one left, in the group's region in memory.

    A block family's two blocks (the NSGT's parity pair, :class:`BlockFamily`) whose dabs cover
    the same cells, ``shift`` frames apart (all but the ends of the file), are painted together by
    a stamping brush: each group's masks once, the two regions stacked along the channels, one
    kernel call for both where the kernel does not read where its region lies in time
    (``BrushKind.reads_frames``), one blend. ``pair=False`` paints each block alone (the reference
    this is tested against). Families no dab comes within a radius of are skipped at once.

    ``done`` (when given) collects the groups applied, and groups already in it are skipped: a
    repeat after the device ran out of memory part way does not smudge twice.
    """
    changed: Region | Regions = EMPTY
    event = _EventDabs.of(state, dabs)
    families = state.families
    if len(families) > 1:  # the dabs within a radius of each family's bands
        low, high = np.array([family.y_range for family in families]).T
        y, reach = event.at[:, 1], event.reach[:, 1]
        near = (y + reach > low[:, None]) & (y - reach < high[:, None])  # [families, dabs]
    else:  # (every dab: one family holds every band)
        near = (None,)
    for family, rows in zip(families, near, strict=True):
        if rows is not None and not rows.any():
            continue
        found = _block_dabs(
            state, family.strokes, event if rows is None or rows.all() else event.rows(rows)
        )
        members = list(zip(family.strokes, found, strict=True))
        if pair and not state.kind.drags and _paired(state, family, found):
            units = [members]
        else:
            units = [[member] for member in members]
        for unit in units:
            stroke, block_dabs = unit[0]
            limit = max(FUSE_BOX, _dab_cells(state, stroke))
            if fuse:
                bounds = _groups(
                    block_dabs,
                    limit,
                    by_radius=state.kind.reads_radius,
                    owners=not state.kind.local,
                )
            else:
                bounds = [(index, index + 1) for index in range(len(block_dabs))]
            for number, (start, stop) in enumerate(bounds):
                parts = [(member, its.part(start, stop)) for member, its in unit]
                keys = {(member.index, number) for member, _ in unit}
                if done is not None and keys <= done:
                    for _, group in parts:
                        changed = changed.union(group.joint_box())
                    continue
                if state.kind.drags:
                    changed = changed.union(_apply_dragging(state, *parts[0], planned=fuse))
                else:
                    changed = changed.union(_apply_stamping(state, parts))
                if done is not None:
                    done.update(keys)
    return changed


def _paired(state: StrokeState, family: BlockFamily, found: list[_BlockDabs]) -> bool:
    """Whether a family's two blocks see the same dabs on the same cells, ``shift`` frames apart,
    with the same grouping (so that they can be painted together)."""
    if len(found) != 2:
        return False
    first, second = found
    if len(first) != len(second):
        return False
    if first.at is not second.at and not np.array_equal(first.at, second.at):
        return False
    shift = np.array([0, 0, family.shift, family.shift])
    if not np.array_equal(first.boxes - shift, second.boxes):
        return False
    if first.offsets is not None and not np.array_equal(first.offsets, second.offsets):
        return False
    limits = []
    for stroke in family.strokes:
        grid = state.document.blocks[stroke.index]
        limits.append(largest_region(stroke.radii, (0, 0), grid.n_bins, grid.n_frames))
    return limits[0] == limits[1]


def _groups(
    dabs: _BlockDabs, limit: int = FUSE_BOX, *, by_radius: bool = False, owners: bool = True
) -> list[tuple[int, int]]:
    """``(start, stop)`` of runs of consecutive dabs with the same parameters (and radii, when
    ``by_radius``) whose joint box stays compact, of at most ``limit`` cells.

    Greedy, as adding the dabs one by one would be: a group takes the next dab while the joint
    box with it holds at most :data:`FUSE_SLACK` times their cells and at most ``limit`` cells,
    and its cells times their count stay within :data:`FUSE_CELLS`, in one compiled loop
    (:mod:`.plan_compiled`). Without ``owners`` (a local brush: no map of which dab last holds each
    cell is made), it is the tallest dab's height times the widest one's width times their count
    (the masks' size) that stays within :data:`FUSE_CELLS`.
    """
    n_dabs = len(dabs)
    if n_dabs <= 1:  # (a wide brush's event: one dab or none, a quarter of its cost)
        return [(0, n_dabs)] if n_dabs else []
    return plan_compiled.group_bounds(
        dabs.boxes, limit, slack=FUSE_SLACK, most_cells=FUSE_CELLS, owners=owners,
        offsets=dabs.offsets, radii=dabs.radius if by_radius else None,
    )  # fmt: skip


@dataclass(frozen=True)
class _Masks:
    """The group's dabs, each on its own box, built in one batched operation, and where those boxes
    lie in the joint box ``[B, T]``.

    Attributes
    ----------
    each : torch.Tensor [shape=(K, H, W)], float32, or None
        Every dab's weight on its own box, at the top left (``H`` x ``W``: the tallest and widest
        box; 0 past the dab's own); None where the host computed ``weights`` and it was not asked
        for.
    rows, columns : torch.Tensor [shape=(K, H) and (K, W)], float32, or None
        The joint box's row and column of each of those cells (clamped into it past a dab's box);
        None where ``weights`` is given.
    shape : tuple of int
        ``(B, T)``.
    owner : torch.Tensor [shape=(B, T)], bool, or None
        Cells inside some dab's box (only where the brush's result depends on the dab, and the
        group has several: the others keep what they hold).
    centre_bins : torch.Tensor [shape=(B, T)], float64, or None
        The centre bin (block cells) of the last dab whose box holds each cell (likewise; not for
        a whole-box kernel, which is given its dab's).
    weights : torch.Tensor [shape=(B, T)], float32, or None
        :meth:`largest`, where the host computed it (:mod:`.mask_compiled`).
    blend : list of torch.Tensor [shape=(B, T)], float32, or None
        Where the stroke's coverage is kept on the host: each block's blend weight (its coverage
        of the box once raised to :meth:`largest`), computed there too.
    """

    each: torch.Tensor | None
    rows: torch.Tensor | None
    columns: torch.Tensor | None
    shape: tuple[int, int]
    owner: torch.Tensor | None
    centre_bins: torch.Tensor | None
    weights: torch.Tensor | None = None
    blend: list[torch.Tensor] | None = None
    regions: _DabRegions | None = None
    """Where a whole-box kernel's dabs lie (where ``_masks`` was given ``planes``)."""
    holders: tuple[torch.Tensor, torch.Tensor | None] | None = None
    """Where ``_masks`` was given ``sizes``: :func:`_holders`' ``[K, 3]`` (each dab's box's first
    row and column in the joint box, and its number) and the number of the dab whose box holds
    each cell last ``[B, T]`` (int32, -1 where none; None for one dab, which holds its box)."""

    def largest(self) -> torch.Tensor:
        """The largest weight any dab gives each cell of the joint box ``[B, T]`` (0 outside every
        dab's box), scattered there by index (a stamping brush's blend; warp's dabs use their own)."""
        if self.weights is not None:
            return self.weights
        n_dabs, height, width = self.each.shape
        if n_dabs == 1:
            return self.each[0]
        n_bins, n_frames = self.shape
        cells = (
            self.rows.view(n_dabs, height, 1).long() * n_frames
            + self.columns.view(n_dabs, 1, width).long()
        )
        return (
            torch.zeros(n_bins * n_frames, device=self.each.device)
            .scatter_reduce_(0, cells.flatten(), self.each.flatten(), "amax")
            .view(n_bins, n_frames)
        )

    def on_device(self, device: torch.device) -> _Masks:
        """These masks as torch's operations on ``device`` take them: those staged for kernels
        (``_masks(..., staged=True)``) copied there."""
        holders = self.holders and tuple(staging.on_device(part, device) for part in self.holders)
        return dataclasses.replace(
            self, owner=staging.on_device(self.owner, device),
            centre_bins=staging.on_device(self.centre_bins, device),
            blend=self.blend and [staging.on_device(part, device) for part in self.blend],
            holders=holders,
        )  # fmt: skip

    def own(self, index: int, box: Region) -> torch.Tensor | None:
        """Dab ``index``'s weight on its own ``box`` (None where not asked for: a stamping
        brush's kernel, which the blend weighs, does not read it)."""
        if self.each is None:
            return None
        bins, frames = box.shape
        return self.each[index, :bins, :frames]


def _masks(
    state: StrokeState,
    stroke: BlockStroke,
    group: _BlockDabs,
    box: Region,
    *,
    each: bool = True,
    largest: bool = True,
    on_host: bool | None = None,
    coverage: list[tuple[CoveragePlane, Region]] = (),
    planes: int = 0,
    sizes: list[tuple[list[int], tuple[int, int]]] | None = None,
    staged: bool = False,
) -> _Masks:
    """Every dab's mask on its own box, from distances computed on the host and uploaded at once
    (the work grows with the dabs' cells, not with the dabs times the joint box: a move across a
    long file seen whole holds hundreds), and for a brush that reads each cell's dab centre, which
    dab last holds each cell of ``box`` (that map is dabs times the joint box, on the host: at most
    :data:`FUSE_CELLS` values).

    Where the brush's dabs are small (:func:`_weights_on_host`, or as ``on_host`` says), the
    largest weight per cell is computed on the host in one compiled call and uploaded with the
    dabs' own masks (those only where ``each`` asks for them, the largest weight only where
    ``largest`` does): one copy instead of some twenty operations. So are the blend weights of
    the boxes of ``coverage`` (a stroke's coverage kept on the host, :class:`CoveragePlane`),
    which the stroke keeps raised.

    ``planes``: the planes of the values a whole-box kernel takes (``[planes, Bm, Tm]``), for
    which :class:`_DabRegions` is made and uploaded with the rest (0: none). ``sizes``
    (:func:`_sizes`' of the group): instead, where each dab lies and which dab last holds each
    cell, for a kernel that blends each dab's result into the cells it holds itself
    (:attr:`_Masks.holders`).

    ``staged``: what the host computes is read by the group's Triton kernels where it lies
    (:func:`.kernels.staging.for_kernels`); torch's operations take it after
    :meth:`_Masks.on_device`."""
    device = state.document.device
    n_bins, n_frames = box.shape
    n_dabs = len(group)
    centres = _centres(state, group)
    maps = _maps(centres, sizes)
    host_weights = _weights_on_host(state, stroke, group) if on_host is None else on_host
    if host_weights:  # distances, owners and weights in one compiled call
        axes = stroke.axes
        weights, own, found = mask_compiled.group_weights(
            group.boxes, group.at, group.reach, (box.bin0, box.frame0), box.shape,
            (axes.x_offset, axes.x_scale, axes.y), group.weight,
            hardness=state.settings.hardness, each=each, centres=centres,
            holders=maps == coverage_fused.HOLDERS,
        )  # fmt: skip
    else:
        u, v, columns, rows, cells = _host_distances(stroke, group, box)
        found = None
        if maps == coverage_fused.HOLDERS:
            found = plan_compiled.holders(cells.spans, box.shape)
        elif maps == coverage_fused.OWNERS:
            found = _owners(group, cells.spans, box.shape)
    owners = []
    if maps == coverage_fused.HOLDERS:  # (the kernel writes the cells each dab holds)
        owners = [found]
    elif maps == coverage_fused.OWNERS:
        centre_bins, owned, last = found
        if planes:  # (a whole-box kernel is given its dab's centre)
            by_size, corners, where = _dab_regions(group, box, planes, last, owned)
            owners = [owned, corners, where]
        else:
            owners = [owned, centre_bins]
    if sizes is not None:
        owners.append(_holders(group, box, sizes))
    if host_weights:
        blends = [plane.raise_to(weights, member_box) for plane, member_box in coverage]
        host = [weights] if largest else []
        host += ([] if own is None else [own]) + blends
        parts = [*host, *owners]  # (none where a group of one dab asks for no weight)
        rest = (
            (staging.for_kernels if staged else to_device_together)(parts, device) if parts else []
        )
        weights = rest.pop(0) if largest else None
        placed = (rest.pop(0) if own is not None else None, None, None, (n_bins, n_frames))
        blend = rest[: len(blends)] if blends else None
    else:
        float32 = [part.astype(np.float32) for part in (u, v, columns, rows, group.weight)]
        u_d, v_d, columns_d, rows_d, weight_d, *rest = to_device_together(
            [*float32, *owners], device
        )
        mask = mask_from_distances(
            u_d, v_d, hardness=state.settings.hardness, weight=weight_d.view(n_dabs, 1, 1)
        )
        weights, placed = None, (mask, rows_d, columns_d, (n_bins, n_frames))
        blend = None
    if not owners:
        return _Masks(*placed, None, None, weights, blend)
    uploaded = rest[len(rest) - len(owners) :]
    if sizes is not None:  # the map of holders (None for one dab), the dabs
        holders = (uploaded[-1], uploaded[0] if len(uploaded) > 1 else None)
        return _Masks(*placed, None, None, weights, blend, holders=holders)
    owned, *more = uploaded
    if planes:
        return _Masks(*placed, owned, None, weights, blend, _DabRegions(by_size, *more))
    return _Masks(*placed, owned, more[0], weights, blend)


def _centres(state: StrokeState, group: _BlockDabs) -> np.ndarray | None:
    """The dabs' centre bins, where the group's kernel reads which dab last holds each cell: not
    where one dab owns its whole box, nor where the brush's result does not depend on the dab
    (None)."""
    return None if state.kind.local or len(group) == 1 else group.centre[:, 1]


def _maps(centres: np.ndarray | None, sizes) -> int:
    """Which map of the joint box a group's kernel reads (:data:`.kernels.coverage_fused.
    NO_MAPS`, ``HOLDERS`` or ``OWNERS``): none where it reads no dab's centre (``centres``,
    :func:`_centres`' of the group, None); which dab last holds each cell where it blends each
    dab's result into the cells that dab holds (``sizes``, :func:`_sizes`' of the group, given);
    else the centre of that dab."""
    if centres is None:
        return coverage_fused.NO_MAPS
    return coverage_fused.HOLDERS if sizes is not None else coverage_fused.OWNERS


def _holders(group: _BlockDabs, box: Region, sizes) -> np.ndarray:
    """``[K, 3]`` int32: each dab's box's first row and column in the joint ``box`` and its
    number, the dabs in the order of ``sizes``."""
    # (Python's numbers: a group holds a few dabs, each a few operations of numpy's)
    boxes = group.boxes.tolist()
    order = range(len(boxes)) if len(sizes) == 1 else [i for indices, _ in sizes for i in indices]
    rows = [(boxes[i][0] - box.bin0, boxes[i][2] - box.frame0, i) for i in order]
    return np.array(rows, dtype=np.int32).reshape(-1, 3)


def _sizes(group: _BlockDabs) -> list[tuple[list[int], tuple[int, int]]]:
    """The dabs whose boxes are of one shape ``(b, f)``, in stamping order; the lists in the order
    of their first dab."""
    by_shape: dict[tuple[int, int], list[int]] = {}
    for index, (bin0, bin1, frame0, frame1) in enumerate(group.boxes.tolist()):
        by_shape.setdefault((bin1 - bin0, frame1 - frame0), []).append(index)
    return [(indices, shape) for shape, indices in by_shape.items()]


def _owners(group: _BlockDabs, spans: np.ndarray, shape: tuple[int, int]):
    """Host arrays ``[B, T]`` of the joint box: the centre bin (block cells) of the last dab whose
    box (``spans``, :class:`_Cells`'s) holds each cell, NaN where none does; which cells some
    dab's box holds; and the last such dab's index (0 where none)."""
    return plan_compiled.owners(spans, group.centre[:, 1], shape)


@dataclass(frozen=True)
class _DabRegions:
    """Where a whole-box kernel's dabs lie (:func:`_per_dab`): each dab's region (its box and the
    kernel's margin) in the group's, and where each cell of the joint box finds its result.

    Attributes
    ----------
    sizes : list of (list of int, tuple of int)
        The dabs whose boxes are of one shape ``(b, f)``, in stamping order; the lists in the order
        of their first dab.
    corners : torch.Tensor [shape=(2, K)], int64
        Each dab's region's first row and column in the group's region (its box's in the joint
        box), the dabs in the order of ``sizes``.
    cells : torch.Tensor [shape=(planes, B, T)], int64
        Where each cell of the joint box lies in the kernel's results (each size's ``[k, planes,
        b, f]``, flattened and concatenated in the order of ``sizes``): in the last dab's whose box
        holds it; 0 where none does (those cells keep what they hold, :class:`_Masks`'s
        ``owner``).
    """

    sizes: list[tuple[list[int], tuple[int, int]]]
    corners: torch.Tensor
    cells: torch.Tensor


def _dab_regions(group: _BlockDabs, box: Region, planes: int, last: np.ndarray, owned):
    """:class:`_DabRegions`' ``sizes`` and its ``corners`` and ``cells`` as host arrays, for
    ``group``'s dabs in their joint ``box`` (``last`` and ``owned``: :func:`_owners`'s)."""
    boxes = group.boxes
    heights, widths = boxes[:, 1] - boxes[:, 0], boxes[:, 3] - boxes[:, 2]
    sizes = _sizes(group)
    order = [index for indices, _ in sizes for index in indices]
    first = np.empty(len(group), dtype=np.int64)  # each dab's first result
    start = 0
    for indices, (height, width) in sizes:  # a size's results follow the earlier sizes'
        first[indices] = start + np.arange(len(indices)) * planes * height * width
        start += len(indices) * planes * height * width
    tops, lefts = boxes[:, 0] - box.bin0, boxes[:, 2] - box.frame0
    cells = plan_compiled.region_cells(last, owned, first, tops, lefts, widths, heights * widths,
                                       planes)  # fmt: skip
    return sizes, np.stack((tops[order], lefts[order])), cells


def _raise_coverage(coverage: TileMap, box: Region, largest: torch.Tensor) -> torch.Tensor:
    """The blend weight of ``box`` ``[B, T]`` on the device: the stroke's ``coverage`` there
    raised to ``largest`` where it is lower, kept in the tiles too (a coverage kept on the host
    is raised by :meth:`CoveragePlane.raise_to`)."""
    coverage.ensure(box, lambda tile: torch.zeros(tile.shape, device=largest.device))
    # every cell of the box lies in a tile just ensured: the raise writes them all
    return coverage.raise_to(largest, box, torch.empty_like(largest))


def _coverage_on_host(state: StrokeState, stroke: BlockStroke) -> bool:
    """Whether ``stroke``'s coverage is kept on the host, decided once a stroke: where its
    full-size dab is small enough for its weights to be computed there (:mod:`.mask_compiled`),
    every group's are, and so are the blend weights: on a GPU some ten operations an event fewer
    (the coverage's reads, raise and writes), on a CPU the same arithmetic in fewer calls. On a
    GPU whose Triton kernels run, the coverage of such a stroke of wider dabs is kept on the
    device instead, and each group's launch computes its weights and raises it there
    (:func:`_raised`, :data:`.kernels.coverage_fused.FEWEST_CELLS`), where no block of the
    document has a partner (the NSGT's parity pairs take the host's path)."""
    if stroke.host_coverage is None:
        device = state.document.device
        cells = _dab_cells(state, stroke)
        fits = mask_compiled.fits(cells, 0, device)
        if (fits and all(len(family.strokes) == 1 for family in state.families)
                and coverage_fused.available(device, cells)):  # fmt: skip
            stroke.zeros = coverage_fused.ZeroedTiles(device)
        stroke.host_coverage = fits and stroke.zeros is None
    return stroke.host_coverage


def _raised(state: StrokeState, stroke: BlockStroke, group: _BlockDabs, box: Region, into):
    """Where ``stroke``'s coverage is raised by the group's launch (:func:`_coverage_on_host`):
    the group's :class:`_Masks` as its kernels read them (the maps :func:`_masks` would make for
    the blended ``into``, as :func:`_blended_sizes` found it, or None; none for the kernels that
    scale) and its blend weight ``[B, T]`` on the device, the coverage raised by :mod:`.kernels.
    coverage_fused`; else None (the document has moved to another device, or Triton could not
    compile the launch: the coverage is then raised by torch's operations)."""
    zeros = stroke.zeros
    if zeros is None or zeros.device != state.document.device:
        return None
    sizes = None if into is None else into[0]
    centres = _centres(state, group)
    maps = _maps(centres, sizes)
    axes, peak = stroke.axes, group.weight
    packed = mask_compiled.packed_distances(
        group.boxes, group.at, group.reach, (box.bin0, box.frame0), box.shape,
        (axes.x_offset, axes.x_scale, axes.y), peak,
    )  # fmt: skip
    try:
        blend, found, dabs = coverage_fused.raise_coverage(
            stroke.coverage, zeros, box, packed, hardness=state.settings.hardness,
            nearest=mask_compiled.one_peak(peak), maps=maps,
            centres=centres, dabs=None if sizes is None else _holders(group, box, sizes),
        )  # fmt: skip
    except triton_math.Unavailable:
        stroke.zeros = None
        return None
    if sizes is not None:
        return _Masks(None, None, None, box.shape, None, None, None, [blend],
                      holders=(dabs, found)), [blend]  # fmt: skip
    owned, centre_bins = (None, None) if found is None else found
    return _Masks(None, None, None, box.shape, owned, centre_bins, None, [blend]), [blend]


def _dab_cells(state: StrokeState, stroke: BlockStroke) -> int:
    """The cells of a full-size dab's box in ``stroke``'s block (:func:`largest_region`, without
    a margin), computed once a stroke: every event's grouping and every group's choice of where
    its weights are computed read it."""
    if stroke.dab_cells is None:
        grid = state.document.blocks[stroke.index]
        bins, frames = largest_region(stroke.radii, (0, 0), grid.n_bins, grid.n_frames)
        stroke.dab_cells = bins * frames
    return stroke.dab_cells


def _weights_on_host(state: StrokeState, stroke: BlockStroke, group: _BlockDabs) -> bool:
    """Whether ``group`` has its weights computed on the host (:mod:`.mask_compiled`): where the
    brush's full-size dab is small in ``stroke``'s block (and on a GPU the group is too)."""
    boxes = group.boxes
    tallest, widest = (boxes[:, 1] - boxes[:, 0]).max(), (boxes[:, 3] - boxes[:, 2]).max()
    cells = len(group) * int(tallest) * int(widest)
    return mask_compiled.fits(_dab_cells(state, stroke), cells, state.document.device)


@dataclass(frozen=True)
class _Cells:
    """Where a group's dabs lie in its joint box (host arrays).

    Attributes
    ----------
    spans : np.ndarray [shape=(K, 4)], int64
        Each dab's box in the joint box's cells (frame0, frame1, bin0, bin1).
    columns, rows : np.ndarray [shape=(K, W) and (K, H)], int64
        The joint box's column and row of each cell of every dab's block of the tallest and widest
        box's size: at its box's top left, clamped into the joint box past it; or, as ``windows``,
        placed so that it lies in the joint box (each cell once).
    in_columns, in_rows : np.ndarray [shape=(K, W) and (K, H)], bool
        Those inside the dab's box.
    """

    spans: np.ndarray
    columns: np.ndarray
    rows: np.ndarray
    in_columns: np.ndarray
    in_rows: np.ndarray


def _distances(
    stroke: BlockStroke,
    group: _BlockDabs,
    box: Region,
    device: torch.device,
    *,
    windows: bool = False,
):
    """:func:`_host_distances` uploaded at once, float32 on ``device`` (the joint box holds under
    2**24 cells: its columns and rows are exact), with the peak weights ``[K]`` after ``rows``,
    then the host's :class:`_Cells`."""
    u, v, columns, rows, cells = _host_distances(stroke, group, box, windows=windows)
    return (*to_device_together([u, v, columns, rows, group.weight], device, np.float32), cells)


def _host_distances(stroke: BlockStroke, group: _BlockDabs, box: Region, *, windows: bool = False):
    """Every dab's distances from its centre, in radii, along the frames and bands of its own
    box, on the host: ``u`` ``[K, W]``, ``v`` ``[K, H]`` (2 past the dab's box, where its weight
    is exactly 0), their ``columns`` ``[K, W]`` and ``rows`` ``[K, H]`` in the joint ``box``; and
    the :class:`_Cells` (``windows``: see there)."""
    axes = stroke.axes
    spans, columns, rows, in_columns, in_rows, u, v = plan_compiled.cells_and_distances(
        group.boxes, group.at, group.reach, (box.bin0, box.frame0), box.shape, axes.x_offset,
        axes.x_scale, axes.y, windows=windows,
    )  # fmt: skip
    return u, v, columns, rows, _Cells(spans, columns, rows, in_columns, in_rows)


def _nearest_weight(
    state: StrokeState, stroke: BlockStroke, group: _BlockDabs, box: Region
) -> torch.Tensor | None:
    """What ``_masks(...).largest()`` gives (the largest weight any dab gives each cell of
    ``box`` ``[B, T]``), for a group whose dabs share one peak weight; None when they do not.

    A dab's weight never rises with its distance ``r`` (:func:`~.mask.mask_from_radius`), so the
    largest weight is the one at the nearest dab's distance: the dabs' ``r**2`` are reduced to
    their minimum per cell of the joint box, by index, and the weight is computed once per cell
    there instead of once per cell of every dab's box (a stroke across a long file seen whole
    covers each cell with several dabs, along a path reaching hundreds of frames).
    """
    weights = group.weight
    if not (weights == weights[0]).all():
        return None
    n_bins, n_frames = box.shape
    u, v, columns, rows, weight, _ = _distances(stroke, group, box, state.document.device)
    n_dabs, width = u.shape
    height = v.shape[1]
    v, u = v.view(n_dabs, height, 1), u.view(n_dabs, 1, width)
    squared = v * v + u * u  # (the same bits as ``** 2``, in fewer operations)
    if n_dabs == 1:  # its box is the joint box, and holds each cell once (under 2 radii**2)
        nearest = squared
    else:
        cells = (
            rows.view(n_dabs, height, 1).long() * n_frames + columns.view(n_dabs, 1, width).long()
        )
        nearest = torch.full((n_bins * n_frames,), 4.0, device=u.device).scatter_reduce_(
            0, cells.flatten(), squared.flatten(), "amin"
        )  # 4: 2 radii, weight 0, in cells no dab's box holds
    return mask_from_radius(
        torch.sqrt(nearest).view(n_bins, n_frames),
        hardness=state.settings.hardness,
        weight=weight[0],
    )


def _grown(box: Region, margin: tuple[int, int]) -> Region:
    """``box`` with ``margin`` (bins, frames) more on each side (not clipped)."""
    return Region(
        box.bin0 - margin[0],
        box.bin1 + margin[0],
        box.frame0 - margin[1],
        box.frame1 + margin[1],
        box.channels,
        box.block,
    )


def _within(inner: Region, outer: Region) -> tuple[slice, slice]:
    """(bins, frames) slices of ``inner`` inside ``outer``'s arrays."""
    return (
        slice(inner.bin0 - outer.bin0, inner.bin1 - outer.bin0),
        slice(inner.frame0 - outer.frame0, inner.frame1 - outer.frame0),
    )


def _context(
    state: StrokeState,
    stroke: BlockStroke,
    region: Region,
    box: Region,
    bins: torch.Tensor | None,
    frames: torch.Tensor | None,
    dabs: _BlockDabs,
    index: int,
    **extra,
) -> DabContext:
    """The kernel's context for ``box`` in ``region`` (whose bin and frame indices are given, or
    None for a brush that does not read them), for dab ``index`` of ``dabs``; ``extra`` fields of
    :class:`DabContext` override the dab's own."""
    block = state.document.blocks[stroke.index]
    fields = dict(
        inner=_within(box, region),
        bin_hz=None if bins is None else _bins_hz(stroke, region, bins, block.n_bins),
        frames=frames,
        hop=block.hop,
        sample_rate=state.document.sample_rate,
        radius=dabs.pair("radius", index),
        hardness=state.settings.hardness,
        step=dabs.pair("step", index),
        bins=bins,
        centre=dabs.pair("centre", index),
        band_step_hz=stroke.band_step_hz,
        full_scale=state.full_scale,
        frame_weight=(
            state.document.transform.frame_weight(stroke.index, frames)
            if state.kind.reads_frames
            else None
        ),
    )
    fields.update(extra)
    return DabContext(**fields)


def _reflects_inside(region: Region, inside: Region, block) -> bool:
    """Whether each cell of ``region`` past the grid of ``block`` has its reflection (as a
    kernel's ``reflected`` reflects, once) in the region's part ``inside`` the grid, where the
    stroke keeps its starting values: not where the region lies farther past the grid than that
    part is deep (a wide dab on a grid of a few bins), which a copy reflects as often as needed."""
    return (
        -region.bin0 <= inside.bin1
        and region.bin1 - block.n_bins <= block.n_bins - inside.bin0
        and -region.frame0 <= inside.frame1
        and region.frame1 - block.n_frames <= block.n_frames - inside.frame0
    )


def _apply_stamping(
    state: StrokeState, members: list[tuple[BlockStroke, _BlockDabs]]
) -> Region | Regions:
    """A stamping brush's group: the kernel on the stroke's starting values, blended by coverage.

    ``members`` is the group on one block, or on a family's two blocks (the same dabs on the same
    cells ``shift`` frames apart, :func:`_paired`): their regions are read and stacked along the
    channels (``[2, P C, Bm, Tm]``), the masks are the first block's (the second's cells lie at the
    same places in the plane), the kernel runs once on the stack unless it reads where its region
    lies in time, and one blend serves both, each block keeping its own coverage.
    """
    kind, document = state.kind, state.document
    stroke, group = members[0]
    boxes = [dabs.joint_box() for _, dabs in members]
    fresh = [state.step.record(box) for box in boxes]
    box, region = boxes[0], _grown(boxes[0], stroke.margin)
    mask, masks = None, None
    on_host = _coverage_on_host(state, stroke)
    into = _blended_sizes(state, members, box, region)
    # the planes of the kernel's values: the blocks' channels, stacked where it takes both
    planes = len(box.channels) * (1 if kind.reads_frames else len(members))
    # weights computed on the host for kernels that blend by them themselves stay there
    staged = on_host and (
        into is not None or (kind.scale is not None and triton_math.wanted(document.device))
    )
    raised = _raised(state, stroke, group, box, into)
    if raised is not None:
        masks, weights = raised
    else:
        if kind.local and not kind.whole_box and not on_host:  # only the largest weight is needed
            mask = _nearest_weight(state, stroke, group, box)
        if mask is None:
            coverage = [(member.plane, member_box) for (member, _), member_box in
                        zip(members, boxes, strict=True)] if on_host else []  # fmt: skip
            # weights computed on the host are uploaded only as the blend's: the kernels of
            # stamping brushes do not read the dabs' masks (they are given None)
            masks = _masks(state, stroke, group, box, each=False, largest=not on_host,
                           on_host=on_host, coverage=coverage,
                           planes=planes if kind.whole_box and into is None else 0,
                           sizes=None if into is None else into[0], staged=staged)  # fmt: skip
            mask = None if on_host else masks.largest()
        if on_host:
            weights = masks.blend
        else:
            weights = [_raise_coverage(member.coverage, member_box, mask)
                       for (member, _), member_box in zip(members, boxes, strict=True)]  # fmt: skip
    if _scaled_into(state, group, boxes, weights):
        return box if len(boxes) == 1 else Regions(tuple(boxes))
    block = document.blocks[stroke.index]
    inside = region.clipped(block.n_bins, block.n_frames)
    if (into is not None and kind.blends_into.reads_kept
            and (region == inside or (kind.blends_into.reflects
                                      and _reflects_inside(region, inside, block)))):  # fmt: skip
        # the kernel reads the region's starting values where they lie: no copy of them first
        # (those past the grid at their reflections, in its part inside the grid)
        kept = state.step.kept(inside)
        if kept is not None and region != inside:
            moved = kept.moved(region.bin0 - inside.bin0, region.frame0 - inside.frame0)
            kept = moved._replace(shape=(moved.shape[0], *region.shape))
        if kept is not None:
            axes = _axes(region, block, document.device) if kind.reads_frames else (None, None)
            if _blended_into(state, stroke, group, box, region, kept, *axes, masks, weights[0],
                             *into):  # fmt: skip
                return box
    reads = [
        _read(state, member.index, _grown(member_box, member.margin), original=True,
              fresh=member_fresh, axes=kind.reads_frames)
        for (member, _), member_box, member_fresh in zip(members, boxes, fresh, strict=True)
    ]  # fmt: skip
    values = reads[0][0] if len(reads) == 1 else torch.cat([read[0] for read in reads], dim=1)
    if into is not None:
        if _blended_into(state, stroke, group, box, region, values, *reads[0][1:], masks,
                         weights[0], *into):  # fmt: skip
            return box
        if kind.whole_box and raised is None:  # Triton could not compile its kernel: the
            # dabs' regions, one by one
            masks = _masks(state, stroke, group, box, each=False, largest=not on_host,
                           on_host=on_host, planes=planes)  # fmt: skip
    if raised is not None:  # no kernel of the brush's own took the group: torch's path reads
        # the dabs' masks and maps, computed on the host
        masks = _masks(state, stroke, group, box, each=False, largest=False, on_host=True,
                       planes=planes if kind.whole_box else 0)  # fmt: skip
    if staged:  # (no kernel of their own took them: torch's operations read them on the device)
        weights = [staging.on_device(weight, document.device) for weight in weights]
        masks = masks.on_device(document.device)
    if len(members) == 1 or not kind.reads_frames:
        results = [_kernel(state, stroke, group, box, region, values, *reads[0][1:], masks, mask)]
    else:  # each block's region alone: the kernel reads its frames
        results = [
            _kernel(state, member, dabs, member_box, _grown(member_box, member.margin), *read,
                    masks, mask)
            for (member, dabs), member_box, read in zip(members, boxes, reads, strict=True)
        ]  # fmt: skip
    magnitude, phase = (
        results[0] if len(results) == 1 else map(torch.cat, zip(*results, strict=True))
    )
    base = values[(slice(None), slice(None), *_within(box, region))]
    count = len(members)
    if count == 1:
        weight = weights[0]
    else:  # [P, C, B, T], each block's weight over its channels
        base, weight = base.unflatten(1, (count, -1)), torch.stack(weights)[:, None]
        magnitude, phase = magnitude.unflatten(0, (count, -1)), phase.unflatten(0, (count, -1))
    owner = None if masks is None else masks.owner
    if count == 1 and _blend_into(document, box, base, magnitude, phase, weight, owner,
                                  kind.keeps_phase):  # fmt: skip
        return box
    out_magnitude, out_phase = blend(base, magnitude, phase, weight, keeps_phase=kind.keeps_phase)
    if kind.keeps_phase:  # the document holds the stroke's starting phase: nothing to write
        out_phase = None
    if owner is not None:  # cells of the joint box that no dab's box holds keep what they hold now
        current = [read_stacked(document, member_box) for member_box in boxes]
        current = current[0] if count == 1 else torch.stack(current, dim=1)
        out_magnitude = select(owner, out_magnitude, current[0])
        out_phase = None if out_phase is None else select(owner, out_phase, current[1])
    if count == 1:
        document.write(box, out_magnitude, out_phase)
        return box
    for index, member_box in enumerate(boxes):
        document.write(member_box, out_magnitude[index],
                       None if out_phase is None else out_phase[index])  # fmt: skip
    return Regions(tuple(boxes))


def _blended_sizes(state: StrokeState, members, box: Region, region: Region):
    """Where a group's brush computes and blends its result into the document in its kernel's
    own launches (:attr:`~.registry.BrushKind.blends_into`) and takes the group's region (a
    whole-box brush: every size of its dabs' boxes): a whole-box brush's sizes (:func:`_sizes`;
    None for another) and where the joint ``box``'s cells lie in the document
    (:meth:`~spectropaint.transforms.document.Document.cells`); else None (the kernel and the
    blend). One block's group only."""
    into = state.kind.blends_into
    if into is None or len(members) != 1:
        return None
    stroke, group = members[0]
    device, (margin_bins, margin_frames) = state.document.device, stroke.margin
    if state.kind.whole_box:
        sizes = _sizes(group)
        shapes = [((rows + 2 * margin_bins, columns + 2 * margin_frames), (rows, columns))
                  for _, (rows, columns) in sizes]  # fmt: skip
    else:
        sizes, shapes = None, [(region.shape, box.shape)]
    if not all(into.takes(device, *shape) for shape in shapes):
        return None
    destination = state.document.cells(box)
    return None if destination is None else (sizes, destination)


def _blended_into(state, stroke, group, box, region, values, bins, frames, masks, weight, sizes,
                  destination) -> bool:  # fmt: skip
    """The brush's :attr:`~.registry.BrushKind.blends_into` on the group's region ``values``
    ``[2, C, Bm, Tm]`` (of ``box`` and its margin, ``region``; or where the brush
    :attr:`~.kernels.triton_math.KernelInto.reads_kept`, a :class:`~.kernels.originals_fused.
    Kept`; ``bins`` and ``frames`` as :func:`_read` gives them), blending by ``weight`` into ``destination``: once, or for a
    whole-box brush once a size of its dabs' boxes (``sizes``, as :func:`_blended_sizes` found
    them), each writing the cells its dabs hold; whether it ran (not where the kernel does not
    take the group's context, nor where Triton cannot compile: nothing was written)."""
    kind, params = state.kind, group.params(state.params)
    context = _kernel_context(state, stroke, group, box, region, bins, frames, masks, params)
    try:
        if sizes is None:
            owner = None if masks is None else masks.owner
            if not kind.blends_into.apply(values, weight, destination, params, context, owner):
                return False
        else:
            dabs, last = masks.holders
            if last is None:  # one dab holds its whole box: a cell read through strides of 0
                last = triton_math.one_cell(destination[0].device, torch.int32, 0)
            margin_bins, margin_frames, start = *stroke.margin, 0
            for indices, (rows, columns) in sizes:
                inner = (slice(margin_bins, margin_bins + rows),
                         slice(margin_frames, margin_frames + columns))  # fmt: skip
                holders = (dabs[start : start + len(indices)], last)
                own = context.with_inner(inner)
                kind.blends_into.apply(values, weight, destination, params, own, holders)
                start += len(indices)
    except triton_math.Unavailable:
        return False
    state.document.mark_written(box)
    return True


def _scaled_into(state: StrokeState, group: _BlockDabs, boxes: list[Region],
                 weights: list[torch.Tensor]) -> bool:  # fmt: skip
    """A group of a brush that scales magnitudes by one number (gain and erase:
    :attr:`~.registry.BrushKind.scale`; no margin, so each block's region is its box, inside the
    grid) read, scaled, blended and written in one launch a block where the fused kernels run
    (:meth:`~.history.OpenStep.scale_into`); whether it was. (Where one block's launch is refused
    after another's ran, the caller's blend writes that block's cells again, with the same values
    to float rounding: both are computed from the stroke's starting values.)"""
    scale = state.kind.scale
    if scale is None:
        return False
    factor = scale(group.params(state.params))
    return all(
        state.step.scale_into(box, factor, weight)
        for box, weight in zip(boxes, weights, strict=True)
    )


def _blend_into(document, box, base, magnitude, phase, weight, owner, keeps_phase) -> bool:
    """:func:`.blend.blend` of a group on one block written straight into the document's cells of
    ``box`` (only those ``owner`` marks, where given) in one launch, where the fused kernels run on
    the document's device (:func:`.blend_fused.blend_into`); whether it was."""
    if not blend_fused.available(document.device):
        return False
    destination = document.cells(box)
    if destination is None:
        return False
    try:
        blend_fused.blend_into(base, magnitude, phase, weight, destination, owner=owner,
                               keeps_phase=keeps_phase)  # fmt: skip
    except triton_math.Unavailable:  # (Triton cannot compile here: torch's path)
        return False
    document.mark_written(box)
    return True


def _kernel(state, stroke, group, box, region, values, bins, frames, masks, mask):
    """The kernel's result on ``box`` ``[C, B, T]`` (``C``: the rows of ``values`` ``[2, C, Bm,
    Tm]``, the region's starting values), with ``group``'s first dab's context."""
    kind = state.kind
    if kind.whole_box and len(group) > 1:
        return _per_dab(state, stroke, group, box, region, values, bins, frames, masks)
    params = group.params(state.params)
    context = _kernel_context(state, stroke, group, box, region, bins, frames, masks, params)
    return kind.kernel(values[0], values[1], mask, params, context)


def _kernel_context(state, stroke, group, box, region, bins, frames, masks, params) -> DabContext:
    """The kernel's context for ``group``'s joint ``box`` in ``region``: its first dab's, with the
    clone's source and, where the masks give it, each cell's dab centre."""
    source = _source(state, stroke, region, params) if state.kind.reads_source else None
    centre = group.pair("centre", 0)
    if masks is not None and masks.centre_bins is not None:
        centre = (centre[0], masks.centre_bins)
    return _context(
        state, stroke, region, box, bins, frames, group, 0, source=source, centre=centre
    )


def _per_dab(state, stroke, group, box, region, values, bins, frames, masks):
    """The kernel on each dab's own region (its box and the kernel's margin) gathered from the
    group's ``region``, the regions of one size stacked along a leading dimension (one call for
    them); each cell of ``box`` then takes the result of the last dab whose box holds it, gathered
    by index (:class:`_DabRegions`: cells no dab's box holds take any, and keep what they hold,
    :class:`_Masks`' ``owner``)."""
    kind = state.kind
    regions = masks.regions
    # [2, Bm, Tm, C]: each window's channels are then its cells' last dimension but two
    across = values.permute(0, 2, 3, 1)
    corners = regions.corners.unbind(0) if len(regions.sizes) == 1 else None
    results, start = [], 0
    for indices, _ in regions.sizes:
        first = indices[0]
        own_box = group.box(first)
        own = _grown(own_box, stroke.margin)
        windows = across.unfold(1, own.shape[0], 1).unfold(2, own.shape[1], 1)
        rows, columns = corners or regions.corners[:, start : start + len(indices)].unbind(0)
        stacked = windows[:, rows, columns]  # [2, K, C, rows, columns] of each region
        cut_rows, cut_columns = _within(own, region)
        context = _context(state, stroke, own, own_box,
                           None if bins is None else bins[cut_rows],
                           None if frames is None else frames[cut_columns], group, first)  # fmt: skip
        results.append(kind.kernel(stacked[0], stacked[1], masks.own(first, own_box),
                                   group.params(state.params), context))  # fmt: skip
        start += len(indices)
    magnitude = _gathered([result[0] for result in results], regions.cells)
    if kind.keeps_phase:  # a magnitude-only kernel's phase stays as it is
        return magnitude, values[1][(slice(None), *_within(box, region))]
    return magnitude, _gathered([result[1] for result in results], regions.cells)


def _gathered(parts: list[torch.Tensor], cells: torch.Tensor) -> torch.Tensor:
    """The values at ``cells`` (indices, any shape) of ``parts`` flattened and concatenated."""
    flat = parts[0].reshape(-1) if len(parts) == 1 else torch.cat([p.reshape(-1) for p in parts])
    return flat[cells]


def _apply_dragging(
    state: StrokeState, stroke: BlockStroke, group: _BlockDabs, *, planned: bool = True
) -> Region:
    """A dragging brush's group: dab after dab on the current values, in the group's region held in
    memory (each dab reads what the previous one left), written once at the end.

    ``planned`` (where the brush has a ``plan``): what the dabs compute from anything but the
    values is computed for the whole group at once, and each dab then gathers, computes and
    blends on a window of the values held in a few dozen operations. Otherwise (the reference
    that is tested against, ``fuse=False``) each dab runs the brush's kernel on its own region.
    """
    kind, document = state.kind, state.document
    grid = document.blocks[stroke.index]
    box = group.joint_box()
    state.step.record(box)
    region = _grown(box, stroke.margin)
    inside = region.clipped(grid.n_bins, grid.n_frames)
    # a group planned and applied in one call (:func:`_whole_group`), a dab alone too; otherwise
    # a dab alone takes the brush's kernel on its own region, which costs less than a plan
    whole = _whole_group(document.device) if planned and kind.plan is not None else None
    if whole is warp_fused and len(group) == 1 and math.prod(region.shape) > warp_fused.ALONE_CELLS:
        whole = None  # (one program on a wide window is slower than torch's kernel)
    # the values the dabs read and change: the document's own cells where the fused warp changes
    # them in place (no copy read before nor written back after), else a copy
    channels = slice(inside.channels[0], inside.channels[-1] + 1)
    in_place = (whole is warp_fused and warp_fused.in_place()
                and inside.channels == tuple(range(channels.start, channels.stop))
                and grid.magnitude.stride() == grid.phase.stride())  # fmt: skip
    if in_place:
        at = (channels, slice(inside.bin0, inside.bin1), slice(inside.frame0, inside.frame1))
        current = (grid.magnitude[at], grid.phase[at])
    else:
        current = read_stacked(document, inside).contiguous()
    # drift needs the frame before
    before = Region(region.bin0, region.bin1, region.frame0 - 1, region.frame1, region.channels,
                    region.block)  # fmt: skip
    # (the fused warp computes the ramps itself, finding their bands and frames)
    fused = whole is warp_fused and kind.prepare is not None
    original = bins = frames = None
    if in_place and fused and before == before.clipped(grid.n_bins, grid.n_frames):
        # its launches read the starting values where they lie, with no copy of them first
        original = state.step.kept(before)
    if original is None:
        original, bins, frames = _read(state, stroke.index, before, original=True, axes=not fused)
    if fused:
        prepared = warp_fused.Ramps(stroke.band_hz, region, (grid.n_bins, grid.n_frames),
                                    grid.hop, document.sample_rate)  # fmt: skip
    elif kind.prepare is not None:
        prepare = warp_compiled.prepare if whole is warp_compiled else kind.prepare
        prepared = prepare(
            original, _bins_hz(stroke, before, bins, grid.n_bins), frames[1:],
            group.params(state.params),
            hop=grid.hop, sample_rate=document.sample_rate,
        )  # fmt: skip
    else:
        prepared = None
    frames = None if frames is None else frames[1:]
    original = original[..., 1:] if isinstance(original, torch.Tensor) else original.moved(0, 1)
    if whole is not None or (planned and kind.plan is not None and len(group) > 1):
        try:
            _drag_planned(state, stroke, group, box, inside, current, original, prepared, whole)
        except triton_math.Unavailable:
            # the fused warp's first launch did not compile (nothing has run: its first group
            # works on a copy) and Triton's kernels are off: the group again, by torch's path
            return _apply_dragging(state, stroke, group, planned=planned)
    else:
        _drag_each(state, stroke, group, box, inside, current, original, bins, frames,
                   prepared)  # fmt: skip
    if in_place:
        document.mark_written(box)
        return box
    at = (slice(None), *_within(box, inside))
    document.write(box, current[0][at], current[1][at])
    return box


def _drag_each(state, stroke, group, box, inside, current, original, bins, frames, prepared):
    """The group's dabs one after another, each through the brush's kernel on its own region."""
    kind, grid = state.kind, state.document.blocks[stroke.index]
    region = _grown(box, stroke.margin)
    masks = _masks(state, stroke, group, box)
    for index in range(len(group)):
        own_box = group.box(index)
        own = _grown(own_box, stroke.margin)
        rows, columns = _within(own, region)
        values = _reflected(current, inside, own, grid.n_bins, grid.n_frames)
        context = _context(
            state, stroke, own, own_box, bins[rows], frames[columns], group, index,
            original=original[..., rows, columns],
            prepared=None if prepared is None else {
                name: tensor[..., rows, columns] for name, tensor in prepared.items()
            },
        )  # fmt: skip
        mask = masks.own(index, own_box)
        params = group.params(state.params, index)
        magnitude, phase = kind.kernel(values[0], values[1], mask, params, context)
        window = current[(slice(None), slice(None), *_within(own_box, inside))]
        blender = kept(WindowBlend, magnitude.shape, magnitude.device, cells=mask.numel())
        blender(window, magnitude, phase, mask, mask > constant(0.0, mask))


PLAN_CELLS = 1 << 16
"""The most window cells (dabs times the tallest box's cells times the widest's) one plan holds:
its tensors take some 400 bytes a cell, 26 MB at most."""


def _drag_planned(state, stroke, group, box, inside, current, original, prepared, whole):
    """The group's dabs one after another through the brush's ``plan`` (see
    :func:`_apply_dragging`), each on its window of ``current`` (:class:`DragDabs`), in parts of at
    most :data:`PLAN_CELLS` window cells planned one after another (``whole``: the kernel that
    plans and applies a part in one call, :func:`_whole_group`, or None). ``current``: the
    region's values ``[2, C, R, S]``, or (for the fused warp, once it has run) the document's own
    magnitude and phase there, two views changed in place."""
    start, tallest, widest = 0, 0, 0
    for index, (bin0, bin1, frame0, frame1) in enumerate(group.boxes.tolist()):
        tallest, widest = max(tallest, bin1 - bin0), max(widest, frame1 - frame0)
        if index > start and (index + 1 - start) * tallest * widest > PLAN_CELLS:
            _drag_part(state, stroke, group.part(start, index), box, inside, current, original,
                       prepared, whole)  # fmt: skip
            start, tallest, widest = index, bin1 - bin0, frame1 - frame0
    _drag_part(state, stroke, group.part(start, len(group)), box, inside, current, original,
               prepared, whole)  # fmt: skip


def _drag_part(state, stroke, group, box, inside, current, original, prepared, whole):
    """Dabs of a group (in its joint ``box``) through one plan."""
    params = group.params(state.params)
    region_width = original.shape[-1]
    if whole is warp_fused:  # planned and packed in one compiled call
        grid = state.document.blocks[stroke.index]
        packed = drag_compiled.packed_windows(
            group.boxes, group.at, group.reach, group.weight, group.step, box=box,
            inside=inside, axes=stroke.axes, grid=(grid.n_bins, grid.n_frames),
            margin=stroke.margin, hardness=state.settings.hardness, amount=params.amount,
        )  # fmt: skip
        warp_fused.apply(current, packed, original, prepared, params)  # (may raise Unavailable)
        return
    on_host = _weights_on_host(state, stroke, group)  # as :func:`_masks` makes them, for each dab
    windows = _drag_windows(state, stroke, group, box, inside, region_width, on_host)
    if whole is not None:
        whole.apply(current, windows, original, prepared, params)
        return
    drag_planned(state.kind.plan, current, windows, original, prepared, params)


def _drag_windows(state, stroke, group, box, inside, region_width: int, on_host: bool):
    """The :class:`DragWindows` of a group's dabs (in its joint ``box``; ``inside``: its region
    clipped to the grid, where the values held begin, ``region_width`` columns wide), their
    weights computed on the host where ``on_host`` (:func:`_weights_on_host`)."""
    grid = state.document.blocks[stroke.index]
    hardness = state.settings.hardness
    if on_host:
        u, v, columns, rows, cells = _host_distances(stroke, group, box, windows=True)
        _, masks = mask_compiled.weights(
            u, v, columns, rows, group.weight, hardness=hardness, shape=None, each=True
        )  # (uploaded with the windows' maps)
    else:
        device = state.document.device
        u, v, _, _, weight, cells = _distances(stroke, group, box, device, windows=True)
        masks = mask_from_distances(u, v, hardness=hardness, weight=weight.view(len(group), 1, 1))
    spans = cells.spans
    row_maps, column_maps = plan_compiled.own_regions(
        spans, (box.bin0, box.frame0), stroke.margin, (grid.n_bins, grid.n_frames),
        (inside.bin0, inside.frame0),
    )  # fmt: skip
    corners, dest_rows, dest_columns, high, region_rows, region_columns = (
        plan_compiled.drag_windows(spans, cells.rows, cells.columns,
                                   (box.bin0 - inside.bin0, box.frame0 - inside.frame0),
                                   stroke.margin)
    )  # fmt: skip
    return DragWindows(
        masks=masks,
        corners=corners,
        step=group.step,
        dest_columns=dest_columns,
        dest_rows=dest_rows,
        high=high,
        column_maps=column_maps,
        row_maps=row_maps,
        region_rows=region_rows,
        region_columns=region_columns,
        in_rows=cells.in_rows,
        in_columns=cells.in_columns,
        region_width=region_width,
    )


def _whole_group(device: torch.device):
    """The kernel that plans and applies a warp group in one call on ``device`` (compiled by
    Numba on the CPU, :mod:`.kernels.warp_compiled`; a Triton launch on CUDA,
    :mod:`.kernels.warp_fused`), or None: torch's plan, dab after dab."""
    for kernel in (warp_compiled, warp_fused):
        if kernel.available(device):
            return kernel
    return None


@dataclass(frozen=True)
class DragWindows:
    """A planned group's dabs on their windows, as the host computed them (see
    :class:`~.kernels.context.DragDabs`, which is made from this on the device): ``masks`` ``[K,
    H, W]`` (a host array where the host computed them, else a tensor on the device);
    ``corners`` ``[2, K]``: each window's first row and column in the values held; ``step``
    ``[K, 2]``; :class:`~.kernels.context.DragDabs`'s ``dest_columns``, ``dest_rows``, ``high``,
    ``column_maps`` (its ``columns``) and ``row_maps`` (its ``rows``); and along each axis of
    the windows, each cell's row ``[K, H]`` and column ``[K, W]`` in the group's region
    (``region_width`` columns wide) and whether it lies in its dab's box (see :meth:`cells`)."""

    masks: np.ndarray | torch.Tensor
    corners: np.ndarray
    step: np.ndarray
    dest_columns: np.ndarray
    dest_rows: np.ndarray
    high: np.ndarray
    column_maps: np.ndarray
    row_maps: np.ndarray
    region_rows: np.ndarray
    region_columns: np.ndarray
    in_rows: np.ndarray
    in_columns: np.ndarray
    region_width: int

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Each window cell's index in the group's region ``[K, H, W]`` (int64), and whether it
        lies outside its dab's box (bool)."""
        rows, columns = self.region_rows[:, :, None], self.region_columns[:, None, :]
        outside = ~(self.in_rows[:, :, None] & self.in_columns[:, None, :])
        return rows * self.region_width + columns, outside


def drag_planned(plan_kind, current, windows: DragWindows, original, prepared, params) -> None:
    """A group's dabs through the brush's ``plan`` (``plan_kind``) on ``current`` ``[2, C, R, S]``,
    in place, dab after dab in torch operations (:func:`drag_windows`)."""
    host_masks = isinstance(windows.masks, np.ndarray)
    window_cells, outside = windows.cells()
    float32 = [np.asarray(part, dtype=np.float32)
               for part in (windows.dest_columns, windows.dest_rows, windows.high)]  # fmt: skip
    int32 = [np.asarray(part, dtype=np.int32)
             for part in (windows.row_maps, windows.column_maps, window_cells)]  # fmt: skip
    dest_columns, dest_rows, high, row_maps, column_maps, window_cells, outside, step, *masks = (
        to_device_together([*float32, *int32, outside, windows.step,
                            *([windows.masks] if host_masks else [])], current.device)
    )  # fmt: skip
    masks = masks[0] if host_masks else windows.masks
    dabs = DragDabs(
        mask=masks,
        outside=outside,
        step=step,
        dest_columns=dest_columns,
        dest_rows=dest_rows,
        high=high,
        columns=column_maps,
        rows=row_maps,
        window_cells=window_cells,
    )
    plan = plan_kind(original, prepared, dabs, params, width=current.shape[-1])
    drag_windows(plan, current, masks, *windows.corners)


def drag_windows(plan, current, masks, first_rows, first_columns) -> None:
    """The dabs of ``plan`` one after another on their windows of ``current`` ``[2, C, R, S]``
    (dab ``k``'s is ``masks[k]``'s size ``[H, W]`` from row ``first_rows[k]`` and column
    ``first_columns[k]``), each blended in place through its mask: torch's path, which
    :mod:`.kernels.warp_fused` and :mod:`.kernels.warp_compiled` plan and compute in one call."""
    n_dabs, height, width = masks.shape
    held = current.view(2 * current.shape[1], -1)
    each, touched = masks.unbind(0), (masks > constant(0.0, masks)).unbind(0)
    blender = kept(WindowBlend, (current.shape[1], height, width), current.device,
                   cells=height * width)  # fmt: skip
    for index in range(n_dabs):
        row, column = int(first_rows[index]), int(first_columns[index])
        window = current[:, :, row : row + height, column : column + width]
        magnitude, phase = plan.dab(index, held, out=blender.phase)
        blender(window, magnitude, phase, each[index], touched[index])


def _reflected(
    values: torch.Tensor, inside: Region, region: Region, n_bins: int, n_frames: int
) -> torch.Tensor:
    """``region``'s values (reflected past the grid) from ``values``, which hold ``inside``: what
    :func:`_read` gives for ``region`` when ``values`` are the document's."""
    clipped = region.clipped(n_bins, n_frames)
    out = values[(slice(None), slice(None), *_within(clipped, inside))]
    if (clipped.bin0, clipped.bin1) != (region.bin0, region.bin1):
        out = _reflect(out, clipped.bin0 - region.bin0, region.bin1 - clipped.bin1, dim=-2)
    if (clipped.frame0, clipped.frame1) != (region.frame0, region.frame1):
        out = _reflect(out, clipped.frame0 - region.frame0, region.frame1 - clipped.frame1, dim=-1)
    return out
