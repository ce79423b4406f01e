"""The tools palette: one checkable button per brush of the registry, plus select, pan and zoom."""

from __future__ import annotations

from importlib import resources

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QIcon, QKeySequence, QPixmap
from PySide6.QtWidgets import QToolBar, QWidget

from spectropaint.app.tools.registry import TOOL_NAMES, VIEW_TOOLS

TOOL_INFO: dict[str, tuple[str, str, str]] = {
    # name: (label, shortcut, what it does)
    "gain": ("Gain", "G", "Raise or lower the level under the brush (dB in the brush panel)"),
    "erase": ("Erase", "E", "Remove the sound under the brush"),
    "blur": ("Blur", "U", "Smooth the magnitudes under the brush"),
    "filter": ("Filter", "F", "Low-, high- or band-pass the texture under the brush"),
    "warp": ("Warp", "W", "Drag the sound along with the brush"),
    "clone": ("Clone", "C", "Copy sound from a source (Ctrl+click sets it) to the brush"),
    "pen": ("Pen", "P", "Paint tones at a set level"),
    "select": (
        "Select",
        "S",
        "Drag to select a time range (to loop); click to set the edit cursor",
    ),
    "pan": ("Pan", "H", "Drag to move the view (also middle drag or Space + drag)"),
    "zoom": ("Zoom", "Z", "Click to zoom in, Shift+click or right-click to zoom out"),
    "select_rect": (
        "Rectangle",
        "M",
        "Drag a rectangle of time and frequency (Shift adds, Alt subtracts)",
    ),
    "select_band": ("Band", "N", "Drag up or down: a frequency band over all time"),
    "lasso": ("Lasso", "O", "Draw around what to select"),
    "select_brush": ("Selection Brush", "Q", "Paint a soft selection"),
    "wand": ("Magic Wand", "Y", "Click: the region that stands out from its surroundings"),
    "harmonic": (
        "Harmonics",
        "K",
        "Click a fundamental: it and its overtones, following the pitch",
    ),
}


def tool_icon(name: str) -> QIcon:
    """The tool's SVG from ``resources/icons`` (a generic brush for brushes without their own)."""
    icons = resources.files("spectropaint.resources").joinpath("icons")
    path = icons.joinpath(f"{name}.svg")
    data = (path if path.is_file() else icons.joinpath("brush.svg")).read_bytes()
    pixmap = QPixmap()
    pixmap.loadFromData(data, "SVG")
    return QIcon(pixmap)


class ToolPalette(QToolBar):
    """A toolbar of mutually exclusive tools; emits ``tool_chosen(name)``."""

    tool_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Tools", parent)
        self.setObjectName("tools")
        self.setOrientation(Qt.Orientation.Vertical)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        self.actions_by_tool: dict[str, QAction] = {}
        for name in TOOL_NAMES:
            if name == next(iter(VIEW_TOOLS)):
                self.addSeparator()
            label, key, tip = TOOL_INFO.get(
                name, (name.title(), "", f"Paint with the {name} brush")
            )
            action = QAction(tool_icon(name), label, self)
            action.setObjectName(f"tool_{name}")
            action.setCheckable(True)
            action.setToolTip(
                f"<b>{label}</b> ({key})<br>{tip}" if key else f"<b>{label}</b><br>{tip}"
            )
            action.setStatusTip(tip)
            if key:
                action.setShortcut(QKeySequence(key))
            action.triggered.connect(lambda checked=False, name=name: self.tool_chosen.emit(name))
            self.group.addAction(action)
            self.addAction(action)
            self.actions_by_tool[name] = action

    def select(self, name: str) -> None:
        """Check ``name``'s button and announce it (as a click would)."""
        self.actions_by_tool[name].setChecked(True)
        self.tool_chosen.emit(name)
