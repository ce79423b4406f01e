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
from spectropaint.brushes.kernels.kept import kept
from spectropaint.brushes.kernels.phase import (
    ATAN2_BLOCK,
    PHASE_MODES,
    Continuation,
    atan2,
    blend_phase,
    constant,
    phase_ramp,
    wrap,
)
from spectropaint.brushes.params import check_params, param

FUSED_ENV = "SPECTROPAINT_FUSED_WARP"
"""``0`` turns warp's own kernels off (:mod:`.warp_fused` on CUDA, :mod:`.warp_compiled` on the
CPU): its dabs take torch's path."""


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
    """The box's cells sampled from behind the motion; magnitude and phase moved together: a
    :class:`WarpPlan` of this one dab, on its region alone.

    Phases are handled as deviations ``D = phase - ramp`` from each cell's steady-tone ramp
    (:func:`.phase.phase_ramp`), which are small numbers, so float32 suffices. A neighbour at row
    ``nb``, column ``n`` of the source point contributes ``D[nb, n]`` carried to the destination
    column ``j``: by ``drift[nb, n] * (j - n)`` in ``continue`` mode (``drift``: its measured
    advance minus the bin centre's), by ``-omega[nb] * (j - source)`` in ``shift`` mode; the
    destination's own ramp is added back at the end.
    """
    channels, n_b, n_t = magnitude.shape
    rows, columns = context.inner
    device = magnitude.device
    prepared, original = context.prepared, context.original
    if prepared is None:  # a dab alone: the drift before the region's first frame is its second's
        with_before = None
        if original is not None:
            before = original[..., :1] * 2 - original[..., 1:2] if n_t > 1 else original
            with_before = torch.cat((before, original), dim=-1)
        prepared = warp_prepare(
            with_before, context.bin_hz, context.frames, params, hop=context.hop,
            sample_rate=context.sample_rate,
        )  # fmt: skip
    if original is None:  # shift mode reads no starting values
        original = torch.stack((magnitude, phase))
    dabs = DragDabs(
        mask=mask[None],
        outside=None,
        step=_row(context.step, torch.float64, device),
        dest_columns=torch.arange(columns.start, columns.stop, dtype=torch.float32, device=device)[
            None
        ],
        dest_rows=torch.arange(rows.start, rows.stop, dtype=torch.float32, device=device)[None],
        high=_row((n_t - 1, n_b - 1), torch.float32, device),
        columns=None,
        rows=None,
        window_cells=None,
        alone=context.inner,
    )
    plan = WarpPlan(original, prepared, dabs, params, width=n_t)
    moved_magnitude, moved_phase = plan.dab(0, torch.cat((magnitude, phase)).view(2 * channels, -1))
    return moved_magnitude.clone(), moved_phase


def _row(values, dtype: torch.dtype, device) -> torch.Tensor:
    """``[values]`` as a ``[1, N]`` tensor on ``device``, filled there (``torch.tensor`` would copy
    it from the host, a blocking copy on a GPU)."""
    row = torch.empty((1, len(values)), dtype=dtype, device=device)
    for index, value in enumerate(values):
        row[:, index].fill_(value)  # (item assignment copies a host scalar up)
    return row


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
    # and a column after the region's: the bin centre's advance over one frame
    one = torch.ones(1, dtype=frames.dtype, device=frames.device)
    ramps = phase_ramp(bin_hz, torch.cat((frames, one)), hop=hop, sample_rate=sample_rate)
    ramps = ramps.to(torch.float32)
    ramp, centre = ramps[:, :-1].contiguous(), ramps[:, -1:]
    prepared = {"ramp": ramp}
    if params.phase != "shift":
        prepared["drift"] = wrap(original[1][..., 1:] - original[1][..., :-1] - centre)
    if params.phase != "continue":
        omega = ((2 * math.pi * hop / sample_rate) * bin_hz).to(torch.float32)
        prepared["omega"] = omega[:, None].expand(ramp.shape)
    return prepared


