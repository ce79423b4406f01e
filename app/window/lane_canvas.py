"""What every canvas that draws a :class:`~spectropaint.gpu.lanes.LaneRenderer` has: its view and
lanes as the editor area reads them, and the count of frames it presented.

:class:`~.canvas_widget.SpectrogramCanvas` (a document) and :class:`~.coarse_canvas.CoarseCanvas`
(the coarse picture of a sound being opened) both take it, before ``QRenderWidget``.
"""

from __future__ import annotations

import time

from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping


class LaneCanvas:
    """A mixin for a ``QRenderWidget`` with ``self.lanes`` (a ``LaneRenderer``) and a
    ``view_changed`` signal; call :meth:`_count_frames` in its ``__init__``."""

    def _count_frames(self) -> None:
        self.frames_presented = 0
        """Frames drawn by the renderer and then painted on the widget (tests and benchmarks)."""
        self.last_present_time = 0.0
        self._drawn_since_paint = False

    @property
    def view(self) -> ViewSettings:
        return self.lanes.view

    @property
    def stacked(self) -> bool:
        """Every channel is shown in a lane of its own (and there are several)."""
        return self.lanes.stacked and len(self.lanes.channels) > 1

    def bands(self) -> list[tuple[int, int]]:
        """``(first_row, rows)`` of each lane, top to bottom."""
        return self.lanes.bands(max(1, self.height()))

    def lane_mapping(self, lane: int) -> ViewMapping:
        """Lane ``lane``'s pixels (from its own top row) to document coordinates."""
        return self.lanes.mapping(lane, max(1, self.width()), max(1, self.height()))

    def _rc_present_bitmap(self, **kwargs) -> None:
        # rendercanvas hands the rendered frame over here (possibly after an asynchronous
        # read-back); the next paint event shows it
        super()._rc_present_bitmap(**kwargs)
        self._drawn_since_paint = True

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.view_changed.emit()  # the lanes' heights, hence the rulers, changed

    def _frame_painted(self) -> None:
        """After a paint event: count the frame it showed, if it showed a new one."""
        if self._drawn_since_paint:
            self._drawn_since_paint = False
            self.frames_presented += 1
            self.last_present_time = time.perf_counter()
