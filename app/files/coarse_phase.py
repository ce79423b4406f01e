"""While a long sound is analysed: its coarse picture in the canvas's place, progress and Cancel in
the status bar, and nothing that could edit, play or save.

:func:`~spectropaint.app.files.file_actions.start_open` reads a coarse picture first
(:func:`~spectropaint.transforms.files.coarse_read.read_coarse`, a fraction of a second) and hands
it here while the full analysis goes on. :class:`CoarsePhase` sets the open document aside
(``MainWindow.set_aside``: its views close, its session is kept), shows the picture on a
:class:`~spectropaint.app.window.coarse_canvas.CoarseCanvas` (the rulers, scroll bars, zoom
sliders and view panel work on it), and puts the job's progress in the status bar ("Analysing
song.wav... 40 %") beside the window's Cancel button; Escape cancels too. The window has no document
meanwhile, so editing, playback, saving and exporting are off, and a press on the picture says
why. When the full document arrives it replaces the picture at the same place in seconds and Hz;
when opening fails or is cancelled, the document set aside comes back as it was.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel

from spectropaint.app.window.coarse_canvas import CoarseCanvas
from spectropaint.gpu.errors import GPUUnavailableError

if TYPE_CHECKING:
    from spectropaint.app.files.workers import Job
    from spectropaint.app.window.main_window import MainWindow
    from spectropaint.transforms.files.coarse_read import CoarseDocument

log = logging.getLogger(__name__)


class CoarsePhase:
    """The coarse picture of ``document`` shown in ``window`` while ``job`` analyses the sound.

    Call :meth:`finish` when the job ends (before showing its document, if any).
    """

    def __init__(self, window: MainWindow, job: Job, document: CoarseDocument):
        from spectropaint.gpu.adapter import shared_device

        self.window, self.job, self.document = window, job, document
        self.name = os.path.basename(document.path)
        self.fraction = 0.0
        view, stacked = window.fresh_view(document.n_channels), window.stacked
        self.canvas = CoarseCanvas(document, device=shared_device(), view=view, stacked=stacked)
        self.kept = window.set_aside()
        """The document that was open, shown again if this one does not open."""
        window.coarse_phase = self
        self.canvas.setObjectName("coarse_canvas")
        self.canvas.pressed.connect(lambda: self.refuse("Editing"))
        window.editor.set_canvas(self.canvas)
        window.view_panel.set_values(self.canvas.view, document.n_channels, self.canvas.stacked)
        window.view_panel.changed.connect(self.canvas.set_look)
        window.setWindowTitle(f"{self.name} (analysing) — SpectroPaint")
        status = window.statusBar()
        self.label = QLabel()
        self.label.setObjectName("analysing")
        status.insertPermanentWidget(0, self.label)
        self.cancel_button = window.job_cancel.button
        """The status line's Cancel (Escape too), which stops the job: :meth:`cancel`."""
        window.job_cancel.watch(job, self.cancel)
        self.show_progress(0.0)
        job.progressed.connect(self.show_progress)
        job.hide_dialog()

    @classmethod
    def begin(cls, window: MainWindow, job: Job, document: CoarseDocument) -> CoarsePhase | None:
        """Show ``document`` for ``job`` unless the job is over or the GPU cannot draw it (the
        full picture then comes as before)."""
        if job.finished or window.coarse_phase is not None:
            return None
        try:
            return cls(window, job, document)
        except GPUUnavailableError:
            log.exception("no coarse picture of %s", document.path)
            return None

    def show_progress(self, fraction: float) -> None:
        self.fraction = min(max(fraction, 0.0), 1.0)
        self.label.setText(f"Analysing {self.name}… {round(100 * self.fraction)} %")

    def refuse(self, what: str) -> None:
        """Say that ``what`` waits for the analysis (nothing of it happens)."""
        self.window.statusBar().showMessage(
            f"{what} waits until {self.name} is analysed ({round(100 * self.fraction)} %); "
            "Escape cancels opening it",
            4000,
        )

    def cancel(self) -> None:
        self.label.setText(f"Cancelling the opening of {self.name}…")
        self.job.cancel()

    def finish(self) -> tuple[tuple[float, float], tuple | None] | None:
        """Take the picture away (then show the new document, or :meth:`put_back` the old one).
        Returns where the picture was zoomed or moved to (its seconds at the edges and its Hz
        range, None for all), for ``MainWindow.show_place``; None when it showed everything."""
        window, view = self.window, self.canvas.view
        window.coarse_phase = None
        place = None
        if view.time_range is not None or view.freq_range is not None:
            place = self.canvas.mapping().seconds_span, view.freq_range
        window.view_panel.changed.disconnect(self.canvas.set_look)
        window.store.stacked = self.canvas.lanes.stacked  # the view panel's choice meanwhile
        window.statusBar().removeWidget(self.label)
        self.label.deleteLater()
        window.editor.clear_canvas()
        self.canvas.close_renderer()
        self.canvas.close()
        self.canvas.deleteLater()
        window.listeners.update_title()
        return place

    def put_back(self, *, opened: bool) -> None:
        """After :meth:`finish`: close the document set aside for good when the new one is
        ``opened`` (shown); show it again otherwise."""
        window = self.window
        if self.kept is None:
            if not opened:
                window.view_panel.set_values(window.initial_view, 1)
        elif opened:
            self.kept[0].close()
        else:
            window.bring_back(self.kept)
