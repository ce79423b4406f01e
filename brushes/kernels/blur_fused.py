""":func:`.blur.blur` on CUDA in two Triton launches: the truncated Gaussian applied directly
along frames, then along bins, instead of a real FFT and its inverse per axis.

On CUDA the FFT blur is some fifteen operations (two forward and two inverse FFTs, the products
with the Gaussian's response, the narrowing, the box's columns and rows, the clamp), each a launch
of 7 to 40 us of the H200's host (cuFFT's the dearest). A brush's Gaussian is a few dozen taps (its
standard deviation ``sigma`` radii, cut at :data:`.blur.TRUNCATE` of them), so each cell of the
box sums them directly: the first launch along frames for every row of the region and the box's
columns, the second along bins for the box's rows, clamped at 0 as the FFT blur clamps its
rounding. The region carries the Gaussian's support as its margin, so the linear sum equals the
FFT's circular one on the box to float rounding (``tests/test_kernels.py``: against the FFT blur
and scipy's ``gaussian_filter``).

A stroke's group passes ``into``: the second launch then blends the blurred box with its values
and writes it into the document itself (:class:`.blur.BlurInto`), for what the blurred box's
buffer and the blend's own launch took.

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import torch

from spectropaint.brushes.kernels import originals_fused, triton_math

BLOCK = 128
"""Cells of a row each program sums at once."""


def available(device: torch.device) -> bool:
    """Whether blurs on ``device`` go through the two launches."""
    return triton_math.wanted(device)


def blur(
    magnitude: torch.Tensor | None, gaussians, inner, *, into=None, kept=None
) -> torch.Tensor | None:
    """The magnitudes of the box ``inner`` (rows, columns slices) of ``magnitude`` ``[..., Bm,
    Tm]`` blurred by the truncated Gaussians ``gaussians`` (bins, frames: each's taps ``[2 h +
    1]``, float32 on the device): ``[..., B, T]``, at least 0.

    ``into``: ``(weight, destination)``: instead, the blur blended with the box's own values in
    ``magnitude`` by ``weight`` ``[B, T]`` (as a magnitude-only kernel's blend: ``lerp`` where the
    weight is above 0) and written into ``destination`` (the document's magnitude and phase and
    the index of the box's first cell, as :meth:`~spectropaint.transforms.document.Document.cells`
    gives them) by the second launch; None is returned.

    ``kept`` (:class:`.originals_fused.Kept`, with ``into``): instead of ``magnitude`` (None),
    where the region's values lie: the stroke's kept tiles and the document's cells; both
    launches read each cell there, with no copy of the region first. A region past the grid's
    edges (its first cell perhaps before the grid's) reads each cell past them at its
    reflection, as :func:`~spectropaint.brushes.dab.reflect_index` reflects (the edge cell
    repeated), which lies in the region's part inside the grid."""
    rows, columns = inner
    tiled = int(kept is not None)  # (whether the launches read the region through the table)
    if kept is None:  # the region's values, read as a document with no tile kept
        *lead, n_rows, width = magnitude.shape
        values = magnitude.reshape(-1, n_rows, width)
        kept = originals_fused.Kept.of(values, values)
    else:
        lead = kept.shape[:1]
    planes, n_rows, width = kept.shape
    source, _, first = kept.document
    device = source.device
    height, box_width = rows.stop - rows.start, columns.stop - columns.start
    along = torch.empty((planes, n_rows, box_width), device=device)
    no_blend = (along, 0, 0, 0, 0, 0, along, 0, 0, 0)  # (nothing of it read)
    if into is None:
        out = torch.empty((*lead, height, box_width), device=device)
        target, blend = (out, height * box_width, box_width, 1, 0), no_blend
    else:
        weight, (out, _, out_first) = into
        target = (out, *out.stride(), out_first)
        blend = (source, first, *source.stride()[:2], rows.start, columns.start, weight,
                 weight.stride(0), 1, tiled)  # fmt: skip
    steps = [
        # along frames: every row of the region (read where it lies), the box's columns
        (source, first, tiled, (n_rows, box_width), (0, columns.start), width, gaussians[1], 0,
         (along, n_rows * box_width, box_width, 1, 0), no_blend),
        # along bins: the box's rows of that, at least 0 (and blended into the document)
        (along, 0, 0, (height, box_width), (rows.start, 0), n_rows, gaussians[0], 1, target,
         blend),
    ]  # fmt: skip
    for values, at, through_table, shape, (row0, column0), extent, taps, down, output, mix in steps:
        triton_math.launch(
            _kernel(), (planes * shape[0], -(-shape[1] // BLOCK)),
            values, at, taps, *values.stride(), len(taps) // 2, row0, column0, *shape, extent,
            down, *output, *mix[:-1], through_table, mix[-1], *kept.places, BLOCK=BLOCK,
            enable_fp_fusion=False,
        )  # fmt: skip
    return out if into is None else None


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``); no argument
    specialised on."""
    return triton_math.jit_with(_convolve_rows, "lerp", "from_kept", "reflected", general=True)


def _convolve_rows(
    source, source_first, taps, plane_stride, row_stride, column_stride, half, row0, column0,
    out_rows, out_width, extent, down, target, target_plane, target_row, target_column,
    target_first, base, base_first, base_plane, base_row, base_row0, base_column0, weight,
    weight_row, blends, source_tiled, base_tiled, table, table_columns, tile_side, n_bins,
    n_frames, bin0, frame0, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of row ``program_id(0)`` (plane by plane) of an output
    ``[planes, out_rows, out_width]``, each the sum of ``taps`` over the cells of ``source``
    (through its strides, from ``source_first``) around the one ``row0`` rows and ``column0``
    columns further on, along its rows (``down``: along its columns, then clamped at 0); cells
    past ``extent`` along that axis count 0. Each is written into ``target`` through its strides
    from ``target_first``; ``blends``: blended first with ``base``'s cell (from ``base_first``)
    ``base_row0`` rows and ``base_column0`` columns further on (its columns adjacent) by
    ``weight``'s (as ``torch.lerp`` where it is above 0).

    Where ``source_tiled`` (and ``base_tiled``), the source's (and the base's) cells that a kept
    tile holds (``table`` to ``frame0``: :meth:`.tile_table.TileTable.places` at the region's
    first cell) are read there: the region's values where they lie, a cell past the grid (of
    ``n_bins x n_frames``) at its reflection."""
    program = tl.program_id(0)
    plane, row = program // out_rows, program % out_rows
    x = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = x < out_width
    planes, rows = plane + x * 0, row0 + row + x * 0  # (each cell's: the table's)
    centre = (source + source_first + plane * plane_stride + (row0 + row) * row_stride
              + (column0 + x) * column_stride)  # fmt: skip
    # the centre's place along the summed axis, and the step between the cells summed
    at = (row0 + row) * down + (column0 + x) * (1 - down)
    step = row_stride * down + column_stride * (1 - down)
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(0, 2 * half + 1):
        spot = at + (j - half)
        weight_j = tl.load(taps + j)
        held = inside & (spot >= 0) & (spot < extent)
        if source_tiled != 0:  # (along frames, the cells past the grid at their reflections)
            value = _from_kept(source, source_first, plane_stride, row_stride, column_stride,
                               table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
                               planes, planes, _reflected(bin0 + rows, n_bins) - bin0,
                               _reflected(frame0 + column0 + x + (j - half), n_frames) - frame0,
                               held)  # fmt: skip
        else:
            value = tl.load(centre + (j - half) * step, mask=held, other=0.0)
        total += weight_j * value
    if down != 0:
        total = tl.maximum(total, 0.0)
    if blends != 0:
        at_base = (base + base_first + plane * base_plane + (base_row0 + row) * base_row
                   + base_column0 + x)  # fmt: skip
        if base_tiled != 0:
            old = _from_kept(base, base_first, base_plane, base_row, 1, table, table_columns,
                             tile_side, n_bins, n_frames, bin0, frame0, planes, planes,
                             base_row0 + row + x * 0, base_column0 + x, inside)  # fmt: skip
        else:
            old = tl.load(at_base, mask=inside, other=0.0)
        amount = tl.load(weight + row * weight_row + x, mask=inside, other=0.0)
        total = _lerp(old, total, amount)
    tl.store(target + target_first + plane * target_plane + row * target_row + x * target_column,
             total, mask=inside)  # fmt: skip


tl = _lerp = _from_kept = _reflected = None  # (bound by _kernel)
