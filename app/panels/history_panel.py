"""The history panel: every stroke and operation by name and place; click one to go back (or
forward) to it; A/B compares the chosen step with the latest state, as many times as you like."""

from __future__ import annotations

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
from spectropaint.gpu.geometry import BlockGeometry


class HistoryPanel(QWidget):
    """Shows one session's history (:meth:`set_session`); refresh on each change."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.session: Session | None = None
        self.geometry: BlockGeometry | None = None
        self._compare_from: int | None = None
        """The position A/B returns to (the latest state) while comparing."""
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
        self.set_session(None, None)

    def set_session(self, session: Session | None, geometry: BlockGeometry | None) -> None:
        self.session, self.geometry = session, geometry
        self._compare_from = None
        self.compare.blockSignals(True)
        self.compare.setChecked(False)
        self.compare.blockSignals(False)
        self.refresh()

    def session_changed(self, change: Change) -> None:
        if change.kind in ("stroke", "operation") and self._compare_from is not None:
            self._compare_from = None  # a new edit ends the comparison: its redo steps are gone
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
        for entry in history_entries(self.session, self.geometry):
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
        if self.session is not None and not self.session.painting:
            go_to(self.session, position)
            self.refresh()

    def _clicked(self, item: QListWidgetItem) -> None:
        """Go to the clicked state (while comparing, it becomes what B is)."""
        self.go_to(item.data(Qt.ItemDataRole.UserRole))

    def _compare_toggled(self, on: bool) -> None:
        if self.session is None:
            return
        if on:
            item = self.list.currentItem()
            latest = len(history_entries(self.session, self.geometry)) - 1
            target = item.data(Qt.ItemDataRole.UserRole) if item is not None else latest
            self._compare_from = current_position(self.session)
            if target == self._compare_from and self._compare_from > 0:
                target -= 1  # comparing the state with itself says nothing: hear the step before
            self.go_to(target)
        elif self._compare_from is not None:
            back, self._compare_from = self._compare_from, None
            self.go_to(back)
