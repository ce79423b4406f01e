"""Conversions between the units of sound: samples, seconds, frames; Hz, bins, semitones, notes;
and the frequency warps of the display axes; and how labels write a time, a frequency, a level. Pure
functions, keyword-only after the value.

Frames and bins belong to one transform's grid (a block: ``hop``, the sample of frame 0, the band
frequencies); people think in seconds and Hz, so positions and sizes that outlive a transform are
kept in those, and converted here. Values may be numbers or numpy arrays.
"""

from __future__ import annotations

import math

import numpy as np

A4_HZ = 440.0
NOTE_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
C0_TO_A4 = 57
"""Semitones from C0 to A4."""
FREQ_SCALES = ("linear", "log", "mel")
"""Frequency axes: linear in Hz, in log Hz (musical), or in HTK mel."""


# --- time ---------------------------------------------------------------------------------------
def samples_to_seconds(samples, *, sample_rate: float):
    return np.asarray(samples, dtype=np.float64) / sample_rate


def seconds_to_samples(seconds, *, sample_rate: float):
    """The nearest sample index (an int for a number, int64 for an array)."""
    result = np.rint(np.asarray(seconds, dtype=np.float64) * sample_rate).astype(np.int64)
    return int(result) if result.ndim == 0 else result


def frames_to_seconds(frames, *, hop: int, sample_rate: float, frame0_sample: int = 0):
    """Time of frame centres (fractional frames allowed); ``frame0_sample`` is frame 0's centre."""
    return (frame0_sample + hop * np.asarray(frames, dtype=np.float64)) / sample_rate


def seconds_to_frames(seconds, *, hop: int, sample_rate: float, frame0_sample: int = 0):
    """Inverse of :func:`frames_to_seconds` (fractional frames)."""
    return (np.asarray(seconds, dtype=np.float64) * sample_rate - frame0_sample) / hop


