"""The host's planning in compiled loops (:mod:`spectropaint.brushes.plan_compiled`): each dab's
cells and distances against a reference computed dab by dab from the definitions, and the loops
run as plain Python (where Numba does not import) against the compiled ones, bit for bit. The
grouping rule is checked against dabs added one by one in ``test_fused_dabs.py``."""

from types import SimpleNamespace

import numpy as np
import pytest

from spectropaint.brushes import dab, plan_compiled


def scattered_dabs(seed: int, n_dabs: int, radius: float):
    """Dabs inside a 220 x 320 grid (a few past its edges), their boxes and their joint box's
    corner and shape."""
    rng = np.random.default_rng(seed)
    at = np.stack([rng.uniform(-3, 323, n_dabs), rng.uniform(-3, 223, n_dabs)], axis=1)
    reach = rng.uniform(0.6, radius, (n_dabs, 2))
    boxes, keep = plan_compiled.dab_boxes(at, reach, n_bins=220, n_frames=320)
    boxes, at, reach = boxes[keep], at[keep], reach[keep]
    corner = (int(boxes[:, 0].min()), int(boxes[:, 2].min()))
    shape = (int(boxes[:, 1].max()) - corner[0], int(boxes[:, 3].max()) - corner[1])
    return boxes, at, reach, corner, shape


def reference(boxes, at, reach, corner, shape, x_offset, x_scale, y, windows):
    """Each dab alone: its block of the widest and tallest size, placed at its box's top left (or
    moved into the joint box), each cell's distance from the definitions."""
    width = int((boxes[:, 3] - boxes[:, 2]).max())
    height = int((boxes[:, 1] - boxes[:, 0]).max())
    out = {name: [] for name in ("spans", "columns", "rows", "in_columns", "in_rows", "u", "v")}
    for (bin0, bin1, frame0, frame1), (x, y_at), (rx, ry) in zip(boxes, at, reach, strict=True):
        span = [frame0 - corner[1], frame1 - corner[1], bin0 - corner[0], bin1 - corner[0]]
        first_column, first_row = span[0], span[2]
        if windows:
            first_column = min(first_column, shape[1] - width)
            first_row = min(first_row, shape[0] - height)
        columns = [first_column + step for step in range(width)]
        rows = [first_row + step for step in range(height)]
        in_columns = [span[0] <= c < span[1] for c in columns]
        in_rows = [span[2] <= r < span[3] for r in rows]
        columns = [min(c, shape[1] - 1) for c in columns]
        rows = [min(r, shape[0] - 1) for r in rows]
        u = [(x_offset + x_scale * float(corner[1] + c) - x) / rx if inside else 2.0
             for c, inside in zip(columns, in_columns, strict=True)]  # fmt: skip
        v = [(y[corner[0] + r] - y_at) / ry if inside else 2.0
             for r, inside in zip(rows, in_rows, strict=True)]  # fmt: skip
        for name, values in zip(out, (span, columns, rows, in_columns, in_rows, u, v), strict=True):
            out[name].append(values)
    return [np.array(values) for values in out.values()]


@pytest.mark.parametrize("windows", [False, True])
@pytest.mark.parametrize(("seed", "n_dabs", "radius"), [(0, 1, 9.0), (1, 12, 9.0), (2, 40, 30.0)])
def test_each_dab_s_cells_and_distances_are_those_of_the_definitions(seed, n_dabs, radius, windows):
    boxes, at, reach, corner, shape = scattered_dabs(seed, n_dabs, radius)
    rng = np.random.default_rng(seed + 10)
    bands = np.sort(rng.uniform(0, 500, 220))  # bands unevenly spaced, as an NSGT's
    for x_offset, x_scale, y in [(0.0, 1.0, np.arange(220.0)), (0.37, 1.6, bands)]:
        found = plan_compiled.cells_and_distances(
            boxes, at, reach, corner, shape, x_offset, x_scale, y, windows=windows
        )
        want = reference(boxes, at, reach, corner, shape, x_offset, x_scale, y, windows)
        for got, expected in zip(found, want, strict=True):
            assert got.shape == expected.shape
            np.testing.assert_array_equal(got, expected)  # bit for bit: the same operations
        if x_scale == 1.0:  # (the boxes' own cells: each dab's lie within its radii)
            u, v = found[-2:]
            assert np.abs(u[u != 2.0]).max() < 1 and np.abs(v[v != 2.0]).max() < 1
        if windows:  # each block lies inside the joint box
            assert found[1].max() < shape[1] and found[2].max() < shape[0]


