"""A group's dab weights computed on the host in one compiled loop, for groups of a few thousand
cells: what :func:`~.mask.mask_from_distances` and a scatter of the largest weight per cell give
in a dozen operations on the device.

A stamping brush's event needs, per group of dabs, the largest weight any dab gives each cell of
the joint box (and for some brushes each dab's own weights). On the device that is some twenty
operations, each a microsecond or more of dispatch on a CPU and a launch on a GPU, for a few
thousand cells: 0.1 to 0.2 ms of a 1 ms event on a 2-core CPU. Here the same float32 arithmetic
runs over the cells in one call (the distances the host computed already, in float32 as the
device's path rounds them; the raised cosine's cosine is :mod:`.kernels.compiled_math`'s), and the
result goes to the device in one copy. Brushes wider than :data:`HOST_CELLS` (a stroke across a
long file seen whole, whose dabs span thousands of frames) keep the device's path. A stamping
stroke of smaller dabs keeps its coverage on the host too
(:func:`~spectropaint.brushes.dab._coverage_on_host`), so all its groups come here, but on a GPU
whose Triton kernels run: there each group's launch computes its weights from the distances this
module packs (:func:`packed_distances`, :mod:`.kernels.coverage_fused`). A dragging brush's
groups of over :data:`GPU_GROUP_CELLS` cells take the device's path on a GPU.

Used wherever Numba imports, unless :data:`~.kernels.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from spectropaint.brushes import plan_compiled
from spectropaint.brushes.kernels import compiled_math

HOST_CELLS = 1 << 14
"""The most cells of a full-size dab's box (radius 63 along both axes) whose groups' weights are
computed on the host: some 50 us of compiled arithmetic a dab."""
GPU_GROUP_CELLS = 1 << 15
"""On a GPU, the most mask cells (dabs times the tallest box's rows times the widest one's
columns) of a dragging brush's group computed on the host: some 0.1 ms here, 0.25 ms on the
H200's slower host, where the device's path costs about as much (seven dabs at radius 32, a
hundred at radius 8); beyond, the device's path is quicker."""


def fits(dab_cells: int, group_cells: int, device) -> bool:
    """Whether a group of ``group_cells`` mask cells, of a brush whose full-size dab's box holds
    ``dab_cells``, has its weights computed here. On the CPU that is decided per brush and block
    (a stroke's groups, fused or dab by dab, then all take one path); on a GPU large groups take
    the device's path."""
    if dab_cells > HOST_CELLS or (device.type != "cpu" and group_cells > GPU_GROUP_CELLS):
        return False
    return compiled_math.enabled() and loops() is not None


def weights(
    u, v, columns, rows, peak, *, hardness: float, shape: tuple[int, int] | None, each: bool
):
    """The largest weight any dab gives each cell of the joint box ``[B, T]`` (``shape``; None:
    not asked for), and where ``each``, every dab's weight on its own block ``[K, H, W]`` (else
    None); float32.

    ``u`` ``[K, W]`` and ``v`` ``[K, H]``: each dab's distances from its centre in radii along its
    block's columns and rows (2 past its box, where its weight is 0), ``columns`` and ``rows``
    their places in the joint box, ``peak`` ``[K]`` the dabs' peak weights (as
    :func:`~spectropaint.brushes.dab._distances` gives them, on the host)."""
    n_dabs, width = u.shape
    largest = np.zeros((0, 0) if shape is None else shape, dtype=np.float32)
    # (each array C-contiguous: one compiled variant serves every group)
    distances = [np.ascontiguousarray(u, dtype=np.float64),
                 np.ascontiguousarray(v, dtype=np.float64),
                 np.ascontiguousarray(columns, dtype=np.int64),
                 np.ascontiguousarray(rows, dtype=np.int64)]  # fmt: skip
    falloff = (np.float32(hardness), np.float32(1.0 - hardness), hardness >= 1.0)
    if not each and one_peak(peak):  # (a mouse's stroke: one pressure)
        loops()[1](*distances, np.float32(peak[0]), *falloff, largest)
        return largest, None
    every = np.empty((n_dabs, v.shape[1], width) if each else (0, 0, 0), dtype=np.float32)
    loops()[0](*distances, np.ascontiguousarray(peak, dtype=np.float64), *falloff, largest,
                  every)  # fmt: skip
    return None if shape is None else largest, every if each else None


