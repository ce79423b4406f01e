"""Read-only reference views of the audio: nnAudio's constant-Q (CQT) and variable-Q (VQT)
transforms, computed on the document's torch device (the GPU where there is one).

Not editable (nnAudio has no exact inverse for them); they let constant-Q content be inspected while
editing in the STFT. :func:`constant_q` returns magnitudes, band centres and the hop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from spectropaint.transforms.errors import SettingsError

KINDS = ("CQT", "VQT")
HOP = 512


@dataclass(frozen=True)
class ConstantQ:
    """A reference analysis: ``magnitude`` ``[bins, frames]`` float32, ``band_hz`` ``[bins]``,
    frames ``hop`` samples apart (centred)."""

    magnitude: np.ndarray
    band_hz: np.ndarray
    hop: int


def constant_q(
    samples: np.ndarray,
    sample_rate: int,
    *,
    kind: str = "CQT",
    bins_per_octave: int = 24,
    fmin: float = 32.70,
    gamma: float = 20.0,
    device: torch.device | str = "cpu",
) -> ConstantQ:
    """nnAudio's CQT (``CQT1992v2``) or VQT (bandwidths widened by ``gamma`` Hz) of one channel.

    Parameters
    ----------
    samples : np.ndarray [shape=(N,)]
    sample_rate : int
    kind : str
        ``'CQT'`` or ``'VQT'``.
    bins_per_octave : int
        12 to 96; bands run from ``fmin`` up to just below 0.45 times the sample rate.
    """
    if kind not in KINDS:
        raise SettingsError(f"reference view must be one of {', '.join(KINDS)}, not {kind!r}")
    if not 12 <= bins_per_octave <= 96:
        raise SettingsError(f"bins per octave must be from 12 to 96, not {bins_per_octave}")
    top = 0.45 * sample_rate
    if not 0 < fmin < top / 2:
        raise SettingsError(f"fmin must be from 0 to {top / 2:g} Hz, not {fmin:g}")
    n_bins = int(math.floor(math.log2(top / fmin) * bins_per_octave))
    from nnAudio.features import VQT, CQT1992v2

    options = dict(
        sr=sample_rate,
        hop_length=HOP,
        fmin=fmin,
        n_bins=n_bins,
        bins_per_octave=bins_per_octave,
        output_format="Magnitude",
        verbose=False,
    )
    module = CQT1992v2(**options) if kind == "CQT" else VQT(gamma=gamma, **options)
    module = module.to(device)
    signal = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32)).to(device)
    with torch.no_grad():
        magnitude = module(signal[None])[0]
    band_hz = fmin * 2.0 ** (np.arange(n_bins) / bins_per_octave)
    return ConstantQ(magnitude.cpu().numpy(), band_hz, HOP)
