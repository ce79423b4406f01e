"""Clone: copy magnitude and phase from a source offset in time and frequency (a clone stamp).

The source is read as it was when the stroke began, so a source that overlaps the painted area does
not copy the stroke into itself. Copied energy is re-based to the destination bin's frequency (heard
at its new pitch) and, in ``continue`` mode, carried forward in phase over the time offset by its
measured advance, so background tones stay in phase with themselves around the patch; ``auto`` does
that only where the destination holds the same partial, and copies the source's phase as it is
elsewhere (see :mod:`.phase`). Where the source falls outside the grid nothing is copied.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from spectropaint.brushes.kernels import clone_compiled, clone_fused, triton_math
from spectropaint.brushes.kernels.context import DabContext, PointwiseParams
from spectropaint.brushes.kernels.kept import kept
from spectropaint.brushes.kernels.phase import (
    CONTEXT_FRAMES,
    PHASE_MODES,
    Continuation,
    blend_phase,
    phase_ramp,
    wrap,
)
from spectropaint.brushes.kernels.select import select
from spectropaint.brushes.params import check_params, param
from spectropaint.transforms.errors import SettingsError

MAX_OFFSET = 10_000_000


@dataclass(frozen=True)
class CloneParams(PointwiseParams):
    """Source minus destination in whole frames and bins (not both zero), and the phase mode.

    A stroke in seconds and semitones (or Hz) gives the offset as ``offset_seconds`` and
    ``offset_pitch`` (in the stroke's pitch unit) instead; each block then rounds it to its cells.
    """

    offset_frames: int = param(
        -64, "Source offset", "frames", low=-MAX_OFFSET, high=MAX_OFFSET, integer=True, decimals=0
    )
    offset_bins: int = param(
        0, "Source offset", "bins", low=-MAX_OFFSET, high=MAX_OFFSET, integer=True, decimals=0
    )
    phase: str = param("auto", "Phase", choices=PHASE_MODES)
    offset_seconds: float | None = param(
        None, "Source offset", "s", low=-1e6, high=1e6, optional=True, decimals=3
    )
    offset_pitch: float | None = param(
        None, "Source offset", "pitch unit", low=-1e6, high=1e6, optional=True, decimals=2
    )

    def margin(self, radii) -> tuple[int, int]:
        """Cells of context (bins, frames): in ``auto`` mode, the frames either side over which
        the continuation is judged (so a cell's result never depends on the box around it)."""
        return (0, CONTEXT_FRAMES) if self.phase == "auto" else (0, 0)

    def __post_init__(self) -> None:
        check_params(self)
        if self.offset_frames == 0 and self.offset_bins == 0:
            raise SettingsError("the clone offset must not be zero in both frames and bins")
        if (self.offset_seconds is None) != (self.offset_pitch is None):
            raise SettingsError("offset_seconds and offset_pitch go together")


CloneInto = triton_math.KernelInto(
    clone_fused.clone,
    lambda device, context: clone_fused.available(device),
    reads_kept=True,
)
"""The clone's fused kernel blending into the document on CUDA (the brush's
:attr:`~spectropaint.brushes.registry.BrushKind.blends_into`)."""


def clone(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    mask: torch.Tensor,
    params: CloneParams,
    context: DabContext,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The source's values on the box, phase re-based; the box's own values where it has none.

    ``context.source`` holds the source cells of the whole region with one frame of history in
    front (``[C, B, Tm + 1]``; the region is the box plus, in ``auto`` mode, the frames either
    side that :func:`.phase.continuation` compares over, so a cell's result never depends on the
    box around it and fused dabs give what dabs one by one do). Terms that grow with the frame
    index or the offset are reduced modulo one cycle in float64 per row or column; the per-cell
    arithmetic stays in float32. The same arithmetic is one compiled call on the CPU
    (:mod:`.clone_compiled`) where Numba is installed, one launch on CUDA (:mod:`.clone_fused`)
    where Triton is.
    """
    for fused in (clone_compiled, clone_fused):
        if fused.available(magnitude.device):
            with contextlib.suppress(triton_math.Unavailable):  # (then torch's path)
                return fused.clone(magnitude, phase, params, context)
    source = context.source
    rows, columns = context.inner
    hop, rate = context.hop, context.sample_rate
    shift = context.bin_hz[rows] - source.bin_hz
    after = source.phase[..., 1:]
    ramp = phase_ramp(shift, context.frames, hop=hop, sample_rate=rate).to(torch.float32)
    moved_phase = None  # auto: the continued and the shifted phase side by side
    if params.phase == "auto":
        moved_phase = torch.empty((2, *after.shape), device=after.device)
    theta = torch.add(after, ramp, out=None if moved_phase is None else moved_phase[1])
    if params.phase != "shift":
        # carried forward over -offset_frames at the measured advance: the bin centre's part
        # (exact, per row; its advance over one frame from the same call) plus the deviation
        # from it (per cell)
        frames = torch.ones(2, device=source.bin_hz.device)  # filled there: no copy from the host
        frames[:1].fill_(-params.offset_frames)  # (item assignment copies a host scalar up)
        ramps = phase_ramp(source.bin_hz, frames, hop=hop, sample_rate=rate).to(torch.float32)
        centre, omega = ramps[:, :1], ramps[:, 1:]
        deviation = wrap((after - source.phase[..., :-1]).sub_(omega))
        if abs(params.offset_frames) > 2048:  # keep the product exact to float32 rounding
            carried = wrap(deviation.double() * -params.offset_frames).to(torch.float32)
        else:
            carried = deviation.mul_(-params.offset_frames)  # (not constant(): one kept a value)
        out = None if moved_phase is None else moved_phase[0]
        continued = torch.add(theta, centre, out=out).add_(carried)
        if params.phase == "continue":
            theta = continued
        else:  # auto: continue only where the destination already holds what is carried there
            here = (slice(None), rows)
            judge = kept(Continuation, after.shape, after.device, cells=after[0].numel())
            sure = judge(magnitude[here], phase[here], source.magnitude[..., 1:], moved_phase)
            theta = blend_phase(theta, continued, sure, spare=continued)
    box = (slice(None), slice(None), columns)
    inner = (slice(None), rows, columns)
    copied = source.magnitude[..., 1:][box], wrap(theta[box])
    if source.valid is None:
        return copied
    valid = source.valid[:, columns]
    return select(valid, copied[0], magnitude[inner]), select(valid, copied[1], phase[inner])
