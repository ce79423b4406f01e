"""Unit conversions, checked against librosa's (computed another way) and by round trips."""

import librosa
import numpy as np
import pytest

from spectropaint.transforms import geometry as g
from spectropaint.transforms.stft import STFT, STFTSettings


def test_time_conversions_match_librosa_and_round_trip():
    frames = np.arange(0, 1000, 7)
    seconds = g.frames_to_seconds(frames, hop=512, sample_rate=44100)
    np.testing.assert_allclose(seconds, librosa.frames_to_time(frames, sr=44100, hop_length=512))
    np.testing.assert_allclose(g.seconds_to_frames(seconds, hop=512, sample_rate=44100), frames)
    shifted = g.frames_to_seconds(2.5, hop=256, sample_rate=8000, frame0_sample=100)
    assert shifted == pytest.approx((100 + 2.5 * 256) / 8000)
    assert g.seconds_to_samples(1.23456, sample_rate=1000) == 1235
    np.testing.assert_array_equal(g.seconds_to_samples([0.5, 1.0], sample_rate=10), [5, 10])


def test_fft_frequencies_are_librosas_and_the_stfts_bands():
    np.testing.assert_array_equal(
        g.fft_frequencies(n_fft=2048, sample_rate=44100),
        librosa.fft_frequencies(sr=44100, n_fft=2048),
    )
    layout = STFT(STFTSettings(n_fft=1024, hop=256)).layout(44100, 22050)[0]
    np.testing.assert_array_equal(layout.band_hz, g.fft_frequencies(n_fft=1024, sample_rate=22050))


def test_bins_and_hz_round_trip_on_even_and_uneven_bands():
    even = g.fft_frequencies(n_fft=512, sample_rate=16000)
    bins = np.array([-3.0, 0.0, 0.25, 10.5, 256.0, 260.0])
    np.testing.assert_allclose(g.bins_to_hz(bins, band_hz=even), bins * 16000 / 512)
    uneven = 55.0 * 2 ** (np.arange(48) / 12)
    hz = g.bins_to_hz(np.array([-1.0, 0.0, 12.0, 12.5, 47.0, 50.0]), band_hz=uneven)
    assert hz[2] == pytest.approx(110.0) and hz[1] == pytest.approx(55.0)
    assert uneven[12] < hz[3] < uneven[13]
    np.testing.assert_allclose(
        g.hz_to_bins(hz, band_hz=uneven), [-1.0, 0.0, 12.0, 12.5, 47.0, 50.0]
    )


def test_even_step_is_the_stfts_bin_spacing_and_none_for_uneven_bands():
    assert g.even_step(g.fft_frequencies(n_fft=4096, sample_rate=48000)) == pytest.approx(
        48000 / 4096, rel=1e-12
    )
    assert g.even_step([100.0, 130.0]) == 30.0
    assert g.even_step(55.0 * 2 ** (np.arange(48) / 12)) is None
    nudged = g.fft_frequencies(n_fft=1024, sample_rate=44100)
    nudged[300] += 1e-4 * 44100 / 1024  # one band off by 1e-4 of the spacing
    assert g.even_step(nudged) is None
    assert g.even_step([440.0]) is None and g.even_step([]) is None


def test_semitones_and_notes_match_librosa():
    hz = np.array([27.5, 261.6256, 440.0, 1000.0])
    np.testing.assert_allclose(g.hz_to_semitones(hz) + 69, librosa.hz_to_midi(hz), atol=1e-9)
    np.testing.assert_allclose(g.semitones_to_hz(g.hz_to_semitones(hz)), hz)
    assert g.note_label(440.0) == "A4 +0¢"
    assert g.note_of(261.6256)[0] == "C4" == librosa.hz_to_note(261.6256)
    name, cents = g.note_of(445.0)
    assert name == "A4" and cents == pytest.approx(1200 * np.log2(445 / 440))
    assert g.note_label(0.0) == "" and np.isnan(g.hz_to_semitones(-5.0))
    assert g.octave_c_hz(4) == pytest.approx(261.6256, rel=1e-6)


@pytest.mark.parametrize("scale", g.FREQ_SCALES)
def test_warps_invert_and_mel_is_htk(scale):
    hz = np.array([20.0, 440.0, 8000.0])
    np.testing.assert_allclose(g.unwarp(g.warp(hz, scale), scale), hz)
    if scale == "mel":
        np.testing.assert_allclose(g.warp(hz, "mel"), librosa.hz_to_mel(hz, htk=True))


def test_labels_write_each_quantity_with_one_precision():
    hz = [0.0, 5.5, 55.0, 431.4, 999.6, 1184.3, 2960.0, 12345.0, 123456.0]
    assert [g.hz_label(value) for value in hz] == [
        "0 Hz", "5.5 Hz", "55.0 Hz", "431 Hz", "1.00 kHz", "1.18 kHz", "2.96 kHz", "12.3 kHz",
        "123 kHz",
    ]  # fmt: skip
    for value in np.geomspace(1.0, 90000.0, 400):  # three significant digits, read back
        number, unit = g.hz_label(value).split()
        shown = float(number) * (1000.0 if unit == "kHz" else 1.0)
        assert abs(shown - value) <= 0.005 * value + 0.05
    assert g.seconds_label(1.5) == "1.50 s" and g.seconds_label(0.123456) == "0.12 s"
    assert g.seconds_span_label(0.123456, 12.0) == "0.12-12.00 s"
    assert [g.db_label(db) for db in (-3.0, 6.04, -0.04)] == ["-3.0 dB", "+6.0 dB", "+0.0 dB"]
    assert g.db_label(6.0, signed=False) == "6.0 dB"
