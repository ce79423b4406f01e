"""Escape and a Cancel button in the status line stop the window's running job at once.

A job's progress dialog appears only after :data:`~spectropaint.app.files.workers.SHOW_AFTER_MS`
(shorter work never shows one), and while it is hidden the window, not the dialog, gets the keys:
so the window itself cancels the job it runs (an open, a save, an export, a change of analysis, an
operation), dialog shown or not. The Escape shortcut is on only while a job runs; a stroke or drag
in progress on the canvas takes Escape first (it abandons that drag, as without a job).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QPushButton


class JobCancel(QObject):
    """The window's Escape shortcut and status-line Cancel button for its running job.

    Parameters
    ----------
    window : QMainWindow
        Its status bar gets the button (hidden while no job runs).
    cancel_drag : callable
        ``cancel_drag() -> bool``: abandon the canvas's drag in progress, True if there was one
        (Escape then does only that).
    """

    def __init__(self, window: QMainWindow, cancel_drag: Callable[[], bool]):
        super().__init__(window)
        self.cancel_drag = cancel_drag
        self.job = None
        self._cancel: Callable[[], None] | None = None
        self.shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), window)
        self.shortcut.setEnabled(False)
        self.shortcut.activated.connect(self._escape)
        self.button = QPushButton("Cancel")
        self.button.setObjectName("cancel_job")
        self.button.setToolTip("Stop what is under way (Escape)")
        self.button.clicked.connect(self.cancel)
        window.statusBar().addPermanentWidget(self.button)
        self.button.hide()

    def watch(self, job, cancel: Callable[[], None] | None = None) -> None:
        """Cancel ``job`` (:class:`~spectropaint.app.files.workers.Job`) on Escape or the button
        until it ends, by ``cancel()`` (by default ``job.cancel``)."""
        self.job, self._cancel = job, cancel or job.cancel
        self.shortcut.setEnabled(True)
        self.button.show()
        job.done.connect(lambda: self._ended(job))

    def cancel(self) -> None:
        """Cancel the job watched, if it still runs."""
        if self.job is not None and not self.job.finished:
            self._cancel()

    def _escape(self) -> None:
        if not self.cancel_drag():
            self.cancel()

    def _ended(self, job) -> None:
        if self.job is job:
            self.job = self._cancel = None
            self.shortcut.setEnabled(False)
            self.button.hide()
