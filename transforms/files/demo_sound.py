"""The built-in demo sound, synthesised from the recipe in ``resources/demo_sound.json``.

No audio file is shipped: the recipe holds the parameters as data (a chord with vibrato, a chirp,
band-limited noise bursts, a drum-like click pattern) and :func:`demo_samples` renders them at any
sample rate. Every part has visible structure in a spectrogram: harmonic stacks that wobble, a
rising line, rectangles of noise and vertical stripes.
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np

RECIPE = "demo_sound.json"


def load_recipe() -> dict:
    """The recipe as a dict (see ``resources/demo_sound.json`` for the fields and units)."""
    text = resources.files("spectropaint.resources").joinpath(RECIPE).read_text(encoding="utf-8")
    return json.loads(text)


def _pan(mono: np.ndarray, pan: float) -> np.ndarray:
    """Constant-power pan of ``mono [N]`` to ``[2, N]`` (pan -1 left ... 1 right)."""
    angle = (pan + 1) * np.pi / 4
    return np.stack([np.cos(angle) * mono, np.sin(angle) * mono])


def _envelope(
    t: np.ndarray, start: float, stop: float, attack: float, release: float
) -> np.ndarray:
    """Linear attack and release between ``start`` and ``stop`` seconds, zero outside."""
    rise = np.clip((t - start) / attack, 0, 1)
    fall = np.clip((stop - t) / release, 0, 1)
    return rise * fall


def _chord(t: np.ndarray, part: dict, sample_rate: int) -> np.ndarray:
    vibrato = 2 ** (part["vibrato_cents"] / 1200 * np.sin(2 * np.pi * part["vibrato_hz"] * t))
    env = _envelope(t, part["start_s"], part["stop_s"], part["attack_s"], part["release_s"])
    out = np.zeros_like(t)
    nyquist = sample_rate / 2
    for f0 in part["fundamentals_hz"]:
        for k in range(1, part["harmonics"] + 1):
            if f0 * k * 2 ** (part["vibrato_cents"] / 1200) >= nyquist:
                break
            phase = 2 * np.pi * np.cumsum(f0 * k * vibrato) / sample_rate
            out += part["harmonic_rolloff"] ** (k - 1) * np.sin(phase)
    return part["gain"] * env * out


def _chirp(t: np.ndarray, part: dict, sample_rate: int) -> np.ndarray:
    """An exponential sweep: equal time per octave, a straight line on a log-frequency axis."""
    start, stop = part["start_s"], part["stop_s"]
    inside = (t >= start) & (t < stop)
    ratio = part["to_hz"] / part["from_hz"]
    frequency = part["from_hz"] * ratio ** np.clip((t - start) / (stop - start), 0, 1)
    phase = 2 * np.pi * np.cumsum(np.where(inside, frequency, 0.0)) / sample_rate
    env = _envelope(t, start, stop, part["fade_s"], part["fade_s"])
    return part["gain"] * env * np.sin(phase)


def _noise_burst(
    t: np.ndarray, part: dict, sample_rate: int, rng: np.random.Generator
) -> np.ndarray:
    """White noise band-limited by zeroing FFT bins outside ``[low_hz, high_hz]``."""
    start = int(round(part["start_s"] * sample_rate))
    length = int(round(part["duration_s"] * sample_rate))
    spectrum = np.fft.rfft(rng.standard_normal(length))
    freqs = np.fft.rfftfreq(length, 1 / sample_rate)
    spectrum[(freqs < part["low_hz"]) | (freqs > part["high_hz"])] = 0
    burst = np.fft.irfft(spectrum, n=length)
    burst *= np.hanning(length) / max(np.abs(burst).max(), 1e-12)
    out = np.zeros_like(t)
    stop = min(len(t), start + length)
    out[start:stop] = part["gain"] * burst[: stop - start]
    return out


def _clicks(t: np.ndarray, part: dict, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """A drum-like pattern: each hit is a decaying low sine ("thump") plus a decaying noise click."""
    out = np.zeros_like(t)
    length = int(round(10 * part["thump_decay_s"] * sample_rate))
    age = np.arange(length) / sample_rate
    thump = np.sin(2 * np.pi * part["thump_hz"] * age) * np.exp(-age / part["thump_decay_s"])
    for index in range(part["count"]):
        start = int(round((part["start_s"] + index * part["period_s"]) * sample_rate))
        stop = min(len(t), start + length)
        click = rng.standard_normal(length) * np.exp(-age / part["click_decay_s"])
        out[start:stop] += (thump + part["click_gain"] * click)[: stop - start]
    return part["gain"] * out


def demo_samples(sample_rate: int = 44100) -> np.ndarray:
    """Render the demo recipe.

    Parameters
    ----------
    sample_rate : int
        Samples per second of the result.

    Returns
    -------
    np.ndarray [shape=(2, round(duration_s * sample_rate))], float64
        Stereo samples whose peak is the recipe's ``peak`` (below full scale).
    """
    recipe = load_recipe()
    rng = np.random.default_rng(recipe["seed"])
    t = np.arange(int(round(recipe["duration_s"] * sample_rate))) / sample_rate
    stereo = _pan(_chord(t, recipe["chord"], sample_rate), recipe["chord"]["pan"])
    stereo += _pan(_chirp(t, recipe["chirp"], sample_rate), recipe["chirp"]["pan"])
    for burst in recipe["noise_bursts"]:
        stereo += _pan(_noise_burst(t, burst, sample_rate, rng), burst["pan"])
    stereo += _pan(_clicks(t, recipe["clicks"], sample_rate, rng), recipe["clicks"]["pan"])
    return stereo * (recipe["peak"] / np.abs(stereo).max())