class WarpPlan:
    """Warp's dabs of one group (or one dab alone: :func:`warp`), all that does not read the
    values computed at once; :meth:`dab` then computes one dab on the values the previous dabs
    left.

    Every dab's source points, bilinear weights and the indices of their four neighbours (in the
    values held and in the group's region, reflected as the dab alone would be), and the phase
    each neighbour is carried by in each mode (its ramp taken off), are ``[K, ...]`` tensors made
    by a few operations for the whole group instead of dozens per dab. Look-ups go by
    ``index_select`` on one index shared by all rows (several times faster than ``gather`` on
    CPUs, and the same values).

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
        # each window cell's own-region column and row, the point it samples, the cells below
        # it and its distances from them, [K, 2, H, W]: (frames, bins) as ``shift``
        size = (n_dabs, height, window)
        dest = torch.stack((dest_t.expand(size), dabs.dest_rows[:, :, None].expand(size)), dim=1)
        source = torch.sub(dest, shift[:, :, None, None] * mask[:, None]).clamp_min_(0)
        source = torch.minimum(source, high)
        one = constant(1.0, mask)
        low = torch.minimum(source.floor(), high - one)
        frac = source - low
        # the two columns and the two rows around each source point, [K, 2, H, W] each: their
        # (flat) places in the group's region and in the values held, and their weights; the
        # four neighbours (db, dt) go in the order (0, 0), (0, 1), (1, 0), (1, 1)
        around = torch.stack((low, low + one), dim=2)  # [K, 2, 2, H, W]: (frames, bins) x 2
        columns_2, rows_2 = around.unbind(1)
        ramp = prepared["ramp"]
        omega = prepared["omega"][:, 0] if "shift" in self.modes else None  # advance per frame
        # places are int32 (exact: a region holds under 2**24 cells), whose arithmetic costs a
        # third of int64's on CPUs; gather's index alone must be int64
        if dabs.alone is None:
            whole_columns, whole_rows = around.long().unbind(1)
            tables = [dabs.rows[0] * ramp.shape[-1], dabs.rows[1] * width]
            if omega is not None:  # each row's (past a shorter dab's rows: any)
                rows = dabs.rows[0].clamp_max(len(omega) - 1)
                tables.append(omega.index_select(0, rows.flatten()).view(rows.shape))
            region_rows, held_rows, *omega = _look_up(tables, whole_rows)
            region_columns, held_columns = _look_up(dabs.columns, whole_columns)
            region = (region_rows[:, :, None] + region_columns[:, None]).view(-1)
            held = held_rows[:, :, None] + held_columns[:, None]
        else:  # the values held are the dab's own region
            whole_columns, whole_rows = around.int().unbind(1)
            held = (whole_rows * width)[:, :, None] + whole_columns[:, None]
            region = held.view(-1)
            if omega is not None:
                omega = [omega.index_select(0, whole_rows.flatten()).view(whole_rows.shape)]
        shape = (n_dabs, 4, height, window)
        pair_weights = torch.stack((one - frac, frac), dim=2)  # [K, 2, 2, H, W]
        weights = pair_weights[:, 1, :, None] * pair_weights[:, 0, None]
        # the phase each neighbour is carried by in each mode: [K, M, C, 2, 2, H, W]
        split = (n_dabs, channels, 2, 2, height, window)
        offsets = torch.empty((n_dabs, len(self.modes), *split[1:]), device=mask.device)
        for m, mode in enumerate(self.modes):
            if mode == "continue":
                drift = prepared["drift"].flatten(1).index_select(1, region)
                drift = drift.view(channels, *split[:1], *split[2:]).movedim(0, 1)
                torch.mul(drift, (dest_t[:, None, None] - columns_2[:, None])[:, None],
                          out=offsets[:, m])  # fmt: skip
            else:
                term = omega[0] * (source[:, 0] - dest[:, 0])[:, None]
                offsets[:, m].copy_(term[:, None, :, None])
        self._index = held.view(n_dabs, -1)  # [K, 4 H W]
        self._offsets = offsets.view(n_dabs, len(self.modes), channels, *shape[1:])
        self._ramp_source = ramp.flatten().index_select(0, region).view(shape)
        self._weights = weights.view(shape)
        self._start = None
        if dabs.alone is not None:  # the window is the box
            self._ramp = ramp[dabs.alone][None]
            if self.auto:
                self._start = original[(slice(None), slice(None), *dabs.alone)][None]
        else:
            cells = dabs.window_cells.view(-1)
            self._ramp = ramp.flatten().index_select(0, cells).view(n_dabs, height, window)
            if self.auto:  # the destination as the stroke began, magnitude 0 outside the box
                start = original.reshape(2 * channels, -1).index_select(1, cells)
                start = start.view(2, channels, n_dabs, height, window).movedim(2, 0)
                start[:, 0].masked_fill_(dabs.outside[:, None], 0.0)
                self._start = start  # [K, 2, C, H, W]
        self._work = kept(
            _Work, (len(self.modes), channels, height, window), mask.device, cells=height * window
        )
        # each dab's own, taken apart once (a dab's look-ups are then list items, not operations)
        self._index, self._offsets, self._ramp_source, self._weights, self._ramp = (
            tensor.unbind(0)
            for tensor in (self._index, self._offsets, self._ramp_source, self._weights, self._ramp)
        )
        if self._start is not None:  # (magnitude, phase) of each
            self._start = list(
                zip(*(part.unbind(0) for part in self._start.unbind(1)), strict=True)
            )

    def dab(
        self, index: int, values: torch.Tensor, *, out: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Dab ``index``'s result on its window ``[C, H, W]`` (magnitude, and phase in
        ``[-pi, pi]``, written into ``out`` where given) from ``values``, the values held ``[2 C,
        N]``. The magnitude is a buffer of the thread's, valid until the next dab on a window of
        this shape."""
        work = self._work
        torch.index_select(values, 1, self._index[index], out=work.found)
        torch.sub(work.phases, self._ramp_source[index], out=work.deviation)
        torch.add(work.deviation, self._offsets[index], out=work.theta)
        torch.cos(work.theta, out=work.cos)
        torch.sin(work.theta, out=work.sin)
        torch.sum(work.taps.mul_(self._weights[index]), dim=2, out=work.sums)
        atan2(work.imag, work.real, out=work.angle)
        moved = torch.add(work.angles, self._ramp[index], out=work.moved)
        phase = torch.empty_like(work.spare) if out is None else out
        if not self.auto:
            return work.magnitude, wrap(work.each_mode[0], out=phase)
        sure = work.continuation(*self._start[index], work.magnitude, moved)
        carried, shifted = work.each_mode
        blend_phase(shifted, carried, sure, out=work.spare, spare=phase)
        return work.magnitude, wrap(work.spare, out=phase)


