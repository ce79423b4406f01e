"""The history panel: every stroke and operation by name and place; click one to go back (or
forward) to it; A/B switches between the chosen step (B) and the latest state (A), as many times as
you like. A new edit ends the comparison (the steps after the chosen one are gone)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from spectropaint.app.history_list import current_position, go_to, history_entries
from spectropaint.app.session import Change, Session


class HistoryPanel(QWidget):
    """Shows one session's history (:meth:`set_session`); refresh on each change."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.session: Session | None = None
        self._b: int | None = None
        """The step A/B compares with the latest state: the last one clicked or selected."""
        self.list = QListWidget()
        self.list.setObjectName("history_list")
        self.list.itemClicked.connect(self._clicked)
        self.compare = QPushButton("A/B: hear the selected step")
        self.compare.setObjectName("history_compare")
        self.compare.setCheckable(True)
        self.compare.setToolTip(
            "Switch between the selected step (B) and the latest state (A); edits end the comparison"
        )
        self.compare.toggled.connect(self._compare_toggled)
        self.usage = QLabel()
        self.usage.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.compare)
        layout.addWidget(self.usage)
        self.set_session(None)

    def set_session(
        self,
        session: Session | None,
        when_idle: Callable[[Callable[[], object], str], None] = lambda action, what: action(),
        go_to_state: Callable[[Session, int], None] = go_to,
    ) -> None:
        """Show ``session``'s history; ``when_idle(action, what)`` runs a step once the painting
        in progress is done (:class:`~spectropaint.app.window.when_idle.WhenIdle`), and
        ``go_to_state(session, position)`` steps there (the window's runs a change of analysis
        as a job)."""
        self.session, self.when_idle, self._go_to = session, when_idle, go_to_state
        self._b = None
        self.compare.blockSignals(True)
        self.compare.setChecked(False)
        self.compare.blockSignals(False)
        self.refresh()

    def session_changed(self, change: Change) -> None:
        if change.kind in ("stroke", "operation"):
            self._b = None  # a new edit ends the comparison: the steps after B are gone
            self.compare.blockSignals(True)
            self.compare.setChecked(False)
            self.compare.blockSignals(False)
        if change.completes_edit or change.kind == "saved":
            self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        enabled = self.session is not None
        self.compare.setEnabled(enabled)
        if not enabled:
            self.usage.clear()
            return
        current = current_position(self.session)
        for entry in history_entries(self.session):
            item = QListWidgetItem(
                f"{entry.position}. {entry.text}" if entry.position else entry.text
            )
            item.setData(Qt.ItemDataRole.UserRole, entry.position)
            if entry.undone:
                font = QFont(item.font())
                font.setItalic(True)
                item.setFont(font)
                item.setForeground(Qt.GlobalColor.gray)
            self.list.addItem(item)
            if entry.position == current:
                self.list.setCurrentItem(item)
        self.usage.setText(self.session.history.usage())

    def go_to(self, position: int) -> None:
        """Make the document what it was at ``position`` (0: as opened)."""
        session = self.session
        if session is not None:

            def step() -> None:
                if self.session is session:
                    self._go_to(session, position)
                    self.refresh()

            self.when_idle(step, "going back in the history")

    def _clicked(self, item: QListWidgetItem) -> None:
        """Go to the clicked state; it becomes what A/B compares with the latest."""
        self._b = item.data(Qt.ItemDataRole.UserRole)
        self.go_to(self._b)

    def _latest(self) -> int:
        return len(history_entries(self.session)) - 1

    def _compare_toggled(self, on: bool) -> None:
        """On: hear step B (the one chosen; the step before the latest if none). Off: the latest."""
        if self.session is None:
            return
        if on:
            if self._b is None:
                item = self.list.currentItem()
                self._b = item.data(Qt.ItemDataRole.UserRole) if item is not None else 0
                if self._b == self._latest():
                    self._b = max(0, self._b - 1)
            self.go_to(self._b)
        else:
            self.go_to(self._latest())
