"""Project files: bit-exact round trips, refusal of damaged or lying files, and kill-safe saving."""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
import soundfile as sf
import torch
from bad_audio import write_silence_project, write_zip_bomb

from spectropaint.brushes.recorded import FORMAT as STROKES_FORMAT
from spectropaint.brushes.recorded import VERSION as STROKES_VERSION
from spectropaint.brushes.recorded import apply_strokes, load_strokes, stroke_from_dict
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import Cancelled, ProjectFileError
from spectropaint.transforms.files.atomic_write import STALE_PARTIAL_SECONDS
from spectropaint.transforms.files.audio_file import AudioData, AudioFormat
from spectropaint.transforms.files.project_file import (
    is_project,
    load_project,
    save_project,
)
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings

RATE = 44100
SMALL = STFTSettings(n_fft=512, hop=128)
STROKES_HEADER = {"format": "spectropaint-strokes", "version": 1}


def music(seconds: float, channels: int = 2, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * seconds)) / RATE
    tone = 0.3 * np.sin(2 * np.pi * 440 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 0.7 * t))
    return np.stack([tone + 0.05 * rng.standard_normal(t.size) for _ in range(channels)])


def edit(document: Document, region: Region, gain: float, phase_shift: float) -> None:
    magnitude, phase = document.read(region)
    document.write(region, magnitude * gain, phase + phase_shift)


