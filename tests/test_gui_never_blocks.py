"""The window's thread never waits: a save, an export or an operation on the selection asked for
while a stroke settles waits on a timer (the event loop keeps running, a status message says what
for) and then writes the settled document; a change of analysis, and its undo or redo, run on a
worker thread with progress, refuse strokes meanwhile, and cancel to exactly what was there; a
document the GPU cannot show is stepped back the way it came."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import soundfile
import torch
from gui_fixtures import tones_window  # noqa: F401 - the window fixture
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton

from spectropaint.app.analysis_change import AnalysisStep
from spectropaint.app.window.when_idle import WAITING
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import SettlePlan
from spectropaint.brushes.stroke import InputEvent
from spectropaint.gpu.errors import GPUUnavailableError
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import Cancelled
from spectropaint.transforms.files.project_file import load_project
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.selection import Selection
from spectropaint.transforms.shapes import Range

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]
JOB_TIMEOUT_MS = 30000
HELD_S = 20.0
"""The longest a held settle or analysis waits for the test to release it (the code before
this change waited for it on the window's thread, so a test of it ends, and fails, after this)."""
NSGT = NSGTSettings(scale="log", bins_per_octave=24, fmin=55.0)


class Ticker:
    """Counts the ticks of a 10 ms timer on the window's thread: they come only while its event
    loop runs."""

    def __init__(self):
        self.ticks = 0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        self.ticks += 1

    def reset(self) -> None:
        self.ticks = 0


@pytest.fixture
def ticker():
    ticker = Ticker()
    yield ticker
    ticker.timer.stop()


@pytest.fixture
def held_settle(monkeypatch):
    """Settles wait until the test sets the event it yields (then compute as ever); ``hurried``
    records whether each was hurried by then."""
    release, real = threading.Event(), SettlePlan.compute
    release.hurried = []

    def compute(plan):
        deadline = time.monotonic() + HELD_S
        while not release.wait(0.01) and time.monotonic() < deadline:
            pass
        release.hurried.append(plan.hurry.is_set())
        return real(plan)

    monkeypatch.setattr(SettlePlan, "compute", compute)
    yield release
    release.set()


class Gate:
    """Holds the analysis of a change of analysis, and the rebuild of its undo or redo, until
    ``release`` is set, reporting progress meanwhile (so Cancel stops it); notes their threads."""

    def __init__(self):
        self.release = threading.Event()
        self.threads: list[threading.Thread] = []

    def wait(self, progress) -> None:
        self.threads.append(threading.current_thread())
        deadline = time.monotonic() + HELD_S
        while not self.release.wait(0.01) and time.monotonic() < deadline:
            if progress is not None and progress(0.05) is False:
                raise Cancelled("cancelled")


@pytest.fixture
def gate(monkeypatch, window, qtbot):
    """A :class:`Gate` on every new document (an analysis: of a change, or of its undo or redo),
    released (and its job ended) before the window closes at the end (pytest-qt closes it before
    fixtures end; a job still running then would have its thread destroyed under it)."""
    gate, init = Gate(), Document.__init__

    def held_init(document, audio, *, progress=None, **kwargs):
        gate.wait(progress)
        init(document, audio, progress=progress, **kwargs)

    monkeypatch.setattr(Document, "__init__", held_init)
    close = window.close

    def release_then_close() -> bool:
        gate.release.set()
        qtbot.waitUntil(lambda: window.job is None or window.job.finished, timeout=JOB_TIMEOUT_MS)
        return close()

    monkeypatch.setattr(window, "close", release_then_close)
    yield gate


def coefficients(document) -> list[torch.Tensor]:
    return [torch.stack((b.magnitude, b.phase)).clone() for b in document.blocks]


def assert_same(document, expected: list[torch.Tensor]) -> None:
    ours = coefficients(document)
    assert len(ours) == len(expected)
    assert all(torch.equal(a, b) for a, b in zip(ours, expected, strict=True))


def erase_stroke(session) -> None:
    """A stroke straight through the session (its settle is queued when it ends)."""
    session.begin_stroke("erase", BrushSettings(), {}, InputEvent(0.0, 20.0, 40.0))
    session.paint(InputEvent(0.1, 60.0, 40.0))
    session.end_stroke()
    assert session.settles_pending


def history(session) -> tuple:
    """Everything undo and redo act on, as objects (compared by identity) and counts."""
    return (
        session.history.undo_steps,
        session.history.redo_steps,
        tuple(session.strokes.done),
        tuple(session.strokes.undone),
        session.generation,
        session.modified,
    )


def choose_analysis(window, settings: NSGTSettings) -> None:
    window.actions_by_name["analysis"].trigger()
    dialog = window.analysis_dialog
    dialog.transform.setCurrentIndex(1)
    dialog.scale.setCurrentText(settings.scale)
    dialog.bins_per_octave.setValue(settings.bins_per_octave)
    dialog.fmin.setValue(settings.fmin)
    dialog._accept()


def wait_shown(qtbot, window) -> None:
    """No job replaces the document and the views show the session's document."""
    qtbot.waitUntil(
        lambda: (
            getattr(window, "replacing", None) is None
            and window.canvas.lanes.document is window.session.document
        ),
        timeout=JOB_TIMEOUT_MS,
    )


# ------------------------------------------------------------------------------ waiting to settle
def settling_with_a_file_chosen(window, monkeypatch, path):
    """The window's session with a stroke settling, and save dialogs that answer ``path``."""
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(path), ""))
    erase_stroke(window.session)
    return window.session


