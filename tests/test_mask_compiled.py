"""A group's dab weights computed on the host in one compiled loop
(:mod:`spectropaint.brushes.mask_compiled`) against the device's path (:func:`~spectropaint.
brushes.mask.mask_from_distances` and the largest weight per cell scattered by index), group by
group and stroke by stroke."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document

from spectropaint.brushes import mask_compiled, plan_compiled
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import compiled_math
from spectropaint.brushes.mask import mask_from_distances
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent


def group(seed: int, n_dabs: int, height: int, width: int, shape: tuple[int, int]):
    """Distances of ``n_dabs`` dabs of boxes up to ``height`` x ``width`` placed in a joint box of
    ``shape``, as :func:`~spectropaint.brushes.dab._host_distances` gives them (2 past each box)."""
    rng = np.random.default_rng(seed)
    heights = rng.integers(height // 2, height + 1, n_dabs)
    widths = rng.integers(width // 2, width + 1, n_dabs)
    centres = rng.uniform(0.2, 0.8, (n_dabs, 2))
    steps_down, steps_across = np.arange(height), np.arange(width)
    v = (steps_down - centres[:, :1] * heights[:, None]) / (heights[:, None] / 2)
    u = (steps_across - centres[:, 1:] * widths[:, None]) / (widths[:, None] / 2)
    v = np.where(steps_down < heights[:, None], v, 2.0)
    u = np.where(steps_across < widths[:, None], u, 2.0)
    first_row = rng.integers(0, shape[0] - height + 1, n_dabs)[:, None]
    first_column = rng.integers(0, shape[1] - width + 1, n_dabs)[:, None]
    rows, columns = first_row + steps_down, first_column + steps_across
    return u, v, columns, rows, rng.uniform(0.2, 1.0, n_dabs)


def device_path(u, v, columns, rows, peak, hardness, shape):
    """The device's path on the CPU: the masks, then the largest per cell by ``scatter_reduce``."""
    n_dabs = len(peak)
    as32 = [torch.from_numpy(np.asarray(a, dtype=np.float32)) for a in (u, v, peak)]
    each = mask_from_distances(
        as32[0], as32[1], hardness=hardness, weight=as32[2].view(n_dabs, 1, 1)
    )
    cells = torch.from_numpy(rows[:, :, None] * shape[1] + columns[:, None, :]).flatten()
    largest = torch.zeros(shape[0] * shape[1]).scatter_reduce_(0, cells, each.flatten(), "amax")
    return largest.view(shape).numpy(), each.numpy()


@pytest.mark.parametrize("hardness", [0.0, 0.5, 1.0])
@pytest.mark.parametrize(("n_dabs", "height", "width"), [(1, 17, 17), (6, 17, 21), (3, 65, 65)])
@pytest.mark.parametrize("pressure", ["varied", "one"])
def test_the_weights_equal_the_device_path_s(hardness, n_dabs, height, width, pressure):
    """Peaks that differ (a tablet's pressure), and one peak for every dab, whose largest weight
    per cell (without each dab's) is the nearest dab's (:func:`~spectropaint.brushes.
    mask_compiled._nearest_weights`): to within a rounding of the dab by dab loop's."""
    shape = (height + 9, width + 30)
    u, v, columns, rows, peak = group(n_dabs * 7 + height, n_dabs, height, width, shape)
    if pressure == "one":
        peak = np.full_like(peak, peak[0])
    assert mask_compiled.fits(height * width, n_dabs * height * width, torch.device("cpu"))
    largest, each = mask_compiled.weights(
        u, v, columns, rows, peak, hardness=hardness, shape=shape, each=True
    )
    want_largest, want_each = device_path(u, v, columns, rows, peak, hardness, shape)
    assert largest.max() > 0.1  # the dabs do weigh
    np.testing.assert_allclose(each, want_each, rtol=0, atol=3e-7)
    np.testing.assert_allclose(largest, want_largest, rtol=0, atol=3e-7)
    # exactly 0 past every ellipse (those cells keep their values), as on the device's path
    r = np.sqrt(v.astype(np.float32)[:, :, None] ** 2 + u.astype(np.float32)[:, None, :] ** 2)
    inside = np.zeros(shape, dtype=bool)
    for k in range(n_dabs):
        inside[rows[k][:, None], columns[k][None, :]] |= r[k] < 1
    assert (largest[~inside] == 0).all() and (want_largest[~inside] == 0).all()
    assert (each[r >= 1] == 0).all() and (largest[inside] > 0).sum() >= 0.9 * inside.sum()
    only, none = mask_compiled.weights(
        u, v, columns, rows, peak, hardness=hardness, shape=shape, each=False
    )
    assert none is None
    if pressure == "varied" or n_dabs == 1:
        assert np.array_equal(only, largest)
    else:
        assert (np.abs(only - largest) <= np.spacing(largest)).all()
        assert (only[~inside] == 0).all() and (only[inside] > 0).sum() >= 0.9 * inside.sum()