def edited_document(samples, fmt, *, settings=SMALL, path=None) -> Document:
    """A document with three runs of edited frames, one of them on one channel only."""
    document = Document(AudioData(samples, fmt, path), settings=settings, device="cpu")
    frames, bins = document.blocks[0].n_frames, document.blocks[0].n_bins
    channels = tuple(range(document.n_channels))
    edit(document, Region(5, bins // 2, 3, 40, channels), 0.25, 0.5)
    edit(document, Region(0, bins, frames // 2, frames // 2 + 7, channels[-1:]), 3.0, -1.0)
    edit(document, Region(bins - 20, bins, frames - 4, frames, channels), 0.0, 0.0)
    return document


def assert_same_document(loaded: Document, saved: Document) -> None:
    assert np.array_equal(loaded.audio.samples, saved.audio.samples)
    assert loaded.audio.format == saved.audio.format
    assert loaded.audio.path == saved.audio.path
    assert loaded.settings == saved.settings
    assert len(loaded.blocks) == len(saved.blocks)
    for mine, theirs in zip(loaded.blocks, saved.blocks, strict=True):
        assert torch.equal(mine.magnitude, theirs.magnitude)
        assert torch.equal(mine.phase, theirs.phase)
        assert np.array_equal(mine.edited_frames, theirs.edited_frames)


def exported(path) -> tuple:
    """A file's format and its audio data's bytes as stored (integers as such, floats unrounded).

    Not the whole file: libsndfile stamps float WAVs with the time of writing (the PEAK chunk).
    """
    info = sf.info(path)
    dtype = "float64" if info.subtype in ("FLOAT", "DOUBLE") else "int32"
    return info.format, info.subtype, info.samplerate, sf.read(path, dtype=dtype)[0].tobytes()


def manifest_of(path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("manifest.json"))


def rewrite(source, target, *, replace=None, drop=(), add=()) -> None:
    """Copy a project's members to a new zip, replacing, dropping or adding some."""
    replace = replace or {}
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            if info.filename in drop:
                continue
            data = replace.get(info.filename, old.read(info))
            new.writestr(info.filename, data, compress_type=info.compress_type)
        for name, data in add:
            new.writestr(name, data)


def with_manifest(source, target, change) -> None:
    manifest = manifest_of(source)
    change(manifest)
    rewrite(source, target, replace={"manifest.json": json.dumps(manifest).encode()})


def npy_bytes(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def patch_declared_size(path, member: str, size: int) -> None:
    """Overwrite the uncompressed size the central directory declares for ``member``."""
    data = bytearray(path.read_bytes())
    position = 0
    while True:
        position = data.index(b"PK\x01\x02", position)
        name_length = struct.unpack_from("<H", data, position + 28)[0]
        if data[position + 46 : position + 46 + name_length] == member.encode():
            struct.pack_into("<I", data, position + 24, size)
            path.write_bytes(bytes(data))
            return
        position += 4


# --- round trips -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "subtype, member, stored",
    [
        ("PCM_16", "audio.flac", "PCM_16"),
        ("PCM_24", "audio.flac", "PCM_24"),
        ("PCM_U8", "audio.flac", "PCM_S8"),
        ("ULAW", "audio.flac", "PCM_16"),
        ("FLOAT", "audio.npy", "<f4"),
    ],
)
def test_a_file_source_round_trips_bit_for_bit_and_exports_identically(
    tmp_path, subtype, member, stored
):
    source = tmp_path / "source.wav"
    sf.write(source, music(1.0).T, RATE, subtype=subtype)
    original = Document.from_file(source, settings=SMALL, device="cpu")
    document = edited_document(original.audio.samples, original.audio.format, path=str(source))
    report = save_project(document, tmp_path / "p.spp")
    assert report.audio_member == member
    assert report.edited_frames == int(document.blocks[0].edited_frames.sum())
    storage = manifest_of(tmp_path / "p.spp")["audio"]["storage"]
    assert stored in (storage.get("subtype"), storage.get("dtype"))

    loaded = load_project(tmp_path / "p.spp").document
    assert_same_document(loaded, document)
    document.export(tmp_path / "saved.wav")
    loaded.export(tmp_path / "loaded.wav")
    assert exported(tmp_path / "loaded.wav") == exported(tmp_path / "saved.wav")
    assert not np.array_equal(loaded.edited_samples(), loaded.audio.samples)


def test_integer_audio_is_stored_as_flac_smaller_than_its_pcm(tmp_path):
    source = tmp_path / "source.wav"
    sf.write(source, music(2.0).T, RATE, subtype="PCM_16")
    document = Document.from_file(source, settings=SMALL, device="cpu")
    save_project(document, tmp_path / "p.spp")
    with zipfile.ZipFile(tmp_path / "p.spp") as archive:
        flac = archive.getinfo("audio.flac")
    assert flac.compress_type == zipfile.ZIP_STORED
    assert flac.file_size < document.audio.samples.size * 2  # 16-bit PCM bytes


def test_samples_that_are_not_what_their_subtype_claims_are_kept_as_float64(tmp_path):
    samples = music(0.5) + 1e-9  # not on the 16-bit grid, not float32 either
    document = edited_document(samples, AudioFormat("WAV", "PCM_16", RATE, 2))
    assert save_project(document, tmp_path / "p.spp").audio_member == "audio.npy"
    assert manifest_of(tmp_path / "p.spp")["audio"]["storage"]["dtype"] == "<f8"
    assert_same_document(load_project(tmp_path / "p.spp").document, document)


@pytest.mark.parametrize("engine", ["torch", "nnaudio"])
def test_settings_view_and_strokes_come_back_as_saved(tmp_path, engine):
    settings = STFTSettings(n_fft=1024, hop=200, window="blackman", engine=engine)
    document = Document.from_samples(music(1.0, channels=1), RATE, settings=settings, device="cpu")
    strokes = [
        {
            "brush": "gain",
            "params": {"gain_db": -12.0},
            "events": [[0.0, 20.0, 40.0, 1.0], [0.05, 60.0, 44.0, 0.5]],
        }
    ]
    apply_strokes(document, [stroke_from_dict(s, origin="test") for s in strokes])
    assert document.is_edited
    view = {"zoom": [1.5, 2.0], "colormap": "magma", "floor_db": -96, "frequency_axis": "log"}
    save_project(document, tmp_path / "p.spp", view=view, strokes=strokes)

    project = load_project(tmp_path / "p.spp")
    assert project.document.settings == settings
    assert project.view == view
    assert project.strokes == strokes
    assert project.created_by.startswith("spectropaint ")
    assert_same_document(project.document, document)


def test_strokes_member_is_a_strokes_file_that_replays(tmp_path):
    strokes = [{"brush": "erase", "events": [[0.0, 10.0, 30.0], [0.1, 30.0, 30.0]]}]
    document = Document.from_samples(music(1.0), RATE, settings=SMALL, device="cpu")
    save_project(document, tmp_path / "p.spp", strokes=strokes)
    with zipfile.ZipFile(tmp_path / "p.spp") as archive:
        (tmp_path / "s.json").write_bytes(archive.read("strokes.json"))
    assert json.loads((tmp_path / "s.json").read_text())["format"] == STROKES_FORMAT
    assert json.loads((tmp_path / "s.json").read_text())["version"] == STROKES_VERSION
    (recorded,) = load_strokes(tmp_path / "s.json")
    assert recorded.brush == "erase" and len(recorded.events) == 2


def test_edit_members_hold_exactly_the_runs_of_edited_frames(tmp_path):
    document = edited_document(music(1.0), AudioFormat("WAV", "FLOAT", RATE, 2))
    save_project(document, tmp_path / "p.spp")
    flags = document.blocks[0].edited_frames
    edges = np.flatnonzero(np.diff(np.concatenate(([0], flags.astype(int), [0]))))
    runs = list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))
    edits = manifest_of(tmp_path / "p.spp")["edits"]
    assert [(e["frame0"], e["frame1"]) for e in edits] == runs
    with zipfile.ZipFile(tmp_path / "p.spp") as archive:
        for entry in edits:
            assert archive.getinfo(entry["member"]).compress_type == zipfile.ZIP_DEFLATED
            stored = np.load(io.BytesIO(archive.read(entry["member"])), allow_pickle=False)
            frames = slice(entry["frame0"], entry["frame1"])
            assert np.array_equal(stored[:, 0], document.blocks[0].magnitude[:, :, frames].numpy())
            assert np.array_equal(stored[:, 1], document.blocks[0].phase[:, :, frames].numpy())


def test_an_unedited_project_holds_no_edits_and_exports_the_source_unchanged(tmp_path):
    source = tmp_path / "source.wav"
    sf.write(source, music(1.0).T, RATE, subtype="PCM_24")
    document = Document.from_file(source, settings=SMALL, device="cpu")
    save_project(document, tmp_path / "p.spp")
    assert manifest_of(tmp_path / "p.spp")["edits"] == []
    loaded = load_project(tmp_path / "p.spp").document
    assert not loaded.is_edited
    loaded.export(tmp_path / "out.wav")
    assert exported(tmp_path / "out.wav") == exported(source)


def test_progress_rises_to_one_and_returning_false_cancels(tmp_path):
    document = edited_document(music(1.0), AudioFormat("WAV", "FLOAT", RATE, 2))
    for run in (save_project, load_project):
        seen = []
        args = (document, tmp_path / "p.spp") if run is save_project else (tmp_path / "p.spp",)
        run(*args, progress=seen.append)
        assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    before = (tmp_path / "p.spp").read_bytes()
    with pytest.raises(Cancelled):
        save_project(document, tmp_path / "p.spp", progress=lambda f: f < 0.5)
    with pytest.raises(Cancelled):
        load_project(tmp_path / "p.spp", progress=lambda f: f < 0.5)
    assert (tmp_path / "p.spp").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.spp"]


def test_is_project_tells_projects_from_audio(tmp_path):
    document = Document.from_samples(music(0.5), RATE, settings=SMALL, device="cpu")
    save_project(document, tmp_path / "p.spp")
    (tmp_path / "p.spp").rename(tmp_path / "renamed")
    sf.write(tmp_path / "a.wav", music(0.1).T, RATE)
    (tmp_path / "broken.spp").write_bytes(b"not a zip")
    assert is_project(tmp_path / "renamed")
    assert is_project(tmp_path / "broken.spp")
    assert not is_project(tmp_path / "a.wav")
    assert not is_project(tmp_path / "missing.wav")
    os.mkfifo(tmp_path / "pipe")
    assert not is_project(tmp_path / "pipe")  # and did not block
    with pytest.raises(ProjectFileError, match="broken.spp.*not a zip"):
        load_project(tmp_path / "broken.spp")


# --- bad files -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small edited project (FLAC audio, three edit members, one stroke) and its document."""
    folder = tmp_path_factory.mktemp("saved")
    samples = np.rint(music(0.5) * 2**15) / 2**15
    document = edited_document(samples, AudioFormat("WAV", "PCM_16", RATE, 2))
    strokes = [{"brush": "gain", "events": [[0.0, 1.0, 2.0]]}]
    save_project(document, folder / "p.spp", view={"zoom": 1}, strokes=strokes)
    return folder / "p.spp", document


def refused(path, reason: str) -> None:
    with pytest.raises(ProjectFileError) as caught:
        load_project(path)
    message = str(caught.value)
    assert message.startswith(f"cannot open project '{path}': "), message
    assert re.search(reason, message), message


def first_edit(path) -> dict:
    return manifest_of(path)["edits"][0]


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda m: m.update(version=2), "newer SpectroPaint .*version 2"),
        (lambda m: m.update(version="1"), "unknown project format version '1'"),
        (lambda m: m.update(format="zip"), "not a project file"),
        (lambda m: m["edits"][0]["shape"].__setitem__(2, 100), "has shape .* not"),
        (lambda m: m["edits"][-1].update(frame1=10**6), r"frame1 = 1000000 is outside"),
        (lambda m: m["edits"][1].update(frame0=0), "overlap or are out of order"),
        (lambda m: m["edits"][0].update(dtype="|O"), r"edit dtype '\|O'"),
        (lambda m: m["edits"][0].update(member="../evil.npy"), "should be 'edits/"),
        (lambda m: m["blocks"][0].update(frames=10), "do not match"),
        (lambda m: m["audio"].update(frames=m["audio"]["frames"] + 512), "do not match"),
        (lambda m: m["audio"].update(channels=0), "channels = 0 is outside"),
        (lambda m: m["audio"].update(sample_rate=True), "wrong type"),
        (lambda m: m["transform"]["settings"].update(hop=4096), "hop must be"),
        (lambda m: m["transform"]["settings"].update(colour="red"), "bad transform settings"),
        (lambda m: m["transform"].update(name="wavelet"), "unknown transform 'wavelet'"),
        (lambda m: m["transform"].update(name="nsgt"), "bad nsgt settings"),
        (lambda m: m["audio"]["storage"].update(member="../audio.flac"), "unknown audio member"),
        (lambda m: m["strokes"].update(count=5), "holds 1 strokes, the manifest declares 5"),
        (lambda m: m.pop("view"), "manifest field view is missing"),
    ],
)
def test_manifest_lies_and_bad_fields_are_refused(saved, tmp_path, change, reason):
    with_manifest(saved[0], tmp_path / "bad.spp", change)
    refused(tmp_path / "bad.spp", reason)


