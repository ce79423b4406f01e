"""Help > Keyboard Shortcuts: every menu action with its keys, and the pointer gestures, in one
sheet made from the menus themselves (so it cannot fall out of date)."""

from __future__ import annotations

import html

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMenu, QTextBrowser, QVBoxLayout, QWidget

GESTURES = (
    ("Left drag", "Paint with the brush (or select, pan, zoom with those tools)"),
    ("Ctrl+click", "Set the clone brush's source"),
    ("Middle drag, or Space + drag", "Pan the view"),
    ("Ctrl+wheel, Ctrl+Shift+wheel", "Zoom time, zoom frequency, about the pointer"),
    ("Wheel, Shift+wheel", "Scroll time, scroll frequency"),
    (
        "Escape",
        "Cancel the stroke or drag in progress, else the job under way (open, save, export, heal)",
    ),
    ("Click on the time ruler", "Set the edit cursor"),
    ("Drag on the time ruler", "Scrub: hear the sound under the pointer"),
    ("Drag on the overview", "Move the visible range; drag its edges to resize it"),
)


def _keys(action: QAction) -> str:
    shortcuts = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts()]
    text = action.text()
    if "\t" in text:  # a key the window handles itself (Space), shown in the menu
        shortcuts.insert(0, text.split("\t", 1)[1])
    return ", ".join(shortcuts)


def shortcut_rows(menus: dict[str, QMenu]) -> list[tuple[str, str, str]]:
    """``(menu, action, keys)`` for every action with keys, menu by menu, then the gestures."""
    rows = []
    for title, menu in menus.items():
        for action in menu.actions():
            if action.isSeparator() or action.menu() is not None:
                continue
            keys = _keys(action)
            if keys:
                name = action.text().split("\t", 1)[0].replace("&", "")
                rows.append((title.replace("&", ""), name, keys))
    rows.extend(("Pointer", what, keys) for keys, what in GESTURES)
    return rows


def sheet_html(rows: list[tuple[str, str, str]]) -> str:
    parts, current = [], None
    for group, name, keys in rows:
        if group != current:
            if current is not None:
                parts.append("</table>")
            parts.append(f"<h3>{html.escape(group)}</h3><table cellspacing='4'>")
            current = group
        parts.append(
            f"<tr><td width='220'><b>{html.escape(keys)}</b></td><td>{html.escape(name)}</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)


class ShortcutSheet(QDialog):
    def __init__(self, menus: dict[str, QMenu], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        self.resize(560, 640)
        self.rows = shortcut_rows(menus)
        browser = QTextBrowser()
        browser.setObjectName("shortcut_sheet")
        browser.setHtml(sheet_html(self.rows))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(browser)
        layout.addWidget(buttons)