def test_the_plain_python_loops_give_the_compiled_ones_numbers(monkeypatch):
    boxes, at, reach, corner, shape = scattered_dabs(3, 30, 12.0)
    y = np.arange(220.0)
    offsets = np.zeros((len(boxes), 2), dtype=np.int64)
    offsets[11:, 1] = 4  # (a change of the clone's offset: a group ends)
    arguments = (boxes, at, reach, corner, shape, 0.5, 1.25, y)
    path = (7, 0.3, 0.25, 1.9, (1e300, 2.0, 3.0, 0.2), (-1e300, 40.0, -9.0, 1.0), (1.5, 2.5))

    def each_loop():
        return [
            plan_compiled.cells_and_distances(*arguments, windows=True),
            plan_compiled.group_bounds(
                boxes, 900, slack=2.0, most_cells=1 << 22, owners=True, offsets=offsets
            ),  # fmt: skip
            plan_compiled.spaced(*path),
            plan_compiled.dab_boxes(at, reach, n_bins=220, n_frames=320),
            plan_compiled.owners(spans, at[:, 1], shape),
            plan_compiled.own_cells(boxes[:, 2] - 3, boxes[:, 3] + 3, 320, boxes[:, 2], 1, 20),
            plan_compiled.drag_windows(*windowed[:3], (2, 3), (4, 5)),
        ]

    spans = plan_compiled.cells_and_distances(*arguments, windows=False)[0]
    windowed = plan_compiled.cells_and_distances(*arguments, windows=True)
    compiled = each_loop()
    plain = SimpleNamespace(**plan_compiled.PLAIN_LOOPS, **plan_compiled.MAKERS)
    assert plan_compiled.loops().bounds is not plan_compiled._plain_bounds  # (Numba compiled it)
    monkeypatch.setattr(plan_compiled, "loops", lambda: plain)
    # (the calls that make a loop's arrays call it as plain Python too)
    monkeypatch.setattr(plan_compiled, "_distances", plan_compiled._plain_distances)
    monkeypatch.setattr(plan_compiled, "_windows", plan_compiled._plain_windows)
    monkeypatch.setattr(plan_compiled, "_own_cells", plan_compiled._plain_own_cells)
    by_python = each_loop()
    for got, expected in [*zip(by_python[0], compiled[0], strict=True),
                          *zip(by_python[3], compiled[3], strict=True),
                          *zip(by_python[4], compiled[4], strict=True),
                          (by_python[5], compiled[5]),
                          *zip(by_python[6], compiled[6], strict=True),
                          (by_python[2][0], compiled[2][0])]:  # fmt: skip
        np.testing.assert_array_equal(got, expected)
    assert by_python[1] == compiled[1]
    assert (11, 11) not in compiled[1] and any(stop == 11 for _, stop in compiled[1])
    assert by_python[2][1] == compiled[2][1]
    assert np.isfinite(compiled[2][0]).all()  # (times ±1e300 from halves: no overflow)
    dabs = compiled[2][0]  # each dab's step from the one before, the first's from (1.5, 2.5)
    np.testing.assert_array_equal(dabs[4], np.diff(dabs[1], prepend=1.5))
    np.testing.assert_array_equal(dabs[5], np.diff(dabs[2], prepend=2.5))
    assert len(compiled[1]) > 2 and compiled[1][1][0] <= 11 <= compiled[1][-1][0]  # both runs


def test_a_dab_s_box_holds_the_cells_strictly_inside_its_rectangle_within_the_grid():
    rng = np.random.default_rng(7)
    at = np.concatenate([rng.uniform(-20, 340, (200, 2)), [[1e300, 5.0], [-1e300, 5.0]]])
    at[:50] = np.round(at[:50])  # centres on cells, radii a whole number of cells
    reach = np.concatenate([rng.uniform(0.3, 25, (200, 2)), [[3.0, 3.0], [3.0, 3.0]]])
    reach[:50] = np.round(reach[:50]) + 1
    boxes, found = plan_compiled.dab_boxes(at, reach, n_bins=220, n_frames=320)
    for (bin0, bin1, frame0, frame1), ok, (x, y), (rx, ry) in zip(boxes, found, at, reach,
                                                                  strict=True):  # fmt: skip
        columns = [c for c in range(320) if x - rx < c < x + rx]
        rows = [r for r in range(220) if y - ry < r < y + ry]
        assert ok == bool(columns and rows)
        if ok:
            assert (frame0, frame1, bin0, bin1) == (
                columns[0],
                columns[-1] + 1,
                rows[0],
                rows[-1] + 1,
            )
    assert found[:200].sum() > 100 and not found[200:].any()  # (far past the grid: no cells)


