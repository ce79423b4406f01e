"""The dabs of one event applied together give what applying them one by one gives, for every brush."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from test_nsgt_document import RATE as NSGT_RATE
from test_nsgt_document import SETTINGS as NSGT_SETTINGS
from test_nsgt_document import tones

from spectropaint.brushes import dab as dab_module
from spectropaint.brushes.dab import FUSE_BOX, FUSE_CELLS, FUSE_SLACK, _BlockDab, _groups
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.regions import EMPTY, Region

PARAMS = {"clone": {"offset_frames": -30, "offset_bins": 5}, "pen": {"level_db": -20}}


def grids(document):
    return [torch.stack((block.magnitude, block.phase)).clone() for block in document.blocks]


def events(seed: int, *, x=40.0, y=60.0, dy=6.0) -> list[InputEvent]:
    """A wandering stroke whose events are far apart (several dabs each), with varying pressure."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(14):
        x += rng.uniform(3, 14)
        y += rng.uniform(-dy, dy)
        out.append(InputEvent(i / 60, x, y, float(rng.uniform(0.3, 1.0))))
    return out


def paint(document, brush, fuse, settings, stroke_events, params=None):
    history = History(document)
    params = PARAMS.get(brush) if params is None else params
    stroke = StrokeSession(document, brush, settings, params=params, history=history, fuse=fuse)
    regions = [stroke.add_events((event,)) for event in stroke_events]
    stroke.end()
    return regions, history


def assert_same_strokes(make_document, brush, settings, stroke_events, params=None):
    """Fused and dab-by-dab strokes agree to float tolerance, report the same boxes and leave
    every cell outside them bit-identical, and undo exactly."""
    one, two = make_document(), make_document()
    before = grids(one)
    per_dab, history_a = paint(one, brush, False, settings, stroke_events, params)
    fused, history_b = paint(two, brush, True, settings, stroke_events, params)
    reported = EMPTY
    for region in fused:
        reported = reported.union(region)
    changed = False
    for index, (a, b, start) in enumerate(zip(grids(one), grids(two), before, strict=True)):
        changed = changed or not torch.equal(a, start)
        # nothing is written outside the boxes the events reported
        outside = torch.ones(a.shape[1:], dtype=torch.bool)
        for part in reported.parts:
            if part.block == index:
                outside[:, part.bin0 : part.bin1, part.frame0 : part.frame1] = False
        assert torch.equal(a[:, outside], start[:, outside])
        assert torch.equal(b[:, outside], start[:, outside])
        difference = (a - b).abs()
        # magnitude to float tolerance; phase compared where there is energy
        assert float(difference[0].max()) <= 1e-5 * float(a[0].abs().max())
        energetic = a[0] > 1e-3 * float(a[0].max())
        phase = torch.remainder(a[1] - b[1] + np.pi, 2 * np.pi) - np.pi
        assert float(phase[energetic].abs().max()) < 1e-3
    assert changed
    assert per_dab == fused
    for history in (history_a, history_b):
        history.undo()
    for a, b, start in zip(grids(one), grids(two), before, strict=True):
        assert torch.equal(a, start) and torch.equal(b, start)


@pytest.mark.parametrize("brush", sorted(BRUSHES))
@pytest.mark.parametrize("hardness", [0.0, 0.7, 1.0])
def test_fused_and_per_dab_strokes_give_the_same_document_and_undo(brush, hardness):
    settings = BrushSettings(
        radius_frames=5, radius_bins=4, hardness=hardness, strength=0.8, pressure_size=0.5
    )
    assert_same_strokes(small_document, brush, settings, events(0))


