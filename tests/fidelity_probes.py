"""Synthetic music-like recordings and probes for the fidelity tests and benchmark.

No recordings ship with the repository and the machines have no network, so "real recordings" are
stood in for by signals with the structures that make STFT editing hard, all rendered at 44.1 kHz
and rounded to 24-bit:

- :func:`band`: a small band, a bass line and a chord of harmonic tones with vibrato and tremolo,
  plucked notes (decaying harmonics, slightly inharmonic), a drum kit (pitch-swept kick, noise
  snare, hi-hat), and a noise floor;
- :func:`tone`: a steady sinusoid, the probe for phase continuation.
"""

from __future__ import annotations

import numpy as np

RATE = 44100


def to_24_bit(samples: np.ndarray) -> np.ndarray:
    """``samples`` rounded to the 24-bit integer grid (as a 24-bit WAV would hold them)."""
    scale = 2.0**23
    return np.clip(np.round(samples * scale), -scale, scale - 1) / scale


def _harmonic_note(t, f0, start, stop, *, harmonics=8, rolloff=0.7, vibrato=0.0, rng=None):
    inside = (t >= start) & (t < stop)
    local = np.where(inside, t - start, 0.0)
    attack = np.clip(local / 0.03, 0, 1)
    release = np.clip((stop - t) / 0.08, 0, 1)
    env = inside * attack * release * (1 + 0.15 * np.sin(2 * np.pi * 4.5 * local))
    wobble = 2 ** (vibrato / 1200 * np.sin(2 * np.pi * 5.5 * local))
    out = np.zeros_like(t)
    phase0 = rng.uniform(0, 2 * np.pi, harmonics)
    for k in range(1, harmonics + 1):
        if f0 * k * 1.01 > RATE / 2.2:
            break
        phase = 2 * np.pi * np.cumsum(f0 * k * wobble) / RATE + phase0[k - 1]
        out += rolloff ** (k - 1) * np.sin(phase)
    return env * out


def _pluck(t, f0, start, *, decay=0.6, rng=None):
    local = t - start
    after = local >= 0
    out = np.zeros_like(t)
    for k in range(1, 16):
        fk = f0 * k * np.sqrt(1 + 0.0004 * k * k)  # a stiff string's stretched partials
        if fk > RATE / 2.2:
            break
        env = np.exp(-np.maximum(local, 0) * k / decay) / k
        out += env * np.sin(2 * np.pi * fk * np.maximum(local, 0) + rng.uniform(0, 2 * np.pi))
    return after * out * np.clip(local / 0.002, 0, 1)


def _drums(t, bpm, rng):
    out = np.zeros_like(t)
    beat = 60.0 / bpm
    n = len(t)
    for i, when in enumerate(np.arange(0.05, t[-1], beat / 2)):
        local = t - when
        after = local >= 0
        lt = np.maximum(local, 0)
        if i % 4 == 0:  # kick: a sine swept down from 150 to 50 Hz
            sweep = 2 * np.pi * (50 * lt + 100 * 0.04 * (1 - np.exp(-lt / 0.04)))
            out += after * 0.8 * np.exp(-lt / 0.15) * np.sin(sweep)
        elif i % 4 == 2:  # snare: noise and a 190 Hz body
            body = np.sin(2 * np.pi * 190 * lt)
            out += after * np.exp(-lt / 0.08) * (0.35 * rng.standard_normal(n) + 0.3 * body)
        hat = np.diff(rng.standard_normal(n + 1))  # hi-hat on every half beat: differenced noise
        out += after * 0.12 * np.exp(-lt / 0.02) * hat
    return out


def band(seconds: float = 6.0, *, seed: int = 0, channels: int = 1) -> np.ndarray:
    """A few seconds of a small band, ``[channels, N]`` float64 at 24-bit resolution, peak -3 dBFS.

    Chords of vibrato tones change every second, a bass line and plucked notes move every half
    second, and drums play at 120 beats per minute, so any box of a few hundred milliseconds holds
    different music from one a second away.
    """
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    mono = np.zeros(n)
    chords = [(220.0, 277.2, 329.6), (196.0, 246.9, 293.7), (174.6, 220.0, 261.6), (246.9, 311.1)]
    for i, start in enumerate(np.arange(0.0, seconds, 1.0)):
        for f0 in chords[i % len(chords)]:
            mono += 0.12 * _harmonic_note(t, f0, start, start + 0.98, vibrato=18, rng=rng)
    for i, start in enumerate(np.arange(0.0, seconds, 0.5)):
        mono += 0.3 * _harmonic_note(
            t,
            [55.0, 61.7, 49.0, 73.4][i % 4] * 2,
            start,
            start + 0.45,
            harmonics=5,
            rolloff=0.5,
            rng=rng,
        )
        mono += 0.25 * _pluck(t, [659.3, 587.3, 784.0, 523.3, 880.0][i % 5], start + 0.25, rng=rng)
    mono += 0.5 * _drums(t, 120, rng)
    mono += 1e-3 * rng.standard_normal(n)
    out = np.stack([np.roll(mono, 37 * c) * (1 - 0.1 * c) for c in range(channels)])
    return to_24_bit(out * (0.708 / np.abs(out).max()))


