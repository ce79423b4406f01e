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

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import torch

from spectropaint.brushes.kernels import triton_math

MOST_PRODUCTS = 1 << 26
"""The most products (the box's cells times the region's, a plane) summed directly: radius 32
at the default cutoff is 31 million, radius 64 370 million; past this, the FFT."""
BLOCK = 64
"""Cells of the box each program sums."""
COLUMNS = 32
"""Columns of the region each step of a program reads."""


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
    if values.stride(2) != 1:
        values = values.contiguous()
    height, box_width = rows.stop - rows.start, columns.stop - columns.start
    out = torch.empty((*lead, height, box_width), device=magnitude.device)
    triton_math.launch(
        _kernel(), (planes, -(-(height * box_width) // BLOCK)),
        values, taps, out, values.stride(0), values.stride(1), n_rows, width, rows.start,
        columns.start, height, box_width, BLOCK=BLOCK, COLUMNS=COLUMNS, enable_fp_fusion=False,
    )  # fmt: skip
    return out


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``); no argument
    specialised on."""
    return triton_math.jit_with(_filter_cells, general=True)


def _filter_cells(
    values, taps, out, plane_stride, row_stride, n_rows, width, row0, column0, height, box_width,
    BLOCK: tl.constexpr, COLUMNS: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of plane ``program_id(0)`` of ``out`` ``[planes, height,
    box_width]`` (contiguous), the box whose first cell is ``(row0, column0)`` of the region
    ``values`` ``[planes, n_rows, width]`` (through its plane and row strides): each the sum over
    the region's cells of their value times ``taps`` ``[2 n_rows - 1, 2 width - 1]`` at the
    offset between the two, at least 0."""
    plane = tl.program_id(0)
    cell = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < height * box_width
    row = row0 + cell // box_width
    column = column0 + cell % box_width
    taps_width = 2 * width - 1
    region = values + plane * plane_stride
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for source_row in range(0, n_rows):
        tap_row = taps + (row + (n_rows - 1) - source_row) * taps_width + (width - 1) + column
        for start in range(0, width, COLUMNS):
            source_column = start + tl.arange(0, COLUMNS)
            present = source_column < width
            cells = tl.load(region + source_row * row_stride + source_column, mask=present,
                            other=0.0)  # fmt: skip
            weights = tl.load(tap_row[:, None] - source_column[None, :],
                              mask=inside[:, None] & present[None, :], other=0.0)  # fmt: skip
            total += tl.sum(weights * cells[None, :], axis=1)
    tl.store(out + plane * (height * box_width) + cell, tl.maximum(total, 0.0), mask=inside)


tl = None  # (bound by _kernel)
