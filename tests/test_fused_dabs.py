"""The dabs of one event applied together give what applying them one by one gives, for every brush."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from test_nsgt_document import RATE as NSGT_RATE
from test_nsgt_document import SETTINGS as NSGT_SETTINGS
from test_nsgt_document import tones

from spectropaint.brushes import dab as dab_module
from spectropaint.brushes.dab import (
    FUSE_BOX,
    FUSE_CELLS,
    FUSE_SLACK,
    _block_dabs,
    _BlockDabs,
    _EventDabs,
    _groups,
)
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import warp_compiled
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import Dabs, InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.regions import EMPTY

PARAMS = {"clone": {"offset_frames": -30, "offset_bins": 5}, "pen": {"level_db": -20}}


@pytest.fixture(autouse=True)
def torch_plan(monkeypatch):
    """Warp's groups through torch's plan, which these tests hold to the dab-by-dab kernel (bit
    for bit); the CPU's compiled kernel is held to that plan group by group in
    ``tests/test_warp_fused.py``."""
    monkeypatch.setenv(warp_compiled.FUSED_ENV, "0")


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


def block_dabs(frames, *, bins=None, offsets=None, radius=None) -> _BlockDabs:
    """Dabs of 10 x 10 cells at these first frames (and first bins: 10 by default)."""
    frames = np.asarray(frames, dtype=np.int64)
    bins = np.full(len(frames), 10) if bins is None else np.asarray(bins, dtype=np.int64)
    boxes = np.stack((bins, bins + 10, frames, frames + 10), axis=1)
    centre = np.stack((frames + 5.0, bins + 5.0), axis=1)
    size = np.full((len(frames), 2), 5.0)
    radius = size if radius is None else np.asarray(radius, dtype=np.float64)
    zeros = np.zeros((len(frames), 2))
    return _BlockDabs(
        boxes, centre, size, np.ones(len(frames)), radius, zeros, centre, offsets, (0,), 0
    )


def grouped_one_by_one(dabs: _BlockDabs, limit: int, by_radius: bool) -> list[tuple[int, int]]:
    """The grouping rule applied dab after dab (the reference for :func:`_groups`)."""
    groups: list[list[int]] = []
    for index in range(len(dabs)):
        if groups:
            first, members = groups[-1][0], [*groups[-1], index]
            same = dabs.offsets is None or (dabs.offsets[index] == dabs.offsets[first]).all()
            same &= not by_radius or bool((dabs.radius[index] == dabs.radius[first]).all())
            joint = dabs.box(members[0])
            for i in members[1:]:
                joint = joint.union(dabs.box(i))
            joint_cells = joint.shape[0] * joint.shape[1]
            cells = sum(dabs.box(i).shape[0] * dabs.box(i).shape[1] for i in members)
            if (
                same
                and joint_cells <= FUSE_SLACK * cells
                and joint_cells <= limit
                and joint_cells * len(members) <= FUSE_CELLS
            ):
                groups[-1].append(index)
                continue
        groups.append([index])
    return [(group[0], group[-1] + 1) for group in groups]


def test_far_apart_dabs_are_not_joined_into_one_huge_box():
    assert _groups(block_dabs([0, 5, 10])) == [(0, 3)]
    far = block_dabs([0, 500, 505])
    groups = _groups(far)
    assert groups == [(0, 1), (1, 3)]
    for start, stop in groups:
        box = far.part(start, stop).joint_box()
        cells = sum(far.box(i).shape[0] * far.box(i).shape[1] for i in range(start, stop))
        assert box.shape[0] * box.shape[1] <= FUSE_SLACK * cells


@pytest.mark.parametrize("limit", [FUSE_BOX, 400])
def test_a_group_s_box_and_masks_stay_within_their_budgets(limit):
    many = block_dabs(np.arange(4000))
    groups = _groups(many, limit)
    assert [start for start, _ in groups] == [0] + [stop for _, stop in groups[:-1]]
    assert groups[-1][1] == len(many)
    assert max(stop - start for start, stop in groups) > 1
    for start, stop in groups:
        box = many.part(start, stop).joint_box()
        assert (stop - start) * box.shape[0] * box.shape[1] <= FUSE_CELLS
        assert stop - start == 1 or box.shape[0] * box.shape[1] <= limit


@pytest.mark.parametrize("seed", range(6))
def test_groups_are_those_of_adding_dabs_one_by_one(seed):
    """Random walks of 1500 dabs, with clone offsets and radii that change along the way."""
    rng = np.random.default_rng(seed)
    n = 1500
    frames = np.cumsum(rng.integers(-3, 9, n))
    bins = 400 + np.cumsum(rng.integers(-4, 5, n))
    offsets = np.repeat(rng.integers(-2, 3, (n // 300 + 1, 2)), 300, axis=0)[:n]
    radius = np.repeat(rng.uniform(1, 3, (n // 50 + 1, 2)), 50, axis=0)[:n]
    for limit, kwargs, by_radius in [
        (FUSE_BOX, {}, False),
        (400, {"offsets": offsets}, False),
        (2000, {"radius": radius}, True),
        (FUSE_BOX, {"radius": radius}, False),
    ]:
        dabs = block_dabs(frames, bins=bins, **kwargs)
        expected = grouped_one_by_one(dabs, limit, by_radius)
        assert _groups(dabs, limit, by_radius=by_radius) == expected


def reference_block_dab(state, stroke, dab):
    """One dab on one block as the per-dab code computed it: its box (cells strictly inside the
    ellipse's bounding rectangle, from every frame's and band's position), or None where no cell
    lies inside the ellipse (or the clone's source is its destination in the block's cells)."""
    axes, grid = stroke.axes, state.document.blocks[stroke.index]
    size = state.settings.size_at(dab.pressure)
    reach = (state.plane.radius[0] * size, state.plane.radius[1] * size)
    if axes.identity:
        frame_x, band_y = (
            np.arange(grid.n_frames, dtype=np.float64),
            np.arange(grid.n_bins, dtype=np.float64),
        )
        frames = np.flatnonzero((frame_x > dab.x - reach[0]) & (frame_x < dab.x + reach[0]))
        bands = np.flatnonzero((band_y > dab.y - reach[1]) & (band_y < dab.y + reach[1]))
        if not len(frames) or not len(bands):
            return None
        return (bands[0], bands[-1] + 1, frames[0], frames[-1] + 1), None
    j = np.arange(grid.n_frames)
    frames = j[
        (j > (dab.x - reach[0] - axes.x_offset) / axes.x_scale)
        & (j < (dab.x + reach[0] - axes.x_offset) / axes.x_scale)
    ]
    bands = np.flatnonzero((axes.y > dab.y - reach[1]) & (axes.y < dab.y + reach[1]))
    if not len(frames) or not len(bands):
        return None
    u = (axes.x_offset + axes.x_scale * frames - dab.x) / reach[0]
    v = (axes.y[bands] - dab.y) / reach[1]
    if (u[:, None] ** 2 + v[None, :] ** 2).min() >= 1.0:
        return None
    offset = None
    if state.kind.reads_source:
        per_x, per_y = axes.cells_per_unit(dab.y)
        params = state.params
        if state.plane.physical:
            given = (params.offset_seconds, params.offset_pitch)
        else:
            given = (params.offset_frames, params.offset_bins)
        offset = (round(given[0] * per_x), round(given[1] * float(per_y)))
        if offset == (0, 0):
            return None
    return (bands[0], bands[-1] + 1, frames[0], frames[-1] + 1), offset


@pytest.mark.parametrize("transform", ["stft", "nsgt"])
@pytest.mark.parametrize("physical", [False, True])
@pytest.mark.parametrize("brush", ["gain", "clone"])
def test_each_block_s_dabs_are_those_computed_one_by_one(transform, physical, brush):
    """:func:`_block_dabs` (arrays) against the per-dab reference, for dabs scattered over the
    grid, its edges and beyond, on the STFT (its own cells, or seconds and semitones) and on the
    NSGT's blocks."""
    if transform == "nsgt":
        document = Document.from_samples(
            tones(2.0), NSGT_RATE, settings=NSGT_SETTINGS, device="cpu"
        )
    else:
        document = small_document(seconds=2.0)
    if physical:
        settings = BrushSettings(radius_seconds=0.05, radius_semitones=1.5, pressure_size=0.5)
        params = {"offset_seconds": -0.3, "offset_pitch": 0.4}
    else:
        settings = BrushSettings(radius_frames=3.5, radius_bins=2.5, pressure_size=0.5)
        params = {"offset_frames": -9, "offset_bins": 2}
    stroke = StrokeSession(document, brush, settings, params=params if brush == "clone" else None)
    state = stroke.state
    rng = np.random.default_rng(3)
    n = 400
    if physical:
        x, y = rng.uniform(-0.2, 2.2, n), 12 * np.log2(rng.uniform(10, 30000, n) / 440) + 69
    else:
        plane = state.plane  # frames and bins of the STFT grid
        top = document.sample_rate / 2 / plane.bin_hz
        x, y = rng.uniform(-6, 2.0 / plane.frame_seconds + 6, n), rng.uniform(-6, top + 6, n)
    dabs = Dabs(np.zeros(n), x, y, rng.uniform(0, 1, n), rng.normal(0, 1, n), rng.normal(0, 1, n))
    compared = 0
    for block in state.blocks:
        (got,) = _block_dabs(state, [block], _EventDabs.of(state, dabs))
        expected = [(i, reference_block_dab(state, block, dabs[i])) for i in range(n)]
        expected = [(i, found) for i, found in expected if found is not None]
        assert len(got) == len(expected)
        compared += len(got)
        assert got.boxes.tolist() == [list(found[0]) for _, found in expected]
        if got.offsets is not None:
            assert got.offsets.tolist() == [list(found[1]) for _, found in expected]
        kept = np.array([i for i, _ in expected])
        if len(kept):
            assert np.array_equal(got.at, np.stack((x[kept], y[kept]), axis=1))
    assert compared > n / 4
    stroke.abort()


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_fusing_applies_far_fewer_groups_than_dabs(monkeypatch, brush):
    calls = {"count": 0}
    for name in ("_apply_stamping", "_apply_dragging"):
        original = getattr(dab_module, name)

        def counting(*args, original=original, **kwargs):
            calls["count"] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(dab_module, name, counting)
    settings = BrushSettings(radius_frames=5, radius_bins=4)
    counts = {}
    for fuse in (False, True):
        calls["count"] = 0
        paint(small_document(), brush, fuse, settings, events(0))
        counts[fuse] = calls["count"]
    assert counts[False] >= 40 and counts[True] <= counts[False] / 3


@pytest.mark.parametrize("phase", ["auto", "continue", "shift"])
@pytest.mark.parametrize(
    "where", ["inside", "edges", "nsgt"], ids=["inside", "along-the-edges", "nsgt-seconds"]
)
def test_planned_warp_equals_the_kernel_dab_by_dab_bit_for_bit(monkeypatch, phase, where):
    """Warp's planned groups (:class:`~spectropaint.brushes.kernels.warp.WarpPlan`: each dab on a
    window larger than its box, everything not read from the values computed for the group at
    once) against the kernel run dab by dab on each dab's own region (``fuse=False``): the
    documents are identical after every event of a recorded stroke, in each phase mode, inside
    the grid, along its first frames and lowest bins (regions reflected) and on the NSGT's blocks
    in seconds and semitones. Auto phase's decision amplifies a last-bit difference a
    thousandfold over a stroke, so nothing short of equality is a safe reference."""
    if where == "nsgt":
        settings = BrushSettings(radius_seconds=0.08, radius_semitones=2.0, pressure_size=0.5)
        stroke_events = [
            InputEvent(i / 60, 0.8 + 0.09 * i, 440.0 * 2 ** (np.sin(i / 2) / 3), 0.5 + i / 40)
            for i in range(14)
        ]

        def document():
            return Document.from_samples(
                tones(3.0), NSGT_RATE, settings=NSGT_SETTINGS, device="cpu"
            )
    else:
        settings = BrushSettings(radius_frames=5, radius_bins=4, hardness=0.7, pressure_size=0.5)
        stroke_events = (
            events(1)
            if where == "inside"
            else [InputEvent(i / 60, 1.0 + 5.0 * i, 2.0 + 3.0 * np.sin(i), 1.0) for i in range(12)]
        )
        document = small_document
    planned_dabs = assert_planned_warp_equals_the_kernel(
        monkeypatch, document, settings, stroke_events, phase
    )
    assert len(planned_dabs) >= 5 and min(planned_dabs) >= 2  # groups of several were planned


def test_a_planned_warp_group_split_in_parts_equals_the_kernel_bit_for_bit(monkeypatch):
    """A group of more window cells than one plan holds (:data:`~.dab.PLAN_CELLS`, lowered here)
    goes through several plans one after another, and still equals the kernel dab by dab."""
    monkeypatch.setattr(dab_module, "PLAN_CELLS", 300)  # a few small windows a plan
    settings = BrushSettings(radius_frames=5, radius_bins=4, hardness=0.7, pressure_size=0.5)
    parts = []
    original = dab_module._drag_part

    def counting(state, stroke, group, *args):
        boxes = group.boxes
        cells = (boxes[:, 1] - boxes[:, 0]).max() * (boxes[:, 3] - boxes[:, 2]).max()
        assert len(group) == 1 or len(group) * cells <= 300
        parts.append(len(group))
        return original(state, stroke, group, *args)

    monkeypatch.setattr(dab_module, "_drag_part", counting)
    planned = assert_planned_warp_equals_the_kernel(
        monkeypatch, small_document, settings, events(2), "auto"
    )
    assert len(parts) > len(planned) and sum(parts) == sum(planned)  # groups were split


def assert_planned_warp_equals_the_kernel(monkeypatch, document, settings, stroke_events, phase):
    """The documents painted by ``stroke_events`` dab by dab through the kernel and in planned
    groups are identical after every event; the sizes of the planned groups."""
    one, two = document(), document()
    before = grids(one)
    per_dab = StrokeSession(one, "warp", settings, params={"phase": phase}, fuse=False)
    planned = StrokeSession(two, "warp", settings, params={"phase": phase}, fuse=True)
    planned_dabs = []
    original = dab_module._drag_planned

    def counting(state, stroke, group, *args):
        planned_dabs.append(len(group))
        return original(state, stroke, group, *args)

    monkeypatch.setattr(dab_module, "_drag_planned", counting)
    for event in stroke_events:
        assert per_dab.add_events((event,)) == planned.add_events((event,))
        for a, b in zip(grids(one), grids(two), strict=True):
            assert torch.equal(a, b)
    assert any(not torch.equal(a, b) for a, b in zip(grids(two), before, strict=True))
    return planned_dabs
