"""Gain: raise or lower magnitude by a number of dB, phase untouched. Erase is gain towards silence."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from spectropaint.brushes.kernels.context import DabContext, PointwiseParams
from spectropaint.brushes.params import check_params, param

ERASE_DB = -150.0
"""The erase brush's default: below the noise floor of every integer sample format."""


@dataclass(frozen=True)
class GainParams(PointwiseParams):
    """``gain_db``: change of magnitude at full weight, -150..+48 dB."""

    gain_db: float = param(-12.0, "Gain", "dB", low=ERASE_DB, high=48.0, decimals=1)

    def __post_init__(self) -> None:
        check_params(self)


def gain(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    mask: torch.Tensor,
    params: GainParams,
    context: DabContext,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Magnitude of the box times :func:`gain_factor`; phase as it was."""
    inner = (slice(None), *context.inner)
    return magnitude[inner] * gain_factor(params), phase[inner]


def gain_factor(params: GainParams) -> float:
    """What the gain multiplies magnitudes by: ``10^(gain_db / 20)``."""
    return 10.0 ** (params.gain_db / 20.0)
