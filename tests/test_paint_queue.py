"""Painting on a thread of its own (no Qt): the pointer's thread never waits, long moves are painted
in steps, the result is the stroke's and replays exactly."""

import math
import threading
import time

import pytest
import torch
from brush_fixtures import small_document

from spectropaint.app.paint_queue import (
    DABS_PER_BATCH,
    DABS_PER_STEP,
    BatchPace,
    PaintQueue,
    split_move,
)
from spectropaint.app.session import Session
from spectropaint.brushes.engine import paint
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.errors import SettingsError

SETTINGS = BrushSettings(radius_frames=3, radius_bins=4, spacing=0.25)
EVENTS = [InputEvent(0.01 * k, 20 + 25 * k, 30 + 3 * k, 1.0) for k in range(6)]


def state(document) -> torch.Tensor:
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def test_a_long_move_is_split_into_steps_of_a_few_dabs_on_the_same_line():
    last, event = InputEvent(0.0, 0.0, 10.0, 0.2), InputEvent(1.0, 1500.0, 10.0, 1.0)
    steps = split_move(last, event, SETTINGS)
    # 1500 frames / (0.25 * 3 frames per dab) = 2000 dabs, in steps of DABS_PER_STEP at most
    count = math.ceil(2000 / DABS_PER_STEP)
    assert count >= 3 and len(steps) == count and steps[-1] == event
    gaps = [b.x - a.x for a, b in zip([last, *steps[:-1]], steps, strict=True)]
    assert max(gaps) / (SETTINGS.spacing * SETTINGS.radius_frames) <= DABS_PER_STEP
    assert all(s.y == 10.0 for s in steps)
    assert steps[2].pressure == pytest.approx(0.2 + 0.8 * 3 / count)
    assert split_move(last, InputEvent(0.1, 5.0, 10.0, 1.0), SETTINGS) == [
        InputEvent(0.1, 5.0, 10.0, 1.0)
    ]


class BatchClock:
    """A clock that each batch the session paints moves on by ``seconds``, whatever its dabs;
    ``steps`` holds each batch's count of events."""

    def __init__(self, session: Session, seconds: float):
        self.now = 0.0
        self.steps: list[int] = []
        paint = session.paint

        def timed_paint(*events):
            self.now += seconds
            self.steps.append(len(events))
            return paint(*events)

        session.paint = timed_paint

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("seconds", "batches"),
    [
        # 2000 dabs in 16 steps of 125: 4 steps (the first batch's 512 dabs at most), then at
        # 12 us a dab 8 steps (1000 dabs in 12 ms), then at 6 us a dab the last 4
        (0.006, [4, 8, 4]),
        # 120 us a dab: 100 dabs in 12 ms, so the least, one step a batch
        (0.060, [4] + [1] * 12),
    ],
)
def test_a_long_move_is_painted_in_batches_sized_by_the_pace_with_no_dab_thinned(seconds, batches):
    document = small_document(seconds=7.0)  # 1750 frames
    notices = []
    document.notices.connect(notices.append)
    session = Session(document, settle=False)
    changes = []
    session.changed.connect(lambda change: changes.append(change.kind))
    clock = BatchClock(session, seconds)
    queue = PaintQueue(session, pace=BatchPace(seconds=0.012, clock=clock))
    for _ in range(2):  # the second stroke starts at the first batch's size again
        clock.steps.clear()
        queue.begin_stroke("gain", SETTINGS, {"gain_db": -6}, InputEvent(0.0, 0.0, 10.0))
        queue.paint(InputEvent(1.0, 1500.0, 10.0))  # 2000 dabs
        queue.end_stroke()
        assert queue.wait_idle(30)
        assert clock.steps == [1, *batches]  # the begin's dab, then the batches' steps
    assert not [notice for notice in notices if "spaced wider" in notice]
    assert len(session.strokes.done[0].events) == 1 + math.ceil(2000 / DABS_PER_STEP) == 17
    assert changes.count("paint") == 2 * (1 + len(batches))  # a change for each batch
    queue.close()


def test_the_queue_paints_what_the_session_paints_and_records_it_for_an_exact_replay():
    # the painting alone: both sessions leave their strokes as painted (no settle)
    direct = Session(small_document(), settle=False)
    queued = Session(small_document(), settle=False)
    direct.begin_stroke("blur", SETTINGS, {}, EVENTS[0])
    for event in EVENTS[1:]:
        direct.paint(event)
    direct.end_stroke()
    queue = PaintQueue(queued)
    queue.begin_stroke("blur", SETTINGS, {}, EVENTS[0])
    for event in EVENTS[1:]:
        queue.paint(event)
    queue.end_stroke()
    assert queue.wait_idle(30)
    assert not queue.painting and len(queued.strokes.done) == 1
    # the same dabs up to float rounding of the split points
    torch.testing.assert_close(state(queued.document), state(direct.document), atol=1e-5, rtol=1e-4)
    replayed = small_document()
    for stroke in queued.strokes.done:
        paint(
            replayed,
            stroke.brush,
            stroke.events,
            stroke.settings,
            params=stroke.params,
            settle=False,
        )
    # the same dabs; moves the thread applied together (it may fall behind) are grouped otherwise
    # than one by one, which can change the last bit of a blurred value
    torch.testing.assert_close(state(replayed), state(queued.document), atol=2e-6, rtol=1e-6)
    queue.close()


