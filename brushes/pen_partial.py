"""The pen's partial, synthesised in the time domain: what a pen stroke sounds like.

The pen draws a partial that follows the pointer. Its frequency is interpolated linearly between
the events' positions (fractional bins, not bin centres), its phase is the running integral of that
frequency, and its amplitude is ``level_db`` below a full-scale sinusoid, times the stroke's
strength and pressure. Where the pointer turns back in time, the path is cut into runs that move
one way, each its own partial. Each run's ends fade along the brush's falloff: the partial lasts
``radius_frames`` beyond the first and last events, the last ``1 - hardness`` of that (at least one
hop) a raised cosine, so the ends never click.

Brush width sets the partial's bandwidth. A brush at most :data:`LINE_BINS` bins of the
document's STFT high (a stroke in seconds: its height in Hz, or in semitones at the path's mean
frequency) draws a line: a pure sinusoid. A wider one draws a band of noise around the line whose
spectrum has the dab's profile across frequency (full within ``hardness`` of the radius, a raised
cosine to zero at the rim), as the soft pens of Photosounder and MetaSynth do; each bin across the band's full part shows
``level_db`` on the canvas, as a line's peak bin does. ``harmonics`` adds partials at whole multiples
of the frequency, ``rolloff_db`` quieter per octave, fading out below the Nyquist frequency.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

LINE_BINS = 2.0
"""Brushes up to this half-height (bins) draw a pure partial: the window's main lobe is as wide."""
NYQUIST_FADE = (0.9, 0.97)
"""Harmonics fade out between these fractions of the Nyquist frequency."""


@dataclass(frozen=True)
class PenPath:
    """A pen stroke as the synthesis needs it.

    Attributes
    ----------
    samples : np.ndarray [shape=(E,)]
        Each event's position in samples (its frame times the hop).
    hz : np.ndarray [shape=(E,)]
        Each event's frequency (its fractional bin on the block's frequency axis).
    weights : np.ndarray [shape=(E,)]
        Each event's amplitude factor (strength and pressure).
    amplitude : float
        The partial's amplitude at weight 1 (``10 ** (level_db / 20)``).
    radius_samples : float
        How far the partial lasts beyond the first and last event.
    fade_samples : float
        Length of the raised-cosine fade at each end.
    band_hz : float
        Half-height of the noise band around the line; 0 for a pure partial.
    hardness : float
        The band's full fraction of ``band_hz``.
    harmonics : int
    rolloff_db : float
    bin_hz : float
        Width of one bin (for the band's level).
    sample_rate : int
    enbw : float
        The window's equivalent noise bandwidth in bins (``N sum w^2 / (sum w)^2``).
    seed : int
        Of the band's noise: the same stroke gives the same sound.
    """

    samples: np.ndarray
    hz: np.ndarray
    weights: np.ndarray
    amplitude: float
    radius_samples: float
    fade_samples: float
    band_hz: float
    hardness: float
    harmonics: int
    rolloff_db: float
    bin_hz: float
    sample_rate: int
    enbw: float
    seed: int

    @classmethod
    def of_stroke(cls, stroke) -> PenPath:
        """The path of a finished pen stroke (:class:`~spectropaint.brushes.engine.StrokeSession`),
        its events in the first block's cells and its radii in the stroke's plane (frames and bins,
        or seconds and semitones or Hz: the band's height then in Hz, or in semitones at the
        path's mean frequency)."""
        document = stroke.document
        block = document.blocks[0]
        settings, params = stroke.state.settings, stroke.state.params
        events = np.array([(e.x, e.y, e.pressure) for e in stroke.events], dtype=np.float64)
        band = np.asarray(block.band_hz, dtype=np.float64)
        bins = np.arange(band.size)
        bin_hz = float(band[1] - band[0]) if band.size > 1 else float(document.sample_rate)
        # fractional bins to Hz along the block's axis, linear past its ends
        hz = np.interp(events[:, 1], bins, band, left=np.nan, right=np.nan)
        hz = np.where(np.isnan(hz), band[0] + events[:, 1] * bin_hz, hz)
        hop = block.hop
        plane = stroke.state.plane
        radius = stroke.state.blocks[0].radii.radius_frames * hop  # in the stroke's own units
        if plane.pitch == "bins":
            band_bins = plane.radius[1]
        elif plane.pitch == "hz":
            band_bins = plane.radius[1] / bin_hz
        else:  # semitones, at the path's mean frequency
            band_bins = float(np.mean(hz)) * (2.0 ** (plane.radius[1] / 12.0) - 1.0) / bin_hz
        window = document.transform.window.double().cpu().numpy()
        return cls(
            samples=block.layout.frame0_sample + events[:, 0] * hop,
            hz=hz,
            weights=np.array([settings.weight_at(p) for p in events[:, 2]]),
            amplitude=10.0 ** (params.level_db / 20.0),
            radius_samples=radius,
            fade_samples=max((1.0 - settings.hardness) * radius, float(hop)),
            band_hz=0.0 if band_bins <= LINE_BINS else band_bins * bin_hz,
            hardness=settings.hardness,
            harmonics=params.harmonics,
            rolloff_db=params.rolloff_db,
            bin_hz=bin_hz,
            sample_rate=document.sample_rate,
            enbw=window.size * float((window**2).sum()) / float(window.sum()) ** 2,
            seed=zlib.crc32(events.tobytes()),
        )


