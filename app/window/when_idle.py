"""Steps through the history without blocking the window: an undo, a redo or a click in the
history waits (on a timer, not on the window's thread) until the strokes the pointer made are
painted and finished strokes have settled, then runs.

Every edit and step of the session waits for pending settles first, and the settle of a stroke
across a ten-minute file takes tens of seconds on a 2-core CPU: run on the window's thread at once,
Ctrl+Z would freeze the window that long.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from spectropaint.app.window.status_line import StatusLine

POLL_MS = 50
WAITING = "Waiting for the last stroke to settle"


class WhenIdle(QObject):
    """Runs actions once ``busy()`` is False, in the order asked; says so on ``status`` while
    they wait, and withdraws that once they ran."""

    def __init__(
        self,
        busy: Callable[[], bool],
        status: StatusLine,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.busy = busy
        self.status = status
        self._waiting: list[Callable[[], object]] = []
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def pending(self) -> int:
        """Actions waiting."""
        return len(self._waiting)

    def run(self, action: Callable[[], object], what: str) -> None:
        """``action()`` now if nothing is busy and nothing waits before it; else once idle."""
        if not self._waiting and not self.busy():
            action()
            return
        self._waiting.append(action)
        self.status.showMessage(f"{WAITING}: {what} follows")
        self._timer.start()

    def clear(self) -> None:
        """Forget the waiting actions (the document closed)."""
        self._waiting.clear()
        self._timer.stop()

    def _poll(self) -> None:
        if self.busy():
            return
        self._timer.stop()
        waiting, self._waiting = self._waiting, []
        self.status.withdraw(WAITING)  # before the actions, which may say something of their own
        for action in waiting:
            action()
