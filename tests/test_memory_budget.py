"""Memory estimates against real documents, textures and playback buffers; refusals made from the
header alone, before anything is allocated; progress while opening."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
import soundfile as sf
import torch

from spectropaint.app.playback.engine import OutputDevice, PlaybackEngine
from spectropaint.gpu.texture_memory import (
    playback_bytes,
    reduced_level_bytes,
    view_and_playback_bytes,
    view_texture_bytes,
)
from spectropaint.transforms import document as document_module
from spectropaint.transforms.document import READ_SHARE, Document
from spectropaint.transforms.errors import AudioFileError, Cancelled, SettingsError
from spectropaint.transforms.fft_ops import cpu_workers
from spectropaint.transforms.files.audio_file import AudioData, AudioFormat
from spectropaint.transforms.memory_budget import analysis_bytes, document_bytes, host_need
from spectropaint.transforms.stft import STFTSettings

CPU = torch.device("cpu")
HOURS_RATE = 44100


def noise(channels: int, n: int, seed: int = 0) -> np.ndarray:
    return 0.1 * np.random.default_rng(seed).standard_normal((channels, n))


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def wav_claiming(path, seconds: float, *, channels: int = 2, rate: int = HOURS_RATE) -> int:
    """A 16-bit PCM WAV whose header declares ``seconds`` of audio, the data a sparse hole (no disk
    space, no reads needed to make it). Returns the frames declared."""
    frames = int(seconds * rate)
    data = frames * channels * 2
    header = b"RIFF" + struct.pack("<I", 36 + data) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, 4, 16)
    header += b"data" + struct.pack("<I", data)
    with open(path, "wb") as out:
        out.write(header)
        out.truncate(len(header) + data)
    return frames


# -------------------------------------------------------------------------------- estimates
@pytest.mark.parametrize(
    "settings",
    [
        STFTSettings(n_fft=256, hop=64),
        STFTSettings(n_fft=512, hop=256, window="hamming"),
        STFTSettings(n_fft=128, hop=32, engine="nnaudio"),
    ],
)
@pytest.mark.parametrize("channels", [1, 3])
def test_estimates_equal_the_bytes_a_real_document_holds(settings, channels):
    n = 8000 + 37
    document = Document.from_samples(noise(channels, n), 8000, settings=settings, device="cpu")
    need = document_bytes(n, channels, settings)
    coefficients = sum(block.magnitude.nbytes + block.phase.nbytes for block in document.blocks)
    assert need.part("spectrogram") == coefficients
    assert need.part("audio") == document.audio.samples.nbytes
    assert need.total == coefficients + document.audio.samples.nbytes + need.part("analysis")
    workers = cpu_workers(torch.device("cpu"))  # a chunk analysed per thread
    assert need.part("analysis") == analysis_bytes(channels, settings, workers=workers) > 0


@pytest.mark.gpu
def test_texture_estimate_equals_the_renderers_textures():
    from spectropaint.gpu.adapter import shared_device
    from spectropaint.gpu.renderer import SpectrogramRenderer

    settings = STFTSettings(n_fft=256, hop=64)
    document = Document.from_samples(noise(2, 40000), 8000, settings=settings, device="cpu")
    block = document.blocks[0]
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=64)
    try:
        renderer._ensure_phase()
        textures = [renderer._magnitude, renderer._phase]
        made = sum(4 * np.prod(texture.size) for texture in textures)
    finally:
        renderer.close()
    assert made == view_texture_bytes(block.n_bins, block.n_frames, max_texture_dim=64)
    without_phase = view_texture_bytes(
        block.n_bins, block.n_frames, max_texture_dim=64, phase_view=False
    )
    assert without_phase == 4 * np.prod(textures[0].size)


def test_playback_estimate_equals_both_buffers_of_an_edited_playback():
    samples = noise(2, 30000)
    engine = PlaybackEngine(samples, 8000, device=OutputDevice(None, "", 0, "test"))
    engine.update_span(100, samples[:, 100:200] * 0.5)  # the edited copy is made on first write
    edited = engine.edited()
    assert not np.shares_memory(edited, engine._original)
    assert playback_bytes(30000, 2) == edited.nbytes + engine._original.nbytes


def test_the_window_reserve_adds_textures_upload_and_playback():
    shape = (44100 * 60, 2, 1025, 1 + 44100 * 60 // 512)
    on_host = view_and_playback_bytes(*shape, max_texture_dim=16384)
    on_gpu = view_and_playback_bytes(*shape, max_texture_dim=16384, textures_on_host=False)
    assert on_host - on_gpu == view_texture_bytes(*shape[2:], max_texture_dim=16384)
    levels = reduced_level_bytes(*shape[2:])
    assert 0.33 < levels / (4 * shape[2] * shape[3]) < 0.34  # a third of level 0
    assert on_gpu == 4 * shape[2] * shape[3] + levels + playback_bytes(*shape[:2])
    stacked = view_and_playback_bytes(*shape, max_texture_dim=16384, stacked=True)
    assert stacked - on_gpu == (
        2 * view_texture_bytes(*shape[2:], max_texture_dim=16384) + levels
    )  # 2 lanes


# --------------------------------------------------------------------------------- refusals
def test_hours_of_audio_are_refused_from_the_header_without_reading_or_allocating(tmp_path):
    path = tmp_path / "three-hours.wav"
    frames = wav_claiming(path, 3 * 3600)
    budget = 8_000_000_000
    before = rss_bytes()
    tracemalloc.start()
    try:
        with pytest.raises(AudioFileError) as caught:
            Document.from_file(
                path, device="cpu", max_bytes=budget, reserve_bytes=view_and_playback_bytes
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rss_bytes() - before < 16 << 20 and peak < 4 << 20
    error = caught.value
    assert error.path == str(path)
    need = host_need(
        frames, 2, STFTSettings(), device=CPU, reserve=view_and_playback_bytes
    ).describe()
    assert f"would need {need}, 8.0 GB available" in error.reason
    audio, spectrogram = 2 * frames * 8, 2 * 1025 * (1 + frames // 512) * 2 * 4
    assert f"audio {audio / 1e9:.1f} GB, spectrogram {spectrogram / 1e9:.1f} GB" in error.reason
    assert "view and playback" in error.reason
    assert "open a shorter part of it" in error.reason


def test_the_default_budget_is_the_memory_available_now(tmp_path, monkeypatch):
    path = tmp_path / "one-hour.wav"
    wav_claiming(path, 3600)
    monkeypatch.setattr(document_module, "available_memory", lambda: 3_000_000_000)
    with pytest.raises(AudioFileError, match=r"3\.0 GB available"):
        Document.from_file(path, device="cpu")


def test_the_advice_names_a_hop_that_then_opens(tmp_path):
    rate, n = 8000, 8000 * 20
    path = tmp_path / "twenty-seconds.wav"
    sf.write(path, noise(1, n).T, rate, subtype="PCM_16")
    narrow, wide = STFTSettings(n_fft=256, hop=32), STFTSettings(n_fft=256, hop=64)
    budget = host_need(n, 1, wide, device=CPU).total
    assert host_need(n, 1, narrow, device=CPU).total > budget
    with pytest.raises(AudioFileError, match="with a hop of 64 samples it would need"):
        Document.from_file(path, settings=narrow, device="cpu", max_bytes=budget)
    document = Document.from_file(path, settings=wide, device="cpu", max_bytes=budget)
    assert document.blocks[0].hop == 64


def test_documents_without_a_file_are_refused_with_a_settings_error():
    samples = noise(2, 2_000_000).astype(np.float32)  # 16 MB; its float64 copy would be 32 MB
    tracemalloc.start()
    try:
        with pytest.raises(SettingsError, match=r"too large: would need .*\(audio 32\.0 MB, spe"):
            Document.from_samples(samples, 44100, device="cpu", max_bytes=40_000_000)
        with pytest.raises(SettingsError, match=r"32\.0 MB for the audio alone, 10\.0 MB avail"):
            Document.from_samples(samples, 44100, device="cpu", max_bytes=10_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, "the float64 copy was made before the refusal"
    audio = AudioData(samples.astype(np.float64), AudioFormat("WAV", "FLOAT", 44100, 2), None)
    with pytest.raises(SettingsError, match="too large"):
        Document(audio, device="cpu", max_bytes=40_000_000)
    named = AudioData(audio.samples, audio.format, "/music/take.wav")
    with pytest.raises(AudioFileError, match="cannot open '/music/take.wav': too large"):
        Document(named, device="cpu", max_bytes=40_000_000)


def test_a_reserve_counts_against_the_budget():
    samples = noise(1, 80000)
    need = document_bytes(80000, 1, STFTSettings()).total
    Document.from_samples(samples, 8000, device="cpu", max_bytes=need)
    with pytest.raises(SettingsError, match=r"view and playback 1\.0 MB"):
        Document.from_samples(samples, 8000, device="cpu", max_bytes=need, reserve_bytes=10**6)


# ------------------------------------------------------------------------------ opening: peak
def test_opening_peaks_at_the_documents_size_plus_one_chunk(tmp_path):
    """In a fresh process: the peak resident memory while opening a 60 s stereo file exceeds the
    baseline by the audio and coefficients held at the end and the estimated work, never by a
    complex copy of the whole spectrogram (which alone would be 85 MB more)."""
    path = tmp_path / "minute.wav"
    rate, n = 44100, 44100 * 60
    with sf.SoundFile(path, "w", rate, 2, "PCM_16") as out:
        for start in range(0, n, rate * 10):
            out.write(noise(2, rate * 10, seed=start).T)
    script = textwrap.dedent(
        f"""
        from spectropaint.transforms.document import Document

        def high_water():  # VmHWM is this process's own (ru_maxrss keeps the parent's across exec)
            with open("/proc/self/status") as status:
                line = next(line for line in status if line.startswith("VmHWM:"))
            return int(line.split()[1]) * 1024

        Document.from_samples([[0.0] * 8192] * 2, 44100, device="cpu")  # load torch's kernels
        base = high_water()
        document = Document.from_file({str(path)!r}, device="cpu")
        print(high_water() - base)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    growth = int(result.stdout.split()[-1])
    need = document_bytes(n, 2, STFTSettings())
    held = need.part("audio") + need.part("spectrogram")
    assert held * 0.95 < growth < need.total + (24 << 20), (growth, need.describe())


# ---------------------------------------------------------------------------- opening: progress
def test_progress_rises_through_reading_then_analysis_and_can_cancel_either(tmp_path):
    path = tmp_path / "five-seconds.wav"
    sf.write(path, noise(2, 44100 * 5).T, 44100, subtype="PCM_16")
    seen: list[float] = []
    Document.from_file(path, device="cpu", progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    reading = [done for done in seen if done <= READ_SHARE]
    assert len(reading) >= 6 and reading[-1] == pytest.approx(READ_SHARE)
    assert len(seen) - len(reading) == 2  # 431 frames: two analysis chunks
    for stop_at in (0.1, 0.5):
        with pytest.raises(Cancelled):
            Document.from_file(path, device="cpu", progress=lambda done, s=stop_at: done < s)
