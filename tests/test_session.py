"""The session: every edit goes through it, and each one is told once through ``changed``."""

import threading

import numpy as np
import pytest
import torch
from brush_fixtures import RATE, small_document

from spectropaint.app.session import BrushFailed, Change, Session
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import Cancelled, SettingsError
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def heard(session) -> list[Change]:
    changes: list[Change] = []
    session.changed.connect(changes.append)
    return changes


def drag(session, brush="erase", frames=(30, 60, 90), bin_=40.0, settings=None):
    events = [InputEvent(0.01 * i, float(f), bin_) for i, f in enumerate(frames)]
    session.begin_stroke(brush, settings or BrushSettings(radius_frames=4), {}, events[0])
    for event in events[1:]:
        session.paint(event)
    return session.end_stroke()


def test_a_stroke_emits_one_paint_change_per_event_then_one_stroke_change():
    session = Session(small_document(), settle=False)
    changes = heard(session)
    region = drag(session)
    kinds = [change.kind for change in changes]
    assert kinds == ["paint", "paint", "paint", "stroke"]
    painted = Region(0, 0, 0, 0, ())
    for change in changes[:-1]:
        painted = painted.union(change.region)
    assert changes[-1].region == region == painted
    assert [c.completes_edit for c in changes] == [False, False, False, True]
    assert session.modified and session.generation == 1 == changes[-1].generation
    assert len(session.strokes.done) == 1
    assert session.strokes.done[0].brush == "erase" and len(session.strokes.done[0].events) == 3


def test_undo_and_redo_restore_bit_for_bit_and_move_the_stroke_log():
    document = small_document()
    session = Session(document, settle=False)
    before = grids(document)
    region = drag(session)
    after = grids(document)
    assert not torch.equal(before, after)
    changes = heard(session)
    assert session.undo() == region
    assert torch.equal(grids(document), before) and session.strokes.done == []
    assert session.redo() == region
    assert torch.equal(grids(document), after) and len(session.strokes.done) == 1
    assert [(c.kind, c.region) for c in changes] == [("undo", region), ("redo", region)]
    assert session.generation == 3
    assert session.undo() is not None and session.undo() is None  # nothing more to undo


def test_a_stroke_that_changes_nothing_is_neither_recorded_nor_an_edit():
    session = Session(small_document())
    changes = heard(session)
    # a gain of 0 dB still writes cells; a stroke entirely outside the grid writes none
    region = drag(session, "gain", frames=(-500, -400), bin_=-300.0)
    assert region.empty and changes == [] and not session.modified
    assert session.strokes.done == [] and not session.history.can_undo


def test_cancel_restores_the_document_and_tells_it():
    document = small_document()
    session = Session(document)
    before = grids(document)
    session.begin_stroke("blur", BrushSettings(radius_frames=6), {}, InputEvent(0, 40.0, 40.0))
    session.paint(InputEvent(0.1, 80.0, 40.0))
    changes = heard(session)
    region = session.cancel_stroke()
    assert torch.equal(grids(document), before)
    assert changes == [Change(region, "cancel", 0)] and not session.modified
    assert not session.painting and session.strokes.done == []


def test_a_failing_brush_cancels_its_stroke_and_says_which(monkeypatch):
    document = small_document()
    session = Session(document)
    before = grids(document)
    session.begin_stroke("gain", BrushSettings(radius_frames=4), {}, InputEvent(0, 40.0, 40.0))
    stroke = session._stroke

    def broken(events):
        raise ValueError("kernel bug")

    monkeypatch.setattr(stroke, "add_events", broken)
    with pytest.raises(
        BrushFailed, match="The gain brush failed and its stroke was undone: kernel"
    ):
        session.paint(InputEvent(0.1, 60.0, 40.0))
    assert torch.equal(grids(document), before) and not session.painting


def test_settings_a_brush_refuses_begin_nothing():
    session = Session(small_document())
    with pytest.raises(SettingsError):
        session.begin_stroke("gain", BrushSettings(), {"gain_db": 1000}, InputEvent(0, 1.0, 1.0))
    assert not session.painting


def test_an_operation_is_one_undo_step():
    document = small_document()
    session = Session(document)
    before = grids(document)
    changes = heard(session)
    region = Region(10, 50, 20, 80, (0, 1))
    session.apply("quieter", region, lambda magnitude, phase: (magnitude * 0.5, phase))
    block = document.blocks[0]
    assert torch.allclose(block.magnitude[:, 10:50, 20:80], before[0][:, 10:50, 20:80] * 0.5)
    assert torch.equal(block.magnitude[:, 50:, :], before[0][:, 50:, :])
    assert changes == [Change(region, "operation", 1)] and session.modified
    session.undo()
    assert torch.equal(grids(document), before)


