"""Preferences that outlive a session, kept with QSettings: folders, recent files, view and brush
settings, the chosen tool, autosave and the window's layout.

Structured values are stored as JSON text, so every platform's QSettings back end (INI, registry,
plist) gives them back with the same types. A value that no longer validates (edited by hand, written
by another version) is dropped and the default used: preferences never stop the app from starting.
"""

from __future__ import annotations

import json
import os
from typing import Any

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow

ORGANIZATION = "SpectroPaint"
APPLICATION = "SpectroPaint"
MAX_RECENT = 10
DEFAULT_AUTOSAVE_INTERVAL_S = 60.0
DEFAULT_AUTOSAVE_STROKES = 20
AUTOSAVE_CHOICES = {
    "30 Seconds": 30,
    "1 Minute": 60,
    "2 Minutes": 120,
    "5 Minutes": 300,
    "Only After Strokes": 0,
}
"""Seconds between timed autosaves (0: none, only after strokes), by the name shown."""
FOLLOW_MODES = ("off", "page", "smooth")
HEIGHT_UNITS = ("Hz", "semitones")
DEFAULT_HISTORY_MIB = 512


class SettingsStore:
    """Typed access to the app's QSettings.

    Parameters
    ----------
    qsettings : QSettings, optional
        Where to keep values; by default the user's SpectroPaint settings. Tests pass an INI file.
    """

    def __init__(self, qsettings: QSettings | None = None):
        self.qsettings = qsettings or QSettings(ORGANIZATION, APPLICATION)

    # ------------------------------------------------------------------------------ JSON values
    def _get_json(self, key: str, default: Any, kind: type | tuple[type, ...] | None = None) -> Any:
        """The value at ``key`` if it is of ``kind`` (the default's type by default), else default."""
        text = self.qsettings.value(key, None)
        if not isinstance(text, str):
            return default
        try:
            value = json.loads(text)
        except ValueError:
            return default
        return value if isinstance(value, kind or type(default)) else default

    def _set_json(self, key: str, value: Any) -> None:
        self.qsettings.setValue(key, json.dumps(value))

    # ---------------------------------------------------------------------------------- folders
    @property
    def last_folder(self) -> str:
        """The folder of the last file opened or written (the home folder at first)."""
        folder = self._get_json("files/last_folder", "")
        return folder if folder and os.path.isdir(folder) else os.path.expanduser("~")

    @last_folder.setter
    def last_folder(self, folder: str) -> None:
        self._set_json("files/last_folder", os.fspath(folder))

    def recent_files(self) -> list[str]:
        """Recently opened files, newest first, without those that no longer exist."""
        files = self._get_json("files/recent", [])
        return [path for path in files if isinstance(path, str) and os.path.isfile(path)]

    def add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        files = [path] + [other for other in self.recent_files() if other != path]
        self._set_json("files/recent", files[:MAX_RECENT])
        self.last_folder = os.path.dirname(path)

    # ------------------------------------------------------------------------ view and brushes
    def view(self) -> dict[str, Any]:
        """The stored view fields (colormap, floor, range, gamma, scale, channel), possibly empty."""
        return self._get_json("view/settings", {})

    def set_view(self, values: dict[str, Any]) -> None:
        self._set_json("view/settings", values)

    def brush(self, name: str) -> dict[str, Any]:
        """``{"common": {...}, "params": {...}}`` stored for brush ``name``, possibly empty."""
        return self._get_json(f"brushes/{name}", {})

    def set_brush(self, name: str, values: dict[str, Any]) -> None:
        self._set_json(f"brushes/{name}", values)

    @property
    def tool(self) -> str:
        return self._get_json("tools/current", "")

    @tool.setter
    def tool(self, name: str) -> None:
        self._set_json("tools/current", name)

    # --------------------------------------------------------------------------------- autosave
    def _get_amount(self, key: str, default: float) -> float:
        """A number 0 or more stored at ``key`` (an int where a float is expected is fine)."""
        value = self._get_json(key, default, (int, float))
        if isinstance(value, bool) or not 0 <= value < float("inf"):
            return default
        return float(value)

    @property
    def autosave_interval_s(self) -> float:
        """Seconds between timed autosaves of a changed document (0: only after strokes)."""
        return self._get_amount("autosave/interval_s", DEFAULT_AUTOSAVE_INTERVAL_S)

    @autosave_interval_s.setter
    def autosave_interval_s(self, seconds: float) -> None:
        self._set_json("autosave/interval_s", float(seconds))

    @property
    def autosave_strokes(self) -> int:
        """Edits (strokes, undos, redos) after which an autosave runs at once (0: only timed)."""
        return int(self._get_amount("autosave/strokes", float(DEFAULT_AUTOSAVE_STROKES)))

    @autosave_strokes.setter
    def autosave_strokes(self, count: int) -> None:
        self._set_json("autosave/strokes", int(count))

    # ------------------------------------------------------------------------------ preferences
    def _get_choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self._get_json(key, default)
        return value if value in choices else default

    @property
    def follow_mode(self) -> str:
        """How the view follows the playhead: ``'off'``, ``'page'`` (default) or ``'smooth'``."""
        return self._get_choice("playback/follow", FOLLOW_MODES, "page")

    @follow_mode.setter
    def follow_mode(self, mode: str) -> None:
        self._set_json("playback/follow", mode)

    @property
    def show_grid(self) -> bool:
        return self._get_json("view/grid", False)

    @show_grid.setter
    def show_grid(self, shown: bool) -> None:
        self._set_json("view/grid", bool(shown))

    @property
    def stacked(self) -> bool:
        """Every channel in a lane of its own (L above R) rather than one channel shown."""
        return self._get_json("view/stacked", False)

    @stacked.setter
    def stacked(self, stacked: bool) -> None:
        self._set_json("view/stacked", bool(stacked))

    @property
    def height_unit(self) -> str:
        """The brush height's unit: ``'Hz'`` or ``'semitones'``."""
        return self._get_choice("brushes/height_unit", HEIGHT_UNITS, "Hz")

    @height_unit.setter
    def height_unit(self, unit: str) -> None:
        self._set_json("brushes/height_unit", unit)

    @property
    def history_mib(self) -> int:
        """Memory the undo history of a document may keep, MiB (from the next document opened)."""
        value = self._get_amount("history/budget_mib", float(DEFAULT_HISTORY_MIB))
        return max(16, int(value))

    @history_mib.setter
    def history_mib(self, mib: int) -> None:
        self._set_json("history/budget_mib", int(mib))

    # ----------------------------------------------------------------------------------- layout
    def save_window(self, window: QMainWindow) -> None:
        self.qsettings.setValue("window/geometry", window.saveGeometry())
        self.qsettings.setValue("window/state", window.saveState())

    def restore_window(self, window: QMainWindow) -> bool:
        """Restore geometry and dock layout; False when none was stored."""
        geometry = self.qsettings.value("window/geometry")
        state = self.qsettings.value("window/state")
        if not isinstance(geometry, QByteArray):
            return False
        window.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            window.restoreState(state)
        return True

    def sync(self) -> None:
        self.qsettings.sync()
