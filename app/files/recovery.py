"""The recovery folder, where :mod:`.autosave` writes, and recovery at launch: the autosaves of
sessions that ended without closing, offered back.

Each running window (a session, ``<pid>-<start time in ms>``) has at most three files there:
``session-<id>.spp`` (the autosaved project), ``session-<id>.json`` (a sidecar: pid, time, source,
project, stroke count) and ``session-<id>.lock`` (a ``QLockFile``). They outlive the session only
when it was killed or crashed: a clean close removes them. Its lock tells a dead session from a live one (another window still
running); :func:`find_orphans` takes the locks of the dead ones, so that two launches never offer
the same files. The person chooses Restore (the newest opens as a modified, unsaved document; the
others are offered again next time), Discard (all are deleted) or Later (all are kept).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QLockFile, QStandardPaths
from PySide6.QtWidgets import QMessageBox, QWidget

from spectropaint.app.files import file_actions, project_actions

if TYPE_CHECKING:
    from spectropaint.app.window.main_window import MainWindow

RECOVERY_ENV = "SPECTROPAINT_RECOVERY_DIR"
"""Overrides the recovery folder (tests, or a folder on another disk)."""
PREFIX = "session-"
RESTORE, DISCARD, LATER = "restore", "discard", "later"


def recovery_folder() -> str:
    """``$SPECTROPAINT_RECOVERY_DIR``, else ``recovery`` in the app's data folder."""
    folder = os.environ.get(RECOVERY_ENV)
    if folder:
        return folder
    data = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return os.path.join(data, "recovery")


@dataclass(frozen=True)
class SessionFiles:
    """The files of one session in the recovery folder: project, JSON sidecar and lock."""

    folder: str
    session: str

    @property
    def project(self) -> str:
        return os.path.join(self.folder, f"{PREFIX}{self.session}.spp")

    @property
    def sidecar(self) -> str:
        return os.path.join(self.folder, f"{PREFIX}{self.session}.json")

    @property
    def lock(self) -> str:
        return os.path.join(self.folder, f"{PREFIX}{self.session}.lock")

    def lock_file(self) -> QLockFile:
        """A lock on this session that only a live process holds (no time-based staleness)."""
        lock = QLockFile(self.lock)
        lock.setStaleLockTime(0)
        return lock

    def remove(self) -> None:
        """Remove the project, the temporary files of interrupted writes and the sidecar (those
        that cannot be removed stay: at worst they are offered once more)."""
        partials = glob.glob(
            os.path.join(glob.escape(self.folder), f".{PREFIX}{glob.escape(self.session)}.spp.*")
        )
        for path in (self.project, *partials, self.sidecar):
            with contextlib.suppress(OSError):
                os.remove(path)

    @classmethod
    def all_in(cls, folder: str) -> list[SessionFiles]:
        """Every session with a file in ``folder`` (none when it does not exist)."""
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        sessions = {
            os.path.splitext(name)[0].removeprefix(PREFIX)
            for name in names
            if name.startswith(PREFIX) and name.endswith((".spp", ".json", ".lock"))
        }
        return [cls(folder, session) for session in sorted(sessions)]


@dataclass
class Orphan:
    """The recovery project of a session that is gone, held (locked) by this process."""

    files: SessionFiles
    lock: QLockFile
    info: dict[str, Any] = field(default_factory=dict)
    """The sidecar's values ({} when it is missing or damaged)."""

    @property
    def saved_at(self) -> float:
        when = self.info.get("time")
        if isinstance(when, (int, float)):
            return float(when)
        try:
            return os.path.getmtime(self.files.project)
        except OSError:
            return 0.0

    @property
    def name(self) -> str:
        """The file the session was working on (its project, else its sound), or a placeholder."""
        for key in ("project", "path", "source"):
            if isinstance(self.info.get(key), str):
                return os.path.basename(self.info[key])
        return "an unnamed sound"

    def describe(self) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.saved_at))
        return f"{self.name}, autosaved {stamp}"

    def discard(self) -> None:
        """Delete the files and let go of them."""
        self.files.remove()
        self.lock.unlock()

    def release(self) -> None:
        """Keep the files for a later launch."""
        self.lock.unlock()


