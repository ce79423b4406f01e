"""A warp group's windows planned on the host and packed as the fused warp's launch reads them
(:class:`~.kernels.warp_fused.Packed`), in one compiled call.

For each group the fused warp launches, the host computes where each dab's cells lie and their
distances from its centre, each dab's weights, its own region's cells along both axes and its
window's places (:mod:`.plan_compiled`'s and :mod:`.mask_compiled`'s loops, five calls), then
packs them into the launch's two arrays of floats and integers (a dozen numpy conversions and two
concatenations): on the H200's host some 50 us of a 0.35 ms event, mostly the calls' dispatch.
Here the same loops run from one compiled call, which packs their results as it goes; the numbers
are the same (``tests/test_warp_fused.py`` compares the packed arrays with those of the five
calls).

Used for the fused warp's groups whose weights are computed on the host
(:func:`~.mask_compiled.fits`), which needs Numba.
"""

from __future__ import annotations

import functools

import numpy as np

from spectropaint.brushes import mask_compiled, plan_compiled
from spectropaint.brushes.kernels import compiled_math, warp_fused


def packed_windows(
    boxes: np.ndarray,
    at: np.ndarray,
    reach: np.ndarray,
    peak: np.ndarray,
    step: np.ndarray,
    *,
    box,
    inside,
    axes,
    grid: tuple[int, int],
    margin: tuple[int, int],
    region_width: int,
    hardness: float,
    amount: float,
) -> warp_fused.Packed:
    """A group's dabs (``boxes`` ``[K, 4]``, centres ``at``, radii ``reach`` ``[K, 2]``, peak
    weights ``[K]`` and ``step`` ``[K, 2]``, in its joint ``box``) on their windows, packed:
    what :func:`.warp_fused.pack` makes of the :class:`~.dab.DragWindows` of the five calls.

    ``inside``: the group's region clipped to the ``grid`` ``(n_bins, n_frames)``, where the
    values held begin; ``axes``: the stroke's :class:`~.dab.StrokeAxes`; ``margin``: (bins,
    frames) around the joint box; ``region_width``: the region's columns; ``hardness`` and
    ``amount``: the brush's."""
    data, shape, columns, rows = _packed()(
        np.ascontiguousarray(boxes, dtype=np.int64), np.ascontiguousarray(at, dtype=np.float64),
        np.ascontiguousarray(reach, dtype=np.float64), box.bin0, box.frame0, box.shape[0],
        box.shape[1], float(axes.x_offset), float(axes.x_scale),
        np.ascontiguousarray(axes.y, dtype=np.float64), np.ascontiguousarray(peak, np.float64),
        np.float32(hardness), np.float32(1.0 - hardness), hardness >= 1.0,
        np.ascontiguousarray(step, dtype=np.float64), float(amount), margin[0], margin[1],
        grid[0], grid[1], inside.bin0, inside.frame0, region_width,
    )  # fmt: skip
    return warp_fused.Packed(data, None, shape, columns, rows)


@functools.cache
def _packed():
    """The compiled call (:func:`_plain_packed`), with the loops it calls bound where Numba finds
    them as it compiles it. Numba's cache on disk keys it by this file alone: an edit of a loop it
    calls shows only once this file changes too (the test compares the one call with the loops
    called one by one)."""
    global _cells, _own_cells, _windows_of, _weights
    loops = plan_compiled.loops()
    _cells, _own_cells, _windows_of = loops.cells, loops.own_cells, loops.windows_of
    _weights = mask_compiled.loops()[0]
    return compiled_math.compile_kernel(_plain_packed, fastmath=False)


def _plain_packed(
    boxes, at, reach, bin0, frame0, n_rows, n_columns, x_offset, x_scale, y, peak, hardness, span,
    hard, step, amount, margin_bins, margin_frames, n_bins, n_frames, inside_bin0, inside_frame0,
    region_width,
):  # fmt: skip
    """:func:`packed_windows`' call: the loops one after another, their results packed (see
    :func:`.warp_fused.pack` for the layout, the masks at its end); returns the data, the masks'
    shape and the own regions' columns and rows."""
    spans, columns, rows, in_columns, in_rows, u, v = _cells(
        boxes, at, reach, bin0, frame0, n_rows, n_columns, x_offset, x_scale, y, True
    )
    n_dabs, height, width = boxes.shape[0], rows.shape[1], columns.shape[1]
    column_maps, row_maps = width + 2 * margin_frames, height + 2 * margin_bins
    window = height * width
    n_floats = 4 * n_dabs + n_dabs * (width + height)
    n_integers = 2 * n_dabs * (1 + column_maps + row_maps + window)
    data = np.empty(n_floats + n_integers + n_dabs * window, dtype=np.float32)
    masks = data[n_floats + n_integers :].reshape((n_dabs, height, width))
    _weights(u, v, columns, rows, peak, hardness, span, hard, np.empty((0, 0), np.float32), masks)
    # each dab's own region (its box and the margin) along each axis, as dab._drag_part has it
    own_rows = np.empty((2, n_dabs, row_maps), dtype=np.int64)
    own_columns = np.empty((2, n_dabs, column_maps), dtype=np.int64)
    first = np.empty(n_dabs, dtype=np.int64)
    stop = np.empty(n_dabs, dtype=np.int64)
    offset = np.empty(n_dabs, dtype=np.int64)
    for k in range(n_dabs):
        first[k] = bin0 + spans[k, 2] - margin_bins
        stop[k] = bin0 + spans[k, 3] + margin_bins
        offset[k] = spans[k, 2]
    _own_cells(first, stop, n_bins, offset, inside_bin0, own_rows)
    for k in range(n_dabs):
        first[k] = frame0 + spans[k, 0] - margin_frames
        stop[k] = frame0 + spans[k, 1] + margin_frames
        offset[k] = spans[k, 0]
    _own_cells(first, stop, n_frames, offset, inside_frame0, own_columns)
    corners, dest_rows, dest_columns, high, window_cells, outside = _windows_of(
        spans, rows, columns, in_rows, in_columns, bin0 - inside_bin0, frame0 - inside_frame0,
        margin_bins, margin_frames, region_width,
    )  # fmt: skip
    for k in range(n_dabs):
        for axis in range(2):
            data[2 * k + axis] = np.float32(amount * step[k, axis])
            data[2 * n_dabs + 2 * k + axis] = np.float32(high[k, axis])
        for column in range(width):
            data[4 * n_dabs + k * width + column] = np.float32(dest_columns[k, column])
        for row in range(height):
            data[4 * n_dabs + n_dabs * width + k * height + row] = np.float32(dest_rows[k, row])
    integers = data[n_floats : n_floats + n_integers].view(np.int32)
    at_ = 0
    for values in (corners.ravel(), own_columns.ravel(), own_rows.ravel(), window_cells.ravel()):
        for index in range(values.shape[0]):
            integers[at_ + index] = values[index]
        at_ += values.shape[0]
    flat = outside.ravel()
    for index in range(flat.shape[0]):
        integers[at_ + index] = flat[index]
    return data, (n_dabs, height, width), column_maps, row_maps


_cells = _own_cells = _windows_of = _weights = None  # (bound by _packed)
