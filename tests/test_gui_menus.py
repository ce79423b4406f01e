"""Every menu action runs without a crash; the About box names the devices; no audio device is fine."""

from __future__ import annotations

import pytest
from gui_fixtures import NO_OUTPUT, open_window, write_test_sound
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from spectropaint.app.playback import transport as transport_module
from spectropaint.app.playback.engine import OutputDevice
from spectropaint.gpu.adapter import describe_adapter, shared_device
from spectropaint.transforms.torch_device import describe

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def window(qtbot, tmp_path):
    path = tmp_path / "tones.wav"
    write_test_sound(path, seconds=1.0)
    return open_window(qtbot, tmp_path, path)


@pytest.fixture
def dialogs(monkeypatch) -> list:
    """Every dialog answered at once ("cancel" for files, "discard" for questions), and recorded."""
    shown = []
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", lambda *a, **k: (shown.append("open"), ("", ""))[1]
    )
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (shown.append("save"), ("", ""))[1]
    )
    monkeypatch.setattr(
        QMessageBox, "about", lambda parent, title, text: shown.append(("about", text))
    )
    monkeypatch.setattr(
        QMessageBox, "critical", lambda parent, title, text: shown.append(("critical", text))
    )
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: QMessageBox.StandardButton.Discard)
    return shown


def test_every_menu_action_runs(window, qtbot, dialogs):
    actions = [action for menu in window.menus.values() for action in menu.actions()]
    actions = [
        a for a in actions if not a.isSeparator() and a.menu() is None and a.objectName() != "quit"
    ]
    window.recent_menu.aboutToShow.emit()
    recent = [a for a in window.recent_menu.actions() if not a.isSeparator()]
    assert {a.text() for a in recent} >= {"Demo Sound"}
    for action in actions + list(window.palette.actions_by_tool.values()):
        action.trigger()
        if action.isCheckable() and action.isEnabled():
            action.trigger()  # and back
        qtbot.waitUntil(lambda: window.job is None, timeout=20000)
    assert "open" in dialogs and "save" in dialogs
    assert not [entry for entry in dialogs if entry[0] == "critical"]
    with qtbot.waitSignal(window.document_loaded, timeout=20000):
        recent[-1].trigger()  # the demo sound
    assert window.session.path is None and window.session.document.n_channels == 2
    window.actions_by_name["quit"].trigger()
    qtbot.waitUntil(lambda: not window.isVisible())


def test_about_box_lists_versions_and_devices(window, dialogs):
    window.actions_by_name["about"].trigger()
    (kind, text) = dialogs[-1]
    assert kind == "about"
    assert describe(window.session.document.device) in text
    assert describe_adapter(shared_device().adapter) in text
    for name in ("torch", "wgpu", "PySide6", "PortAudio", "libsndfile"):
        assert name in text


def test_without_an_output_device_transport_is_off_and_says_why(window, qtbot, monkeypatch):
    reason = NO_OUTPUT.reason
    for name in ("loop", "bypass"):
        action = window.actions_by_name[name]
        assert not action.isEnabled() and reason in action.toolTip()
    for name in ("play_pause", "play_from_cursor"):  # enabled: pressing Play looks again
        action = window.actions_by_name[name]
        assert action.isEnabled() and reason in action.toolTip()
    assert reason in window.statusBar().currentMessage()
    window.statusBar().clearMessage()
    probes = []
    still_none = OutputDevice(None, "", 0, "still no audio output device (test)")
    monkeypatch.setattr(
        transport_module,
        "find_output_device",
        lambda *, refresh=False: probes.append(refresh) or still_none,
    )
    window.canvas.setFocus()
    QTest.keyClick(window.canvas, Qt.Key.Key_Space)
    assert probes == [True]
    assert still_none.reason in window.statusBar().currentMessage()
    assert still_none.reason in window.actions_by_name["loop"].toolTip()
    assert window.transport.engine.position == 0


def test_every_tool_is_in_the_tools_menu_with_its_key(window):
    in_menu = {a.objectName(): a for a in window.menus["&Tools"].actions() if not a.isSeparator()}
    assert set(in_menu) == {f"tool_{name}" for name in window.palette.actions_by_tool}
    in_menu["tool_erase"].trigger()
    assert window.canvas.tool.name == "erase" and window.brush_panel.brush == "erase"
    assert in_menu["tool_erase"].shortcut().toString() == "E"


def test_a_closed_panel_comes_back_from_the_view_menu(window, qtbot):
    shown = {a.objectName(): a for a in window.panels_menu.actions()}
    assert {
        "show_dock_brush",
        "show_dock_view",
        "show_dock_history",
        "show_tools",
        "show_transport",
    } <= set(shown)
    dock = window.docks["Brush"]
    dock.close()  # the dock's own close button
    assert not dock.isVisible() and not shown["show_dock_brush"].isChecked()
    shown["show_dock_brush"].trigger()
    assert dock.isVisible()
    shown["show_transport"].trigger()
    assert not window.transport_bar.isVisible()
    shown["show_transport"].trigger()
    assert window.transport_bar.isVisible()


def test_the_shortcut_sheet_lists_every_key_of_the_menus(window, qtbot):
    window.actions_by_name["shortcuts"].trigger()
    sheet = window.shortcut_sheet
    rows = {(group, name): keys for group, name, keys in sheet.rows}
    assert rows[("View", "Zoom In Frequency")] == "Ctrl+Shift+="
    assert rows[("Playback", "Play / Pause")] == "Space"
    assert rows[("Tools", "Erase")] == "E"
    assert ("Pointer", "Set the clone brush's source") in rows
    keyed = [a for menu in window.menus.values() for a in menu.actions() if a.shortcuts()]
    assert len([r for r in sheet.rows if r[0] != "Pointer"]) >= len(keyed)
    sheet.close()


def test_preferences_are_applied_and_kept(window, qtbot):
    window.actions_by_name["preferences"].trigger()
    dialog = window.preferences_dialog
    dialog.follow.setCurrentIndex(dialog.follow.findData("smooth"))
    dialog.grid.setChecked(True)
    dialog.height_unit.setCurrentText("semitones")
    dialog.history.setValue(64)
    dialog.accept()
    store = window.store
    assert (store.follow_mode, store.show_grid, store.height_unit, store.history_mib) == (
        "smooth", True, "semitones", 64,
    )  # fmt: skip
    assert window.actions_by_name["follow_smooth"].isChecked()
    assert window.transport_view.follow_mode == "smooth"
    assert window.canvas.overlay.grid and window.actions_by_name["show_grid"].isChecked()
    assert window.brush_panel.shown("radius_bins").unit == "semitones"
    window.open_path(None)  # the next document gets the new undo budget
    qtbot.waitUntil(lambda: window.session.path is None, timeout=20000)
    assert window.session.history.byte_budget == 64 * 2**20


def test_one_menu_entry_clears_the_selection(window, qtbot):
    """Edit > Clear Selection (Ctrl+Shift+A) and Selection > Select None (Ctrl+D) did the same
    thing under two names and two keys; one is left, and it clears any selection."""
    from spectropaint.transforms.selection import Selection
    from spectropaint.transforms.shapes import Range

    clearing = [
        action.text().replace("&", "")
        for entry in window.menuBar().actions()
        for action in entry.menu().actions()
        if any(word in action.text().replace("&", "") for word in ("Clear Selection", "None"))
    ]
    assert clearing == ["Select None"]
    window.session.set_selection(Selection.of(Range(0.2, 0.6)))
    window.canvas.setFocus()
    QTest.keyClick(window.canvas, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.session.selection.empty, timeout=3000)
