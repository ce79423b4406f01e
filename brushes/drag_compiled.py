"""A warp group's windows planned on the host and packed as the fused warp's launch reads them
(:class:`~.kernels.warp_fused.Packed`), in one compiled call.

For each group the fused warp launches, the host computes where each dab's cells lie and their
distances from its centre, its own region's cells along both axes and its window's places
(:mod:`.plan_compiled`'s loops), and packs them into the launch's one array. Each of these is a
row or a column of the window, ``[K, H]`` or ``[K, W]``: a window cell's weight (from its row's
and its column's distance), its place in the group's region and whether it lies in its dab's
box follow from its row's and its column's, and the launch computes them cell by cell as it
reads them. Before, the host computed them here and packed the three ``[K, H, W]`` arrays: at
radius 32 (this call timed in a recorded stroke on a 2-core CPU) 45 us a group and 51 kB to
stage a dab, against 12 us and 3.4 kB now; the H200's host spent 65 to 84 us an event in this
call (cProfile, two lends). One compiled call runs the loops and packs their results as it goes;
the numbers are those of the loops called one by one (``tests/test_warp_fused.py`` compares
them).
"""

from __future__ import annotations

import functools

import numpy as np

from spectropaint.brushes import plan_compiled
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
    hardness: float,
    amount: float,
) -> warp_fused.Packed:
    """A group's dabs (``boxes`` ``[K, 4]``, centres ``at``, radii ``reach`` ``[K, 2]``, peak
    weights ``[K]`` and ``step`` ``[K, 2]``, in its joint ``box``) on their windows, packed as
    :class:`~.kernels.warp_fused.Packed` lays them out.

    ``inside``: the group's region clipped to the ``grid`` ``(n_bins, n_frames)``, where the
    values held begin; ``axes``: the stroke's :class:`~.dab.StrokeAxes`; ``margin``: (bins,
    frames) around the joint box; ``hardness`` and ``amount``: the brush's."""
    data, shape, columns, rows = _packed()(
        *plan_compiled.cells_arguments(boxes, at, reach, (box.bin0, box.frame0), box.shape,
                                       axes.x_offset, axes.x_scale, axes.y),
        np.ascontiguousarray(peak, np.float64),
        np.ascontiguousarray(step, dtype=np.float64), float(amount), margin[0], margin[1],
        grid[0], grid[1], inside.bin0, inside.frame0,
    )  # fmt: skip
    return warp_fused.Packed(data, shape, columns, rows, float(hardness))


@functools.cache
def _packed():
    """The compiled call (:func:`_plain_packed`), with the loops it calls bound where Numba finds
    them as it compiles it (plain Python where Numba does not import). Numba's cache on disk keys
    it by this file alone: an edit of a loop it calls shows only once this file changes too (the
    test compares the one call with the loops called one by one)."""
    global _cells, _own_regions_of, _windows_of
    loops = plan_compiled.loops()
    _cells, _own_regions_of, _windows_of = loops.cells, loops.own_regions_of, loops.windows_of
    if compiled_math.numba_module() is None:
        return _plain_packed
    return compiled_math.compile_kernel(_plain_packed, fastmath=False)


def _plain_packed(
    boxes, at, reach, bin0, frame0, n_rows, n_columns, x_offset, x_scale, y, peak, step, amount,
    margin_bins, margin_frames, n_bins, n_frames, inside_bin0, inside_frame0,
):  # fmt: skip
    """:func:`packed_windows`' call: the loops one after another, their results packed
    (:class:`~.kernels.warp_fused.Packed`' layout); returns the data, the windows' shape ``(K,
    H, W)`` and the own regions' columns and rows."""
    spans, columns, rows, in_columns, in_rows, u, v = _cells(
        boxes, at, reach, bin0, frame0, n_rows, n_columns, x_offset, x_scale, y, True
    )
    n_dabs, height, width = boxes.shape[0], rows.shape[1], columns.shape[1]
    own_rows, own_columns = _own_regions_of(spans, bin0, frame0, margin_bins, margin_frames,
                                            n_bins, n_frames, inside_bin0, inside_frame0)  # fmt: skip
    corners, dest_rows, dest_columns, high, region_rows, region_columns = _windows_of(
        spans, rows, columns, bin0 - inside_bin0, frame0 - inside_frame0, margin_bins,
        margin_frames,
    )  # fmt: skip
    n_floats = 5 * n_dabs + 2 * n_dabs * (width + height)
    n_integers = 2 * n_dabs * (1 + own_columns.shape[2] + own_rows.shape[2] + height + width)
    data = np.empty(n_floats + n_integers, dtype=np.float32)
    for k in range(n_dabs):  # each dab's shift, then its own region's highest column and row
        for axis in range(2):
            data[2 * k + axis] = np.float32(amount * step[k, axis])
            data[2 * n_dabs + 2 * k + axis] = np.float32(high[k, axis])
    at = 4 * n_dabs
    for values in (dest_columns, dest_rows):
        for k in range(n_dabs):
            for index in range(values.shape[1]):
                data[at + index] = np.float32(values[k, index])
            at += values.shape[1]
    for values in (u, v):  # (float32 as the host's weights round them)
        for k in range(n_dabs):
            for index in range(values.shape[1]):
                data[at + index] = np.float32(values[k, index])
            at += values.shape[1]
    for k in range(n_dabs):
        data[at + k] = np.float32(peak[k])
    integers = data[n_floats:].view(np.int32)
    at = 0
    for values in (corners.ravel(), own_columns.ravel(), own_rows.ravel(), region_rows.ravel(),
                   region_columns.ravel()):  # fmt: skip
        for index in range(values.shape[0]):
            integers[at + index] = values[index]
        at += values.shape[0]
    for inside in (in_rows.ravel(), in_columns.ravel()):
        for index in range(inside.shape[0]):
            integers[at + index] = inside[index]
        at += inside.shape[0]
    return data, (n_dabs, height, width), own_columns.shape[2], own_rows.shape[2]


_cells = _own_regions_of = _windows_of = None  # (bound by _packed)
