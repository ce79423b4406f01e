"""What every pointer tool shares: the pointer it is given, the host it acts through, its base class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from spectropaint.app.tools.footprint import Footprint
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import Point, ViewMapping

LEFT, RIGHT, MIDDLE = 1, 2, 3
"""Button numbers, as rendercanvas gives them."""


@dataclass(frozen=True)
class Pointer:
    """One pointer event: canvas pixels, the document point under them, and what was held.

    ``modifiers`` holds key names as rendercanvas gives them (``"Control"``, ``"Shift"``, ``"Alt"``);
    ``time`` is seconds on any clock; ``pressure`` is 0..1 (1 for a mouse).
    """

    x: float
    y: float
    point: Point
    button: int = LEFT
    modifiers: frozenset[str] = frozenset()
    time: float = 0.0
    pressure: float = 1.0
    channel: int | None = None
    """The channel of the lane under the pointer (the one shown when channels are not stacked)."""


class ToolHost(Protocol):
    """What a tool may do to the canvas it works on."""

    def mapping(self) -> ViewMapping:
        """The view now: pixels to document coordinates, zoom and pan arithmetic."""

    def set_view(self, view: ViewSettings) -> None:
        """Show another part of the document, or the same differently."""

    def set_selection(self, span: tuple[float, float] | None) -> None:
        """Select the time span ``(start_s, stop_s)``, or nothing."""

    def set_outline(self, footprint: Footprint | None) -> None:
        """Outline where a dab would land (the brush under the cursor), or nothing."""

    def set_clone_source(self, cell: tuple[float, float] | None) -> None:
        """Mark the clone brush's source ``(frame, bin)``, or nothing."""

    def time_clicked(self, seconds: float) -> None:
        """The person clicked at ``seconds`` without dragging (the edit cursor goes there)."""

    def show_message(self, text: str) -> None:
        """A line for the status bar."""


class Tool:
    """A pointer tool. :meth:`press` returns True when the tool takes the drag that follows: it then
    gets :meth:`drag` for each move and one :meth:`release` (or :meth:`cancel`)."""

    name = ""
    cursor = "cross"
    """``cross``, ``open_hand``, ``closed_hand`` or ``pointing``; the canvas maps it to Qt's."""

    def __init__(self, host: ToolHost):
        self.host = host

    def press(self, pointer: Pointer) -> bool:
        return False

    def drag(self, pointer: Pointer) -> None:
        """The pointer moved while the tool holds the drag."""

    def release(self, pointer: Pointer) -> None:
        """The drag ended with the button's release."""

    def hover(self, pointer: Pointer) -> None:
        """The pointer moved with no drag in progress."""

    def leave(self) -> None:
        """The pointer left the canvas."""

    def cancel(self) -> bool:
        """Escape: abandon the drag in progress; True if there was one to abandon."""
        return False

    def deactivate(self) -> None:
        """Another tool was chosen."""
        self.leave()
