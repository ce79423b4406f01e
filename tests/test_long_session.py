"""A long session (issue 6): thousands of mixed strokes, undos and redos stay within the byte budget.

After every operation, ``bytes_used <= byte_budget``, and ``bytes_used`` equals the bytes of the
tensors the kept steps hold, summed over their distinct storages (so a tile that were a view of a
larger buffer would count the whole buffer). Every 200 operations, and at strokes 500 and 2,000,
``bytes_used`` also equals the bytes of every live torch tensor made since the session began (all
tensors the garbage collector finds, less those alive before and the test's own snapshots): nothing
outside the kept steps (a finished stroke, a dropped step, a cleared redo list) keeps tiles alive,
so memory cannot grow with the number of strokes past the budget.

That last check counts tensor bytes, not the process's memory: tracemalloc does not see torch's CPU
allocations, and RSS follows glibc's heap (freed tiles are reused but seldom returned to the system,
and the figure moves with fragmentation and other tests), so it could not be held to a tolerance both
tight and robust. RSS over 10,000 strokes is measured by ``tests/benchmarks/bench_soak.py``.

Undo and redo are checked bit for bit against snapshots of the document for the last few steps.
"""

from __future__ import annotations

import gc
import random

import pytest
import torch
from brush_fixtures import small_document

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels.fft import clear_transfers
from spectropaint.brushes.kernels.kept import clear_kept_work
from spectropaint.brushes.kernels.phase import clear_constants
from spectropaint.brushes.kernels.spectral_filter import MODES
from spectropaint.brushes.recorded import RecordedStroke
from spectropaint.brushes.registry import BRUSHES, brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent

BUDGET = 2 * 2**20
STROKES = 2000
SNAPSHOTS = 3
"""How many steps back (and forward) undo and redo are compared with snapshots."""


def random_stroke(
    rng: random.Random,
    n_bins: int,
    n_frames: int,
    *,
    events: tuple[int, int] = (3, 8),
    radii: tuple[float, float] = (1.5, 16.0),
) -> RecordedStroke:
    """A stroke of a random brush, size, channel and parameters wandering from a random point.

    ``events`` and ``radii`` are ranges (inclusive). Positions reach a few cells past the grid's
    edges, so clipped dabs are part of the mix.
    """
    brush = rng.choice(sorted(BRUSHES))
    params = {
        "filter": {"mode": rng.choice(MODES), "cutoff": rng.uniform(0.05, 0.2), "cutoff_high": 0.4},
        "clone": {"offset_frames": rng.randint(10, 80) * rng.choice((-1, 1)), "offset_bins": 3},
        "gain": {"gain_db": rng.uniform(-24.0, 12.0)},
        "pen": {"level_db": rng.uniform(-40.0, -10.0)},
    }.get(brush, {})
    settings = BrushSettings(
        radius_frames=rng.uniform(*radii),
        radius_bins=rng.uniform(*radii),
        hardness=rng.random(),
        strength=rng.uniform(0.2, 1.0),
        spacing=rng.uniform(0.5, 2.0),
        pressure_size=rng.random(),
        channel=rng.choice((None, None, 0, 1)),
    )
    x, y = rng.uniform(-4, n_frames + 4), rng.uniform(-4, n_bins + 4)
    path = []
    for index in range(rng.randint(*events)):
        path.append(InputEvent(index / 60, x, y, rng.uniform(0.1, 1.0)))
        x, y = x + rng.uniform(-12.0, 12.0), y + rng.uniform(-6.0, 6.0)
    return RecordedStroke(brush, settings, brush_kind(brush).params(params), tuple(path))


def sweep(n_frames: int) -> RecordedStroke:
    """A wide gain stroke across the whole document: more tiles than the budget holds."""
    events = tuple(InputEvent(i / 60, x, 64.0) for i, x in enumerate(range(0, n_frames, 40)))
    settings = BrushSettings(radius_frames=40.0, radius_bins=70.0, spacing=0.5)
    return RecordedStroke("gain", settings, brush_kind("gain").params({}), events)


def start(document, stroke: RecordedStroke, history: History) -> StrokeSession:
    session = StrokeSession(
        document, stroke.brush, stroke.settings, params=stroke.params, history=history
    )
    for event in stroke.events:
        session.add_events((event,))
    return session


def snapshot(document) -> torch.Tensor:
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase))


def storage_bytes(tensors) -> int:
    """Bytes of the distinct storages behind ``tensors``."""
    storages = {}
    for tensor in tensors:
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


def step_tensors(history: History) -> list[torch.Tensor]:
    steps = history.undo_steps + history.redo_steps
    return [atom.values for step in steps for atom in step.atoms]


def live_tensors() -> list[torch.Tensor]:
    """Every strided CPU torch tensor the garbage collector can reach."""
    gc.collect()
    return [
        obj
        for obj in gc.get_objects()
        if issubclass(type(obj), torch.Tensor) and obj.layout == torch.strided and not obj.is_cuda
    ]


def live_bytes_except(pointers: set[int]) -> int:
    """Bytes of the live tensors' storages, less those at ``pointers`` (the list is not kept)."""
    return storage_bytes(
        tensor for tensor in live_tensors() if tensor.untyped_storage().data_ptr() not in pointers
    )


