"""Keeping the playback buffer equal to the edited document, on a thread of its own.

Each change of the session (a pointer event of a stroke, an undo, a redo) hands the changed boxes
to :meth:`Resynthesizer.schedule`, which only queues the samples they reach. The worker merges
pending sample spans, asks the document for the edited samples there (``Document.edited_between``:
the original plus the inverse of the differences of every block's edited frames that reach them, in
proportion to the span) and swaps them into the playback engine (:meth:`PlaybackEngine.update_span`,
tear-free while playing). A span is resynthesised piece by piece, in the pieces its transform cuts
it into (:meth:`~spectropaint.transforms.transform.Transform.resynthesis_pieces`: 1.5 s for the
STFT, one slice on the slices' grid for the NSGT), and the document lock is held only while a piece
is read, so a stroke waits at most for one piece's resynthesis.

Spans scheduled with ``defer`` (a stroke's pointer events) wait for the next span scheduled
without it (the stroke's end), unless playback is heard (:meth:`Resynthesizer.listen`): on a 2-core
CPU, resynthesising minutes of audio while a stroke across a long file paints takes the cores the
painting needs, and nobody hears it until playback starts. Whether playback is heard is decided
under the same lock as the hold, so a pointer event that arrives as playback starts cannot hold its
span again after :meth:`~Resynthesizer.listen` let the held ones go.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from spectropaint.app.playback.engine import PlaybackEngine
from spectropaint.transforms.regions import Region, Regions

log = logging.getLogger(__name__)


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching half-open spans merged, in order."""
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    return merged


class Resynthesizer:
    """Re-synthesises the dirty frames of ``document`` into ``engine``'s edited buffer.

    Parameters
    ----------
    document : Document
    engine : PlaybackEngine
    lock : threading.Lock
        The lock strokes hold while they write the document.
    on_span : callable, optional
        Called on the resynthesis thread with ``(start, stop)`` samples after each span is in the
        engine (the window's waveform overview follows the edits with it).
    """

    def __init__(
        self,
        document,
        engine: PlaybackEngine,
        lock: threading.Lock,
        on_span: Callable[[int, int], None] | None = None,
    ):
        self.document = document
        self.engine = engine
        self.lock = lock
        self.on_span = on_span
        self.error: BaseException | None = None
        self.spans_done = 0
        self._pending: list[tuple[int, int, int]] = []
        self._held = False
        """Pending spans wait (:meth:`schedule` with ``defer``)."""
        self._live = False
        """Playback is heard: nothing is held (:meth:`listen`)."""
        self._busy = False
        self._closing = False
        self._condition = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="resynthesis", daemon=True)
        self._thread.start()

    def schedule(self, region: Region | Regions, *, defer: bool = False) -> None:
        """Queue the samples that ``region``'s boxes reach (any thread). ``defer`` (a stroke's
        pointer event) holds them, and whatever is pending, until a span is scheduled without it,
        unless playback is heard (:meth:`listen`)."""
        spans = [self.document.samples_of(part) for part in region.parts]
        with self._condition:
            defer = defer and not self._live
            self._pending.extend(spans)
            if spans or not defer:
                self._held = defer
            self._condition.notify_all()

    def listen(self, live: bool) -> None:
        """``live``: playback is starting or playing, so the held spans go now and none is held
        from now on; False: it stopped, and a stroke's spans may wait for its end again."""
        with self._condition:
            self._live = live
            if live:
                self._held = False
            self._condition.notify_all()

    @property
    def held(self) -> bool:
        """Spans wait for the stroke that made them to end."""
        with self._condition:
            return self._held and bool(self._pending)

    def _resynthesise(self, spans: list[tuple[int, int]]) -> None:
        """Each span piece by piece into the engine; what is left goes back to wait when a stroke
        begins deferring."""
        for index, (start, stop) in enumerate(spans):
            for piece0, piece1 in self.document.transform.resynthesis_pieces(start, stop):
                if self._yield_to_stroke([(piece0, stop), *spans[index + 1 :]]):
                    return
                with self.lock:
                    samples = self.document.edited_between(piece0, piece1)
                self.engine.update_span(piece0, samples.astype(np.float32))
                if self.on_span is not None:
                    self.on_span(piece0, piece1)
            self.spans_done += 1

    def _yield_to_stroke(self, rest: list[tuple[int, int]]) -> bool:
        """A stroke began deferring spans: put ``rest`` back with them (True) to go on after it."""
        with self._condition:
            if not self._held or self._closing:
                return False
            self._pending.extend(rest)
            return True

    def _ready(self) -> bool:
        return bool(self._pending) and not self._held

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is ready or running (held spans wait for their stroke); False if
        ``timeout`` passed first."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._ready() and not self._busy, timeout)

    def close(self) -> None:
        with self._condition:
            self._closing = True
            self._condition.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._ready() or self._closing)
                if self._closing:
                    return
                spans, self._pending = merge_spans(self._pending), []
                self._busy = True
            try:
                self._resynthesise(spans)
            except Exception as exc:  # shown by the window; playback keeps the previous samples
                log.exception("resynthesis failed")
                self.error = exc
            finally:
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()
