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

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import torch

from spectropaint.brushes.kernels import triton_math

BLOCK = 128
"""Cells of a row each program sums at once."""


def available(device: torch.device) -> bool:
    """Whether blurs on ``device`` go through the two launches."""
    return triton_math.wanted(device)


def blur(magnitude: torch.Tensor, gaussians, inner) -> torch.Tensor:
    """The magnitudes of the box ``inner`` (rows, columns slices) of ``magnitude`` ``[..., Bm,
    Tm]`` blurred by the truncated Gaussians ``gaussians`` (bins, frames: each's taps ``[2 h +
    1]``, float32 on the device): ``[..., B, T]``, at least 0."""
    rows, columns = inner
    *lead, n_rows, width = magnitude.shape
    planes = magnitude.numel() // (n_rows * width)
    height, box_width = rows.stop - rows.start, columns.stop - columns.start
    values = magnitude.reshape(planes, n_rows, width)
    along = torch.empty((planes, n_rows, box_width), device=magnitude.device)
    out = torch.empty((*lead, height, box_width), device=magnitude.device)
    steps = [
        # along frames: every row of the region, the box's columns
        (values, along, (n_rows, box_width), (0, columns.start), width, gaussians[1], 0),
        # along bins: the box's rows of that, at least 0
        (along, out, (height, box_width), (rows.start, 0), n_rows, gaussians[0], 1),
    ]
    for source, target, (out_rows, out_width), (row0, column0), extent, taps, down in steps:
        triton_math.launch(
            _kernel(), (planes * out_rows, -(-out_width // BLOCK)),
            source, taps, target, *source.stride(), len(taps) // 2, row0, column0, out_rows,
            out_width, extent, down, BLOCK=BLOCK, enable_fp_fusion=False,
        )  # fmt: skip
    return out


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``); no argument
    specialised on."""
    return triton_math.jit_with(_convolve_rows, general=True)


def _convolve_rows(
    source, taps, target, plane_stride, row_stride, column_stride, half, row0, column0,
    out_rows, out_width, extent, down, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of row ``program_id(0)`` (plane by plane) of ``target``
    ``[planes, out_rows, out_width]`` (contiguous), each the sum of ``taps`` over the cells of
    ``source`` (through its strides) around the one ``row0`` rows and ``column0`` columns further
    on, along its rows (``down``: along its columns, then clamped at 0); cells past ``extent``
    along that axis count 0."""
    program = tl.program_id(0)
    plane, row = program // out_rows, program % out_rows
    x = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = x < out_width
    centre = (source + plane * plane_stride + (row0 + row) * row_stride
              + (column0 + x) * column_stride)  # fmt: skip
    # the centre's place along the summed axis, and the step between the cells summed
    at = (row0 + row) * down + (column0 + x) * (1 - down)
    step = row_stride * down + column_stride * (1 - down)
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(0, 2 * half + 1):
        spot = at + (j - half)
        weight = tl.load(taps + j)
        held = inside & (spot >= 0) & (spot < extent)
        total += weight * tl.load(centre + (j - half) * step, mask=held, other=0.0)
    if down != 0:
        total = tl.maximum(total, 0.0)
    tl.store(target + program * out_width + x, total, mask=inside)


tl = None  # (bound by _kernel)
