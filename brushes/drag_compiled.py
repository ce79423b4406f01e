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
    what :func:`pack` makes of the :class:`~.dab.DragWindows` of the five calls.

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


def pack(windows, amount: float) -> warp_fused.Packed:
    """``windows`` (a :class:`~.dab.DragWindows`) packed for the launch, the dabs' steps times
    ``amount``, into one float32 array (staged in one copy, :func:`.staging.for_kernels`): the
    floats ``[4K + K W + K H]`` (each dab's shift ``[K, 2]``, its own region's highest column and
    row ``[K, 2]``, then the windows' columns ``[K, W]`` and rows ``[K, H]`` in their own
    regions), the integers ``[2K + 2K columns + 2K rows + 2K H W]`` as int32's bits (the corners
    ``[2, K]``, the column maps ``[2, K, columns]``, the row maps ``[2, K, rows]``, the window
    cells ``[K, H, W]`` and whether each lies outside its dab's box ``[K, H, W]``), then the masks
    where they are a host array (else they stay the tensor they are, :attr:`.warp_fused.Packed.
    masks`)."""
    masks = windows.masks
    host_masks = isinstance(masks, np.ndarray)
    integers = [np.ascontiguousarray(part, dtype=np.int64) for part in (
        windows.high, windows.dest_columns, windows.dest_rows, windows.corners,
        windows.column_maps, windows.row_maps, windows.window_cells)]  # fmt: skip
    data = _packer()(
        np.ascontiguousarray(windows.step, dtype=np.float64), float(amount), *integers,
        np.ascontiguousarray(windows.outside, dtype=np.bool_),
        np.ascontiguousarray(masks, dtype=np.float32) if host_masks else _NO_MASKS,
    )  # fmt: skip
    return warp_fused.Packed(data, None if host_masks else masks, tuple(masks.shape),
                             windows.column_maps.shape[-1], windows.row_maps.shape[-1])  # fmt: skip


_NO_MASKS = np.empty((0, 0, 0), dtype=np.float32)
"""The packer's masks where they are a tensor on the device (none packed)."""


@functools.cache
def _packer():
    """:func:`_plain_pack`, compiled where Numba imports (else plain Python, as
    :mod:`.plan_compiled`'s loops are)."""
    if compiled_math.numba_module() is None:
        return _plain_pack
    return compiled_math.compile_kernel(_plain_pack, fastmath=False)


@functools.cache
def _packed():
    """The compiled call (:func:`_plain_packed`), with the loops it calls bound where Numba finds
    them as it compiles it. Numba's cache on disk keys it by this file alone: an edit of a loop it
    calls shows only once this file changes too (the test compares the one call with the loops
    called one by one)."""
    global _cells, _own_regions_of, _windows_of, _weights, _pack
    loops = plan_compiled.loops()
    _cells, _own_regions_of, _windows_of = loops.cells, loops.own_regions_of, loops.windows_of
    _weights, _pack = mask_compiled.loops()[0], _packer()
    return compiled_math.compile_kernel(_plain_packed, fastmath=False)


def _plain_packed(
    boxes, at, reach, bin0, frame0, n_rows, n_columns, x_offset, x_scale, y, peak, hardness, span,
    hard, step, amount, margin_bins, margin_frames, n_bins, n_frames, inside_bin0, inside_frame0,
    region_width,
):  # fmt: skip
    """:func:`packed_windows`' call: the loops one after another, their results packed by
    :func:`pack`'s packer; returns the data, the masks' shape and the own regions' columns and
    rows."""
    spans, columns, rows, in_columns, in_rows, u, v = _cells(
        boxes, at, reach, bin0, frame0, n_rows, n_columns, x_offset, x_scale, y, True
    )
    n_dabs, height, width = boxes.shape[0], rows.shape[1], columns.shape[1]
    masks = np.empty((n_dabs, height, width), dtype=np.float32)
    _weights(u, v, columns, rows, peak, hardness, span, hard, np.empty((0, 0), np.float32), masks)
    own_rows, own_columns = _own_regions_of(spans, bin0, frame0, margin_bins, margin_frames,
                                            n_bins, n_frames, inside_bin0, inside_frame0)  # fmt: skip
    corners, dest_rows, dest_columns, high, window_cells, outside = _windows_of(
        spans, rows, columns, in_rows, in_columns, bin0 - inside_bin0, frame0 - inside_frame0,
        margin_bins, margin_frames, region_width,
    )  # fmt: skip
    data = _pack(step, amount, high, dest_columns, dest_rows, corners, own_columns, own_rows,
                 window_cells, outside, masks)  # fmt: skip
    return data, (n_dabs, height, width), own_columns.shape[2], own_rows.shape[2]


def _plain_pack(
    step, amount, high, dest_columns, dest_rows, corners, column_maps, row_maps, window_cells,
    outside, masks,
):  # fmt: skip
    """:func:`pack`'s array (its layout there); ``masks`` empty where they are not packed."""
    n_dabs, height, width = window_cells.shape
    n_floats = 4 * n_dabs + n_dabs * (width + height)
    n_integers = 2 * n_dabs * (1 + column_maps.shape[2] + row_maps.shape[2] + height * width)
    data = np.empty(n_floats + n_integers + masks.size, dtype=np.float32)
    for k in range(n_dabs):
        for axis in range(2):
            data[2 * k + axis] = np.float32(amount * step[k, axis])
            data[2 * n_dabs + 2 * k + axis] = np.float32(high[k, axis])
        for column in range(width):
            data[4 * n_dabs + k * width + column] = np.float32(dest_columns[k, column])
        for row in range(height):
            data[4 * n_dabs + n_dabs * width + k * height + row] = np.float32(dest_rows[k, row])
    integers = data[n_floats : n_floats + n_integers].view(np.int32)
    at = 0
    for values in (corners.ravel(), column_maps.ravel(), row_maps.ravel(), window_cells.ravel()):
        for index in range(values.shape[0]):
            integers[at + index] = values[index]
        at += values.shape[0]
    flat = outside.ravel()
    for index in range(flat.shape[0]):
        integers[at + index] = flat[index]
    weights = masks.ravel()
    for index in range(weights.shape[0]):
        data[n_floats + n_integers + index] = weights[index]
    return data


_cells = _own_regions_of = _windows_of = _weights = _pack = None  # (bound by _packed)
