"""The window's preferences: read at start (view, tool, brushes, playhead following, grid), taken
again after the Preferences dialog, written at close; the File menu's Autosave Every and Open
Recent submenus."""

from __future__ import annotations

import dataclasses
import os

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from spectropaint.app.settings_store import AUTOSAVE_CHOICES
from spectropaint.app.window.brush_choices import DEFAULT_TOOL
from spectropaint.gpu.view import STORED_FIELDS, ViewSettings
from spectropaint.transforms.errors import SettingsError

DEFAULT_VIEW = ViewSettings(freq_scale="log")


def load_preferences(window) -> None:
    """Brushes, view, tool, playhead following and grid as ``window.store`` holds them."""
    store = window.store
    window.brushes.load(store)
    stored_view = {k: v for k, v in store.view().items() if k in STORED_FIELDS}
    try:
        window.initial_view = dataclasses.replace(DEFAULT_VIEW, **stored_view)
    except (SettingsError, TypeError):
        window.initial_view = DEFAULT_VIEW
    window.view_panel.set_values(window.initial_view, 1)
    window.editor.show_view_look(window.initial_view)
    tool = store.tool
    window.palette.select(tool if tool in window.palette.actions_by_tool else DEFAULT_TOOL)
    window.actions_by_name[f"follow_{store.follow_mode}"].setChecked(True)
    window.actions_by_name["show_grid"].setChecked(store.show_grid)


def save_preferences(window) -> None:
    store = window.store
    view = window.shown_view
    store.set_view({field: getattr(view, field) for field in STORED_FIELDS})
    window.brushes.save(store)
    store.tool = window.current_tool()
    store.height_unit = window.brush_panel.height_unit.currentText()
    store.save_window(window)
    store.sync()


def apply_preferences(window) -> None:
    """Take the stored preferences (after the Preferences dialog): autosave, playhead following,
    grid, brush height unit. The undo memory applies to documents opened later."""
    store = window.store
    if window.autosave is not None:
        window.autosave.set_interval(store.autosave_interval_s)
        window.autosave.every = store.autosave_strokes
        for action in window.autosave_group.actions():
            action.setChecked(AUTOSAVE_CHOICES[action.text()] == store.autosave_interval_s)
    window.actions_by_name[f"follow_{store.follow_mode}"].setChecked(True)
    window.actions_by_name["show_grid"].setChecked(store.show_grid)
    window.brush_panel.height_unit.setCurrentText(store.height_unit)


def build_autosave_menu(window) -> None:
    """File > Autosave Every: the choices of :data:`AUTOSAVE_CHOICES`, before Export."""
    menu = QMenu("&Autosave Every", window)
    entries = window.menus["&File"].actions()
    separator = entries[entries.index(window.actions_by_name["export_audio"]) - 1]
    window.menus["&File"].insertMenu(separator, menu)
    group = QActionGroup(menu)
    window.autosave_group = group
    for text, seconds in AUTOSAVE_CHOICES.items():
        action = menu.addAction(text)
        action.setCheckable(True)
        action.setChecked(seconds == window.store.autosave_interval_s)
        action.triggered.connect(lambda checked=False, s=seconds: _set_autosave(window, s))
        group.addAction(action)
    window.autosave_menu = menu


def _set_autosave(window, seconds: float) -> None:
    window.store.autosave_interval_s = seconds
    window.autosave.set_interval(seconds)


def build_recent_menu(window) -> QMenu:
    """File > Open Recent, before Save Project, filled each time it opens."""
    menu = QMenu("Open &Recent", window)
    window.menus["&File"].insertMenu(window.actions_by_name["save_project"], menu)
    menu.aboutToShow.connect(lambda: _fill_recent_menu(window, menu))
    return menu


def _fill_recent_menu(window, menu: QMenu) -> None:
    menu.clear()
    for path in window.store.recent_files():
        action = QAction(os.path.basename(path), menu)
        action.setToolTip(path)
        action.triggered.connect(lambda checked=False, path=path: window.open_path(path))
        menu.addAction(action)
    menu.addSeparator()
    demo = menu.addAction("Demo Sound")
    demo.triggered.connect(lambda: window.open_path(None))
