"""Tools that change what is seen, not the document: pan, zoom and the time selection."""

from __future__ import annotations

import dataclasses

from spectropaint.app.tools.base import LEFT, RIGHT, Pointer, Tool, ToolHost
from spectropaint.gpu.view_mapping import ViewMapping

CLICK_PIXELS = 3
"""A press and release closer than this are a click, not a drag."""


class PanTool(Tool):
    """Drag to move the view (also the middle button, or Space held, with any tool)."""

    name = "pan"
    cursor = "open_hand"

    def __init__(self, host: ToolHost):
        super().__init__(host)
        self._start: tuple[float, float, ViewMapping] | None = None

    def press(self, pointer: Pointer) -> bool:
        self._start = (pointer.x, pointer.y, self.host.mapping())
        return True

    def drag(self, pointer: Pointer) -> None:
        x0, y0, start = self._start
        current = self.host.mapping().view
        panned = start.panned(pointer.x - x0, pointer.y - y0)
        self.host.set_view(dataclasses.replace(panned, overlays=current.overlays))

    def release(self, pointer: Pointer) -> None:
        self._start = None

    def cancel(self) -> bool:
        if self._start is None:
            return False
        self.host.set_view(
            dataclasses.replace(self._start[2].view, overlays=self.host.mapping().view.overlays)
        )
        self._start = None
        return True


class ZoomTool(Tool):
    """Click to zoom in about the point (both axes); right-click or Shift+click to zoom out."""

    name = "zoom"
    cursor = "pointing"
    FACTOR = 2.0

    def press(self, pointer: Pointer) -> bool:
        if pointer.button not in (LEFT, RIGHT):
            return False
        out = pointer.button == RIGHT or "Shift" in pointer.modifiers
        factor = 1 / self.FACTOR if out else self.FACTOR
        mapping = self.host.mapping()
        self.host.set_view(
            mapping.zoomed(pointer.x, pointer.y, time_factor=factor, freq_factor=factor)
        )
        return False


class SelectTool(Tool):
    """Drag to select a time range; a click clears it and sets the edit cursor there."""

    name = "select"

    def __init__(self, host: ToolHost):
        super().__init__(host)
        self._start: tuple[float, float] | None = None

    def press(self, pointer: Pointer) -> bool:
        if pointer.button != LEFT:
            return False
        self._start = (pointer.x, pointer.point.seconds)
        return True

    def drag(self, pointer: Pointer) -> None:
        self.host.set_selection((self._start[1], pointer.point.seconds))

    def release(self, pointer: Pointer) -> None:
        x0, _ = self._start
        self._start = None
        if abs(pointer.x - x0) < CLICK_PIXELS:
            self.host.set_selection(None)
            self.host.time_clicked(pointer.point.seconds)

    def cancel(self) -> bool:
        if self._start is None:
            return False
        self._start = None
        self.host.set_selection(None)
        return True
