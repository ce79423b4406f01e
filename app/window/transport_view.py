"""What playback shows: the playhead on the canvas and the time ruler, the counter and the meters
of the transport bar, the view following the playhead, and scrubbing from the time ruler.

One :class:`TransportView` per open document connects its
:class:`~spectropaint.app.playback.transport.Transport` to the widgets; the window makes it and
drops it with the document.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject

from spectropaint.app.playback.levels import measure
from spectropaint.app.playback.transport import Transport
from spectropaint.app.playhead_follow import follow
from spectropaint.app.window.canvas_widget import SpectrogramCanvas
from spectropaint.app.window.rulers import TimeRuler
from spectropaint.app.window.transport_bar import TransportBar


class TransportView(QObject):
    """Parameters: the document's transport, its canvas, the time ruler and the transport bar;
    ``follow_mode`` is ``'off'``, ``'page'`` or ``'smooth'`` (:mod:`spectropaint.app.playhead_follow`)."""

    def __init__(
        self,
        transport: Transport,
        canvas: SpectrogramCanvas,
        ruler: TimeRuler,
        bar: TransportBar,
        follow_mode: str = "page",
    ):
        super().__init__(transport)
        self.transport, self.canvas, self.ruler, self.bar = transport, canvas, ruler, bar
        self.follow_mode = follow_mode
        self._last_tick = time.perf_counter()
        bar.meter.set_channels(transport.engine.n_channels)
        transport.playhead_moved.connect(self.show_playhead)
        transport.state_changed.connect(self._state_changed)
        ruler.dragged.connect(transport.scrub)
        ruler.released.connect(self._ruler_released)
        self.show_playhead(transport.playhead_seconds)

    def show_playhead(self, seconds: float) -> None:
        """The playhead is at ``seconds``: mark it, count it, meter what plays, follow it."""
        transport = self.transport
        self.canvas.set_playhead(seconds)
        self.ruler.set_playhead(seconds)
        self.bar.show_time(seconds, transport.sample_rate)
        now = time.perf_counter()
        if transport.playing:
            peak, rms = measure(
                transport.engine.heard(), transport.engine.position, transport.sample_rate
            )
            self.bar.meter.show_levels(peak, rms, now - self._last_tick)
            if not self.canvas.interacting and not transport.scrubbing:
                view = follow(self.canvas.mapping(), seconds, self.follow_mode)
                if view is not None:
                    self.canvas.set_view(view)
        self._last_tick = now

    def _state_changed(self) -> None:
        self.bar.show_playing(self.transport.playing)
        if not self.transport.playing:
            self.bar.meter.reset()

    def _ruler_released(self, seconds: float, moved: bool) -> None:
        if moved or self.transport.scrubbing:
            self.transport.end_scrub(seconds)

    def close(self) -> None:
        self.ruler.dragged.disconnect(self.transport.scrub)
        self.ruler.released.disconnect(self._ruler_released)
        self.bar.meter.reset()
        self.bar.show_time(None)
        self.ruler.set_playhead(None)