def one_peak(peak: np.ndarray) -> bool:
    """Whether several dabs all have one peak weight (a mouse's stroke: one pressure), where the
    largest weight per cell is the nearest dab's (:func:`_nearest_weights`; the launch of
    :mod:`.kernels.coverage_fused` decides as the host does)."""
    return len(peak) > 1 and bool((peak == peak[0]).all())


_NO_EVERY = np.empty((0, 0, 0), dtype=np.float32)
_NO_HELD = np.empty((0, 0), dtype=np.int32)
_NO_OWNERS = (np.empty((0, 0)), np.empty((0, 0), dtype=np.bool_), np.empty((0, 0), dtype=np.int64))
"""What :func:`group_weights` gives the compiled loop for the maps it is not asked for: empty
arrays of the types it takes (nothing is written into them), made once."""


def group_weights(
    boxes, at, reach, corner, shape, axes, peak, *, hardness: float, each: bool, centres=None,
    holders: bool = False,
):  # fmt: skip
    """:func:`weights` of a stamping group from its dabs, with the distances
    (:func:`.plan_compiled.cells_and_distances`' of its joint box, of ``shape`` ``(B, T)`` from
    ``corner`` ``(bin, frame)``; ``axes``: a frame's position's offset and scale and the bins'
    positions) and, where ``centres`` (the dabs' centre bins ``[K]``) are given, which dab last
    holds each cell (:func:`.plan_compiled.owners`' three maps, or where ``holders`` the one map
    of :func:`.plan_compiled.holders`; else None), in one compiled call: a group's three calls of
    a stroke's event cost some 19 us of the host's dispatch and their arrays' allocations here,
    the one call 8 us. The largest weight ``[B, T]``, each dab's ``[K, H, W]`` (where ``each``,
    else None), and the owner maps."""
    largest = np.zeros(shape, dtype=np.float32)
    n_dabs = len(boxes)
    every = (np.empty((n_dabs, int((boxes[:, 1] - boxes[:, 0]).max()),
                       int((boxes[:, 3] - boxes[:, 2]).max())), dtype=np.float32)
             if each else _NO_EVERY)  # fmt: skip
    owners = centres is not None
    held = np.empty(shape, dtype=np.int32) if owners and holders else _NO_HELD
    found = _NO_OWNERS
    if owners and not holders:
        found = (np.empty(shape), np.empty(shape, dtype=np.bool_), np.empty(shape, dtype=np.int64))
    nearest = not each and one_peak(peak)  # as :func:`weights` decides
    x_offset, x_scale, y = axes
    _planned()(
        *plan_compiled.cells_arguments(boxes, at, reach, corner, shape, x_offset, x_scale, y),
        np.ascontiguousarray(peak, dtype=np.float64), np.float32(hardness),
        np.float32(1.0 - hardness), hardness >= 1.0, nearest,
        np.ascontiguousarray(centres if owners else peak, dtype=np.float64), owners, largest,
        every, *found, held,
    )  # fmt: skip
    if not owners:
        return largest, every if each else None, None
    return largest, every if each else None, held if holders else found


def packed_distances(boxes, at, reach, corner, shape, axes, peak) -> tuple[np.ndarray, int, int]:
    """A stamping group's dabs as the launch that computes their weights reads them
    (:func:`.kernels.coverage_fused.raise_coverage`), in one compiled call: the distances
    (:func:`group_weights`' arguments, but the weights' own) packed into one float32 array, the
    floats ``[K W + K H + K]`` (each dab's distances from its centre in radii along its box's
    columns ``[K, W]`` and rows ``[K, H]``, float32 as :func:`weights` rounds them, and its peak
    weight ``[K]``) then the integers ``[K, 4]`` as int32's bits (each dab's box in the joint box's
    cells: frame0, frame1, bin0, bin1); and ``W`` and ``H``. Some 3 kB a group of dabs at radius
    32, where their weights, the map of holders and the raised coverage are 23 kB each."""
    x_offset, x_scale, y = axes
    return _packed()(
        *plan_compiled.cells_arguments(boxes, at, reach, corner, shape, x_offset, x_scale, y),
        np.ascontiguousarray(peak, dtype=np.float64),
    )  # fmt: skip


