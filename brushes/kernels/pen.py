"""Pen: the preview of a partial that follows the pointer, painted while the stroke is drawn.

Each dab paints, around its centre's fractional bin ``y``, the coefficients a steady partial at that
frequency has: for a line (a brush at most :data:`~spectropaint.brushes.pen_partial.LINE_BINS`
high) the Hann window's main lobe ``|W(b - y)|`` scaled to ``level_db`` at its peak, for a wider
brush the dab's profile across the band, each bin's phase that of the partial (``2 pi f hop t / sr``
less ``pi b``, the phase of frame ``t``'s window centre). It is added to what is there (the complex
coefficients add). When the stroke ends its settle replaces the preview with the partial itself,
synthesised in the time domain with its phase integrated along the path, any harmonics, and the
band's noise (:mod:`spectropaint.brushes.pen_partial`).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch

from spectropaint.brushes.kernels import pen_fused, triton_math
from spectropaint.brushes.kernels.context import DabContext, PointwiseParams
from spectropaint.brushes.kernels.phase import phase_ramp
from spectropaint.brushes.params import check_params, param
from spectropaint.brushes.pen_partial import LINE_BINS


@dataclass(frozen=True)
class PenParams(PointwiseParams):
    """The partial's level and harmonics.

    Attributes
    ----------
    level_db : float
        Amplitude relative to a full-scale sinusoid, -120..+6 dB (also what each bin across a wide
        brush's band shows).
    harmonics : int
        Partials at 1, 2, ... times the frequency, 1..64 (1: the fundamental alone).
    rolloff_db : float
        How much quieter each octave of harmonics is, 0..60 dB.
    """

    level_db: float = param(-30.0, "Level", "dB", low=-120.0, high=6.0, decimals=1)
    harmonics: int = param(1, "Harmonics", low=1, high=64, integer=True, decimals=0)
    rolloff_db: float = param(6.0, "Roll-off", "dB/octave", low=0.0, high=60.0, decimals=1)

    def __post_init__(self) -> None:
        check_params(self)


def main_lobe(offset: torch.Tensor) -> torch.Tensor:
    """``|W(offset)| / W(0)`` of the periodic Hann window, ``offset`` in bins; 0 beyond 2 bins."""
    x = offset.abs().clamp_max(2.0)
    near_one = (x - 1.0).abs() < 1e-4
    value = torch.sinc(x) / torch.where(near_one, torch.ones_like(x), 1.0 - x * x)
    value = torch.where(near_one, torch.full_like(x, 0.5), value).abs()
    return torch.where(x < 2.0, value, torch.zeros_like(x))


def band_profile(offset: torch.Tensor, radius: float, hardness: float) -> torch.Tensor:
    """The dab's falloff across frequency: 1 within ``hardness * radius`` bins, a raised cosine to
    0 at ``radius``."""
    distance = offset.abs() / radius
    ramp = ((distance - hardness) / max(1.0 - hardness, 1e-9)).clamp(0.0, 1.0)
    return torch.where(distance < 1.0, 0.5 + 0.5 * torch.cos(math.pi * ramp), 0.0)


PenInto = triton_math.KernelInto(pen_fused.pen, pen_fused.available, reads_kept=True)
"""The pen's fused kernel blending into the document (an STFT's dabs; the brush's
:attr:`~spectropaint.brushes.registry.BrushKind.blends_into`)."""


def pen(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    mask: torch.Tensor,
    params: PenParams,
    context: DabContext,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The box's coefficients plus those of a partial at the dab's fractional bin: a main lobe of
    the analysis window around it (an STFT); in bands that split the signal over time (the NSGT),
    a tone at each band's centre weighted by its frames' share; for a fill (no dab centre), a tone
    at each band's centre. On CUDA an STFT's dab is one launch (:mod:`.pen_fused`) where Triton is
    installed."""
    if pen_fused.available(magnitude.device, context):
        with contextlib.suppress(triton_math.Unavailable):  # (then torch's path)
            return pen_fused.pen(magnitude, phase, params, context)
    rows, columns = context.inner
    inner = (slice(None), rows, columns)
    if context.frame_weight is not None or context.bins is None:
        # bands (the NSGT), or a fill with no dab centre: a tone at each band's centre
        tone_phase = phase_ramp(
            context.bin_hz[rows],
            context.frames[columns],
            hop=context.hop,
            sample_rate=context.sample_rate,
        ).to(torch.float32)
        amplitude = context.full_scale * 10.0 ** (params.level_db / 20.0)
        if context.frame_weight is not None:
            amplitude = amplitude * context.frame_weight[columns][None, :]
        return _added(magnitude[inner], phase[inner], amplitude, tone_phase)
    bins = context.bins[rows].to(torch.float64)[:, None]
    centre = context.centre[1]  # a number, or per cell [B, T]
    offset = bins - centre
    bin_hz = context.bin_hz[rows][:, None]
    step_hz = context.band_step_hz
    if step_hz is None:  # the rows' spacing, read on the device (a host read would wait for it)
        step_hz = bin_hz[1:2] - bin_hz[0:1] if bin_hz.shape[0] > 1 else 0.0
    frequency = bin_hz - offset * step_hz  # the dab's frequency, seen from each cell
    radius_bins = context.radius[1]
    if radius_bins <= LINE_BINS:
        shape = main_lobe(offset)
    else:
        shape = band_profile(offset, radius_bins, context.hardness)
    tone_phase = phase_ramp(
        frequency, context.frames[columns], hop=context.hop, sample_rate=context.sample_rate
    ) - math.pi * torch.remainder(bins, 2.0)
    tone_phase = tone_phase.to(torch.float32)
    amplitude = (context.full_scale * 10.0 ** (params.level_db / 20.0) * shape).to(torch.float32)
    return _added(magnitude[inner], phase[inner], amplitude, tone_phase)


def _added(old_magnitude, old_phase, amplitude, tone_phase) -> tuple[torch.Tensor, torch.Tensor]:
    """Coefficients plus a tone of ``amplitude`` and ``tone_phase``, in polar form."""
    real = old_magnitude * torch.cos(old_phase) + amplitude * torch.cos(tone_phase)
    imag = old_magnitude * torch.sin(old_phase) + amplitude * torch.sin(tone_phase)
    return torch.sqrt(real * real + imag * imag), torch.atan2(imag, real)