def monotone_runs(positions: np.ndarray) -> list[np.ndarray]:
    """Indices of the maximal runs of ``positions`` that never turn back (steps of 0 join any run),
    each in increasing order of position."""
    runs, current, direction = [], [0], 0
    for i in range(1, positions.size):
        step = np.sign(positions[i] - positions[i - 1])
        if step and direction and step != direction:
            runs.append(current)
            current, direction = [i - 1], 0
        direction = direction or step
        current.append(i)
    runs.append(current)
    return [np.array(run[::-1] if positions[run[-1]] < positions[run[0]] else run) for run in runs]


def _envelope(n: np.ndarray, first: float, last: float, path: PenPath) -> np.ndarray:
    """1 between the run's ends, fading to 0 at ``radius_samples`` beyond them."""
    begin, end = first - path.radius_samples, last + path.radius_samples
    rise = np.clip((n - begin) / path.fade_samples, 0.0, 1.0)
    fall = np.clip((end - n) / path.fade_samples, 0.0, 1.0)
    return (0.5 - 0.5 * np.cos(np.pi * rise)) * (0.5 - 0.5 * np.cos(np.pi * fall))


def _band_noise(length: int, path: PenPath, rng: np.random.Generator) -> np.ndarray:
    """Complex noise ``[length]`` whose spectrum has the band's profile around 0 Hz, scaled so that
    a Hann-windowed analysis reads ``1`` per unit of amplitude at the profile's full part."""
    size = 1 << max(4, math.ceil(math.log2(length)))
    offsets = np.fft.fftfreq(size, 1.0 / path.sample_rate)
    distance = np.abs(offsets) / path.band_hz
    ramp = np.clip((distance - path.hardness) / max(1.0 - path.hardness, 1e-9), 0.0, 1.0)
    profile = np.where(distance < 1.0, 0.5 + 0.5 * np.cos(np.pi * ramp), 0.0)
    spectrum = profile * (rng.standard_normal(size) + 1j * rng.standard_normal(size))
    noise = np.fft.ifft(spectrum)[:length]
    # A sinusoid of amplitude a reads |X| = a sum(w) / 2 at its peak; real noise of two-sided power
    # density P per Hz reads E|X|^2 = P sample_rate sum(w^2): equal when P = a^2 / (4 enbw bin_hz).
    # Re(z e^(i phase)) puts a quarter of z's density Q on each side, so Q = a^2 / (enbw bin_hz);
    # the draws above give z a density 2 / (size sample_rate) where the profile is full.
    return noise * math.sqrt(size * path.sample_rate / (2.0 * path.enbw * path.bin_hz))


def synthesise_partial(path: PenPath, start: int, stop: int) -> np.ndarray:
    """The pen's sound over samples ``[start, stop)``: float64 ``[stop - start]``.

    Frequencies are integrated from the run's first event, so the phase runs on continuously
    however the path is cut into spans.
    """
    n = np.arange(start, stop, dtype=np.float64)
    out = np.zeros(n.size)
    rng = np.random.default_rng(path.seed)
    nyquist = path.sample_rate / 2
    for run in monotone_runs(path.samples):
        at, hz, weight = path.samples[run], path.hz[run], path.weights[run]
        first, last = float(at[0]), float(at[-1])
        lo = max(start, math.floor(first - path.radius_samples))
        hi = min(stop, math.ceil(last + path.radius_samples) + 1)
        if hi <= lo:
            continue
        # phase integrated from the run's start (not from ``start``), so it is the same however cut
        begin = math.floor(first - path.radius_samples)
        times = np.arange(begin, hi, dtype=np.float64)
        frequency = np.interp(times, at, hz) if at.size > 1 else np.full(times.size, hz[0])
        phase = 2 * np.pi * np.cumsum(frequency) / path.sample_rate
        keep = slice(lo - begin, hi - begin)
        frequency, phase, times = frequency[keep], phase[keep], times[keep]
        level = path.amplitude * _envelope(times, first, last, path)
        level = level * (np.interp(times, at, weight) if at.size > 1 else weight[0])
        noise = _band_noise(times.size, path, rng) if path.band_hz > 0 else None
        sound = np.zeros(times.size)
        for k in range(1, path.harmonics + 1):
            fade = np.clip(
                (NYQUIST_FADE[1] * nyquist - k * frequency)
                / ((NYQUIST_FADE[1] - NYQUIST_FADE[0]) * nyquist),
                0.0,
                1.0,
            )
            if not fade.any():
                break
            gain = 10.0 ** (-path.rolloff_db * math.log2(k) / 20.0) * fade
            carrier = np.exp(1j * k * phase)
            sound += gain * (carrier if noise is None else carrier * noise).real
        out[lo - start : hi - start] += level * sound
    return out