class _Work:
    """The buffers a dab of ``modes`` phase modes on a ``[C, H, W]`` window works in (``shape``:
    ``(modes, C, H, W)``), and views of them made once (a dab at radius 8 is some fifty
    operations, each view one more; kept between dabs, :mod:`.kept`).

    Each dab's neighbours' magnitude and phase are gathered into the first two rows of ``taps``
    ``[1 + 2 M, C, 4, H, W]``; the cosines and sines of their carried phases then take the second
    row's place and the rest; their weighted sums go to ``sums``, whose cosine and sine rows are
    each padded to a whole number of :data:`~.phase.ATAN2_BLOCK` elements: atan2's every element
    then comes from the vector routine in one call (see :func:`.phase.atan2`).
    """

    def __init__(self, shape: tuple[int, int, int, int], *, device):
        modes, channels, height, window = shape
        taps = torch.empty((1 + 2 * modes, channels, 4, height, window), device=device)
        self.taps, self.found = taps, taps[:2].view(2 * channels, -1)
        self.phases, self.cos, self.sin = taps[1], taps[1 : 1 + modes], taps[1 + modes :]
        self.deviation = torch.empty((channels, 4, height, window), device=device)
        self.theta = torch.empty((modes, channels, 4, height, window), device=device)
        self.plane = plane = channels * height * window
        row = -(-plane * modes // ATAN2_BLOCK) * ATAN2_BLOCK // modes
        sums = torch.zeros((1 + 2 * modes, row), device=device)
        self.sums = sums[:, :plane].view(1 + 2 * modes, channels, height, window)
        self.magnitude, self.real, self.imag = self.sums[0], sums[1 : 1 + modes], sums[1 + modes :]
        self.angle = torch.empty((modes, row), device=device)
        self.angles = self.angle[:, :plane].view(modes, channels, height, window)
        self.moved = torch.empty((modes, channels, height, window), device=device)
        self.spare = torch.empty((channels, height, window), device=device)
        self.each_mode = self.moved.unbind(0)  # continue, shift (auto)
        self.continuation = Continuation((channels, height, window), device=device)


def _look_up(tables, at: torch.Tensor) -> list[torch.Tensor]:
    """``table[k, at[k]]`` for each dab ``k`` and each ``[K, S]`` table: ``at`` ``[K, ...]``
    (int64); ``[K, ...]`` each, of the table's type."""
    index = at.view(at.shape[0], -1)
    return [table.gather(1, index).view(at.shape) for table in tables]
