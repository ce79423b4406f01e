"""The menus and their shortcuts, as one table.

Each row names an action; :func:`build_menus` makes a QAction for it in its menu and connects it to
the handler's ``on_<name>`` method (``on_<name>(checked)`` for checkable actions). Space is listed
for Play/Pause but handled by the main window's key filter, because Space held down while dragging
pans the canvas instead (see ``MainWindow.eventFilter``).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

MENUS = ("&File", "&Edit", "&View", "&Playback", "&Tools", "&Brush", "&Help")
"""The menu bar. The Tools menu holds the tool palette's actions (added by the window), View holds
the panels' show/hide actions too."""


@dataclass(frozen=True)
class ActionSpec:
    name: str
    menu: str
    text: str
    shortcuts: tuple[str, ...] = ()
    tip: str = ""
    checkable: bool = False
    shown_shortcut: str = ""
    """A key shown in the menu but handled elsewhere (Space)."""
    separator_before: bool = False
    group: str = ""
    """Checkable actions of one group exclude each other (a choice of modes)."""


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("open", "&File", "&Open...", ("Ctrl+O",), "Open a sound or a project (.spp)"),
    ActionSpec(
        "save_project",
        "&File",
        "&Save Project",
        ("Ctrl+S",),
        "Save the sound, its edits, view and strokes as a project (.spp)",
    ),
    ActionSpec(
        "save_project_as",
        "&File",
        "Save Project &As...",
        ("Ctrl+Shift+S",),
        "Save the project under another name",
    ),
    ActionSpec(
        "export_audio",
        "&File",
        "&Export Audio...",
        ("Ctrl+E",),
        "Write the edited sound to a file",
        separator_before=True,
    ),
    ActionSpec(
        "export_image",
        "&File",
        "Export &Image...",
        ("Ctrl+Shift+E",),
        "Write the spectrogram as a PNG image",
    ),
    ActionSpec("quit", "&File", "&Quit", ("Ctrl+Q",), "Close SpectroPaint", separator_before=True),
    ActionSpec("undo", "&Edit", "&Undo", ("Ctrl+Z",), "Undo the last stroke"),
    ActionSpec("redo", "&Edit", "&Redo", ("Ctrl+Shift+Z", "Ctrl+Y"), "Redo the stroke undone last"),
    ActionSpec(
        "preferences",
        "&Edit",
        "Pre&ferences...",
        ("Ctrl+,",),
        "Autosave, playhead following, grid, brush units, undo memory",
        separator_before=True,
    ),
    ActionSpec("zoom_in", "&View", "Zoom &In", ("Ctrl+=",), "Zoom in along time"),
    ActionSpec("zoom_out", "&View", "Zoom &Out", ("Ctrl+-",), "Zoom out along time"),
    ActionSpec(
        "zoom_in_freq",
        "&View",
        "Zoom In &Frequency",
        ("Ctrl+Shift+=",),
        "Zoom in along frequency",
    ),
    ActionSpec(
        "zoom_out_freq",
        "&View",
        "Zoom Out F&requency",
        ("Ctrl+Shift+-",),
        "Zoom out along frequency",
    ),
    ActionSpec("fit", "&View", "&Fit to Window", ("Ctrl+0",), "Show the whole sound"),
    ActionSpec(
        "show_grid",
        "&View",
        "Show &Grid",
        ("Ctrl+G",),
        "Lines at the rulers' labelled ticks over the spectrogram",
        checkable=True,
        separator_before=True,
    ),
    ActionSpec(
        "follow_off",
        "&View",
        "Playhead: &Stay",
        (),
        "The view stays where it is while playing",
        checkable=True,
        separator_before=True,
        group="follow",
    ),
    ActionSpec(
        "follow_page",
        "&View",
        "Playhead: Turn &Pages",
        (),
        "The view jumps a page ahead when the playhead reaches its edge",
        checkable=True,
        group="follow",
    ),
    ActionSpec(
        "follow_smooth",
        "&View",
        "Playhead: Scroll Smoot&hly",
        (),
        "The view scrolls with the playhead held in the middle",
        checkable=True,
        group="follow",
    ),
    ActionSpec(
        "analysis",
        "&View",
        "&Analysis...",
        (),
        "Edit in the STFT or the NSGT (constant-Q, mel, Bark), keeping the edits",
        separator_before=True,
    ),
    ActionSpec(
        "play_pause",
        "&Playback",
        "&Play / Pause",
        (),
        "Start or stop playback",
        shown_shortcut="Space",
    ),
    ActionSpec(
        "play_from_cursor",
        "&Playback",
        "Play from &Cursor",
        ("Shift+Space",),
        "Play from the edit cursor (click with the select tool or on the time ruler)",
    ),
    ActionSpec(
        "play_selection",
        "&Playback",
        "Play &Selection",
        ("Ctrl+Space",),
        "Play the time selection once (the whole sound without one)",
    ),
    ActionSpec(
        "stop",
        "&Playback",
        "S&top",
        ("Ctrl+.",),
        "Stop and put the playhead back where playing started",
    ),
    ActionSpec("rewind", "&Playback", "&Rewind", ("Home",), "Move the playhead to the start"),
    ActionSpec("go_to_end", "&Playback", "Go to &End", ("End",), "Move the playhead to the end"),
    ActionSpec(
        "loop",
        "&Playback",
        "&Loop Selection",
        ("L",),
        "Repeat the time selection (the whole sound without one)",
        checkable=True,
        separator_before=True,
    ),
    ActionSpec(
        "bypass",
        "&Playback",
        "&Bypass (A/B)",
        ("B",),
        "Play the original sound instead of the edited one",
        checkable=True,
    ),
    ActionSpec("brush_smaller", "&Brush", "&Smaller", ("[",), "Make the brush smaller"),
    ActionSpec("brush_bigger", "&Brush", "&Bigger", ("]",), "Make the brush bigger"),
    ActionSpec(
        "shortcuts", "&Help", "&Keyboard Shortcuts", ("F1",), "Every key and pointer gesture"
    ),
    ActionSpec(
        "about", "&Help", "&About SpectroPaint", (), "Versions, torch device and GPU adapter"
    ),
)


def build_menus(
    window: QMainWindow, handler: object
) -> tuple[dict[str, QAction], dict[str, QMenu]]:
    """Menus on ``window``'s menu bar with every action of :data:`ACTIONS`, wired to ``handler``."""
    menus = {title: window.menuBar().addMenu(title) for title in MENUS}
    actions: dict[str, QAction] = {}
    groups: dict[str, QActionGroup] = {}
    for spec in ACTIONS:
        menu = menus[spec.menu]
        if spec.separator_before:
            menu.addSeparator()
        text = f"{spec.text}\t{spec.shown_shortcut}" if spec.shown_shortcut else spec.text
        action = QAction(text, window)
        action.setObjectName(spec.name)
        action.setShortcuts([QKeySequence(key) for key in spec.shortcuts])
        action.setToolTip(spec.tip)
        action.setStatusTip(spec.tip)
        action.setCheckable(spec.checkable)
        if spec.group:
            groups.setdefault(spec.group, QActionGroup(window)).addAction(action)
        slot = getattr(handler, f"on_{spec.name}")
        if spec.checkable:
            action.toggled.connect(slot)
        else:
            action.triggered.connect(lambda checked=False, slot=slot: slot())
        menu.addAction(action)
        actions[spec.name] = action
    return actions, menus
