"""Warp (smudge): drag the content under the brush along the stroke's motion.

Each cell of the dab takes the content found ``amount * weight * step`` behind it, where ``step`` is
the motion since the previous dab and ``weight`` the dab's mask, so content follows the pointer with
the brush's falloff. The source point falls between cells: magnitude is interpolated bilinearly from
its four neighbours, and so is phase, as unit phasors, after each neighbour's phase has been brought
to the destination (re-based to the destination bin's frequency, and carried over the time moved as
its ``phase`` mode says; ``auto`` computes both ways and takes ``continue`` where the destination
already held the carried partial; see :mod:`.phase`). Each dab works on the current values: smudging
accumulates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from spectropaint.brushes.kernels.context import DabContext, DragDabs
from spectropaint.brushes.kernels.phase import (
    PHASE_MODES,
    atan2,
    blend_phase,
    continuation,
    phase_ramp,
    wrap,
)
from spectropaint.brushes.params import check_params, param

STACKED_CELLS = 4096
"""Boxes of up to this many cells gather their four bilinear taps at once (measured here: three
times faster at radius 8); larger ones a tap at a time, which moves less memory (twice as fast at
radius 128)."""


@dataclass(frozen=True)
class WarpParams:
    """``amount``: how far content moves per unit of pointer motion at full weight, 0..2;
    ``phase``: ``auto``, ``continue`` or ``shift`` (see :mod:`.phase`)."""

    amount: float = param(1.0, "Amount", low=0.0, high=2.0, step=0.1)
    phase: str = param("auto", "Phase", choices=PHASE_MODES)

    def __post_init__(self) -> None:
        check_params(self)

    def margin(self, settings) -> tuple[int, int]:
        """Cells of context (bins, frames): the farthest a cell can be sampled from, plus one."""
        reach = self.amount * settings.spacing
        return (
            math.ceil(reach * settings.radius_bins) + 1,
            math.ceil(reach * settings.radius_frames) + 1,
        )


def warp(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    mask: torch.Tensor,
    params: WarpParams,
    context: DabContext,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The box's cells sampled from behind the motion; magnitude and phase moved together.

    Phases are handled as deviations ``D = phase - ramp`` from each cell's steady-tone ramp
    (:func:`.phase.phase_ramp`), which are small numbers, so float32 suffices. A neighbour at row
    ``nb``, column ``n`` of the source point contributes ``D[nb, n]`` carried to the destination
    column ``j``: by ``drift[nb, n] * (j - n)`` in ``continue`` mode (``drift``: its measured
    advance minus the bin centre's), by ``-omega[nb] * (j - source)`` in ``shift`` mode; the
    destination's own ramp is added back at the end.
    """
    channels, n_b, n_t = magnitude.shape
    rows, columns = context.inner
    step_t, step_b = context.step
    device = magnitude.device
    hop, rate = context.hop, context.sample_rate
    dest_b = torch.arange(rows.start, rows.stop, device=device, dtype=torch.float32)[:, None]
    dest_t = torch.arange(columns.start, columns.stop, device=device, dtype=torch.float32)[None, :]
    source_b = (dest_b - params.amount * step_b * mask).clamp(0, n_b - 1)
    source_t = (dest_t - params.amount * step_t * mask).clamp(0, n_t - 1)
    low_b = source_b.floor().clamp(max=n_b - 2)
    low_t = source_t.floor().clamp(max=n_t - 2)
    frac_b, frac_t = source_b - low_b, source_t - low_t

    prepared = context.prepared
    if prepared is None:  # a dab alone: the drift before the region's first frame is its second's
        original, with_before = context.original, None
        if original is not None:
            before = original[..., :1] * 2 - original[..., 1:2] if n_t > 1 else original
            with_before = torch.cat((before, original), dim=-1)
        prepared = warp_prepare(
            with_before, context.bin_hz, context.frames, params, hop=hop, sample_rate=rate
        )
    ramp = prepared["ramp"]
    modes = ("continue", "shift") if params.phase == "auto" else (params.phase,)
    # the four neighbours of every source point, taps ``(db, dt)`` in the order (0, 0), (0, 1),
    # (1, 0), (1, 1): on a small box all four in one gather and one set of trigonometric calls
    # (the cost is the launches), on a large one a tap at a time (the cost is the memory)
    shape = mask.shape
    rows_4 = torch.stack((low_b, low_b + 1))[:, None].expand(2, 2, *shape).reshape(4, *shape)
    columns_4 = torch.stack((low_t, low_t + 1))[None, :].expand(2, 2, *shape).reshape(4, *shape)
    weights = (
        torch.stack((1 - frac_b, frac_b))[:, None] * torch.stack((1 - frac_t, frac_t))[None, :]
    ).reshape(4, *shape)
    sources = [magnitude, phase - ramp]
    if "continue" in modes:
        sources.append(prepared["drift"])
    flat = torch.cat([source.reshape(channels, -1) for source in sources])
    chunk = 4 if mask.numel() <= STACKED_CELLS else 1
    out_magnitude = real = imag = None
    for first in range(0, 4, chunk):
        taps = slice(first, first + chunk)
        rows_t, columns_t, weight = rows_4[taps], columns_4[taps], weights[taps]
        index = (rows_t * n_t + columns_t).long()
        found = _take(flat, index).view(len(sources), channels, chunk, *shape)
        out_magnitude = _plus(out_magnitude, (weight * found[0]).sum(dim=1))
        demodulated = found[1]
        thetas = []
        for mode in modes:
            if mode == "continue":
                thetas.append(demodulated + found[2] * (dest_t - columns_t))
            else:
                omega = prepared["omega"][:, 0]
                thetas.append(demodulated + omega[rows_t.long()] * (source_t - dest_t))
        theta = torch.stack(thetas)  # [modes, C, taps, B, T]
        real = _plus(real, (weight * torch.cos(theta)).sum(dim=2))
        imag = _plus(imag, (weight * torch.sin(theta)).sum(dim=2))
    moved = atan2(imag, real) + ramp[rows, columns]
    if params.phase != "auto":
        return out_magnitude, wrap(moved[0])
    # continue only where the destination already held what is carried there
    start = context.original[(slice(None), slice(None), rows, columns)]
    sure = continuation(start[0], start[1], out_magnitude, moved[0], moved[1])
    return out_magnitude, wrap(blend_phase(moved[1], moved[0], sure))


