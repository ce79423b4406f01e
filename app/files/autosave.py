"""Autosave: a recovery copy of the open document, written in the background.

Every running window (a *session*) keeps at most one project in the recovery folder, named for its
pid and start time, with a JSON sidecar (source, project, time, pid) and a ``QLockFile`` that says
the session is alive (:class:`~.recovery.SessionFiles`). A copy is written when the document changed since the
last one, every ``interval_s`` seconds and at once after ``every`` edits; the window's lock is held
only while the edited frames are copied (:func:`~.project_actions.take_snapshot`), the file is
written on a thread of its own. Saving the project or closing the window removes the session's
files; a session that was killed leaves them for :mod:`.recovery` to offer at the next launch.
Failures (a full disk) are told in the status bar and retried at the next occasion; nothing but the
recovery folder is ever written.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QLockFile, QObject, QTimer, Signal

from spectropaint.app.files.project_actions import take_snapshot, write_snapshot
from spectropaint.app.files.recovery import SessionFiles
from spectropaint.transforms.files.atomic_write import atomic_path, describe_os_error

if TYPE_CHECKING:
    from spectropaint.app.window.main_window import MainWindow


class Autosave(QObject):
    """The autosave of one window.

    Parameters
    ----------
    window : MainWindow
        Whose document is saved; it calls :meth:`edited`, :meth:`document_changed`,
        :meth:`project_saved` and :meth:`close`.
    folder : str
        The recovery folder (made when first needed).
    interval_s : float
        Seconds between timed saves; 0 turns them off.
    every : int
        Edits after which a save runs at once; 0 turns that off.
    """

    message = Signal(str)
    """A line for the status bar: a copy was written, or why not."""
    _written = Signal(int, object)
    """From the writing thread: the generation written, and the error or None."""

    def __init__(self, window: MainWindow, folder: str, *, interval_s: float, every: int):
        super().__init__(window)
        self.window = window
        self.every = every
        self.files = SessionFiles(folder, f"{os.getpid()}-{time.time_ns() // 1_000_000}")
        self.clean = window.generation
        """The generation last saved as a project or opened: nothing to recover up to it."""
        self.written = 0
        """The generation in the recovery file (0: there is none)."""
        self.attempted = 0
        self._lock: QLockFile | None = None
        self._thread: threading.Thread | None = None
        self._pending = False
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.save_if_due)
        self.set_interval(interval_s)
        self._written.connect(self._finished)

    def set_interval(self, seconds: float) -> None:
        self.timer.stop()
        if seconds > 0:
            self.timer.start(max(1, round(seconds * 1000)))

    # ------------------------------------------------------------------------- told by the window
    def edited(self) -> None:
        """After each edit: save now once ``every`` edits were made since the last attempt."""
        since = self.window.generation - max(self.attempted, self.clean)
        if self._pending or (self.every and since >= self.every):
            self.save_if_due()

    def document_changed(self) -> None:
        """Another document is open (the person kept or discarded the last one's edits)."""
        self.clean = self.window.generation
        if self._thread is None:
            self._remove()  # a write in flight is removed when it ends: it is older than clean

    def project_saved(self, generation: int) -> None:
        """The project holds everything up to ``generation``: a copy no newer is not needed."""
        self.clean = max(self.clean, generation)
        if self.written <= generation and self._thread is None:
            self._remove()

    def adopt(self, files: SessionFiles) -> None:
        """Take over another (dead) session's recovery project as this one's: it holds the
        document just restored from it. The other session's files are removed."""
        self._claim()
        os.replace(files.project, self.files.project)
        self._write_sidecar(self._sidecar())
        self.written = self.window.generation
        files.remove()

    def close(self) -> None:
        """The window closes with its work saved or discarded: wait for a write, remove the files."""
        self.timer.stop()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._remove()

    # -------------------------------------------------------------------------------- saving
    @property
    def due(self) -> bool:
        window = self.window
        return (
            window.document is not None
            and window.modified
            and window.generation > max(self.written, self.clean)
        )

    def save_if_due(self) -> None:
        """Start writing a copy if the document changed since the last one (later, mid-stroke)."""
        if not self.due:
            self._pending = False
            return
        if self._thread is not None or self.window.canvas.painting:
            self._pending = True
            return
        self._pending = False
        try:
            self._claim()
            snapshot = take_snapshot(self.window)
        except OSError as err:
            reason = describe_os_error(err)
            self.message.emit(f"Autosave failed: cannot write in '{self.files.folder}': {reason}")
            return
        except (MemoryError, RuntimeError) as err:  # no memory for the copy of the edits
            self.message.emit(f"Autosave failed: {err}")
            return
        self.attempted = snapshot.generation
        sidecar = self._sidecar()
        self._thread = threading.Thread(
            target=self._write, args=(snapshot, sidecar), name="autosave", daemon=True
        )
        self._thread.start()

    def _write(self, snapshot, sidecar: dict) -> None:
        error = None
        try:
            write_snapshot(snapshot, self.files.project)
            self._write_sidecar(sidecar)
        except Exception as exc:  # whatever it is, it is told, and the next occasion retries
            error = exc
        self._written.emit(snapshot.generation, error)

    def _finished(self, generation: int, error) -> None:
        if self._thread is None:
            return  # closed meanwhile: the files are gone already
        self._thread.join()
        self._thread = None
        if error is not None:
            self.message.emit(f"Autosave failed: {error}")
        elif generation <= self.clean:
            self._remove()  # saved as a project, or another document opened, meanwhile
        else:
            self.written = generation
            self.message.emit(f"Autosaved a recovery copy at {time.strftime('%H:%M:%S')}")
        if self._pending:
            self.save_if_due()

    # --------------------------------------------------------------------------------- files
    def _claim(self) -> None:
        """Make the folder and take this session's lock (once)."""
        if self._lock is not None:
            return
        os.makedirs(self.files.folder, mode=0o700, exist_ok=True)  # it holds the user's audio
        lock = self.files.lock_file()
        if not lock.tryLock(0):
            raise OSError(f"cannot lock '{self.files.lock}' ({lock.error().name})")
        self._lock = lock

    def _sidecar(self) -> dict:
        window = self.window
        return {
            "pid": os.getpid(),
            "time": time.time(),
            "source": window.document.audio.path,
            "path": window.path,
            "project": window.project_path,
            "strokes": len(window.strokes.done),
        }

    def _write_sidecar(self, values: dict) -> None:
        with atomic_path(self.files.sidecar) as temporary:
            temporary.write_text(json.dumps(values), encoding="utf-8")

    def _remove(self) -> None:
        """Remove this session's files and lock, if it made any."""
        self.written = 0
        if self._lock is not None:
            self.files.remove()
            self._lock.unlock()
            self._lock = None
