"""Crash recovery: a real app process paints, autosaves and is killed with SIGKILL; the next launch
offers its work back and restores it bit for bit. A clean close leaves nothing to recover.

The first process is this file run as a script (``python tests/test_recovery.py MODE SOUND DUMP``,
see :func:`drive`): it starts the app through ``run_gui`` as ``spectropaint SOUND`` does, paints
three strokes with mouse events, waits for the autosave those strokes trigger, writes what its
document holds to DUMP, prints READY, and then idles until killed (``kill``) or closes its window,
discarding the edits (``close``). The second launch runs ``run_gui`` in the test's own process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from gui_fixtures import (  # noqa: F401 - fixture
    NO_OUTPUT,
    open_window,
    send_mouse,
    user_settings_in,
    write_test_sound,
)
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from spectropaint.app import gui_main
from spectropaint.app.files import recovery
from spectropaint.app.files.recovery import RECOVERY_ENV, SessionFiles
from spectropaint.app.settings_store import APPLICATION, ORGANIZATION, SettingsStore
from spectropaint.app.window import main_window

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]
DRIVER_TIMEOUT_S = 90.0
STROKES_PER_AUTOSAVE = 3


# --- the first app process ------------------------------------------------------------------------


def drive(mode: str, sound: str, dump: str) -> int:
    """Run the app on ``sound``; paint, wait for the autosave, dump, then idle or close."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtTest import QTest

    app = QApplication([])

    def wait_until(condition, what: str) -> None:
        deadline = time.monotonic() + DRIVER_TIMEOUT_S
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited too long for {what}")
            QTest.qWait(10)

    def stroke(canvas, y_fraction: float) -> None:
        left = Qt.MouseButton.LeftButton
        width, height = canvas.width(), canvas.height()
        points = [(width * (0.2 + 0.1 * k), height * y_fraction) for k in range(5)]
        moves = []

        def moved(point) -> None:
            moves.append(point)

        canvas.cursor_moved.connect(moved)
        send_mouse(canvas, QEvent.Type.MouseButtonPress, *points[0], button=left, buttons=left)
        for x, y in points[1:]:
            seen = len(moves)
            send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
            wait_until(lambda seen=seen: len(moves) > seen, "a pointer move")
        send_mouse(canvas, QEvent.Type.MouseButtonRelease, *points[-1], button=left)
        wait_until(lambda: not canvas.interacting, "the end of a stroke")
        canvas.cursor_moved.disconnect(moved)

    def script() -> None:
        try:
            window = next(w for w in app.topLevelWidgets() if isinstance(w, main_window.MainWindow))
            wait_until(
                lambda: window.canvas is not None and window.canvas.frames_presented, "a frame"
            )
            for y_fraction in (0.3, 0.5, 0.7):
                stroke(window.canvas, y_fraction)
            wait_until(lambda: window.autosave.written == window.session.generation, "the autosave")
            block = window.session.document.blocks[0]
            np.savez(
                Path(dump) / "document.npz",
                magnitude=block.magnitude.cpu().numpy(),
                phase=block.phase.cpu().numpy(),
                edited=block.edited_frames,
            )
            state = {
                "strokes": [stroke.to_dict() for stroke in window.session.strokes.done],
                "settings": [window.store.autosave_strokes, window.store.autosave_interval_s],
            }
            (Path(dump) / "state.json").write_text(json.dumps(state))
            print("READY", flush=True)
            if mode == "close":
                QMessageBox.warning = lambda *args: QMessageBox.StandardButton.Discard
                window.close()
        except BaseException:
            import traceback

            traceback.print_exc()
            os._exit(3)

    QTimer.singleShot(0, script)
    return gui_main.run_gui(sound)


# --- the tests ------------------------------------------------------------------------------------