def test_a_save_waits_for_a_slow_settle_on_a_timer_and_holds_the_settled_document(
    window, qtbot, monkeypatch, tmp_path, held_settle, ticker
):
    path = tmp_path / "saved.spp"
    session = settling_with_a_file_chosen(window, monkeypatch, path)
    painted = coefficients(session.document)

    ticker.reset()
    window.actions_by_name["save_project"].trigger()
    assert session.settles_pending  # the trigger returned without waiting for the settle
    qtbot.waitUntil(lambda: ticker.ticks >= 20)  # the event loop runs while the save waits
    message = window.statusBar().currentMessage()
    assert message.startswith(WAITING) and "settle" in message and "saving" in message
    assert not path.exists() and window.job is None  # nothing written before the settle

    held_settle.set()
    qtbot.waitUntil(lambda: path.exists() and window.job is None, timeout=JOB_TIMEOUT_MS)
    settled = coefficients(session.document)
    assert not all(torch.equal(a, b) for a, b in zip(settled, painted, strict=True))
    assert_same(load_project(str(path), device="cpu").document, settled)
    assert not session.modified  # the generation saved is the settled one
    assert not window.statusBar().currentMessage().startswith(WAITING)


def test_an_export_waits_for_a_slow_settle_on_a_timer_and_writes_what_is_heard(
    window, qtbot, monkeypatch, tmp_path, held_settle, ticker
):
    out = tmp_path / "out.wav"
    session = settling_with_a_file_chosen(window, monkeypatch, out)
    painted = session.document.edited_samples()

    window.actions_by_name["export_audio"].trigger()
    ticker.reset()
    window.export_dialog.accept()
    assert session.settles_pending and window.canvas.isEnabled()
    qtbot.waitUntil(lambda: ticker.ticks >= 20)
    assert "exporting out.wav" in window.statusBar().currentMessage() and not out.exists()

    held_settle.set()
    qtbot.waitUntil(lambda: out.exists() and window.job is None, timeout=JOB_TIMEOUT_MS)
    written, _ = soundfile.read(out, dtype="float32", always_2d=True)
    heard = session.document.edited_samples().astype(np.float32)
    np.testing.assert_array_equal(written.T, heard)  # the float source exports as float
    assert np.abs(heard - painted).max() > 1e-4  # and the settle changed what is heard


