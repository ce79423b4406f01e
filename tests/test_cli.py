"""The ``spectropaint render`` command, run as a person would: a real process, real files."""

import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from spectropaint.app.cli import main

RATE = 44100


def run_cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "spectropaint", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def source(tmp_path):
    rng = np.random.default_rng(3)
    samples = (0.2 * rng.standard_normal((RATE, 2))).clip(-1, 1)
    path = tmp_path / "in.wav"
    sf.write(path, samples, RATE, subtype="PCM_16")
    return path


def test_render_without_strokes_writes_identical_audio(tmp_path, source):
    out = tmp_path / "out.wav"
    result = run_cli("render", source, "--wav", out)
    assert result.returncode == 0, result.stderr
    assert "out.wav" in result.stdout and "PCM_16" in result.stdout
    original, _ = sf.read(source, dtype="int16")
    written, rate = sf.read(out, dtype="int16")
    assert rate == RATE and np.array_equal(original, written)


def test_render_converts_to_a_chosen_subtype(tmp_path, source):
    out = tmp_path / "out.flac"
    assert main(["render", str(source), "--wav", str(out), "--subtype", "PCM_24"]) == 0
    info = sf.info(out)
    assert (info.format, info.subtype, info.channels) == ("FLAC", "PCM_24", 2)
    original, _ = sf.read(source, dtype="int32")
    assert np.array_equal(sf.read(out, dtype="int32")[0], original)


def test_render_of_a_missing_file_exits_1_naming_it(tmp_path):
    missing = tmp_path / "nope.wav"
    result = run_cli("render", missing, "--wav", tmp_path / "out.wav")
    assert result.returncode == 1
    assert str(missing) in result.stderr and "not" in result.stderr.lower()
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.wav").exists()


def test_render_of_every_bad_file_exits_1_with_the_reason(tmp_path, capsys):
    from bad_audio import make_bad_files

    corpus = make_bad_files(tmp_path / "bad")
    for name, (path, reason) in corpus.items():
        code = main(["render", str(path), "--wav", str(tmp_path / "out.wav")])
        err = capsys.readouterr().err
        assert code == 1, name
        assert os.fspath(path) in err and reason.lower() in err.lower(), (name, err)
    assert not (tmp_path / "out.wav").exists()


def test_render_needs_an_output(source, capsys):
    assert main(["render", str(source)]) == 2
    assert "--wav" in capsys.readouterr().err


def test_render_writes_a_native_resolution_png(tmp_path, source):
    from PIL import Image

    out = tmp_path / "spec.png"
    assert main(["render", str(source), "--png", str(out), "--colormap", "viridis"]) == 0
    with Image.open(out) as image:
        assert image.size == (1 + RATE // 512, 1025)  # one pixel per frame and bin
        pixels = np.asarray(image.convert("RGB"))
    assert pixels.std() > 5  # noise renders as texture, not a flat fill


def test_render_png_at_a_chosen_size_with_axes_and_log_scale(tmp_path, source):
    from PIL import Image

    plain, framed = tmp_path / "plain.png", tmp_path / "framed.png"
    common = ["--size", "320x200", "--freq-scale", "log", "--range", "60"]
    assert main(["render", str(source), "--png", str(plain), *common]) == 0
    assert main(["render", str(source), "--png", str(framed), *common, "--axes"]) == 0
    with Image.open(plain) as image:
        assert image.size == (320, 200)
    with Image.open(framed) as image:
        assert image.size[0] > 320 and image.size[1] > 200  # margins for labels and the dB bar


def test_render_png_to_a_missing_folder_exits_1_naming_it(tmp_path, source, capsys):
    out = tmp_path / "no" / "such" / "spec.png"
    assert main(["render", str(source), "--png", str(out)]) == 1
    assert str(tmp_path / "no") in capsys.readouterr().err


def test_render_applies_example_strokes_the_same_way_every_run(tmp_path):
    from importlib.resources import files

    rng = np.random.default_rng(5)
    source = tmp_path / "noise.wav"
    sf.write(source, (0.1 * rng.standard_normal((3 * RATE, 2))), RATE, subtype="PCM_24")
    strokes = files("spectropaint.resources") / "strokes" / "erase_band.json"
    first, second = tmp_path / "a.wav", tmp_path / "b.wav"
    for out in (first, second):
        assert main(["render", str(source), "--strokes", str(strokes), "--wav", str(out)]) == 0
    a, _ = sf.read(first, dtype="int32")
    b, _ = sf.read(second, dtype="int32")
    original, _ = sf.read(source, dtype="int32")
    assert np.array_equal(a, b)  # deterministic
    changed = np.flatnonzero(np.any(a != original, axis=1))
    assert changed.size > 0

    # The erased band sits around bin 46 (~990 Hz): energy there drops, far from it does not.
    def band_db(x, lo, hi):
        spectrum = np.abs(np.fft.rfft(x[changed[0] : changed[-1] + 1, 0].astype(float)))
        freqs = np.fft.rfftfreq(changed[-1] + 1 - changed[0], 1 / RATE)
        return 10 * np.log10(np.sum(spectrum[(freqs >= lo) & (freqs < hi)] ** 2))

    assert band_db(original, 900, 1080) - band_db(a, 900, 1080) > 6
    assert abs(band_db(original, 5000, 8000) - band_db(a, 5000, 8000)) < 1


def test_render_with_a_broken_stroke_file_exits_1_naming_it(tmp_path, source, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text(
        '{"format": "spectropaint-strokes", "version": 1, "strokes": [{"brush": "nope"'
    )
    assert (
        main(["render", str(source), "--strokes", str(broken), "--wav", str(tmp_path / "o.wav")])
        == 1
    )
    assert "broken.json" in capsys.readouterr().err
    assert not (tmp_path / "o.wav").exists()


def test_render_saves_a_project_that_renders_the_same_audio(tmp_path, source):
    from importlib.resources import files

    strokes = files("spectropaint.resources") / "strokes" / "erase_band.json"
    project, direct, via_project = tmp_path / "p.spp", tmp_path / "a.wav", tmp_path / "b.wav"
    args = ["render", str(source), "--strokes", str(strokes)]
    assert main([*args, "--project", str(project), "--wav", str(direct)]) == 0
    assert main(["render", str(project), "--wav", str(via_project)]) == 0
    a, _ = sf.read(direct, dtype="int16")
    b, _ = sf.read(via_project, dtype="int16")
    original, _ = sf.read(source, dtype="int16")
    assert np.array_equal(a, b) and not np.array_equal(a, original)
    from spectropaint.transforms.files.project_file import load_project

    saved = load_project(project, device="cpu")
    assert [stroke["brush"] for stroke in saved.strokes] == ["erase"] * len(saved.strokes) != []


def test_render_of_a_damaged_project_exits_1_naming_it(tmp_path, capsys):
    damaged = tmp_path / "bad.spp"
    damaged.write_bytes(b"PK\x03\x04 not really a zip")
    assert main(["render", str(damaged), "--wav", str(tmp_path / "o.wav")]) == 1
    assert "bad.spp" in capsys.readouterr().err
