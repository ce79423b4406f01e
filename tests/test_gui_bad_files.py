"""Every file of the bad-input corpus opened in the window: one dialog saying why, nothing lost.

One window for the whole corpus: a good sound is opened first, then each bad file in turn; after
each the window must still show the good sound, bit for bit, and no exception may have escaped
into Qt's event loop. The waits have deadlines so that a file that hangs the loader (a named pipe)
fails its test instead of stalling the suite; they do not measure speed.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest
from bad_audio import (
    make_bad_files,
    make_bad_projects,
    make_damaged_files,
    make_unreadable_file,
    shared_folder,
)
from fault_driver import document_digest, drive_window
from gui_fixtures import NO_OUTPUT, write_test_sound
from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]

HANG_TIMEOUT_MS = 30_000
"""Far longer than any of these files takes; only a hang reaches it."""


def _corpus(folder) -> dict:
    return {**make_bad_files(folder / "audio"), **make_bad_projects(folder / "projects")}


with tempfile.TemporaryDirectory() as _names_only:
    CASES = sorted(_corpus(Path(_names_only)))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return _corpus(tmp_path_factory.mktemp("bad"))


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    """A shown window holding a good 1 s sound, shared by every case of the module."""
    from spectropaint.app.settings_store import SettingsStore
    from spectropaint.app.window.main_window import MainWindow

    folder = tmp_path_factory.mktemp("window")
    source = folder / "good.wav"
    write_test_sound(source, seconds=1.0, sample_rate=8000)
    store = SettingsStore(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=store, output_device=NO_OUTPUT)
    window.show()
    window.open_path(str(source))
    deadline = time.monotonic() + HANG_TIMEOUT_MS / 1000
    while window.job is not None or window.session.document is None:
        assert time.monotonic() < deadline, "the good sound did not open"
        QTest.qWait(10)
    yield window
    window.close()


@pytest.mark.parametrize("case", CASES)
def test_bad_file_shows_one_dialog_and_keeps_the_document(case, corpus, window, qtbot, monkeypatch):
    path, reason = corpus[case]
    document, good_path = window.session.document, window.session.path
    digest = document_digest(document)
    shown = []
    monkeypatch.setattr(
        QMessageBox, "critical", lambda parent, title, text: shown.append((title, text))
    )
    with qtbot.captureExceptions() as escaped:
        window.open_path(str(path))
        qtbot.waitUntil(lambda: window.job is None, timeout=HANG_TIMEOUT_MS)
    assert [str(exc) for _, exc, _ in escaped] == []
    assert len(shown) == 1, shown
    title, text = shown[0]
    assert title == "Cannot open"
    assert f"'{path}'" in text and reason in text, text
    assert (
        window.session.document is document
        and window.session.path == good_path
        and not window.session.modified
    )
    assert document_digest(document) == digest


def test_unreadable_file_as_a_user_shows_one_dialog_and_keeps_the_document():
    """Root reads any file, so the window runs in a child process that continues as nobody."""
    with shared_folder() as folder:
        source = folder / "good.wav"
        write_test_sound(source, seconds=1.0, sample_rate=8000)
        source.chmod(0o644)
        locked, reason = make_unreadable_file(folder)
        home = folder / "home"
        home.mkdir()
        home.chmod(0o777)
        outcome = drive_window(
            {
                "source": str(source),
                "settings": str(home / "settings.ini"),
                "drop_privileges": True,
                "steps": [{"open": str(locked)}],
            }
        )
    assert outcome["uid"] != 0 and outcome["escaped"] == []
    (step,) = outcome["steps"]
    assert step["finished"] and len(step["dialogs"]) == 1, step
    title, text = step["dialogs"][0]
    assert title == "Cannot open" and f"'{locked}'" in text and reason in text, text
    assert step["same_document"] and step["document"] == outcome["document_before"]


DAMAGED_CASES = ["truncated_wav", "nan_in_float", "ogg_bad_checksum"]


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    return make_damaged_files(tmp_path_factory.mktemp("damaged"))


@pytest.mark.parametrize("case", DAMAGED_CASES)
def test_damaged_file_opens_what_is_usable_and_says_so_in_the_status_bar(
    case, damaged, window, qtbot, monkeypatch
):
    good_path = window.session.path
    shown = []
    monkeypatch.setattr(
        QMessageBox, "critical", lambda parent, title, text: shown.append((title, text))
    )
    with qtbot.captureExceptions() as escaped:
        window.open_path(str(damaged[case].path))
        qtbot.waitUntil(lambda: window.job is None, timeout=HANG_TIMEOUT_MS)
        qtbot.waitUntil(
            lambda: damaged[case].warning in window.statusBar().currentMessage(),
            timeout=HANG_TIMEOUT_MS,
        )
    assert [str(exc) for _, exc, _ in escaped] == [] and shown == []
    assert window.session.path == str(damaged[case].path)
    assert f"'{damaged[case].path}'" in window.statusBar().currentMessage()
    window.open_path(good_path)  # the next cases expect the good sound
    qtbot.waitUntil(lambda: window.job is None and window.session.path == good_path)
