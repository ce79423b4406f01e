"""Painting off the window's thread: a stroke's pointer events are applied to the session by a
thread of its own, in the order the pointer gave them. No Qt.

The window's thread only checks a stroke's settings when it begins and queues events; it never
waits for dabs, so the outline follows the pointer and the picture keeps drawing however much work
a move makes (one move across a ten-minute file seen whole reaches hundreds of frames). A long move
is applied in steps of at most :data:`DABS_PER_STEP` dabs, each its own event on the same line
(time and pressure interpolated), so the session's change event (and the picture) follows the
stroke as it is painted; the recorded stroke holds those steps, so replaying it gives the same
dabs. Steps, and moves that queued while the thread was busy, are applied together, in batches
sized by the stroke's pace to take about :data:`BATCH_SECONDS` (:class:`BatchPace`): each batch
costs one read, kernel and write per group of dabs however many moves it holds, so a thread that
falls behind catches up instead of falling further behind, and a device that paints a long move
quickly paints it in one batch, one change and one frame (dab positions do not depend on how events
are batched, nor the result, beyond float rounding, on how dabs are grouped).

:class:`PaintQueue` offers the session's stroke methods (``begin_stroke``, ``paint``,
``end_stroke``, ``cancel_stroke``, ``painting``), so a brush tool drives either. Whoever reads or
changes the document outside a stroke (undo, redo, saving, exports) first lets it finish: the
window on a timer until :attr:`PaintQueue.busy` is False (``app/window/when_idle.py``), code
without an event loop with :meth:`PaintQueue.wait_idle`.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from spectropaint.app.session import BrushFailed, Session
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent

log = logging.getLogger(__name__)
DABS_PER_STEP = 128
"""A move reaching more dabs than this is applied in steps of about this many, each an event of
the recorded stroke (below :data:`~spectropaint.brushes.stroke.MAX_DABS_PER_EVENT`, so that no
step is thinned)."""
BATCH_SECONDS = 0.012
"""What a batch of steps (and of moves queued behind) is sized to take at the stroke's pace: the
picture and playback follow a long move at least about this often (each batch is one change), and
a device that paints fast takes a long move in one batch. On the H200 a move across a ten-minute
file seen whole (about 700 dabs at radius 8) was painted in two batches of at most 512 dabs, each
followed by a frame drawn on the window's thread while the painting thread wanted the interpreter;
in one batch the move showed 0.7 ms sooner (``bench_app.py``'s stroke with batches of 512 and
of 2048 dabs alternated in one process, median of three strokes)."""
DABS_PER_BATCH = 512
"""The dabs of a stroke's batches before its pace is known."""
MOST_DABS_PER_BATCH = 4096
"""The most dabs a batch takes however fast they are painted (a stroke's first batch of a long
move may have been slower than the rest)."""
TIMED_DABS = 64
"""Batches of fewer dabs do not set the pace: their fixed costs (a read and write per group, the
change) would count as the dabs' own."""


class BatchPace:
    """How many dabs a stroke's next batch takes: :data:`BATCH_SECONDS` at the seconds a dab took in
    its last timed batch (at least :data:`TIMED_DABS` dabs), between :data:`DABS_PER_STEP` and
    :data:`MOST_DABS_PER_BATCH`; :data:`DABS_PER_BATCH` until one was timed. ``clock`` gives
    seconds (tests give their own)."""

    def __init__(
        self, seconds: float = BATCH_SECONDS, clock: Callable[[], float] = time.perf_counter
    ):
        self.seconds = seconds
        self.clock = clock
        self.per_dab: float | None = None

    def restart(self) -> None:
        """A new stroke: another brush or size paints at another pace."""
        self.per_dab = None

    def dabs(self) -> float:
        if self.per_dab is None:
            return DABS_PER_BATCH
        return min(MOST_DABS_PER_BATCH, max(DABS_PER_STEP, self.seconds / self.per_dab))

    def apply(
        self,
        paint: Callable[[list[InputEvent]], object],
        last: InputEvent,
        moves: list[InputEvent],
        settings: BrushSettings,
    ) -> None:
        """``paint(batch)`` for each batch of the steps of ``moves`` (from ``last``), in order,
        each sized by the pace that the batches before it set."""
        for batch, dabs in _batches(last, moves, settings, self.dabs):
            started = self.clock()
            paint(batch)
            if dabs >= TIMED_DABS:
                self.per_dab = max(1e-9, (self.clock() - started) / dabs)


def dabs_between(last: InputEvent, event: InputEvent, settings: BrushSettings) -> float:
    """About how many dabs the move from ``last`` to ``event`` stamps."""
    distance = math.hypot(
        (event.x - last.x) / settings.radius_frames, (event.y - last.y) / settings.radius_bins
    )
    return distance / settings.spacing


def split_move(
    last: InputEvent, event: InputEvent, settings: BrushSettings, most: int = DABS_PER_STEP
) -> list[InputEvent]:
    """``event`` as the steps of the move from ``last`` to it: itself, or points on the line
    between them (time and pressure interpolated) about ``most`` dabs apart, ending at ``event``."""
    steps = math.ceil(dabs_between(last, event, settings) / most)
    if steps <= 1:
        return [event]
    out = []
    for k in range(1, steps):
        f = k / steps
        out.append(
            InputEvent(
                last.t + f * (event.t - last.t),
                last.x + f * (event.x - last.x),
                last.y + f * (event.y - last.y),
                last.pressure + f * (event.pressure - last.pressure),
            )
        )
    out.append(event)
    return out