def test_a_failing_operation_leaves_the_document_and_history_as_they_were():
    document = small_document()
    session = Session(document)
    before = grids(document)

    def broken(magnitude, phase):
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        session.apply("broken", Region(0, 10, 0, 10, (0,)), broken)
    assert torch.equal(grids(document), before) and not session.history.can_undo
    drag(session)  # the history is not left open
    assert session.history.can_undo


def test_an_operation_cancelled_between_its_parts_leaves_everything_as_it_was():
    """A de-click heals each click as one part; cancelled after the first part was written, the
    coefficients and the frames marked edited are as before, and nothing is in the history."""
    samples = 0.1 * np.sin(2 * np.pi * 440 * np.arange(RATE) / RATE)[None].repeat(2, axis=0)
    for at in (0.3, 0.7):
        samples[:, round(at * RATE)] += 0.9
    document = Document.from_samples(samples, RATE, settings=STFTSettings(n_fft=256, hop=64))
    session = Session(document)
    before = grids(document)
    edited = document.blocks[0].edited_frames.copy()
    told = []

    def progress(fraction):  # before and after each part: cancelled before the second one
        told.append(fraction)
        return len(told) < 3

    with pytest.raises(Cancelled):
        session.apply_to_selection("declick", {}, progress=progress)
    assert told == [0.0, 0.5, 0.5]  # the first part was computed and written
    assert torch.equal(grids(document), before)
    assert np.array_equal(document.blocks[0].edited_frames, edited) and not edited.any()
    assert not session.history.can_undo and not session.strokes.done and not session.modified
    assert session.apply_to_selection("declick", {}, progress=lambda fraction: True) is not None
    assert session.history.can_undo and not torch.equal(grids(document), before)


def test_saving_clears_modified_only_for_the_generation_saved(tmp_path):
    session = Session(small_document(), settle=False)
    drag(session)
    snapshot = session.snapshot({"colormap": "magma"})
    drag(session, frames=(100, 120))
    changes = heard(session)
    snapshot.write(str(tmp_path / "a.spp"))
    session.mark_saved(str(tmp_path / "a.spp"), snapshot.generation)
    assert session.modified  # an edit came after the snapshot
    assert changes == [Change(Region(0, 0, 0, 0, ()), "saved", snapshot.generation)]
    session.mark_saved(str(tmp_path / "a.spp"), session.generation)
    assert not session.modified and session.name == "a.spp"


def test_a_snapshot_holds_the_lock_only_to_copy_and_is_independent_of_later_edits():
    session = Session(small_document())
    drag(session)
    snapshot = session.snapshot({})
    copied = [run.magnitude.clone() for run in snapshot.edits]
    drag(session, frames=(30, 60, 90), settings=BrushSettings(radius_frames=8, strength=1))
    assert all(torch.equal(a, run.magnitude) for a, run in zip(copied, snapshot.edits, strict=True))
    assert not session.lock.locked()


def test_changes_from_another_thread_reach_listeners_on_that_thread():
    session = Session(small_document(), settle=False)
    seen: list[str] = []
    session.changed.connect(lambda change: seen.append(threading.current_thread().name))
    worker = threading.Thread(target=lambda: drag(session), name="worker")
    worker.start()
    worker.join()
    assert seen and set(seen) == {"worker"}


def test_a_finished_stroke_settles_on_the_worker_thread_into_its_own_undo_step():
    document = small_document()
    session = Session(document)
    before = grids(document)
    changes = heard(session)
    threads: list[str] = []
    session.changed.connect(lambda change: threads.append(threading.current_thread().name))
    region = drag(session, "erase")
    painted = grids(document)
    assert session.wait_settled(60)
    settled = grids(document)
    kinds = [change.kind for change in changes]
    assert kinds[-2:] == ["stroke", "settle"] and threads[-1] == "settle"
    assert not torch.equal(settled, painted)  # the coefficients became what is heard
    settle_region = changes[-1].region
    assert settle_region.frame0 <= region.frame0 and settle_region.frame1 >= region.frame1
    assert session.undo() is not None
    assert torch.equal(grids(document), before)  # one undo: back before the stroke, exactly
    session.redo()
    assert torch.equal(grids(document), settled)
    session.close()


def test_a_settle_that_arrives_after_an_undo_is_dropped():
    document = small_document()
    session = Session(document)
    before = grids(document)
    with session.lock:  # the worker cannot apply until the undo below is done
        session._stroke = None
    drag(session, "blur")
    session.undo()
    assert session.wait_settled(60)
    assert torch.equal(grids(document), before)
    session.close()
