"""The coarse picture of a sound being opened, on the canvas's place: drawn by the same renderer
and lanes as a document, so the rulers, scroll bars and zoom sliders read its true seconds and Hz.

It draws a :class:`~spectropaint.transforms.files.coarse_read.CoarseDocument` and nothing can edit
it: a press says what is happening instead (:attr:`CoarseCanvas.pressed`). The editor area shows it
as it shows a canvas (``view``, ``mapping``, ``bands``, ``stacked``, ``set_view``,
``view_changed``).
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget
from rendercanvas.qt import QRenderWidget

from spectropaint.app.window.canvas_widget import MAX_FPS
from spectropaint.app.window.lane_canvas import LaneCanvas
from spectropaint.gpu.canvas import attach_canvas
from spectropaint.gpu.lanes import LaneRenderer
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping
from spectropaint.transforms.files.coarse_read import CoarseDocument


class CoarseCanvas(LaneCanvas, QRenderWidget):
    """Draws ``document`` (a coarse one) with ``view``, stacked or not, on ``device``."""

    view_changed = Signal()
    pressed = Signal()
    """The person pressed on the picture (the owner says what it waits for)."""

    def __init__(
        self,
        document: CoarseDocument,
        *,
        device,
        view: ViewSettings,
        stacked: bool,
        parent: QWidget | None = None,
    ):
        super().__init__(parent, update_mode="ondemand", max_fps=MAX_FPS)
        self.document = document
        view = dataclasses.replace(view, channel=min(view.channel, document.n_channels - 1))
        self.lanes = LaneRenderer(device, document, view, stacked=stacked)
        attach_canvas(self.lanes, self)
        self._count_frames()
        self.setMinimumSize(200, 120)
        self.add_event_handler(lambda event: self.pressed.emit(), "pointer_down")

    def mapping(self) -> ViewMapping:
        """The first lane's pixels to the coarse document's coordinates."""
        return self.lane_mapping(0)

    def set_view(self, view: ViewSettings) -> None:
        self.lanes.show(view, self.lanes.stacked)
        self.request_draw()
        self.view_changed.emit()

    def set_look(self, fields: dict) -> None:
        """Take the view panel's fields (colours, scale, channel, mode, ``stacked``)."""
        fields = dict(fields)
        stacked = fields.pop("stacked", self.lanes.stacked)
        if fields.get("freq_scale", self.view.freq_scale) != self.view.freq_scale:
            fields["freq_range"] = None
        view = dataclasses.replace(self.view, **fields)
        view = dataclasses.replace(view, channel=min(view.channel, self.document.n_channels - 1))
        self.lanes.show(view, stacked)
        self.request_draw()
        self.view_changed.emit()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        self._frame_painted()

    def close_renderer(self) -> None:
        self.lanes.close()
