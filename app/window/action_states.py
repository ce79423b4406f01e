"""Which of the window's actions are enabled: those that need a document, playback's (with why it
is off in their tool tips), Undo and Redo."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtGui import QAction

DOCUMENT_ACTIONS = (
    "save_project",
    "save_project_as",
    "export_audio",
    "export_image",
    "zoom_in",
    "zoom_out",
    "zoom_in_freq",
    "zoom_out_freq",
    "fit",
    "analysis",
    "brush_smaller",
    "brush_bigger",
)
"""Enabled while a document is open."""
PLAYHEAD_ACTIONS = (
    "play_pause",
    "play_from_cursor",
    "play_selection",
    "stop",
    "rewind",
    "go_to_end",
)
"""Enabled without an output device: Play looks for one again; the playhead moves regardless."""
PLAYBACK_ACTIONS = (*PLAYHEAD_ACTIONS, "loop", "bypass")


def set_document_actions(actions: Mapping[str, QAction], enabled: bool, transport, history) -> None:
    """Enable the document's actions when ``enabled``; playback's as ``transport`` (a
    :class:`~spectropaint.app.playback.transport.Transport` or None) allows; Undo and Redo as
    ``history`` (or None) allows."""
    for name in DOCUMENT_ACTIONS:
        actions[name].setEnabled(enabled)
    playable = enabled and transport is not None
    available = playable and transport.available
    reason = "" if available or not enabled else f" (off: {transport.reason})"
    for name in PLAYBACK_ACTIONS:
        action = actions[name]
        action.setEnabled(playable if name in PLAYHEAD_ACTIONS else available)
        action.setToolTip(action.statusTip() + reason)
    set_undo_actions(actions, history)


def set_undo_actions(actions: Mapping[str, QAction], history) -> None:
    """Undo and Redo enabled as the session's undo ``history`` (None: no document) allows."""
    actions["undo"].setEnabled(history is not None and history.can_undo)
    actions["redo"].setEnabled(history is not None and history.can_redo)
