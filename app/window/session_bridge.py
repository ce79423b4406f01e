"""The session's events as Qt signals, delivered on the GUI thread whichever thread made them."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from spectropaint.app.session import Session


class SessionBridge(QObject):
    """Re-emits ``session.changed`` as :attr:`changed` and ``session.notices`` as :attr:`notice`.

    Qt delivers a signal emitted on the receiver's thread at once and one emitted on another thread
    (a background step, a CUDA fallback during resynthesis) through the receiver's event loop.
    """

    changed = Signal(object)
    """A :class:`~spectropaint.app.session.Change`."""
    notice = Signal(str)

    def __init__(self, session: Session, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session

    def start(self) -> None:
        """Begin relaying (connect the receivers first: notices made earlier are replayed now)."""
        self.session.changed.connect(self.changed.emit)
        self._notices = self.session.notices  # the document's: the session may get another
        self._notices.connect(self.notice.emit)

    def close(self) -> None:
        self.session.changed.disconnect(self.changed.emit)
        self._notices.disconnect(self.notice.emit)