class Snapshots:
    """Document states undo and redo must give back: ``undo[-1]`` for the next undo, and so on.

    Only the last :data:`SNAPSHOTS` of each are kept; deeper steps are undone unchecked.
    """

    def __init__(self):
        self.undo: list[torch.Tensor] = []
        self.redo: list[torch.Tensor] = []

    @staticmethod
    def push(stack: list[torch.Tensor], state: torch.Tensor) -> None:
        stack.append(state)
        del stack[:-SNAPSHOTS]

    def pointers(self) -> set[int]:
        return {state.untyped_storage().data_ptr() for state in self.undo + self.redo}


def step_ids(history: History) -> tuple[list[int], list[int]]:
    """Which steps the history holds, without keeping them alive."""
    return [id(step) for step in history.undo_steps], [id(step) for step in history.redo_steps]


class LongSession:
    """A document, its history and the snapshots to check them by; one method per user action."""

    def __init__(self, document, rng: random.Random):
        self.document = document
        self.rng = rng
        self.history = History(document, byte_budget=BUDGET)
        self.snapshots = Snapshots()
        self.counts = dict.fromkeys(("stroke", "kept", "dropped all", "undo", "redo", "abort"), 0)

    def random_stroke(self) -> RecordedStroke:
        block = self.document.blocks[0]
        return random_stroke(self.rng, block.n_bins, block.n_frames)

    def undo(self) -> None:
        self.counts["undo"] += 1
        before = snapshot(self.document)
        self.history.undo()
        if self.snapshots.undo:
            assert torch.equal(snapshot(self.document), self.snapshots.undo.pop())
        self.snapshots.push(self.snapshots.redo, before)

    def redo(self) -> None:
        self.counts["redo"] += 1
        before = snapshot(self.document)
        self.history.redo()
        if self.snapshots.redo:
            assert torch.equal(snapshot(self.document), self.snapshots.redo.pop())
        self.snapshots.push(self.snapshots.undo, before)

    def abort(self) -> None:
        """A stroke cancelled half-way (Escape): the document and the history are as before."""
        self.counts["abort"] += 1
        before, steps, used = (
            snapshot(self.document),
            step_ids(self.history),
            self.history.bytes_used,
        )
        start(self.document, self.random_stroke(), self.history).abort()
        assert torch.equal(snapshot(self.document), before)
        assert step_ids(self.history) == steps and self.history.bytes_used == used

    def paint(self, stroke: RecordedStroke, *, fits: bool) -> None:
        """Paint and commit ``stroke``; ``fits``: whether its step fits in the budget."""
        self.counts["stroke"] += 1
        before, steps = snapshot(self.document), step_ids(self.history)
        session = start(self.document, stroke, self.history)
        kept, region = session.end(), session.region
        del session  # as the canvas does: a finished session's coverage tiles are not history's
        if region.empty:  # every dab fell outside the grid: nothing changes
            assert torch.equal(snapshot(self.document), before)
            assert step_ids(self.history) == steps
            return
        assert kept == fits and not self.history.can_redo
        self.snapshots.redo.clear()
        if kept:
            self.counts["kept"] += 1
            self.snapshots.push(self.snapshots.undo, before)
            del self.snapshots.undo[
                : -len(self.history.undo_steps)
            ]  # the budget dropped the oldest
        else:
            self.counts["dropped all"] += 1
            assert not self.history.can_undo and self.history.bytes_used == 0
            self.snapshots.undo.clear()

    def check_budget(self) -> None:
        history = self.history
        assert history.bytes_used <= history.byte_budget
        assert history.bytes_used == storage_bytes(step_tensors(history))


@pytest.fixture
def one_torch_thread():
    """Thousands of small operations: two threads only wait on each other (several times slower
    on a loaded 2-core machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_torch_thread")
def test_thousands_of_operations_keep_the_history_within_its_budget():
    rng = random.Random(6)
    document = small_document(seconds=5.0, seed=6)
    for brush in sorted(BRUSHES):  # any lazily made tensors exist before the baseline
        StrokeSession(document, brush)
    session = LongSession(document, rng)
    history, counts = session.history, session.counts
    before_session = live_tensors()  # held, so no address of theirs is reused by a new tensor
    baseline = {tensor.untyped_storage().data_ptr() for tensor in before_session}
    live_bytes = {}
    operation = 0
    while counts["stroke"] < STROKES:
        operation += 1
        choice = rng.random()
        redo = 0.4 if history.can_redo else 0.0  # redo comes in runs, as after a run of undos
        if choice < redo:
            session.redo()
        elif choice < redo + 0.15 and history.can_undo:
            session.undo()
        elif choice < redo + 0.18:
            session.abort()
        elif (counts["stroke"] + 1) % 250 == 0:
            session.paint(sweep(document.blocks[0].n_frames), fits=False)
        else:
            session.paint(session.random_stroke(), fits=True)
        session.check_budget()
        if operation % 200 == 0 or counts["stroke"] in (500, STROKES):
            clear_transfers()  # the kernels' few kept constants are no part of the history
            clear_kept_work()  # nor are the kernels' kept buffers, or the kept numbers
            clear_constants()
            live = live_bytes_except(baseline | session.snapshots.pointers())
            assert live == history.bytes_used
            live_bytes[counts["stroke"]] = live
    # every kind of operation happened often, and the budget was full for most of the session
    assert min(counts.values()) >= STROKES // 250
    assert counts["undo"] > 200 and counts["redo"] > 100
    assert max(live_bytes.values()) > BUDGET * 0.8
    assert live_bytes[500] <= BUDGET and live_bytes[STROKES] <= BUDGET
