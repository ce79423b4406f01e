"""The document: analysis on a device, region edits, and resynthesis by difference."""

import threading
import time

import numpy as np
import pytest
import soundfile as sf
import torch

from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import AudioFileError, SettingsError
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings

RATE = 44100


def music(seconds=3.0, channels=2, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * seconds)) / RATE
    base = 0.4 * np.sin(2 * np.pi * 330 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 0.5 * t))
    return np.stack([base + 0.05 * rng.standard_normal(t.size) for _ in range(channels)])


def write_source(path, samples, subtype):
    sf.write(path, samples.T, RATE, subtype=subtype)
    return path


def raw(path):
    info = sf.info(path)
    dtype = "float64" if info.subtype in ("FLOAT", "DOUBLE") else "int32"
    data, _ = sf.read(path, dtype=dtype, always_2d=True)
    return data


def halve(document, region):
    magnitude, phase = document.read(region)
    document.write(region, magnitude * 0.5, phase)


@pytest.mark.parametrize(
    "name, subtype",
    [("a.wav", "PCM_16"), ("b.wav", "PCM_24"), ("c.wav", "FLOAT"), ("d.flac", "PCM_24")],
)
def test_unedited_document_exports_identical_pcm_in_the_source_format(tmp_path, name, subtype):
    source = write_source(tmp_path / name, music(1.0), subtype)
    document = Document.from_file(source, device="cpu")
    out = tmp_path / ("out" + source.suffix)
    report = document.export(out)
    assert report.subtype == subtype and report.clipped_samples == 0
    assert sf.info(out).subtype == subtype
    assert np.array_equal(raw(out), raw(source))