@pytest.fixture
def setup(tmp_path):
    """A sound, an empty recovery folder, and user settings that autosave after three strokes."""
    sound = tmp_path / "tones.wav"
    write_test_sound(sound, seconds=1.5)
    folder, config, dump = tmp_path / "recovery", tmp_path / "config", tmp_path / "dump"
    dump.mkdir()
    conf = config / ORGANIZATION / f"{APPLICATION}.conf"  # where Qt keeps them on Linux
    store = SettingsStore(QSettings(str(conf), QSettings.Format.IniFormat))
    store.autosave_strokes, store.autosave_interval_s = STROKES_PER_AUTOSAVE, 0
    store.sync()
    return sound, folder, config, dump


def start_app(mode: str, setup) -> subprocess.Popen:
    """The first app process (:func:`drive`), once it has painted, autosaved and said READY."""
    sound, folder, config, dump = setup
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        XDG_CONFIG_HOME=str(config),
        JACK_NO_START_SERVER="1",
        **{RECOVERY_ENV: str(folder)},
    )
    env.pop("PYTHONPATH", None)
    with open(dump / "stderr.txt", "w") as errors:
        process = subprocess.Popen(
            [sys.executable, __file__, mode, str(sound), str(dump)],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=env,
        )
    # the driver has deadlines and exits (EOF) when one passes; this one is for a hang in C
    watchdog = threading.Timer(2 * DRIVER_TIMEOUT_S, process.kill)
    watchdog.start()
    try:
        line = process.stdout.readline()
    finally:
        watchdog.cancel()
        process.stdout.close()
    if line.strip() != "READY":
        process.kill()
        process.wait()
        pytest.fail(f"the app process did not get ready:\n{(dump / 'stderr.txt').read_text()}")
    return process


def test_a_killed_session_is_offered_and_restored_bit_for_bit(
    setup,
    qtbot,
    monkeypatch,
    user_settings_in,  # noqa: F811
):
    sound, folder, _, dump = setup
    first = start_app("kill", setup)
    os.kill(first.pid, signal.SIGKILL)
    assert first.wait(timeout=30) == -signal.SIGKILL
    left = sorted(os.listdir(folder))
    assert [name.split("-")[1] for name in left] == [str(first.pid)] * 3
    assert [Path(name).suffix for name in left] == [".json", ".lock", ".spp"]

    monkeypatch.setenv(RECOVERY_ENV, str(folder))
    monkeypatch.setattr(gui_main, "qt_reference_problem", lambda: None)
    monkeypatch.setattr(main_window, "find_output_device", lambda **kwargs: NO_OUTPUT)
    offered = []

    def answer(parent, orphans) -> str:
        offered.extend(orphan.describe() for orphan in orphans)
        return recovery.RESTORE

    monkeypatch.setattr(recovery, "ask_recovery", answer)
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: QMessageBox.StandardButton.Discard)
    seen = {}

    earlier = set(QApplication.topLevelWidgets())  # windows other tests left behind

    def capture_when_restored() -> None:
        window = next(
            (
                w
                for w in QApplication.topLevelWidgets()
                if isinstance(w, main_window.MainWindow) and w not in earlier
            ),
            None,
        )
        if window is None or window.canvas is None or not window.canvas.frames_presented:
            QTimer.singleShot(50, capture_when_restored)
            return
        block = window.session.document.blocks[0]
        seen.update(
            magnitude=block.magnitude.clone(),
            phase=block.phase.clone(),
            edited=block.edited_frames.copy(),
            strokes=[stroke.to_dict() for stroke in window.session.strokes.done],
            title=window.windowTitle(),
            modified=window.session.modified,
            files=sorted(os.listdir(folder)),
            own=window.autosave.files.session,
        )
        window.close()  # the close question is answered Discard

    QTimer.singleShot(50, capture_when_restored)
    assert gui_main.run_gui(None) == 0

    assert len(offered) == 1 and offered[0].startswith("tones.wav, autosaved ")
    painted = np.load(dump / "document.npz")
    assert torch.equal(seen["magnitude"], torch.from_numpy(painted["magnitude"]))
    assert torch.equal(seen["phase"], torch.from_numpy(painted["phase"]))
    assert np.array_equal(seen["edited"], painted["edited"]) and painted["edited"].any()
    state = json.loads((dump / "state.json").read_text())
    assert state["settings"] == [STROKES_PER_AUTOSAVE, 0]  # the user's settings were used
    assert len(state["strokes"]) == STROKES_PER_AUTOSAVE and seen["strokes"] == state["strokes"]
    assert seen["title"].startswith("tones.wav (recovered)") and seen["modified"]
    own = f"session-{seen['own']}"
    assert seen["files"] == [f"{own}.json", f"{own}.lock", f"{own}.spp"]  # taken over
    assert os.listdir(folder) == []  # and removed by the close that discarded the edits


