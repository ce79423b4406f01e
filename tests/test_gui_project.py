"""Projects in the window: strokes recorded and kept in step with undo, Save / Save As / Open of
``.spp`` files bit for bit, the close question, and autosave to the recovery folder."""

from __future__ import annotations

import os

import pytest
import torch
from gui_fixtures import drag, open_window, send_mouse, write_test_sound
from PySide6.QtCore import QEvent, QMimeData, QPointF, Qt, QThread, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from spectropaint.app.session import Snapshot
from spectropaint.brushes.recorded import apply_strokes
from spectropaint.gpu.view import ViewSettings, view_from_values, view_values
from spectropaint.transforms.document import Document
from spectropaint.transforms.files.project_file import load_project

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]
JOB_TIMEOUT_MS = 30000


@pytest.fixture
def sound(tmp_path):
    path = tmp_path / "tones.wav"
    write_test_sound(path, seconds=1.5)
    return path


@pytest.fixture
def window(qtbot, tmp_path, sound):
    return open_window(qtbot, tmp_path, sound)


def paint(qtbot, window, y_fraction: float, *, brush: str = "gain") -> None:
    """One left-to-right stroke of ``brush`` at ``y_fraction`` of the canvas' height."""
    window.palette.actions_by_tool[brush].trigger()
    canvas = window.canvas
    width, height = canvas.width(), canvas.height()
    points = [(width * (0.2 + 0.1 * k), height * (y_fraction - 0.02 * k)) for k in range(5)]
    before = len(window.session.strokes.done)
    drag(qtbot, canvas, points)
    assert len(window.session.strokes.done) == before + 1


def set_clone_source(qtbot, window) -> None:
    """Ctrl+click with the clone tool, as a person picks the clone source."""
    window.palette.actions_by_tool["clone"].trigger()
    canvas = window.canvas
    ctrl, left = Qt.KeyboardModifier.ControlModifier, Qt.MouseButton.LeftButton
    x, y = canvas.width() * 0.1, canvas.height() * 0.3
    with qtbot.waitSignal(canvas.message):
        send_mouse(
            canvas, QEvent.Type.MouseButtonPress, x, y, button=left, buttons=left, modifiers=ctrl
        )
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, x, y, button=left, modifiers=ctrl)


def grids(document) -> tuple[torch.Tensor, torch.Tensor, object]:
    block = document.blocks[0]
    return block.magnitude.clone(), block.phase.clone(), block.edited_frames.copy()


def assert_same_document(a, b) -> None:
    (mag_a, phase_a, flags_a), (mag_b, phase_b, flags_b) = grids(a), grids(b)
    assert torch.equal(mag_a, mag_b) and torch.equal(phase_a, phase_b)
    assert (flags_a == flags_b).all()


def answer_save_dialog(monkeypatch, path) -> list:
    asked = []

    def fake(parent, title, directory, filters):
        asked.append((title, directory, filters))
        return (str(path), filters) if path else ("", "")

    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake)
    return asked


def wait_for_job(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.job is None, timeout=JOB_TIMEOUT_MS)


def test_a_saved_project_reopens_bit_for_bit_with_its_strokes_and_view(
    window, qtbot, monkeypatch, tmp_path, sound
):
    paint(qtbot, window, 0.5)
    set_clone_source(qtbot, window)
    paint(qtbot, window, 0.7, brush="clone")
    clone = window.session.strokes.done[-1]
    assert (clone.params.offset_frames, clone.params.offset_bins) != (0, 0)  # the offsets used
    window.view_panel.colormap.setCurrentText("viridis")
    window.canvas.zoom(2.0)
    view = window.canvas.view
    asked = answer_save_dialog(monkeypatch, tmp_path / "mine")
    window.actions_by_name["save_project_as"].trigger()
    wait_for_job(qtbot, window)

    saved = tmp_path / "mine.spp"  # the suffix is added
    assert asked[0][1] == str(tmp_path / "tones.spp")  # the default: the sound's name
    assert (
        saved.is_file()
        and window.session.project_path == str(saved)
        and not window.session.modified
    )
    assert window.windowTitle().startswith("mine.spp")
    second = open_window(qtbot, tmp_path, saved)
    assert_same_document(second.session.document, window.session.document)
    assert [s.to_dict() for s in second.session.strokes.done] == [
        s.to_dict() for s in window.session.strokes.done
    ]
    assert second.canvas.view.colormap == "viridis"
    assert second.canvas.view.time_range == pytest.approx(view.time_range)
    assert second.session.project_path == str(saved) and not second.session.modified
    assert second.store.recent_files()[0] == str(saved)

    # the recorded strokes are what was applied: replayed on the sound they give the same bits
    replayed = Document.from_file(sound, device=window.session.document.device)
    apply_strokes(replayed, second.session.strokes.done)
    assert_same_document(replayed, window.session.document)


