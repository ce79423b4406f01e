"""The brush tool: a drag is a stroke of one brush on the session's document."""

from __future__ import annotations

import logging
from typing import Any

from spectropaint.app.session import BrushFailed, Session
from spectropaint.app.tools.base import LEFT, Pointer, Tool, ToolHost
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.gpu.view import BrushOutline
from spectropaint.transforms.errors import SettingsError

log = logging.getLogger(__name__)


class BrushTool(Tool):
    """Paints with ``brush``: press begins a stroke, each move adds an event, release ends it.

    :attr:`settings` and :attr:`params` are what the next stroke uses (the brush panel sets them).
    For the clone brush, Ctrl+click sets the source; the next stroke copies from there, lined up
    with where it starts.
    """

    def __init__(self, host: ToolHost, session: Session, brush: str):
        super().__init__(host)
        self.session = session
        self.name = brush
        self.settings = BrushSettings()
        self.params: dict[str, Any] = {}
        self.clone_source: tuple[float, float] | None = None
        """``(frame, bin)`` set by Ctrl+click with the clone brush."""
        self._last: Pointer | None = None

    def press(self, pointer: Pointer) -> bool:
        if pointer.button != LEFT:
            return False
        point = pointer.point
        if self.name == "clone" and "Control" in pointer.modifiers:
            self.clone_source = (point.frame, point.bin)
            self.host.show_message(f"Clone source set at {point.seconds:.3f} s, {point.hz:.0f} Hz")
            return False
        params = dict(self.params)
        if self.name == "clone" and self.clone_source is not None:
            params.update(
                offset_frames=round(self.clone_source[0] - point.frame),
                offset_bins=round(self.clone_source[1] - point.bin),
            )
        try:
            self.session.begin_stroke(self.name, self.settings, params, self._event(pointer))
        except (SettingsError, BrushFailed) as exc:
            self.host.show_message(str(exc))
            return False
        return True

    def drag(self, pointer: Pointer) -> None:
        self.hover(pointer)
        if not self.session.painting:
            return
        try:
            self.session.paint(self._event(pointer))
        except BrushFailed as exc:
            log.exception("the %s brush failed", self.name)
            self.host.show_message(str(exc))

    def release(self, pointer: Pointer) -> None:
        if self.session.painting:
            self.session.end_stroke()

    def cancel(self) -> bool:
        if not self.session.painting:
            return False
        self.session.cancel_stroke()
        self.host.show_message("Stroke cancelled")
        return True

    def hover(self, pointer: Pointer) -> None:
        self._last = pointer
        self.show_outline()

    def show_outline(self) -> None:
        """Draw the outline at the last pointer position, with the current settings."""
        if self._last is None:
            return
        geometry, point = self.host.mapping().geometry, self._last.point
        self.host.set_outline(
            BrushOutline(
                point.seconds,
                point.hz,
                self.settings.radius_frames * geometry.step_seconds,
                self.settings.radius_bins * geometry.step_hz,
            )
        )

    def leave(self) -> None:
        self._last = None
        self.host.set_outline(None)

    @staticmethod
    def _event(pointer: Pointer) -> InputEvent:
        return InputEvent(pointer.time, pointer.point.frame, pointer.point.bin, pointer.pressure)
