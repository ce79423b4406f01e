"""The window's central area: the waveform overview, the time ruler, the frequency ruler, the canvas
and its colour bar, scroll bars along both axes and zoom sliders for time and frequency.

It keeps every one of them in step with the canvas's view (:meth:`EditorArea.sync`, on each
``view_changed``) and turns their moves into views (:mod:`spectropaint.app.navigation`); with no
canvas it shows a placeholder and blank rulers.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QScrollBar, QSlider, QWidget

from spectropaint.app.navigation import (
    freq_scroll,
    time_scroll,
    view_at_freq_scroll,
    view_at_seconds,
    view_at_time_scroll,
    view_at_zoom,
    zoom_fraction,
)
from spectropaint.app.window.canvas_widget import SpectrogramCanvas
from spectropaint.app.window.coarse_canvas import CoarseCanvas
from spectropaint.app.window.overview import Overview
from spectropaint.app.window.rulers import ColorBar, FrequencyRuler, TimeRuler
from spectropaint.gpu.view import ViewSettings

ZOOM_STEPS = 1000


def _zoom_slider(name: str, tip: str) -> QSlider:
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setObjectName(name)
    slider.setRange(0, ZOOM_STEPS)
    slider.setFixedWidth(110)
    slider.setToolTip(tip)
    return slider


class EditorArea(QWidget):
    """The overview, rulers, canvas slot, colour bar, scroll bars and zoom sliders."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.canvas: SpectrogramCanvas | CoarseCanvas | None = None
        self._syncing = False
        self.overview = Overview()
        self.overview.setObjectName("overview")
        self.time_ruler = TimeRuler()
        self.freq_ruler = FrequencyRuler()
        self.color_bar = ColorBar()
        self.placeholder = QLabel()
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setMinimumSize(200, 120)
        self.time_scroll = QScrollBar(Qt.Orientation.Horizontal)
        self.time_scroll.setObjectName("time_scroll")
        self.freq_scroll = QScrollBar(Qt.Orientation.Vertical)
        self.freq_scroll.setObjectName("freq_scroll")
        self.time_zoom = _zoom_slider("time_zoom", "Zoom along time (Ctrl+= and Ctrl+-)")
        self.freq_zoom = _zoom_slider(
            "freq_zoom", "Zoom along frequency (Ctrl+Shift+= and Ctrl+Shift+-)"
        )
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.time_scroll, 1)
        bottom.addWidget(QLabel(" Time"))
        bottom.addWidget(self.time_zoom)
        bottom.addWidget(QLabel(" Freq"))
        bottom.addWidget(self.freq_zoom)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(0)
        self.grid.addWidget(self.overview, 0, 1)
        self.grid.addWidget(self.time_ruler, 1, 1)
        self.grid.addWidget(self.freq_ruler, 2, 0)
        self.grid.addWidget(self.placeholder, 2, 1)
        self.grid.addWidget(self.freq_scroll, 2, 2)
        self.grid.addWidget(self.color_bar, 2, 3)
        self.grid.addLayout(bottom, 3, 1, 1, 3)
        self.grid.setColumnStretch(1, 1)
        self.grid.setRowStretch(2, 1)
        self.time_scroll.valueChanged.connect(self._time_scrolled)
        self.freq_scroll.valueChanged.connect(self._freq_scrolled)
        self.time_zoom.valueChanged.connect(lambda value: self._zoomed("time", value))
        self.freq_zoom.valueChanged.connect(lambda value: self._zoomed("freq", value))
        self.overview.range_chosen.connect(self._overview_chose)
        self.clear_canvas()

    # ------------------------------------------------------------------------------- canvas
    def set_canvas(self, canvas: SpectrogramCanvas | CoarseCanvas) -> None:
        """Show ``canvas`` (the overview gets its waveform with :meth:`Overview.set_summary`), or
        the coarse picture of a sound being opened."""
        self.canvas = canvas
        self.placeholder.hide()
        self.grid.addWidget(canvas, 2, 1)
        for widget in (self.time_scroll, self.freq_scroll, self.time_zoom, self.freq_zoom):
            widget.setEnabled(True)
        canvas.view_changed.connect(self.sync)
        self.sync()

    def clear_canvas(self) -> None:
        """No document: the placeholder, blank rulers, nothing to scroll."""
        if self.canvas is not None:
            self.canvas.view_changed.disconnect(self.sync)
            self.grid.removeWidget(self.canvas)
            self.canvas = None
        self.placeholder.setText("Open a sound (Ctrl+O) or drop a file here")
        self.placeholder.show()
        self.time_ruler.set_span(None)
        self.time_ruler.set_playhead(None)
        self.freq_ruler.set_span(None)
        self.overview.set_summary(None)
        for widget in (self.time_scroll, self.freq_scroll, self.time_zoom, self.freq_zoom):
            widget.setEnabled(False)

    def picture_size(self) -> tuple[int, int]:
        """Pixels of the canvas's place (the placeholder's while no document is shown)."""
        widget = self.canvas if self.canvas is not None else self.placeholder
        return max(16, widget.width()), max(16, widget.height())

    def show_view_look(self, view: ViewSettings) -> None:
        """The colour bar of ``view``'s colours (also before a document is open)."""
        if view.mode == "phase":
            self.color_bar.set_phase(view.phase_colormap)
        else:
            self.color_bar.set_mapping(
                view.colormap, view.resolved_floor_db, view.range_db, view.gamma
            )

    def sync(self) -> None:
        """Rulers, colour bar, overview, scroll bars and zoom sliders from the canvas's view."""
        mapping = self.canvas.mapping()
        self.time_ruler.set_span(mapping.seconds_span)
        _, _, low, high = mapping.visible
        bands = self.canvas.bands() if self.canvas.stacked else None
        self.freq_ruler.set_span((low, high), mapping.view.freq_scale, bands)
        self.show_view_look(mapping.view)
        self.overview.set_visible(*mapping.seconds_span)
        self._syncing = True
        try:
            for bar, state in (
                (self.time_scroll, time_scroll(mapping)),
                (self.freq_scroll, freq_scroll(mapping)),
            ):
                bar.setRange(0, state.maximum)
                bar.setPageStep(state.page)
                bar.setSingleStep(max(1, state.page // 10))
                bar.setValue(state.value)
            self.time_zoom.setValue(round(zoom_fraction(mapping, "time") * ZOOM_STEPS))
            self.freq_zoom.setValue(round(zoom_fraction(mapping, "freq") * ZOOM_STEPS))
        finally:
            self._syncing = False

    # ------------------------------------------------------------------------- navigation
    def _show(self, view: ViewSettings) -> None:
        if view != self.canvas.view:
            self.canvas.set_view(view)

    def _time_scrolled(self, value: int) -> None:
        if not self._syncing and self.canvas is not None:
            self._show(view_at_time_scroll(self.canvas.mapping(), value))

    def _freq_scrolled(self, value: int) -> None:
        if not self._syncing and self.canvas is not None:
            self._show(view_at_freq_scroll(self.canvas.mapping(), value))

    def _zoomed(self, axis: str, value: int) -> None:
        if not self._syncing and self.canvas is not None:
            self._show(view_at_zoom(self.canvas.mapping(), axis, value / ZOOM_STEPS))

    def _overview_chose(self, start: float, stop: float) -> None:
        if self.canvas is None:
            return
        self._show(view_at_seconds(self.canvas.mapping(), start, stop))