def test_view_values_from_a_project_are_checked_before_use():
    base = ViewSettings()
    wanted = ViewSettings(colormap="viridis", floor_db=-90.0, time_range=(10.0, 50.0), channel=1)
    good = view_values(wanted)
    assert view_from_values(base, good, 2) == wanted
    for bad in (
        {"colormap": "nope"},
        {"gamma": "1"},
        {"floor_db": "-90"},
        {"range_db": -3},
        {"time_range": [50, 10]},
        {"time_range": "ab"},
        {"channel": 2},  # the document has two channels: 0 and 1
        {"channel": 1.0},
        {"mode": ["phase"]},
    ):
        assert view_from_values(base, {**good, **bad}, 2) is base, bad


def test_undo_and_redo_keep_the_recorded_strokes_in_step(window, qtbot):
    paint(qtbot, window, 0.4)
    paint(qtbot, window, 0.6)
    first, second = window.session.strokes.done
    window.actions_by_name["undo"].trigger()
    assert window.session.strokes.done == [first] and window.session.strokes.undone == [second]
    window.actions_by_name["redo"].trigger()
    assert window.session.strokes.done == [first, second] and not window.session.strokes.undone
    window.actions_by_name["undo"].trigger()
    paint(qtbot, window, 0.8)
    assert window.session.strokes.done[0] is first and window.session.strokes.done[1] is not second
    assert not window.session.strokes.undone and not window.session.history.can_redo
    window.actions_by_name["undo"].trigger()
    window.actions_by_name["undo"].trigger()
    window.actions_by_name["undo"].trigger()  # nothing left: the log stays as it is
    assert window.session.strokes.done == [] and len(window.session.strokes.undone) == 2


def test_a_failed_save_names_the_file_and_keeps_the_document_modified(
    window, qtbot, monkeypatch, tmp_path
):
    paint(qtbot, window, 0.5)
    before = grids(window.session.document)
    target = tmp_path / "no such folder" / "song.spp"
    answer_save_dialog(monkeypatch, target)
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    window.actions_by_name["save_project"].trigger()  # no project yet: asks where
    wait_for_job(qtbot, window)
    assert len(shown) == 1 and str(target) in shown[0] and "does not exist" in shown[0]
    assert window.session.modified and window.session.project_path is None
    assert not target.parent.exists()
    after = grids(window.session.document)
    assert torch.equal(before[0], after[0]) and torch.equal(before[1], after[1])


def test_save_writes_to_the_project_without_asking_again(window, qtbot, monkeypatch, tmp_path):
    asked = answer_save_dialog(monkeypatch, tmp_path / "song.spp")
    paint(qtbot, window, 0.5)
    window.actions_by_name["save_project"].trigger()
    wait_for_job(qtbot, window)
    paint(qtbot, window, 0.7)
    assert window.session.modified
    window.actions_by_name["save_project"].trigger()
    wait_for_job(qtbot, window)
    assert len(asked) == 1 and not window.session.modified
    project = load_project(tmp_path / "song.spp", device=window.session.document.device)
    assert_same_document(project.document, window.session.document)
    assert len(project.strokes) == 2

    data = QMimeData()  # a project dropped on the window opens, strokes and all
    data.setUrls([QUrl.fromLocalFile(str(tmp_path / "song.spp"))])
    drop = QDropEvent(
        QPointF(50, 50),
        Qt.DropAction.CopyAction,
        data,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    painted = window.session.document
    with qtbot.waitSignal(window.document_loaded, timeout=JOB_TIMEOUT_MS):
        window.dropEvent(drop)
    assert window.session.document is not painted and window.session.project_path == str(
        tmp_path / "song.spp"
    )
    assert_same_document(window.session.document, painted)
    assert len(window.session.strokes.done) == 2 and not window.session.modified


def test_exporting_audio_leaves_the_project_unsaved(window, qtbot, monkeypatch, tmp_path):
    paint(qtbot, window, 0.5)
    answer_save_dialog(monkeypatch, tmp_path / "render.wav")
    window.actions_by_name["export_audio"].trigger()
    window.export_dialog.accept()
    wait_for_job(qtbot, window)
    assert (tmp_path / "render.wav").is_file()
    assert window.session.modified and window.isWindowModified()


def test_close_question_cancel_then_save_then_close(window, qtbot, monkeypatch, tmp_path):
    paint(qtbot, window, 0.5)
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save]
    asked = []

    def question(parent, title, text, *rest):
        asked.append(text)
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "warning", question)
    window.actions_by_name["quit"].trigger()
    assert window.isVisible() and window.session.modified  # Cancel
    assert "tones.wav" in asked[0] and "project" in asked[0]

    answer_save_dialog(monkeypatch, None)  # Save, then the save dialog is cancelled
    answers.append(QMessageBox.StandardButton.Save)
    window.actions_by_name["quit"].trigger()
    wait_for_job(qtbot, window)
    assert window.isVisible() and window.session.modified and window.after_save is None

    target = tmp_path / "kept.spp"
    answer_save_dialog(monkeypatch, target)  # Save, to a file: the window closes once saved
    window.actions_by_name["quit"].trigger()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=JOB_TIMEOUT_MS)
    assert len(asked) == 3
    project = load_project(target)
    assert len(project.strokes) == 1 and project.document.is_edited