@pytest.mark.parametrize("pressure", ["varied", "one"])
def test_columns_clamped_into_the_joint_box_are_kept_one_by_one(pressure):
    """Dabs narrower than the group's widest, ending at the joint box's last column: their
    columns past it repeat that column (as :func:`~spectropaint.brushes.plan_compiled.
    cells_and_distances` clamps them), so only a run of them is a slice of the row; the rest,
    whose weight is 0, are kept one by one. The largest weight per cell equals the device's."""
    shape = (40, 50)
    u, v, columns, rows, peak = group(5, 4, 33, 33, shape)
    widths = (u < 2.0).sum(axis=1)
    columns = np.minimum(shape[1] - widths[:, None] + np.arange(33), shape[1] - 1)
    assert (columns[:, -1] == shape[1] - 1).all() and (widths < 33).any()  # (some clamped)
    if pressure == "one":
        peak = np.full_like(peak, peak[0])
    largest, _ = mask_compiled.weights(
        u, v, columns, rows, peak, hardness=0.5, shape=shape, each=False
    )
    want, _ = device_path(u, v, columns, rows, peak, 0.5, shape)
    assert largest[:, -1].max() > 0.1  # (the last column, which the clamped columns repeat)
    np.testing.assert_allclose(largest, want, rtol=0, atol=3e-7)


@pytest.mark.parametrize("each", [False, True])
@pytest.mark.parametrize("owners", [False, True])
@pytest.mark.parametrize(("pressure", "x_scale"), [("varied", 1.0), ("one", 1.0), ("one", 0.37)])
def test_one_call_gives_the_distances_owners_and_weights_calls_results(each, owners, pressure,
                                                                      x_scale):  # fmt: skip
    """:func:`~spectropaint.brushes.mask_compiled.group_weights` (distances, owner maps and
    weights in one compiled call) gives bit for bit what the three calls give one after another:
    dabs along a path, some boxes cut by the grid's first bins, a plane whose frames are not its
    x (``x_scale``)."""
    rng = np.random.default_rng(int(each) * 4 + int(owners) * 2 + int(x_scale == 1.0))
    n_dabs, y = 7, np.sort(rng.uniform(0.0, 300.0, 120))
    at = np.column_stack((np.linspace(40.0, 61.0, n_dabs), np.linspace(3.0, 14.0, n_dabs)))
    at[:, 1] = y[np.linspace(1, 12, n_dabs).astype(int)] + 0.3
    reach = np.column_stack((np.full(n_dabs, 6.5), rng.uniform(20.0, 40.0, n_dabs)))
    peak = rng.uniform(0.3, 1.0, n_dabs) if pressure == "varied" else np.full(n_dabs, 0.6)
    frames = (at[:, 0:1] + np.array([-1, 1]) * reach[:, 0:1]) / x_scale
    boxes = np.column_stack((
        np.searchsorted(y, at[:, 1] - reach[:, 1], side="right"),
        np.searchsorted(y, at[:, 1] + reach[:, 1], side="left"),
        np.floor(frames[:, 0]).astype(int) + 1, np.ceil(frames[:, 1]).astype(int),
    )).astype(np.int64)  # fmt: skip
    assert boxes[0, 0] == 0  # (cut by the first bin)
    corner = (int(boxes[:, 0].min()), int(boxes[:, 2].min()))
    shape = (int(boxes[:, 1].max()) - corner[0], int(boxes[:, 3].max()) - corner[1])
    centres = at[:, 1] / 10.0 if owners else None
    largest, own, found = mask_compiled.group_weights(
        boxes, at, reach, corner, shape, (0.0, x_scale, y), peak, hardness=0.4, each=each,
        centres=centres,
    )  # fmt: skip
    spans, columns, rows, _, _, u, v = plan_compiled.cells_and_distances(
        boxes, at, reach, corner, shape, 0.0, x_scale, y, windows=False
    )
    want, want_own = mask_compiled.weights(
        u, v, columns, rows, peak, hardness=0.4, shape=shape, each=each
    )
    assert largest.max() > 0.2 and np.array_equal(largest, want)
    assert (own is None) == (not each) and (own is None or np.array_equal(own, want_own))
    if owners:
        for got, expected in zip(found, plan_compiled.owners(spans, centres, shape), strict=True):
            np.testing.assert_array_equal(got, expected)  # (NaN where no dab's box holds a cell)
        assert found[1].any() and not found[1].all()
        held_largest, _, held = mask_compiled.group_weights(
            boxes, at, reach, corner, shape, (0.0, x_scale, y), peak, hardness=0.4, each=each,
            centres=centres, holders=True,
        )  # fmt: skip
        np.testing.assert_array_equal(held, plan_compiled.holders(spans, shape))
        assert held.dtype == np.int32 and (held == -1).any() and held.max() == n_dabs - 1
        assert np.array_equal(held_largest, largest)
    else:
        assert found is None