class PaintQueue:
    """Applies strokes to ``session`` on a worker thread.

    Parameters
    ----------
    session : Session
    on_error : callable, optional
        Called (on the worker thread) with the message of a brush that failed; its stroke was
        undone and the rest of its events are dropped.
    pace : BatchPace, optional
        Sizes the batches of long moves (a new one by default).
    """

    def __init__(
        self,
        session: Session,
        *,
        on_error: Callable[[str], None] | None = None,
        pace: BatchPace | None = None,
    ):
        self.session = session
        self.on_error = on_error
        self.pace = pace or BatchPace()
        self._open = False
        self._jobs: deque[tuple[str, tuple]] = deque()
        self._busy = False
        self._closing = False
        self.applied = 0
        """Jobs done (a begin, each queued event, an end or cancel): benchmarks follow it."""
        self._applied_at = 0.0
        self._condition = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="painting", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------------ the session's API
    @property
    def painting(self) -> bool:
        """A stroke was begun and not yet ended or cancelled (as the pointer sees it)."""
        return self._open

    def begin_stroke(
        self,
        brush: str,
        settings: BrushSettings,
        params: Mapping[str, Any],
        event: InputEvent,
    ) -> None:
        """Start a stroke at ``event``. Raises ``SettingsError`` here, at once, for settings or
        parameters the brush refuses (nothing begins)."""
        if self._open:
            raise RuntimeError("a stroke is already in progress")
        brush_kind(brush).params(params)
        settings.channels(self.session.document.n_channels)
        self._open = True
        self._put("begin", (brush, settings, dict(params), event))

    def paint(self, event: InputEvent) -> None:
        if self._open:
            self._put("paint", (event,))

    def end_stroke(self) -> None:
        if self._open:
            self._open = False
            self._put("end", ())

    def cancel_stroke(self) -> None:
        if self._open:
            self._open = False
            self._put("cancel", ())

    # ------------------------------------------------------------------------------ waiting
    @property
    def busy(self) -> bool:
        """Work is queued or running."""
        with self._condition:
            return bool(self._jobs) or self._busy

    def progress(self) -> tuple[int, float]:
        """:attr:`applied`, and when (``time.perf_counter()``, on the painting thread) the last of
        those jobs was done: benchmarks time each move's dabs by it, not by when they looked."""
        with self._condition:
            return self.applied, self._applied_at

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every queued event was applied; False if ``timeout`` passed first."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._jobs and not self._busy, timeout)

    def close(self) -> None:
        """Finish what is queued, then stop the thread."""
        self.wait_idle()
        with self._condition:
            self._closing = True
            self._condition.notify_all()
        self._thread.join()

    # ------------------------------------------------------------------------------ worker
    def _put(self, kind: str, args: tuple) -> None:
        with self._condition:
            self._jobs.append((kind, args))
            self._condition.notify_all()

    def _run(self) -> None:
        last: InputEvent | None = None
        settings: BrushSettings | None = None
        failed = False
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._jobs or self._closing)
                if not self._jobs:
                    return
                kind, args = self._jobs.popleft()
                moves = [args[0]] if kind == "paint" else []
                while kind == "paint" and self._jobs and self._jobs[0][0] == "paint":
                    moves.append(self._jobs.popleft()[1][0])  # queued behind: applied together
                self._busy = True
            try:
                if kind == "begin":
                    brush, settings, params, last = args
                    failed = False
                    self.pace.restart()
                    self.session.begin_stroke(brush, settings, params, last)
                elif failed or not self.session.painting:
                    pass  # the rest of a stroke whose brush failed
                elif kind == "paint":
                    self.pace.apply(lambda batch: self.session.paint(*batch), last, moves, settings)
                    last = moves[-1]
                elif kind == "end":
                    self.session.end_stroke()
                else:
                    self.session.cancel_stroke()
            except BrushFailed as exc:
                failed = True
                log.exception("painting failed")
                if self.on_error is not None:
                    self.on_error(str(exc))
            except Exception as exc:  # a stroke that cannot begin: say why, keep the thread
                failed = True
                log.exception("painting failed")
                if self.on_error is not None:
                    self.on_error(f"The stroke could not be painted: {exc}")
            finally:
                with self._condition:
                    self._busy = False
                    self.applied += max(1, len(moves))
                    self._applied_at = time.perf_counter()
                    self._condition.notify_all()


def _batches(
    last: InputEvent, moves: list[InputEvent], settings: BrushSettings, most: Callable[[], float]
) -> Iterator[tuple[list[InputEvent], float]]:
    """The steps of ``moves`` (from ``last``, each split by :func:`split_move`) in runs of at most
    ``most()`` dabs (asked again for each run, after the last was painted), in order, each with its
    dab count."""
    batch: list[InputEvent] = []
    count, limit = 0.0, most()
    for move in moves:
        for step in split_move(last, move, settings):
            dabs = dabs_between(last, step, settings)
            if batch and count + dabs > limit:
                yield batch, count
                batch, count, limit = [], 0.0, most()
            batch.append(step)
            count += dabs
            last = step
    yield batch, count