def test_an_operation_on_the_selection_waits_for_a_slow_settle_on_a_timer(
    window, qtbot, held_settle, ticker
):
    session = window.session
    erase_stroke(session)
    steps = len(session.history.undo_steps)
    session.set_selection(Selection.of(Range(0.5, 1.5)))

    ticker.reset()
    window.selection_ui.actions["gain"].trigger()
    qtbot.waitUntil(lambda: ticker.ticks >= 20)
    assert len(session.history.undo_steps) == steps  # not applied yet
    assert "gain follows" in window.statusBar().currentMessage()

    held_settle.set()
    qtbot.waitUntil(lambda: len(session.history.undo_steps) == steps + 1, timeout=JOB_TIMEOUT_MS)
    assert session.history.undo_steps[-1].label.lower().startswith("gain")
    assert [entry.apply for entry in session.strokes.done[-1:]] == ["gain"]


def test_a_long_wait_hurries_the_settle_as_the_session_does(window, qtbot, monkeypatch):
    """A step that waits longer than HURRY_AFTER_S hurries the settle (it would otherwise hold
    the undo as long as a stroke across minutes takes to settle)."""
    hurried, real = [], SettlePlan.compute

    def compute(plan):
        hurried.append(plan.hurry.wait(HELD_S))  # ends when hurried
        return real(plan)

    monkeypatch.setattr(SettlePlan, "compute", compute)
    session = window.session
    opened = coefficients(session.document)
    erase_stroke(session)
    window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: hurried == [True], timeout=10000)
    qtbot.waitUntil(lambda: window.when_idle.pending == 0, timeout=10000)
    assert_same(session.document, opened)


# -------------------------------------------------------------------------- changing the analysis
def test_a_change_of_analysis_runs_on_a_worker_with_progress_and_refuses_strokes(
    window, qtbot, gate, ticker
):
    session = window.session
    stft = session.document
    before = coefficients(stft)
    messages: list[str] = []
    window.statusBar().messageChanged.connect(messages.append)

    ticker.reset()
    choose_analysis(window, NSGT)
    assert session.document is stft  # OK returned before the analysis
    assert window.replacing is not None
    qtbot.waitUntil(lambda: bool(gate.threads) and session.replacing, timeout=JOB_TIMEOUT_MS)
    qtbot.waitUntil(lambda: ticker.ticks >= 20)  # the window's thread runs meanwhile
    assert gate.threads[0] is not threading.main_thread()
    assert any(m.startswith("Analysing with NSGT log") and "5%" in m for m in messages)
    assert not window.canvas.isEnabled()  # strokes are refused, with the session's reason too
    with pytest.raises(RuntimeError, match="analysis changes"):
        session.begin_stroke("erase", BrushSettings(), {}, InputEvent(0.0, 20.0, 40.0))
    window.commands.on_undo()  # Ctrl+Z (no menu: nothing to undo yet) waits, then undoes it
    assert "the analysis to change: undo follows" in window.statusBar().currentMessage()

    gate.release.set()
    qtbot.waitUntil(lambda: len(gate.threads) == 2, timeout=JOB_TIMEOUT_MS)  # the undo's rebuild
    wait_shown(qtbot, window)
    assert all(thread is not threading.main_thread() for thread in gate.threads)
    assert session.document.settings == stft.settings and session.document is not stft
    assert_same(session.document, before)  # the undo, off the window's thread, bit for bit
    assert isinstance(session.history.redo_steps[-1], AnalysisStep)
    assert window.canvas.isEnabled()


def test_cancelling_a_change_of_analysis_or_its_undo_changes_nothing(window, qtbot, gate):
    session = window.session
    erase_stroke(session)
    session.wait_settled()
    qtbot.waitUntil(lambda: window.history_panel.list.count() == 2)
    stft = session.document
    before, steps = coefficients(stft), history(session)

    choose_analysis(window, NSGT)
    assert session.document is stft  # OK returned before the analysis
    job = window.replacing
    qtbot.waitUntil(job.dialog.isVisible, timeout=JOB_TIMEOUT_MS)
    QTest.keyClick(job.dialog, Qt.Key.Key_Escape)  # as the dialog's Cancel does
    qtbot.waitUntil(lambda: window.replacing is None, timeout=JOB_TIMEOUT_MS)
    assert session.document is stft and window.canvas.lanes.document is stft
    assert_same(stft, before)
    assert history(session) == steps
    assert "cancelled, nothing changed" in window.statusBar().currentMessage()
    assert window.canvas.isEnabled() and not session.replacing

    gate.release.set()
    choose_analysis(window, NSGT)
    wait_shown(qtbot, window)
    nsgt = session.document
    assert nsgt.settings == NSGT
    changed, steps = coefficients(nsgt), history(session)
    gate.release.clear()
    window.actions_by_name["undo"].trigger()
    job = window.replacing
    assert job is not None and "Undoing Analysis: NSGT log" in job.label
    qtbot.waitUntil(job.dialog.isVisible, timeout=JOB_TIMEOUT_MS)
    qtbot.mouseClick(job.dialog.findChild(QPushButton), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.replacing is None, timeout=JOB_TIMEOUT_MS)
    assert session.document is nsgt and history(session) == steps
    assert_same(nsgt, changed)


