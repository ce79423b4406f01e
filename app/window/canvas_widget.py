"""The spectrogram canvas: a rendercanvas Qt widget drawing with the wgpu renderer, and the pointer
tools (brushes, pan, zoom, time selection).

Pointer events arrive through rendercanvas, which merges consecutive moves into one per frame; each
merged move of a stroke becomes one :class:`~spectropaint.brushes.stroke.InputEvent`, so one stroke
event, one ``region_changed`` and one redraw per displayed frame. Each finished stroke is also
recorded (brush, settings, parameters as used, and the events as applied) as a
:class:`~spectropaint.brushes.recorded.RecordedStroke`. The canvas draws on demand: only when the
view, the overlays or the document changed.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPointingDevice
from PySide6.QtWidgets import QWidget
from rendercanvas.qt import QRenderWidget

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.recorded import RecordedStroke
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import apply_settle
from spectropaint.brushes.stroke import InputEvent
from spectropaint.gpu.canvas import attach_canvas
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.view import BrushOutline, Selection, ViewSettings
from spectropaint.gpu.view_mapping import Point, ViewMapping
from spectropaint.transforms.errors import SettingsError

log = logging.getLogger(__name__)
VIEW_TOOLS = ("select", "pan", "zoom")
LEFT, RIGHT, MIDDLE = 1, 2, 3
WHEEL_ZOOM_PER_UNIT = 1.0015
"""Zoom factor per wheel unit (a notch is 120 units: about 1.2 times)."""
_STYLUS = (QPointingDevice.PointerType.Pen, QPointingDevice.PointerType.Eraser)


class SpectrogramCanvas(QRenderWidget):
    """Draws ``document``'s first block and turns pointer drags into strokes, pans and zooms.

    Parameters
    ----------
    document : Document
    history : History
        Where strokes record their undo steps.
    device : wgpu.GPUDevice
    lock : threading.Lock
        Held while a stroke writes the document (the playback resynthesis reads it on another thread).
    view : ViewSettings, optional
    """

    view_changed = Signal()
    cursor_moved = Signal(object)
    """A :class:`Point` under the pointer, or None when it left the canvas."""
    stroke_recorded = Signal(object)
    """The :class:`RecordedStroke` of a finished stroke that changed something (before
    ``stroke_finished``)."""
    stroke_finished = Signal(object)
    """The :class:`Region` a finished stroke changed."""
    time_clicked = Signal(float)
    """Seconds where the select tool was clicked without dragging (the edit cursor)."""
    selection_changed = Signal(object)
    """``(start_s, stop_s)`` of the time selection, or None."""
    message = Signal(str)
    gpu_failed = Signal(str)
    """Drawing failed on the GPU (sent once per distinct message)."""

    def __init__(
        self,
        document,
        *,
        history: History,
        device,
        lock: threading.Lock,
        view: ViewSettings | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent, update_mode="ondemand", max_fps=60)
        self.document = document
        self.history = history
        self.lock = lock
        self.renderer = SpectrogramRenderer(device, document, view=view)
        self._gpu_error = ""
        attach_canvas(self.renderer, self, on_error=self._on_gpu_error)
        self.tool = "gain"
        self.brush_settings = BrushSettings()
        self.brush_params: dict = {}
        self.clone_source: tuple[float, float] | None = None
        self.space_held = False
        self.space_pan_used = False
        self.frames_presented = 0
        """Frames drawn by the renderer and then painted on the widget (tests and benchmarks)."""
        self.last_present_time = 0.0
        self._drawn_since_paint = False
        self._pressure = 1.0
        self._tablet_pressure = 1.0
        self._stroke: StrokeSession | None = None
        self._stroke_events: list[InputEvent] = []
        """The events applied so far by the stroke in progress."""
        self._drag: tuple | None = None
        self.setMinimumSize(200, 120)
        self.add_event_handler(self._on_down, "pointer_down")
        self.add_event_handler(self._on_move, "pointer_move")
        self.add_event_handler(self._on_up, "pointer_up")
        self.add_event_handler(self._on_wheel, "wheel")
        self.add_event_handler(self._on_leave, "pointer_leave")
        self.add_event_handler(self._on_key, "key_down")

    # -------------------------------------------------------------------------------- the view
    @property
    def view(self) -> ViewSettings:
        return self.renderer.view

    def mapping(self) -> ViewMapping:
        return ViewMapping(
            self.renderer.geometry, self.view, max(1, self.width()), max(1, self.height())
        )

    def set_view(self, view: ViewSettings) -> None:
        """Show ``view`` (uniforms only: nothing is uploaded)."""
        self.renderer.view = view
        self.request_draw()
        self.view_changed.emit()

    def update_view(self, **fields) -> None:
        self.set_view(dataclasses.replace(self.view, **fields))

    def _set_overlays(self, **fields) -> None:
        overlays = dataclasses.replace(self.view.overlays, **fields)
        if overlays != self.view.overlays:
            self.renderer.view = dataclasses.replace(self.view, overlays=overlays)
            self.request_draw()

    def set_playhead(self, seconds: float | None) -> None:
        self._set_overlays(playhead_seconds=seconds)

    def set_selection(self, span: tuple[float, float] | None) -> None:
        geometry = self.renderer.geometry
        selection = None
        if span is not None:
            selection = Selection(min(span), max(span), geometry.low_edge_hz, geometry.high_edge_hz)
        self._set_overlays(selection=selection)
        self.selection_changed.emit(None if span is None else (min(span), max(span)))

    def fit(self) -> None:
        self.set_view(self.mapping().fitted())

    def zoom(self, factor: float, *, time: bool = True, freq: bool = False) -> None:
        """Zoom about the centre by ``factor`` along the chosen axes."""
        mapping = self.mapping()
        self.set_view(
            mapping.zoomed(
                mapping.width / 2,
                mapping.height / 2,
                time_factor=factor if time else 1.0,
                freq_factor=factor if freq else 1.0,
            )
        )

    def set_tool(self, name: str) -> None:
        if name not in BRUSHES and name not in VIEW_TOOLS:
            raise SettingsError(f"unknown tool {name!r}")
        self.tool = name
        cursors = {"pan": Qt.CursorShape.OpenHandCursor, "zoom": Qt.CursorShape.PointingHandCursor}
        self.setCursor(cursors.get(name, Qt.CursorShape.CrossCursor))
        if name not in BRUSHES:
            self._set_overlays(brush=None)

    # ------------------------------------------------------------------------------- Qt events
    def tabletEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # Keep the pen's pressure, then let Qt turn the event into the mouse event that reaches
        # rendercanvas (an ignored tablet event is delivered again as a mouse event).
        self._tablet_pressure = min(1.0, max(0.0, event.pressure()))
        event.ignore()

    def _note_pressure(self, event) -> None:
        """Pressure of the pen that made this mouse event (1 for a mouse)."""
        device = event.pointingDevice()
        stylus = device is not None and device.pointerType() in _STYLUS
        self._pressure = self._tablet_pressure if stylus else 1.0

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self._note_pressure(event)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self._note_pressure(event)
        super().mouseMoveEvent(event)

    def _rc_present_bitmap(self, **kwargs) -> None:
        # rendercanvas hands the rendered frame over here (possibly after an asynchronous read-back);
        # the next paint event shows it
        super()._rc_present_bitmap(**kwargs)
        self._drawn_since_paint = True

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        if self._drawn_since_paint:
            self._drawn_since_paint = False
            self.frames_presented += 1
            self.last_present_time = time.perf_counter()

    # ----------------------------------------------------------------------- pointer handlers
    def _point(self, event) -> Point:
        return self.mapping().to_document(event["x"], event["y"])

    def _on_down(self, event) -> None:
        x, y, button = event["x"], event["y"], event["button"]
        modifiers = event.get("modifiers") or ()
        if self._stroke is not None or self._drag is not None:
            return
        if button == MIDDLE or (button == LEFT and (self.space_held or self.tool == "pan")):
            self.space_pan_used = self.space_held
            self._drag = ("pan", x, y, self.mapping())
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
        elif self.tool == "zoom" and button in (LEFT, RIGHT):
            factor = 0.5 if button == RIGHT or "Shift" in modifiers else 2.0
            self.set_view(self.mapping().zoomed(x, y, time_factor=factor, freq_factor=factor))
        elif self.tool == "select" and button == LEFT:
            self._drag = ("select", x, self._point(event).seconds)
        elif self.tool in BRUSHES and button == LEFT:
            point = self._point(event)
            if self.tool == "clone" and "Control" in modifiers:
                self.clone_source = (point.frame, point.bin)
                self.message.emit(f"Clone source set at {point.seconds:.3f} s, {point.hz:.0f} Hz")
                return
            self._begin_stroke(point, event["time_stamp"])

    def _on_move(self, event) -> None:
        point = self._point(event)
        self.cursor_moved.emit(point)
        if self.tool in BRUSHES:
            settings, geometry = self.brush_settings, self.renderer.geometry
            self._set_overlays(
                brush=BrushOutline(
                    point.seconds,
                    point.hz,
                    settings.radius_frames * geometry.step_seconds,
                    settings.radius_bins * geometry.step_hz,
                )
            )
        if self._stroke is not None:
            self._paint(InputEvent(event["time_stamp"], point.frame, point.bin, self._pressure))
        elif self._drag is not None and self._drag[0] == "pan":
            _, x0, y0, start = self._drag
            self.set_view(
                dataclasses.replace(
                    start.panned(event["x"] - x0, event["y"] - y0), overlays=self.view.overlays
                )
            )
        elif self._drag is not None and self._drag[0] == "select":
            self.set_selection((self._drag[2], point.seconds))

    def _on_up(self, event) -> None:
        if self._stroke is not None and event["button"] == LEFT:
            self._end_stroke()
        elif self._drag is not None:
            kind, x0 = self._drag[0], self._drag[1]
            self._drag = None
            self.set_tool(self.tool)
            if kind == "select" and abs(event["x"] - x0) < 3:
                self.set_selection(None)
                self.time_clicked.emit(self._point(event).seconds)

    def _on_wheel(self, event) -> None:
        modifiers = event.get("modifiers") or ()
        amount = event["dy"] + event["dx"]
        mapping = self.mapping()
        if "Control" in modifiers:
            factor = WHEEL_ZOOM_PER_UNIT ** (-amount)
            along_freq = "Shift" in modifiers
            view = mapping.zoomed(
                event["x"],
                event["y"],
                time_factor=1.0 if along_freq else factor,
                freq_factor=factor if along_freq else 1.0,
            )
        elif "Shift" in modifiers:
            view = mapping.panned(0, -amount / 4)
        else:
            view = mapping.panned(-amount / 4, 0)
        self.set_view(view)

    def _on_leave(self, event) -> None:
        self._set_overlays(brush=None)
        self.cursor_moved.emit(None)

    def _on_key(self, event) -> None:
        if event["key"] == "Escape" and self._stroke is not None:
            with self.lock:
                self._stroke.abort()
            self._stroke = None
            self.request_draw()
            self.message.emit("Stroke cancelled")

    # ----------------------------------------------------------------------------- strokes
    def _begin_stroke(self, point: Point, stamp: float) -> None:
        params = dict(self.brush_params)
        if self.tool == "clone" and self.clone_source is not None:
            # the source chosen by Ctrl+click lines up with where this stroke starts
            params.update(
                offset_frames=round(self.clone_source[0] - point.frame),
                offset_bins=round(self.clone_source[1] - point.bin),
            )
        try:
            with self.lock:
                self._stroke = StrokeSession(
                    self.document,
                    self.tool,
                    self.brush_settings,
                    params=params,
                    history=self.history,
                )
        except SettingsError as exc:
            self.message.emit(str(exc))
            return
        self._stroke_events = []
        self._paint(InputEvent(stamp, point.frame, point.bin, self._pressure))

    def _paint(self, event: InputEvent) -> None:
        """Apply one input event to the stroke; a failing brush aborts its stroke, with a message."""
        try:
            with self.lock:
                self._stroke.add_events((event,))
            self._stroke_events.append(event)
        except Exception as exc:  # a brush bug must not leave a half-open stroke behind
            log.exception("the %s brush failed", self.tool)
            stroke, self._stroke = self._stroke, None
            with self.lock:
                stroke.abort()
            self.message.emit(f"The {self.tool} brush failed and its stroke was undone: {exc}")
        self.request_draw()

    def _end_stroke(self) -> None:
        stroke, self._stroke = self._stroke, None
        with self.lock:
            stroke.end()
            plan = stroke.settle_plan()
        # the stroke's settle, at once until the session runs it on a worker thread
        result = None if plan is None else plan.compute()
        with self.lock:
            apply_settle(self.document, self.history, result)
        if not stroke.region.empty:
            state = stroke.state
            self.stroke_recorded.emit(
                RecordedStroke(
                    state.kind.name, state.settings, state.params, tuple(self._stroke_events)
                )
            )
            self.stroke_finished.emit(stroke.region)

    @property
    def painting(self) -> bool:
        """A stroke is in progress."""
        return self._stroke is not None

    @property
    def interacting(self) -> bool:
        """A stroke, a pan or a selection drag is in progress."""
        return self._stroke is not None or self._drag is not None

    def _on_gpu_error(self, error) -> None:
        if str(error) != self._gpu_error:
            self._gpu_error = str(error)
            self.gpu_failed.emit(self._gpu_error)

    def close_renderer(self) -> None:
        """Release the GPU resources (the canvas can no longer draw)."""
        self.renderer.close()
