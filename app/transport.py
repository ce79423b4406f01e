"""Play, pause, play from the cursor, loop the selection, A/B bypass: the window's side of playback.

Owns the :class:`PlaybackEngine` of the open document and its :class:`Resynthesizer`, and polls the
engine's position on a timer to move the playhead (the audio thread never touches Qt).
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QTimer, Signal

from spectropaint.app.playback import OutputDevice, PlaybackEngine
from spectropaint.app.resynthesis import Resynthesizer
from spectropaint.transforms.regions import Region

PLAYHEAD_INTERVAL_MS = 33


class Transport(QObject):
    """Playback of one document.

    Signals
    -------
    playhead_moved(float)
        Seconds of the playhead (while playing, and after seeks).
    state_changed()
        Started or stopped playing.
    """

    playhead_moved = Signal(float)
    state_changed = Signal()

    def __init__(
        self,
        document,
        lock: threading.Lock,
        output_device: OutputDevice,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.sample_rate = document.sample_rate
        self.engine = PlaybackEngine(document.audio.samples, self.sample_rate, device=output_device)
        self.resynthesizer = Resynthesizer(document, self.engine, lock)
        self.cursor_seconds = 0.0
        self.selection: tuple[float, float] | None = None
        self.looping = False
        self._was_playing = False
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
        return self.engine.position / self.sample_rate

    # ------------------------------------------------------------------------------- control
    def toggle(self) -> None:
        """Pause when playing, else play from the playhead (RuntimeError without a device)."""
        if self.engine.playing:
            self.engine.pause()
        else:
            self.engine.play()
        self._tick()

    def play_from_cursor(self) -> None:
        self.engine.play(from_sample=round(self.cursor_seconds * self.sample_rate))
        self._tick()

    def set_cursor(self, seconds: float) -> None:
        """The edit cursor (where Play from Cursor starts); the playhead moves there too."""
        self.cursor_seconds = max(0.0, seconds)
        self.engine.seek(round(self.cursor_seconds * self.sample_rate))
        self.playhead_moved.emit(self.engine.position / self.sample_rate)

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
            start, stop = (round(s * self.sample_rate) for s in self.selection)
            self.engine.set_loop((start, stop))

    # ------------------------------------------------------------------------------- edits
    def edited(self, region: Region) -> None:
        """The document changed in ``region``: re-synthesise what it reaches (off this thread)."""
        self.resynthesizer.schedule(region)

    def _tick(self) -> None:
        playing = self.engine.playing
        if playing or self._was_playing:
            self.playhead_moved.emit(self.engine.position / self.sample_rate)
        if playing != self._was_playing:
            self._was_playing = playing
            if not playing:
                self.engine.pause()  # reached the end: stop the silent stream
            self.state_changed.emit()
        if playing and not self.timer.isActive():
            self.timer.start()
        elif not playing and self.timer.isActive():
            self.timer.stop()

    def close(self) -> None:
        self.timer.stop()
        self.resynthesizer.close()
        self.engine.close()
