"""The window's docked panels (brush, view, history) and its toolbars (tools, transport), and the
View > Panels menu that shows or hides each of them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QScrollArea, QToolBar, QWidget


def add_dock(window: QMainWindow, title: str, widget: QWidget) -> QDockWidget:
    """``widget`` in a dock on the right, scrolling when taller than the window."""
    dock = QDockWidget(title, window)
    dock.setObjectName(f"dock_{title.lower()}")
    scroll = QScrollArea()
    scroll.setWidget(widget)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    dock.setWidget(scroll)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    return dock


def panels_menu(parent: QMenu, docks: list[QDockWidget], toolbars: list[QToolBar]) -> QMenu:
    """A "Panels" submenu of ``parent``: a check mark per dock and toolbar, shown or hidden."""
    menu = parent.addMenu("&Panels")
    menu.setObjectName("panels_menu")
    for part in (*docks, *toolbars):
        action = part.toggleViewAction()
        action.setObjectName(f"show_{part.objectName()}")
        menu.addAction(action)
    return menu
