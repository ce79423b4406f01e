"""The one function that applies a dab to the document; every brush goes through it.

Steps: the dab's box (clipped, never wrapped) and mask; the box's original values recorded in the
stroke's open history step; the region plus the kernel's margin read (reflected past the grid's
edges); the kernel; a blend through the weight that leaves every cell of weight 0 bit-identical; the
write. The caller grows the dirty box from the returned region and emits once per input event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from spectropaint.brushes.history import OpenStep, read_stacked
from spectropaint.brushes.kernels.context import DabContext, Source
from spectropaint.brushes.kernels.select import select
from spectropaint.brushes.mask import dab_box, dab_mask
from spectropaint.brushes.registry import BrushKind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import Dab
from spectropaint.brushes.tiles import TileMap
from spectropaint.transforms.regions import EMPTY, Region


@dataclass
class StrokeState:
    """Everything a stroke's dabs share: the document, the brush, and the stroke's sparse stores.

    Attributes
    ----------
    coverage : TileMap
        Per tile ``[bins, frames]`` float32: the largest weight any dab of the stroke gave each cell
        (stamping brushes only).
    band_hz : torch.Tensor [shape=(n_bins,)], float64
        Centre frequency of every bin, on the document's device.
    margin : tuple of int
        Cells of context (bins, frames) the kernel reads around each box.
    """

    document: Any
    kind: BrushKind
    params: Any
    settings: BrushSettings
    step: OpenStep
    coverage: TileMap
    band_hz: torch.Tensor
    full_scale: float
    margin: tuple[int, int]

    @property
    def channels(self) -> tuple[int, ...]:
        return self.step.channels

    def follow(self, device: torch.device) -> None:
        """Move the stroke's tensors (frequencies, coverage, original tiles) to ``device``.

        Called before each dab with the document's device: the stroke's state is made on the CPU
        and moves there with the first dab, and follows the document to the CPU should its device
        run out of memory (an allocation that fails here is retried on the CPU too).
        """
        if self.band_hz.device == device:
            return
        self.band_hz = self.band_hz.to(device)
        for tiles in (self.coverage.tiles, self.step.originals.tiles):
            for key, tensor in tiles.items():
                tiles[key] = tensor.to(device)


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
    state: StrokeState, box: Region, *, original: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Values ``[2, C, Bm, Tm]`` of ``box`` reflected past the grid, with its bin and frame indices.

    ``original`` picks the stroke's starting values instead of the current ones.
    """
    block = state.document.blocks[0]
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


def _source(state: StrokeState, box: Region) -> Source:
    """The clone source of ``box`` as the stroke began, with the frame before it in front."""
    block = state.document.blocks[0]
    params = state.params
    wanted = Region(
        box.bin0 + params.offset_bins,
        box.bin1 + params.offset_bins,
        box.frame0 + params.offset_frames - 1,
        box.frame1 + params.offset_frames,
        box.channels,
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
        if inside.frame0 == wanted.frame0 + 1 and values.shape[-1] > 2:
            # the frame before lies outside the grid: extrapolate it, so the first frame's phase
            # advance is measured forwards
            values[1, ..., 0] = 2 * values[1, ..., 1] - values[1, ..., 2]
    bins = torch.arange(wanted.bin0, wanted.bin1, device=device).clamp(0, block.n_bins - 1)
    return Source(values[0], values[1], valid[:, 1:], state.band_hz[bins])


def apply_dab(state: StrokeState, dab: Dab) -> Region:
    """Apply one dab to the document; the box it wrote (``EMPTY`` if it fell outside the grid)."""
    settings, kind = state.settings, state.kind
    document = state.document
    block = document.blocks[0]
    size = settings.size_at(dab.pressure)
    radius_frames, radius_bins = settings.radius_frames * size, settings.radius_bins * size
    box = dab_box(
        dab.x,
        dab.y,
        radius_frames,
        radius_bins,
        n_bins=block.n_bins,
        n_frames=block.n_frames,
        channels=state.channels,
    )
    if box.empty:
        return EMPTY
    mask = dab_mask(
        box,
        dab.x,
        dab.y,
        radius_frames,
        radius_bins,
        hardness=settings.hardness,
        weight=settings.weight_at(dab.pressure),
        device=document.device,
    )
    state.step.record(box)
    margin_b, margin_t = state.margin
    region = Region(
        box.bin0 - margin_b,
        box.bin1 + margin_b,
        box.frame0 - margin_t,
        box.frame1 + margin_t,
        box.channels,
    )
    values, bins, frames = _read(state, region, original=not kind.drags)
    original = _read(state, region, original=True)[0] if kind.drags else None
    inner = (slice(margin_b, margin_b + box.shape[0]), slice(margin_t, margin_t + box.shape[1]))
    if kind.drags:
        weight = mask
    else:
        state.coverage.ensure(box, lambda tile: torch.zeros(tile.shape, device=document.device))
        weight = torch.maximum(state.coverage.paste_into(torch.zeros_like(mask), box), mask)
        state.coverage.scatter(weight, box)
    context = DabContext(
        inner=inner,
        bin_hz=state.band_hz[bins],
        frames=frames,
        hop=block.hop,
        sample_rate=document.sample_rate,
        radius=(settings.radius_frames, settings.radius_bins),
        hardness=settings.hardness,
        step=(dab.step_x, dab.step_y),
        bins=bins,
        centre=(dab.x, dab.y),
        full_scale=state.full_scale,
        source=_source(state, box) if kind.reads_source else None,
        original=original,
    )
    magnitude, phase = kind.kernel(values[0], values[1], mask, state.params, context)
    base = values[(slice(None), slice(None), *inner)]
    out_magnitude, out_phase = blend(base, magnitude, phase, weight, keeps_phase=kind.keeps_phase)
    document.write(box, out_magnitude, out_phase)
    return box
