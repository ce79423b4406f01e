"""The demo sound: rendered from its recipe, with each part where the recipe puts it."""

from __future__ import annotations

import numpy as np
import pytest

from spectropaint.transforms.files.demo_sound import demo_samples, load_recipe

RATE = 44100


@pytest.fixture(scope="module")
def demo() -> np.ndarray:
    return demo_samples(RATE)


@pytest.fixture(scope="module")
def recipe() -> dict:
    return load_recipe()


def band_energy(
    x: np.ndarray, start_s: float, stop_s: float, low_hz: float, high_hz: float
) -> float:
    """Energy of the mono mix in ``[low_hz, high_hz]`` over ``[start_s, stop_s)``, Hann-windowed."""
    segment = x.sum(axis=0)[int(start_s * RATE) : int(stop_s * RATE)]
    spectrum = np.abs(np.fft.rfft(segment * np.hanning(len(segment)))) ** 2
    freqs = np.fft.rfftfreq(len(segment), 1 / RATE)
    return float(spectrum[(freqs >= low_hz) & (freqs <= high_hz)].sum())


def test_demo_is_stereo_of_the_recipe_length_and_peak(demo, recipe):
    assert demo.shape == (2, round(recipe["duration_s"] * RATE))
    assert np.all(np.isfinite(demo))
    assert np.abs(demo).max() == pytest.approx(recipe["peak"], rel=1e-12)
    assert not np.allclose(demo[0], demo[1])  # the parts are panned apart


def test_demo_is_deterministic_and_follows_the_sample_rate(demo):
    np.testing.assert_array_equal(demo_samples(RATE), demo)
    assert demo_samples(22050).shape == (2, demo.shape[1] // 2)


def test_chord_fundamentals_stand_out(demo, recipe):
    chord = recipe["chord"]
    start, stop = chord["start_s"] + chord["attack_s"], chord["stop_s"] - chord["release_s"]
    segment = demo.sum(axis=0)[int(start * RATE) : int(stop * RATE)]
    spectrum = np.abs(np.fft.rfft(segment * np.hanning(len(segment))))
    freqs = np.fft.rfftfreq(len(segment), 1 / RATE)
    floor = np.median(spectrum[(freqs > 100) & (freqs < 1000)])
    for f0 in chord["fundamentals_hz"]:
        near = (freqs > f0 * 0.98) & (freqs < f0 * 1.02)  # the vibrato spreads each partial
        assert spectrum[near].max() > 30 * floor, f0


def test_chirp_rises_exponentially(demo, recipe):
    chirp = recipe["chirp"]
    duration = chirp["stop_s"] - chirp["start_s"]
    for t in (5.75, 6.8, 7.2):  # after the chord, away from the low noise burst's band
        expected = chirp["from_hz"] * (chirp["to_hz"] / chirp["from_hz"]) ** (
            (t - chirp["start_s"]) / duration
        )
        segment = demo.sum(axis=0)[int((t - 0.01) * RATE) : int((t + 0.01) * RATE)]
        spectrum = np.abs(np.fft.rfft(segment * np.hanning(len(segment)), n=8192))
        freqs = np.fft.rfftfreq(8192, 1 / RATE)
        above = freqs > 1500
        peak = freqs[above][np.argmax(spectrum[above])]
        assert peak == pytest.approx(expected, rel=0.05), t


def test_noise_bursts_fill_their_band_only_while_they_last(demo, recipe):
    for burst in recipe["noise_bursts"]:
        start, duration = burst["start_s"], burst["duration_s"]
        band = (burst["low_hz"], burst["high_hz"])
        during = band_energy(demo, start, start + duration, *band)
        before = band_energy(demo, start - duration, start, *band)
        assert during > 5 * before, burst  # steady chord partials share some bands


def test_clicks_hit_on_the_pattern(demo, recipe):
    clicks = recipe["clicks"]
    window = 0.003
    for index in range(clicks["count"]):
        onset = clicks["start_s"] + index * clicks["period_s"]
        # above the chirp and the bursts, only the broadband clicks have energy
        after = band_energy(demo, onset, onset + window, 13000, 20000)
        before = band_energy(demo, onset - window, onset, 13000, 20000)
        assert after > 100 * before, onset
