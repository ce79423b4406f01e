"""The brush tool: a drag is a stroke of one brush on the session's document."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from spectropaint.app.session import BrushFailed, Session
from spectropaint.app.tools.base import LEFT, Pointer, Tool, ToolHost
from spectropaint.app.tools.footprint import Footprint
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import hz_label, seconds_label

log = logging.getLogger(__name__)


class BrushTool(Tool):
    """Paints with ``brush``: press begins a stroke, each move adds an event, release ends it.

    :attr:`settings` and :attr:`params` are what the next stroke uses (the brush panel sets them).
    A stroke edits the channel its settings name, or with :attr:`per_lane` the channel of the lane
    it starts in, or else every channel (linked).
    For the clone brush, Ctrl+click sets the source; the next stroke copies from there, lined up
    with where it starts.
    """

    def __init__(self, host: ToolHost, session: Session, brush: str, painter=None):
        super().__init__(host)
        self.session = session
        self.painter = painter or session
        """What strokes go through: the session itself, or a
        :class:`~spectropaint.app.paint_queue.PaintQueue` that paints on a thread of its own."""
        self.name = brush
        self.settings = BrushSettings()
        self.params: dict[str, Any] = {}
        self.per_lane = False
        """Settings with no channel edit the channel under the pointer, not all of them."""
        self.clone_source: tuple[float, float] | None = None
        """``(frame, bin)`` set by Ctrl+click with the clone brush."""
        self._last: Pointer | None = None
        self._offset: tuple[int, int] | None = None
        """The clone offset of the stroke in progress (source minus destination, cells)."""

    def press(self, pointer: Pointer) -> bool:
        if pointer.button != LEFT:
            return False
        point = pointer.point
        if self.name == "clone" and "Control" in pointer.modifiers:
            self.clone_source = (point.frame, point.bin)
            self.host.set_clone_source(self.clone_source)
            self.host.show_message(
                f"Clone source set at {seconds_label(point.seconds)}, {hz_label(point.hz)}"
            )
            return False
        params = dict(self.params)
        if self.name == "clone" and self.clone_source is not None:
            params.update(
                offset_frames=round(self.clone_source[0] - point.frame),
                offset_bins=round(self.clone_source[1] - point.bin),
            )
        try:
            if self.name == "clone":
                used = brush_kind(self.name).params(params)
                self._offset = (used.offset_frames, used.offset_bins)
            settings = self.settings
            if self.per_lane and settings.channel is None and pointer.channel is not None:
                settings = dataclasses.replace(settings, channel=pointer.channel)
            self.painter.begin_stroke(self.name, settings, params, self._event(pointer))
        except (SettingsError, BrushFailed) as exc:
            self._offset = None
            self.host.show_message(str(exc))
            return False
        return True

    def drag(self, pointer: Pointer) -> None:
        """Queue the move's dabs, then move the outline: the painting thread starts on them while
        this thread draws the outline."""
        if self.painter.painting:
            try:
                self.painter.paint(self._event(pointer))
            except BrushFailed as exc:
                log.exception("the %s brush failed", self.name)
                self.host.show_message(str(exc))
        self.hover(pointer)

    def release(self, pointer: Pointer) -> None:
        if self.painter.painting:
            self.painter.end_stroke()
        self._offset = None
        self.show_outline()

    def cancel(self) -> bool:
        self._offset = None
        if not self.painter.painting:
            return False
        self.painter.cancel_stroke()
        self.host.show_message("Stroke cancelled")
        self.show_outline()
        return True

    def hover(self, pointer: Pointer) -> None:
        self._last = pointer
        self.show_outline()

    def show_outline(self) -> None:
        """Outline the footprint at the last pointer position with the current settings, and mark
        the clone source (where it is now while a stroke copies from it)."""
        if self.name == "clone":
            self.host.set_clone_source(self._source_now())
        if self._last is None:
            return
        point, channel = self._last.point, self.settings.channel
        if channel is None and self.per_lane:
            channel = self._last.channel
        self.host.set_outline(
            Footprint(
                point.frame,
                point.bin,
                self.settings.radius_frames,
                self.settings.radius_bins,
                channel,
            )
        )

    def _source_now(self) -> tuple[float, float] | None:
        if self._offset is not None and self._last is not None:
            point = self._last.point
            return (point.frame + self._offset[0], point.bin + self._offset[1])
        return self.clone_source

    def leave(self) -> None:
        self._last = None
        self.host.set_outline(None)

    def deactivate(self) -> None:
        self.leave()
        self.host.set_clone_source(None)

    @staticmethod
    def _event(pointer: Pointer) -> InputEvent:
        return InputEvent(pointer.time, pointer.point.frame, pointer.point.bin, pointer.pressure)