@pytest.mark.parametrize(
    ("brush", "params", "radius_bins"),
    [
        ("warp", {"phase": "continue", "amount": 1.5}, 4),
        ("warp", {"phase": "shift"}, 4),
        ("clone", {"offset_frames": 12, "offset_bins": -3, "phase": "continue"}, 4),
        ("clone", {"offset_frames": -7, "offset_bins": 0, "phase": "shift"}, 4),
        ("filter", {"mode": "highpass", "cutoff": 0.2}, 4),
        ("filter", {"mode": "bandpass", "cutoff": 0.1, "cutoff_high": 0.3}, 7),
        ("pen", {"level_db": -10, "harmonics": 3}, 1.5),
        ("blur", {"sigma": 0.6}, 6),
    ],
)
def test_every_mode_fuses_exactly_along_the_grids_edges(brush, params, radius_bins):
    """A stroke that runs along the first frames and the lowest bins (regions reflected past the
    grid) and back into it."""
    settings = BrushSettings(radius_frames=6, radius_bins=radius_bins, hardness=0.4)
    edge = [InputEvent(i / 60, 1.0 + 5.0 * i, 2.0 + 3.0 * np.sin(i), 1.0) for i in range(12)]
    assert_same_strokes(small_document, brush, settings, edge, params)


@pytest.mark.parametrize("brush", sorted(BRUSHES))
@pytest.mark.parametrize("transform", ["nsgt", "stft"])
def test_strokes_in_seconds_and_semitones_fuse_exactly(brush, transform):
    """Dabs in a physical plane: each block's own frames and bands (the NSGT's several blocks)."""

    def document():
        if transform == "nsgt":
            return Document.from_samples(
                tones(3.0), NSGT_RATE, settings=NSGT_SETTINGS, device="cpu"
            )
        return small_document(seconds=3.0)

    settings = BrushSettings(radius_seconds=0.08, radius_semitones=2.0, hardness=0.5)
    params = {"offset_seconds": -0.5, "offset_pitch": 3.0} if brush == "clone" else None
    stroke_events = [
        InputEvent(i / 60, 0.8 + 0.09 * i, 440.0 * 2 ** (np.sin(i / 2) / 3), 0.8) for i in range(14)
    ]
    assert_same_strokes(document, brush, settings, stroke_events, params)


def block_dab(frame):
    box = Region(10, 20, frame, frame + 10, (0,))
    return _BlockDab(
        box, (frame + 5.0, 15.0), (5.0, 5.0), 1.0, (5.0, 5.0), (0.0, 0.0), (frame + 5.0, 15.0), None
    )


def test_far_apart_dabs_are_not_joined_into_one_huge_box():
    near = [block_dab(0), block_dab(5), block_dab(10)]
    assert [len(group) for group in _groups(near)] == [3]
    far = [block_dab(0), block_dab(500), block_dab(505)]
    groups = _groups(far)
    assert [len(group) for group in groups] == [1, 2]
    for group in groups:
        box = group[0].box
        for other in group[1:]:
            box = box.union(other.box)
        cells = sum(d.box.shape[0] * d.box.shape[1] for d in group)
        assert box.shape[0] * box.shape[1] <= FUSE_SLACK * cells


@pytest.mark.parametrize("limit", [FUSE_BOX, 400])
def test_a_group_s_box_and_masks_stay_within_their_budgets(limit):
    many = [block_dab(i) for i in range(0, 4000, 1)]
    groups = _groups(many, limit)
    assert sum(len(group) for group in groups) == len(many)
    assert max(len(group) for group in groups) > 1
    for group in groups:
        box = group[0].box
        for other in group[1:]:
            box = box.union(other.box)
        assert len(group) * box.shape[0] * box.shape[1] <= FUSE_CELLS
        assert len(group) == 1 or box.shape[0] * box.shape[1] <= limit


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_fusing_applies_far_fewer_groups_than_dabs(monkeypatch, brush):
    calls = {"count": 0}
    for name in ("_apply_stamping", "_apply_dragging"):
        original = getattr(dab_module, name)

        def counting(*args, original=original):
            calls["count"] += 1
            return original(*args)

        monkeypatch.setattr(dab_module, name, counting)
    settings = BrushSettings(radius_frames=5, radius_bins=4)
    counts = {}
    for fuse in (False, True):
        calls["count"] = 0
        paint(small_document(), brush, fuse, settings, events(0))
        counts[fuse] = calls["count"]
    assert counts[False] >= 40 and counts[True] <= counts[False] / 3