def compile_loops() -> None:
    """Compile both loops now, on two small dabs of one peak weight (the nearest dab's loop) and
    for each dab's weights (the other), so that no stroke waits for one: the window's warm-up
    calls this (:func:`~.warm_up.warm_up_later`). Nothing where Numba does not import."""
    if loops() is None:
        return
    u, v = np.zeros((2, 3)), np.zeros((2, 2))
    columns, rows = np.zeros((2, 3), dtype=np.int64), np.zeros((2, 2), dtype=np.int64)
    for each in (False, True):
        weights(u, v, columns, rows, np.ones(2), hardness=0.5, shape=(2, 3), each=each)
    boxes, at = np.array([[0, 2, 0, 3], [1, 3, 1, 4]]), np.array([[1.0, 1.0], [2.0, 2.0]])
    for each, peak in ((False, np.ones(2)), (False, np.arange(1.0, 3.0)), (True, np.ones(2))):
        group_weights(boxes, at, np.full((2, 2), 2.0), (0, 0), (3, 4), (0.0, 1.0, np.arange(3.0)),
                      peak, hardness=0.5, each=each, centres=at[:, 1])  # fmt: skip
    packed_distances(boxes, at, np.full((2, 2), 2.0), (0, 0), (3, 4), (0.0, 1.0, np.arange(3.0)),
                     np.ones(2))  # fmt: skip


@functools.cache
def loops():
    """The compiled loops (:func:`_group_weights`, :func:`_nearest_weights`), or None where Numba
    does not import."""
    global _falloff, _adjacent
    compiled = [compiled_math.compile_with(loop, "sincos", nogil=True)
                for loop in (_group_weights, _nearest_weights)]  # fmt: skip
    if None in compiled:
        return None
    _falloff = compiled_math.inline(_plain_falloff)
    _adjacent = compiled_math.inline(_plain_adjacent)
    return compiled


@functools.cache
def _planned():
    """:func:`group_weights`' compiled call (:func:`_plain_planned`), with the loops it calls
    (:mod:`.plan_compiled`'s distances and owners, :func:`loops`') bound where Numba finds
    them as it compiles it. Numba's cache on disk keys it by this file alone: an edit of a loop
    it calls shows only once this file changes too (``test_mask_compiled`` compares the one call
    with the loops called one by one)."""
    global _cells, _owners, _holders, _each_weights, _nearest
    planning = plan_compiled.loops()
    _cells, _owners, _holders = planning.cells, planning.owners, planning.holders
    _each_weights, _nearest = loops()
    return compiled_math.compile_kernel(_plain_planned, fastmath=False)


def _plain_planned(
    boxes, at, reach, bin0, frame0, n_bins, n_frames, x_offset, x_scale, y, peak, hardness, span,
    hard, nearest, centres, owners, largest, every, centre, owned, last, held,
):  # fmt: skip
    """:func:`group_weights`' call: the distances, the owner maps (where ``owners``: the map of
    holders where ``held`` has cells, else the three) and the weights (the nearest dab's where
    ``nearest``), each by its own loop."""
    spans, columns, rows, _, _, u, v = _cells(boxes, at, reach, bin0, frame0, n_bins, n_frames,
                                          x_offset, x_scale, y, False)  # fmt: skip
    if owners and held.shape[0] > 0:
        _holders(spans, held)
    elif owners:
        _owners(spans, centres, centre, owned, last)
    if nearest:
        _nearest(u, v, columns, rows, np.float32(peak[0]), hardness, span, hard, largest)
    else:
        _each_weights(u, v, columns, rows, peak, hardness, span, hard, largest, every)


@functools.cache
def _packed():
    """:func:`packed_distances`' compiled call (:func:`_plain_packed`), the distances' loop bound
    as :func:`_planned` binds it (plain Python where Numba does not import)."""
    global _cells
    _cells = plan_compiled.loops().cells
    if compiled_math.numba_module() is None:
        return _plain_packed
    return compiled_math.compile_kernel(_plain_packed, fastmath=False)


def _plain_packed(boxes, at, reach, bin0, frame0, n_bins, n_frames, x_offset, x_scale, y, peak):
    """:func:`packed_distances`' call: the distances' loop, its results packed."""
    spans, _, _, _, _, u, v = _cells(boxes, at, reach, bin0, frame0, n_bins, n_frames, x_offset,
                                     x_scale, y, False)  # fmt: skip
    n_dabs, width, height = u.shape[0], u.shape[1], v.shape[1]
    n_floats = n_dabs * (width + height + 1)
    data = np.empty(n_floats + 4 * n_dabs, dtype=np.float32)
    for k in range(n_dabs):
        for x in range(width):
            data[k * width + x] = np.float32(u[k, x])
        for row in range(height):
            data[n_dabs * width + k * height + row] = np.float32(v[k, row])
        data[n_dabs * (width + height) + k] = np.float32(peak[k])
    integers = data[n_floats:].view(np.int32)
    for k in range(n_dabs):
        for side in range(4):
            integers[4 * k + side] = spans[k, side]
    return data, width, height