def test_consistent_manifest_for_enormous_audio_is_refused_before_allocating(saved, tmp_path):
    def enormous(manifest):
        frames = 2**40
        manifest["audio"]["frames"] = frames
        manifest["blocks"][0]["frames"] = 1 + frames // SMALL.hop

    with_manifest(saved[0], tmp_path / "bad.spp", enormous)
    refused(tmp_path / "bad.spp", "too large: would need")
    with pytest.raises(ProjectFileError, match="too large"):
        load_project(saved[0], max_bytes=1_000_000)


def test_audio_that_differs_from_the_manifest_is_refused(saved, tmp_path):
    with zipfile.ZipFile(saved[0]) as archive:
        flac = archive.read("audio.flac")
    mono = io.BytesIO()
    sf.write(mono, music(0.5, channels=1).T, RATE, format="FLAC", subtype="PCM_16")
    rewrite(saved[0], tmp_path / "mono.spp", replace={"audio.flac": mono.getvalue()})
    refused(tmp_path / "mono.spp", r"its audio is .*\(1, 22050\).*the manifest declares")
    rewrite(saved[0], tmp_path / "cut.spp", replace={"audio.flac": flac[: len(flac) // 2]})
    refused(tmp_path / "cut.spp", "its audio is damaged")


@pytest.mark.parametrize("name", ["../evil", "/etc/evil", "edits/../../evil.npy", "C:/evil"])
def test_unsafe_member_names_are_refused(saved, tmp_path, name):
    rewrite(saved[0], tmp_path / "bad.spp", add=[(name, b"x")])
    refused(tmp_path / "bad.spp", "unsafe name")
    assert not (tmp_path.parent / "evil").exists()


def test_missing_extra_and_duplicate_members_are_refused(saved, tmp_path):
    member = first_edit(saved[0])["member"]
    rewrite(saved[0], tmp_path / "missing.spp", drop=[member])
    refused(tmp_path / "missing.spp", f"member '{member}' is missing")
    rewrite(saved[0], tmp_path / "extra.spp", add=[("notes.txt", b"hello")])
    refused(tmp_path / "extra.spp", "unexpected member 'notes.txt'")
    with pytest.warns(UserWarning, match="Duplicate name"):
        rewrite(saved[0], tmp_path / "twice.spp", add=[("strokes.json", b"{}")])
    refused(tmp_path / "twice.spp", "'strokes.json' appears twice")
    rewrite(saved[0], tmp_path / "bare.spp", drop=["manifest.json"])
    refused(tmp_path / "bare.spp", "no manifest.json")


def test_arrays_that_differ_from_their_declaration_are_refused(saved, tmp_path):
    entry = first_edit(saved[0])
    shape = tuple(entry["shape"])
    cases = {
        "other shape": (np.zeros((*shape[:3], shape[3] + 1), "<f4"), "holds float32 .* declares"),
        "integers": (np.zeros(shape, "<i4"), "holds int32"),
        "pickled objects": (np.array([{"a": 1}], dtype=object), "holds object"),
        "fortran order": (np.asfortranarray(np.zeros(shape, "<f4")), "holds float32"),
    }
    for name, (array, reason) in cases.items():
        path = tmp_path / f"{name}.spp"
        rewrite(saved[0], path, replace={entry["member"]: npy_bytes(array)})
        refused(path, reason)
    rewrite(saved[0], tmp_path / "junk.spp", replace={entry["member"]: b"\x93NUMPY junk"})
    refused(tmp_path / "junk.spp", "not a valid .npy array")
    short = npy_bytes(np.zeros(shape, "<f4"))[:-8]
    rewrite(saved[0], tmp_path / "short.spp", replace={entry["member"]: short})
    refused(tmp_path / "short.spp", "header and shape need")


@pytest.mark.parametrize("member", ["edit", "audio.flac", "manifest.json", "strokes.json"])
def test_a_huge_declared_size_is_refused_before_reading(saved, tmp_path, member):
    name = first_edit(saved[0])["member"] if member == "edit" else member
    path = tmp_path / "bomb.spp"
    path.write_bytes(saved[0].read_bytes())
    patch_declared_size(path, name, 0xFFFF_FFF0)
    refused(path, f"member '{name}' declares 4294967280 bytes")


@pytest.mark.parametrize(
    ("value", "where"), [(np.nan, "magnitude"), (3e38, "magnitude"), (np.inf, "phase")]
)
def test_edits_that_would_overflow_are_refused_naming_the_member(saved, tmp_path, value, where):
    """NaN, infinite or absurd stored edits are refused at load, not blamed on an export later."""
    entry = first_edit(saved[0])
    with zipfile.ZipFile(saved[0]) as archive:
        values = np.load(io.BytesIO(archive.read(entry["member"])))
    values[1, 0 if where == "magnitude" else 1, 3, 0] = value
    rewrite(saved[0], tmp_path / "bad.spp", replace={entry["member"]: npy_bytes(values)})
    refused(
        tmp_path / "bad.spp",
        rf"member '{entry['member']}' holds NaN, infinite or absurd coefficients .* channel 2",
    )
    values[1, 0, 3, 0] = 1e19  # loud, but finite all the way through: kept
    values[1, 1, 3, 0] = 0.0
    rewrite(saved[0], tmp_path / "loud.spp", replace={entry["member"]: npy_bytes(values)})
    document = load_project(tmp_path / "loud.spp").document
    assert np.isfinite(document.edited_samples()).all()


def test_audio_samples_that_are_not_finite_are_refused(tmp_path):
    samples = music(0.5).astype(np.float32).astype(np.float64)
    document = Document.from_samples(samples, RATE, settings=SMALL, device="cpu")
    save_project(document, tmp_path / "p.spp")
    stored = samples.astype("<f4")
    stored[1, RATE // 4] = np.nan  # channel 2 at 0.250 s
    rewrite(tmp_path / "p.spp", tmp_path / "nan.spp", replace={"audio.npy": npy_bytes(stored)})
    refused(tmp_path / "nan.spp", r"'audio.npy' holds a NaN, .* channel 2 at 0\.250 s")


def test_a_member_that_inflates_past_its_declared_size_is_never_inflated_in_memory(tmp_path):
    """256 MiB of spaces that declare 300 bytes: reading stops at 300, and the CRC refuses it."""
    path = write_zip_bomb(tmp_path / "bomb.spp", inflated=2**28, declared=300)
    tracemalloc.start()
    try:
        refused(path, r"damaged archive \(Bad CRC-32 for file 'manifest.json'\)")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak  # not the 256 MiB it would inflate to


def test_a_whole_project_that_would_not_fit_is_refused_before_inflating(tmp_path):
    """Ten minutes of deflated silence is a few kB, but needs gigabytes once opened."""
    frames = 600 * RATE
    path = write_silence_project(tmp_path / "silence.spp", seconds=600, settings=SMALL, rate=RATE)
    assert path.stat().st_size < 2_000_000
    need = 2 * frames * 8 + 2 * 257 * (1 + frames // SMALL.hop) * 8  # samples, spectrogram
    tracemalloc.start()
    try:
        with pytest.raises(ProjectFileError, match=r"too large: would need .*audio 423\.4 MB"):
            load_project(path, max_bytes=need // 2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak


def test_truncated_corrupt_and_non_zip_files_are_refused(saved, tmp_path):
    data = saved[0].read_bytes()
    (tmp_path / "half.spp").write_bytes(data[: len(data) // 2])
    refused(tmp_path / "half.spp", "not a zip archive")
    with zipfile.ZipFile(saved[0]) as archive:
        offset = archive.getinfo("audio.flac").header_offset + 100
    flipped = bytearray(data)
    flipped[offset : offset + 16] = bytes(16)
    (tmp_path / "flipped.spp").write_bytes(bytes(flipped))
    refused(tmp_path / "flipped.spp", "damaged archive.*CRC")
    (tmp_path / "empty.spp").write_bytes(b"")
    refused(tmp_path / "empty.spp", "not a zip archive")
    refused(tmp_path / "absent.spp", "no such file")
    refused(tmp_path, "is a folder")
    os.mkfifo(tmp_path / "pipe.spp")
    refused(tmp_path / "pipe.spp", "not a regular file")
    rewrite(saved[0], tmp_path / "json.spp", replace={"manifest.json": b'{"format": NaN'})
    refused(tmp_path / "json.spp", "'manifest.json': not valid JSON")


def test_random_corruption_is_refused_or_harmless(saved, tmp_path):
    """Every single-byte change gives a ProjectFileError or the very same document."""
    path, document = saved
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:  # the zip's own structure, where checks matter most
        structure = [range(archive.start_dir, len(data))] + [
            range(info.header_offset, info.header_offset + 30 + len(info.filename))
            for info in archive.infolist()
        ]
    places = [i for part in structure for i in part]
    rng = random.Random(6)
    loaded = 0
    for trial in range(150):
        damaged = bytearray(data)
        for _ in range(rng.choice((1, 1, 3))):
            where = rng.choice(places) if rng.random() < 0.8 else rng.randrange(len(data))
            damaged[where] ^= 1 << rng.randrange(8)
        target = tmp_path / f"{trial}.spp"
        target.write_bytes(bytes(damaged))
        try:
            project = load_project(target)
        except ProjectFileError:
            continue
        assert_same_document(project.document, document)
        loaded += 1
    assert loaded < 150  # the corruption reached the checks


# --- saving safely ---------------------------------------------------------------------------------


def test_save_errors_name_the_file_and_leave_nothing(tmp_path):
    document = Document.from_samples(music(0.5), RATE, settings=SMALL, device="cpu")
    target = tmp_path / "missing" / "p.spp"
    with pytest.raises(ProjectFileError, match=r"cannot save project '.*p\.spp': folder .*"):
        save_project(document, target)
    with pytest.raises(ProjectFileError, match="view settings are not plain JSON"):
        save_project(document, tmp_path / "p.spp", view={"floor": float("nan")})
    with pytest.raises(ProjectFileError, match="strokes are not plain JSON"):
        save_project(document, tmp_path / "p.spp", strokes=[{"events": {1, 2}}])
    with pytest.raises(ProjectFileError, match="each recorded stroke must be a JSON object"):
        save_project(document, tmp_path / "p.spp", strokes=[[0, 1, 2]])
    assert list(tmp_path.iterdir()) == []


def test_stale_temporary_files_of_killed_saves_are_removed_and_live_ones_kept(tmp_path):
    document = Document.from_samples(music(0.5), RATE, settings=SMALL, device="cpu")
    stale = tmp_path / ".p.spp.0123456789ab.partial"
    fresh = tmp_path / ".p.spp.ba9876543210.partial"
    other = tmp_path / ".q.spp.0123456789ab.partial"
    for path in (stale, fresh, other):
        path.write_bytes(b"half a project")
    old = time.time() - 2 * STALE_PARTIAL_SECONDS
    for path in (stale, other):
        os.utime(path, (old, old))
    save_project(document, tmp_path / "p.spp")
    assert not stale.exists() and not other.exists()
    assert fresh.exists()
    assert_same_document(load_project(tmp_path / "p.spp").document, document)


SAVER = """
import sys
from spectropaint.transforms.files.project_file import load_project, save_project
source, target, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
project = load_project(source)
print("ready", flush=True)
sys.stdin.readline()
for number in range(first, first + 1000):
    print("begin", number, flush=True)
    save_project(project.document, target, view={"save": number}, strokes=project.strokes)
    print("done", number, flush=True)
"""


def test_killing_a_saving_process_leaves_the_old_or_the_new_project(tmp_path):
    samples = np.rint(music(6.0) * 2**15) / 2**15
    document = edited_document(samples, AudioFormat("WAV", "PCM_16", RATE, 2))
    edit(document, Region(0, 257, 500, 1200, (0, 1)), 0.5, 0.25)  # a large edit: slower saves
    strokes = [{"brush": "gain", "events": [[0.0, 1.0, 2.0]]}]
    source, target = tmp_path / "source.spp", tmp_path / "target.spp"
    save_project(document, source, strokes=strokes)
    started = time.perf_counter()
    save_project(document, target, view={"save": -1}, strokes=strokes)
    save_seconds = time.perf_counter() - started

    scratch = tmp_path / "scratch"  # where killed savers leave their FLAC scratch folders
    scratch.mkdir()

    def saver(first: int) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", SAVER, str(source), str(target), str(first)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "TMPDIR": str(scratch)},
        )

    rng = random.Random(1)
    mid_save = 0
    kills = 8
    child = saver(0)
    for kill in range(kills):
        waiting = saver(1000 * (kill + 1)) if kill + 1 < kills else None  # starts while this runs
        assert child.stdout.readline() == "ready\n"
        child.stdin.write("go\n")
        child.stdin.flush()
        lines = [child.stdout.readline(), child.stdout.readline()]  # one whole save of its own
        time.sleep(rng.uniform(0.0, 2.0 * save_seconds))
        child.send_signal(signal.SIGKILL)
        lines += child.stdout.read().split("\n")
        child.wait()
        begun = [int(line.split()[1]) for line in lines if line.startswith("begin")]
        done = [int(line.split()[1]) for line in lines if line.startswith("done")]
        in_flight = begun[-1] if begun and (not done or done[-1] != begun[-1]) else None
        mid_save += in_flight is not None

        project = load_project(target)
        assert project.view["save"] in {done[-1], in_flight}
        assert project.strokes == strokes
        assert_same_document(project.document, document)
        child = waiting
    assert mid_save > 0  # the kills did land inside saves

    leftovers = [p for p in tmp_path.iterdir() if p not in (source, target, scratch)]
    assert all(re.fullmatch(r"\.target\.spp\.[0-9a-f]{12}\.partial", p.name) for p in leftovers)
    old = time.time() - 2 * STALE_PARTIAL_SECONDS
    for path in leftovers:
        os.utime(path, (old, old))
    save_project(document, target, view={"save": "final"})
    assert sorted(tmp_path.iterdir()) == sorted([source, target, scratch])
    assert load_project(target).view == {"save": "final"}
