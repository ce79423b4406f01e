"""``spectropaint render --transform nsgt``: exact unedited export, strokes, projects and PNGs."""

import numpy as np
import pytest
import soundfile as sf
from PIL import Image

from spectropaint.app.cli import main
from spectropaint.transforms.files.project_file import load_project
from spectropaint.transforms.nsgt_design import NSGTSettings

RATE = 22050
NSGT_ARGS = ["--transform", "nsgt", "--scale", "mel", "--bins-per-octave", "24", "--fmin", "55"]


@pytest.fixture
def source(tmp_path):
    t = np.arange(3 * RATE) / RATE
    samples = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.2 * np.sin(2 * np.pi * 220 * t)])
    path = tmp_path / "in.wav"
    sf.write(path, samples.T, RATE, subtype="PCM_16")
    return path


def test_render_with_the_nsgt_writes_identical_audio_and_a_project_holding_it(tmp_path, source):
    out, project = tmp_path / "out.wav", tmp_path / "p.spp"
    assert (
        main(["render", str(source), *NSGT_ARGS, "--wav", str(out), "--project", str(project)]) == 0
    )
    assert np.array_equal(sf.read(out, dtype="int16")[0], sf.read(source, dtype="int16")[0])
    settings = load_project(project, device="cpu").document.settings
    assert settings == NSGTSettings(scale="mel", bins_per_octave=24, fmin=55.0)


def test_render_png_of_an_nsgt_document_draws_the_tones_where_they_are(tmp_path, source):
    png = tmp_path / "o.png"
    args = ["--png", str(png), "--size", "64x400", "--freq-scale", "log", "--colormap", "grayscale"]
    assert main(["render", str(source), *NSGT_ARGS, *args]) == 0
    rows = np.asarray(Image.open(png).convert("L"), dtype=float)[:, 32]
    top, bottom = np.log(RATE / 2), np.log(20.0)
    row = int((top - np.log(440.0)) / (top - bottom) * 400)
    assert rows[row - 3 : row + 4].max() > 150  # above -33 dB: the tone (-10 dB, between bands)
    assert rows[: row - 40].max() < 120  # nothing above it


def test_bad_nsgt_settings_exit_1_with_the_reason(source, tmp_path, capsys):
    args = ["render", str(source), "--transform", "nsgt", "--bins-per-octave", "7"]
    assert main([*args, "--wav", str(tmp_path / "o.wav")]) == 1
    assert "bins per octave must be an integer from 12 to 96" in capsys.readouterr().err
    args = ["render", str(source), "--transform", "nsgt", "--fmax", "12000"]
    assert main([*args, "--wav", str(tmp_path / "o.wav")]) == 1
    assert "in.wav" in capsys.readouterr().err