def test_a_document_the_gpu_cannot_show_after_an_undo_is_redone(window, qtbot, monkeypatch):
    """Recovery reverses the step just taken: after an undo of a change of analysis it redoes it
    (an undo would go one step further back)."""
    from spectropaint.app.window import main_window

    session = window.session
    erase_stroke(session)
    session.wait_settled()
    choose_analysis(window, NSGT)
    wait_shown(qtbot, window)
    nsgt = coefficients(session.document)
    steps = len(session.history.undo_steps)

    real, refused = main_window.SpectrogramCanvas, []

    def canvas(session, **kwargs):
        if session.document.transform.name == "stft":
            refused.append(session.document.settings)
            raise GPUUnavailableError("too big for this GPU (test)")
        return real(session, **kwargs)

    monkeypatch.setattr(main_window, "SpectrogramCanvas", canvas)
    monkeypatch.setattr(QMessageBox, "critical", lambda *args: QMessageBox.StandardButton.Ok)
    window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: bool(refused), timeout=JOB_TIMEOUT_MS)
    wait_shown(qtbot, window)
    assert session.document.settings == NSGT and session.document_step == "redo"
    assert len(session.history.undo_steps) == steps
    assert isinstance(session.history.undo_steps[-1], AnalysisStep)
    assert_same(session.document, nsgt)
    assert len(refused) == 1


def test_a_click_in_the_history_across_a_change_of_analysis_runs_it_as_a_job(window, qtbot, gate):
    session, panel = window.session, window.history_panel
    opened = coefficients(session.document)
    erase_stroke(session)
    session.wait_settled()
    gate.release.set()
    choose_analysis(window, NSGT)
    wait_shown(qtbot, window)
    qtbot.waitUntil(lambda: panel.list.count() == 3)
    gate.release.clear()
    gate.threads.clear()

    panel.list.itemClicked.emit(panel.list.item(0))  # back to the sound as opened
    qtbot.waitUntil(lambda: bool(gate.threads), timeout=JOB_TIMEOUT_MS)
    assert window.replacing is not None and session.document.settings == NSGT
    assert gate.threads[0] is not threading.main_thread()
    gate.release.set()
    qtbot.waitUntil(lambda: len(session.history.undo_steps) == 0, timeout=JOB_TIMEOUT_MS)
    wait_shown(qtbot, window)
    assert_same(session.document, opened)
    assert len(session.history.redo_steps) == 2


