"""Long uncompressed files are read in parallel pieces: the same bits as soundfile's whole read,
and every damaged or hostile file still handled as the serial reader handles it."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from bad_audio import make_bad_files, make_damaged_files
from test_audio_file import BAD_CASES, DAMAGED_CASES

from spectropaint.transforms.errors import AudioFileError, Cancelled
from spectropaint.transforms.files import audio_file, parallel_read
from spectropaint.transforms.files.audio_file import load_audio

FRAMES = 100_000  # three blocks of 2**15 frames per piece or so


@pytest.fixture
def pieces(monkeypatch):
    """Read in three pieces from 1000 frames up; the ranges each piece read, by call."""
    monkeypatch.setattr(parallel_read, "MIN_FRAMES", 1000)
    monkeypatch.setattr(audio_file, "default_workers", lambda: 3)
    calls = []
    real = parallel_read.read_in_pieces

    def spy(*args, **kwargs):
        calls.append(kwargs["workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(audio_file, "read_in_pieces", spy)
    return calls


@pytest.mark.parametrize(
    ("file_format", "subtype"),
    [
        ("WAV", "PCM_16"),
        ("WAV", "PCM_24"),
        ("WAV", "PCM_32"),
        ("WAV", "PCM_U8"),
        ("WAV", "FLOAT"),
        ("WAV", "DOUBLE"),
        ("AIFF", "PCM_24"),
        ("W64", "PCM_16"),
    ],
)
def test_pieces_equal_soundfiles_whole_read_bit_for_bit(tmp_path, pieces, file_format, subtype):
    rng = np.random.default_rng(len(subtype))
    samples = rng.uniform(-1.0, 1.0, (FRAMES, 2))
    path = tmp_path / f"x.{file_format.lower()}"
    sf.write(path, samples, 44100, subtype=subtype, format=file_format)
    loaded = load_audio(path)
    assert pieces == [3]
    if subtype in ("FLOAT", "DOUBLE"):
        whole = sf.read(path, dtype="float64", always_2d=True)[0].T
    else:
        whole = sf.read(path, dtype="int32", always_2d=True)[0].T * 2.0**-31
    assert loaded.samples.shape == (2, FRAMES)
    assert np.array_equal(loaded.samples, whole)
    assert loaded.warnings == ()


def test_a_piece_that_fails_falls_back_to_the_serial_read(tmp_path, pieces, monkeypatch):
    samples = np.random.default_rng(1).uniform(-1.0, 1.0, (FRAMES, 2))
    path = tmp_path / "x.wav"
    sf.write(path, samples, 44100, subtype="PCM_24")
    serial = sf.read(path, dtype="int32", always_2d=True)[0].T * 2.0**-31

    def fails_at_the_second(fd: int) -> int:
        opened.append(fd)
        if len(opened) == 2:
            raise parallel_read.PiecesFailed("no /proc here")
        return real_reopen(fd)

    opened, real_reopen = [], parallel_read._reopen
    monkeypatch.setattr(parallel_read, "_reopen", fails_at_the_second)
    loaded = load_audio(path)
    assert pieces == [3] and len(opened) >= 2
    assert np.array_equal(loaded.samples, serial)


def test_cancelling_stops_the_pieces(tmp_path, pieces):
    path = tmp_path / "x.wav"
    sf.write(path, np.zeros((FRAMES, 2)), 44100, subtype="PCM_16")
    with pytest.raises(Cancelled, match="opening cancelled"):
        load_audio(path, progress=lambda done: False)
    assert pieces == [3]


def test_compressed_and_short_files_are_read_serially(tmp_path, pieces, monkeypatch):
    sf.write(tmp_path / "x.flac", np.zeros((FRAMES, 2)), 44100, subtype="PCM_16")
    load_audio(tmp_path / "x.flac")
    monkeypatch.setattr(parallel_read, "MIN_FRAMES", FRAMES + 1)
    sf.write(tmp_path / "x.wav", np.zeros((FRAMES, 2)), 44100, subtype="PCM_16")
    load_audio(tmp_path / "x.wav")
    assert pieces == []


def test_bad_files_give_the_same_errors_with_pieces_on(tmp_path, pieces):
    for case, (path, expected) in make_bad_files(tmp_path / "bad").items():
        with pytest.raises(AudioFileError) as caught:
            load_audio(path)
        assert expected in caught.value.reason, case
    assert sorted(make_bad_files(tmp_path / "bad2")) == sorted(BAD_CASES)


def test_damaged_files_open_with_what_they_hold_with_pieces_on(tmp_path, pieces):
    damaged_files = make_damaged_files(tmp_path / "damaged")
    assert sorted(damaged_files) == sorted(DAMAGED_CASES)
    for case, damaged in damaged_files.items():
        audio = load_audio(damaged.path)
        (warning,) = audio.warnings
        assert damaged.warning in warning, case
        if damaged.expected is not None:
            assert np.array_equal(audio.samples, damaged.expected[:, : audio.n_frames]), case
