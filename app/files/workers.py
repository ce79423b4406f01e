"""Long work (opening, analysing, exporting) on a QThread, with a progress dialog and a Cancel button.

The work is a plain function ``work(progress) -> result``; ``progress(fraction)`` reports 0..1 and
returns False once the person pressed Cancel (the same contract as ``transforms.transform.Progress``),
so the work stops at its next check by raising :class:`~spectropaint.transforms.errors.Cancelled`.
The window keeps handling events meanwhile; results come back through queued signals on the GUI
thread.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot
from PySide6.QtWidgets import QProgressDialog, QWidget

from spectropaint.transforms.errors import Cancelled

log = logging.getLogger(__name__)
PROGRESS_STEPS = 1000
SHOW_AFTER_MS = 300
"""Work shorter than this never shows a dialog."""


class Worker(QObject):
    """Runs ``work(progress)`` once on whatever thread it lives on and reports how it ended."""

    progressed = Signal(float)
    succeeded = Signal(object)
    failed = Signal(object)
    cancelled = Signal()

    def __init__(self, work: Callable[[Callable[[float], bool]], Any]):
        super().__init__()
        self._work = work
        self._cancel_requested = False

    def cancel(self) -> None:
        """Ask the work to stop at its next progress report (any thread)."""
        self._cancel_requested = True

    def _progress(self, fraction: float) -> bool:
        self.progressed.emit(float(fraction))
        return not self._cancel_requested

    @Slot()
    def run(self) -> None:
        try:
            result = self._work(self._progress)
        except Cancelled:
            self.cancelled.emit()
        except Exception as exc:  # reported to the person by the job's owner
            log.debug("background work failed:\n%s", traceback.format_exc())
            self.failed.emit(exc)
        else:
            if self._cancel_requested:
                self.cancelled.emit()
            else:
                self.succeeded.emit(result)


class Job(QObject):
    """One piece of background work with its thread and progress dialog.

    Parameters
    ----------
    parent : QWidget
        The window the dialog belongs to; the job is its child, so it lives until done.
    label : str
        What the dialog says ("Opening take3.wav...").
    work : callable
        ``work(progress) -> result``, run on a new thread.
    on_success, on_failure, on_cancel : callable
        Called on the GUI thread with the result, the exception, or nothing.
    """

    done = Signal()
    progressed = Signal(float)
    """The work's progress, 0..1, on the GUI thread (for a status line)."""

    def __init__(
        self,
        parent: QWidget,
        label: str,
        work: Callable[[Callable[[float], bool]], Any],
        *,
        on_success: Callable[[Any], None],
        on_failure: Callable[[BaseException], None],
        on_cancel: Callable[[], None] | None = None,
    ):
        super().__init__(parent)
        self.label = label
        self.thread = QThread(self)
        self.worker = Worker(work)
        self.worker.moveToThread(self.thread)
        self.dialog = QProgressDialog(label, "Cancel", 0, PROGRESS_STEPS, parent)
        self.dialog.setWindowTitle("SpectroPaint")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(SHOW_AFTER_MS)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.canceled.connect(self.cancel)  # on this thread: the worker's is busy working
        # Escape reaches the Cancel button's shortcut only once the dialog is the active window;
        # before, it rejects the dialog, which hid it and left the work going on
        self.dialog.rejected.connect(self.cancel)
        self._on_success, self._on_failure, self._on_cancel = on_success, on_failure, on_cancel
        # bound slots of this GUI-thread object: Qt queues the worker's signals onto the GUI thread
        self.worker.progressed.connect(self._show_progress)
        self.worker.succeeded.connect(self._succeeded)
        self.worker.failed.connect(self._failed)
        self.worker.cancelled.connect(self._cancelled)
        self.thread.started.connect(self.worker.run)
        self.finished = False
        self._dialog_off = False

    def start(self) -> Job:
        self.dialog.setValue(0)
        self.thread.start()
        return self

    def cancel(self) -> None:
        self.worker.cancel()

    def hide_dialog(self) -> None:
        """Hide the progress dialog for good (the owner shows :attr:`progressed` elsewhere, a
        status line): the window stays usable while the work goes on."""
        self._dialog_off = True
        self.dialog.reset()  # stops the timer that would show it
        self.dialog.hide()

    @Slot(float)
    def _show_progress(self, fraction: float) -> None:
        self.progressed.emit(fraction)
        if not self._dialog_off and self.dialog.maximum():
            self.dialog.setValue(round(min(max(fraction, 0.0), 1.0) * PROGRESS_STEPS))

    @Slot(object)
    def _succeeded(self, result: Any) -> None:
        self._finish(self._on_success, result)

    @Slot(object)
    def _failed(self, exc: BaseException) -> None:
        self._finish(self._on_failure, exc)

    @Slot()
    def _cancelled(self) -> None:
        self._finish(self._on_cancel)

    def _finish(self, callback: Callable[..., None] | None, *args: Any) -> None:
        self.dialog.reset()
        self.dialog.hide()
        self.thread.quit()
        self.thread.wait()
        self.finished = True
        try:
            if callback is not None:
                callback(*args)
        finally:
            self.done.emit()
            self.dialog.deleteLater()
            self.deleteLater()
