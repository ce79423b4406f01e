"""The one function that applies a dab to the document; every brush goes through it.

A dab is an ellipse in the stroke's plane (:mod:`.plane`: frames and bins, or seconds and semitones
or Hz); it is applied to every block it reaches, over that block's own frames and bands. Per block:
the dab's box (clipped, never wrapped) and mask; the box's original values recorded in the stroke's
open history step; the region plus the kernel's margin read (reflected past the grid's edges); the
kernel, given the dab's geometry in the block's cells; a blend through the weight that leaves every
cell of weight 0 bit-identical; the write. The caller grows the dirty boxes from the returned
regions and emits once per block and input event.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import torch

from spectropaint.brushes.history import OpenStep, read_stacked
from spectropaint.brushes.kernels.context import DabContext, Source
from spectropaint.brushes.kernels.select import select
from spectropaint.brushes.mask import dab_box, dab_mask, ellipses_mask, mask_from_distances
from spectropaint.brushes.plane import BlockAxes, StrokePlane, offsets_tensor
from spectropaint.brushes.registry import BrushKind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import Dab
from spectropaint.brushes.tiles import TileMap
from spectropaint.transforms.files.audio_file import format_bytes
from spectropaint.transforms.host_memory import available_memory
from spectropaint.transforms.regions import EMPTY, Region, Regions


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
        Per tile ``[bins, frames]`` float32: the largest weight any dab of the stroke gave each cell
        (stamping brushes only).
    band_hz : torch.Tensor [shape=(n_bins,)], float64
        Centre frequency of every band, on the document's device.
    radii : CellRadii
        The brush's radii in this block's cells (its densest part, for the margin).
    margin : tuple of int
        Cells of context (bins, frames) the kernel reads around each box.
    """

    index: int
    axes: BlockAxes
    coverage: TileMap
    band_hz: torch.Tensor
    radii: CellRadii
    margin: tuple[int, int]


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

    @property
    def channels(self) -> tuple[int, ...]:
        return self.step.channels

    def follow(self, device: torch.device) -> None:
        """Move the stroke's tensors (frequencies, coverage, original tiles) to ``device``.

        Called before each dab with the document's device: the stroke's state is made on the CPU
        and moves there with the first dab, and follows the document to the CPU should its device
        run out of memory (an allocation that fails here is retried on the CPU too).
        """
        if self.blocks[0].band_hz.device == device:
            return
        stores = [block.coverage.tiles for block in self.blocks]
        stores += [tiles.tiles for tiles in self.step.originals.values()]
        for block in self.blocks:
            block.band_hz = block.band_hz.to(device)
        for tiles in stores:
            for key, tensor in tiles.items():
                tiles[key] = tensor.to(device)


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