# --- frequency ----------------------------------------------------------------------------------
def fft_frequencies(*, n_fft: int, sample_rate: float) -> np.ndarray:
    """Centre frequencies of the ``n_fft // 2 + 1`` bins of a real FFT, Hz."""
    return np.arange(n_fft // 2 + 1) * (sample_rate / n_fft)


def bins_to_hz(bins, *, band_hz: np.ndarray):
    """Frequency at fractional bin positions of a block whose bin ``k`` is centred on
    ``band_hz[k]`` (linear interpolation between centres, so it suits any band spacing)."""
    band = np.asarray(band_hz, dtype=np.float64)
    positions = np.arange(len(band), dtype=np.float64)
    bins = np.asarray(bins, dtype=np.float64)
    if len(band) < 2:
        return np.full_like(bins, band[0] if len(band) else 0.0)
    step0, step1 = band[1] - band[0], band[-1] - band[-2]
    inside = np.interp(bins, positions, band)
    below = band[0] + (bins - 0) * step0
    above = band[-1] + (bins - (len(band) - 1)) * step1
    return np.where(bins < 0, below, np.where(bins > len(band) - 1, above, inside))


def hz_to_bins(hz, *, band_hz: np.ndarray):
    """Inverse of :func:`bins_to_hz` (fractional bins; ``band_hz`` increasing)."""
    band = np.asarray(band_hz, dtype=np.float64)
    positions = np.arange(len(band), dtype=np.float64)
    hz = np.asarray(hz, dtype=np.float64)
    if len(band) < 2:
        return np.zeros_like(hz)
    step0, step1 = band[1] - band[0], band[-1] - band[-2]
    inside = np.interp(hz, band, positions)
    below = (hz - band[0]) / step0
    above = len(band) - 1 + (hz - band[-1]) / step1
    return np.where(hz < band[0], below, np.where(hz > band[-1], above, inside))


def even_step(values) -> float | None:
    """The spacing of evenly spaced ``values`` (band centres, Hz, increasing), or None.

    Every neighbouring difference must equal ``(values[-1] - values[0]) / (n - 1)`` to 1e-6
    relative; fewer than two values have no spacing (None). An STFT's bands are evenly spaced, an
    NSGT's are not.
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:
        return None
    step = float(values[-1] - values[0]) / (len(values) - 1)
    return step if np.allclose(np.diff(values), step, rtol=1e-6, atol=0.0) else None


def hz_to_semitones(hz, *, reference_hz: float = A4_HZ):
    """Semitones above ``reference_hz`` (negative below); NaN for 0 Hz or below."""
    hz = np.asarray(hz, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hz > 0, 12.0 * np.log2(hz / reference_hz), np.nan)


def semitones_to_hz(semitones, *, reference_hz: float = A4_HZ):
    return reference_hz * 2.0 ** (np.asarray(semitones, dtype=np.float64) / 12.0)


def note_of(hz: float) -> tuple[str, float]:
    """The nearest equal-tempered note (A4 = 440 Hz) and the offset from it in cents
    (``('', 0.0)`` for 0 Hz or below)."""
    if not hz > 0:
        return "", 0.0
    semitones = float(hz_to_semitones(hz)) + C0_TO_A4
    nearest = round(semitones)
    return f"{NOTE_NAMES[nearest % 12]}{nearest // 12}", 100 * (semitones - nearest)


def note_label(hz: float) -> str:
    """``'A4 +3¢'`` style text for a frequency (empty for 0 Hz or below)."""
    name, cents = note_of(hz)
    return f"{name} {cents:+.0f}¢" if name else ""


def octave_c_hz(octave: int) -> float:
    """Frequency of C in ``octave`` (C4 is middle C, 261.6 Hz)."""
    return float(semitones_to_hz(12 * octave - C0_TO_A4))


# --- display axes -------------------------------------------------------------------------------
def warp(hz, scale: str):
    """Frequency in Hz to the screen-linear unit of ``scale`` (Hz, natural log of Hz, HTK mel)."""
    hz = np.asarray(hz, dtype=np.float64)
    if scale == "log":
        return np.log(hz)
    if scale == "mel":
        return 2595.0 * np.log10(1.0 + hz / 700.0)
    return hz


def unwarp(value, scale: str):
    """Inverse of :func:`warp`."""
    value = np.asarray(value, dtype=np.float64)
    if scale == "log":
        return np.exp(value)
    if scale == "mel":
        return 700.0 * (10.0 ** (value / 2595.0) - 1.0)
    return value


# --- labels -------------------------------------------------------------------------------------
# What history entries, operation names and messages write for a time, a frequency or a level: one
# precision each, wherever it appears. (Axis ticks write their round values as they are:
# spectropaint.gpu.axis_ticks; the readout has its own fixed-width columns.)
def seconds_label(seconds: float) -> str:
    """``'1.25 s'``: a time to the hundredth of a second."""
    return f"{seconds:.2f} s"


def seconds_span_label(start: float, stop: float) -> str:
    """``'1.25-2.50 s'``: two times as :func:`seconds_label` writes them, one unit."""
    return f"{start:.2f}-{stop:.2f} s"


def hz_label(hz: float) -> str:
    """``'55.0 Hz'``, ``'440 Hz'``, ``'1.23 kHz'``, ``'12.3 kHz'``: three significant digits (at
    most one decimal of a Hz), in kHz from 1 kHz on."""
    value = float(f"{hz:.3g}")
    if value == 0:
        return "0 Hz"
    unit, most = "Hz", 1
    if abs(value) >= 1000:
        value, unit, most = value / 1000, "kHz", 2
    decimals = min(most, max(0, 2 - math.floor(math.log10(abs(value)))))
    return f"{value:.{decimals}f} {unit}"


def db_label(db: float, *, signed: bool = True) -> str:
    """``'+3.0 dB'``, ``'-12.5 dB'`` (``'6.0 dB'`` unsigned): a level to the tenth of a dB."""
    text = f"{db:+.1f}" if signed else f"{db:.1f}"
    if float(text) == 0:
        text = "+0.0" if signed else "0.0"
    return f"{text} dB"
