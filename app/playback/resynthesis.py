"""Keeping the playback buffer equal to the edited document, on a thread of its own.

Each change of the session (a pointer event of a stroke, an undo, a redo) hands the changed box to
:meth:`Resynthesizer.schedule`, which only queues it. The worker merges pending frame spans, asks the document for the edited samples those frames
reach (``Document.edited_span``: original plus the inverse of the difference, in proportion to the
span) and swaps them into the playback engine (:meth:`PlaybackEngine.update_span`, tear-free while
playing). The document lock is held only while the document is read, so a stroke waits at most for
one span's resynthesis.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from spectropaint.app.playback.engine import PlaybackEngine
from spectropaint.transforms.regions import Region

log = logging.getLogger(__name__)
CHUNK_FRAMES = 128


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
        self._pending: list[tuple[int, int]] = []
        self._busy = False
        self._closing = False
        self._condition = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="resynthesis", daemon=True)
        self._thread.start()

    def schedule(self, region: Region) -> None:
        """Queue the frames of ``region`` (any thread)."""
        if region.empty:
            return
        with self._condition:
            self._pending.append((region.frame0, region.frame1))
            self._condition.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or running; False if ``timeout`` passed first."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self) -> None:
        with self._condition:
            self._closing = True
            self._condition.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._pending or self._closing)
                if self._closing:
                    return
                spans, self._pending = merge_spans(self._pending), []
                self._busy = True
            try:
                for frame0, frame1 in spans:
                    for chunk0 in range(frame0, frame1, CHUNK_FRAMES):
                        chunk1 = min(frame1, chunk0 + CHUNK_FRAMES)
                        with self.lock:
                            start, samples = self.document.edited_span(chunk0, chunk1)
                        self.engine.update_span(start, samples.astype(np.float32))
                        if self.on_span is not None:
                            self.on_span(start, start + samples.shape[-1])
                    self.spans_done += 1
            except Exception as exc:  # shown by the window; playback keeps the previous samples
                log.exception("resynthesis failed")
                self.error = exc
            finally:
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()