def blend(
    base: torch.Tensor,
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    weight: torch.Tensor,
    *,
    keeps_phase: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``base`` (``[2, C, B, T]``) moved towards the kernel's result by ``weight`` ``[B, T]``.

    Magnitude-only kernels blend magnitude linearly and keep ``base``'s phase; the others blend the
    complex coefficients (a crossfade, as mixing the two sounds would), in real arithmetic (torch's
    complex ``polar``, ``abs`` and ``angle`` are several times slower on CPUs). Cells of weight 0
    keep ``base``'s values exactly.
    """
    old_magnitude, old_phase = base[0], base[1]
    touched = weight > 0
    if keeps_phase:
        mixed = old_magnitude + (magnitude - old_magnitude) * weight
        return select(touched, mixed, old_magnitude), old_phase
    old_real, old_imag = old_magnitude * torch.cos(old_phase), old_magnitude * torch.sin(old_phase)
    real = old_real + (magnitude * torch.cos(phase) - old_real) * weight
    imag = old_imag + (magnitude * torch.sin(phase) - old_imag) * weight
    return (
        select(touched, torch.sqrt(real * real + imag * imag), old_magnitude),
        select(touched, torch.atan2(imag, real), old_phase),
    )


def _read(
    state: StrokeState, index: int, box: Region, *, original: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Values ``[2, C, Bm, Tm]`` of ``box`` reflected past the grid, with its bin and frame indices.

    ``original`` picks the stroke's starting values instead of the current ones.
    """
    block = state.document.blocks[index]
    device = state.document.device
    bins = torch.arange(box.bin0, box.bin1, device=device)
    frames = torch.arange(box.frame0, box.frame1, device=device)
    inside = box.clipped(block.n_bins, block.n_frames)
    values = state.step.original(inside) if original else read_stacked(state.document, inside)
    if (inside.bin0, inside.bin1) != (box.bin0, box.bin1):
        values = _reflect(values, inside.bin0 - box.bin0, box.bin1 - inside.bin1, dim=-2)
        bins = reflect_index(bins, block.n_bins)
    if (inside.frame0, inside.frame1) != (box.frame0, box.frame1):
        values = _reflect(values, inside.frame0 - box.frame0, box.frame1 - inside.frame1, dim=-1)
        frames = reflect_index(frames, block.n_frames)
    return values, bins, frames


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
    values = torch.zeros((2, len(box.channels), box.shape[0], box.shape[1] + 1), device=device)
    valid = torch.zeros(values.shape[-2:], device=device, dtype=torch.bool)
    if not inside.empty:
        rows = slice(inside.bin0 - wanted.bin0, inside.bin1 - wanted.bin0)
        columns = slice(inside.frame0 - wanted.frame0, inside.frame1 - wanted.frame0)
        values[:, :, rows, columns] = state.step.original(inside)
        valid[rows, columns] = True
        first = inside.frame0 - wanted.frame0  # the column of the first frame inside the grid
        if inside.frame0 == 0 and first >= 1 and values.shape[-1] > first + 1:
            # the frame before lies outside the grid: extrapolate it, so the first frame's phase
            # advance is measured forwards (wherever the box begins: a fused box must agree)
            values[1, ..., first - 1] = 2 * values[1, ..., first] - values[1, ..., first + 1]
    bins = torch.arange(wanted.bin0, wanted.bin1, device=device).clamp(0, block.n_bins - 1)
    return Source(values[0], values[1], valid[:, 1:], stroke.band_hz[bins])


@dataclass(frozen=True)
class _BlockDab:
    """One dab as one block sees it: its box, mask, and geometry in the block's cells."""

    box: Region
    mask: torch.Tensor | None
    radius: tuple[float, float]
    step: tuple[float, float]
    params: Any
    centre: tuple[float, float]
    """The dab's centre in the block's frames and bins (the pen's partial follows it)."""
    ellipse: tuple[float, float, float, float, float] | None = None
    """``(x, y, radius_frames, radius_bins, weight)`` in the block's cells when ``mask`` is left
    to be computed with its group's (:func:`_joined`)."""


def _block_dab(
    state: StrokeState, stroke: BlockStroke, dab: Dab, *, lazy: bool = False
) -> _BlockDab | None:
    """The dab on ``stroke``'s block, or None where it covers none of its cells. ``lazy`` leaves
    the mask of a dab on a block in the stroke's own cells to :func:`_joined`."""
    settings, axes = state.settings, stroke.axes
    block = state.document.blocks[stroke.index]
    size = settings.size_at(dab.pressure)
    radius_x, radius_y = (radius * size for radius in state.plane.radius)
    hardness, weight = settings.hardness, settings.weight_at(dab.pressure)
    device = state.document.device
    params = state.params
    if axes.identity:  # the stroke's plane is this block's cells
        box = dab_box(
            dab.x, dab.y, radius_x, radius_y,
            n_bins=block.n_bins, n_frames=block.n_frames, channels=state.channels,
        )  # fmt: skip
        if box.empty:
            return None
        ellipse = (dab.x, dab.y, radius_x, radius_y, weight)
        mask = (
            None
            if lazy
            else dab_mask(box, *ellipse[:4], hardness=hardness, weight=weight, device=device)
        )
        return _BlockDab(
            box, mask, state.plane.radius, (dab.step_x, dab.step_y), params, (dab.x, dab.y),
            ellipse,
        )  # fmt: skip
    frame0, frame1 = axes.frame_span(dab.x, radius_x, block.n_frames)
    bin0, bin1 = axes.band_span(dab.y, radius_y)
    box = Region(bin0, bin1, frame0, frame1, state.channels, stroke.index)
    if box.empty:
        return None
    u = offsets_tensor(axes.frame_offsets(frame0, frame1, dab.x), radius_x, device)
    v = offsets_tensor(axes.y[bin0:bin1] - dab.y, radius_y, device)
    mask = mask_from_distances(u, v, hardness=hardness, weight=weight)
    if not bool((mask > 0).any()):
        return None
    per_x, per_y = axes.cells_per_unit(dab.y)
    if state.kind.reads_source:
        if state.plane.physical:
            offset = (params.offset_seconds, params.offset_pitch)
        else:
            offset = (params.offset_frames, params.offset_bins)
        frames, bins = round(offset[0] * per_x), round(offset[1] * per_y)
        if frames == 0 and bins == 0:
            return None  # the source is the destination in this block's cells
        params = dataclasses.replace(params, offset_frames=frames, offset_bins=bins)
    radius = (state.plane.radius[0] * per_x, state.plane.radius[1] * per_y)
    centre = axes.cell_of(dab.x, dab.y)
    return _BlockDab(box, mask, radius, (dab.step_x * per_x, dab.step_y * per_y), params, centre)


def apply_dab(state: StrokeState, dab: Dab) -> Region | Regions:
    """Apply one dab to every block it reaches; the boxes it wrote (``EMPTY`` if none)."""
    changed: Region | Regions = EMPTY
    for stroke in state.blocks:
        block_dab = _block_dab(state, stroke, dab)
        if block_dab is not None:
            changed = changed.union(_apply(state, stroke, block_dab))
    return changed


FUSE_SLACK = 2.0
"""Dabs join one box while it holds at most this many times the cells of their own boxes."""


def apply_dabs(state: StrokeState, dabs: list[Dab]) -> Region | Regions:
    """Apply the dabs of one input event; the boxes they wrote.

    A stamping brush (its dabs blend the stroke's starting values towards the kernel's result by
    the largest weight any dab gave a cell) whose kernel is :attr:`~.registry.BrushKind.local`
    gives the same result whether its dabs are applied one by one or as one box whose mask is
    their maximum: so neighbouring dabs are applied together (one read, one kernel, one blend, one
    write), in boxes that stay within :data:`FUSE_SLACK` of the cells the dabs cover. On a GPU this
    turns a few hundred small launches per dab into that many per event. Warp, whose dabs each
    move what the previous one left, and the spectral filter go one dab at a time.
    """
    kind = state.kind
    if kind.drags or not kind.local:
        raise ValueError(f"the {kind.name} brush applies its dabs one at a time")
    changed: Region | Regions = EMPTY
    for stroke in state.blocks:
        block_dabs = [_block_dab(state, stroke, dab, lazy=True) for dab in dabs]
        for group in _groups([dab for dab in block_dabs if dab is not None]):
            changed = changed.union(_apply(state, stroke, _joined(group, state)))
    return changed


def _groups(dabs: list[_BlockDab]) -> list[list[_BlockDab]]:
    """Consecutive dabs with the same parameters whose joint box stays compact (in plain integers:
    a move across a long file seen whole has hundreds of dabs)."""
    groups: list[list[_BlockDab]] = []
    bin0 = bin1 = frame0 = frame1 = cells = 0
    for dab in dabs:
        box = dab.box
        area = (box.bin1 - box.bin0) * (box.frame1 - box.frame0)
        if groups and dab.params == groups[-1][0].params and dab.radius == groups[-1][0].radius:
            joint = (
                min(bin0, box.bin0),
                max(bin1, box.bin1),
                min(frame0, box.frame0),
                max(frame1, box.frame1),
            )
            if (joint[1] - joint[0]) * (joint[3] - joint[2]) <= FUSE_SLACK * (cells + area):
                groups[-1].append(dab)
                (bin0, bin1, frame0, frame1), cells = joint, cells + area
                continue
        groups.append([dab])
        bin0, bin1, frame0, frame1, cells = box.bin0, box.bin1, box.frame0, box.frame1, area
    return groups


def _joined(group: list[_BlockDab], state: StrokeState) -> _BlockDab:
    """One dab covering ``group``: the joint box, the largest weight of any dab at each cell
    (masks left to compute are computed together, :func:`~.mask.ellipses_mask`)."""
    first = group[0]
    boxes = [dab.box for dab in group]
    box = Region(
        min(b.bin0 for b in boxes),
        max(b.bin1 for b in boxes),
        min(b.frame0 for b in boxes),
        max(b.frame1 for b in boxes),
        first.box.channels,  # a stroke's dabs on one block share channels and block
        first.box.block,
    )
    if first.mask is None:
        mask = ellipses_mask(
            box,
            boxes,
            [dab.ellipse for dab in group],
            hardness=state.settings.hardness,
            device=state.document.device,
        )
        return dataclasses.replace(first, box=box, mask=mask, ellipse=None)
    if len(group) == 1:
        return first
    mask = torch.zeros(box.shape, device=first.mask.device)
    for dab in group:
        rows = slice(dab.box.bin0 - box.bin0, dab.box.bin1 - box.bin0)
        columns = slice(dab.box.frame0 - box.frame0, dab.box.frame1 - box.frame0)
        torch.maximum(mask[rows, columns], dab.mask, out=mask[rows, columns])
    return _BlockDab(box, mask, first.radius, first.step, first.params, first.centre)


def _apply(state: StrokeState, stroke: BlockStroke, dab: _BlockDab) -> Region:
    kind, document, box, mask = state.kind, state.document, dab.box, dab.mask
    block = document.blocks[stroke.index]
    state.step.record(box)
    margin_b, margin_t = stroke.margin
    region = Region(
        box.bin0 - margin_b,
        box.bin1 + margin_b,
        box.frame0 - margin_t,
        box.frame1 + margin_t,
        box.channels,
        box.block,
    )
    values, bins, frames = _read(state, stroke.index, region, original=not kind.drags)
    original = _read(state, stroke.index, region, original=True)[0] if kind.drags else None
    inner = (slice(margin_b, margin_b + box.shape[0]), slice(margin_t, margin_t + box.shape[1]))
    if kind.drags:
        weight = mask
    else:
        stroke.coverage.ensure(box, lambda tile: torch.zeros(tile.shape, device=document.device))
        weight = torch.maximum(stroke.coverage.paste_into(torch.zeros_like(mask), box), mask)
        stroke.coverage.scatter(weight, box)
    context = DabContext(
        inner=inner,
        bin_hz=stroke.band_hz[bins],
        frames=frames,
        hop=block.hop,
        sample_rate=document.sample_rate,
        radius=dab.radius,
        hardness=state.settings.hardness,
        step=dab.step,
        bins=bins,
        centre=dab.centre,
        full_scale=state.full_scale,
        source=_source(state, stroke, region, dab.params) if kind.reads_source else None,
        original=original,
        frame_weight=document.transform.frame_weight(stroke.index, frames),
    )
    magnitude, phase = kind.kernel(values[0], values[1], mask, dab.params, context)
    base = values[(slice(None), slice(None), *inner)]
    out_magnitude, out_phase = blend(base, magnitude, phase, weight, keeps_phase=kind.keeps_phase)
    document.write(box, out_magnitude, out_phase)
    return box
