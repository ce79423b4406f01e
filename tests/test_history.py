"""Undo and redo per stroke: bit-identical both ways, only touched tiles stored, a byte budget."""

import gc
import weakref

import pytest
import torch
from brush_fixtures import small_document

from spectropaint.brushes import history as history_module
from spectropaint.brushes.engine import StrokeSession, paint
from spectropaint.brushes.history import History, OpenStep, read_stacked, read_tiles
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.brushes.tiles import TILE
from spectropaint.transforms.regions import Region

TILE_BYTES = 2 * 2 * TILE * TILE * 4
"""One tile of a stereo document: magnitude and phase, float32."""


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def stroke(
    document,
    history,
    brush="gain",
    x0=20.0,
    y0=30.0,
    x1=150.0,
    y1=90.0,
    settle=True,
    **settings,
):
    """A 20-event stroke, settled unless ``settle`` is False (then only its dabs' tiles are
    stored)."""
    events = [
        InputEvent(i / 60, x0 + (x1 - x0) * i / 19, y0 + (y1 - y0) * i / 19, 0.5 + i / 40)
        for i in range(20)
    ]
    settings = BrushSettings(**{"radius_frames": 9, "radius_bins": 7, **settings})
    paint(document, brush, events, settings, history=history, settle=settle)


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_undo_and_redo_restore_every_bit(brush):
    document = small_document()
    history = History(document)
    before = grids(document)
    stroke(document, history, brush)
    after = grids(document)
    assert not torch.equal(after, before)
    history.undo()
    assert torch.equal(grids(document), before)
    history.redo()
    assert torch.equal(grids(document), after)


def test_several_strokes_undo_and_redo_in_order():
    document = small_document()
    history = History(document)
    states = [grids(document)]
    for brush, y in [("blur", 30.0), ("warp", 40.0), ("pen", 50.0)]:
        stroke(document, history, brush, y0=y, y1=y + 30)
        states.append(grids(document))
    for expected in reversed(states[:-1]):
        history.undo()
        assert torch.equal(grids(document), expected)
    assert history.undo() is None
    for expected in states[1:]:
        history.redo()
        assert torch.equal(grids(document), expected)
    assert history.redo() is None


def test_undo_returns_the_strokes_box():
    document = small_document()
    history = History(document)
    session = StrokeSession(document, "erase", history=history)
    session.add_events([InputEvent(0.0, 40.0, 40.0), InputEvent(0.1, 80.0, 50.0)])
    session.end()
    assert not session.region.empty
    assert history.undo() == session.region
    assert history.redo() == session.region


def test_only_the_tiles_a_stroke_touched_are_stored():
    document = small_document()
    history = History(document)
    stroke(
        document,
        history,
        x0=80.0,
        y0=80.0,
        x1=110.0,
        y1=100.0,
        radius_frames=4,
        radius_bins=4,
        settle=False,
    )
    assert history.bytes_used == TILE_BYTES
    stroke(
        document,
        history,
        x0=10.0,
        y0=10.0,
        x1=200.0,
        y1=10.0,
        radius_frames=3,
        radius_bins=3,
        settle=False,
    )
    # frames 7..203 meet tile columns 0-3; the last is cut to the grid's 251 frames (59 of 64)
    assert document.blocks[0].n_frames == 251
    assert history.bytes_used == TILE_BYTES + 3 * TILE_BYTES + TILE_BYTES * 59 // 64


def test_a_rows_new_tiles_are_read_at_once_and_each_holds_its_own_values(monkeypatch):
    """A box over 2 x 4 tiles, the top row cut by the grid's last bin and the last column by its
    last frame, one of them kept already: each row's new tiles side by side are one read (the
    cut column's tile alone), and each tile holds its box's values, contiguous."""
    document = small_document()  # 129 bins, 251 frames: tiles of 64 cut to 1 bin and 59 frames
    step = OpenStep(document, (0, 1))
    step.record(Region(70, 72, 70, 72, (0, 1)))  # tile (1, 1) kept already
    reads = []

    def counted(document, region, count):
        reads.append((region.bin0, region.bin1, region.frame0, region.frame1, count))
        return read_tiles(document, region, count)

    monkeypatch.setattr(history_module, "read_tiles", counted)
    new = step.record(Region(100, 129, 10, 251, (0, 1)))
    assert new == {(row, column) for row in (1, 2) for column in range(4)} - {(1, 1)}
    assert reads == [
        (64, 128, 0, 64, 1), (64, 128, 128, 192, 1), (64, 128, 192, 251, 1),  # (1, 1) kept
        (128, 129, 0, 192, 3), (128, 129, 192, 251, 1),  # one bin tall: three, then the cut one
    ]  # fmt: skip
    tiles = step.originals[0]
    for key in new:
        values = tiles.tiles[key]
        assert values.is_contiguous()
        assert torch.equal(values, read_stacked(document, tiles.tile_box(key, (0, 1))))


