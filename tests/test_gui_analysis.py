"""The Analysis dialog: switching the open document to the NSGT and back keeps its edits, the
window paints on the NSGT, and bad settings are refused in the dialog with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from gui_fixtures import canvas_pixels, drag, open_window, wait_for_fresh_frame, write_test_sound

from spectropaint.app.panels.analysis_dialog import AnalysisDialog
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


def test_bad_settings_stay_in_the_dialog_with_the_reason(qtbot):
    dialog = AnalysisDialog(STFTSettings())
    qtbot.addWidget(dialog)
    dialog.transform.setCurrentIndex(1)
    dialog.fmin.setValue(5000.0)
    dialog.fmax.setValue(6000.0)
    dialog._accept()
    assert "fmax must be at least an octave above fmin" in dialog.problem.text()
    assert dialog.result() == 0
