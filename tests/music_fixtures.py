"""Synthesised music-like signals and damage for the repair tests and benchmark.

No recordings ship with the project, so these stand in for them: held harmonic tones with vibrato
(a chord), plucked notes (harmonics that decay, higher ones faster), a bed of soft noise, and drums
(a kick's falling sine, a snare's noise burst with a 120 ms decay, hi-hats with a 40 ms decay).
Everything is seeded: the same arguments give the same samples.
"""

import numpy as np

RATE = 44100


def harmonic_tone(t, f0, *, harmonics=10, vibrato_cents=30.0, vibrato_hz=5.0, rolloff=0.7):
    """A tone of ``harmonics`` partials (amplitude ``rolloff ** (h - 1)``) with sinusoidal vibrato."""
    vibrato = 2 ** (vibrato_cents / 1200 * np.sin(2 * np.pi * vibrato_hz * t))
    phase = 2 * np.pi * np.cumsum(f0 * vibrato) / RATE
    return sum(rolloff ** (h - 1) * np.sin(h * phase) for h in range(1, harmonics + 1))


def _pluck(n, f0, rng):
    t = np.arange(n) / RATE
    out = np.zeros(n)
    for h in range(1, 16):
        if h * f0 > 0.45 * RATE:
            break
        decay = 1.5 / (1 + 0.4 * h)
        out += 0.8**h * np.exp(-t / decay) * np.sin(2 * np.pi * h * f0 * t + rng.uniform(0, 6.28))
    return out


def _drum(n, kind, rng):
    t = np.arange(n) / RATE
    if kind == "kick":
        return np.sin(2 * np.pi * (50 * t + 60 * (1 - np.exp(-t / 0.03)))) * np.exp(-t / 0.15)
    decay = 0.12 if kind == "snare" else 0.04
    noise = rng.standard_normal(n)
    if kind == "hat":
        noise = np.diff(noise, prepend=0.0)  # brighter
    return 0.5 * noise * np.exp(-t / decay)


def music(seconds=10.0, *, seed=0, level=0.1):
    """Mono music-like samples ``[N]`` at :data:`RATE`, about ``level`` RMS."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    out = np.zeros(n)
    for f0 in (220.0, 277.2, 329.6):  # an A major chord, held
        out += 0.3 * harmonic_tone(t, f0, vibrato_cents=rng.uniform(10, 40))
    for start in np.arange(0.3, seconds - 0.5, 0.6):  # plucked notes
        i = int(start * RATE)
        f0 = 110 * 2 ** (rng.integers(0, 24) / 12)
        piece = _pluck(min(n - i, int(1.5 * RATE)), f0, rng)
        out[i : i + len(piece)] += 0.5 * piece
    beat = 0.5
    for k, start in enumerate(np.arange(0.0, seconds - 0.3, beat / 2)):  # drums
        i = int(start * RATE)
        kind = ("kick", "hat", "snare", "hat")[k % 4]
        piece = _drum(min(n - i, int(0.5 * RATE)), kind, rng)
        out[i : i + len(piece)] += 0.6 * piece
    out += 0.02 * rng.standard_normal(n)  # a soft noise bed
    return level * out / np.sqrt(np.mean(out**2))


def insert_clicks(samples, count, *, seed=0, spacing=0.15, level=(4.0, 10.0)):
    """``samples`` with ``count`` clicks at random places at least ``spacing`` seconds apart;
    returns the copy and the click times.

    A click is a 1 to 4 ms decaying noise burst whose peak is ``level`` (a random factor between
    the two) times the RMS of the samples over the 20 ms around it: 12 to 20 dB above its
    neighbourhood by default.
    """
    rng = np.random.default_rng(seed)
    out = np.array(samples, dtype=np.float64)
    n = out.shape[-1]
    times: list[float] = []
    while len(times) < count:
        at = rng.uniform(0.2, n / RATE - 0.2)
        if all(abs(at - other) > spacing for other in times):
            times.append(at)
    for at in times:
        i = int(at * RATE)
        length = int(rng.uniform(0.001, 0.004) * RATE)
        burst = rng.standard_normal(length) * np.exp(-np.arange(length) / (0.3 * length))
        around = np.sqrt(np.mean(np.asarray(samples)[..., i - RATE // 100 : i + RATE // 100] ** 2))
        peak = rng.uniform(*level) * around
        out[..., i : i + length] += peak * burst / np.abs(burst).max()
    return out, sorted(times)
