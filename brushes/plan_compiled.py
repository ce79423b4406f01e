"""The host's planning of an event's dabs in compiled loops: where the dabs lie along the
pointer's path, each dab's box of cells, which dabs join a group, where each dab's cells lie in its
group's joint box with their distances from its centre, which dab last holds each cell of the box
and where that cell finds its result, and warp's own cells and windows of each dab.

Each is a dozen numpy operations on arrays of a few dozen values where it is written as arrays:
some microseconds of dispatch apiece, and together a good part of a small brush's event on a
2-core CPU, more on a GPU's host, whose device waits on them. Here each is one call of a loop
compiled by Numba, computing the same numbers in the same order (integer bounds, and float64
distances by the same operations as numpy's, without fast-math).

Used wherever Numba imports, whatever :data:`~.kernels.compiled_math.COMPILED_ENV` says (that
switch sends the brushes' cells through torch; this is the host's planning, the same numbers
either way). Where Numba does not import, the loops run as plain Python. Each loop compiles at its
first call (kept in Numba's cache on disk); the window's warm-up compiles them all before the
first stroke (:func:`compile_loops`).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from spectropaint.brushes.kernels import compiled_math
from spectropaint.brushes.mask import FAR


def compile_loops() -> None:
    """Compile every loop now, on small arrays of the types strokes give them (a second or two on
    a 2-core machine without Numba's cache on disk, a fraction of that with it), so that no stroke
    waits for one: the window's warm-up calls this first (:func:`~.warm_up.warm_up_later`)."""
    at, reach = np.array([[10.5, 20.5], [12.0, 21.0]]), np.full((2, 2), 3.0)
    spaced(2, 0.0, 0.5, 1.0, (0.0, 1.0, 2.0, 1.0), (1.0, 3.0, 4.0, 1.0), None)
    boxes, _ = dab_boxes(at, reach, n_bins=64, n_frames=64)
    group_bounds(boxes, 1 << 16, slack=2.0, most_cells=1 << 22, owners=True, radii=reach)
    corner = (int(boxes[:, 0].min()), int(boxes[:, 2].min()))
    shape = (int(boxes[:, 1].max()) - corner[0], int(boxes[:, 3].max()) - corner[1])
    spans = cells_and_distances(boxes, at, reach, corner, shape, 0.0, 1.0, np.arange(64.0),
                                windows=False)[0]  # fmt: skip
    _, owned, last = owners(spans, at[:, 1], shape)
    holders(spans, shape)
    widths = spans[:, 1] - spans[:, 0]
    region_cells(last, owned, np.array([0, 100]), spans[:, 2], spans[:, 0], widths, widths * 5, 2)
    own_regions(spans, corner, (1, 2), (64, 64), (0, 0))
    columns, rows = np.zeros((2, 3), dtype=np.int64), np.zeros((2, 2), dtype=np.int64)
    drag_windows(spans, rows, columns, (1, 2), (0, 1))


def spaced(
    count: int, along: float, step: float, length: float, start, end, before
) -> tuple[np.ndarray, float]:
    """``count`` dabs along the segment from event ``start`` to ``end`` (each ``(t, x, y,
    pressure)``), ``length`` radii long: the first ``along`` radii from its start, then one every
    ``step`` radii, the distances summed one step after another (as a walk would). Their ``[6,
    count]`` times, positions, pressures and steps in x and y since the dab before (from
    ``before``, the last dab's ``(x, y)``; None: the first has not moved), times from halves (they
    may be +-1e308); and the distance of the step after the last."""
    out = np.empty((6, count))
    moved = before is not None
    after = loops().spaced(
        count, along, step, length, *start, *end, moved, *(before if moved else (0.0, 0.0)), out
    )
    return out, after


def dab_boxes(
    at: np.ndarray, reach: np.ndarray, *, n_bins: int, n_frames: int
) -> tuple[np.ndarray, np.ndarray]:
    """The grid cells the ellipses centred on ``at`` ``[K, 2]`` (frames, bins) with radii ``reach``
    ``[K, 2]`` can cover, clipped (never wrapped): ``[K, 4]`` int64 rows ``bin0, bin1, frame0,
    frame1``; and whether each is not empty (``bin0 < bin1`` and ``frame0 < frame1``).

    Cells are at integer positions; a cell is in the box when it lies strictly inside the ellipse's
    bounding rectangle: from ``floor(at - reach) + 1`` to ``ceil(at + reach)`` (exclusive), within
    the grid, each bound clipped to ``[0, FAR]`` before it becomes an integer (positions may reach
    ``1e308``)."""
    boxes = np.empty((len(at), 4), dtype=np.int64)
    found = np.empty(len(at), dtype=np.bool_)
    loops().boxes(
        np.ascontiguousarray(at, dtype=np.float64), np.ascontiguousarray(reach, dtype=np.float64),
        n_bins, n_frames, FAR, boxes, found,
    )  # fmt: skip
    return boxes, found


def group_bounds(
    boxes: np.ndarray,
    limit: int,
    *,
    slack: float,
    most_cells: int,
    owners: bool,
    offsets: np.ndarray | None = None,
    radii: np.ndarray | None = None,
) -> list[tuple[int, int]]:
    """``(start, stop)`` of each group of consecutive dabs, greedily: a group takes the next dab
    while the joint box with it holds at most ``slack`` times the cells of their own boxes
    (``boxes`` ``[K, 4]``: ``bin0, bin1, frame0, frame1``) and at most ``limit`` cells, and its
    cells (``owners``) or the tallest dab's height times the widest one's width (without) times
    the dabs stay within ``most_cells``; and while its dabs share their ``offsets`` ``[K, 2]``
    (int64) and ``radii`` ``[K, 2]`` (float64), where given (a change of parameters ends a
    group)."""
    bounds = np.empty((len(boxes), 2), dtype=np.int64)
    count = loops().bounds(
        np.ascontiguousarray(boxes, dtype=np.int64), _keys(offsets, np.int64),
        _keys(radii, np.float64), limit, float(slack), most_cells, owners, bounds,
    )  # fmt: skip
    return [(start, stop) for start, stop in bounds[:count].tolist()]


def _keys(values: np.ndarray | None, dtype) -> np.ndarray:
    """Per-dab values that a group's dabs share, for :func:`group_bounds`' loop (none: ``[0,
    0]``)."""
    if values is None:
        return np.empty((0, 0), dtype=dtype)
    return np.ascontiguousarray(values, dtype=dtype)


def cells_and_distances(
    boxes: np.ndarray,
    at: np.ndarray,
    reach: np.ndarray,
    corner: tuple[int, int],
    shape: tuple[int, int],
    x_offset: float,
    x_scale: float,
    y: np.ndarray,
    *,
    windows: bool,
):
    """Where each dab's block of the tallest and widest box's size lies in the joint box (of
    ``shape`` ``(B, T)``, its first cell at ``corner`` ``(bin, frame)``), and each dab's distances
    from its centre in radii along those columns and rows.

    Returns ``spans`` ``[K, 4]`` (each dab's box in the joint box's cells: frame0, frame1, bin0,
    bin1), ``columns`` ``[K, W]`` and ``rows`` ``[K, H]`` (at the box's top left, clamped into the
    joint box past it; or, with ``windows``, moved so that the block lies in the joint box),
    ``in_columns`` and ``in_rows`` (those inside the dab's box), and ``u`` ``[K, W]``, ``v``
    ``[K, H]`` (2 outside the dab's box, where its weight is exactly 0). A frame's position is
    ``x_offset + x_scale * frame``, a bin's ``y[bin]``."""
    return loops().cells(*cells_arguments(boxes, at, reach, corner, shape, x_offset, x_scale, y),
                         windows)  # fmt: skip


def cells_arguments(boxes, at, reach, corner, shape, x_offset, x_scale, y) -> tuple:
    """:func:`cells_and_distances`' arguments as its loop takes them (and the compiled calls
    that begin with it, :mod:`.mask_compiled`'s and :mod:`.drag_compiled`'s): the arrays
    C-contiguous, of one type each (one compiled variant serves every group), then the corner,
    the shape and the axes."""
    return (
        np.ascontiguousarray(boxes, dtype=np.int64), np.ascontiguousarray(at, dtype=np.float64),
        np.ascontiguousarray(reach, dtype=np.float64), corner[0], corner[1], shape[0], shape[1],
        float(x_offset), float(x_scale), np.ascontiguousarray(y, dtype=np.float64),
    )  # fmt: skip


def owners(spans: np.ndarray, centres: np.ndarray, shape: tuple[int, int]):
    """Which dab last holds each cell of a group's joint box (of ``shape`` ``(B, T)``): host
    arrays ``[B, T]`` of the centre (``centres`` ``[K]``) of the last dab whose box (``spans``
    ``[K, 4]``: frame0, frame1, bin0, bin1 in the joint box) holds each cell, NaN where none
    does; whether some dab's box holds it; and the last such dab's index (0 where none)."""
    centre = np.empty(shape)
    owned = np.empty(shape, dtype=np.bool_)
    last = np.empty(shape, dtype=np.int64)
    loops().owners(np.ascontiguousarray(spans, dtype=np.int64),
                    np.ascontiguousarray(centres, dtype=np.float64), centre, owned, last)  # fmt: skip
    return centre, owned, last


def holders(spans: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Which dab's box (``spans``, as :func:`owners` takes them) holds each cell of a group's
    joint box (of ``shape`` ``(B, T)``) last: its index, -1 where none does (int32, as a
    kernel that writes the cells each dab holds reads it)."""
    last = np.empty(shape, dtype=np.int32)
    loops().holders(np.ascontiguousarray(spans, dtype=np.int64), last)
    return last


def region_cells(last, owned, first, tops, lefts, widths, areas, planes: int) -> np.ndarray:
    """Where each cell of a group's joint box finds its result among a whole-box kernel's
    (:class:`~spectropaint.brushes.dab._DabRegions`' ``cells``): ``[planes, B, T]``, in the
    results of the last dab whose box holds it (``last``, ``owned``: :func:`owners`'), whose
    results begin at ``first`` ``[K]`` (its box's ``areas`` a plane, ``widths`` a row, its first
    row and column ``tops`` and ``lefts`` in the joint box); 0 where none does."""
    cells = np.empty((planes, *last.shape), dtype=np.int64)
    loops().region_cells(last, owned, *(np.ascontiguousarray(values, dtype=np.int64)
                                         for values in (first, tops, lefts, widths, areas)),
                          cells)  # fmt: skip
    return cells


def own_cells(first, stop, n: int, offset, held: int, size: int) -> np.ndarray:
    """Along one axis, for each dab's own region (cells ``first`` to ``stop`` ``[K]`` of a grid of
    ``n``, beginning ``offset`` ``[K]`` cells into the group's region): each of its ``size``
    cells' (padded) place in the group's region and in the values held (which begin at cell
    ``held``), reflected past the grid as :func:`~spectropaint.brushes.dab.reflect_index` would:
    ``[2, K, size]`` int64 (the loop :func:`own_regions` runs along each axis)."""
    out = np.empty((2, len(first), size), dtype=np.int64)
    first, stop, offset = (np.ascontiguousarray(v, dtype=np.int64) for v in (first, stop, offset))
    loops().own_cells(first, stop, n, offset, held, out)
    return out


def own_regions(spans: np.ndarray, corner: tuple[int, int], margin: tuple[int, int],
                grid: tuple[int, int], held: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Each dab's own region (its box in a group's joint box, ``spans`` ``[K, 4]`` as
    :func:`cells_and_distances` gives them, and ``margin`` (bins, frames) around it), along the
    bins and the frames of a grid of ``grid`` ``(n_bins, n_frames)``, the joint box's first cell
    at ``corner`` (bin, frame): each of its cells' (padded) place in the group's region and in
    the values held (which begin at cell ``held``, bin and frame), reflected past the grid as
    :func:`~spectropaint.brushes.dab.reflect_index` would: ``[2, K, Bm]`` and ``[2, K, Tm]``
    int64."""
    return loops().own_regions_of(np.ascontiguousarray(spans, dtype=np.int64), *corner, *margin,
                                  *grid, *held)  # fmt: skip


def drag_windows(
    spans: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
    corner: tuple[int, int],
    margin: tuple[int, int],
) -> tuple[np.ndarray, ...]:
    """A dragging group's dabs on their windows (``rows`` ``[K, H]`` and ``columns`` ``[K, W]``
    of the group's joint box, as :func:`cells_and_distances` gives them with ``windows``;
    ``spans`` its ``[K, 4]``), for a region with ``margin`` (bins, frames) around the joint box,
    whose first cell is ``corner`` (bins, frames) cells past the joint box's first in the values
    held. Returns, int64: each window's first row and column in the values held ``[2, K]``; each
    window cell's row and column in its dab's own region (its box and the margin) ``[K, H]`` and
    ``[K, W]``; each own region's highest column and row ``[K, 2]``; and each window cell's row
    and column in the group's region ``[K, H]`` and ``[K, W]`` (a cell's index there is its row
    times the region's width plus its column: :meth:`~spectropaint.brushes.dab.DragWindows.
    cells`)."""
    return loops().windows_of(
        np.ascontiguousarray(spans, dtype=np.int64), rows, columns, corner[0], corner[1],
        margin[0], margin[1],
    )  # fmt: skip


def _plain_windows(
    spans, rows, columns, corner_bins, corner_frames, margin_bins, margin_frames, corners,
    dest_rows, dest_columns, high, region_rows, region_columns,
):  # fmt: skip
    """:func:`drag_windows`' loop, into its arrays."""
    for k in range(spans.shape[0]):
        corners[0, k], corners[1, k] = rows[k, 0] + corner_bins, columns[k, 0] + corner_frames
        high[k, 0] = (spans[k, 1] - spans[k, 0]) + 2 * margin_frames - 1
        high[k, 1] = (spans[k, 3] - spans[k, 2]) + 2 * margin_bins - 1
        for step in range(rows.shape[1]):
            dest_rows[k, step] = rows[k, step] - spans[k, 2] + margin_bins
            region_rows[k, step] = rows[k, step] + margin_bins
        for step in range(columns.shape[1]):
            dest_columns[k, step] = columns[k, step] - spans[k, 0] + margin_frames
            region_columns[k, step] = columns[k, step] + margin_frames


def _plain_windows_of(
    spans, rows, columns, corner_bins, corner_frames, margin_bins, margin_frames
):  # fmt: skip
    """:func:`drag_windows`' arrays, made and filled by its loop (:func:`_plain_windows`)."""
    n_dabs, height = rows.shape
    width = columns.shape[1]
    corners = np.empty((2, n_dabs), dtype=np.int64)
    dest_rows = np.empty((n_dabs, height), dtype=np.int64)
    dest_columns = np.empty((n_dabs, width), dtype=np.int64)
    high = np.empty((n_dabs, 2), dtype=np.int64)
    region_rows = np.empty((n_dabs, height), dtype=np.int64)
    region_columns = np.empty((n_dabs, width), dtype=np.int64)
    _windows(spans, rows, columns, corner_bins, corner_frames, margin_bins, margin_frames,
             corners, dest_rows, dest_columns, high, region_rows, region_columns)  # fmt: skip
    return corners, dest_rows, dest_columns, high, region_rows, region_columns


def _plain_own_regions_of(
    spans, bin0, frame0, margin_bins, margin_frames, n_bins, n_frames, held_bin, held_frame
):
    """:func:`own_regions`' arrays, made and filled by :func:`_plain_own_cells` along each
    axis."""
    n_dabs = spans.shape[0]
    height, width = 0, 0
    for k in range(n_dabs):
        height = max(height, spans[k, 3] - spans[k, 2])
        width = max(width, spans[k, 1] - spans[k, 0])
    rows = np.empty((2, n_dabs, height + 2 * margin_bins), dtype=np.int64)
    columns = np.empty((2, n_dabs, width + 2 * margin_frames), dtype=np.int64)
    first = np.empty(n_dabs, dtype=np.int64)
    stop = np.empty(n_dabs, dtype=np.int64)
    offset = np.empty(n_dabs, dtype=np.int64)
    for k in range(n_dabs):
        first[k] = bin0 + spans[k, 2] - margin_bins
        stop[k] = bin0 + spans[k, 3] + margin_bins
        offset[k] = spans[k, 2]
    _own_cells(first, stop, n_bins, offset, held_bin, rows)
    for k in range(n_dabs):
        first[k] = frame0 + spans[k, 0] - margin_frames
        stop[k] = frame0 + spans[k, 1] + margin_frames
        offset[k] = spans[k, 0]
    _own_cells(first, stop, n_frames, offset, held_frame, columns)
    return rows, columns


def _plain_own_cells(first, stop, n, offset, held, out):
    """:func:`own_cells`' loop, into ``out``."""
    for k in range(first.shape[0]):
        low, high = max(first[k], 0), min(stop[k], n)
        length = high - low
        for step in range(out.shape[2]):
            index = (step + first[k] - low) % (2 * length)  # (Python's remainder: never negative)
            index = 2 * length - 1 - index if index >= length else index
            out[0, k, step], out[1, k, step] = offset[k] + step, low - held + index


def _plain_owners(spans, centres, centre, owned, last):
    """:func:`owners`' loop, into its arrays."""
    _holders(spans, last)
    for row in range(last.shape[0]):
        for column in range(last.shape[1]):
            k = last[row, column]
            owned[row, column] = k >= 0
            centre[row, column] = centres[k] if k >= 0 else np.nan
            last[row, column] = max(k, 0)


def _plain_holders(spans, last):
    """:func:`holders`' loop, into ``last`` (also :func:`owners`' first, into its int64 map)."""
    last[:] = -1
    for k in range(spans.shape[0]):
        for row in range(spans[k, 2], spans[k, 3]):
            for column in range(spans[k, 0], spans[k, 1]):
                last[row, column] = k


def _plain_region_cells(last, owned, first, tops, lefts, widths, areas, cells):
    """:func:`region_cells`' loop, into ``cells``."""
    for row in range(last.shape[0]):
        for column in range(last.shape[1]):
            k = last[row, column]
            within = first[k] + (row - tops[k]) * widths[k] + (column - lefts[k])
            for plane in range(cells.shape[0]):
                cells[plane, row, column] = within + plane * areas[k] if owned[row, column] else 0


def _plain_spaced(
    count, along, step, length, t0, x0, y0, p0, t1, x1, y1, p1, moved, before_x, before_y, out
):  # fmt: skip
    """:func:`spaced`' loop, into ``out``; the distance after the last dab."""
    half_t0, half_dt = t0 / 2, t1 / 2 - t0 / 2
    dx, dy, dp = x1 - x0, y1 - y0, p1 - p0
    for k in range(count):
        f = min(along / length, 1.0)
        out[0, k] = 2 * (half_t0 + f * half_dt)
        out[1, k], out[2, k], out[3, k] = x0 + f * dx, y0 + f * dy, p0 + f * dp
        along += step
        if k > 0:
            before_x, before_y = out[1, k - 1], out[2, k - 1]
        elif not moved:
            before_x, before_y = out[1, 0], out[2, 0]
        out[4, k], out[5, k] = out[1, k] - before_x, out[2, k] - before_y
    return along


def _plain_boxes(at, reach, n_bins, n_frames, far, boxes, found):
    """:func:`dab_boxes`' loop, into ``boxes`` and ``found``."""
    for k in range(at.shape[0]):
        for axis, size in ((1, n_bins), (0, n_frames)):
            low = np.floor(at[k, axis] - reach[k, axis]) + 1.0  # (floats: no integer overflow)
            high = min(np.ceil(at[k, axis] + reach[k, axis]), np.float64(size))
            low, high = min(max(low, 0.0), far), min(max(high, 0.0), far)
            boxes[k, 2 * (1 - axis)], boxes[k, 2 * (1 - axis) + 1] = np.int64(low), np.int64(high)
        found[k] = boxes[k, 0] < boxes[k, 1] and boxes[k, 2] < boxes[k, 3]


def _plain_bounds(boxes, offsets, radii, limit, slack, most_cells, owners, bounds):
    """:func:`group_bounds`' loop: each group's start and stop into ``bounds``; how many groups
    there are."""
    count, start, n_dabs = 0, 0, boxes.shape[0]
    while start < n_dabs:
        low_bin, high_bin = boxes[start, 0], boxes[start, 1]
        low_frame, high_frame = boxes[start, 2], boxes[start, 3]
        tallest, widest = high_bin - low_bin, high_frame - low_frame
        cells = tallest * widest
        end = start + 1
        while end < n_dabs:
            changed = False
            for j in range(offsets.shape[1]):
                changed |= offsets[end, j] != offsets[end - 1, j]
            for j in range(radii.shape[1]):
                changed |= radii[end, j] != radii[end - 1, j]
            if changed:
                break
            bin0, bin1 = boxes[end, 0], boxes[end, 1]
            frame0, frame1 = boxes[end, 2], boxes[end, 3]
            low_bin, high_bin = min(low_bin, bin0), max(high_bin, bin1)
            low_frame, high_frame = min(low_frame, frame0), max(high_frame, frame1)
            tallest, widest = max(tallest, bin1 - bin0), max(widest, frame1 - frame0)
            cells += (bin1 - bin0) * (frame1 - frame0)
            joint = (high_bin - low_bin) * (high_frame - low_frame)
            each = joint if owners else tallest * widest
            if not (
                joint <= slack * cells and joint <= limit and each * (end - start + 1) <= most_cells
            ):
                break
            end += 1
        bounds[count, 0], bounds[count, 1] = start, end
        count += 1
        start = end
    return count


def _plain_cells(boxes, at, reach, bin0, frame0, n_bins, n_frames, x_offset, x_scale, y, windows):
    """:func:`cells_and_distances`' arrays, made and filled by its loop
    (:func:`_plain_distances`)."""
    n_dabs = boxes.shape[0]
    width, height = 0, 0
    for k in range(n_dabs):
        width = max(width, boxes[k, 3] - boxes[k, 2])
        height = max(height, boxes[k, 1] - boxes[k, 0])
    spans = np.empty((n_dabs, 4), dtype=np.int64)
    columns = np.empty((n_dabs, width), dtype=np.int64)
    rows = np.empty((n_dabs, height), dtype=np.int64)
    in_columns = np.empty((n_dabs, width), dtype=np.bool_)
    in_rows = np.empty((n_dabs, height), dtype=np.bool_)
    u, v = np.empty((n_dabs, width)), np.empty((n_dabs, height))
    _distances(boxes, at, reach, bin0, frame0, n_bins, n_frames, x_offset, x_scale, y, windows,
               spans, columns, rows, in_columns, in_rows, u, v)  # fmt: skip
    return spans, columns, rows, in_columns, in_rows, u, v


def _plain_distances(
    boxes, at, reach, bin0, frame0, n_bins, n_frames, x_offset, x_scale, y, windows,
    spans, columns, rows, in_columns, in_rows, u, v,
):  # fmt: skip
    """:func:`cells_and_distances`' loop, into its arrays."""
    width, height = columns.shape[1], rows.shape[1]
    for k in range(boxes.shape[0]):
        first_frame, last_frame = boxes[k, 2] - frame0, boxes[k, 3] - frame0
        first_bin, last_bin = boxes[k, 0] - bin0, boxes[k, 1] - bin0
        spans[k, 0], spans[k, 1], spans[k, 2], spans[k, 3] = (
            first_frame, last_frame, first_bin, last_bin
        )  # fmt: skip
        first_column = min(first_frame, n_frames - width) if windows else first_frame
        first_row = min(first_bin, n_bins - height) if windows else first_bin
        centre_x, centre_y = at[k, 0], at[k, 1]
        reach_x, reach_y = reach[k, 0], reach[k, 1]
        for step in range(width):
            column = first_column + step
            inside = first_frame <= column < last_frame
            column = min(column, n_frames - 1)
            columns[k, step], in_columns[k, step] = column, inside
            frame_x = x_offset + x_scale * np.float64(frame0 + column)
            u[k, step] = (frame_x - centre_x) / reach_x if inside else 2.0
        for step in range(height):
            row = first_row + step
            inside = first_bin <= row < last_bin
            row = min(row, n_bins - 1)
            rows[k, step], in_rows[k, step] = row, inside
            v[k, step] = (y[bin0 + row] - centre_y) / reach_y if inside else 2.0


PLAIN_LOOPS = {
    "spaced": _plain_spaced,
    "boxes": _plain_boxes,
    "bounds": _plain_bounds,
    "distances": _plain_distances,
    "owners": _plain_owners,
    "holders": _plain_holders,
    "own_cells": _plain_own_cells,
    "region_cells": _plain_region_cells,
    "windows": _plain_windows,
}
"""The loops as plain Python, by the name :func:`_loops` gives each."""


MAKERS = {"cells": _plain_cells, "windows_of": _plain_windows_of,
          "own_regions_of": _plain_own_regions_of}  # fmt: skip
"""The calls that make a loop's arrays and fill them by it (``distances``, ``windows``,
``own_cells``), by name."""


@functools.cache
def loops():
    """The loops, compiled (exact IEEE arithmetic) where Numba imports, else as plain Python,
    then the calls that make their arrays (:data:`MAKERS`), the loops they call bound where Numba
    finds them as it compiles them (:mod:`.mask_compiled` and :mod:`.drag_compiled` call some of
    them from compiled calls of their own)."""
    global _distances, _windows, _own_cells, _holders
    compiled = compiled_math.numba_module() is not None
    loops = {
        name: compiled_math.compile_kernel(function, fastmath=False) if compiled else function
        for name, function in PLAIN_LOOPS.items()
    }
    _distances, _windows, _own_cells = loops["distances"], loops["windows"], loops["own_cells"]
    _holders = loops["holders"]
    for name, function in MAKERS.items():
        loops[name] = (
            compiled_math.compile_kernel(function, fastmath=False) if compiled else function
        )
    return SimpleNamespace(**loops)


_distances = _windows = _own_cells = _holders = None  # (bound by loops)