def test_the_byte_budget_drops_the_oldest_steps():
    document = small_document()
    history = History(document, byte_budget=3 * TILE_BYTES)
    states = [grids(document)]
    for y in (80.0, 90.0, 100.0, 110.0):
        stroke(
            document,
            history,
            x0=70.0,
            y0=y,
            x1=120.0,
            y1=y,
            radius_frames=3,
            radius_bins=3,
            settle=False,
        )
        states.append(grids(document))
    assert history.bytes_used == 3 * TILE_BYTES
    assert history.usage() == "0.2 MiB of 0.2 MiB in 3 undo, 0 redo steps"
    for _ in range(3):
        history.undo()
    assert torch.equal(grids(document), states[1])
    assert not history.can_undo


def test_a_step_larger_than_the_budget_is_not_kept():
    document = small_document()
    history = History(document, byte_budget=TILE_BYTES // 2)
    session = StrokeSession(document, "erase", history=history)
    session.add_events([InputEvent(0.0, 90.0, 90.0)])
    assert session.end() is False
    assert not history.can_undo and history.bytes_used == 0


def test_a_new_stroke_clears_redo():
    document = small_document()
    history = History(document)
    stroke(document, history, "gain")
    history.undo()
    assert history.can_redo
    stroke(document, history, "blur")
    assert not history.can_redo


def test_undo_is_refused_while_a_stroke_is_open():
    document = small_document()
    history = History(document)
    stroke(document, history)
    session = StrokeSession(document, "gain", history=history)
    with pytest.raises(RuntimeError, match="stroke is open"):
        history.undo()
    session.abort()
    assert history.can_undo


def one_tile_stroke(document, history, x):
    session = StrokeSession(
        document, "gain", BrushSettings(radius_frames=3, radius_bins=3), history=history
    )
    session.add_events([InputEvent(0.0, x, 20.0), InputEvent(0.1, x + 10.0, 25.0)])
    assert session.end()
    return session


def test_a_finished_stroke_holds_no_tiles_outside_the_history():
    document = small_document()
    history = History(document, byte_budget=TILE_BYTES)
    # the caller keeps each session (and with it the step it recorded into) in this list
    sessions = [one_tile_stroke(document, history, 20.0)]
    stored = weakref.ref(history.undo_steps[0].atoms[0].values)
    history.undo()  # the stored tile goes back into the document; the step keeps the one it replaced
    gc.collect()
    assert stored() is None
    sessions.append(one_tile_stroke(document, history, 90.0))
    stored = weakref.ref(history.undo_steps[0].atoms[0].values)
    sessions.append(one_tile_stroke(document, history, 150.0))  # the budget drops the step before
    gc.collect()
    assert stored() is None
    assert len(history.undo_steps) == 1 and history.bytes_used == TILE_BYTES


def test_a_step_larger_than_the_budget_drops_the_older_steps_too():
    document = small_document()
    history = History(document, byte_budget=2 * TILE_BYTES)
    stroke(
        document,
        history,
        x0=80.0,
        y0=80.0,
        x1=110.0,
        y1=100.0,
        radius_frames=4,
        radius_bins=4,
        settle=False,
    )
    assert history.can_undo
    stroke(
        document,
        history,
        x0=10.0,
        y0=10.0,
        x1=200.0,
        y1=10.0,
        radius_frames=3,
        radius_bins=3,
        settle=False,
    )
    painted = grids(document)
    # undoing the first step alone would give a state that never existed: it is dropped with it
    assert not history.can_undo and history.bytes_used == 0
    assert history.undo() is None
    assert torch.equal(grids(document), painted)


def test_amending_a_step_twice_in_one_tile_undoes_and_redoes_bit_for_bit():
    """Two amendments (two parts of one settle) in the same tile of the step's grid, outside the
    tiles the step wrote: the second merges with the first, so undo restores both."""
    from spectropaint.brushes.operations import Plan, apply_plans
    from spectropaint.transforms.regions import Region

    document = small_document()
    history = History(document)
    before = grids(document)
    apply_plans(
        document,
        [Plan("quieter", Region(0, 8, 0, 8, (0, 1)), lambda m, p: (0.5 * m, p))],
        label="quieter",
        history=history,
    )
    step = history.undo_steps[-1]
    for region in (Region(70, 80, 2, 6, (0, 1)), Region(90, 100, 20, 30, (0, 1))):
        assert history.amend_top(step, region)
        magnitude, phase = document.read(region)
        document.write(region, magnitude * 2.0, phase + 0.5)
    after = grids(document)
    assert len([a for a in step.atoms if a.region.bin0 >= TILE]) == 1  # merged: one box
    history.undo()
    assert torch.equal(grids(document), before)
    history.redo()
    assert torch.equal(grids(document), after)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_cuda_strokes_tiles_come_to_the_host_together_and_undo_every_bit(monkeypatch):
    """At a stroke's end its tiles leave the GPU stacked, a few at a time, grouped by shape (tiles
    at the grid's edge are smaller): undo and redo are still exact, and every atom stays on the
    host."""
    import spectropaint.brushes.history as history_module

    monkeypatch.setattr(history_module, "HOST_COPY_TILES", 3)  # several parts per shape
    document = small_document(device="cuda")
    block = document.blocks[0]
    history = History(document)
    before = grids(document)
    # from the lowest bins to the highest, past the last frame: edge tiles of other shapes
    stroke(document, history, y0=2.0, y1=block.n_bins - 2.0, x1=block.n_frames + 4.0, settle=False)
    after = grids(document)
    atoms = history.undo_steps[-1].atoms
    assert len({tuple(atom.values.shape) for atom in atoms}) > 1 and len(atoms) > 3
    assert all(atom.values.device.type == "cpu" for atom in atoms)
    for _ in range(2):
        history.undo()
        assert torch.equal(grids(document), before)
        assert all(atom.values.device.type == "cpu" for atom in atoms)
        history.redo()
        assert torch.equal(grids(document), after)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("undo_first", [False, True])
def test_a_cuda_strokes_tiles_go_to_the_host_after_its_end_and_undo_meanwhile_is_exact(
    undo_first,
):
    """The session ends a stroke under its lock with the tiles left on the GPU and copies them
    to the host after, outside the lock: undo and redo are exact either side of the copy (one in
    between swaps device tiles, and the copy then leaves the atoms it swapped as they are)."""
    import threading

    document = small_document(device="cuda")
    history = History(document)
    before = grids(document)
    events = [InputEvent(i / 60, 10.0 + 9.0 * i, 4.0 + 5.0 * i, 0.8) for i in range(20)]
    session = StrokeSession(
        document, "gain", BrushSettings(radius_frames=9, radius_bins=7), history=history
    )
    session.add_events(events)
    assert session.end(to_host=False)
    after = grids(document)
    step = session.committed
    assert all(atom.values.device.type == "cuda" for atom in step.atoms)
    if undo_first:
        history.undo()
        assert torch.equal(grids(document), before)
        history.redo()
        assert torch.equal(grids(document), after)
    step.values_to_host(threading.Lock())
    assert all(atom.values.device.type == "cpu" for atom in step.atoms)
    history.undo()
    assert torch.equal(grids(document), before)
    history.redo()
    assert torch.equal(grids(document), after)


def test_atoms_swapped_together_equal_atoms_swapped_one_by_one():
    """The newest step on a GPU is undone by a gather and a scatter per part of atoms of one
    shape (``_swap_together``); run on the CPU here, it gives what the atoms one by one give."""
    from spectropaint.brushes.history import _swap_together

    document = small_document()
    block = document.blocks[0]
    history = History(document)
    before = grids(document)
    stroke(document, history, y0=2.0, y1=block.n_bins - 2.0, x1=block.n_frames + 4.0, settle=False)
    after = grids(document)
    shapes: dict = {}
    for atom in history.undo_steps[-1].atoms:
        shapes.setdefault(tuple(atom.values.shape), []).append(atom)
    assert len(shapes) > 1
    revision = document.revision
    for group in shapes.values():
        _swap_together(document, group)
    assert torch.equal(grids(document), before) and document.revision > revision
    for group in shapes.values():
        _swap_together(document, group)
    assert torch.equal(grids(document), after)
    history.undo()  # one by one, from what the atoms hold now
    assert torch.equal(grids(document), before)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_newest_cuda_stroke_stays_on_the_gpu_and_the_one_before_goes_to_the_host():
    document = small_document(device="cuda")
    history = History(document)
    states = [grids(document)]
    steps = []
    for y in (10.0, 60.0):
        events = [InputEvent(i / 60, 10.0 + 9.0 * i, y + 2.0 * i, 0.8) for i in range(20)]
        session = StrokeSession(
            document, "gain", BrushSettings(radius_frames=9, radius_bins=7), history=history
        )
        session.add_events(events)
        assert session.end(to_host=False)
        history.steps_to_host()
        steps.append(session.committed)
        states.append(grids(document))
    assert all(atom.values.device.type == "cpu" for atom in steps[0].atoms)
    assert all(atom.values.device.type == "cuda" for atom in steps[1].atoms)
    for _ in range(2):
        history.undo()
        assert torch.equal(grids(document), states[1])
        assert all(atom.values.device.type == "cuda" for atom in steps[1].atoms)
        history.undo()
        assert torch.equal(grids(document), states[0])
        history.redo()
        history.redo()
        assert torch.equal(grids(document), states[2])
