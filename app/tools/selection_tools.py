"""Selection tools: rectangle, frequency band, lasso, selection brush, magic wand, harmonics.

Each tool builds a shape in seconds and Hz from the pointer and sets the session's selection
(:meth:`~spectropaint.app.session.Session.set_selection`) to the selection it had when the drag
began combined with that shape, at every move, so what is drawn is always the session's selection.
The keys held at the press say how it combines (:func:`combine_mode`): none replaces, Shift adds,
Alt subtracts, Shift+Alt intersects. Escape puts back the selection the drag began with.
The time-range tool is :class:`~spectropaint.app.tools.view_tools.SelectTool`.
"""

from __future__ import annotations

import math

from spectropaint.app.session import Session
from spectropaint.app.tools.base import LEFT, Pointer, Tool, ToolHost
from spectropaint.app.tools.footprint import Footprint
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import db_label, hz_label, seconds_label
from spectropaint.transforms.selection import Selection
from spectropaint.transforms.shapes import (
    Band,
    Dab,
    Harmonic,
    Lasso,
    Painted,
    Rectangle,
    Shape,
    Wand,
)
from spectropaint.transforms.sound_analysis import fundamental_near

CLICK_PIXELS = 3
"""A press and release closer than this are a click, not a drag."""
SNAP_PIXELS = 4
"""How far from a click the harmonic tool looks for the fundamental."""


def combine_mode(modifiers: frozenset[str]) -> str:
    """``replace``, or with Shift ``add``, with Alt ``subtract``, with both ``intersect``."""
    shift, alt = "Shift" in modifiers, "Alt" in modifiers
    if shift and alt:
        return "intersect"
    return "add" if shift else "subtract" if alt else "replace"


class SelectionTool(Tool):
    """What the selection tools share: the selection before the drag, the combine mode, and the
    shape built so far (:meth:`shape` from the press and the current pointer)."""

    def __init__(self, host: ToolHost, session: Session):
        super().__init__(host)
        self.session = session
        self._base: Selection | None = None
        self._mode = "replace"
        self._start: Pointer | None = None

    def press(self, pointer: Pointer) -> bool:
        if pointer.button != LEFT:
            return False
        self._base, self._mode, self._start = (
            self.session.selection,
            combine_mode(pointer.modifiers),
            pointer,
        )
        self.begin(pointer)
        self._show(pointer)
        return True

    def begin(self, pointer: Pointer) -> None:
        """A drag starts at ``pointer`` (after the base and mode are kept)."""

    def shape(self, pointer: Pointer) -> Shape | None:
        """The shape the drag describes with the pointer at ``pointer`` (None: none yet)."""
        raise NotImplementedError

    def _show(self, pointer: Pointer) -> None:
        try:
            shape = self.shape(pointer)
        except SettingsError:  # a degenerate shape (no width yet): nothing to show
            shape = None
        if shape is not None:
            self._set(self._base.combined(shape, self._mode))

    def _set(self, selection: Selection) -> None:
        try:
            self.session.set_selection(selection)
        except SettingsError as exc:
            self.host.show_message(str(exc))

    def drag(self, pointer: Pointer) -> None:
        self._show(pointer)

    def release(self, pointer: Pointer) -> None:
        start = self._start
        if start is not None and self.is_click(start, pointer) and self._mode == "replace":
            self.clicked(pointer)
        else:
            self._show(pointer)
        self._start = None

    def clicked(self, pointer: Pointer) -> None:
        """A click without a drag: select nothing."""
        self._set(Selection())

    @staticmethod
    def is_click(start: Pointer, end: Pointer) -> bool:
        return abs(end.x - start.x) < CLICK_PIXELS and abs(end.y - start.y) < CLICK_PIXELS

    def cancel(self) -> bool:
        if self._start is None:
            return False
        self._start = None
        self._set(self._base)
        return True


class RectangleSelectTool(SelectionTool):
    """Drag a rectangle of time and frequency."""

    name = "select_rect"

    def shape(self, pointer: Pointer) -> Shape | None:
        a, b = self._start.point, pointer.point
        return Rectangle(
            min(a.seconds, b.seconds),
            max(a.seconds, b.seconds),
            min(a.hz, b.hz),
            max(a.hz, b.hz),
        )


class BandSelectTool(SelectionTool):
    """Drag up or down: a frequency band over all time."""

    name = "select_band"

    def shape(self, pointer: Pointer) -> Shape | None:
        a, b = self._start.point.hz, pointer.point.hz
        return Band(min(a, b), max(a, b))


class LassoTool(SelectionTool):
    """Draw around what to select; the outline closes itself."""

    name = "lasso"

    def begin(self, pointer: Pointer) -> None:
        self._points = [(pointer.point.seconds, pointer.point.hz)]

    def shape(self, pointer: Pointer) -> Shape | None:
        point = (pointer.point.seconds, pointer.point.hz)
        if point != self._points[-1]:
            self._points.append(point)
        return Lasso(tuple(self._points)) if len(self._points) >= 3 else None


