"""The STFT: engines agree, inverses are exact, and frame spans invert alone."""

import numpy as np
import pytest
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.errors import Cancelled, SettingsError
from spectropaint.transforms.stft import STFT, STFTSettings

RATE = 44100


def error_db(test, reference):
    """Error relative to the reference's energy, in dB (more negative is better)."""
    test, reference = np.asarray(test), np.asarray(reference)
    return 10 * np.log10(np.sum(np.abs(test - reference) ** 2) / np.sum(np.abs(reference) ** 2))


@pytest.fixture(scope="module")
def signal():
    rng = np.random.default_rng(1)
    t = np.arange(RATE * 4) / RATE
    tone = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 3000 * t * (1 + t))
    stereo = np.stack(
        [tone + 0.05 * rng.standard_normal(t.size), 0.1 * rng.standard_normal(t.size)]
    )
    return torch.from_numpy(stereo)


@pytest.mark.parametrize(
    "settings",
    [
        STFTSettings(),
        STFTSettings(n_fft=1024, hop=256, window="hamming"),
        STFTSettings(n_fft=4096, hop=1024, window="blackman"),
        STFTSettings(n_fft=1000, hop=300),
    ],
    ids=["2048-512-hann", "1024-256-hamming", "4096-1024-blackman", "1000-300-hann"],
)
def test_torch_engine_matches_torch_stft_and_inverts_to_minus_120_db(signal, settings):
    # on the CPU the engine computes the same frames by pocketfft: equal to float32 rounding
    stft = STFT(settings)
    (spec,) = stft.analyse(signal)
    reference = torch.stft(
        signal.float(),
        settings.n_fft,
        settings.hop,
        window=stft.window,
        center=True,
        pad_mode="reflect",
        return_complex=True,
    )
    assert (
        spec.shape
        == reference.shape
        == (2, settings.n_fft // 2 + 1, 1 + signal.shape[-1] // settings.hop)
    )
    assert spec.dtype == reference.dtype == torch.complex64
    assert error_db(spec, reference) < -130
    assert error_db(stft.synthesise([spec], signal.shape[-1]), signal) < -120


def test_nnaudio_engine_is_equivalent_to_torch_engine(signal):
    torch_spec = STFT(STFTSettings(engine="torch")).analyse(signal)[0]
    nn = STFT(STFTSettings(engine="nnaudio"))
    nn_spec = nn.analyse(signal)[0]
    assert error_db(nn_spec.abs(), torch_spec.abs()) < -100
    assert error_db(torch.view_as_real(nn_spec), torch.view_as_real(torch_spec)) < -100
    assert error_db(nn.synthesise([nn_spec], signal.shape[-1]), signal) < -100


def test_matches_librosa_stft(signal):
    librosa = pytest.importorskip("librosa")
    spec = STFT().analyse(signal)[0][0].numpy()
    reference = librosa.stft(
        signal[0].numpy(), n_fft=2048, hop_length=512, center=True, pad_mode="reflect"
    )
    assert spec.shape == reference.shape
    assert error_db(spec, reference) < -120


def test_frame_spans_invert_alone_and_sum_to_the_full_inverse(signal):
    stft = STFT()
    (spec,) = stft.analyse(signal)
    n = signal.shape[-1]
    full = stft.synthesise([spec], n)
    total = torch.zeros_like(full)
    frames = spec.shape[-1]
    for frame0 in range(0, frames, 23):
        frame1 = min(frames, frame0 + 23)
        start, part = stft.synthesise_frames(spec[:, :, frame0:frame1], 0, frame0, n)
        reach = stft.samples_reached(0, frame0, frame1, n)
        assert (start, start + part.shape[-1]) == reach
        total[:, start : start + part.shape[-1]] += part
    assert error_db(total, full) < -120


def test_partial_analysis_is_bit_identical_to_whole_analysis(signal):
    stft = STFT()
    (spec,) = stft.analyse(signal)
    assert spec.shape[-1] > 300
    frames = spec.shape[-1]
    for frame0, frame1 in [(0, 1), (5, 40), (250, 300), (255, 257), (frames - 3, frames)]:
        assert torch.equal(
            stft.analyse_frames(signal, 0, frame0, frame1), spec[:, :, frame0:frame1]
        )


@pytest.mark.parametrize("workers", [2, 3])
def test_analysis_on_threads_is_bit_identical_to_one_thread(signal, monkeypatch, workers):
    stft = STFT(STFTSettings(n_fft=512, hop=64))  # 2757 frames: 11 chunks
    monkeypatch.setattr(fft_ops, "cpu_workers", lambda device: 1)
    seen_one: list[float] = []
    ((magnitude, phase),) = stft.analyse_polar(signal, progress=seen_one.append)
    monkeypatch.setattr(fft_ops, "cpu_workers", lambda device: workers)
    seen: list[float] = []
    ((magnitude_t, phase_t),) = stft.analyse_polar(signal, progress=seen.append)
    assert torch.equal(magnitude, magnitude_t) and torch.equal(phase, phase_t)
    assert seen == seen_one == sorted(seen) and len(seen) == 11 and seen[-1] == 1.0
    assert error_db(torch.polar(magnitude, phase), stft.analyse(signal)[0]) < -130


def test_analysis_on_threads_stops_when_progress_cancels(signal, monkeypatch):
    stft = STFT(STFTSettings(n_fft=512, hop=64))
    monkeypatch.setattr(fft_ops, "cpu_workers", lambda device: 2)
    seen: list[float] = []

    def progress(done: float) -> bool:
        seen.append(done)
        return len(seen) < 3

    with pytest.raises(Cancelled):
        stft.analyse_polar(signal, progress=progress)
    assert len(seen) == 3 and seen[-1] < 0.5


def test_layout_axes_are_bin_hz_and_frame_seconds():
    (layout,) = STFT(STFTSettings(n_fft=1024, hop=256)).layout(RATE, RATE)
    assert layout.n_bins == 513
    assert layout.band_hz[1] == pytest.approx(RATE / 1024)
    assert layout.band_hz[-1] == pytest.approx(RATE / 2)
    assert layout.n_frames == 1 + RATE // 256
    assert layout.frame_seconds(RATE)[10] == pytest.approx(10 * 256 / RATE)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"n_fft": 8}, "n_fft"),
        ({"hop": 0}, "hop"),
        ({"hop": 2000}, "hop"),
        ({"window": "kaiser"}, "window"),
        ({"engine": "cuFFT"}, "engine"),
    ],
)
def test_bad_settings_raise_settings_error_naming_the_parameter(kwargs, words):
    with pytest.raises(SettingsError, match=words):
        STFTSettings(**kwargs)