def _plain_falloff(r, hardness, span, hard):
    """``mask_from_radius``'s weight of peak 1 at the distance ``r`` (float32, in radii), in its
    order of operations: 1 to ``hardness``, a raised cosine down to 0 at 1 (``span``: one less the
    hardness; ``hard``: a hardness of 1, 1 inside and 0 outside)."""
    one, zero, half = np.float32(1.0), np.float32(0.0), np.float32(0.5)
    ramp = min(max((r - hardness) / span, zero), one)
    shape = _sincos(ramp * np.float32(math.pi))[1] * half + half
    return (one if r < one else zero) if hard else (zero if r >= one else shape)


def _group_weights(u, v, columns, rows, peak, hardness, span, hard, largest, every):
    """:func:`weights`' loop: ``mask_from_radius`` of ``sqrt(v**2 + u**2)`` cell by cell, in its
    order of operations, its largest per cell of ``largest`` and into ``every`` (each unless it
    is empty). Each row's weights are computed in a loop without branches (which the compiler
    vectorises), then kept by index: along the dab's run of adjacent columns as a slice (which
    vectorises too), the rest one by one."""
    n_dabs, height, width = u.shape[0], v.shape[1], u.shape[1]
    keep, scatter = every.shape[0] > 0, largest.shape[0] > 0
    values = np.empty(width, dtype=np.float32)
    for k in range(n_dabs):
        weight, along = np.float32(peak[k]), u[k]
        first, run = _adjacent(columns[k])
        for y in range(height):
            down = np.float32(v[k, y])
            across = down * down
            for x in range(width):
                at = np.float32(along[x])  # (float32 as the device's path rounds it)
                r = np.float32(math.sqrt(across + at * at))
                values[x] = _falloff(r, hardness, span, hard) * weight
            if keep:
                every[k, y] = values
            if scatter:
                row = largest[rows[k, y]]
                for x in range(run):
                    at_column = first + np.uintp(x)
                    row[at_column] = max(row[at_column], values[x])
                for x in range(run, width):
                    column = columns[k, x]
                    row[column] = max(row[column], values[x])


def _nearest_weights(u, v, columns, rows, weight, hardness, span, hard, largest):
    """:func:`_group_weights`' largest weight per cell where every dab's peak is ``weight``: the
    nearest dab's squared distance per cell of ``largest`` first (a product and a sum a dab's
    cell), then ``mask_from_radius`` once a cell of the joint box. The weight never rises with
    the distance but for the cosine's last bit (its polynomials are not monotonic to the bit), so
    a cell's weight is its largest to within one rounding: a stroke across a long file seen whole
    covers each cell with a dozen dabs, each once a cosine before."""
    n_dabs, height, width = u.shape[0], v.shape[1], u.shape[1]
    nearest = np.full(largest.shape, np.float32(4.0))  # 2 radii: weight 0 where no dab reaches
    for k in range(n_dabs):
        along = u[k]
        first, run = _adjacent(columns[k])
        for y in range(height):
            down = np.float32(v[k, y])
            across = down * down
            row = nearest[rows[k, y]]
            for x in range(run):  # (as :func:`_group_weights` keeps its weights)
                at, at_column = np.float32(along[x]), first + np.uintp(x)
                row[at_column] = min(row[at_column], across + at * at)
            for x in range(run, width):
                at = np.float32(along[x])
                column = columns[k, x]
                row[column] = min(row[column], across + at * at)
    n_rows, n_columns = largest.shape
    for y in range(n_rows):
        for x in range(n_columns):
            r = np.float32(math.sqrt(nearest[y, x]))
            largest[y, x] = _falloff(r, hardness, span, hard) * weight


def _plain_adjacent(columns):
    """A dab's first column (unsigned: an index the compiler need not test for wrapping around)
    and how many of its columns from there are adjacent, each the one before's next: a slice of
    the joint box's row, where the rest (a box clamped into the joint box) are kept one by one."""
    first, run = columns[0], 1
    while run < columns.shape[0] and columns[run] == first + run:
        run += 1
    return np.uintp(first), run


_sincos = _falloff = _adjacent = None  # (bound by loops)
_cells = _owners = _holders = _each_weights = _nearest = None  # (bound by _planned, _packed)