def test_the_pointers_thread_never_waits_for_the_document():
    session = Session(small_document())
    queue = PaintQueue(session)
    changes = []
    session.changed.connect(lambda change: changes.append(change.kind))
    with session.lock:  # resynthesis or a save holding the document
        started = time.perf_counter()
        queue.begin_stroke("gain", SETTINGS, {"gain_db": -20}, EVENTS[0])
        for event in EVENTS[1:]:
            queue.paint(event)
        queue.end_stroke()
        queued_in = time.perf_counter() - started
        assert queue.busy and not changes  # nothing could be painted yet
    assert queued_in < 0.05
    assert queue.wait_idle(30)
    assert changes[-1] == "stroke" and changes.count("paint") >= 1
    queue.close()


def test_progress_says_when_the_painting_thread_did_its_last_job():
    """The time a job was done is taken on the painting thread as it finishes, not when someone
    looks (a benchmark polling between Qt's events saw a move's dabs a frame late)."""
    session = Session(small_document(), settle=False)
    queue = PaintQueue(session)
    done = []
    session.changed.connect(lambda change: done.append((change.kind, time.perf_counter())))
    with session.lock:
        queue.begin_stroke("gain", SETTINGS, {"gain_db": -20}, EVENTS[0])
        queue.paint(EVENTS[1])
        released = time.perf_counter()
    assert queue.wait_idle(30)
    idle = time.perf_counter()
    time.sleep(0.05)
    count, when = queue.progress()
    assert count == queue.applied == 2  # the begin and the move
    painted = max(t for kind, t in done if kind == "paint")
    assert released < painted <= when <= idle  # not when progress() was asked, 50 ms later
    queue.end_stroke()
    queue.close()


def test_moves_queued_behind_are_applied_together_with_the_same_result():
    """While the painting thread waits (here for the session's lock), moves queue; it then applies
    them in batches of about DABS_PER_BATCH dabs, one change each, and the stroke is the one painted
    move by move."""
    moves = [InputEvent(0.01 * k, 20 + 6 * k, 30 + k, 1.0) for k in range(40)]  # 8 dabs a move
    direct = Session(small_document(), settle=False)
    direct.begin_stroke("blur", SETTINGS, {}, moves[0])
    for move in moves[1:]:
        direct.paint(move)
    direct.end_stroke()
    session = Session(small_document(), settle=False)
    changes = []
    session.changed.connect(lambda change: changes.append(change.kind))
    queue = PaintQueue(session)
    with session.lock:
        queue.begin_stroke("blur", SETTINGS, {}, moves[0])
        for move in moves[1:]:
            queue.paint(move)
        queue.end_stroke()
    assert queue.wait_idle(30)
    paints = changes.count("paint")
    assert paints <= 1 + math.ceil(8 * 39 / DABS_PER_BATCH) < len(moves) / 4
    assert session.strokes.done[0].events == direct.strokes.done[0].events
    torch.testing.assert_close(
        state(session.document), state(direct.document), atol=2e-6, rtol=1e-6
    )
    queue.close()


def test_refused_settings_are_said_at_once_and_nothing_begins():
    queue = PaintQueue(Session(small_document(channels=1)))
    with pytest.raises(SettingsError, match="channel"):
        queue.begin_stroke("gain", BrushSettings(channel=1), {}, EVENTS[0])
    with pytest.raises(SettingsError):
        queue.begin_stroke("clone", SETTINGS, {"offset_frames": 0, "offset_bins": 0}, EVENTS[0])
    assert not queue.painting and not queue.busy
    queue.close()


def test_a_failing_brush_is_reported_its_stroke_undone_and_the_next_stroke_works(monkeypatch):
    session = Session(small_document())
    before = state(session.document)
    errors = []
    queue = PaintQueue(session, on_error=errors.append)
    from spectropaint.brushes import engine

    real = engine.StrokeSession.add_events
    calls = {"n": 0}

    def failing(self, events):
        calls["n"] += 1
        if calls["n"] == 2:  # the first paint after the stroke's first dab
            raise RuntimeError("kernel exploded")
        return real(self, events)

    monkeypatch.setattr(engine.StrokeSession, "add_events", failing)
    queue.begin_stroke("gain", SETTINGS, {}, EVENTS[0])
    for event in EVENTS[1:]:
        queue.paint(event)
    queue.end_stroke()
    assert queue.wait_idle(30)
    assert len(errors) == 1 and "kernel exploded" in errors[0]
    assert torch.equal(state(session.document), before) and not session.strokes.done
    monkeypatch.setattr(engine.StrokeSession, "add_events", real)
    queue.begin_stroke("gain", SETTINGS, {}, EVENTS[0])
    queue.paint(EVENTS[1])
    queue.end_stroke()
    assert queue.wait_idle(30) and len(session.strokes.done) == 1
    queue.close()


def test_close_finishes_what_was_queued():
    session = Session(small_document())
    queue = PaintQueue(session)
    queue.begin_stroke("erase", SETTINGS, {}, EVENTS[0])
    queue.paint(EVENTS[1])
    queue.end_stroke()
    queue.close()
    assert len(session.strokes.done) == 1
    assert not any(t.name == "painting" and t.is_alive() for t in threading.enumerate())