def test_a_failed_recovery_does_not_stop_the_next_one(window, qtbot, monkeypatch):
    """When the job reversing a step the GPU could not show fails, the next such step is still
    reversed (the window's recovery flag is cleared however that job ends)."""
    from spectropaint.app.window import analysis_jobs, main_window
    from spectropaint.transforms.stft import STFTSettings

    session = window.session
    real_canvas, refused_hops, refused = main_window.SpectrogramCanvas, {256, 128}, []

    def canvas(session, **kwargs):
        if session.document.settings.hop in refused_hops:
            refused.append(session.document.settings.hop)
            raise GPUUnavailableError("too big for this GPU (test)")
        return real_canvas(session, **kwargs)

    real_undo, undos = session.undo, []

    def undo_failing_once(*args):
        undos.append(args)
        if len(undos) == 1:
            raise RuntimeError("the undo failed (test)")
        return real_undo(*args)

    monkeypatch.setattr(main_window, "SpectrogramCanvas", canvas)
    monkeypatch.setattr(session, "undo", undo_failing_once)
    monkeypatch.setattr(QMessageBox, "critical", lambda *args: QMessageBox.StandardButton.Ok)

    analysis_jobs.change(window, STFTSettings(n_fft=2048, hop=256))
    qtbot.waitUntil(lambda: len(undos) == 1, timeout=JOB_TIMEOUT_MS)  # the recovery, failing
    qtbot.waitUntil(lambda: window.job is None, timeout=JOB_TIMEOUT_MS)
    assert refused == [256] and session.document.settings.hop == 256

    refused_hops.discard(256)  # the GPU can show that one now, not a hop of 128
    analysis_jobs.change(window, STFTSettings(n_fft=2048, hop=128))
    qtbot.waitUntil(lambda: window.job is None and window.replacing is None, timeout=JOB_TIMEOUT_MS)
    qtbot.waitUntil(lambda: len(undos) == 2, timeout=JOB_TIMEOUT_MS)  # reversed, this time
    wait_shown(qtbot, window)
    assert refused == [256, 128]
    assert session.document.settings.hop == 256 and session.document_step == "undo"
    assert session.history.redo_steps[-1].label.endswith("STFT 2048/128 hann")


@pytest.mark.parametrize("how", ["escape", "status line's cancel"])
def test_escape_or_the_status_lines_cancel_stops_a_job_before_its_dialog_shows(
    window, qtbot, monkeypatch, gate, how
):
    """The progress dialog appears only after 300 ms; until then the window's Escape, and the
    Cancel beside the status line's progress, cancel the job (here a change of analysis, held
    until the test's end: only a cancel ends it sooner)."""
    # a change that was not cancelled leaves edits: closing then must not ask about them
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: QMessageBox.StandardButton.Discard)
    session = window.session
    stft = session.document
    before, steps = coefficients(stft), history(session)
    button = window.findChild(QPushButton, "cancel_job")
    assert not button.isVisible()

    choose_analysis(window, NSGT)
    job = window.replacing
    qtbot.waitUntil(lambda: bool(gate.threads), timeout=JOB_TIMEOUT_MS)
    assert not job.dialog.isVisible() and button.isVisible()
    if how == "escape":
        window.activateWindow()  # from the analysis dialog, as closing it does on a desktop
        qtbot.waitUntil(window.isActiveWindow)
        QTest.keyClick(window, Qt.Key.Key_Escape)
    else:
        button.click()
    qtbot.waitUntil(lambda: window.replacing is None and window.job is None, timeout=5000)
    assert not gate.release.is_set()  # it ended by the cancel, not by the gate
    assert session.document is stft and history(session) == steps
    assert_same(stft, before)
    assert "cancelled, nothing changed" in window.statusBar().currentMessage()
    assert not button.isVisible()


def test_escape_still_abandons_a_drag_while_a_job_runs(window, qtbot, monkeypatch, tmp_path):
    """While a save runs (the canvas takes strokes meanwhile), Escape abandons the stroke being
    drawn, as it does with no job, and the save goes on; the next Escape cancels the save."""
    from gui_fixtures import send_mouse
    from PySide6.QtCore import QEvent

    from spectropaint.app.session import Snapshot

    canvas, session = window.canvas, window.session
    opened = coefficients(session.document)
    release, real_write = threading.Event(), Snapshot.write

    def held_write(snapshot, path, progress=None):
        deadline = time.monotonic() + HELD_S
        while not release.wait(0.01) and time.monotonic() < deadline:
            if progress is not None and progress(0.1) is False:
                raise Cancelled("cancelled")
        return real_write(snapshot, path, progress)

    monkeypatch.setattr(Snapshot, "write", held_write)
    path = tmp_path / "p.spp"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(path), ""))
    window.actions_by_name["save_project"].trigger()
    qtbot.waitUntil(lambda: window.job is not None, timeout=JOB_TIMEOUT_MS)
    job = window.job
    job.hide_dialog()  # as before its 300 ms: a window-modal dialog would take the pointer
    left = Qt.MouseButton.LeftButton
    send_mouse(canvas, QEvent.Type.MouseButtonPress, 100, 200, button=left, buttons=left)
    for x in (150, 200, 250):
        with qtbot.waitSignal(canvas.cursor_moved, timeout=5000):
            send_mouse(canvas, QEvent.Type.MouseMove, x, 200, buttons=left)
    assert canvas.interacting
    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, 250, 200, button=left)
    qtbot.waitUntil(lambda: not canvas.interacting, timeout=5000)
    assert not job.finished  # the first Escape was the stroke's
    assert session.wait_settled(60)
    assert_same(session.document, opened)  # the stroke was abandoned

    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.job is None, timeout=5000)
    assert not release.is_set() and not path.exists()
    assert "cancelled" in window.statusBar().currentMessage()


