"""Phase bookkeeping for brushes that create or move energy.

Three facts about a centred STFT keep moved or painted energy coherent:

- A steady sinusoid at a bin's centre frequency ``f`` advances by ``omega = 2 pi hop f / sr`` per
  frame; the pen paints exactly that ramp (:func:`phase_ramp`).
- The advance actually measured in a cell (the backward difference of phase, unwrapped around
  ``omega``) is that of whatever tone dominates it, bin centre or not.
- Moving energy from a bin at ``f_s`` to one at ``f_d`` is a modulation by ``f_d - f_s``: its phase at
  frame ``t`` gains ``2 pi hop (f_d - f_s) t / sr``, after which it is heard at the new frequency.

Moved energy keeps its phase in one of two ways (:data:`PHASE_MODES`): ``continue`` carries each cell
forward by its measured advance over the distance moved, so a steady tone (a hum, a held note) moved
or cloned in time stays in phase with itself around the patch; ``shift`` moves coefficients as they
are, which is exact for a pure time shift of whole frames and keeps clicks sharp.
"""

from __future__ import annotations

import math

import torch

PHASE_MODES = ("continue", "shift")


def wrap(angle: torch.Tensor) -> torch.Tensor:
    """Angles reduced to ``[-pi, pi)``."""
    return torch.remainder(angle + math.pi, 2 * math.pi) - math.pi


def phase_ramp(
    bin_hz: torch.Tensor, frames: torch.Tensor, *, hop: int, sample_rate: int
) -> torch.Tensor:
    """``2 pi frac(hop f t / sr)`` for every frequency ``f`` and frame ``t``.

    Parameters
    ----------
    bin_hz : torch.Tensor [shape=(B,) or (B, T)]
        Frequencies in Hz (float64 for accuracy: ten minutes at hop 512 is over 10^7 cycles).
    frames : torch.Tensor [shape=(T,)]
        Frame indices (or fractional frame positions).

    Returns
    -------
    torch.Tensor [shape=(B, T)], float64, radians in ``[0, 2 pi)``.
    """
    rate = bin_hz.to(torch.float64) * (hop / sample_rate)
    if rate.dim() == 1:
        rate = rate[:, None]
    cycles = rate * frames.to(torch.float64)[None, :]
    return 2 * math.pi * (cycles - torch.floor(cycles))