def _read_info(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def find_orphans(folder: str, *, own: str | None = None) -> list[Orphan]:
    """The recovery projects in ``folder`` of sessions that are not running, newest first.

    Each is locked until :meth:`Orphan.discard` or :meth:`Orphan.release`. A dead session's files
    without a project (a sidecar left by a kill during a clean close) are removed. ``own`` is this
    process's session, never listed.
    """
    orphans = []
    for files in SessionFiles.all_in(folder):
        if files.session == own:
            continue
        lock = files.lock_file()
        if not lock.tryLock(0):
            continue  # a running session's, or one we cannot lock: not ours to touch
        if not os.path.isfile(files.project):
            files.remove()
            lock.unlock()
            continue
        orphans.append(Orphan(files, lock, _read_info(files.sidecar)))
    return sorted(orphans, key=lambda orphan: orphan.saved_at, reverse=True)


def ask_recovery(parent: QWidget, orphans: list[Orphan]) -> str:
    """Ask what to do with ``orphans``: :data:`RESTORE`, :data:`DISCARD` or :data:`LATER`."""
    lines = "\n".join(f"  • {orphan.describe()}" for orphan in orphans)
    more = "\nRestore opens the newest; the others are offered again next time." * (
        len(orphans) > 1
    )
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "Recover unsaved work",
        f"SpectroPaint did not close properly. Unsaved work was autosaved:\n{lines}\n{more}",
        parent=parent,
    )
    buttons = {
        RESTORE: box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole),
        DISCARD: box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole),
        LATER: box.addButton("Later", QMessageBox.ButtonRole.RejectRole),
    }
    box.setDefaultButton(buttons[RESTORE])
    box.exec()
    return next((name for name, b in buttons.items() if b is box.clickedButton()), LATER)


def offer_recovery(window: MainWindow, folder: str, *, otherwise: Callable[[], None]) -> None:
    """Offer the orphans in ``folder``.

    ``otherwise`` (opening what the launch asked for) runs when there are none, after Discard or
    Later, and after a restore that failed; not after one that opened or was cancelled.
    """
    own = window.autosave.files.session if window.autosave is not None else None
    orphans = find_orphans(folder, own=own)
    if not orphans:
        otherwise()
        return
    choice = ask_recovery(window, orphans)
    for orphan in orphans[1:] if choice == RESTORE else orphans:
        if choice == DISCARD:
            orphan.discard()
        else:
            orphan.release()
    if choice == RESTORE:
        restore(window, orphans[0], otherwise=otherwise)
    else:
        otherwise()


def restore(window: MainWindow, orphan: Orphan, *, otherwise: Callable[[], None]) -> None:
    """Open ``orphan`` as a modified document that this session then autosaves in its place.

    A file that cannot be read is described, and deleted or kept as the person answers; then
    ``otherwise`` runs.
    """
    device, reserve = window.torch_device, file_actions.window_reserve(window)
    path = orphan.files.project

    def success(loaded) -> None:
        project, strokes = loaded
        named = orphan.info.get("project") or orphan.info.get("path")
        window.set_document(
            project.document,
            named if isinstance(named, str) else project.document.audio.path,
            stored_view=project.view,
            strokes=strokes,
            recovered=True,
        )
        if window.autosave is not None:
            try:
                window.autosave.adopt(orphan.files)
            except OSError as err:  # the old copy stays where it is, for the next launch
                window.statusBar().showMessage(f"Autosave cannot take over {path}: {err}")
        orphan.release()

    def failure(exc: BaseException) -> None:
        answer = QMessageBox.question(
            window,
            "Cannot restore",
            f"{exc}\n\nDelete this recovery file? (No keeps it for a later launch.)",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer == QMessageBox.StandardButton.Yes:
            orphan.discard()
        else:
            orphan.release()
        otherwise()

    def cancelled() -> None:  # the files stay for the next launch
        orphan.release()
        window.statusBar().showMessage("Restoring cancelled: it is offered again next time")

    window.job = file_actions.start_job(
        window,
        f"Restoring {orphan.name}...",
        lambda progress: project_actions.load_with_strokes(
            path, device=device, progress=progress, reserve_bytes=reserve
        ),
        success,
        "Cannot restore",
        on_failure=failure,
        on_cancel=cancelled,
    )


def sweep_save_folders(store, recovery: str) -> list[str]:
    """At start-up, remove the temporary files that killed saves left in the folders this person
    saves to: those of the recent files, the last folder used, and the recovery folder. Only
    ``atomic_path``'s names, untouched for 10 minutes and not locked by a live save
    (:func:`~spectropaint.transforms.files.atomic_write.sweep_stale_partials`); the paths removed."""
    from spectropaint.transforms.files.atomic_write import sweep_stale_partials

    folders = {os.path.dirname(os.path.abspath(path)) for path in store.recent_files()}
    folders |= {store.last_folder, recovery}
    return [
        os.path.join(folder, name)
        for folder in sorted(folders)
        for name in sweep_stale_partials(folder)
    ]
