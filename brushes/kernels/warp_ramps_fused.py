"""What warp's dabs need of an event's region (:func:`.warp.warp_prepare`) in one GPU launch
(Triton), for the fused warp (:mod:`.warp_fused`).

On CUDA :func:`.warp.warp_prepare` is some twenty operations, and the bands' and frames' indices it
is given (reflected past the grid) four or five more: each a launch, some 7 to 20 us of the H200's
host. Here one program per row of the region finds its band and frames (reflected as the region's
values are), and computes the row's steady-tone phase ``2 pi frac(hop f t / sr)`` in float64 as
torch does (the constants read as float64 from the device: a Triton float argument is float32),
rounded to float32, its advance per frame, and each channel's drift, wrapped as :mod:`.warp_fused`
wraps phases (``floor(x + 1/2)``: a half turn exactly may round the other way than
:func:`.phase.wrap`). The ramps and advances equal torch's bit for bit
(``tests/test_warp_fused.py``).

Used where :mod:`.warp_fused` is, whatever the phase mode (it computes the drift and the advances
that a mode does not read too).
"""

from __future__ import annotations

import functools
import math

import torch

from spectropaint.brushes.kernels import originals_fused, triton_math
from spectropaint.brushes.kernels.originals_fused import Kept
from spectropaint.transforms.regions import Region

BLOCK = 128
"""Frames each step of a row's program computes."""


def prepare(
    original: torch.Tensor | Kept,
    band_hz: torch.Tensor,
    region: Region,
    grid: tuple[int, int],
    *,
    hop: int,
    sample_rate: int,
) -> dict[str, torch.Tensor]:
    """:func:`.warp.warp_prepare`'s tensors for ``region`` (block cells, perhaps past the
    ``grid``'s ``(n_bins, n_frames)``), computed from where it lies.

    ``original`` ``[2, C, Bm, Tm + 1]``: its values as the stroke began, the frame before it in
    front, or where they lie (:class:`~.originals_fused.Kept`, read by the launch there);
    ``band_hz`` ``[n_bins]`` float64: the block's bands."""
    kept = Kept.of(original[0], original[1]) if isinstance(original, torch.Tensor) else original
    channels, n_rows, width = kept.shape[0], kept.shape[1], kept.shape[2] - 1
    device = band_hz.device
    ramp = torch.empty((n_rows, width), device=device)
    drift = torch.empty((channels, n_rows, width), device=device)
    omega = torch.empty(n_rows, device=device)
    triton_math.launch(
        _kernel(), (n_rows,),
        *originals_fused.kept_arguments(kept), band_hz,
        _constants(device, hop, sample_rate), ramp, drift, omega, region.bin0, grid[0],
        region.frame0, grid[1], width, channels, BLOCK=BLOCK, enable_fp_fusion=False,
    )  # fmt: skip
    return {"ramp": ramp, "drift": drift, "omega": omega[:, None].expand(ramp.shape)}


@functools.cache
def _constants(device: torch.device, hop: int, sample_rate: int) -> torch.Tensor:
    """``hop / sample_rate``, ``2 pi`` and ``2 pi hop / sample_rate`` as torch's path has them
    (Python's float64), on ``device``."""
    values = (hop / sample_rate, 2 * math.pi, 2 * math.pi * hop / sample_rate)
    return torch.tensor(values, dtype=torch.float64, device=device)


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``) with its helper; no
    argument specialised on."""
    return triton_math.jit_with(_prepare_rows, "wrap", "from_kept", general=True)


def _prepare_rows(
    magnitude, phase, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
    band_hz, constants, ramp, drift, omega, bin0, n_bins, frame0, n_frames, width, channels,
    BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: row ``program_id`` of ``ramp`` ``[Bm, Tm]``, ``drift`` ``[C, Bm, Tm]`` and
    ``omega`` ``[Bm]`` (contiguous), from the phases of the region ``[C, Bm, Tm + 1]`` where
    they lie (``magnitude`` to ``tile_frame0``: :func:`.originals_fused.kept_arguments`',
    ``magnitude`` unread) and the band of the region's row (``bin0`` on), its frames from
    ``frame0``, each reflected past the grid (edge cell repeated, as
    :func:`~spectropaint.brushes.dab.reflect_index` reflects)."""
    b = tl.program_id(0)
    row = ((bin0 + b) % (2 * n_bins) + 2 * n_bins) % (2 * n_bins)  # (a remainder of either sign)
    past = row // n_bins  # 1 in the reflection: the row counted back from the edge
    row = row * (1 - 2 * past) + past * (2 * n_bins - 1)
    hop_over_rate = tl.load(constants)
    turn = tl.load(constants + 1)
    advance_scale = tl.load(constants + 2)
    hz = tl.load(band_hz + row).to(tl.float64)
    rate = hz * hop_over_rate
    centre = ((rate - tl.floor(rate)) * turn).to(tl.float32)  # the advance over one frame
    tl.store(omega + b, (advance_scale * hz).to(tl.float32))
    for start in range(0, width, BLOCK):
        t = start + tl.arange(0, BLOCK)
        inside = t < width
        frame = ((frame0 + t) % (2 * n_frames) + 2 * n_frames) % (2 * n_frames)
        frame = tl.minimum(frame, 2 * n_frames - 1 - frame)
        cycles = rate * frame.to(tl.float64)
        tl.store(ramp + b * width + t, ((cycles - tl.floor(cycles)) * turn).to(tl.float32),
                 mask=inside)  # fmt: skip
        row_b = b + t * 0  # (the row and channel as vectors, as the helper takes them)
        for c in range(channels):
            row_c = c + t * 0
            later = _from_kept(
                phase, first, plane_stride, row_stride, column_stride,
                table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
                channels + row_c, row_c, row_b, t + 1, inside,
            )  # fmt: skip
            earlier = _from_kept(
                phase, first, plane_stride, row_stride, column_stride,
                table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
                channels + row_c, row_c, row_b, t, inside,
            )  # fmt: skip
            at = (c * tl.num_programs(0) + b) * width + t
            tl.store(drift + at, _wrap((later - earlier) - centre), mask=inside)


tl = _wrap = _from_kept = None  # (bound by _kernel)
