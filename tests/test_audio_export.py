"""Audio export options (no Qt): resampling measured on tones, TPDF dither measured on its noise,
and bit-exact output when nothing needs rounding."""

import numpy as np
import pytest
import soundfile

from spectropaint.app.files.audio_export import (
    AudioExportOptions,
    export_audio,
    on_grid,
    prepare,
    resample,
    sample_formats,
    tpdf_dither,
)
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError


def tone(hz: float, rate: int, seconds: float = 1.0, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return amplitude * np.sin(2 * np.pi * hz * t)[None, :]


def error_db(got: np.ndarray, expected: np.ndarray) -> float:
    """Error relative to the expected signal, dB, away from the ends (the filter's start-up)."""
    middle = slice(len(expected) // 10, -len(expected) // 10)
    residual = got[middle] - expected[middle]
    return 10 * np.log10(np.mean(residual**2) / np.mean(expected[middle] ** 2))


@pytest.mark.parametrize(("source", "target"), [(44100, 48000), (48000, 44100), (96000, 44100)])
@pytest.mark.parametrize("hz", [100.0, 1000.0, 15000.0])
def test_resampling_keeps_audible_tones_exact_to_100_db(source, target, hz):
    out = resample(tone(hz, source), source, target)
    expected = tone(hz, target)[0]
    assert out.shape == (1, len(expected))
    assert error_db(out[0], expected) < -100


@pytest.mark.parametrize(("source", "target"), [(48000, 44100), (96000, 44100)])
def test_resampling_down_removes_what_the_new_rate_cannot_hold(source, target):
    # a 23 kHz tone cannot exist at 44.1 kHz: it must vanish, not fold back to 21.1 kHz
    out = resample(tone(23000.0, source), source, target)[0]
    middle = out[len(out) // 10 : -len(out) // 10]
    level = 10 * np.log10(np.mean(middle**2) / 0.125)
    assert level < -100


def test_tpdf_dither_is_triangular_one_lsb_each_way_and_independent_of_the_signal():
    rng = np.random.default_rng(1)
    silent = np.zeros((1, 200_000))
    noise = (tpdf_dither(silent, 16, rng) - silent)[0] * 2**15
    assert noise.min() > -1 and noise.max() < 1
    assert np.var(noise) == pytest.approx(1 / 6, rel=0.02)  # triangular on (-1, 1): variance 1/6
    histogram, _ = np.histogram(noise, bins=4, range=(-1, 1))
    assert histogram[1] == pytest.approx(3 * histogram[0], rel=0.05)  # a triangle, not flat
    # with dither, the rounding error of a quiet tone is noise: its spectrum has no harmonics
    quiet = tone(1000.0, 48000, amplitude=3 * 2**-15)
    dithered = np.rint(tpdf_dither(quiet, 16, rng) * 2**15) / 2**15
    plain = np.rint(quiet * 2**15) / 2**15
    for rounded, has_harmonics in ((plain, True), (dithered, False)):
        spectrum = np.abs(np.fft.rfft((rounded - quiet)[0]))
        harmonic = spectrum[3000]  # 3 kHz: the third harmonic, 1 Hz bins
        floor = np.median(spectrum)
        assert (harmonic > 30 * floor) == has_harmonics


def test_samples_on_the_target_grid_are_written_exactly_without_dither():
    rng = np.random.default_rng(2)
    samples = rng.integers(-(2**15), 2**15, (2, 5000)) / 2**15
    assert on_grid(samples, 16)
    options = AudioExportOptions("WAV", "PCM_16", 44100, dither=True)
    np.testing.assert_array_equal(prepare(samples, 44100, options), samples)
    off_grid = samples + 0.3 * 2**-15
    assert not np.array_equal(prepare(off_grid, 44100, options), off_grid)  # dithered


def test_export_writes_the_chosen_format_depth_and_rate(tmp_path):
    samples = np.concatenate([tone(440.0, 44100), tone(880.0, 44100)])
    document = Document.from_samples(samples, 44100)
    options = AudioExportOptions("FLAC", "PCM_24", 48000, dither=True)
    report = export_audio(document, tmp_path / "out.flac", options)
    info = soundfile.info(tmp_path / "out.flac")
    assert (info.format, info.subtype, info.samplerate, info.channels) == (
        "FLAC",
        "PCM_24",
        48000,
        2,
    )
    assert info.frames == 48000 and report.sample_rate == 48000
    written, _ = soundfile.read(tmp_path / "out.flac", always_2d=True)
    expected = np.concatenate([tone(440.0, 48000), tone(880.0, 48000)])
    assert error_db(written[:, 0], expected[0]) < -100  # 24-bit with dither: about -130 dB


def test_options_are_checked():
    assert "FLOAT" not in sample_formats("FLAC") and "PCM_24" in sample_formats("FLAC")
    assert sample_formats("OGG") == ["VORBIS"]
    with pytest.raises(SettingsError, match="FLAC files cannot hold FLOAT"):
        AudioExportOptions("FLAC", "FLOAT", 44100)
    with pytest.raises(SettingsError, match="sample rate"):
        AudioExportOptions("WAV", "PCM_16", 0)