def test_edit_changes_only_the_samples_its_frames_reach(tmp_path):
    source = write_source(tmp_path / "in.wav", music(3.0), "PCM_24")
    document = Document.from_file(source, device="cpu")
    frame0, frame1 = 100, 120
    halve(document, Region(0, 1025, frame0, frame1, (0, 1)))
    document.export(tmp_path / "out.wav")
    before, after = raw(source), raw(tmp_path / "out.wav")
    start, stop = document.transform.samples_reached(0, frame0, frame1, document.n_samples)
    assert (start, stop) == (frame0 * 512 - 1024, (frame1 - 1) * 512 + 1024)
    assert np.array_equal(before[:start], after[:start])
    assert np.array_equal(before[stop:], after[stop:])
    inside = after[start:stop].astype(np.float64) / before[start:stop]
    middle = inside[(stop - start) // 2 - 200 : (stop - start) // 2 + 200]
    assert np.allclose(middle, 0.5, atol=0.01)  # halving every bin halves the signal


def test_edited_round_trip_matches_a_full_inverse_to_1e_5(tmp_path):
    document = Document.from_samples(music(2.0), RATE, device="cpu")
    block = document.blocks[0]
    halve(document, Region(10, 400, 30, 60, (0,)))
    magnitude, phase = document.read(Region(0, 1025, 70, 75, (0, 1)))
    document.write(Region(0, 1025, 70, 75, (0, 1)), magnitude, phase + 1.0)
    edited = document.edited_samples()
    full = (
        document.transform.synthesise(
            [torch.polar(block.magnitude, block.phase)], document.n_samples
        )
        .double()
        .numpy()
    )
    relative = np.linalg.norm(edited - full) / np.linalg.norm(full)
    assert relative < 1e-5
    assert np.linalg.norm(edited - document.audio.samples) / np.linalg.norm(full) > 1e-2


def test_edited_span_is_the_same_signal_as_edited_samples():
    document = Document.from_samples(music(2.0), RATE, device="cpu")
    halve(document, Region(0, 200, 40, 44, (1,)))
    halve(document, Region(0, 200, 46, 47, (0, 1)))
    whole = document.edited_samples()
    start, span = document.edited_span(41, 45)
    assert np.abs(span - whole[:, start : start + span.shape[-1]]).max() < 1e-12


def test_unedited_document_hands_back_the_original_array():
    samples = music(1.0)
    document = Document.from_samples(samples, RATE, device="cpu")
    assert not document.is_edited
    assert np.array_equal(document.edited_samples(), samples)


def test_coefficients_live_on_the_chosen_device_with_the_documented_shapes():
    document = Document.from_samples(
        music(1.0, channels=3), RATE, device="cpu", settings=STFTSettings(n_fft=1024, hop=256)
    )
    block = document.blocks[0]
    assert block.magnitude.device.type == "cpu" and block.magnitude.dtype == torch.float32
    assert block.magnitude.shape == block.phase.shape == (3, 513, 1 + RATE // 256)
    assert block.frame_seconds[4] == pytest.approx(4 * 256 / RATE)
    assert block.band_hz[-1] == pytest.approx(RATE / 2)


def test_read_and_write_refuse_regions_outside_the_grid():
    document = Document.from_samples(music(1.0), RATE, device="cpu")
    with pytest.raises(ValueError, match="outside"):
        document.read(Region(0, 2000, 0, 10, (0,)))


def test_audio_shorter_than_one_window_opens_padded_and_exports_at_its_own_length(tmp_path):
    path = write_source(tmp_path / "short.wav", music(1.0)[:, :1000], "PCM_16")
    document = Document.from_file(path, device="cpu")
    (notice,) = document.notices.emitted
    assert f"'{path}': 1000 samples long, shorter than one analysis window (2048" in notice
    assert document.n_samples == 1000 and document.blocks[0].n_frames == 1 + 2048 // 512
    document.export(tmp_path / "same.wav")
    assert np.array_equal(raw(tmp_path / "same.wav"), raw(path))  # unedited: bit for bit

    block = document.blocks[0]
    halve(document, Region(0, block.n_bins, 0, block.n_frames, (0, 1)))
    document.export(tmp_path / "half.wav")
    before, after = raw(path).astype(np.float64), raw(tmp_path / "half.wav").astype(np.float64)
    assert after.shape == before.shape
    gain_db = 20 * np.log10(np.linalg.norm(after) / np.linalg.norm(before))
    assert gain_db == pytest.approx(-6.02, abs=0.1)  # halved everywhere, padding cut off


def test_unavailable_device_is_a_settings_error():
    wanted = "cuda" if not torch.cuda.is_available() else "cuda:99"
    with pytest.raises(SettingsError, match="not available|only"):
        Document.from_samples(music(1.0), RATE, device=wanted)


def test_export_counts_clipped_samples(tmp_path):
    source = write_source(tmp_path / "in.wav", music(1.0), "PCM_16")
    document = Document.from_file(source, device="cpu")
    region = Region(0, 1025, 20, 40, (0, 1))
    magnitude, phase = document.read(region)
    document.write(region, magnitude * 8.0, phase)
    report = document.export(tmp_path / "loud.wav")
    assert report.clipped_samples > 0
    data, _ = sf.read(tmp_path / "loud.wav", dtype="int16")
    assert np.sum((data == 32767) | (data == -32768)) >= report.clipped_samples * 0.9


def test_export_to_an_unknown_suffix_is_refused(tmp_path):
    document = Document.from_samples(music(1.0), RATE, device="cpu")
    with pytest.raises(AudioFileError, match=r"out\.xyz.*suffix"):
        document.export(tmp_path / "out.xyz")


def test_export_reports_progress_and_a_cancel_leaves_the_old_file(tmp_path):
    from spectropaint.transforms.errors import Cancelled

    document = Document.from_samples(music(3.0), RATE, device="cpu")
    halve(document, Region(0, 1025, 10, 20, (0, 1)))
    halve(document, Region(0, 1025, 200, 210, (0, 1)))
    out = tmp_path / "out.wav"
    seen = []
    document.export(out, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and any(f <= 0.5 for f in seen)
    before = out.read_bytes()
    halve(document, Region(0, 1025, 100, 110, (0, 1)))
    with pytest.raises(Cancelled):
        document.export(out, progress=lambda fraction: fraction < 0.6)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.wav"]  # no temporary left


def test_an_edit_is_added_to_the_original_in_parts_on_threads_bit_for_bit(monkeypatch):
    from spectropaint.transforms import document as document_module
    from spectropaint.transforms import ordered_threads

    monkeypatch.setattr(ordered_threads.os, "cpu_count", lambda: 4)
    rng = np.random.default_rng(3)
    n = 3 * document_module.HOST_PART + 17  # 3 threads, the last part shorter
    original = rng.standard_normal((2, n + 5))[:, 5:]
    near = rng.standard_normal((2, n)).astype(np.float32)
    out = np.full((2, n), np.nan)
    parts = []
    add, copyto = np.add, np.copyto

    def counting_copy(into, source):
        parts.append(("copy", into.shape[-1], threading.current_thread().name))
        return copyto(into, source)

    def counting_add(a, b, *, out):
        parts.append(("add", out.shape[-1], threading.current_thread().name))
        return add(a, b, out=out)

    monkeypatch.setattr(document_module.np, "copyto", counting_copy)
    monkeypatch.setattr(document_module.np, "add", counting_add)
    ordered_threads.finish(document_module._copy_in_parts(out, original))
    document_module._add_in_parts(out, near)
    monkeypatch.setattr(document_module.np, "add", add)
    monkeypatch.setattr(document_module.np, "copyto", copyto)
    np.testing.assert_array_equal(out, original + near)
    step = -(-n // 3)
    sizes = sorted([step, step, n - 2 * step])
    assert sorted(size for what, size, _ in parts if what == "copy") == sizes
    assert sorted(size for what, size, _ in parts if what == "add") == sizes
    assert all(name.startswith("spectropaint-host") for *_, name in parts)


def test_a_short_span_is_one_part_and_an_error_in_a_part_is_raised_after_all_finished():
    from spectropaint.transforms import ordered_threads

    done = []

    def work(part):
        time.sleep(0.05 if part.start else 0)
        done.append(part)
        if not part.start:
            raise ValueError("part 0")

    assert len(ordered_threads.in_column_parts(done.append, 1000, 1 << 17)) == 1
    futures = ordered_threads.in_column_parts(work, 4, 1)
    with pytest.raises(ValueError, match="part 0"):
        ordered_threads.finish(futures)
    assert len(done) == 1 + len(futures)  # the slow parts had finished when the error came
