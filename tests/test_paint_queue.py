"""Painting on a thread of its own (no Qt): the pointer's thread never waits, long moves are painted
in steps, the result is the stroke's and replays exactly."""

import threading
import time

import pytest
import torch
from brush_fixtures import small_document

from spectropaint.app.paint_queue import DABS_PER_STEP, PaintQueue, split_move
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
    last, event = InputEvent(0.0, 0.0, 10.0, 0.2), InputEvent(1.0, 300.0, 10.0, 1.0)
    steps = split_move(last, event, SETTINGS)
    # 300 frames / (0.25 * 3 frames per dab) = 400 dabs: 5 steps of about 96
    assert len(steps) == 5 and steps[-1] == event
    gaps = [b.x - a.x for a, b in zip([last, *steps[:-1]], steps, strict=True)]
    assert max(gaps) / (SETTINGS.spacing * SETTINGS.radius_frames) <= DABS_PER_STEP
    assert all(s.y == 10.0 for s in steps)
    assert steps[2].pressure == pytest.approx(0.2 + 0.8 * 3 / 5)
    assert split_move(last, InputEvent(0.1, 5.0, 10.0, 1.0), SETTINGS) == [
        InputEvent(0.1, 5.0, 10.0, 1.0)
    ]


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
    assert torch.equal(state(replayed), state(queued.document))  # bit for bit
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
    assert changes[-1] == "stroke" and changes.count("paint") >= len(EVENTS)
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
        if calls["n"] == 3:
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
