"""The export dialogs: audio with format, depth, rate and dither; images as shown, whole, any size."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from gui_fixtures import canvas_pixels, open_window, wait_for_fresh_frame
from PIL import Image
from PySide6.QtWidgets import QFileDialog

from spectropaint.gpu.png_axes import BOTTOM, LEFT, RIGHT, TOP

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def window(qtbot, tmp_path):
    rate = 22050
    t = np.arange(2 * rate) / rate
    samples = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.2 * np.sin(2 * np.pi * 1320 * t)])
    path = tmp_path / "take.wav"
    soundfile.write(path, samples.T, rate, subtype="PCM_16")
    return open_window(qtbot, tmp_path, path)


def answer(monkeypatch, path) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(path), ""))


def export(qtbot, window, action: str, set_up=lambda dialog: None) -> None:
    window.actions_by_name[action].trigger()
    set_up(window.export_dialog)
    window.export_dialog.accept()
    qtbot.waitUntil(lambda: window.job is None, timeout=30000)


def test_audio_defaults_to_the_source_and_an_unedited_file_exports_bit_for_bit(
    window, qtbot, monkeypatch, tmp_path
):
    out = tmp_path / "same.wav"
    answer(monkeypatch, out)
    window.actions_by_name["export_audio"].trigger()
    dialog = window.export_dialog
    options = dialog.options()
    assert (options.format, options.subtype, options.sample_rate, options.dither) == (
        "WAV", "PCM_16", 22050, True,
    )  # fmt: skip
    dialog.accept()
    qtbot.waitUntil(lambda: window.job is None, timeout=30000)
    written, _ = soundfile.read(out, dtype="int16")
    source, _ = soundfile.read(tmp_path / "take.wav", dtype="int16")
    np.testing.assert_array_equal(written, source)  # dither only where rounding is needed


def test_audio_at_another_rate_and_depth(window, qtbot, monkeypatch, tmp_path):
    out = tmp_path / "hi.flac"
    answer(monkeypatch, out)

    def choose(dialog):
        dialog.format.setCurrentText("FLAC")
        assert [dialog.sample_format.itemData(i) for i in range(dialog.sample_format.count())] == [
            "PCM_16", "PCM_24",
        ]  # fmt: skip
        dialog.sample_format.setCurrentIndex(dialog.sample_format.findData("PCM_24"))
        dialog.rate.setCurrentIndex(dialog.rate.findData(48000))
        assert dialog.dither.isEnabled()

    export(qtbot, window, "export_audio", choose)
    info = soundfile.info(out)
    assert (info.format, info.subtype, info.samplerate) == ("FLAC", "PCM_24", 48000)
    assert info.frames == 2 * 48000
    written, _ = soundfile.read(out, always_2d=True)
    t = np.arange(2 * 48000) / 48000
    middle = slice(4800, -4800)
    error = written[middle, 0] - 0.3 * np.sin(2 * np.pi * 440 * t)[middle]
    # the 16-bit source's own error against the ideal sine, and next to nothing more
    source = window.session.document.audio.samples[0]
    ideal = 0.3 * np.sin(2 * np.pi * 440 * np.arange(source.size) / 22050)
    source_rms = np.sqrt(np.mean((source - ideal) ** 2))
    assert np.sqrt(np.mean(error**2)) < 1.05 * source_rms


def test_float_output_has_no_dither_to_offer(window):
    window.actions_by_name["export_audio"].trigger()
    dialog = window.export_dialog
    dialog.sample_format.setCurrentIndex(dialog.sample_format.findData("FLOAT"))
    assert not dialog.dither.isEnabled() and not dialog.options().dither
    dialog.reject()


def test_image_as_shown_is_what_the_canvas_shows(window, qtbot, monkeypatch, tmp_path):
    canvas = window.canvas
    canvas.zoom(3.0)
    canvas.zoom(2.0, time=False, freq=True)
    canvas.set_playhead(None)
    wait_for_fresh_frame(qtbot, canvas)
    shown = canvas_pixels(canvas)
    out = tmp_path / "shown.png"
    answer(monkeypatch, out)
    export(qtbot, window, "export_image")
    with Image.open(out) as image:
        pixels = np.asarray(image.convert("RGB"))
    height, width = shown.shape[:2]
    assert pixels.shape[:2] == (TOP + height + BOTTOM, LEFT + width + RIGHT)
    picture = pixels[TOP : TOP + height, LEFT : LEFT + width]
    assert np.abs(picture.astype(int) - shown).mean() < 1.0
    assert "1 GPU piece," in window.statusBar().currentMessage()


def test_image_of_the_whole_sound_at_native_size_without_axes(window, qtbot, monkeypatch, tmp_path):
    window.canvas.zoom(4.0)
    window.view_panel.scale.setCurrentText("linear")
    out = tmp_path / "whole.png"
    answer(monkeypatch, out)

    def choose(dialog):
        dialog.part.setCurrentIndex(1)  # the whole sound
        dialog.size_mode.setCurrentIndex(1)  # native
        dialog.axes.setChecked(False)
        dialog.colormap.setCurrentText("grayscale")

    export(qtbot, window, "export_image", choose)
    block = window.session.document.blocks[0]
    with Image.open(out) as image:
        assert image.size == (block.n_frames, block.n_bins)
        pixels = np.asarray(image.convert("RGB"))
    assert (pixels[..., 0] == pixels[..., 1]).all()  # grayscale, as chosen
    loudest_row = block.n_bins - 1 - int(block.magnitude[0].mean(dim=1).argmax())
    assert pixels[loudest_row].mean() > 200  # the 440 Hz tone, bright
