"""The dabs of one event applied together give what applying them one by one gives."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document

from spectropaint.brushes.dab import FUSE_SLACK, _groups
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent

PARAMS = {"clone": {"offset_frames": -30, "offset_bins": 5}, "pen": {"level_db": -20}}


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def events(seed: int) -> list[InputEvent]:
    """A wandering stroke whose events are far apart (several dabs each), with varying pressure."""
    rng = np.random.default_rng(seed)
    x, y = 40.0, 60.0
    out = []
    for i in range(14):
        x += rng.uniform(3, 14)
        y += rng.uniform(-6, 6)
        out.append(InputEvent(i / 60, x, y, float(rng.uniform(0.3, 1.0))))
    return out


def paint(document, brush, fuse, settings, seed=0):
    history = History(document)
    stroke = StrokeSession(
        document, brush, settings, params=PARAMS.get(brush), history=history, fuse=fuse
    )
    regions = [stroke.add_events((event,)) for event in events(seed)]
    stroke.end()
    return regions, history


@pytest.mark.parametrize("brush", sorted(BRUSHES))
@pytest.mark.parametrize("hardness", [0.0, 0.7, 1.0])
def test_fused_and_per_dab_strokes_give_the_same_document_and_undo(brush, hardness):
    settings = BrushSettings(
        radius_frames=5, radius_bins=4, hardness=hardness, strength=0.8, pressure_size=0.5
    )
    one, two = small_document(), small_document()
    before = grids(one)
    per_dab, history_a = paint(one, brush, False, settings)
    fused, history_b = paint(two, brush, True, settings)
    a, b = grids(one), grids(two)
    assert not torch.equal(a, before)
    difference = (a - b).abs()
    # magnitude to float tolerance; phase compared where there is energy
    assert float(difference[0].max()) <= 1e-5 * float(a[0].abs().max())
    energetic = a[0] > 1e-3 * float(a[0].max())
    phase = torch.remainder(a[1] - b[1] + np.pi, 2 * np.pi) - np.pi
    assert float(phase[energetic].abs().max()) < 1e-3
    # cells no dab reached are bit-identical either way, and so is the region each event reports
    untouched = (a == before).all(dim=0)
    assert torch.equal(b[:, untouched], before[:, untouched])
    assert per_dab == fused
    for history in (history_a, history_b):
        history.undo()
    assert torch.equal(grids(one), before) and torch.equal(grids(two), before)


def test_far_apart_dabs_are_not_joined_into_one_huge_box():
    from spectropaint.brushes.dab import _BlockDab
    from spectropaint.transforms.regions import Region

    def dab(frame):
        box = Region(10, 20, frame, frame + 10, (0,))
        return _BlockDab(box, torch.ones(box.shape), (5.0, 5.0), (0.0, 0.0), None, (frame, 15.0))

    near = [dab(0), dab(5), dab(10)]
    assert [len(group) for group in _groups(near)] == [3]
    far = [dab(0), dab(500), dab(505)]
    groups = _groups(far)
    assert [len(group) for group in groups] == [1, 2]
    for group in groups:
        box = group[0].box
        for other in group[1:]:
            box = box.union(other.box)
        cells = sum(d.box.shape[0] * d.box.shape[1] for d in group)
        assert box.shape[0] * box.shape[1] <= FUSE_SLACK * cells


def test_fusing_applies_far_fewer_boxes_than_dabs(monkeypatch):
    from spectropaint.brushes import dab as dab_module

    calls = {"count": 0}
    original = dab_module._apply

    def counting(*args):
        calls["count"] += 1
        return original(*args)

    monkeypatch.setattr(dab_module, "_apply", counting)
    settings = BrushSettings(radius_frames=5, radius_bins=4)
    counts = {}
    for fuse in (False, True):
        calls["count"] = 0
        paint(small_document(), "gain", fuse, settings)
        counts[fuse] = calls["count"]
    assert counts[False] >= 40 and counts[True] <= counts[False] / 3


@pytest.mark.parametrize("hardness", [0.0, 0.6, 1.0])
def test_masks_computed_together_equal_the_largest_of_each_dabs_own_mask(hardness):
    from spectropaint.brushes.mask import dab_box, dab_mask, ellipses_mask
    from spectropaint.transforms.regions import EMPTY

    rng = np.random.default_rng(3)
    n_bins, n_frames = 40, 90
    ellipses, boxes = [], []
    for _ in range(25):  # some reach past the grid's edges, radii and weights vary
        x, y = rng.uniform(-3, n_frames + 3), rng.uniform(-3, n_bins + 3)
        rx, ry, weight = rng.uniform(0.6, 7), rng.uniform(0.6, 5), rng.uniform(0.2, 1)
        box = dab_box(x, y, rx, ry, n_bins=n_bins, n_frames=n_frames, channels=(0,))
        if not box.empty:
            ellipses.append((x, y, rx, ry, weight))
            boxes.append(box)
    joint = EMPTY
    for box in boxes:
        joint = joint.union(box)
    expected = torch.zeros(joint.shape)
    for box, (x, y, rx, ry, weight) in zip(boxes, ellipses, strict=True):
        mask = dab_mask(box, x, y, rx, ry, hardness=hardness, weight=weight, device="cpu")
        part = expected[box.bin0 - joint.bin0 : box.bin1 - joint.bin0, box.frame0 - joint.frame0 :]
        part = part[:, : box.shape[1]]
        torch.maximum(part, mask, out=part)
    together = ellipses_mask(joint, boxes, ellipses, hardness=hardness, device="cpu")
    assert together.shape == joint.shape and float(expected.max()) > 0.1
    torch.testing.assert_close(together, expected, atol=1e-6, rtol=0)
    assert torch.equal(together == 0, expected == 0)  # the same cells untouched
