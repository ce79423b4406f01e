"""The spectrogram canvas: a rendercanvas Qt widget drawing with the wgpu renderer, dispatching
pointer events to the active tool (:mod:`spectropaint.app.tools`).

Pointer events arrive through rendercanvas, which merges consecutive moves into one per frame; each
becomes one :class:`~spectropaint.app.tools.base.Pointer` for the tool, so a stroke gets one input
event, one session change and one redraw per displayed frame. The middle button, or the left one
with Space held, pans whatever the tool. The canvas draws on demand: when the view, the overlays or
the document changed (it uploads each change's region: :meth:`show_change`).

**Presenting.** Where the platform gives a window to draw into (X11, also under XWayland; Windows;
macOS: :func:`present_method`) and the adapter is a GPU, the frame goes to a wgpu surface; elsewhere
(the offscreen platform of the tests, Wayland without XWayland, a CPU rasteriser), and when the
surface fails, it is read back and painted
with QPainter (rendercanvas's "bitmap" method; the log says why, once). ``SPECTROPAINT_PRESENT``
(``screen`` or ``bitmap``) forces one. The marks over the picture (the outline, the lane names, the
grid: :class:`~spectropaint.app.window.canvas_overlay.CanvasOverlay`) are painted with QPainter
either way: over the read-back pixels, or into an image that the GPU composes over the picture
(:mod:`spectropaint.gpu.screen_frame`). By read-back, while a stroke paints, a move's marks wait
(up to :data:`MARKS_WAIT_MS`) for the frame that shows its dabs instead of being painted alone.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import time

import numpy as np
from PySide6.QtCore import QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QImage, QPainter, QPointingDevice
from PySide6.QtWidgets import QWidget
from rendercanvas.qt import QRenderWidget

from spectropaint.app.paint_queue import PaintQueue
from spectropaint.app.session import Change, Session
from spectropaint.app.tools.base import LEFT, MIDDLE, Pointer, Tool
from spectropaint.app.tools.brush_tool import BrushTool
from spectropaint.app.tools.footprint import Footprint
from spectropaint.app.tools.registry import check_tool, make_tools
from spectropaint.app.tools.view_tools import PanTool
from spectropaint.app.window.canvas_overlay import CanvasOverlay, channel_names
from spectropaint.app.window.lane_canvas import LaneCanvas
from spectropaint.brushes.warm_up import warm_up_later
from spectropaint.gpu.canvas import attach_canvas
from spectropaint.gpu.errors import GPUUnavailableError
from spectropaint.gpu.lanes import LaneRenderer
from spectropaint.gpu.renderer import STREAM_BYTES, SpectrogramRenderer
from spectropaint.gpu.screen_frame import ScreenFrame
from spectropaint.gpu.view import Selection, ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping

log = logging.getLogger(__name__)

PRESENT_ENV = "SPECTROPAINT_PRESENT"
SURFACE_PLATFORMS = ("xcb", "windows", "cocoa")
"""Qt platforms whose windows rendercanvas can hand to wgpu as a surface (X11 windows, also under
XWayland, which rendercanvas asks Qt for on a Wayland session; Win32; Cocoa)."""
STREAM_PAUSE_MS = 4
"""Between two steps of streaming the columns not uploaded yet (each at most ``STREAM_BYTES``)."""
_surface_failure: list[str] = []
"""Why a surface failed in this process (then every canvas presents by read-back)."""


def present_method(platform: str, adapter_type: str = "DiscreteGPU") -> str:
    """``'screen'`` (a wgpu surface) on a Qt ``platform`` that gives one, with a GPU adapter, where
    no surface failed yet; else ``'bitmap'`` (read-back). ``$SPECTROPAINT_PRESENT`` forces either.

    A CPU rasteriser (lavapipe: ``adapter_type`` ``'CPU'``) presents by read-back: its "GPU"
    memory is host memory, and under Xvfb on 2 cores the surface made painting slower (pointer
    move to painted frame 30 to 37 ms against 10 to 14, the brush outline 11 to 17 ms against 5 to
    7: ``bench_app.py``), the outline then needing a GPU frame instead of a repaint."""
    forced = os.environ.get(PRESENT_ENV, "").strip().lower()
    if forced in ("screen", "bitmap"):
        return forced
    gives_surface = platform in SURFACE_PLATFORMS and adapter_type != "CPU"
    return "screen" if gives_surface and not _surface_failure else "bitmap"


WHEEL_ZOOM_PER_UNIT = 1.0015
"""Zoom factor per wheel unit (a notch is 120 units: about 1.2 times)."""
MAX_FPS = 240
"""How often rendercanvas looks for a requested frame while nothing is being dragged or painted: a
change waits for its next look (half of 1/MAX_FPS on average) before it is drawn, and frames are
drawn only when something asked for one."""
MARKS_WAIT_MS = 20
"""While a stroke paints by read-back, how long a move's outline waits for the frame that shows the
move's dabs (which paints the outline too) before it is painted alone: a move that stamps no dab
makes no frame."""
INTERACTING_FPS = 1000
"""The same while a stroke, a pan or a selection drag goes on (until the last dab is drawn): a
painted change is drawn within a millisecond of reaching the window's thread instead of waiting up
to 4 ms for the next look. Frames are still drawn only when asked for (an outline move or a
change), so this does not draw more of them; the looks themselves cost a few microseconds."""
_STYLUS = (QPointingDevice.PointerType.Pen, QPointingDevice.PointerType.Eraser)
_CURSORS = {
    "cross": Qt.CursorShape.CrossCursor,
    "open_hand": Qt.CursorShape.OpenHandCursor,
    "closed_hand": Qt.CursorShape.ClosedHandCursor,
    "pointing": Qt.CursorShape.PointingHandCursor,
}


class SpectrogramCanvas(LaneCanvas, QRenderWidget):
    """Draws the session's document (its first block) and hands pointer events to the active tool.

    It is the tools' :class:`~spectropaint.app.tools.base.ToolHost`.

    Parameters
    ----------
    session : Session
    device : wgpu.GPUDevice
    view : ViewSettings, optional
    """

    view_changed = Signal()
    cursor_moved = Signal(object)
    """A :class:`Point` under the pointer, or None when it left the canvas."""
    time_clicked_at = Signal(float)
    """Seconds where the select tool was clicked without dragging (the edit cursor)."""
    selection_changed = Signal(object)
    """``(start_s, stop_s)`` of the time selection, or None."""
    message = Signal(str)
    gpu_failed = Signal(str)
    """Drawing failed on the GPU (sent once per distinct message)."""

    def __init__(
        self,
        session: Session,
        *,
        device,
        view: ViewSettings | None = None,
        stacked: bool = False,
        parent: QWidget | None = None,
    ):
        super().__init__(parent, update_mode="ondemand", max_fps=MAX_FPS)
        self._fps = MAX_FPS
        self.session = session
        self.lanes = LaneRenderer(device, session.document, view or ViewSettings(), stacked=stacked)
        """The channels drawn, one lane each (one lane unless stacked)."""
        self._lane = 0
        """The lane the pointer is in (held while a drag lasts): tools work in its coordinates."""
        self._gpu_error = ""
        self.overlay = CanvasOverlay()
        self._damage: list[tuple[float, float, float, float]] | None = None
        """Parts of the picture (logical pixels) to draw again; None: all of it."""
        self._drawn_size: tuple[int, int] | None = None
        self._draws = 0
        """Frames begun (changes drawn at once check that they were: not while a draw goes on)."""
        self._changes_due = False
        """Changes wait for :meth:`changes_taken`, once those queued with them are taken."""
        self._cpu_rasteriser = device.adapter.info.get("adapter_type", "") == "CPU"
        self._drawn_area = QRect()
        """By read-back: the widget's area (logical pixels) that frames drawn since the last one
        presented changed; the presented image differs from the one shown only there."""
        self._shown_area = QRect()
        """The area of the image just presented, to repaint (read-back)."""
        self.partial_frames = 0
        """Frames that drew only what changed (tests and benchmarks)."""
        self.present = present_method(
            QGuiApplication.platformName(), device.adapter.info.get("adapter_type", "")
        )
        """How frames reach the window: ``'screen'`` (a wgpu surface) or ``'bitmap'`` (read-back)."""
        self._screen: ScreenFrame | None = None
        self._marks_stale = True
        self._marks_only = False
        self._marks_size: tuple[int, int] | None = None
        self._marks_texels: np.ndarray | None = None
        self.marks_bytes = 0
        """Bytes of marks the last surface frame uploaded (tests)."""
        self._falling_back = False
        self._stream_timer = QTimer(self)
        self._stream_timer.setSingleShot(True)
        self._stream_timer.setInterval(STREAM_PAUSE_MS)
        self._stream_timer.timeout.connect(self._stream_step)
        self._marks_due = QRect()
        """While a stroke paints, by read-back: the area whose marks wait for the stroke's frame."""
        self._outline_area_of: tuple[tuple | None, QRect] = (None, QRect())
        """The last outline area computed, with what it was computed for (:meth:`_outline_area`)."""
        self._marks_timer = QTimer(self)
        self._marks_timer.setSingleShot(True)
        self._marks_timer.setInterval(MARKS_WAIT_MS)
        self._marks_timer.timeout.connect(self._paint_due_marks)
        self._attach()
        self.painter = PaintQueue(session, on_error=self.message.emit)
        """Strokes are painted on a thread of their own: this thread only queues pointer events."""
        self.tools: dict[str, Tool] = make_tools(self, session, self.painter)
        self.tool: Tool = self.tools["gain"]
        self._pan = PanTool(self)
        self._drag: Tool | None = None
        """The tool holding the drag in progress (the active one, or the pan tool)."""
        self._over: dict | None = None
        """The last pointer move over the canvas (None: the pointer is elsewhere)."""
        self._space_held = False
        self._space_pan_used = False
        self._count_frames()
        self.last_paint_time = 0.0
        """When the widget was last painted, a new frame or only the marks (benchmarks)."""
        self._pressure = 1.0
        self._tablet_pressure = 1.0
        self.setMinimumSize(200, 120)
        self.add_event_handler(self._on_down, "pointer_down")
        self.add_event_handler(self._on_move, "pointer_move")
        self.add_event_handler(self._on_up, "pointer_up")
        self.add_event_handler(self._on_wheel, "wheel")
        self.add_event_handler(self._on_leave, "pointer_leave")
        self.add_event_handler(self._on_key, "key_down")

    # ---------------------------------------------------------------------------- presenting
    def _rc_get_present_info(self, present_methods):
        # rendercanvas's Qt widget always picks "bitmap" when it may; a surface is asked for here
        if self.present == "screen" and "screen" in present_methods:
            info = super()._rc_get_present_info(["screen"])
            if info is not None and info.get("method") == "screen":
                return info
            self._note_fallback(f"Qt gives no window handle on {QGuiApplication.platformName()}")
        return super()._rc_get_present_info(["bitmap"])

    def _attach(self) -> None:
        """Draw the lanes into this canvas, to a surface if it presents to one (falling back to
        read-back when the surface cannot be configured)."""
        try:
            self._screen = attach_canvas(
                self.lanes,
                self,
                on_error=self._on_gpu_error,
                damage=self._take_damage,
                marks=self._upload_marks,
                on_surface_error=self._on_surface_error,
            )
        except Exception as exc:
            if not self._present_to_screen:
                raise
            self._fall_back(f"the window's surface could not be configured ({exc})")

    def _note_fallback(self, reason: str) -> None:
        if not _surface_failure:
            log.warning("the canvas presents by read-back: %s", reason)
            _surface_failure.append(reason)
        self.present = "bitmap"

    def _on_surface_error(self, exc: Exception) -> None:
        """The surface gave no texture while drawing: present by read-back from the next frame
        (the context is made again outside the draw in progress)."""
        if not self._falling_back:
            self._falling_back = True
            reason = f"the window's surface gave no image ({exc})"
            QTimer.singleShot(0, self, lambda: self._fall_back(reason))

    def _fall_back(self, reason: str) -> None:
        """Present by read-back from now on, saying why in the log (once a process)."""
        self._note_fallback(reason)
        context, self._canvas_context = self._canvas_context, None
        if context is not None:
            try:
                context._rc_close()
            except Exception as exc:  # noqa: BLE001 - a broken surface may fail to close too
                log.debug("closing the failed surface: %s", exc)
        self.setAttribute(Qt.WidgetAttribute.WA_PaintOnScreen, False)
        if self._screen is not None:
            self._screen.release()
        self._screen, self._damage, self._drawn_size = None, None, None
        self._falling_back = False
        self._attach()
        self.request_draw()

    def _paint_marks(self, painter: QPainter) -> None:
        """The overlay's marks of every lane (in logical pixels)."""
        names = channel_names(self.lanes.n_channels) if self.stacked else None
        for lane, (channel, (first, rows)) in enumerate(
            zip(self.lanes.channels, self.bands(), strict=True)
        ):
            painter.save()
            painter.translate(0, first)
            painter.setClipRect(0, 0, self.width(), rows)
            name = names[channel] if names else ""
            self.overlay.paint(painter, self.lane_mapping(lane), channel, name)
            painter.restore()

    def marks_image(self, size: tuple[int, int]) -> QImage:
        """The marks painted on a transparent ``size`` (physical pixels) image, RGBA with
        premultiplied alpha: what a surface frame composes over the picture."""
        image = QImage(*size, QImage.Format.Format_RGBA8888_Premultiplied)
        image.setDevicePixelRatio(size[0] / max(1, self.width()))
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        self._paint_marks(painter)
        painter.end()
        return image

    def _upload_marks(self, size: tuple[int, int], frame: ScreenFrame) -> None:
        """Before a surface frame is composed: upload the box of the marks that changed since the
        last upload (all of them for a new picture size)."""
        if not self._marks_stale and self._marks_size == size:
            return
        image = self.marks_image(size)
        pitch = image.bytesPerLine()
        texels = np.frombuffer(image.constBits(), np.uint32).reshape(size[1], pitch // 4)
        texels = texels[:, : size[0]]
        box = (0, 0, *size)
        if self._marks_size == size:
            changed = texels != self._marks_texels
            rows = np.flatnonzero(changed.any(axis=1))
            if not len(rows):
                box = (0, 0, 0, 0)
            else:
                y0, y1 = int(rows[0]), int(rows[-1]) + 1
                columns = np.flatnonzero(changed[y0:y1].any(axis=0))
                x0 = int(columns[0])
                box = (x0, y0, int(columns[-1]) + 1 - x0, y1 - y0)
        frame.write_marks(image.constBits(), pitch, box)
        # the next frame paints a new image: this one's pixels stay as they are, kept with it
        self._marks_image, self._marks_texels = image, texels
        self._marks_stale, self._marks_size = False, size
        self.marks_bytes = 4 * box[2] * box[3]

    def _stream_step(self) -> None:
        """Upload a step of the columns not uploaded yet, and come back while some are missing."""
        if self.lanes.closed:
            return
        try:
            self.lanes.stream(STREAM_BYTES)
        except GPUUnavailableError as exc:
            self._on_gpu_error(exc)
            return
        if self.lanes.streaming:
            self._stream_timer.start()

    # -------------------------------------------------------------------------------- the view
    @property
    def renderer(self) -> SpectrogramRenderer:
        """The first lane's renderer (every lane has the same geometry)."""
        return self.lanes.renderers[0]

    def mapping(self) -> ViewMapping:
        """The lane the pointer is in (the whole canvas with one lane)."""
        return self.lane_mapping(min(self._lane, len(self.lanes.channels) - 1))

    def set_view(self, view: ViewSettings) -> None:
        """Show ``view`` (uniforms only: nothing is uploaded, unless a lane shows another channel)."""
        moved = view != self.view
        self.lanes.show(view, self.lanes.stacked)
        self._damage = None
        self.request_draw()
        self.view_changed.emit()
        if moved:
            self._view_moved_under_pointer()

    def set_stacked(self, stacked: bool) -> None:
        """Every channel in a lane of its own (L above R), or the view's channel alone. Raises
        ``GPUUnavailableError`` when the GPU cannot hold the lanes (one lane is kept then)."""
        try:
            self.lanes.show(self.view, stacked)
        except GPUUnavailableError:
            self.lanes.show(self.view, False)
            raise
        finally:
            self._lane = 0
            self._damage = None
            self.request_draw()
            self.view_changed.emit()
            self._view_moved_under_pointer()

    def update_view(self, **fields) -> None:
        self.set_view(dataclasses.replace(self.view, **fields))

    def set_overlays(self, **fields) -> None:
        """Replace these fields of the view's overlays (playhead, selection, mask) in every lane."""
        overlays = dataclasses.replace(self.view.overlays, **fields)
        if overlays != self.view.overlays:
            self.lanes.show(dataclasses.replace(self.view, overlays=overlays), self.lanes.stacked)
            self._damage = None
            self.request_draw()

    def set_playhead(self, seconds: float | None) -> None:
        self.set_overlays(playhead_seconds=seconds)

    def set_outline(self, footprint: Footprint | None) -> None:
        if footprint != self.overlay.footprint:
            before = self._outline_area()
            self.overlay.footprint = footprint
            self.repaint_marks(before.united(self._outline_area()))

    def _outline_area(self) -> QRect:
        """The widget's rectangle (logical pixels) that the brush outline covers, in every lane it
        is drawn in; empty when none. Kept while the footprint, view and size stay: a pointer move
        asks for the last outline's area again, to repaint where it was."""
        key = (self.overlay.footprint, self.view, self.width(), self.height(), self.stacked)
        if self._outline_area_of[0] == key:
            return self._outline_area_of[1]
        area = QRect()
        for lane, (channel, (first, rows)) in enumerate(
            zip(self.lanes.channels, self.bands(), strict=True)
        ):
            bounds = self.overlay.outline_bounds(self.lane_mapping(lane), channel)
            if bounds is not None:
                left, top, right, bottom = bounds
                top, bottom = max(top, 0.0), min(bottom, float(rows))
                if right > left and bottom > top:
                    area = area.united(
                        QRectF(left, first + top, right - left, bottom - top).toAlignedRect()
                    )
        self._outline_area_of = (key, area)
        return area

    def set_clone_source(self, cell: tuple[float, float] | None) -> None:
        if cell != self.overlay.clone_source:
            self.overlay.clone_source = cell
            self.repaint_marks()

    def set_grid(self, shown: bool) -> None:
        self.overlay.grid = shown
        self.repaint_marks()

    def repaint_marks(self, area: QRect | None = None) -> None:
        """Paint the widget again from the last rendered frame, with the marks as they are now (by
        read-back: no GPU work, and only ``area`` when given, the rest of the widget kept; to a
        surface: the marks uploaded and composed, the picture kept)."""
        self._marks_stale = True
        if self._present_to_screen:
            self._marks_only = self._damage == []  # the picture stays: only the marks are composed
            self.request_draw()
            return
        area = self.rect() if area is None else area.intersected(self.rect())
        if self._drag is not None and self.painter.painting:
            # a stroke's move: the frame that shows its dabs comes within a few milliseconds and
            # repaints its area and the marks due (_rc_request_paint); painting them now as well
            # would take this thread (and the GIL) from the stroke's dabs
            self._marks_due = self._marks_due.united(area)
            if not self._marks_timer.isActive():
                self._marks_timer.start()
        elif not area.isEmpty():
            QWidget.update(self, area)

    def _paint_due_marks(self) -> None:
        """The marks of a stroke's moves that no frame painted within :data:`MARKS_WAIT_MS` (moves
        that stamped no dab)."""
        if not self._marks_due.isEmpty():
            QWidget.update(self, self._marks_due)

    def set_selection(self, span: tuple[float, float] | None) -> None:
        geometry = self.renderer.geometry
        selection = None
        if span is not None:
            selection = Selection(min(span), max(span), geometry.low_edge_hz, geometry.high_edge_hz)
        self.set_overlays(selection=selection)
        self.selection_changed.emit(None if span is None else (min(span), max(span)))

    def time_clicked(self, seconds: float) -> None:
        self.time_clicked_at.emit(seconds)

    def show_message(self, text: str) -> None:
        self.message.emit(text)

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

    def show_change(self, change: Change) -> None:
        """The session changed ``change.region``: upload it and draw the part of the picture it
        reaches (only that part: the rest of the last frame stays)."""
        region = change.region
        if region.empty or self.lanes.closed:  # a change queued before the document closed
            return
        self.lanes.mark_dirty(region)
        if self._damage is not None:
            rects = self._damage_rects(region)
            if rects is None:
                self._damage = None
            elif not rects:
                return  # out of view: uploaded with the next frame drawn
            else:
                self._damage.extend(rects)
        if self._draw_now():
            self._changes_due = True  # drawn once those queued with it are taken: changes_taken
        else:
            self.request_draw()  # rendercanvas draws at its next look (within 1/fps)

    def _draw_now(self) -> bool:
        """Whether changes are drawn, read back and painted as soon as the window's thread has
        taken those queued together, instead of at the scheduler's next look and the next paint
        event: while a stroke or drag goes on, by read-back from a GPU. Each would otherwise wait
        for the window's thread to come round to it (a painted move's frame on the H200: about
        1 ms for the look and 2 ms for the paint event), where this thread has nothing else to do
        meanwhile. Frames to a surface keep Qt's paint events. A CPU rasteriser (lavapipe) keeps
        the scheduler: its frames are drawn by the CPU while the window's thread would wait for
        them (``bench_app.py`` on 2 cores: the longest the window's thread was busy at a stretch
        went from 6 to 29 ms on a 10 s file seen whole, 52 to 94 ms on a 10-minute one, for
        frames 0.4 to 1 ms sooner)."""
        return self.interacting and not self._present_to_screen and not self._cpu_rasteriser

    def changes_taken(self) -> None:
        """The session's changes queued so far were all shown (the session bridge's ``taken``):
        those :meth:`_draw_now` holds are read back and painted in one frame now (by
        rendercanvas's own draw and synchronous present, which its ``force_draw`` makes before
        repainting the whole widget); at the scheduler's next look where that did not draw (a
        draw going on) or rendercanvas lacks it. Drawn as the last change is taken, not at the
        event loop's next turn: on the H200 a stroke's move waited 0.7 ms for that turn
        (``bench_app.py``'s stroke, its functions timed)."""
        if not self._changes_due:
            return
        self._changes_due = False
        if self._damage == [] or self.lanes.closed:  # drawn meanwhile, or nothing to draw
            return
        draw = getattr(self, "_draw_and_present", None)
        if draw is not None:
            drawn = self._draws
            draw(force_sync=True)
            if self._draws != drawn:
                return
        self.request_draw()

    def _damage_rects(self, region) -> list[tuple[float, float, float, float]] | None:
        """The canvas rectangles (logical pixels) ``region``'s boxes reach in each lane, or None
        when the boxes are not cells of the view's grid (an NSGT document's blocks)."""
        if type(self.renderer) is not SpectrogramRenderer:
            return None
        rects = []
        for part in region.parts:
            if part.block != 0:
                return None
            cells = (part.frame0, part.frame1, part.bin0, part.bin1)
            for lane, (channel, (first, _)) in enumerate(
                zip(self.lanes.channels, self.bands(), strict=True)
            ):
                if channel in part.channels:
                    rect = self.lane_mapping(lane).cells_rect(*cells)
                    if rect is not None:
                        rects.append((rect[0], rect[1] + first, rect[2], rect[3] + first))
        return rects

    def _take_damage(self, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
        """:meth:`_scissor`, its area (logical pixels) added to :attr:`_drawn_area`."""
        self._draws += 1
        scissor = self._scissor(size)
        if scissor is None:
            self._drawn_area = self.rect()
        elif scissor[2] > 0:
            scale = size[0] / max(1, self.width())
            x0, y0 = math.floor(scissor[0] / scale), math.floor(scissor[1] / scale)
            x1 = math.ceil((scissor[0] + scissor[2]) / scale)
            y1 = math.ceil((scissor[1] + scissor[3]) / scale)
            self._drawn_area = self._drawn_area.united(QRect(x0, y0, x1 - x0, y1 - y0))
        return scissor

    def _rc_present_bitmap(self, **kwargs) -> None:
        super()._rc_present_bitmap(**kwargs)
        self._shown_area, self._drawn_area = self._drawn_area, QRect()

    def _rc_request_paint(self) -> None:
        """By read-back, after an image is presented: repaint the part of the widget it changed
        and the marks due, not the whole widget (rendercanvas's way): a stroke's frame on the H200
        (offscreen) spent 1.3 ms painting all of it. rendercanvas presents one frame at a time
        (its scheduler waits for each read-back), so each image's area is known. Painted at once
        while :meth:`_draw_now` says so, else at Qt's next paint event."""
        if self._present_to_screen:
            super()._rc_request_paint()
            return
        area, self._shown_area = self._shown_area.united(self._marks_due), QRect()
        if area.isEmpty():
            return
        if self._draw_now():
            QWidget.repaint(self, area)
        else:
            QWidget.update(self, area)

    def _scissor(self, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
        """The scissor of the frame about to be drawn (``size`` physical pixels), None to draw it
        all (a new size, a new view, or nothing noted), or an empty one when only the marks changed
        (a surface frame composes them again over the kept picture)."""
        damage, self._damage = self._damage, []
        marks_only, self._marks_only = self._marks_only, False
        if size != self._drawn_size:
            self._drawn_size = size
            return None
        if not damage:  # all of it, unless only the marks changed (to a surface: composed again)
            return (0, 0, 0, 0) if marks_only and damage is not None else None
        scale = size[0] / max(1, self.width())
        left = min(r[0] for r in damage) * scale
        top = min(r[1] for r in damage) * scale
        right = max(r[2] for r in damage) * scale
        bottom = max(r[3] for r in damage) * scale
        self.partial_frames += 1
        x0, y0 = max(0, int(left)), max(0, int(top))
        x1, y1 = min(size[0], int(np.ceil(right))), min(size[1], int(np.ceil(bottom)))
        return (x0, y0, max(1, x1 - x0), max(1, y1 - y0)) if x1 > x0 and y1 > y0 else (0, 0, 1, 1)

    # -------------------------------------------------------------------------------- tools
    def set_tool(self, name: str) -> None:
        """Make tool ``name`` the active one (a drag in progress goes on with its tool)."""
        tool = self.tools[check_tool(name)]
        if tool is not self.tool:
            self.tool.deactivate()
            self.tool = tool
        self._show_cursor(tool.cursor)

    def brush_tool(self, name: str) -> BrushTool:
        return self.tools[name]

    def space_pressed(self) -> None:
        """Space went down: a left drag pans until it goes up."""
        self._space_held, self._space_pan_used = True, False

    def space_released(self) -> bool:
        """Space went up; True when it was a tap (it panned nothing)."""
        self._space_held = False
        return not self._space_pan_used

    def _show_cursor(self, name: str) -> None:
        self.setCursor(_CURSORS[name])

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
        self._dispatch_pointer()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self._note_pressure(event)
        super().mouseMoveEvent(event)
        self._dispatch_pointer()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().mouseReleaseEvent(event)
        self._dispatch_pointer()

    def _pace(self, fps: int) -> None:
        """Let rendercanvas look for requested frames ``fps`` times a second."""
        if fps != self._fps:
            self._fps = fps
            self.set_update_mode("ondemand", max_fps=fps)

    def _dispatch_pointer(self) -> None:
        """Hand the pointer event rendercanvas just queued to the tools now. rendercanvas would
        hold it until its scheduler's next look (up to 1/MAX_FPS later) and merge the moves that
        arrive meanwhile; a stroke's dabs would start that much later, and a merged move would take
        the pressure of the last one."""
        self._events.flush()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        screen = self._screen
        composed = screen.composed if screen is not None else 0
        super().paintEvent(event)  # to a surface: draws, composes the marks and presents
        if screen is not None:
            self._drawn_since_paint = screen.composed > composed
        else:
            painter = QPainter(self)
            self._paint_marks(painter)
            painter.end()
            if event.rect().contains(self._marks_due):
                self._marks_due = QRect()
                self._marks_timer.stop()
        self.last_paint_time = time.perf_counter()
        if self.lanes.streaming and not self._stream_timer.isActive():
            self._stream_timer.start()
        self._frame_painted()
        if self.frames_presented == 1:  # the document shows: now load the brushes' GPU kernels
            warm_up_later(self.session.document)
        if not self.interacting:
            self._pace(MAX_FPS)

    # ----------------------------------------------------------------------- pointer handlers
    def _pointer(self, event) -> Pointer:
        """The event in the coordinates of its lane (the pressed one while a drag lasts)."""
        bands = self.bands()
        if self._drag is None:
            found = self.lanes.lane_at(event["y"], max(1, self.height()))
            if found is None:  # in a gap: the nearest lane
                centres = [first + rows / 2 for first, rows in bands]
                found = min(range(len(bands)), key=lambda i: abs(centres[i] - event["y"]))
            self._lane = found
        y = event["y"] - bands[self._lane][0]
        return Pointer(
            event["x"],
            y,
            self.mapping().to_document(event["x"], y),
            button=event.get("button", 0),
            modifiers=frozenset(event.get("modifiers") or ()),
            time=event.get("time_stamp", 0.0),
            pressure=self._pressure,
            channel=self.lanes.channels[self._lane],
        )

    def _on_down(self, event) -> None:
        if self._drag is not None:
            return
        pointer = self._pointer(event)
        panning = pointer.button == MIDDLE or (pointer.button == LEFT and self._space_held)
        tool = self._pan if panning else self.tool
        if tool.press(pointer):
            self._drag = tool
            self._pace(INTERACTING_FPS)
            if tool is self._pan:
                self._space_pan_used = self._space_held
                self._show_cursor("closed_hand")

    def _on_move(self, event) -> None:
        self._over = event
        pointer = self._pointer(event)
        if self._drag is not None:  # first: a stroke's dabs start while the readout is written
            self._drag.drag(pointer)
        else:
            self.tool.hover(pointer)
        self.cursor_moved.emit(pointer.point)

    def _on_up(self, event) -> None:
        if self._drag is None:
            return
        pointer = self._pointer(event)
        if self._drag is not self._pan and pointer.button != LEFT:
            return
        tool, self._drag = self._drag, None
        tool.release(pointer)
        self._show_cursor(self.tool.cursor)

    def _on_wheel(self, event) -> None:
        modifiers = event.get("modifiers") or ()
        amount = event["dy"] + event["dx"]
        pointer = self._pointer(event)
        mapping = self.mapping()
        if "Control" in modifiers:
            factor = WHEEL_ZOOM_PER_UNIT ** (-amount)
            along_freq = "Shift" in modifiers
            view = mapping.zoomed(
                pointer.x,
                pointer.y,
                time_factor=1.0 if along_freq else factor,
                freq_factor=factor if along_freq else 1.0,
            )
        elif "Shift" in modifiers:
            view = mapping.panned(0, -amount / 4)
        else:
            view = mapping.panned(-amount / 4, 0)
        self.set_view(view)

    def _on_leave(self, event) -> None:
        self._over = None
        self.tool.leave()
        self.cursor_moved.emit(None)

    def _view_moved_under_pointer(self) -> None:
        """A zoom, pan or change of lanes under a still pointer: the outline and the readout follow
        what lies under it now (not a drag's: its tool placed it)."""
        if self._over is not None and self._drag is None:
            self._on_move(self._over)

    def _on_key(self, event) -> None:
        if event["key"] == "Escape":
            self.cancel_drag()

    def cancel_drag(self) -> bool:
        """Abandon the stroke, pan or selection drag in progress (Escape); True if there was one."""
        if self._drag is None:
            return False
        tool, self._drag = self._drag, None
        tool.cancel()
        self._show_cursor(self.tool.cursor)
        return True

    @property
    def painting(self) -> bool:
        """A stroke is in progress (begun by the pointer, or still being painted)."""
        return self.painter.painting or self.painter.busy

    @property
    def interacting(self) -> bool:
        """A stroke, a pan or a selection drag is in progress, or a stroke is still being
        painted."""
        return self._drag is not None or self.painter.busy

    def finish_painting(self, timeout: float | None = None) -> bool:
        """Block until the strokes the pointer made are painted (tests and benchmarks: the window
        itself waits on a timer, ``app/window/when_idle.py``)."""
        return self.painter.wait_idle(timeout)

    def _on_gpu_error(self, error) -> None:
        if str(error) != self._gpu_error:
            self._gpu_error = str(error)
            self.gpu_failed.emit(self._gpu_error)

    def close_renderer(self) -> None:
        """Finish painting, then release the GPU resources (the canvas can no longer draw)."""
        self.painter.close()
        self._stream_timer.stop()
        self.lanes.close()
        if self._screen is not None:
            self._screen.release()
