"""What the window shows of the open document as it changes: the title's modified mark, Undo and
Redo, the overview's waveform, the readout under the pointer, the edit cursor and selection handed
to playback, and the failures of playback and drawing.

:class:`WindowListeners` connects them to a document's session bridge, canvas and transport
(:meth:`WindowListeners.listen`); the window only lays out and dispatches.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QMessageBox

from spectropaint.app.readout import level_db, readout_text
from spectropaint.app.session import Change
from spectropaint.app.window.action_states import set_undo_actions
from spectropaint.gpu.view_mapping import Point
from spectropaint.transforms.geometry import seconds_label

PLAYBACK_OFF = "Playback is off"
READ_POLL_MS = 1
"""How often the readout looks whether the level under the pointer arrived from the GPU (behind a
stroke's kernels) instead of waiting for it on the window's thread."""


class WindowListeners:
    """Listens to the open document's session, canvas and transport for ``window``
    (a :class:`~spectropaint.app.window.main_window.MainWindow`)."""

    def __init__(self, window):
        self.window = window
        self._pointer: Point | None = None
        """Where the readout reads (None: the pointer is off the canvas)."""
        self._reading = None
        """``(point, levels on their way)`` the readout shows once they arrive."""
        self._read_timer = QTimer(window)
        self._read_timer.setSingleShot(True)
        self._read_timer.setInterval(READ_POLL_MS)
        self._read_timer.timeout.connect(self._show_reading)

    def listen(self, bridge, canvas, transport) -> None:
        """Connect to a newly opened document's ``bridge``, ``canvas`` and ``transport``."""
        window = self.window
        status = window.statusBar()
        self._pointer = self._reading = None
        canvas.cursor_moved.connect(self.show_readout)
        canvas.time_clicked_at.connect(self.set_cursor)
        canvas.selection_changed.connect(self.selection_changed)
        canvas.message.connect(status.showMessage)
        canvas.gpu_failed.connect(self.gpu_failed, Qt.ConnectionType.QueuedConnection)
        bridge.changed.connect(canvas.show_change)
        bridge.taken.connect(canvas.changes_taken)
        bridge.changed.connect(self.session_changed)
        bridge.changed.connect(window.history_panel.session_changed)
        bridge.notice.connect(status.showMessage)
        transport.state_changed.connect(self.transport_state)
        transport.failed.connect(self.playback_failed)
        transport.waveform_changed.connect(self.waveform_changed)

    def update_title(self) -> None:
        window, session = self.window, self.window.session
        name = session.name if session is not None else "SpectroPaint"
        note = " (recovered)" if session is not None and session.recovered else ""
        window.setWindowTitle(f"{name}{note}[*] — SpectroPaint")
        window.setWindowModified(session is not None and session.modified)

    def session_changed(self, change: Change) -> None:
        """The title's modified mark, Undo/Redo and the readout under a still pointer follow the
        session; another document gets new views (once every listener has heard the change)."""
        if change.kind == "document":
            QTimer.singleShot(0, self.window.document_replaced)
        elif self._pointer is not None and not change.region.empty and change.kind != "paint":
            # while painting, cursor_moved shows it: a readout per paint event waited for the GPU
            self.show_readout(self._pointer)
        if change.completes_edit and change.kind != "document":
            self.window.reference_view.audio_changed()
        if change.completes_edit or change.kind == "saved":
            self.update_title()
            session = self.window.session
            set_undo_actions(
                self.window.actions_by_name, session.history if session is not None else None
            )

    def waveform_changed(self) -> None:
        """Playback's waveform was made, or edits reached it: the overview shows it."""
        window = self.window
        if window.transport is not None and window.transport.waveform is not None:
            document = window.session.document
            window.overview.set_summary(
                window.transport.waveform, document.n_samples / document.sample_rate
            )

    def show_readout(self, point: Point | None) -> None:
        """The time, frequency and levels at ``point`` (None: the pointer left the canvas), shown
        when the levels arrived from the document's device
        (:class:`~spectropaint.transforms.torch_device.HostRead`): at once on the CPU, after the
        work queued before them on a GPU (the last point's wait is dropped)."""
        window = self.window
        self._pointer = point
        if point is None or window.session is None:
            self._reading = None
            window.readout.clear()
            return
        window.brush_panel.set_reference_hz(point.hz)
        self._reading = (point, window.session.document.magnitude_at(point.seconds, point.hz))
        self._show_reading()

    def _show_reading(self) -> None:
        if self._reading is None or self.window.session is None:
            return
        point, read = self._reading
        if read is not None and not read.ready():
            self._read_timer.start()
            return
        self._reading = None
        window = self.window
        levels = None
        if read is not None:
            full_scale = window.session.document.full_scale
            levels = [level_db(float(value), full_scale) for value in read.values()]
        window.readout.setText(
            readout_text(point.seconds, point.hz, levels, window.canvas.view.channel)
        )

    def set_cursor(self, seconds: float) -> None:
        if self.window.transport is not None:
            self.window.transport.set_cursor(seconds)
            self.window.statusBar().showMessage(f"Cursor at {seconds_label(seconds)}", 3000)

    def selection_changed(self, span) -> None:
        if self.window.transport is not None:
            self.window.transport.set_selection(span)

    def playback_failed(self, message: str) -> None:
        """The output device went away while playing: say so; the document and editing go on."""
        window = self.window
        window.statusBar().showMessage(message)
        window.set_document_actions(True)
        QMessageBox.warning(
            window,
            "Playback stopped",
            f"{message}.\n\nYour edits are kept and you can go on editing. "
            "Press Play to look for an output device again.",
        )

    def gpu_failed(self, message: str) -> None:
        """Drawing failed on the GPU: the document is intact; say what happened and what to do."""
        self.window.statusBar().showMessage(message)
        QMessageBox.critical(
            self.window,
            "Cannot draw",
            f"{message}\n\nYour edits are kept: save the project (Ctrl+S) before restarting.",
        )

    def transport_state(self) -> None:
        window = self.window
        playing = window.transport is not None and window.transport.playing
        if playing:
            window.statusBar().withdraw(PLAYBACK_OFF)
        window.actions_by_name["play_pause"].setText(("&Pause" if playing else "&Play") + "\tSpace")
        window.set_document_actions(window.session is not None)