def test_a_clean_close_leaves_nothing_to_recover(setup):
    folder = setup[1]
    process = start_app("close", setup)
    assert process.wait(timeout=60) == 0
    assert os.path.isdir(folder) and os.listdir(folder) == []
    assert recovery.find_orphans(str(folder)) == []


def test_a_damaged_recovery_file_is_described_then_kept_or_deleted(qtbot, tmp_path, monkeypatch):
    sound = tmp_path / "tones.wav"
    write_test_sound(sound, seconds=1.0)
    folder = tmp_path / "recovery"
    folder.mkdir()
    files = SessionFiles(str(folder), "1-1")
    Path(files.project).write_bytes(b"PK\x03\x04 not really a project")
    Path(files.sidecar).write_text(json.dumps({"source": str(sound), "time": 0}))
    window = open_window(qtbot, tmp_path, sound, recovery_folder=folder)
    document = window.session.document
    monkeypatch.setattr(recovery, "ask_recovery", lambda parent, orphans: recovery.RESTORE)
    questions, answers = [], [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]

    def question(parent, title, text, *rest):
        questions.append(text)
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "question", question)
    fallbacks = []
    # No keeps the files (and lets go of their lock), Yes deletes them
    for rounds, left in enumerate(([files.sidecar, files.project], []), 1):
        recovery.offer_recovery(window, str(folder), otherwise=lambda: fallbacks.append(1))
        qtbot.waitUntil(lambda rounds=rounds: len(fallbacks) == rounds, timeout=20000)
        assert sorted(str(path) for path in folder.iterdir()) == left
    assert len(questions) == 2 and files.project in questions[0] and "zip" in questions[0]
    assert window.session.document is document and not window.session.recovered


def test_a_running_session_is_not_offered(tmp_path):
    folder = tmp_path / "recovery"
    folder.mkdir()
    alive = SessionFiles(str(folder), "2-2")
    lock = alive.lock_file()
    assert lock.tryLock(0)
    Path(alive.project).write_bytes(b"whatever the other window wrote")
    try:
        assert recovery.find_orphans(str(folder)) == []
        assert Path(alive.project).exists()
    finally:
        lock.unlock()
    orphans = recovery.find_orphans(str(folder))  # once it is gone, it is offered
    assert [orphan.files for orphan in orphans] == [alive]
    orphans[0].release()


def test_the_recovery_dialog_lists_the_sessions_and_answers_the_button(qtbot, tmp_path):
    folder = tmp_path / "recovery"
    folder.mkdir()
    for session, name in (("3-3", "older.spp"), ("4-4", "newer.wav")):
        files = SessionFiles(str(folder), session)
        Path(files.project).write_bytes(b"x")
        when = 1_000_000 if session == "3-3" else 2_000_000
        Path(files.sidecar).write_text(json.dumps({"project": f"/x/{name}", "time": when}))
    orphans = recovery.find_orphans(str(folder))
    assert [orphan.name for orphan in orphans] == ["newer.wav", "older.spp"]  # newest first
    shown = []

    def click_discard() -> None:
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(20, click_discard)
            return
        shown.append(box.text())
        next(b for b in box.buttons() if b.text() == "Discard").click()

    QTimer.singleShot(20, click_discard)
    assert recovery.ask_recovery(None, orphans) == recovery.DISCARD
    assert "newer.wav" in shown[0] and "older.spp" in shown[0]
    for orphan in orphans:
        orphan.release()


if __name__ == "__main__":
    sys.exit(drive(*sys.argv[1:]))
