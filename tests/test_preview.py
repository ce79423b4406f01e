"""The coarse picture shown while a file opens: read from a few windows of the file, coloured and
warped as the view shows it, and like the full picture."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from gui_fixtures import canvas_pixels, open_window

from spectropaint.app.preview import preview_picture, read_windows
from spectropaint.gpu.view import ViewSettings

RATE = 22050


def tones(path, seconds=3.0):
    t = np.arange(int(seconds * RATE)) / RATE
    left = 0.4 * np.sin(2 * np.pi * 500 * t) + 0.05 * np.sin(2 * np.pi * 3000 * t)
    soundfile.write(path, np.stack([left, left]).T, RATE, subtype="FLOAT")


def test_the_brightest_row_is_the_loudest_tone_on_each_axis(tmp_path):
    tones(tmp_path / "t.wav")
    windows, rate, frames = read_windows(str(tmp_path / "t.wav"), 64, 2048)
    assert windows.shape == (64, 2048) and rate == RATE and frames == 3 * RATE
    for scale in ("linear", "log", "mel"):
        view = ViewSettings(colormap="grayscale", freq_scale=scale)
        picture = preview_picture(windows, rate, view, 64, 300)
        assert picture.shape == (300, 64, 3)
        row = int(picture[..., 0].mean(axis=1).argmax())
        # where the view puts 500 Hz: the same warp the canvas uses
        from spectropaint.gpu.geometry import BlockGeometry
        from spectropaint.gpu.view_mapping import ViewMapping

        geometry = BlockGeometry(64, 1025, 0.0, RATE / 2048, 0.0, 1.0)
        expected = float(ViewMapping(geometry, view, 64, 300).y_of_hz(500.0))
        assert abs(row + 0.5 - expected) <= 2, scale


def test_files_that_cannot_be_read_give_no_preview(tmp_path):
    (tmp_path / "junk.wav").write_bytes(b"not audio at all" * 100)
    assert read_windows(str(tmp_path / "junk.wav"), 64, 2048) is None
    assert read_windows(str(tmp_path / "missing.wav"), 64, 2048) is None
    import os

    os.mkfifo(tmp_path / "pipe.wav")
    assert read_windows(str(tmp_path / "pipe.wav"), 64, 2048) is None  # without blocking


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas")
def test_the_window_shows_the_preview_first_and_it_looks_like_the_full_picture(qtbot, tmp_path):
    tones(tmp_path / "t.wav")
    shown = []
    from spectropaint.app.window.editor_area import EditorArea

    real = EditorArea.show_preview

    def recording(self, picture):
        shown.append((picture, self.canvas is None))
        real(self, picture)

    EditorArea.show_preview = recording
    try:
        window = open_window(qtbot, tmp_path, tmp_path / "t.wav")
    finally:
        EditorArea.show_preview = real
    assert len(shown) == 1 and shown[0][1]  # before the document was shown
    preview = shown[0][0].astype(int)
    full = canvas_pixels(window.canvas).astype(int)
    height = min(preview.shape[0], full.shape[0])
    width = min(preview.shape[1], full.shape[1])
    # the same colours where the playhead is not drawn (a steady sound: every column alike)
    difference = np.abs(preview[:height, 2:width] - full[:height, 2:width]).mean()
    assert difference < 12


def test_nan_in_a_float_file_previews_as_silence(tmp_path):
    samples = np.zeros((2, RATE))
    samples[0, 5000] = np.nan
    soundfile.write(tmp_path / "nan.wav", samples.T, RATE, subtype="FLOAT")
    windows, rate, _ = read_windows(str(tmp_path / "nan.wav"), 32, 2048)
    assert np.isfinite(windows).all()
    picture = preview_picture(windows, rate, ViewSettings(), 32, 40)
    assert picture.shape == (40, 32, 3)
