"""The space bar over the whole window: a tap plays or pauses, held while dragging it pans the
canvas (unless a text field has the focus: it types a space there).

Space's press is a window shortcut, matched by Qt itself; only while Space is held does an
application-wide event filter look for its release (or for the window losing the keyboard). A
filter installed for good ran Python for every event of the application, each taking the
interpreter from the painting thread while a stroke was painted (``bench_app.py``'s stroke on a
ten-minute file seen whole, on the H200: strokes with the filter removed, alternated with strokes
with it, painted their moves a median 7 % sooner).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication

ENDS_A_HOLD = (QEvent.Type.WindowDeactivate, QEvent.Type.ApplicationDeactivate)
"""Events after which Space's release would not reach the window: the hold ends there, no tap."""


class SpaceKey(QObject):
    """Space for ``window``: goes to ``canvas()`` (its ``space_pressed`` and ``space_released``);
    a tap calls ``play_pause``."""

    def __init__(self, window, canvas: Callable[[], object], play_pause: Callable[[], None]):
        super().__init__(window)
        self.window = window
        self.canvas = canvas
        self.play_pause = play_pause
        self._held = None
        """The canvas told that Space is down, until it goes up (None: Space is up)."""
        self.shortcut = QShortcut(QKeySequence(Qt.Key.Key_Space), window)
        self.shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        self.shortcut.setAutoRepeat(False)
        self.shortcut.activated.connect(self._pressed)

    def _pressed(self) -> None:
        canvas = self.canvas()
        if canvas is None or self._held is not None:
            return
        self._held = canvas
        canvas.space_pressed()
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind == QEvent.Type.KeyRelease and event.key() == Qt.Key.Key_Space:
            if not event.isAutoRepeat():
                self._release(tap_plays=True)
            return True
        if kind in ENDS_A_HOLD:
            self._release(tap_plays=False)
        return False

    def _release(self, *, tap_plays: bool) -> None:
        canvas, self._held = self._held, None
        QApplication.instance().removeEventFilter(self)
        if canvas is not None and canvas.space_released() and tap_plays:
            self.play_pause()
