"""Projects in the window: saving and opening ``.spp`` files as background jobs.

A save starts once the window is idle (:class:`~spectropaint.app.window.when_idle.WhenIdle`: the
strokes the pointer made painted, finished edits settled, no change of analysis under way), so it
holds the settled document without the window's thread ever waiting for that. It never holds the
session's lock while it writes: ``Session.snapshot`` copies, under the lock,
only what strokes can change (the edited frames); the file is then written from that copy, with the
audio and settings it shares with the open document (nothing writes those after loading), on a
worker thread while painting goes on.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from spectropaint.app.files import file_actions
from spectropaint.brushes.actions import RecordedAction, entry_from_dict
from spectropaint.brushes.recorded import RecordedStroke
from spectropaint.transforms.errors import ProjectFileError, SettingsError
from spectropaint.transforms.files.project_file import SUFFIX, Project, load_project
from spectropaint.transforms.transform import Progress

if TYPE_CHECKING:
    from spectropaint.app.files.workers import Job
    from spectropaint.app.window.main_window import MainWindow

PROJECT_FILTER = "SpectroPaint project (*.spp)"


# --- opening ------------------------------------------------------------------------------------


def load_with_strokes(
    path: str, *, device, progress: Progress | None = None, reserve_bytes=0
) -> tuple[Project, list[RecordedStroke | RecordedAction]]:
    """Load a project and parse its recorded strokes and operations; :class:`ProjectFileError`
    for either.

    ``reserve_bytes`` is what the window adds to the document (``file_actions.window_reserve``).
    """
    project = load_project(path, device=device, progress=progress, reserve_bytes=reserve_bytes)
    try:
        strokes = [
            entry_from_dict(values, origin=f"stroke {index + 1}")
            for index, values in enumerate(project.strokes)
        ]
    except SettingsError as exc:
        raise ProjectFileError(path, str(exc)) from None
    return project, strokes


def start_open(window: MainWindow, path: str) -> Job:
    """Open the project at ``path`` with its view and strokes."""
    device, reserve = window.torch_device, file_actions.window_reserve(window)

    def success(loaded) -> None:
        project, strokes = loaded
        window.set_document(
            project.document, path, project_path=path, stored_view=project.view, strokes=strokes
        )
        window.store.add_recent(path)

    return file_actions.start_job(
        window,
        f"Opening {os.path.basename(path)}...",
        lambda progress: load_with_strokes(
            path, device=device, progress=progress, reserve_bytes=reserve
        ),
        success,
        "Cannot open",
    )


# --- saving -------------------------------------------------------------------------------------


def default_project_path(window: MainWindow) -> str:
    """The project's own path, else the source's name with ``.spp`` in the source's folder."""
    session = window.session
    if session.project_path:
        return session.project_path
    source = session.path or session.document.audio.path
    if not source:
        return os.path.join(window.store.last_folder, "demo" + SUFFIX)
    folder = os.path.dirname(os.path.abspath(source))
    if not os.path.isdir(folder):
        folder = window.store.last_folder
    return os.path.join(folder, os.path.splitext(os.path.basename(source))[0] + SUFFIX)


def ask_project_path(window: MainWindow) -> str | None:
    """A path from the save dialog, always ending in ``.spp`` (None when cancelled)."""
    path, _ = QFileDialog.getSaveFileName(
        window, "Save Project As", default_project_path(window), PROJECT_FILTER
    )
    if not path:
        return None
    return path if path.lower().endswith(SUFFIX) else path + SUFFIX


def save(window: MainWindow, *, ask: bool) -> None:
    """Save the document as a project: to its own path, or one asked for (``ask``, or none yet),
    as ``window.job`` once the window is idle.

    On success the session is told (``Session.mark_saved``) and the continuation in
    ``window.after_save`` runs; cancelling the dialog or a failure drops it.
    """
    session = window.session
    path = None if ask else session.project_path
    path = path or ask_project_path(window)
    if path is None:
        window.after_save = None
        return
    window.when_idle.run(lambda: _start_save(window, session, path), "saving")


def _start_save(window: MainWindow, session, path: str) -> None:
    if window.session is not session:
        return
    snapshot = session.snapshot(window.view_values())  # settled: nothing is pending now

    def success(report) -> None:
        session.mark_saved(path, snapshot.generation)
        window.store.add_recent(path)
        window.statusBar().showMessage(report.message[:1].upper() + report.message[1:], 10000)
        then, window.after_save = window.after_save, None
        if then is not None:
            then()

    window.job = file_actions.start_job(
        window,
        f"Saving {os.path.basename(path)}...",
        lambda progress: snapshot.write(path, progress),
        success,
        "Cannot save project",
    )