def tone(seconds: float = 3.0, *, hz: float = 1000.0, level: float = 0.25) -> np.ndarray:
    """A steady sinusoid ``[1, N]`` of ``hz`` and amplitude ``level``."""
    t = np.arange(int(seconds * RATE)) / RATE
    return (level * np.sin(2 * np.pi * hz * t + 0.3))[None, :]


# ----------------------------------------------------------------------------------- strokes
def zigzag(frame0: float, frame1: float, bin0: float, bin1: float, *, rows: float) -> list:
    """Input events filling a box by a zigzag: horizontal passes ``rows`` bins apart."""
    from spectropaint.brushes.stroke import InputEvent

    events, t = [], 0.0
    for i, y in enumerate(np.arange(bin0, bin1 + 1e-9, rows)):
        ends = (frame0, frame1) if i % 2 == 0 else (frame1, frame0)
        for x in np.linspace(*ends, 24):
            events.append(InputEvent(t, float(x), float(y)))
            t += 1 / 60
    return events


# ------------------------------------------------------------------------------- measuring
def heard(document) -> np.ndarray:
    """The re-analysed output: complex coefficients ``[C, F, T]`` of the exported samples."""
    import torch

    from spectropaint.transforms.stft import STFT

    samples = torch.from_numpy(document.edited_samples())
    stft = STFT(document.settings)
    return stft.analyse_frames(samples, 0, 0, stft.n_frames(samples.shape[-1])).numpy()


def shown(document) -> np.ndarray:
    """The document's coefficients ``[C, F, T]`` (what the canvas shows)."""
    block = document.blocks[0]
    return block.magnitude.numpy() * np.exp(1j * block.phase.numpy())


def eroded(mask: np.ndarray, cells: int) -> np.ndarray:
    """The cells of ``mask [F, T]`` at least ``cells`` cells in from its edge."""
    import scipy.ndimage

    if cells == 0:
        return mask
    return scipy.ndimage.binary_erosion(mask, iterations=cells, border_value=0)


def energy_db(values: np.ndarray, reference: np.ndarray, where: np.ndarray) -> float:
    """Energy of ``values`` over ``where`` relative to ``reference``'s, dB."""
    a = float((np.abs(values[..., where]) ** 2).sum())
    b = float((np.abs(reference[..., where]) ** 2).sum())
    return 10 * np.log10(max(a, 1e-300) / max(b, 1e-300))


def snr_db(output: np.ndarray, ideal: np.ndarray) -> float:
    """``ideal``'s energy over that of ``output - ideal``, dB."""
    error = float(np.sum((output - ideal) ** 2))
    return 10 * np.log10(float(np.sum(ideal**2)) / max(error, 1e-300))


def tone_snr_db(output: np.ndarray, hz: float, start: int, stop: int) -> tuple[float, float]:
    """SNR of samples ``[start, stop)`` against the best-fitting sinusoid at ``hz`` (its amplitude
    and phase fitted), and that amplitude: how pure a tone of unknown phase is."""
    n = np.arange(start, stop)
    basis = np.stack([np.cos(2 * np.pi * hz * n / RATE), np.sin(2 * np.pi * hz * n / RATE)], 1)
    coefficients, *_ = np.linalg.lstsq(basis, output[start:stop], rcond=None)
    fitted = basis @ coefficients
    return snr_db(output[start:stop], fitted), float(np.hypot(*coefficients))


def spectral_convergence_db(found: np.ndarray, target: np.ndarray, where: np.ndarray) -> float:
    """``|| |found| - target || / || target ||`` over the cells ``where`` (``[F, T]``), dB."""
    error = np.linalg.norm((np.abs(found) - target)[..., where])
    return 20 * np.log10(error / np.linalg.norm(target[..., where]))


def envelope_and_frequency(signal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Amplitude envelope and instantaneous frequency (Hz, between samples) of a narrow-band
    signal, from its analytic signal."""
    import scipy.signal

    analytic = scipy.signal.hilbert(signal)
    phase = np.unwrap(np.angle(analytic))
    return np.abs(analytic), np.diff(phase) * RATE / (2 * np.pi)
