"""The Analysis dialog: switching the open document to the NSGT and back keeps its edits, the
window paints on the NSGT, the switch is one undo step (Ctrl+Z shows the STFT again), and bad
settings are refused in the dialog with the reason."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gui_fixtures import canvas_pixels, drag, open_window, wait_for_fresh_frame, write_test_sound
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from spectropaint.app.panels.analysis_dialog import AnalysisDialog
from spectropaint.app.panels.reference_view import HINT, STALE
from spectropaint.gpu.bands_renderer import BandsRenderer
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.stft import STFTSettings

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def window(qtbot, tmp_path):
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    return open_window(qtbot, tmp_path, path)


def choose(window, qtbot, transform: int, **fields) -> None:
    window.actions_by_name["analysis"].trigger()
    dialog = window.analysis_dialog
    dialog.transform.setCurrentIndex(transform)
    for name, value in fields.items():
        widget = getattr(dialog, name)
        if hasattr(widget, "setValue"):
            widget.setValue(value)
        else:
            widget.setCurrentText(value)
    with qtbot.waitSignal(window.document_loaded, timeout=30000):
        dialog._accept()


def test_switching_to_the_nsgt_and_back_keeps_the_edits_and_paints(window, qtbot):
    canvas = window.canvas
    width, height = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(width * 0.3, height * 0.5), (width * 0.6, height * 0.5)])
    edited = window.session.document.edited_samples().copy()
    assert not np.array_equal(edited, window.session.document.audio.samples)
    choose(window, qtbot, 1, scale="mel", bins_per_octave=24, fmin=55.0)
    document = window.session.document
    assert document.settings == NSGTSettings(scale="mel", bins_per_octave=24, fmin=55.0)
    assert window.isWindowModified()
    error = np.linalg.norm(document.edited_samples() - edited) / np.linalg.norm(edited)
    assert 20 * np.log10(error) < -100
    wait_for_fresh_frame(qtbot, window.canvas)
    assert canvas_pixels(window.canvas).max() > 60  # the NSGT is drawn
    before = document.edited_samples().copy()
    canvas = window.canvas
    drag(qtbot, canvas, [(width * 0.2, height * 0.3), (width * 0.4, height * 0.3)])
    assert not np.array_equal(document.edited_samples(), before)  # painting works on it
    choose(window, qtbot, 0, n_fft="1024", hop=256)
    assert window.session.document.settings == STFTSettings(n_fft=1024, hop=256)
    error = np.linalg.norm(window.session.document.edited_samples() - document.edited_samples())
    assert 20 * np.log10(error / np.linalg.norm(edited)) < -100


def picture(qtbot, canvas) -> np.ndarray:
    """The canvas once drawn in full (a new canvas shows a coarse picture first)."""
    for _ in range(2):
        wait_for_fresh_frame(qtbot, canvas)
    return canvas_pixels(canvas)


def differing(picture: np.ndarray, other: np.ndarray) -> float:
    """The share of pixels more than 8 levels apart (the brush outline at the pointer is not
    drawn on a new canvas until the pointer moves)."""
    return float((np.abs(picture.astype(int) - other).max(-1) > 8).mean())


def coefficients(document) -> list[torch.Tensor]:
    return [torch.stack((b.magnitude, b.phase)).clone() for b in document.blocks]


def test_the_change_is_one_undo_step_and_ctrl_z_shows_the_stft_again(window, qtbot):
    canvas = window.canvas
    width, height = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(width * 0.3, height * 0.5), (width * 0.6, height * 0.5)])
    stft = window.session.document
    before = coefficients(stft)
    stft_picture = picture(qtbot, canvas)
    assert type(canvas.renderer) is not BandsRenderer

    choose(window, qtbot, 1, scale="log", bins_per_octave=24, fmin=55.0)
    assert window.session.document.transform.name == "nsgt"
    assert window.canvas is not canvas and type(window.canvas.renderer) is BandsRenderer
    assert window.canvas.renderer.document is window.session.document
    nsgt_picture = picture(qtbot, window.canvas)
    assert differing(nsgt_picture, stft_picture) > 0.2  # another picture
    history = window.history_panel.list
    assert "Analysis: NSGT log" in history.item(history.count() - 1).text()

    control = Qt.KeyboardModifier.ControlModifier
    window.activateWindow()  # from the dialog
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    with qtbot.waitSignal(window.document_loaded, timeout=30000):
        QTest.keyClick(window.canvas, Qt.Key.Key_Z, control)
    document = window.session.document
    assert document.settings == stft.settings and type(window.canvas.renderer) is not BandsRenderer
    for ours, theirs in zip(coefficients(document), before, strict=True):
        assert torch.equal(ours, theirs)
    wait_for_fresh_frame(qtbot, window.canvas)
    assert differing(picture(qtbot, window.canvas), stft_picture) < 0.01
    with qtbot.waitSignal(window.document_loaded, timeout=30000):
        QTest.keyClick(window.canvas, Qt.Key.Key_Z, control | Qt.KeyboardModifier.ShiftModifier)
    assert type(window.canvas.renderer) is BandsRenderer and window.isWindowModified()
    assert differing(picture(qtbot, window.canvas), nsgt_picture) < 0.01


def test_bad_settings_stay_in_the_dialog_with_the_reason(qtbot):
    dialog = AnalysisDialog(STFTSettings())
    qtbot.addWidget(dialog)
    dialog.transform.setCurrentIndex(1)
    dialog.fmin.setValue(5000.0)
    dialog.fmax.setValue(6000.0)
    dialog._accept()
    assert "fmax must be at least an octave above fmin" in dialog.problem.text()
    assert dialog.result() == 0


def test_a_change_of_analysis_keeps_the_seconds_and_hz_shown(window, qtbot):
    """The view is frames of the analysis shown; the new analysis (four times as many frames)
    shows the same seconds and Hz, not the old frame numbers."""
    from spectropaint.app.window import analysis_jobs

    canvas = window.canvas
    frames = canvas.renderer.geometry.frame_position(np.asarray([1.2, 1.8]))
    canvas.update_view(time_range=(float(frames[0]), float(frames[1])), freq_range=(200.0, 4000.0))
    assert canvas.mapping().seconds_span == pytest.approx((1.2, 1.8))
    analysis_jobs.change(window, STFTSettings(n_fft=2048, hop=128))
    qtbot.waitUntil(
        lambda: (
            window.replacing is None and window.canvas.lanes.document is window.session.document
        ),
        timeout=30000,
    )
    mapping = window.canvas.mapping()
    assert mapping.geometry.step_seconds == pytest.approx(128 / window.session.document.sample_rate)
    assert mapping.seconds_span == pytest.approx((1.2, 1.8), abs=1e-6)
    assert mapping.view.freq_range == pytest.approx((200.0, 4000.0))


def test_the_reference_picture_says_when_a_stroke_changed_the_audio_since(window, qtbot):
    reference = window.reference_view
    assert reference.analyse() is not None
    shown = reference.info.text()
    canvas = window.canvas
    width, height = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(width * 0.3, height * 0.5), (width * 0.6, height * 0.5)])
    assert reference.info.text() == shown + STALE
    choose(window, qtbot, 1)  # another document: its picture is not analysed yet
    assert window.reference_view.info.text() == HINT
