"""The one observer class of the model: an :class:`Event` that callbacks connect to.

The session emits its changes through one (``Session.changed``), the document its notices through
another (``Document.notices``). Callbacks run synchronously on the emitting thread; a GUI that
needs them on its own thread bridges them (``spectropaint.app.window.session_bridge``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Event(Generic[T]):
    """``connect(callback)``, ``disconnect(callback)``, ``emit(value)``.

    Parameters
    ----------
    remember : bool
        Keep every value emitted in :attr:`emitted`, and replay it to a callback when it connects
        (``connect(..., replay=False)`` skips that), so a listener connected late still hears what
        happened before: for messages to a person, not for changes.
    """

    def __init__(self, *, remember: bool = False):
        self._callbacks: list[Callable[[T], object]] = []
        self.remember = remember
        self.emitted: list[T] = []

    def connect(self, callback: Callable[[T], object], *, replay: bool = True) -> None:
        if replay:
            for value in self.emitted:
                callback(value)
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[[T], object]) -> None:
        self._callbacks.remove(callback)

    def emit(self, value: T) -> None:
        if self.remember:
            self.emitted.append(value)
        for callback in list(self._callbacks):
            callback(value)
