"""The space bar over the whole window: a tap plays or pauses, held while dragging it pans the
canvas (unless a text field has the focus)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit

TEXT_INPUTS = (QLineEdit, QTextEdit, QPlainTextEdit)


class SpaceKey(QObject):
    """An application-wide event filter for ``window``: Space goes to ``canvas()`` (its
    ``space_pressed`` and ``space_released``); a tap calls ``play_pause``."""

    def __init__(self, window, canvas: Callable[[], object], play_pause: Callable[[], None]):
        super().__init__(window)
        self.window = window
        self.canvas = canvas
        self.play_pause = play_pause

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if (
            kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease)
            or event.key() != Qt.Key.Key_Space
        ):
            return False
        canvas = self.canvas()
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier or canvas is None:
            return False
        focus = QApplication.focusWidget()
        if (
            isinstance(focus, TEXT_INPUTS)
            or watched is not (focus or self.window)
            or not self.window.isActiveWindow()
        ):
            return False
        if event.isAutoRepeat():
            return True
        if kind == QEvent.Type.KeyPress:
            canvas.space_pressed()
        elif canvas.space_released():
            self.play_pause()
        return True
