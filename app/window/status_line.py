"""The status bar, whose messages do not go stale: each one goes away after a while unless told how
long to stay, and a message about a state (playback off) can be withdrawn when the state ends."""

from __future__ import annotations

from PySide6.QtWidgets import QStatusBar

MIN_SHOW_MS = 6000
MAX_SHOW_MS = 30000
MS_PER_CHARACTER = 80
"""A message stays long enough to read it twice, then goes."""


def show_ms(text: str) -> int:
    """How long a message with no timeout of its own stays (milliseconds)."""
    return min(MAX_SHOW_MS, max(MIN_SHOW_MS, MS_PER_CHARACTER * len(text)))


class StatusLine(QStatusBar):
    """A QStatusBar whose ``showMessage(text)`` with no timeout times out after :func:`show_ms`."""

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802 - Qt's name
        super().showMessage(text, timeout or show_ms(text))

    def withdraw(self, prefix: str) -> None:
        """Clear the message shown if it starts with ``prefix`` (its state has ended)."""
        if self.currentMessage().startswith(prefix):
            self.clearMessage()
