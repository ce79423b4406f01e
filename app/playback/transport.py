"""Play, pause, stop, play the selection, play from the cursor, scrub, loop the selection, A/B
bypass: the window's side of playback.

Owns the :class:`PlaybackEngine` of the open document and its :class:`Resynthesizer`, and polls the
engine's position on a timer to move the playhead (the audio thread never touches Qt). The same poll
asks the engine whether the output device went away (:meth:`PlaybackEngine.check`); when it did,
playback stops and :attr:`Transport.failed` carries the message, while editing and resynthesis go on.
Play, when playback is unavailable, first looks for an output device again.
"""

from __future__ import annotations

import contextlib
import threading

from PySide6.QtCore import QObject, QTimer, Signal

from spectropaint.app.playback.engine import OutputDevice, PlaybackEngine, find_output_device
from spectropaint.app.playback.resynthesis import Resynthesizer
from spectropaint.app.session import Change, Session
from spectropaint.app.waveform_summary import WaveformSummary
from spectropaint.transforms import joined_at_exit
from spectropaint.transforms.geometry import samples_to_seconds, seconds_to_samples

PLAYHEAD_INTERVAL_MS = 33


class Transport(QObject):
    """Playback of one document.

    Signals
    -------
    playhead_moved(float)
        Seconds of the playhead (while playing, and after seeks).
    state_changed()
        Started or stopped playing.
    failed(str)
        Playback stopped because the output device failed, e.g. "Playback stopped: the output
        device 'USB Audio' went away (the stream stopped)"; once per failure, on the GUI thread.
        :attr:`available` is False from then on until Play finds a device again.
    """

    playhead_moved = Signal(float)
    state_changed = Signal()
    failed = Signal(str)
    waveform_changed = Signal()
    """:attr:`waveform` was made, or edits reached it (from another thread: connect queued)."""

    def __init__(
        self,
        session: Session,
        output_device: OutputDevice,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        document = session.document
        self.session = session
        self.sample_rate = document.sample_rate
        self.engine = PlaybackEngine(document.audio.samples, self.sample_rate, device=output_device)
        self.waveform: WaveformSummary | None = None
        """The edited signal's waveform (for the overview), made on a thread of its own, then
        kept up to date by resynthesis."""
        self._waveform_lock = threading.Lock()
        self._closing = threading.Lock()
        self._closed = False
        self.resynthesizer = Resynthesizer(
            document, self.engine, session.lock, on_span=self._waveform_span
        )
        joined_at_exit.start(self._make_waveform, name="waveform")
        session.changed.connect(self._session_changed)
        self.cursor_seconds = 0.0
        self.selection: tuple[float, float] | None = None
        self.looping = False
        self.started_at = 0.0
        """Seconds where playing last started (Stop goes back there)."""
        self._scrub_resume: bool | None = None
        """While scrubbing: whether it was playing before (None: not scrubbing)."""
        self._was_playing = False
        self._failures_reported = 0
        self.timer = QTimer(self)
        self.timer.setInterval(PLAYHEAD_INTERVAL_MS)
        self.timer.timeout.connect(self._tick)

    @property
    def available(self) -> bool:
        return self.engine.available

    @property
    def reason(self) -> str:
        return self.engine.reason

    @property
    def playing(self) -> bool:
        return self.engine.playing

    @property
    def playhead_seconds(self) -> float:
        return self._seconds(self.engine.position)

    # ------------------------------------------------------------------------------- control
    def toggle(self) -> None:
        """Pause when playing, else play from the playhead (see :meth:`play_from_cursor`)."""
        if self.engine.playing:
            self.engine.pause()
        else:
            self._play(None)
        self._tick()

    def stop(self) -> None:
        """Stop playing and put the playhead back where playing started."""
        self.engine.pause()
        self.engine.seek(seconds_to_samples(self.started_at, sample_rate=self.sample_rate))
        self.playhead_moved.emit(self.playhead_seconds)
        self._tick()

    def play_selection(self) -> None:
        """Play the time selection once, from its start to its end (the whole sound without one;
        a loop, when on, repeats it instead). Raises as :meth:`play_from_cursor`."""
        start, stop = self.selection or (0.0, self.engine.n_samples / self.sample_rate)
        first, last = seconds_to_samples((start, stop), sample_rate=self.sample_rate)
        self._play(int(first), until=int(last))
        self._tick()

    def go_to_end(self) -> None:
        self.set_cursor(self.engine.n_samples / self.sample_rate)

    # ------------------------------------------------------------------------------- scrubbing
    def scrub(self, seconds: float) -> None:
        """Hear the sound from ``seconds`` on: the first call starts playing there (when an output
        device can), each next one moves the playhead; :meth:`end_scrub` ends it. Without a device
        only the playhead moves."""
        if self._scrub_resume is None:
            self._scrub_resume = self.engine.playing
            if not self.engine.playing and self.engine.available:
                with contextlib.suppress(RuntimeError):  # a failing device reports through failed
                    self._play(seconds_to_samples(max(0.0, seconds), sample_rate=self.sample_rate))
        self.engine.seek(seconds_to_samples(max(0.0, seconds), sample_rate=self.sample_rate))
        self.playhead_moved.emit(self.playhead_seconds)
        self._tick()

    def end_scrub(self, seconds: float) -> None:
        """The scrub ended at ``seconds``: the edit cursor goes there; playing goes on only if it
        was playing before."""
        resume, self._scrub_resume = self._scrub_resume, None
        if not resume:
            self.engine.pause()
        if resume:
            self.engine.seek(seconds_to_samples(max(0.0, seconds), sample_rate=self.sample_rate))
            self.cursor_seconds = max(0.0, seconds)
        else:
            self.set_cursor(seconds)
        self._tick()

    @property
    def scrubbing(self) -> bool:
        return self._scrub_resume is not None

    def play_from_cursor(self) -> None:
        """Play from the edit cursor.

        When playback is unavailable this looks for an output device first (:meth:`reprobe`), and
        raises RuntimeError saying why when there is still none. A device failing as it starts is
        not raised: :attr:`failed` reports it.
        """
        self._play(seconds_to_samples(self.cursor_seconds, sample_rate=self.sample_rate))
        self._tick()

    def reprobe(self) -> bool:
        """Look for an output device again (PortAudio re-initialised); True when one can play.

        The engine keeps its buffers, playhead, loop and bypass; only its device changes.
        """
        if not self.engine.playing:
            self.engine.use_device(find_output_device(refresh=True))
        return self.engine.available

    def _play(self, from_sample: int | None, *, until: int | None = None) -> None:
        if not self.engine.available:
            self.reprobe()
        self.started_at = self._seconds(
            self.engine.position if from_sample is None else from_sample
        )
        self.resynthesizer.listen(True)  # what a stroke in progress painted, to be heard
        try:
            self.engine.play(from_sample=from_sample, until=until)
        except RuntimeError:
            self.resynthesizer.listen(False)
            if self.engine.failures == self._failures_reported:
                raise  # unavailable: the caller says why

    def set_cursor(self, seconds: float) -> None:
        """The edit cursor (where Play from Cursor starts); the playhead moves there too."""
        self.cursor_seconds = max(0.0, seconds)
        self.engine.seek(seconds_to_samples(self.cursor_seconds, sample_rate=self.sample_rate))
        self.playhead_moved.emit(self._seconds(self.engine.position))

    def rewind(self) -> None:
        self.set_cursor(0.0)

    def set_selection(self, span: tuple[float, float] | None) -> None:
        self.selection = span
        self._apply_loop()

    def set_looping(self, looping: bool) -> None:
        self.looping = looping
        self._apply_loop()

    def set_bypass(self, bypass: bool) -> None:
        self.engine.bypass = bypass

    def _apply_loop(self) -> None:
        if not self.looping:
            self.engine.set_loop(None)
            return
        if self.selection is None or self.selection[1] - self.selection[0] < 0.01:
            self.engine.set_loop((0, self.engine.n_samples))
        else:
            start, stop = seconds_to_samples(self.selection, sample_rate=self.sample_rate)
            self.engine.set_loop((start, stop))

    # ------------------------------------------------------------------------------- edits
    def _session_changed(self, change: Change) -> None:
        """Re-synthesise what the changed region reaches, on the resynthesis thread (any thread:
        scheduling only queues it): as each pointer event paints while playing, else when the
        stroke ends (the resynthesizer knows which, :meth:`Resynthesizer.listen`); for undo, redo,
        operations and settles at once."""
        self.resynthesizer.schedule(change.region, defer=change.kind == "paint")

    def _tick(self) -> None:
        self.engine.check()
        playing = self.engine.playing
        if playing or self._was_playing:
            self.playhead_moved.emit(self._seconds(self.engine.position))
        if playing != self._was_playing:
            self._was_playing = playing
            if not playing:
                self.engine.pause()  # reached the end: stop the silent stream
            self.state_changed.emit()
        if not playing:  # a stroke's spans may wait for its end again
            self.resynthesizer.listen(False)
        if playing and not self.timer.isActive():
            self.timer.start()
        elif not playing and self.timer.isActive():
            self.timer.stop()
        if self.engine.failures != self._failures_reported:
            self._failures_reported = self.engine.failures
            self.failed.emit(f"Playback stopped: {self.engine.failure}")

    # ------------------------------------------------------------------------------ waveform
    def _make_waveform(self) -> None:
        with self._waveform_lock:  # resynthesis waits: a span it adds meanwhile is not lost
            self.waveform = WaveformSummary(self.engine.edited())
        self._tell_waveform()

    def _waveform_span(self, start: int, stop: int) -> None:
        """Resynthesis put samples ``[start, stop)`` in the engine (its thread)."""
        with self._waveform_lock:
            if self.waveform is None:
                return  # made from the edited buffer after this: it has them
            self.waveform.update(self.engine.edited(), start, stop)
        self._tell_waveform()

    def _tell_waveform(self) -> None:
        """``waveform_changed``, from the waveform's threads, unless the transport was closed: the
        window may delete it then, and a signal from a deleted object raises on that thread."""
        with self._closing:
            if not self._closed:
                self.waveform_changed.emit()

    def _seconds(self, samples: int) -> float:
        return float(samples_to_seconds(samples, sample_rate=self.sample_rate))

    def close(self) -> None:
        with self._closing:
            self._closed = True
        self.session.changed.disconnect(self._session_changed)
        self.timer.stop()
        self.resynthesizer.close()
        self.engine.close()
