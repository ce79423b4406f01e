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


def test_an_image_queued_behind_a_change_of_analysis_shows_the_same_seconds(
    qtbot, monkeypatch, tmp_path
):
    """The dialog's part of the sound is seconds: an export that waits for a change of analysis
    (here to four times as many frames) draws those seconds of the new analysis, not the old
    analysis's frame numbers (which would fall in the first half, the low tone's)."""
    from spectropaint.app.window import analysis_jobs
    from spectropaint.transforms.stft import STFTSettings

    rate = 22050
    t = np.arange(2 * rate) / rate
    low, high = 440.0, 2000.0
    samples = np.where(t < 1.0, np.sin(2 * np.pi * low * t), np.sin(2 * np.pi * high * t)) * 0.3
    path = tmp_path / "two_halves.wav"
    soundfile.write(path, samples, rate, subtype="FLOAT")
    window = open_window(qtbot, tmp_path, path)
    window.view_panel.scale.setCurrentText("linear")
    canvas = window.canvas
    seconds = (1.2, 1.8)  # the high tone only
    frames = canvas.renderer.geometry.frame_position(np.asarray(seconds))
    canvas.update_view(time_range=(float(frames[0]), float(frames[1])), freq_range=None)
    out = tmp_path / "second_half.png"
    answer(monkeypatch, out)

    window.actions_by_name["export_image"].trigger()
    dialog = window.export_dialog
    dialog.axes.setChecked(False)
    analysis_jobs.change(window, STFTSettings(n_fft=2048, hop=128))
    dialog.accept()  # waits for the change of analysis
    assert window.when_idle.pending == 1 and not out.exists()
    qtbot.waitUntil(lambda: out.exists() and window.job is None, timeout=30000)

    geometry = window.canvas.renderer.geometry
    assert geometry.step_seconds == 128 / rate  # the export ran on the new analysis
    with Image.open(out) as image:
        pixels = np.asarray(image.convert("L"), dtype=float)
    height = pixels.shape[0]
    nyquist_edge = geometry.high_edge_hz
    low_edge = geometry.low_edge_hz

    def row(hz: float) -> int:
        return int((1 - (hz - low_edge) / (nyquist_edge - low_edge)) * height)

    quiet = pixels[row(6000.0)].mean()
    assert pixels[row(high)].mean() > quiet + 100  # the high tone, in every column
    assert pixels[row(high)].min() > quiet + 50
    assert pixels[row(low)].mean() < quiet + 10  # and no trace of the low tone's half


def test_image_seconds_outside_the_sound_are_refused_with_both_spans(window):
    """Seconds become frames of the analysis exported; a part wholly outside the sound (which a
    change of analysis keeps the length of, so only a hostile caller gets here) is refused."""
    from spectropaint.app.files.export_dialogs import ImageExportOptions
    from spectropaint.transforms.errors import SettingsError

    geometry = window.canvas.renderer.geometry
    options = ImageExportOptions(window.canvas.view, (0.5, 1.5), None, axes=False)
    start, stop = options.view_on(geometry, 2.0).time_range
    np.testing.assert_allclose(geometry.seconds_at(np.array([start, stop])), [0.5, 1.5], atol=1e-9)
    assert options.size_on(options.view_on(geometry, 2.0), geometry)[0] == round(stop - start)
    outside = ImageExportOptions(window.canvas.view, (3.0, 4.0), None, axes=False)
    with pytest.raises(
        SettingsError, match=r"3\.00-4\.00 s, lies outside the sound \(0\.00-2\.00 s\)"
    ):
        outside.view_on(geometry, 2.0)