# --------------------------------------------------------------------- long operations as jobs
def state(session) -> tuple:
    """The coefficients, the frames marked edited and the history, to compare after a cancel."""
    return (
        coefficients(session.document),
        [block.edited_frames.copy() for block in session.document.blocks],
        history(session),
    )


def assert_same_state(session, expected: tuple) -> None:
    assert_same(session.document, expected[0])
    now = [block.edited_frames for block in session.document.blocks]
    assert all(np.array_equal(a, b) for a, b in zip(now, expected[1], strict=True))
    assert history(session) == expected[2]


@pytest.fixture
def held_heal(monkeypatch):
    """Heals wait (telling their progress, so Cancel stops them) until the test sets the
    :class:`Gate`'s ``release``; then heal as ever. Notes their threads."""
    from spectropaint.brushes import operations

    gate, real = Gate(), operations.heal

    def heal(*args, **kwargs):
        gate.wait(None)
        return real(*args, **kwargs)

    monkeypatch.setattr(operations, "heal", heal)
    yield gate
    gate.release.set()


@pytest.mark.parametrize("name", ["heal", "declick"])
def test_heal_and_declick_run_as_a_job_and_a_cancel_changes_nothing(
    qtbot, tmp_path, held_heal, ticker, name
):
    """Either runs on a worker thread while the window's runs on; Escape cancels it, leaving the
    coefficients, the frames marked edited and the history as they were; run again, it applies
    as one undo step."""
    from gui_fixtures import open_window, write_test_sound

    from spectropaint.transforms.shapes import Rectangle

    path, rate = tmp_path / "clicks.wav", 22050
    samples = write_test_sound(path, sample_rate=rate)
    for at in (0.9, 1.1):  # two clicks for the de-click to find, inside the selection's time
        samples[:, round(at * rate)] += 0.9
    soundfile.write(path, samples.T, rate, subtype="FLOAT")
    window = open_window(qtbot, tmp_path, path)
    session = window.session
    session.set_selection(Selection.of(Rectangle(0.8, 1.2, 300.0, 3000.0)))
    before = state(session)

    ticker.reset()
    window.selection_ui.actions[name].trigger()
    qtbot.waitUntil(lambda: bool(held_heal.threads), timeout=JOB_TIMEOUT_MS)
    assert window.job is not None and held_heal.threads[0] is not threading.main_thread()
    qtbot.waitUntil(lambda: ticker.ticks >= 20)  # the window's thread runs meanwhile
    assert not window.canvas.isEnabled()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keyClick(window, Qt.Key.Key_Escape)
    held_heal.release.set()  # the part under way ends; the cancel then writes nothing
    qtbot.waitUntil(lambda: window.job is None, timeout=JOB_TIMEOUT_MS)
    assert_same_state(session, before)
    assert "cancelled, nothing changed" in window.statusBar().currentMessage()
    assert window.canvas.isEnabled()

    window.selection_ui.actions[name].trigger()  # not held now: it runs to its end
    qtbot.waitUntil(
        lambda: window.job is None and window.when_idle.pending == 0, timeout=JOB_TIMEOUT_MS
    )
    assert len(session.history.undo_steps) == len(before[2][0]) + 1
    assert session.strokes.done[-1].apply == name
    assert not all(
        torch.equal(a, b) for a, b in zip(coefficients(session.document), before[0], strict=True)
    )