def test_a_save_cancelled_from_the_close_question_keeps_the_window(
    window, qtbot, monkeypatch, tmp_path
):
    paint(qtbot, window, 0.5)
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: QMessageBox.StandardButton.Save)
    answer_save_dialog(monkeypatch, tmp_path / "song.spp")

    def endless_save(snapshot, path, progress):  # a save that runs until it is cancelled
        while progress(0.5):
            QThread.msleep(5)

    monkeypatch.setattr(Snapshot, "write", endless_save)
    window.actions_by_name["quit"].trigger()
    assert window.after_save is not None
    window.job.cancel()  # the progress dialog's Cancel button
    wait_for_job(qtbot, window)
    assert window.isVisible() and window.session.modified and window.after_save is None
    assert "cancelled" in window.statusBar().currentMessage()


# --- autosave ----------------------------------------------------------------------------------


@pytest.fixture
def autosaving(qtbot, tmp_path, sound):
    """A window that autosaves to ``tmp_path/recovery`` after every second edit, not on a timer."""
    window = open_window(qtbot, tmp_path, sound, recovery_folder=tmp_path / "recovery")
    window.autosave.every = 2
    window.autosave.set_interval(0)
    return window


def recovery_files(window) -> list[str]:
    folder = window.autosave.files.folder
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def test_autosave_after_strokes_holds_the_document_and_a_save_removes_it(
    autosaving, qtbot, monkeypatch, tmp_path
):
    window = autosaving
    paint(qtbot, window, 0.5)
    assert recovery_files(window) == []  # one edit: not yet
    paint(qtbot, window, 0.7)
    qtbot.waitUntil(
        lambda: window.autosave.written == window.session.generation, timeout=JOB_TIMEOUT_MS
    )
    session = f"session-{window.autosave.files.session}"
    assert recovery_files(window) == [f"{session}.json", f"{session}.lock", f"{session}.spp"]
    recovered = load_project(window.autosave.files.project, device=window.session.document.device)
    assert_same_document(recovered.document, window.session.document)
    assert recovered.strokes == [s.to_dict() for s in window.session.strokes.done]

    answer_save_dialog(monkeypatch, tmp_path / "song.spp")
    window.actions_by_name["save_project"].trigger()
    wait_for_job(qtbot, window)
    assert recovery_files(window) == []  # the project holds it all now


def test_timed_autosave_runs_after_an_edit_and_a_clean_close_removes_it(autosaving, qtbot):
    window = autosaving
    window.autosave.every = 0
    window.autosave.set_interval(0.05)
    paint(qtbot, window, 0.5)
    qtbot.waitUntil(
        lambda: window.autosave.written == window.session.generation, timeout=JOB_TIMEOUT_MS
    )
    assert "Autosaved" in window.statusBar().currentMessage()
    assert any(name.endswith(".spp") for name in recovery_files(window))
    window.session.modified = False  # as after Discard
    window.close()
    assert recovery_files(window) == []


def test_an_autosave_failure_shows_in_the_status_bar_only(qtbot, tmp_path, sound, monkeypatch):
    blocked = tmp_path / "recovery"
    blocked.write_text("a file where the recovery folder should be")
    window = open_window(qtbot, tmp_path, sound, recovery_folder=blocked)
    window.autosave.every = 1
    shown = []
    for kind in ("critical", "warning", "information"):
        monkeypatch.setattr(QMessageBox, kind, lambda *args, kind=kind: shown.append(kind))
    paint(qtbot, window, 0.5)
    paint(qtbot, window, 0.6)
    assert "Autosave failed" in window.statusBar().currentMessage()
    assert str(blocked) in window.statusBar().currentMessage()
    assert shown == [] and window.session.modified
    assert blocked.read_text() == "a file where the recovery folder should be"


def test_the_autosave_menu_sets_the_interval_and_the_setting_keeps_it(autosaving):
    window = autosaving
    choices = {action.text(): action for action in window.autosave_menu.actions()}
    choices["2 Minutes"].trigger()
    assert window.store.autosave_interval_s == 120 and window.autosave.timer.interval() == 120_000
    assert choices["2 Minutes"].isChecked() and not choices["1 Minute"].isChecked()
    choices["Only After Strokes"].trigger()
    assert window.store.autosave_interval_s == 0 and not window.autosave.timer.isActive()
    for stored, read in (('"soon"', 60.0), ("-5", 60.0), ("NaN", 60.0), ("30", 30.0)):
        window.store.qsettings.setValue("autosave/interval_s", stored)
        assert window.store.autosave_interval_s == read
