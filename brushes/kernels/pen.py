"""Pen: paint new energy, a steady tone at each covered bin's centre frequency.

The tone's phase at frame ``t`` of a bin of frequency ``f`` is ``2 pi hop f t / sr`` (:mod:`.phase`),
so it advances coherently from frame to frame and resynthesises as a sinusoid. It is added to what is
there (the complex coefficients add), at ``level_db`` relative to a full-scale sinusoid.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from spectropaint.brushes.kernels.context import DabContext, PointwiseParams
from spectropaint.brushes.kernels.phase import phase_ramp
from spectropaint.brushes.params import check_params, param


@dataclass(frozen=True)
class PenParams(PointwiseParams):
    """``level_db``: the painted tone's level per bin, dB relative to full scale, -120..+6."""

    level_db: float = param(-30.0, "Level", "dB", low=-120.0, high=6.0, decimals=1)

    def __post_init__(self) -> None:
        check_params(self)


def pen(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    mask: torch.Tensor,
    params: PenParams,
    context: DabContext,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The box's coefficients plus a tone of ``level_db`` whose phase follows the bin's frequency
    (times the frames' share of the signal, where blocks split it over time)."""
    rows, columns = context.inner
    inner = (slice(None), rows, columns)
    tone_phase = phase_ramp(
        context.bin_hz[rows],
        context.frames[columns],
        hop=context.hop,
        sample_rate=context.sample_rate,
    ).to(torch.float32)
    amplitude = context.full_scale * 10.0 ** (params.level_db / 20.0)
    if context.frame_weight is not None:
        amplitude = amplitude * context.frame_weight[columns]
    old_magnitude, old_phase = magnitude[inner], phase[inner]
    real = old_magnitude * torch.cos(old_phase) + amplitude * torch.cos(tone_phase)
    imag = old_magnitude * torch.sin(old_phase) + amplitude * torch.sin(tone_phase)
    return torch.sqrt(real * real + imag * imag), torch.atan2(imag, real)
