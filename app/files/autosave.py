"""Autosave: a recovery copy of the open document, written in the background.

Every running window (a *run*) keeps at most one project in the recovery folder, named for its pid
and start time, with a JSON sidecar (source, project, time, pid) and a ``QLockFile`` that says the
run is alive (:class:`~.recovery.SessionFiles`). A copy is written when the session changed since
the last one, every ``interval_s`` seconds and at once after ``every`` edits; the session's lock is
held only while the edited frames are copied (``Session.snapshot``), the file is written on a thread
of its own. Saving the project or closing the window removes the run's files; a run that was killed
leaves them for :mod:`.recovery` to offer at the next launch. Failures (a full disk) are told in the
status bar and retried at the next occasion; nothing but the recovery folder is ever written.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QLockFile, QObject, QTimer, Signal

from spectropaint.app.files.recovery import SessionFiles
from spectropaint.app.session import Change, Session, Snapshot
from spectropaint.transforms.files.atomic_write import atomic_path
from spectropaint.transforms.files.file_reasons import describe_os_error


class Autosave(QObject):
    """The autosave of one window.

    Parameters
    ----------
    parent : QObject
    session_of : callable
        The session open now (None when none is).
    view_of : callable
        The view as a project keeps it (a dict).
    folder : str
        The recovery folder (made when first needed).
    interval_s : float
        Seconds between timed saves; 0 turns them off.
    every : int
        Edits after which a save runs at once; 0 turns that off.

    The window tells it :meth:`document_changed` when another session opens, passes the session's
    changes to :meth:`session_changed`, and calls :meth:`close` when it closes.
    """

    message = Signal(str)
    """A line for the status bar: a copy was written, or why not."""
    _written = Signal(object, int, object)
    """From the writing thread: the session and generation written, and the error or None."""

    def __init__(
        self,
        parent: QObject,
        session_of: Callable[[], Session | None],
        view_of: Callable[[], dict[str, Any]],
        folder: str,
        *,
        interval_s: float,
        every: int,
    ):
        super().__init__(parent)
        self.session_of = session_of
        self.view_of = view_of
        self.every = every
        self.files = SessionFiles(folder, f"{os.getpid()}-{time.time_ns() // 1_000_000}")
        self.clean = 0
        """The generation last saved as a project: nothing to recover up to it."""
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

    # --------------------------------------------------------------------- told by the window
    def session_changed(self, change: Change) -> None:
        """Count completed edits (save once ``every`` were made); note saved projects."""
        if change.kind == "saved":
            self.project_saved(change.generation)
        elif change.completes_edit:
            self.edited()
        elif change.kind == "settle" and self._pending:
            self.save_if_due()  # a copy waiting for the stroke's settle

    def edited(self) -> None:
        """After each edit: save now once ``every`` edits were made since the last attempt."""
        session = self.session_of()
        since = session.generation - max(self.attempted, self.clean)
        if self._pending or (self.every and since >= self.every):
            self.save_if_due()

    def document_changed(self) -> None:
        """Another session is open (the person kept or discarded the last one's edits)."""
        session = self.session_of()
        self.clean = self.attempted = session.generation if session is not None else 0
        if self._thread is None:
            self._remove()  # a write in flight is removed when it ends: it is of another session

    def project_saved(self, generation: int) -> None:
        """The project holds everything up to ``generation``: a copy no newer is not needed."""
        self.clean = max(self.clean, generation)
        if self.written <= generation and self._thread is None:
            self._remove()

    def adopt(self, files: SessionFiles) -> None:
        """Take over another (dead) run's recovery project as this one's: it holds the
        document just restored from it. The other run's files are removed."""
        self._claim()
        os.replace(files.project, self.files.project)
        self._write_sidecar(self._sidecar(self.session_of()))
        self.written = self.session_of().generation
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
        session = self.session_of()
        return (
            session is not None
            and session.modified
            and session.generation > max(self.written, self.clean)
        )

    def save_if_due(self) -> None:
        """Start writing a copy if the session changed since the last one (later, mid-stroke)."""
        if not self.due:
            self._pending = False
            return
        session = self.session_of()
        if self._thread is not None or session.painting or session.settles_pending:
            self._pending = True  # after the write, the stroke or its settle
            return
        self._pending = False
        try:
            self._claim()
            snapshot = session.snapshot(self.view_of())
        except OSError as err:
            reason = describe_os_error(err)
            self.message.emit(f"Autosave failed: cannot write in '{self.files.folder}': {reason}")
            return
        except (MemoryError, RuntimeError) as err:  # no memory for the copy of the edits
            self.message.emit(f"Autosave failed: {err}")
            return
        self.attempted = snapshot.generation
        self._thread = threading.Thread(
            target=self._write,
            args=(session, snapshot, self._sidecar(session)),
            name="autosave",
            daemon=True,
        )
        self._thread.start()

    def _write(self, session: Session, snapshot: Snapshot, sidecar: dict) -> None:
        error = None
        try:
            snapshot.write(self.files.project)
            self._write_sidecar(sidecar)
        except Exception as exc:  # whatever it is, it is told, and the next occasion retries
            error = exc
        self._written.emit(session, snapshot.generation, error)

    def _finished(self, session: Session, generation: int, error) -> None:
        if self._thread is None:
            return  # closed meanwhile: the files are gone already
        self._thread.join()
        self._thread = None
        if error is not None:
            self.message.emit(f"Autosave failed: {error}")
        elif session is not self.session_of() or generation <= self.clean:
            self._remove()  # another document opened, or saved as a project, meanwhile
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

    @staticmethod
    def _sidecar(session: Session) -> dict:
        return {
            "pid": os.getpid(),
            "time": time.time(),
            "source": session.document.audio.path,
            "path": session.path,
            "project": session.project_path,
            "strokes": len(session.strokes.done),
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