def _plus(total: torch.Tensor | None, term: torch.Tensor) -> torch.Tensor:
    return term if total is None else total + term


def _take(flat: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``flat[:, index]`` for ``flat`` ``[C, N]`` and ``index`` ``[B, T]`` (``gather``: several times
    faster than advanced indexing on CPUs)."""
    expanded = index.reshape(1, -1).expand(flat.shape[0], -1)
    return torch.gather(flat, 1, expanded).view(flat.shape[0], *index.shape)


def warp_prepare(
    original: torch.Tensor | None,
    bin_hz: torch.Tensor,
    frames: torch.Tensor,
    params: WarpParams,
    *,
    hop: int,
    sample_rate: int,
) -> dict[str, torch.Tensor]:
    """What warp's dabs need of a region, computed once per event (see ``BrushKind.prepare``).

    Parameters
    ----------
    original : torch.Tensor [shape=(2, C, Bm, Tm + 1)]
        The region's magnitude and phase as the stroke began, with the frame before it in front
        (only ``continue`` and ``auto`` read it).
    bin_hz : torch.Tensor [shape=(Bm,)], float64
    frames : torch.Tensor [shape=(Tm,)]

    Returns
    -------
    dict
        ``ramp`` ``[Bm, Tm]``: each cell's steady-tone phase; ``drift`` ``[C, Bm, Tm]``: the phase
        advance measured into each cell minus its bin centre's, from the stroke's starting values
        (measuring on values earlier dabs moved would feed each dab's rounding into the next one's
        advance, and the error would grow); ``omega`` ``[Bm, Tm]``: each row's advance per frame.
    """
    ramp = phase_ramp(bin_hz, frames, hop=hop, sample_rate=sample_rate).to(torch.float32)
    prepared = {"ramp": ramp}
    if params.phase != "shift":
        one = torch.ones(1, device=bin_hz.device)
        centre = phase_ramp(bin_hz, one, hop=hop, sample_rate=sample_rate).to(torch.float32)
        prepared["drift"] = wrap(original[1][..., 1:] - original[1][..., :-1] - centre)
    if params.phase != "continue":
        omega = ((2 * math.pi * hop / sample_rate) * bin_hz).to(torch.float32)
        prepared["omega"] = omega[:, None].expand(ramp.shape)
    return prepared


class WarpPlan:
    """Warp's dabs of one group, all that does not read the values computed at once
    (:func:`warp_plan`); :meth:`dab` is then the rest of :func:`warp` for one dab, on the values
    the previous dabs left.

    Every dab's source points, bilinear weights and the indices of their four neighbours (in the
    values held and in the group's region, reflected as the dab alone would be), and the phase
    each neighbour is carried by in each mode (its ramp taken off), are ``[K, ...]`` tensors made
    by a few operations for the whole group instead of dozens per dab.

    Parameters
    ----------
    original : torch.Tensor [shape=(2, C, Bm, Tm)]
        The group's region as the stroke began.
    prepared : dict
        :func:`warp_prepare`'s tensors for the group's region.
    dabs : DragDabs
    params : WarpParams
    width : int
        Columns of the values the dabs will be given (the joint box clipped to the grid).
    """

    def __init__(
        self,
        original: torch.Tensor,
        prepared: dict[str, torch.Tensor],
        dabs: DragDabs,
        params: WarpParams,
        *,
        width: int,
    ):
        n_dabs, height, window = dabs.mask.shape
        channels = original.shape[1]
        self.modes = ("continue", "shift") if params.phase == "auto" else (params.phase,)
        self.auto = params.phase == "auto"
        mask = dabs.mask
        shift = (params.amount * dabs.step).to(torch.float32)  # [K, 2] (frames, bins)
        high = dabs.high[:, :, None, None]
        dest_t = dabs.dest_columns[:, None, :]
        dest_b = dabs.dest_rows[:, :, None]
        source_t = torch.minimum((dest_t - shift[:, :1, None] * mask).clamp_min(0), high[:, 0])
        source_b = torch.minimum((dest_b - shift[:, 1:, None] * mask).clamp_min(0), high[:, 1])
        low_t = torch.minimum(source_t.floor(), high[:, 0] - 1)
        low_b = torch.minimum(source_b.floor(), high[:, 1] - 1)
        frac_t, frac_b = source_t - low_t, source_b - low_b
        # the four neighbours (db, dt) in the order (0, 0), (0, 1), (1, 0), (1, 1): [K, 4, H, W]
        rows_4 = torch.stack((low_b, low_b, low_b + 1, low_b + 1), dim=1)
        columns_4 = torch.stack((low_t, low_t + 1, low_t, low_t + 1), dim=1)
        weights = torch.stack(
            (
                (1 - frac_b) * (1 - frac_t),
                (1 - frac_b) * frac_t,
                frac_b * (1 - frac_t),
                frac_b * frac_t,
            ),
            dim=1,
        )
        taps = (n_dabs, -1)
        rows = dabs.rows.gather(2, rows_4.long().view(1, *taps).expand(2, *taps))
        columns = dabs.columns.gather(2, columns_4.long().view(1, *taps).expand(2, *taps))
        ramp = prepared["ramp"]
        region = rows[0] * ramp.shape[-1] + columns[0]  # [K, 4 H W] in the group's region
        shape = (n_dabs, 4, height, window)
        ramp_source = ramp.flatten().gather(0, region.flatten()).view(shape)
        offsets = []
        for mode in self.modes:
            if mode == "continue":
                drift = prepared["drift"].flatten(1)
                drift = drift.gather(1, region.view(1, -1).expand(channels, -1)).view(
                    channels, *shape
                )
                term = drift * (dest_t[:, None] - columns_4)
                offsets.append(term.movedim(0, 1))
            else:
                omega = prepared["omega"][:, 0].gather(0, rows[0].flatten()).view(shape)
                term = omega * (source_t - dest_t)[:, None]
                offsets.append(term[:, None].expand(-1, channels, -1, -1, -1))
        held = (rows[1] * width + columns[1]).view(n_dabs, 1, -1)
        self._index = held.expand(-1, 2 * channels, -1).unbind(0)  # [2 C, 4 H W] per dab
        self._offsets = torch.stack(offsets, dim=1).unbind(0)  # [M, C, 4, H, W] per dab
        self._ramp_source = ramp_source.unbind(0)  # [4, H, W] per dab
        self._weights = weights.unbind(0)  # [4, H, W] per dab
        cells = dabs.window_rows[:, :, None] * ramp.shape[-1] + dabs.window_columns[:, None, :]
        cells = cells.flatten()
        self._ramp = ramp.flatten().gather(0, cells).view(n_dabs, height, window).unbind(0)
        self._start = None
        if self.auto:  # the destination as the stroke began, magnitude 0 outside the dab's box
            start = original.flatten(2).gather(2, cells.view(1, 1, -1).expand(2, channels, -1))
            start = start.view(2, channels, n_dabs, height, window).movedim(2, 0)  # [K, 2, C, H, W]
            start[:, 0] *= dabs.in_box[:, None]
            self._start = start.unbind(0)
        self._trig = torch.empty(
            (1 + 2 * len(self.modes), channels, 4, height, window), device=mask.device
        )

    def dab(self, index: int, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Dab ``index``'s result on its window ``[C, H, W]`` (magnitude, and phase, not wrapped:
        the blend reads its cosine and sine) from ``values``, the values held ``[2 C, N]``."""
        modes, trig = len(self.modes), self._trig
        channels = trig.shape[1]
        found = torch.gather(values, 1, self._index[index]).view(2, channels, *trig.shape[2:])
        theta = (found[1] - self._ramp_source[index]) + self._offsets[index]  # [M, C, 4, H, W]
        trig[0].copy_(found[0])
        torch.cos(theta, out=trig[1 : 1 + modes])
        torch.sin(theta, out=trig[1 + modes :])
        sums = (trig * self._weights[index]).sum(dim=2)  # [1 + 2 M, C, H, W]
        magnitude = sums[0]
        moved = atan2(sums[1 + modes :], sums[1 : 1 + modes]) + self._ramp[index]
        if not self.auto:
            return magnitude, wrap(moved[0])
        start = self._start[index]
        sure = continuation(start[0], start[1], magnitude, moved[0], moved[1])
        return magnitude, wrap(blend_phase(moved[1], moved[0], sure))
