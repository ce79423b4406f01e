"""The session's events as Qt signals, delivered on the GUI thread whichever thread made them."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from spectropaint.app.session import Change, Session


class SessionBridge(QObject):
    """Re-emits ``session.changed`` as :attr:`changed` and ``session.notices`` as :attr:`notice`.

    A change made on the GUI thread is told at once; one made on another thread (a stroke's move
    on the painting thread, a background step, a CUDA fallback during resynthesis) waits for the
    GUI thread's event loop, and is then told to every listener of :attr:`changed` in turn.
    :attr:`taken` follows the last of the changes queued meanwhile, so that a listener can act on
    all of them once (the canvas draws them in one frame) without another turn of the event loop.
    """

    changed = Signal(object)
    """A :class:`~spectropaint.app.session.Change`."""
    taken = Signal()
    """Every change made so far has been told (emitted after the last one queued)."""
    notice = Signal(str)
    _arrived = Signal(object)
    """A change, on its way to the GUI thread (queued from another, direct on it)."""

    def __init__(self, session: Session, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self._lock = threading.Lock()
        self._in_flight = 0
        """Changes made and not yet told (the painting thread adds, the GUI thread takes)."""
        self._arrived.connect(self._tell)

    def start(self) -> None:
        """Begin relaying (connect the receivers first: notices made earlier are replayed now)."""
        self.session.changed.connect(self._relay)
        self._notices = self.session.notices  # the document's: the session may get another
        self._notices.connect(self.notice.emit)

    def close(self) -> None:
        self.session.changed.disconnect(self._relay)
        self._notices.disconnect(self.notice.emit)

    def _relay(self, change: Change) -> None:
        with self._lock:
            self._in_flight += 1
        self._arrived.emit(change)

    def _tell(self, change: Change) -> None:
        self.changed.emit(change)
        with self._lock:
            self._in_flight -= 1
            last = self._in_flight == 0
        if last:
            self.taken.emit()
