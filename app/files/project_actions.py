"""Projects in the window: the recorded strokes kept in step with undo, snapshots of the document,
and saving and opening ``.spp`` files as background jobs.

A save never holds the window's lock while it writes. :func:`take_snapshot` copies, under the lock,
only what strokes can change (the edited frames: ``copy_edited_runs``); the file is
then written from that copy, with the audio and settings it shares with the open document (nothing
writes those after loading), on a worker thread while painting goes on.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFileDialog

from spectropaint.app.files import file_actions
from spectropaint.app.panels.view_panel import STORED_FIELDS
from spectropaint.brushes.recorded import RecordedStroke, stroke_from_dict
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import ProjectFileError, SettingsError
from spectropaint.transforms.files.project_file import (
    SUFFIX,
    EditedRun,
    Project,
    copy_edited_runs,
    load_project,
    save_project,
)
from spectropaint.transforms.transform import Progress

if TYPE_CHECKING:
    from spectropaint.app.files.workers import Job
    from spectropaint.app.window.main_window import MainWindow

PROJECT_FILTER = "SpectroPaint project (*.spp)"
VIEW_FIELDS = (*STORED_FIELDS, "channel", "time_range", "freq_range")
"""The view fields a project keeps: the look, the channel shown and the zoom."""


class StrokeLog:
    """The strokes that made the document, in step with its undo history.

    ``done`` are the strokes in the document, oldest first; ``undone`` those undone and not yet
    redone. The undo history holds the newest strokes of ``done`` (older ones may have left it when
    over its budget), so an undo that changed something undid the last of ``done``.
    """

    def __init__(self, strokes: Iterable[RecordedStroke] = ()):
        self.done: list[RecordedStroke] = list(strokes)
        self.undone: list[RecordedStroke] = []

    def add(self, stroke: RecordedStroke) -> None:
        """A new stroke: it ends the redo list, as it ends the history's."""
        self.done.append(stroke)
        self.undone.clear()

    def undo(self) -> None:
        if self.done:
            self.undone.append(self.done.pop())

    def redo(self) -> None:
        if self.undone:
            self.done.append(self.undone.pop())

    def to_dicts(self) -> list[dict[str, Any]]:
        return [stroke.to_dict() for stroke in self.done]


# --- view settings ------------------------------------------------------------------------------


def view_values(view: ViewSettings) -> dict[str, Any]:
    """The fields of :data:`VIEW_FIELDS` as plain JSON data."""
    values = {name: getattr(view, name) for name in VIEW_FIELDS}
    return {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def view_from_values(base: ViewSettings, values: dict[str, Any], n_channels: int) -> ViewSettings:
    """``base`` with the fields a project stored; ``base`` itself when they do not validate
    (a project file is not trusted: ``ViewSettings`` checks names and ranges, this the types)."""
    fields = {name: values[name] for name in VIEW_FIELDS if name in values}
    try:
        for name in ("time_range", "freq_range"):
            if fields.get(name) is not None:
                low, high = fields[name]
                fields[name] = (float(low), float(high))
        view = dataclasses.replace(base, **fields)
    except (SettingsError, TypeError, ValueError):
        return base
    numbers = (
        view.range_db,
        view.gamma,
        -view.range_db if view.floor_db is None else view.floor_db,
    )
    channel_ok = type(view.channel) is int and view.channel < n_channels
    return view if channel_ok and all(map(_is_number, numbers)) else base


# --- snapshots ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """What a save writes: the document (whose audio and settings nothing writes after loading),
    host copies of its edited frames as they were, its view and strokes, and the window's edit
    count at that moment (``MainWindow.generation``)."""

    document: Document
    edits: list[EditedRun]
    view: dict[str, Any]
    strokes: list[dict[str, Any]]
    generation: int


def take_snapshot(window: MainWindow) -> Snapshot:
    """The window's document, view and strokes now, holding the lock only while the edited
    frames are copied (time and memory in proportion to them, not to the document)."""
    with window.lock:
        edits = copy_edited_runs(window.document)
    return Snapshot(
        window.document,
        edits,
        view_values(window.canvas.view),
        window.strokes.to_dicts(),
        window.generation,
    )


def write_snapshot(snapshot: Snapshot, path: str, progress: Progress | None = None):
    """Save ``snapshot`` as a project at ``path``; returns the ``ProjectReport``."""
    return save_project(
        snapshot.document,
        path,
        view=snapshot.view,
        strokes=snapshot.strokes,
        edits=snapshot.edits,
        progress=progress,
    )


# --- opening ------------------------------------------------------------------------------------


def load_with_strokes(
    path: str, *, device, progress: Progress | None = None, reserve_bytes=0
) -> tuple[Project, list[RecordedStroke]]:
    """Load a project and parse its recorded strokes; :class:`ProjectFileError` for either.

    ``reserve_bytes`` is what the window adds to the document (``file_actions.window_reserve``).
    """
    project = load_project(path, device=device, progress=progress, reserve_bytes=reserve_bytes)
    try:
        strokes = [
            stroke_from_dict(values, origin=f"stroke {index + 1}")
            for index, values in enumerate(project.strokes)
        ]
    except SettingsError as exc:
        raise ProjectFileError(path, str(exc)) from None
    return project, strokes


def start_open(window: MainWindow, path: str) -> Job:
    """Open the project at ``path`` with its view and strokes."""
    device, reserve = window.torch_device, file_actions.window_reserve()

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
    if window.project_path:
        return window.project_path
    source = window.path or window.document.audio.path
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


def save(window: MainWindow, *, ask: bool) -> Job | None:
    """Save the document as a project: to its own path, or one asked for (``ask``, or none yet).

    On success the window is told (``MainWindow.project_saved``) and the continuation in
    ``window.after_save`` runs; cancelling the dialog or a failure drops it.
    """
    path = None if ask else window.project_path
    path = path or ask_project_path(window)
    if path is None:
        window.after_save = None
        return None
    document, snapshot = window.document, take_snapshot(window)

    def success(report) -> None:
        if window.document is document:  # not replaced meanwhile
            window.project_saved(path, snapshot.generation)
        window.statusBar().showMessage(report.message[:1].upper() + report.message[1:], 10000)
        then, window.after_save = window.after_save, None
        if then is not None:
            then()

    return file_actions.start_job(
        window,
        f"Saving {os.path.basename(path)}...",
        lambda progress: write_snapshot(snapshot, path, progress),
        success,
        "Cannot save project",
    )