class SelectionBrushTool(SelectionTool):
    """Paint a soft selection: dabs of :attr:`radius_seconds` by :attr:`radius_hz` with a raised-
    cosine edge beyond :attr:`hardness`, a new one every quarter radius."""

    name = "select_brush"

    def __init__(self, host: ToolHost, session: Session):
        super().__init__(host, session)
        self.radius_seconds = 0.05
        self.radius_hz = 300.0
        self.hardness = 0.5

    def begin(self, pointer: Pointer) -> None:
        self._dabs: list[Dab] = []
        self._add(pointer)

    def _add(self, pointer: Pointer) -> None:
        point = pointer.point
        if self._dabs:
            last = self._dabs[-1]
            distance = math.hypot(
                (point.seconds - last.seconds) / self.radius_seconds,
                (point.hz - last.hz) / self.radius_hz,
            )
            if distance < 0.25:
                return
        self._dabs.append(
            Dab(point.seconds, point.hz, self.radius_seconds, self.radius_hz, self.hardness)
        )

    def shape(self, pointer: Pointer) -> Shape | None:
        self._add(pointer)
        return Painted(tuple(self._dabs))

    def is_click(self, start: Pointer, end: Pointer) -> bool:
        return False  # a click paints one dab

    def hover(self, pointer: Pointer) -> None:
        point, geometry = pointer.point, self.host.mapping().geometry
        self.host.set_outline(
            Footprint(
                point.frame,
                point.bin,
                self.radius_seconds / geometry.step_seconds,
                self.radius_hz / geometry.step_hz,
            )
        )

    def drag(self, pointer: Pointer) -> None:
        self.hover(pointer)
        super().drag(pointer)

    def leave(self) -> None:
        self.host.set_outline(None)


class WandTool(SelectionTool):
    """Click: the connected region standing :attr:`tolerance_db` above its surroundings."""

    name = "wand"

    def __init__(self, host: ToolHost, session: Session):
        super().__init__(host, session)
        self.tolerance_db = 12.0

    def shape(self, pointer: Pointer) -> Shape | None:
        return None  # measured once, at the release

    def release(self, pointer: Pointer) -> None:
        start, self._start = self._start, None
        point = start.point
        self._set(self._base.combined(Wand(point.seconds, point.hz, self.tolerance_db), self._mode))
        found = self.session.selection.terms[-1].shape if self.session.selection.terms else None
        if not (isinstance(found, Wand) and found.raster is not None and found.raster.values.any()):
            self._set(self._base)
            self.host.show_message(
                f"Nothing at {hz_label(point.hz)} stands "
                f"{db_label(self.tolerance_db, signed=False)} above its surroundings"
            )


class HarmonicTool(SelectionTool):
    """Click on a fundamental: it and its :attr:`count` - 1 overtones, :attr:`width_cents` wide,
    followed through the visible time span (drag sideways to choose the span instead). The
    fundamental is the one whose harmonics are loudest within :data:`SNAP_PIXELS` of the click."""

    name = "harmonic"

    def __init__(self, host: ToolHost, session: Session):
        super().__init__(host, session)
        self.count = 10
        self.width_cents = 50.0

    def shape(self, pointer: Pointer) -> Shape | None:
        return None  # tracked once, at the release

    def release(self, pointer: Pointer) -> None:
        start, self._start = self._start, None
        if abs(pointer.x - start.x) < CLICK_PIXELS:
            t0, t1 = self.host.mapping().seconds_span
        else:
            t0, t1 = sorted((start.point.seconds, pointer.point.seconds))
        end = self.session.document.n_samples / self.session.document.sample_rate
        t0, t1 = max(0.0, t0), min(end, t1)
        if not (t0 < t1 and start.point.hz > 0):
            return
        mapping = self.host.mapping()
        near = [mapping.to_document(start.x, start.y + dy).hz for dy in (-SNAP_PIXELS, SNAP_PIXELS)]
        with self.session.lock:
            f0 = fundamental_near(
                self.session.document,
                start.point.seconds,
                max(1.0, min(near)),
                max(near),
                self.count,
            )
        shape = Harmonic(t0, t1, f0, self.count, self.width_cents, seed_seconds=start.point.seconds)
        self._set(self._base.combined(shape, self._mode))
        track = self.session.selection.terms[-1].shape
        if isinstance(track, Harmonic) and track.track:
            self.host.show_message(
                f"Harmonics of {hz_label(f0)} followed from {seconds_label(t0)} to "
                f"{seconds_label(t1)}"
            )


SELECTION_TOOLS: dict[str, type[SelectionTool]] = {
    tool.name: tool
    for tool in (
        RectangleSelectTool,
        BandSelectTool,
        LassoTool,
        SelectionBrushTool,
        WandTool,
        HarmonicTool,
    )
}