def test_wide_brushes_large_gpu_groups_and_the_switch_keep_the_device_path(monkeypatch):
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    many = 1000 * 17 * 17  # a thousand dabs at radius 8
    assert mask_compiled.fits(127 * 127, 127 * 127, cpu)  # radius 63
    assert not mask_compiled.fits(129 * 129, 129 * 129, cpu)  # radius 64: over HOST_CELLS
    assert mask_compiled.fits(17 * 17, many, cpu)  # on the CPU, whatever the group
    assert mask_compiled.fits(17 * 17, 100 * 17 * 17, gpu)
    assert not mask_compiled.fits(17 * 17, many, gpu)  # over GPU_GROUP_CELLS
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    assert not mask_compiled.fits(17 * 17, 17 * 17, cpu)


@pytest.mark.parametrize("brush", ["gain", "pen", "filter"])
def test_a_stroke_with_host_weights_equals_the_device_path_s(monkeypatch, brush):
    """A stamping stroke of several dabs an event (local, dab-centred and whole-box brushes)."""
    events = [InputEvent(i / 60, 20.0 + 9.0 * i, 40.0 + 9.0 * np.sin(i / 3), 0.4 + i / 20)
              for i in range(10)]  # fmt: skip
    settings = BrushSettings(radius_frames=6, radius_bins=5, hardness=0.4)
    results = []
    for host in (True, False):
        monkeypatch.setattr(mask_compiled, "fits", lambda *a, on=host, real=mask_compiled.fits:
                            on and real(*a))  # fmt: skip
        document = small_document()
        before = torch.stack((document.blocks[0].magnitude, document.blocks[0].phase)).clone()
        stroke = StrokeSession(document, brush, settings, history=History(document))
        for event in events:
            stroke.add_events((event,))
        stroke.end()
        results.append(torch.stack((document.blocks[0].magnitude, document.blocks[0].phase)))
    (host, device), changed = results, (results[1] != before).any(dim=0)
    assert changed.any()
    assert torch.equal(host[:, ~changed], device[:, ~changed])  # untouched cells are untouched
    assert (host[0] - device[0]).abs().max() <= 1e-5 * device[0].abs().max()
    phase = torch.remainder(host[1] - device[1] + np.pi, 2 * np.pi) - np.pi
    assert phase[:, changed.all(dim=0)].abs().max() < 1e-4
