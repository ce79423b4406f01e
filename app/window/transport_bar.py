"""The transport bar: play, pause, stop, play selection, rewind and end, loop, bypass (A/B), the
playhead as a clock and in samples, and level meters per channel.

The buttons are the menu's own actions (one QAction each: the shortcut, the enabled state and the
check mark are shared); the bar only lays them out and shows the counter and meters.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QFontDatabase
from PySide6.QtWidgets import QLabel, QStyle, QToolBar, QWidget

from spectropaint.app.playback.levels import clock_text, samples_text
from spectropaint.app.window.level_meter import LevelMeter

BUTTONS = (
    ("rewind", QStyle.StandardPixmap.SP_MediaSkipBackward),
    ("play_pause", QStyle.StandardPixmap.SP_MediaPlay),
    ("stop", QStyle.StandardPixmap.SP_MediaStop),
    ("play_selection", QStyle.StandardPixmap.SP_MediaSeekForward),
    ("go_to_end", QStyle.StandardPixmap.SP_MediaSkipForward),
    ("loop", QStyle.StandardPixmap.SP_BrowserReload),
    ("bypass", None),
)
"""Actions on the bar, in order, with their icons (None: the action's short text)."""
SHORT_TEXT = {"bypass": "A/B"}


class TransportBar(QToolBar):
    """Parameters: ``actions`` maps action names (:data:`BUTTONS`) to the window's QActions."""

    def __init__(self, actions: dict[str, QAction], parent: QWidget | None = None):
        super().__init__("Transport", parent)
        self.setObjectName("transport")
        self._actions = actions
        style = self.style()
        for name, icon in BUTTONS:
            action = actions[name]
            if icon is not None:
                action.setIcon(style.standardIcon(icon))
            else:
                action.setIconText(SHORT_TEXT[name])
            self.addAction(action)
            if name in ("go_to_end",):
                self.addSeparator()
        self.addSeparator()
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.clock = QLabel()
        self.clock.setObjectName("time_counter")
        self.clock.setFont(fixed)
        self.clock.setToolTip("Playhead: hours:minutes:seconds.milliseconds, and samples")
        self.clock.setMinimumWidth(self.clock.fontMetrics().horizontalAdvance("0:00:00.000 ") * 2)
        self.addWidget(self.clock)
        self.addSeparator()
        self.meter = LevelMeter()
        self.meter.setObjectName("level_meter")
        self.addWidget(self.meter)
        self.show_time(None)

    def show_time(self, seconds: float | None, sample_rate: int = 0) -> None:
        """Show the playhead at ``seconds`` (None: no document)."""
        if seconds is None:
            self.clock.setText("-:--:--.---")
            return
        samples = round(seconds * sample_rate)
        self.clock.setText(f"{clock_text(seconds)}  {samples_text(samples)}")

    def show_playing(self, playing: bool) -> None:
        """The play button shows Pause while playing."""
        pixmap = (
            QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        )
        self._actions["play_pause"].setIcon(self.style().standardIcon(pixmap))
