"""Strokes across a long file seen whole: each pointer move stamps hundreds of dabs, applied in the
paint queue's batches; the fused path (one weight for a whole group, from the nearest dab) gives
what applying the dabs one by one gives."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from test_fused_dabs import grids

from spectropaint.app.paint_queue import DABS_PER_BATCH, _batches
from spectropaint.brushes import dab as dab_module
from spectropaint.brushes import mask_compiled
from spectropaint.brushes.dab import FUSE_BOX, FUSE_CELLS, FUSE_SLACK, _BlockDabs, _groups
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent

SECONDS = 20.0


def moves(n_frames: int) -> list[InputEvent]:
    """A stroke across 80 % of the file in 12 moves of about 7 % of its frames each (as a
    pointer moves over a file seen whole), wandering in pitch and crossing itself once."""
    out = []
    for k in range(13):
        x = n_frames * (0.1 + 0.8 * k / 12)
        if k == 9:  # back over the stroke's own path
            x = n_frames * 0.45
        out.append(InputEvent(k / 60, x, 60 + 25 * np.sin(k / 2)))
    return out


def paint(document, brush, settings, params, fuse):
    history = History(document)
    stroke = StrokeSession(document, brush, settings, params=params, history=history, fuse=fuse)
    events = moves(document.blocks[0].n_frames)
    regions = [stroke.add_events((events[0],))]
    for last, move in zip(events, events[1:], strict=False):
        for batch, _ in _batches(last, [move], settings, lambda: DABS_PER_BATCH):
            regions.append(stroke.add_events(batch))
    stroke.end()
    return regions, history


@pytest.mark.parametrize(
    ("brush", "params", "hardness"),
    [("gain", {"gain_db": -18.0}, 0.5), ("erase", {}, 1.0), ("blur", {"sigma": 1.5}, 0.3)],
)
def test_a_dense_whole_view_stroke_fuses_exactly(monkeypatch, brush, params, hardness):
    """Fused and dab-by-dab agree to float tolerance and report the same boxes; every cell outside
    the stroke's boxes is bit-identical; the fused stroke took each group's weight in one pass over
    its dabs' cells (the nearest dab's, or the host's compiled loop), never every dab's mask
    scattered, in far fewer groups than dabs; undo restores the document exactly."""
    calls = {"nearest": 0, "groups": 0}
    nearest, host = dab_module._nearest_weight, mask_compiled.group_weights

    def counting(*args):
        calls["nearest"] += 1
        return nearest(*args)

    def counting_host(*args, **kwargs):
        calls["nearest"] += 1
        assert not kwargs["each"]  # the largest weight alone
        return host(*args, **kwargs)

    stamping = dab_module._apply_stamping

    def counting_groups(*args):
        calls["groups"] += 1
        return stamping(*args)

    monkeypatch.setattr(dab_module, "_nearest_weight", counting)
    monkeypatch.setattr(mask_compiled, "group_weights", counting_host)
    monkeypatch.setattr(dab_module, "_apply_stamping", counting_groups)
    settings = BrushSettings(radius_frames=6, radius_bins=5, hardness=hardness, strength=0.9)
    one, two = small_document(SECONDS), small_document(SECONDS)
    before = grids(one)[0]
    per_dab, history_a = paint(one, brush, settings, params, fuse=False)
    dabs = calls["groups"]
    calls.update(nearest=0, groups=0)
    fused, history_b = paint(two, brush, settings, params, fuse=True)
    assert dabs > 2000  # a dense stroke: hundreds of dabs per move
    assert calls["nearest"] == calls["groups"] <= dabs / 50
    assert per_dab == fused
    a, b = grids(one)[0], grids(two)[0]
    inside = torch.zeros(a.shape[2:], dtype=torch.bool)
    for region in fused:
        for part in region.parts:
            inside[part.bin0 : part.bin1, part.frame0 : part.frame1] = True
    assert torch.equal(a[..., ~inside], before[..., ~inside])
    assert torch.equal(b[..., ~inside], before[..., ~inside])
    changed = (a[0] - before[0]).abs() > 1e-6 * float(before[0].abs().max())
    assert int(changed.sum()) > 0.05 * int(inside.sum()) * a.shape[1]
    assert float((a[0] - b[0]).abs().max()) <= 1e-5 * float(a[0].abs().max())
    energetic = a[0] > 1e-3 * float(a[0].max())
    phase = torch.remainder(a[1] - b[1] + np.pi, 2 * np.pi) - np.pi
    assert float(phase[energetic].abs().max()) < 1e-3
    for history in (history_a, history_b):
        history.undo()
    assert torch.equal(grids(one)[0], before) and torch.equal(grids(two)[0], before)


def test_dabs_of_varying_weight_take_each_dab_s_own_mask():
    """With pen pressure changing the dabs' peak weights, the nearest dab is not the heaviest: no
    nearest-dab weight is given, and the group takes every dab's own mask (whose result
    ``test_fused_dabs`` compares with the dab-by-dab one)."""
    document = small_document(2.0)
    stroke = StrokeSession(document, "gain", BrushSettings(radius_frames=6, radius_bins=5))
    pressures = np.linspace(0.2, 1.0, 40)
    dabs = dab_module.Dabs(
        np.zeros(40), np.linspace(20, 100, 40), np.full(40, 50.0), pressures, *np.zeros((2, 40))
    )
    (block,) = dab_module._block_dabs(
        stroke.state, [stroke.state.blocks[0]], dab_module._EventDabs.of(stroke.state, dabs)
    )
    assert (
        dab_module._nearest_weight(stroke.state, stroke.state.blocks[0], block, block.joint_box())
        is None
    )
    stroke.abort()


def local_groups_one_by_one(dabs, limit: int) -> list[tuple[int, int]]:
    """:func:`_groups`' rule for a local brush applied dab after dab: the masks' size (count times
    the tallest height times the widest width) bounds a group instead of count times joint box."""
    groups: list[list[int]] = []
    for index in range(len(dabs)):
        if groups:
            members = [*groups[-1], index]
            boxes = dabs.boxes[members]
            joint = (boxes[:, 1].max() - boxes[:, 0].min()) * (
                boxes[:, 3].max() - boxes[:, 2].min()
            )
            heights, widths = boxes[:, 1] - boxes[:, 0], boxes[:, 3] - boxes[:, 2]
            if (
                joint <= FUSE_SLACK * (heights * widths).sum()
                and joint <= limit
                and len(members) * heights.max() * widths.max() <= FUSE_CELLS
            ):
                groups[-1].append(index)
                continue
        groups.append([index])
    return [(group[0], group[-1] + 1) for group in groups]


@pytest.mark.parametrize("seed", range(3))
def test_a_local_brush_s_groups_are_bounded_by_their_masks(seed):
    """Random walks of dabs of changing size: a local brush's groups are those of adding dabs one
    by one under its rule, and hold many more dabs than a brush's that maps each cell's owner."""
    rng = np.random.default_rng(seed)
    n = 3000
    frames = np.cumsum(rng.integers(0, 4, n))
    bins = 400 + np.cumsum(rng.integers(-2, 3, n))
    sizes = np.repeat(rng.integers(6, 40, n // 100 + 1), 100)[:n]
    boxes = np.stack((bins, bins + sizes, frames, frames + sizes), axis=1).astype(np.int64)
    centre = np.stack((frames + sizes / 2, bins + sizes / 2), axis=1)
    dabs = _BlockDabs(boxes, centre, centre, np.ones(n), centre, centre, centre, None, (0,), 0)
    local = _groups(dabs, FUSE_BOX, owners=False)
    assert local == local_groups_one_by_one(dabs, FUSE_BOX)
    assert len(local) < len(_groups(dabs, FUSE_BOX)) / 2
