"""Operations on the selection that take long (heal, de-click) as jobs of the main window.

Healing a selection across seconds, or every click of a long file, computes for seconds: it runs on
a worker thread (:func:`~spectropaint.app.files.file_actions.start_job`: progress, the dialog's
Cancel, Escape and the status line's Cancel), with the canvas taking no strokes meanwhile, and
what the person asks for next waits for it (:class:`.when_idle.WhenIdle`, through the window's
``job``). Cancelled, the document and the history stay as they were
(:meth:`~spectropaint.app.session.Session.apply_action`). Call :func:`start` once the window is
idle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from spectropaint.app.files.file_actions import reason_in_status, start_job
from spectropaint.transforms.regions import EMPTY

if TYPE_CHECKING:
    from spectropaint.app.session import Session
    from spectropaint.app.window.main_window import MainWindow
    from spectropaint.transforms.regions import Region

JOB_OPERATIONS = {"heal": "Healing the selection...", "declick": "Finding and healing clicks..."}
"""The operations run as jobs, and what their progress says."""


def start(
    window: MainWindow,
    session: Session,
    name: str,
    params: dict,
    done: Callable[[Region | None], None],
) -> None:
    """Run operation ``name`` (one of :data:`JOB_OPERATIONS`) with ``params`` on ``session``'s
    selection as ``window.job``; ``done(region)`` on the window's thread once it is applied
    (``region`` None when nothing changed). A refusal (bad parameters, no selection) goes to the
    status bar."""
    label, status = JOB_OPERATIONS[name], window.statusBar()
    before = session.generation

    def cancelled() -> None:
        if session.generation != before:  # Cancel came as the work ended: it is done
            done(EMPTY)
        else:
            status.showMessage(f"{label.removesuffix('...')}: cancelled, nothing changed", 10000)

    window.canvas.setEnabled(False)  # no strokes while the document is being written
    job = start_job(
        window,
        label,
        lambda progress: session.apply_to_selection(name, params, progress=progress),
        done,
        f"Cannot {name}",
        on_failure=reason_in_status(window, f"Cannot {name}"),
        on_cancel=cancelled,
    )
    job.done.connect(lambda: window.canvas is not None and window.canvas.setEnabled(True))
    window.job = job
