"""Exporting the edited sound with options: format, sample format (bit depth), sample rate and dither.
No Qt: the export dialog only picks the options.

- **Sample rate**: a polyphase resampler (``scipy.signal.resample_poly``) with a Kaiser-windowed
  low-pass of :data:`TAPS_PER_PHASE` taps per phase centred on :data:`PASSBAND` of the lower
  Nyquist frequency: tones up to 15 kHz come out within -100 dB of the ideal, and what the new
  rate cannot hold (23 kHz going to 44.1 kHz) more than 100 dB down (tests/test_audio_export.py).
  It takes about a second per minute of stereo.
- **Dither**: integer formats get TPDF dither (the sum of two independent uniform noises, one
  least significant bit each, added before rounding), which makes the rounding error a steady
  noise independent of the signal instead of distortion. It is only added when needed: samples that
  already lie on the target's grid (an unedited file exported at its own depth and rate) are written
  as they are, bit for bit.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import soundfile as sf

from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.files.audio_file import ExportReport, write_audio

FORMATS = {"WAV": ".wav", "FLAC": ".flac", "OGG": ".ogg", "AIFF": ".aiff"}
"""Formats offered, with their suffix."""
SAMPLE_FORMATS = {
    "PCM_16": "16-bit integer",
    "PCM_24": "24-bit integer",
    "PCM_32": "32-bit integer",
    "FLOAT": "32-bit float",
    "VORBIS": "Vorbis (lossy)",
}
INTEGER_BITS = {"PCM_16": 16, "PCM_24": 24, "PCM_32": 32}
RATES = (8000, 11025, 16000, 22050, 32000, 44100, 48000, 88200, 96000, 176400, 192000)
TAPS_PER_PHASE = 96
"""Filter length per polyphase branch (the filter has ``TAPS_PER_PHASE * max(up, down) + 1`` taps)."""
KAISER_BETA = 11.0
"""About 110 dB of stopband attenuation."""
PASSBAND = 0.925
"""The low-pass cuts off at this fraction of the lower Nyquist frequency (20 kHz at 44.1 kHz)."""


@dataclass(frozen=True)
class AudioExportOptions:
    """How to write the sound: soundfile ``format`` and ``subtype``, ``sample_rate`` (Hz) and
    whether integer formats get TPDF ``dither``."""

    format: str
    subtype: str
    sample_rate: int
    dither: bool = True

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise SettingsError(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if not sf.check_format(self.format, self.subtype):
            raise SettingsError(f"{self.format} files cannot hold {self.subtype} samples")
        if int(self.sample_rate) != self.sample_rate or self.sample_rate <= 0:
            raise SettingsError(
                f"sample rate must be a positive whole number, not {self.sample_rate}"
            )

    @property
    def suffix(self) -> str:
        return FORMATS[self.format]


def sample_formats(format: str) -> list[str]:
    """The sample formats (subtypes) of :data:`SAMPLE_FORMATS` that ``format`` can hold."""
    return [subtype for subtype in SAMPLE_FORMATS if sf.check_format(format, subtype)]


def resample(samples: np.ndarray, source_rate: int, target_rate: int) -> np.ndarray:
    """``samples [C, N]`` at ``source_rate`` resampled to ``target_rate`` (``[C, M]``, float64,
    ``M = ceil(N * target / source)``)."""
    if source_rate == target_rate:
        return samples
    from scipy.signal import firwin, resample_poly

    common = math.gcd(int(source_rate), int(target_rate))
    up, down = int(target_rate) // common, int(source_rate) // common
    most = max(up, down)
    taps = firwin(TAPS_PER_PHASE * most + 1, PASSBAND / most, window=("kaiser", KAISER_BETA))
    return resample_poly(np.asarray(samples, dtype=np.float64), up, down, axis=-1, window=taps)


def on_grid(samples: np.ndarray, bits: int) -> bool:
    """Whether every sample is exactly a ``bits``-bit integer value (no rounding needed)."""
    scaled = samples * 2.0 ** (bits - 1)
    return bool(np.array_equal(scaled, np.rint(scaled)))


def tpdf_dither(samples: np.ndarray, bits: int, rng: np.random.Generator) -> np.ndarray:
    """``samples`` plus triangular noise of +-1 least significant bit of a ``bits``-bit format."""
    lsb = 2.0 ** -(bits - 1)
    noise = rng.random(samples.shape) - rng.random(samples.shape)
    return samples + noise * lsb


def prepare(
    samples: np.ndarray,
    source_rate: int,
    options: AudioExportOptions,
    *,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The samples ``[C, N]`` to write for ``options``: resampled, then dithered when the target is
    an integer format and they do not already lie on its grid."""
    out = resample(samples, source_rate, options.sample_rate)
    bits = INTEGER_BITS.get(options.subtype)
    if options.dither and bits is not None and bits < 32 and not on_grid(out, bits):
        out = tpdf_dither(out, bits, rng or np.random.default_rng())
    return out


def export_audio(
    document,
    path: str | os.PathLike,
    options: AudioExportOptions,
    *,
    progress: Callable[[float], object] | None = None,
) -> ExportReport:
    """Write ``document``'s edited sound to ``path`` with ``options``, atomically.

    ``progress`` sees resynthesis as the first half and writing as the second; returning ``False``
    cancels and leaves any existing file untouched.
    """

    def half(offset: float):
        return None if progress is None else (lambda done: progress(offset + done / 2))

    samples = document.edited_samples(progress=half(0.0))
    prepared = prepare(samples, document.sample_rate, options)
    return write_audio(
        path,
        prepared,
        options.sample_rate,
        format=options.format,
        subtype=options.subtype,
        progress=half(0.5),
    )
