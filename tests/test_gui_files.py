"""Opening and exporting through the window's actions, with the dialogs answered by the test."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from gui_fixtures import drag, open_window, write_test_sound
from PIL import Image
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from spectropaint.app.panels.spin_slider import SpinSlider
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.png_axes import PictureFrame
from spectropaint.gpu.png_export import native_size

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def sound(tmp_path):
    path = tmp_path / "tones.wav"
    return path, write_test_sound(path)


@pytest.fixture
def window(qtbot, tmp_path, sound):
    return open_window(qtbot, tmp_path, sound[0])


def answer_save_dialog(monkeypatch, path, chosen_filter: str) -> list:
    asked = []

    def fake(parent, title, directory, filters):
        asked.append((title, directory, filters))
        return str(path), chosen_filter

    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake)
    return asked


def paint_a_stroke(qtbot, window) -> None:
    canvas = window.canvas
    width, height = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(width * f, height * 0.5) for f in (0.3, 0.4, 0.5)])


def test_export_audio_writes_the_edited_sound(window, qtbot, monkeypatch, tmp_path, sound):
    paint_a_stroke(qtbot, window)
    assert window.session.modified
    out = tmp_path / "exported"
    asked = answer_save_dialog(monkeypatch, out, "FLAC (*.flac)")
    window.actions_by_name["export_audio"].trigger()
    window.export_dialog.format.setCurrentText("FLAC")
    window.export_dialog.accept()
    qtbot.waitUntil(lambda: window.job is None, timeout=20000)
    assert (
        window.session.modified
    )  # an export renders the document; only saving the project saves it
    assert asked and asked[0][0] == "Export Audio"
    written = out.with_suffix(".flac")  # the chosen filter's suffix was added
    info = soundfile.info(written)
    assert (info.samplerate, info.channels, info.frames) == (22050, 2, sound[1].shape[1])
    samples, _ = soundfile.read(written, dtype="float64", always_2d=True)
    expected = window.session.document.edited_samples()
    assert not np.array_equal(expected, sound[1])  # the stroke is in what was written
    np.testing.assert_allclose(samples.T, expected, atol=2.0**-15)  # FLAC stores 16/24-bit integers
    assert str(written) in window.statusBar().currentMessage()


def test_export_image_writes_a_png_of_the_document(window, qtbot, monkeypatch, tmp_path):
    out = tmp_path / "picture.png"
    answer_save_dialog(monkeypatch, out, "PNG image (*.png)")
    window.actions_by_name["export_image"].trigger()
    window.export_dialog.size_mode.setCurrentIndex(1)  # native
    window.export_dialog.accept()
    qtbot.waitUntil(lambda: window.job is None, timeout=30000)
    document, view = window.session.document, window.canvas.view
    geometry = BlockGeometry.from_block(document.blocks[0], document.sample_rate)
    frame = PictureFrame(*native_size(view, geometry), view=view, geometry=geometry, axes=True)
    with Image.open(out) as image:
        assert image.format == "PNG" and image.mode == "RGB"
        assert image.size == (frame.total_width, frame.total_height)
        pixels = np.asarray(image)
    assert pixels.std() > 10  # a picture, not a blank page


def test_open_action_and_drop_load_the_chosen_file(window, qtbot, monkeypatch, tmp_path):
    other = tmp_path / "other.wav"
    soundfile.write(other, np.zeros((3000, 1)) + 0.1, 8000)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args: (str(other), ""))
    with qtbot.waitSignal(window.document_loaded, timeout=20000):
        window.actions_by_name["open"].trigger()
    assert window.session.document.sample_rate == 8000 and window.session.document.n_channels == 1
    assert window.store.recent_files()[0] == str(other)

    dropped = tmp_path / "dropped.wav"
    soundfile.write(dropped, np.zeros((4000, 2)), 16000)
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(dropped))])
    event = QDropEvent(
        QPointF(50, 50),
        Qt.DropAction.CopyAction,
        data,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(window.document_loaded, timeout=20000):
        window.dropEvent(event)
    assert window.session.document.sample_rate == 16000 and window.session.path == str(dropped)


def test_opening_a_bad_file_shows_why_and_keeps_the_document(window, qtbot, monkeypatch, tmp_path):
    bad = tmp_path / "notes.wav"
    bad.write_text("hello, not audio")
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    document = window.session.document
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: bool(shown), timeout=20000)
    assert "notes.wav" in shown[0]
    assert window.session.document is document


def test_quit_with_unsaved_edits_asks_and_cancel_keeps_the_window(window, qtbot, monkeypatch):
    paint_a_stroke(qtbot, window)
    asked = []

    def answer(*args):
        asked.append(args[1])
        return QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "warning", answer)
    window.actions_by_name["quit"].trigger()
    assert asked == ["Unsaved edits"] and window.isVisible()
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: QMessageBox.StandardButton.Discard)
    window.actions_by_name["quit"].trigger()
    qtbot.waitUntil(lambda: not window.isVisible())


def test_preferences_survive_a_restart(qtbot, tmp_path, sound):
    first = open_window(qtbot, tmp_path, sound[0])
    first.view_panel.colormap.setCurrentText("viridis")
    first.palette.actions_by_tool["blur"].trigger()
    first.brush_panel.findChild(SpinSlider, "brush_hardness").setValue(0.8)
    first.close()
    second = open_window(qtbot, tmp_path, sound[0])
    assert second.canvas.view.colormap == "viridis"
    assert second.canvas.tool.name == "blur"
    assert second.canvas.tool.settings.hardness == pytest.approx(0.8)
    assert second.store.last_folder == str(tmp_path)


def test_quit_while_a_sound_opens_cancels_the_opening_then_closes(window, qtbot, tmp_path):
    """Quitting during a long open used to cancel the open and leave the window up, so a user's
    Ctrl+Q seemed to do nothing: the window now closes once the cancelled work has ended."""
    long_file = tmp_path / "long.wav"
    soundfile.write(long_file, np.zeros((22050 * 120, 2), np.float32), 22050, subtype="FLOAT")
    document = window.session.document
    window.open_path(str(long_file))
    job = window.job
    window.actions_by_name["quit"].trigger()
    window.actions_by_name["quit"].trigger()  # (a second press while it cancels asks no more)
    assert window.isVisible() and "cancelling, then closing" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=20000)
    assert job.finished and window.job is None
    assert window.session is None or window.session.path != str(long_file)
    assert document is not None


def test_opening_can_be_cancelled_and_keeps_the_current_sound(window, qtbot, tmp_path):
    long_file = tmp_path / "long.wav"
    soundfile.write(long_file, np.zeros((22050 * 120, 2), np.float32), 22050, subtype="FLOAT")
    document = window.session.document
    window.open_path(str(long_file))
    job = window.job
    job.cancel()  # as the progress dialog's Cancel button does
    qtbot.waitUntil(lambda: window.job is None, timeout=20000)
    assert "cancelled" in window.statusBar().currentMessage()
    assert window.session.document is document and window.session.path != str(long_file)
