"""The stroke-end settle: plan under the lock, compute anywhere, apply with undo; stale results."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from fidelity_probes import heard, shown

from spectropaint.brushes.engine import StrokeSession, paint
from spectropaint.brushes.history import History
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import apply_settle
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.regions import EMPTY

SETTINGS = BrushSettings(radius_frames=8, radius_bins=6, hardness=0.6)


def line(x0=30.0, y0=30.0, x1=140.0, y1=80.0, n=20):
    return [
        InputEvent(i / 60, x0 + (x1 - x0) * i / (n - 1), y0 + (y1 - y0) * i / (n - 1))
        for i in range(n)
    ]


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def painted_stroke(document, brush, history=None, events=None):
    session = StrokeSession(document, brush, SETTINGS, history=history)
    for event in events or line():
        session.add_events([event])
    session.end()
    return session


def mismatch_db(document):
    """Energy of (shown - heard) relative to what is heard, dB."""
    h, s = heard(document), shown(document)
    return 10 * np.log10(np.sum(np.abs(s - h) ** 2) / np.sum(np.abs(h) ** 2))


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_after_the_settle_the_canvas_shows_what_is_heard(brush):
    document = small_document()
    session = painted_stroke(document, brush)
    painted = mismatch_db(document)
    region = apply_settle(document, None, session.settle_plan().compute())
    assert not region.empty
    settled = mismatch_db(document)
    # a painted stroke is not the transform of any signal; the settled one is, to float32
    assert painted > -60
    assert settled < -100


def test_undo_after_the_settle_returns_to_before_the_stroke_and_redo_to_the_settled_state():
    document = small_document()
    history = History(document)
    before = grids(document)
    session = painted_stroke(document, "erase", history)
    painted = grids(document)
    region = apply_settle(document, history, session.settle_plan().compute())
    settled = grids(document)
    assert not torch.equal(settled, painted)
    # the settle reaches past the stroke's own box: frames whose analysis reads its samples
    assert region.frame0 < session.region.frame0 and region.frame1 > session.region.frame1
    assert history.undo() == session.region.union(region)
    assert torch.equal(grids(document), before)
    history.redo()
    assert torch.equal(grids(document), settled)
    assert history.usage().endswith("1 undo, 0 redo steps")


def test_apply_returns_the_region_it_wrote():
    document = small_document()
    session = painted_stroke(document, "blur")
    painted = grids(document)
    region = apply_settle(document, None, session.settle_plan().compute())
    changed = (grids(document) != painted).any(dim=(0, 1))
    bins, frames = torch.nonzero(changed, as_tuple=True)
    assert region.bin0 <= int(bins.min()) and int(bins.max()) < region.bin1
    assert region.frame0 <= int(frames.min()) and int(frames.max()) < region.frame1
    before = grids(document)
    assert apply_settle(document, None, None) == EMPTY
    assert torch.equal(grids(document), before)


@pytest.mark.parametrize("change", ["another stroke", "undo", "a write"])
def test_a_result_planned_before_the_document_changed_is_dropped(change):
    document = small_document()
    history = History(document)
    session = painted_stroke(document, "gain", history)
    plan = session.settle_plan()
    if change == "another stroke":
        painted_stroke(document, "blur", history, line(y0=100.0, y1=110.0))
    elif change == "undo":
        history.undo()
    else:
        document.write(session.region, *document.read(session.region))
    result = plan.compute()
    before = grids(document)
    assert apply_settle(document, history, result) == EMPTY
    assert torch.equal(grids(document), before)


def test_compute_reads_only_its_plan():
    """A plan copies what it needs: writes to the document after planning do not change it."""
    results = []
    for scribble in (False, True):
        document = small_document()
        plan = painted_stroke(document, "warp").settle_plan()
        if scribble:
            block = document.blocks[0]
            block.magnitude.mul_(0.5)
            block.phase.add_(1.0)
        results.append(plan.compute())
    assert results[0].region == results[1].region
    assert all(
        torch.equal(a[1], b[1]) for a, b in zip(results[0].writes, results[1].writes, strict=True)
    )


@pytest.mark.parametrize("brush", ["erase", "clone", "pen"])
def test_headless_paint_gives_the_window_s_settled_document(brush):
    window, headless = small_document(), small_document()
    history = History(window)
    session = painted_stroke(window, brush, history)
    apply_settle(window, history, session.settle_plan().compute())
    paint(headless, brush, line(), SETTINGS, history=History(headless))
    assert torch.equal(grids(window), grids(headless))
    assert np.array_equal(window.edited_samples(), headless.edited_samples())


def test_samples_beyond_the_settled_frames_reach_are_bit_identical():
    document = small_document()
    original = document.audio.samples.copy()
    region = paint(document, "erase", line(), SETTINGS)
    out = document.edited_samples()
    start, stop = document.transform.samples_reached(0, region.frame0, region.frame1, out.shape[-1])
    assert np.array_equal(out[:, :start], original[:, :start])
    assert np.array_equal(out[:, stop:], original[:, stop:])
    assert not np.array_equal(out[:, start:stop], original[:, start:stop])


def test_a_stroke_that_changed_nothing_has_no_plan():
    document = small_document()
    session = StrokeSession(document, "gain", SETTINGS)
    session.add_events([InputEvent(0.0, -50.0, -50.0)])  # off the grid
    session.end()
    assert session.settle_plan() is None


def test_planning_needs_the_stroke_ended():
    document = small_document()
    session = StrokeSession(document, "gain", SETTINGS)
    session.add_events(line()[:3])
    with pytest.raises(RuntimeError, match="end the stroke"):
        session.settle_plan()
