"""Runs what needs a quiet document without blocking the window: an undo, a redo, a click in the
history, a save, an export, an operation on the selection or a change of analysis waits (on a
timer, not on the window's thread) until the strokes the pointer made are painted, finished strokes
and operations have settled and no change of analysis is under way, then runs.

Every edit and step of the session waits for pending settles first, and the settle of a stroke
across a ten-minute file takes tens of seconds on a 2-core CPU: run on the window's thread at once,
Ctrl+Z or Ctrl+S would freeze the window that long. As the session does, a wait longer than
:data:`~spectropaint.app.session.HURRY_AFTER_S` hurries the settles (they end their iterations at
the next one).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from spectropaint.app.session import HURRY_AFTER_S
from spectropaint.app.window.status_line import StatusLine

POLL_MS = 50
WAITING = "Waiting for "
"""How the status line's message about a wait begins (withdrawn when the wait ends)."""


class WhenIdle(QObject):
    """Runs actions once ``busy()`` says nothing, in the order asked; says on ``status`` what they
    wait for while they wait, and withdraws that once they ran.

    Parameters
    ----------
    busy : callable
        ``busy() -> str``: what is under way (``'the last stroke to settle'``), or ``''``.
    status : StatusLine
    hurry : callable, optional
        Called once when actions have waited :data:`HURRY_AFTER_S` (the session's
        ``hurry_settles``).
    """

    def __init__(
        self,
        busy: Callable[[], str],
        status: StatusLine,
        parent: QObject | None = None,
        *,
        hurry: Callable[[], None] | None = None,
    ):
        super().__init__(parent)
        self.busy = busy
        self.status = status
        self.hurry = hurry
        self._waiting: list[tuple[Callable[[], object], str]] = []
        self._since, self._hurried, self._said = 0.0, False, ""
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
        self._waiting.append((action, what))
        if len(self._waiting) == 1:
            self._start_waiting()
        self._timer.start()

    def clear(self) -> None:
        """Forget the waiting actions (the document closed)."""
        self._waiting.clear()
        self._timer.stop()
        self.status.withdraw(WAITING)

    def _start_waiting(self) -> None:
        self._since, self._hurried, self._said = time.monotonic(), False, ""
        self._say(self.busy())

    def _say(self, reason: str) -> None:
        """Tell what the first waiting action waits for (again only when that changes)."""
        if reason and reason != self._said:
            self._said = reason
            self.status.showMessage(f"{WAITING}{reason}: {self._waiting[0][1]} follows")

    def _poll(self) -> None:
        """Run the waiting actions while nothing is busy (one may start work that is, a change
        of analysis: the rest wait for it)."""
        while self._waiting:
            reason = self.busy()
            if reason:
                self._say(reason)
                if not self._hurried and time.monotonic() - self._since > HURRY_AFTER_S:
                    self._hurried = True
                    if self.hurry is not None:
                        self.hurry()
                return
            action, _ = self._waiting.pop(0)
            self.status.withdraw(WAITING)  # before the action, which may say something of its own
            action()
            if self._waiting and self.busy():
                self._start_waiting()
        self._timer.stop()
