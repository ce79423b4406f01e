"""A change of analysis, and the undo or redo of one, as jobs of the main window.

Each analyses the whole sound (seconds for ten minutes of stereo): it runs on a worker thread
(:class:`~spectropaint.app.files.workers.Job`, whose progress dialog's Cancel, or Escape, stops it),
its progress also in the status line. Meanwhile the canvas takes no strokes, the session refuses
edits (:attr:`~spectropaint.app.session.Session.replacing`), and what the person asks for (an undo,
a save, an operation) waits for it (:class:`.when_idle.WhenIdle`, through the window's
``replacing``). Cancelled, nothing changes: the document and the history stay as they were. Other
undo and redo steps run at once on the window's thread (they swap a stroke's tiles).

Call these once the window is idle (from :meth:`.when_idle.WhenIdle.run`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from spectropaint.app.files.file_actions import reason_in_status, start_job
from spectropaint.app.history_list import current_position
from spectropaint.transforms.analysis import AnalysisSettings, describe

if TYPE_CHECKING:
    from spectropaint.app.files.workers import Job
    from spectropaint.app.window.main_window import MainWindow

GOING = "going back in the history"
CANCEL_HINT = " (Escape or Cancel stops it)"


def change(window: MainWindow, settings: AnalysisSettings) -> None:
    """Analyse the document anew with ``settings`` keeping its edits, as one undo step."""
    session = window.session
    if settings == session.document.settings:
        return
    what = describe(settings)
    _start(
        window,
        f"Analysing with {what}...",
        lambda progress: session.change_analysis(settings, progress=progress),
        f"Analysis: {what}",
        "Cannot change the analysis",
    )


def step(
    window: MainWindow,
    kind: str,
    *,
    then: Callable[[], None] | None = None,
    cancellable: bool = True,
) -> Job | None:
    """``kind`` (``'undo'`` or ``'redo'``) once: a change of analysis as a job (returned), then
    ``then()`` when it is done; any other step at once (``then`` not called: nothing waits for
    it; None returned)."""
    session = window.session
    if not session.step_replaces(kind):
        getattr(session, kind)()
        return None
    label = session.next_step(kind).label
    doing, done = ("Undoing", "Undone") if kind == "undo" else ("Redoing", "Redone")

    def work(progress):
        if cancellable:
            return getattr(session, kind)(progress)
        # a recovery: stopping half-way would leave views of another document than the session's
        return getattr(session, kind)(lambda done: progress(done) or True)

    return _start(
        window, f"{doing} {label}...", work, f"{done}: {label}", "Cannot " + kind, then=then
    )


def go_to(window: MainWindow, session, position: int) -> None:
    """Undo or redo until ``session``'s document is in state ``position`` (a click in the
    history panel), each change of analysis on the way as a job."""
    while window.session is session and (current := current_position(session)) != position:
        kind = "undo" if current > position else "redo"
        if session.step_replaces(kind):
            step(
                window,
                kind,
                then=lambda: window.when_idle.run(lambda: go_to(window, session, position), GOING),
            )
            return
        if getattr(session, kind)() is None:
            return


def _start(
    window: MainWindow,
    label: str,
    work,
    done: str,
    title: str,
    *,
    then: Callable[[], None] | None = None,
) -> Job:
    """Run ``work(progress)``, which replaces the session's document, as the window's job."""
    session = window.session
    before = session.document
    status = window.statusBar()

    def success(_=None) -> None:
        if window.replacing is job:
            window.replacing = None
        window.document_replaced()  # new views at once (then the session's change finds them)
        status.showMessage(done)
        if then is not None:
            then()

    def cancelled() -> None:
        if session.document is not before:  # Cancel came as the work ended: it is done
            success()
        else:
            status.showMessage(f"{label.removesuffix('...')}: cancelled, nothing changed", 10000)

    def progressed(fraction: float) -> None:
        percent = f"{round(100 * min(max(fraction, 0.0), 1.0))}%"
        if not status.currentMessage().endswith(percent + CANCEL_HINT):
            status.showMessage(f"{label} {percent}{CANCEL_HINT}", 0)

    def ended() -> None:
        if window.replacing is job:
            window.replacing = None
        if window.replacing is None and window.canvas is not None:
            window.canvas.setEnabled(True)
        status.withdraw(label)

    window.canvas.setEnabled(False)  # no strokes: the session refuses them meanwhile
    job = start_job(
        window,
        label,
        work,
        success,
        title,
        on_failure=reason_in_status(window, title),
        on_cancel=cancelled,
    )
    window.job = window.replacing = job
    job.progressed.connect(progressed)
    job.done.connect(ended)
    return job