def test_each_cell_s_last_dab_and_its_place_in_that_dab_s_results():
    """:func:`owners`, :func:`holders` and :func:`region_cells` against each cell looked up dab by
    dab."""
    rng = np.random.default_rng(11)
    spans = np.array([[0, 9, 0, 5], [4, 12, 2, 8], [20, 25, 0, 3], [6, 7, 1, 9]])  # f0 f1 b0 b1
    centres = rng.uniform(0, 50, 4)
    shape = (10, 26)
    centre, owned, last = plan_compiled.owners(spans, centres, shape)
    first, areas = np.array([0, 90, 200, 230]), np.array([45, 48, 15, 8])
    widths, tops, lefts = spans[:, 1] - spans[:, 0], spans[:, 2], spans[:, 0]
    cells = plan_compiled.region_cells(last, owned, first, tops, lefts, widths, areas, 3)
    held = plan_compiled.holders(spans, shape)
    assert held.dtype == np.int32
    for row in range(shape[0]):
        for column in range(shape[1]):
            holders = [k for k, (f0, f1, b0, b1) in enumerate(spans)
                       if f0 <= column < f1 and b0 <= row < b1]  # fmt: skip
            assert owned[row, column] == bool(holders)
            assert held[row, column] == (holders[-1] if holders else -1)
            if not holders:
                assert np.isnan(centre[row, column]) and last[row, column] == 0
                assert (cells[:, row, column] == 0).all()
                continue
            k = holders[-1]
            assert last[row, column] == k and centre[row, column] == centres[k]
            within = first[k] + (row - tops[k]) * widths[k] + column - lefts[k]
            assert list(cells[:, row, column]) == [within, within + areas[k], within + 2 * areas[k]]
    assert owned.sum() > 0 and not owned.all()


def test_a_dab_s_own_cells_are_its_region_s_reflected_past_the_grid():
    first, stop, offset = np.array([-3, 4, 8]), np.array([5, 9, 14]), np.array([0, 7, 11])
    n, held, size = 10, 2, 9
    out = plan_compiled.own_cells(first, stop, n, offset, held, size)
    for k in range(3):
        low, high = max(first[k], 0), min(stop[k], n)
        for step in range(size):
            cell = first[k] + step  # its place in the grid, reflected into [low, high)
            while not low <= cell < high:
                cell = 2 * low - 1 - cell if cell < low else 2 * high - 1 - cell
            assert out[0, k, step] == offset[k] + step
            assert out[1, k, step] == cell - held


@pytest.mark.parametrize(("seed", "n_dabs", "radius"), [(4, 1, 6.0), (5, 25, 14.0)])
def test_a_dragging_group_s_windows_are_those_of_their_definitions(seed, n_dabs, radius):
    """Each window's corner in the values held, its cells' places in the dab's own region, the
    own region's highest column and row, and its rows' and columns' places in the group's region,
    against the array expressions that define them; and (:meth:`~spectropaint.brushes.dab.
    DragWindows.cells`) each cell's index in the group's region and which cells lie outside the
    dab's box."""
    boxes, at, reach, corner, shape = scattered_dabs(seed, n_dabs, radius)
    spans, columns, rows, in_columns, in_rows, _, _ = plan_compiled.cells_and_distances(
        boxes, at, reach, corner, shape, 0.0, 1.0, np.arange(220.0), windows=True
    )
    held, margin, region_width = (3, -2), (4, 6), shape[1] + 12
    found = plan_compiled.drag_windows(spans, rows, columns, held, margin)
    windows = dab.DragWindows(
        masks=None, corners=found[0], step=None, dest_columns=found[2], dest_rows=found[1],
        high=found[3], column_maps=None, row_maps=None, region_rows=found[4],
        region_columns=found[5], in_rows=in_rows, in_columns=in_columns,
        region_width=region_width,
    )  # fmt: skip
    found = (*found, *windows.cells())
    want = [
        np.stack((rows[:, 0] + held[0], columns[:, 0] + held[1])),
        rows - spans[:, 2:3] + margin[0],
        columns - spans[:, :1] + margin[1],
        np.stack(
            [
                (spans[:, 1] - spans[:, 0]) + 2 * margin[1] - 1,
                (spans[:, 3] - spans[:, 2]) + 2 * margin[0] - 1,
            ],
            axis=1,
        ),  # fmt: skip
        rows + margin[0],
        columns + margin[1],
        (rows + margin[0])[:, :, None] * region_width + (columns + margin[1])[:, None, :],
        ~(in_rows[:, :, None] & in_columns[:, None, :]),
    ]
    for got, expected in zip(found, want, strict=True):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    assert found[7].any() or n_dabs == 1  # (windows moved into the joint box reach past a box)
