"""What brushes that create or move energy sound like: resynthesised and measured."""

import numpy as np
import pytest

from spectropaint.brushes.engine import paint
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

RATE, N_FFT, HOP = 16000, 256, 64
BIN_HZ = RATE / N_FFT


def document_of(samples):
    return Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=N_FFT, hop=HOP), device="cpu"
    )


def tone(frequency, amplitude, seconds=1.0, noise=1e-4):
    t = np.arange(int(RATE * seconds)) / RATE
    rng = np.random.default_rng(0)
    return (amplitude * np.sin(2 * np.pi * frequency * t) + noise * rng.standard_normal(t.size))[
        None, :
    ]


def amplitude_at(signal, frequency, start, stop):
    """Amplitude of the sinusoid at ``frequency`` in samples ``[start, stop)`` (Hann-weighted)."""
    segment = signal[start:stop]
    window = np.hanning(segment.size)
    t = np.arange(start, stop) / RATE
    return 2 * abs(np.sum(segment * window * np.exp(-2j * np.pi * frequency * t))) / window.sum()


def click_document(frame):
    samples = np.zeros((1, RATE))
    samples[0, frame * HOP] = 0.9
    return document_of(samples)


def horizontal(x0, x1, y, n=30):
    return [InputEvent(i / 60, x0 + (x1 - x0) * i / (n - 1), y) for i in range(n)]


def test_pen_paints_a_sinusoid_at_level_db_only_during_the_stroke():
    document = document_of(tone(1000.0, 0.0))
    settings = BrushSettings(radius_frames=4, radius_bins=1, hardness=1.0)
    paint(document, "pen", horizontal(60, 160, 40), settings, params={"level_db": -20.0})
    out = document.edited_samples()[0]
    frequency = 40 * BIN_HZ
    assert amplitude_at(out, frequency, 70 * HOP, 150 * HOP) == pytest.approx(0.1, rel=0.01)
    assert amplitude_at(out, frequency, 0, 50 * HOP) < 1e-3
    assert amplitude_at(out, frequency, 175 * HOP, out.size) < 1e-3
    spectrum = np.abs(np.fft.rfft(out[70 * HOP : 150 * HOP] * np.hanning(80 * HOP)))
    assert np.fft.rfftfreq(80 * HOP, 1 / RATE)[np.argmax(spectrum)] == pytest.approx(
        frequency, abs=5
    )


def test_clone_moves_a_tone_to_the_destination_bins_frequency():
    source_bin, offset_bins = 16, -21
    document = document_of(tone(source_bin * BIN_HZ, 0.3))
    settings = BrushSettings(radius_frames=6, radius_bins=3, hardness=1.0)
    params = {"offset_frames": -60, "offset_bins": offset_bins}
    paint(
        document, "clone", horizontal(120, 200, source_bin - offset_bins), settings, params=params
    )
    out = document.edited_samples()[0]
    moved = (source_bin - offset_bins) * BIN_HZ
    assert amplitude_at(out, moved, 130 * HOP, 190 * HOP) == pytest.approx(0.3, rel=0.05)
    assert amplitude_at(out, moved, 0, 100 * HOP) < 1e-3
    assert amplitude_at(out, source_bin * BIN_HZ, 0, out.size) == pytest.approx(0.3, rel=0.01)


def test_warp_along_time_leaves_a_steady_tone_steady():
    original = tone(16 * BIN_HZ, 0.3)
    document = document_of(original)
    settings = BrushSettings(radius_frames=10, radius_bins=4, hardness=0.3)
    paint(document, "warp", horizontal(60, 180, 16.3), settings, params={"amount": 1.0})
    assert document.is_edited
    assert np.abs(document.edited_samples() - original).max() < 3e-3


def test_warp_drags_a_click_along_the_stroke():
    document = click_document(100)
    before = document.blocks[0].magnitude[0].sum(dim=0).numpy()
    settings = BrushSettings(radius_frames=12, radius_bins=200, hardness=0.5, spacing=0.1)
    paint(document, "warp", horizontal(96, 130, 64.0), settings)
    after = document.blocks[0].magnitude[0].sum(dim=0).numpy()
    frames = np.arange(before.size)
    assert np.sum(frames * after) / after.sum() > np.sum(frames * before) / before.sum() + 3


def test_clone_in_shift_mode_copies_a_click_sharp():
    document = click_document(100)
    settings = BrushSettings(radius_frames=6, radius_bins=200, hardness=1.0)
    params = {"offset_frames": -60, "offset_bins": 0, "phase": "shift"}
    paint(document, "clone", horizontal(158, 162, 64.0, n=3), settings, params=params)
    out = document.edited_samples()[0]
    assert np.argmax(np.abs(out[130 * HOP :])) + 130 * HOP == 160 * HOP
    assert out[160 * HOP] == pytest.approx(0.9, abs=1e-4)
    assert np.abs(out[160 * HOP - 20 : 160 * HOP + 20]).sum() < 0.9 + 1e-3


def test_warp_in_shift_mode_drags_a_click_later_in_time():
    document = click_document(100)
    settings = BrushSettings(radius_frames=12, radius_bins=200, hardness=0.5, spacing=0.1)
    paint(document, "warp", horizontal(96, 130, 64.0), settings, params={"phase": "shift"})
    out = document.edited_samples()[0]
    assert np.argmax(np.abs(out)) > 102 * HOP
