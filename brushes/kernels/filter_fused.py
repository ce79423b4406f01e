""":func:`.spectral_filter.spectral_filter` on CUDA in one Triton launch for a small region: the
filter's linear convolution summed directly, at the box's cells alone, clamped at 0.

On CUDA the filter was a real 2-D FFT, the product with the taps' spectrum, the inverse FFT and
the slices of the box and its clamp: cuFFT's two calls cost some 60 us each of the H200's host,
whatever the size. The filter reads its whole region (the dab's box and one period of the cutoff
around it), through its taps (:func:`.fft.filter_taps`: the grid's periodic kernel at each
offset), so each cell of the box here sums the region's cells times their taps: ``S T`` products
a cell for a region of ``S x T``, which stays small for small brushes (a radius-8 dab: 289 cells
of 1 089 products; radius 32: 4 225 of 7 225). Larger regions (:data:`MOST_PRODUCTS`) keep the
FFT, whose cost grows with the region alone. Equal to the FFT's result to float rounding
(``tests/test_filter_fused.py``).

A group of dabs goes through :func:`filter_into` instead: each dab's region is filtered where it
lies in the group's (no stack of regions), and each cell of the joint box that the dab holds last
is blended and written into the document in the same launch, one launch a size of region, where
the dab path took some twenty operations (the stack, this filter, the gather of each cell's result,
the blend): on the H200 a radius-8 filter event went from 1.10 to 0.75 ms (alternated strokes in one
process). Equal to the stacked filter and the fused blend to float rounding.

That launch reads the group's region where its starting values lie
(:class:`~.originals_fused.Kept`: the stroke's kept tiles, the document's cells elsewhere), with
no gathered copy and no launch of its own first. The tiles that this event's record kept are read
from their copies too, not from the document: a dab's region holds cells that other dabs' programs
of the launch write, and the next size's launch reads what this one wrote. Both kernels read
through :func:`~.triton_math._plain_from_kept`, a region given as a tensor as a document with no
tile kept: one compiled variant each.

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import torch

from spectropaint.brushes.kernels import originals_fused, triton_math
from spectropaint.brushes.kernels.originals_fused import Kept

MOST_PRODUCTS = 1 << 26
"""The most products (the box's cells times the region's, a plane) summed directly: radius 32
at the default cutoff is 31 million, radius 64 370 million; past this, the FFT."""
BLOCK = 64
"""Cells of the box each program sums. Since the region is read through the table of kept tiles
(two loads a cell, :func:`~.triton_math._plain_from_kept`), a program that sums more cells
shares each region row it reads among more of them: a radius-32 group's launch took 89 us of the
H200 with 64 cells against 120 with 16 (93 with 32, 99 with 128), a radius-8 group's 28 against
30; a radius-32 event that filters a group, alternated stroke by stroke, 0.435 against 0.470 ms."""
COLUMNS = 128
"""Columns of the region each step of a program reads: with 64, a radius-32 group's launch took
474 us of the H200 (16 cells), with 256 165 us (there were 59 and 133 us, with 16 cells of 128
and 64 of 32 columns, when the region was a copy)."""


def available(device: torch.device, shape: tuple[int, int], inner: tuple[slice, slice]) -> bool:
    """Whether a region of ``shape`` on ``device`` is filtered at its box ``inner`` (rows, columns
    slices) by the direct sum."""
    rows, columns = inner
    cells = (rows.stop - rows.start) * (columns.stop - columns.start)
    return cells * shape[0] * shape[1] <= MOST_PRODUCTS and triton_math.wanted(device)


def filtered(magnitude: torch.Tensor, taps: torch.Tensor, inner: tuple[slice, slice]):
    """The magnitudes of the box ``inner`` (rows, columns slices) of ``magnitude`` ``[..., S,
    T]`` filtered through ``taps`` ``[2 S - 1, 2 T - 1]`` (float32,
    contiguous, on the device) and clamped at 0: ``[..., B, T']``."""
    rows, columns = inner
    *lead, n_rows, width = magnitude.shape
    planes = magnitude.numel() // (n_rows * width)
    values = magnitude.reshape(planes, n_rows, width)
    height, box_width = rows.stop - rows.start, columns.stop - columns.start
    out = torch.empty((*lead, height, box_width), device=magnitude.device)
    # (the region read as a document with no tile kept: the kernel that reads kept tiles too)
    region = originals_fused.kept_arguments(Kept.of(values, values))
    triton_math.launch(
        _kernel("filter"), (planes, -(-(height * box_width) // BLOCK)),
        *region, taps, out, n_rows, width, rows.start, columns.start, height, box_width,
        BLOCK=BLOCK, COLUMNS=COLUMNS, enable_fp_fusion=False,
    )  # fmt: skip
    return out


def filter_into(kept: Kept, taps, dabs, last, weight, destination, box: tuple[int, int],
                inner: tuple[int, int]) -> None:  # fmt: skip
    """Each dab's region of the group's region (its starting values where they lie, ``kept``:
    the stroke's kept tiles and the document's cells) filtered through ``taps`` (as
    :func:`filtered`: the regions are one size, the ``taps``' ``[2 S - 1, 2 T - 1]``) at the
    cells of its box that it holds last, blended with their original values by ``weight`` ``[B,
    T]`` (as a magnitude-only kernel's blend: ``lerp`` where the weight is above 0), and written
    into ``destination`` (the document's magnitude and phase and the index of the joint box's
    first cell, as :meth:`~spectropaint.transforms.document.Document.cells` gives them): one
    launch for the filter of every dab, the gather of each cell's result and the blend, with no
    copy of the region before it.

    ``dabs`` ``[K, 3]`` (int32, contiguous): each dab's region's first row and column in the
    group's region (its box's in the joint box) and its number in ``last``; ``last`` ``[B, T]``
    (int32): the number of the dab whose box holds each cell last (-1 where none does), or a
    cell of 0 read through strides of 0 for one dab; ``box``: the dabs' boxes' ``(rows,
    columns)``; ``inner``: where the box begins in each dab's region (the kernel's margin)."""
    planes = kept.shape[0]
    n_rows, width = taps.shape[0] // 2 + 1, taps.shape[1] // 2 + 1
    height, box_width = box
    magnitude, _, first = destination
    last_strides = last.stride() if last.numel() > 1 else (0, 0)
    triton_math.launch(
        _kernel("into"), (planes, dabs.shape[0], -(-(height * box_width) // BLOCK)),
        *originals_fused.kept_arguments(kept), taps, dabs, last,
        weight, magnitude, n_rows, width, *inner, height, box_width, *last_strides,
        weight.stride(0), first, *magnitude.stride(), BLOCK=BLOCK, COLUMNS=COLUMNS,
        enable_fp_fusion=False,
    )  # fmt: skip


@functools.cache
def _kernel(name: str):
    """Kernel ``name`` (``filter``: :func:`filtered`'s, ``into``: :func:`filter_into`'s), compiled
    (or interpreted, under ``TRITON_INTERPRET=1``) with the sum they share; no argument
    specialised on."""
    _bind_sum()
    kernel = {"filter": _filter_cells, "into": _filter_into_cells}[name]
    return triton_math.jit_with(kernel, "from_kept", "lerp", general=True)


@functools.cache
def _bind_sum() -> None:
    """The kernels' shared sum jitted and bound once (Triton refuses a global that changes)."""
    globals()["_sum_taps"] = triton_math.helper(_plain_sum_taps, "from_kept")


def _plain_sum_taps(
    magnitude, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
    plane, top, left, taps, n_rows, width, row, column, inside,
    BLOCK: tl.constexpr, COLUMNS: tl.constexpr,
):  # fmt: skip
    """The filter's sum at the cells of row ``row`` and column ``column`` of a region ``[n_rows,
    width]`` (from row ``top`` and column ``left`` of channel ``plane`` of the values ``magnitude``
    to ``frame0`` give, :func:`~.triton_math._plain_from_kept`'s): the region's cells times
    ``taps`` ``[2 n_rows - 1, 2 width - 1]`` at the offset between the two."""
    taps_width = 2 * width - 1
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for source_row in range(0, n_rows):
        tap_row = taps + (row + (n_rows - 1) - source_row) * taps_width + (width - 1) + column
        for start in range(0, width, COLUMNS):
            source_column = start + tl.arange(0, COLUMNS)
            present = source_column < width
            zeros = source_column * 0  # (the channel and row as vectors, as the helper takes)
            cells = _from_kept(
                magnitude, first, plane_stride, row_stride, column_stride,
                table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
                plane + zeros, plane + zeros, top + source_row + zeros, left + source_column,
                present,
            )  # fmt: skip
            weights = tl.load(tap_row[:, None] - source_column[None, :],
                              mask=inside[:, None] & present[None, :], other=0.0)  # fmt: skip
            total += tl.sum(weights * cells[None, :], axis=1)
    return total


def _filter_cells(
    magnitude, phase, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
    taps, out, n_rows, width, row0, column0, height, box_width,
    BLOCK: tl.constexpr, COLUMNS: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of plane ``program_id(0)`` of ``out`` ``[planes, height,
    box_width]`` (contiguous), the box whose first cell is ``(row0, column0)`` of the region
    ``[planes, n_rows, width]`` (``magnitude`` to ``frame0``: :func:`.originals_fused.
    kept_arguments`', ``phase`` unread): each the sum over the region's cells of their value
    times ``taps`` ``[2 n_rows - 1, 2 width - 1]`` at the offset between the two, at least 0."""
    plane = tl.program_id(0)
    cell = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < height * box_width
    total = _sum_taps(
        magnitude, first, plane_stride, row_stride, column_stride,
        table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
        plane, 0, 0, taps, n_rows, width, row0 + cell // box_width, column0 + cell % box_width,
        inside, BLOCK, COLUMNS,
    )  # fmt: skip
    tl.store(out + plane * (height * box_width) + cell, tl.maximum(total, 0.0), mask=inside)


def _filter_into_cells(
    magnitude, phase, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
    taps, dabs, last, weight, out, n_rows, width, row0, column0, height, box_width, last_row,
    last_column, weight_row, out_first, out_plane, out_row, out_column,
    BLOCK: tl.constexpr, COLUMNS: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of dab ``program_id(1)``'s box in plane ``program_id(0)``.
    ``dabs`` ``[K, 3]`` gives each dab's region's first row and column in the group's region (its
    starting values: ``magnitude`` to ``frame0``, :func:`.originals_fused.kept_arguments`',
    ``phase`` unread; each dab's region ``n_rows x width``, its box ``height x box_width`` from
    the region's ``(row0, column0)``) and the dab's number; the box's cell ``(i, j)`` is the joint
    box's ``(top + i, left + j)``. Each cell that ``last`` (the number of the dab whose box holds
    it last) gives to this dab is filtered as :func:`_filter_cells` does, clamped at 0, blended
    with its original value (the group region's, under the cell) by ``weight``'s cell as
    :func:`torch.lerp` does where the weight is above 0, and written into ``out`` (through its
    strides, from ``out_first``)."""
    plane = tl.program_id(0)
    dab = tl.program_id(1)
    cell = tl.program_id(2) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < height * box_width
    top = tl.load(dabs + 3 * dab)
    left = tl.load(dabs + 3 * dab + 1)
    number = tl.load(dabs + 3 * dab + 2)
    i = cell // box_width
    j = cell % box_width
    total = _sum_taps(
        magnitude, first, plane_stride, row_stride, column_stride,
        table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
        plane, top, left, taps, n_rows, width, row0 + i, column0 + j, inside, BLOCK, COLUMNS,
    )  # fmt: skip
    row = top + i
    column = left + j
    owned = inside & (tl.load(last + row * last_row + column * last_column, mask=inside,
                              other=-1) == number)  # fmt: skip
    old = _from_kept(
        magnitude, first, plane_stride, row_stride, column_stride,
        table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
        plane + i * 0, plane + i * 0, top + row0 + i, left + column0 + j, owned,
    )  # fmt: skip
    amount = tl.load(weight + row * weight_row + column, mask=owned, other=0.0)
    at = out_first + plane * out_plane + row * out_row + column * out_column
    tl.store(out + at, _lerp(old, tl.maximum(total, 0.0), amount), mask=owned)


tl = _sum_taps = _from_kept = _lerp = None  # (bound by _kernel)
