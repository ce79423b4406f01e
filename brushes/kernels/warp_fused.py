"""Warp's dabs of one group in one GPU launch (Triton): what :class:`.warp.WarpPlan` plans and
:func:`~spectropaint.brushes.dab.drag_windows` computes dab after dab, in one program a channel.

On CUDA the torch path costs some hundred kernel launches to plan a group and fifty a dab
(gather, phases, their cosines and sines, bilinear sums, atan2, the continuation's alignment, the
phase blend, the crossfade into the window): a warp event at radius 8 was 4 ms on an H200, nearly
all of it launches. Here one program (one block of threads) takes a channel's part of the group's
dabs in order (a channel's values never meet another's). It first computes what
:func:`.warp.warp_prepare` computes of the group's region (each cell's steady-tone phase ramp,
each row's advance per frame, the channel's drift), from where the region lies and where its
starting values lie: before, that was a launch of its own and three allocations, some 40 us of
the H200's host an event. Then each dab in two passes over its window, separated by barriers, so
that a dab reads what the previous one left:

1. every window cell computes its weight from its row's and its column's distance from the dab's
   centre (the host packs those, not the window's cells: :class:`Packed`), finds the point it samples (``amount * weight * step`` behind it, clamped to
   the dab's own region), its four neighbours in the values held (reflected past the grid as the
   maps say) and their bilinear weights, gathers their magnitude and phase, carries their phases
   in each mode (``continue``: by the measured drift over the columns moved; ``shift``: by the
   row's advance per frame), and sums the phasors into a magnitude and one moved phase per mode
   (and, for ``auto``, the terms of the continuation's alignment), kept in a scratch buffer;
2. every cell sums those terms over :data:`~.phase.CONTEXT_FRAMES` columns either side, decides
   how surely the destination continues (``auto``), blends the phases, and crossfades the result
   into the window through the dab's weight, leaving cells of weight 0 untouched.

The arithmetic is the plan's, cell by cell, without fused multiply-adds (torch rounds each
product); the ramps and advances are torch's bit for bit; only the order of a few float32 sums
and the transcendental routines differ, so a group's result equals the torch path to float
rounding (``tests/test_warp_fused.py``). The CPU's counterpart is :mod:`.warp_compiled`.

Used on CUDA where Triton imports (it comes with torch's CUDA builds on Linux), for a dab alone
too unless its region is wide (:data:`ALONE_CELLS`); ``SPECTROPAINT_FUSED_WARP=0`` turns it off.
The tests run it through Triton's interpreter on the CPU (``TRITON_INTERPRET=1`` before Triton is
first imported).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import torch

from spectropaint.brushes.kernels import originals_fused, staging, triton_math
from spectropaint.brushes.kernels.originals_fused import Kept
from spectropaint.brushes.kernels.phase import ALIGNMENT, CONTEXT_FRAMES, MARGIN
from spectropaint.brushes.kernels.warp import FUSED_ENV
from spectropaint.transforms.regions import Region

PROGRAMS = ((512, 512, 16), (2048, 1024, 32), (math.inf, 2048, 32))
"""The program a window takes by its cells: (the most window cells, the cells each pass handles at
once, the warps that handle them), each compiled apart (the warm-up paints each,
:data:`~spectropaint.brushes.warm_up.RADII`). The program loops over the window in chunks of that
many cells; one dab's passes wait on their loads whatever their width, so a small window takes a
narrow chunk (half the lanes to run), a large one a wide chunk and as many warps as a program may
have (1 024 threads), whose loads wait together. GPU time of a group's launch on the H200
(torch.profiler, a 1 s stroke), cells by warps: at radius 16 (1 089 cells) 46.5 us with 1 024 by
16, 41.1 with 1 024 by 32, 61.2 with 2 048 by 32; at radius 32 (4 225 cells) 103.1, 82.5 and 75.7
us, 130.8 with 4 096 by 32. A radius-8 group's launch took 52 us with 512 cells by 16 warps
against 67 with 1 024."""
ALONE_CELLS = 1 << 15
"""The most cells of a dab's region the kernel takes for a dab alone: it is one program (one block
of threads) a channel. On the H200, as one program for both channels, it took 1.6 ms against
torch's 2.3 for a dab at radius 32 (4 225 cells) but 5.2 to 5.9 against 4.0 to 4.4 ms at radius
128 (66 049 cells)."""
SIZES = ("words", "n_dabs", "plane", "row_length", "region_width", "last_row", "columns",
         "rows", "band0", "n_bands", "frame0", "n_frames", "H", "W", "start", "start_phase",
         "start_first", "start_c", "start_b", "start_t", "table", "table_columns", "tile_side",
         "tile_bins", "tile_frames", "tile_bin0", "tile_frame0", "hard")  # fmt: skip
"""The kernel's arguments that are sizes, strides or places (see :func:`_kernel`), and the
starting values' pointers (a view's may lie anywhere)."""


class Ramps(NamedTuple):
    """Where a group's region lies, for the ramps, advances and drift that the launch computes of
    it (:func:`.warp.warp_prepare`'s): the block's bands ``band_hz`` ``[n_bins]`` (float64, on the
    device), the region (block cells, perhaps past the grid), the ``grid``'s ``(n_bins,
    n_frames)``, its hop and the sample rate."""

    band_hz: torch.Tensor
    region: Region
    grid: tuple[int, int]
    hop: int
    sample_rate: int


def available(device: torch.device) -> bool:
    """Whether a group's dabs on ``device`` go through the fused kernel."""
    return triton_math.wanted(device, FUSED_ENV)


def in_place() -> bool:
    """Whether a group may change the document's cells in place (:func:`apply`): once the kernel
    has run, no launch of it is refused (:class:`~.triton_math.Unavailable`), so no group goes
    to torch's path, which works on a copy of the group's region."""
    return triton_math.launched(_kernel())


class Packed(NamedTuple):
    """A group's dabs on their windows as the launch reads them
    (:func:`~spectropaint.brushes.drag_compiled.packed_windows`): ``data``, a float32 host array
    of the floats ``[5K + 2K W + 2K H]`` (each dab's shift ``[K, 2]`` and its own region's
    highest column and row ``[K, 2]``; the windows' columns ``[K, W]`` and rows ``[K, H]`` in
    their own regions; each dab's distances from its centre in radii along its window's columns
    ``[K, W]`` and rows ``[K, H]``; its peak weight ``[K]``), then the integers ``[2K + 2K columns
    + 2K rows + 4K (H + W)]`` as int32's bits (the corners ``[2, K]``, the column maps ``[2, K,
    columns]``, the row maps ``[2, K, rows]``, the windows' rows ``[K, H]`` and columns ``[K, W]``
    in the group's region, and whether each row ``[K, H]`` and column ``[K, W]`` lies in its
    dab's box); the windows' ``shape`` ``(K, H, W)``; the columns and rows of each dab's own
    region; and the brush's ``hardness``. A window cell's weight, its place in the region and
    whether it lies outside its dab's box follow from its row's and its column's: the launch
    computes them as it reads them."""

    data: np.ndarray
    shape: tuple[int, int, int]
    columns: int
    rows: int
    hardness: float


def apply(held, packed: Packed, original: torch.Tensor | Kept, ramps: Ramps, params) -> None:
    """A group's ``K`` dabs applied in order to the values ``held``, in place, as
    :func:`~spectropaint.brushes.dab.drag_planned` applies them: planned and applied in one launch.

    Parameters
    ----------
    held : torch.Tensor or tuple of torch.Tensor
        Magnitude and phase ``[C, R, S]`` on the GPU (``held[0]`` and ``held[1]``: a contiguous
        ``[2, C, R, S]`` copy of the group's region, or two views of one shape and strides, a
        row's cells adjacent: the document's own cells, changed in place).
    packed : Packed
        The dabs' windows and maps (staged in pinned host memory, :func:`.staging.for_kernels`,
        and copied to the device by the launch itself before it reads them).
    original : torch.Tensor [shape=(2, C, Bm, Tm)] or Kept
        The group's region as the stroke began (its magnitude and phase of one layout, any
        strides; read through them: a view that leaves out the frame before is not copied), or
        where those values lie (:class:`~.originals_fused.Kept`, read by the launch there); the
        frame before it is read too, for the drift.
    ramps : Ramps
        Where the group's region lies, for its ramps, advances and drift.
    params : spectropaint.brushes.kernels.warp.WarpParams
    """
    magnitude, phase = held[0], held[1]
    if magnitude.stride() != phase.stride() or magnitude.stride(-1) != 1:
        raise ValueError("warp_fused.apply: magnitude and phase of one layout, rows contiguous")
    device = magnitude.device
    n_dabs, height, width = packed.shape
    channels = magnitude.shape[0]
    columns, rows = packed.columns, packed.rows
    (data,) = staging.for_kernels([packed.data], device)
    kept = Kept.of(original[0], original[1]) if isinstance(original, torch.Tensor) else original
    _, n_rows, region_width = kept.shape
    region = ramps.region
    words = packed.data.size
    scratch = torch.empty(channels * (6 * height * width + (2 * region_width + 1) * n_rows
                                      + words), device=device)  # fmt: skip
    low, high = ALIGNMENT
    triton_math.launch(
        _kernel(), (channels,),
        magnitude, phase, data, ramps.band_hz,
        _constants(device, ramps.hop, ramps.sample_rate), *originals_fused.kept_arguments(kept),
        scratch, words, n_dabs, magnitude.stride(0), magnitude.stride(1), region_width,
        n_rows - 1, columns, rows, region.bin0, ramps.grid[0], region.frame0, ramps.grid[1], low,
        1.0 / (high - low), 1.0 / MARGIN, height, width, packed.hardness,
        *triton_math.falloff_arguments(packed.hardness), C=channels, CARRY=params.phase != "shift", MOVE=params.phase != "continue",
        AUTO=params.phase == "auto", CONTEXT=CONTEXT_FRAMES,
        **_program(height * width),
        enable_fp_fusion=False,  # torch's rounding: a fused multiply-add rounds once, not twice
    )  # fmt: skip


def _program(cells: int) -> dict:
    """The launch's options for a window of ``cells`` (:data:`PROGRAMS`)."""
    block, warps = next((block, warps) for most, block, warps in PROGRAMS if cells <= most)
    return {"BLOCK": block, "num_warps": warps}


@functools.cache
def _constants(device: torch.device, hop: int, sample_rate: int) -> torch.Tensor:
    """``hop / sample_rate``, ``2 pi`` and ``2 pi hop / sample_rate`` as torch's path has them
    (Python's float64), on ``device``."""
    values = (hop / sample_rate, 2 * math.pi, 2 * math.pi * hop / sample_rate)
    return torch.tensor(values, dtype=torch.float64, device=device)


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``) with its helpers."""
    # (bound once, before the kernel: Triton refuses a global that changes)
    globals()["_ramps"] = triton_math.helper(_plain_ramps, "wrap", "from_kept")
    globals()["_weight"] = triton_math.helper(_plain_weight, "falloff")
    # sizes are not specialised on (Triton would compile a variant for each that is or is not a
    # multiple of 16: seconds, part way through a stroke)
    return triton_math.jit_with(_warp_dabs, "wrap", "atan2", "from_kept", do_not_specialize=SIZES)


def _warp_dabs(
    held, held_phase, floats, band_hz, constants,
    start, start_phase, start_first, start_c, start_b, start_t,
    table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
    scratch, words, n_dabs, plane, row_length, region_width, last_row, columns, rows, band0,
    n_bands, frame0, n_frames, low, along_scale, margin_scale, H, W, hardness, span, hard,
    C: tl.constexpr, CARRY: tl.constexpr, MOVE: tl.constexpr, AUTO: tl.constexpr,
    CONTEXT: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel (see the module's docstring). ``held`` and ``held_phase``: the magnitudes and
    the phases held, channel ``c``'s row ``r`` from ``c * plane + r * row_length`` on;
    ``floats``: the packed data (:class:`Packed`'s layout), its integers read as int32, each
    window cell's weight computed from it (:func:`_weight`; ``hardness``, then ``span`` and
    ``hard``: :func:`.triton_math.falloff_arguments`); ``band_hz`` ``[n_bands]`` float64 and ``constants``
    (:func:`_constants`): the block's bands, for the ramps; ``start`` to ``tile_frame0``: where
    the region's values as the stroke began lie (:func:`.originals_fused.kept_arguments`'; the
    column before the first too);
    ``scratch``: ``[6, C, H, W]`` (magnitude, the moved phase of each mode, the continuation's
    weight and its two alignments), then each channel's ramps ``[C, Bm, Tm]``, drift ``[C, Bm,
    Tm]`` and advances ``[C, Bm]`` (:func:`_ramps`; their region's row ``b`` is the band ``band0 +
    b`` and column ``t`` the frame ``frame0 + t`` of an ``n_bands x n_frames`` grid, reflected past
    it), then each channel's copy of ``floats`` (``words`` 32-bit words). ``CARRY`` and ``MOVE``:
    the ``continue`` and the ``shift`` modes (both: ``AUTO``)."""
    window = H * W
    cells = C * window
    region_plane = (last_row + 1) * region_width
    ramp = scratch + 6 * cells + tl.program_id(0) * region_plane  # (this channel's)
    drift = ramp + C * region_plane
    omega = scratch + 6 * cells + 2 * C * region_plane + tl.program_id(0) * (last_row + 1)
    # the packed data copied from pinned host memory to the device first, in wide steps: a dab's
    # loads of it come one after another (the cells' rows and columns, then their maps), and
    # each would otherwise wait on the bus, dab after dab
    copy = scratch + 6 * cells + 2 * C * region_plane + C * (last_row + 1)
    copy += tl.program_id(0) * words
    host_words = floats.to(tl.pointer_type(tl.int32), bitcast=True)
    copy_words = copy.to(tl.pointer_type(tl.int32), bitcast=True)  # (bits as they are)
    for first in range(0, words, 4 * BLOCK):
        spot = first + tl.arange(0, 4 * BLOCK)
        word = tl.load(host_words + spot, mask=spot < words)
        tl.store(copy_words + spot, word, mask=spot < words)
    floats = copy
    _ramps(
        ramp, drift, omega, band_hz, constants, start_phase, start_first, start_c, start_b,
        start_t, table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
        region_width, region_plane, band0, n_bands, frame0, n_frames, C, CARRY, BLOCK,
    )  # fmt: skip
    tl.debug_barrier()
    high_at = 2 * n_dabs
    dest_at = 4 * n_dabs
    rows_at = dest_at + n_dabs * W
    u = floats + rows_at + n_dabs * H
    v = u + n_dabs * W
    peaks = v + n_dabs * H
    integers = (peaks + n_dabs).to(tl.pointer_type(tl.int32), bitcast=True)
    column_maps = integers + 2 * n_dabs
    row_maps = column_maps + 2 * n_dabs * columns
    region_rows = row_maps + 2 * n_dabs * rows
    region_columns = region_rows + n_dabs * H
    in_rows = region_columns + n_dabs * W
    in_columns = in_rows + n_dabs * H
    for k in range(n_dabs):
        row0 = tl.load(integers + k)
        column0 = tl.load(integers + n_dabs + k)
        shift_t = tl.load(floats + 2 * k)
        shift_b = tl.load(floats + 2 * k + 1)
        high_t = tl.load(floats + high_at + 2 * k)
        high_b = tl.load(floats + high_at + 2 * k + 1)
        peak = tl.load(peaks + k)
        for first in range(0, window, BLOCK):  # pass 1: plan, gather, carry, sum
            spot = first + tl.arange(0, BLOCK)
            inside = spot < window
            channel = tl.program_id(0) + spot * 0
            cell = channel * window + spot
            held_channel = channel.to(tl.int64) * plane  # (a long file's channels are far apart)
            y = spot // W
            x = spot % W
            weight = _weight(u + k * W + x, v + k * H + y, peak, hardness, span, hard, inside)
            dest_t = tl.load(floats + dest_at + k * W + x, mask=inside, other=0.0)
            dest_b = tl.load(floats + rows_at + k * H + y, mask=inside, other=0.0)
            source_t = tl.minimum(tl.maximum(dest_t - shift_t * weight, 0.0), high_t)
            source_b = tl.minimum(tl.maximum(dest_b - shift_b * weight, 0.0), high_b)
            low_t = tl.minimum(tl.floor(source_t), high_t - 1.0)
            low_b = tl.minimum(tl.floor(source_b), high_b - 1.0)
            frac_t = source_t - low_t
            frac_b = source_b - low_b
            at_t = k * columns + low_t.to(tl.int32)
            at_b = k * rows + low_b.to(tl.int32)
            magnitude = tl.zeros((BLOCK,), tl.float32)
            real = tl.zeros((BLOCK,), tl.float32)
            imag = tl.zeros((BLOCK,), tl.float32)
            real_shift = tl.zeros((BLOCK,), tl.float32)
            imag_shift = tl.zeros((BLOCK,), tl.float32)
            for tap in tl.static_range(4):  # (db, dt): (0, 0), (0, 1), (1, 0), (1, 1)
                region_row = tl.load(row_maps + at_b + tap // 2, mask=inside, other=0)
                held_row = tl.load(row_maps + n_dabs * rows + at_b + tap // 2, mask=inside,
                                   other=0)  # fmt: skip
                region_column = tl.load(column_maps + at_t + tap % 2, mask=inside, other=0)
                held_column = tl.load(column_maps + n_dabs * columns + at_t + tap % 2,
                                      mask=inside, other=0)  # fmt: skip
                region = region_row * region_width + region_column
                place = (held_row * row_length + held_column).to(tl.int64)
                weight_t = frac_t if tap % 2 == 1 else 1.0 - frac_t
                weight_b = frac_b if tap // 2 == 1 else 1.0 - frac_b
                tap_weight = weight_b * weight_t
                value = tl.load(held + held_channel + place, mask=inside, other=0.0,
                                cache_modifier=".cg")  # fmt: skip
                phase = tl.load(held_phase + held_channel + place, mask=inside, other=0.0,
                                cache_modifier=".cg")  # fmt: skip
                magnitude += value * tap_weight
                deviation = phase - tl.load(ramp + region, mask=inside, other=0.0)
                if CARRY:  # by the measured drift over the columns moved
                    moved_by = dest_t - (low_t + (tap % 2))
                    theta = deviation + tl.load(drift + region, mask=inside,
                                                other=0.0) * moved_by  # fmt: skip
                    real += tap_weight * tl.cos(theta)
                    imag += tap_weight * tl.sin(theta)
                if MOVE:  # by the row's advance over the frames moved
                    advance = tl.load(omega + tl.minimum(region_row, last_row), mask=inside,
                                      other=0.0)  # fmt: skip
                    theta = deviation + advance * (source_t - dest_t)
                    if CARRY:
                        real_shift += tap_weight * tl.cos(theta)
                        imag_shift += tap_weight * tl.sin(theta)
                    else:
                        real += tap_weight * tl.cos(theta)
                        imag += tap_weight * tl.sin(theta)
            here = (tl.load(region_rows + k * H + y, mask=inside, other=0) * region_width
                    + tl.load(region_columns + k * W + x, mask=inside, other=0))  # fmt: skip
            ramp_here = tl.load(ramp + here, mask=inside, other=0.0)
            moved = _atan2(imag, real) + ramp_here
            tl.store(scratch + cell, magnitude, mask=inside)
            tl.store(scratch + cells + cell, moved, mask=inside)
            if AUTO:
                shifted = _atan2(imag_shift, real_shift) + ramp_here
                tl.store(scratch + 2 * cells + cell, shifted, mask=inside)
                within = inside & (tl.load(in_rows + k * H + y, mask=inside, other=0) != 0)
                within = within & (tl.load(in_columns + k * W + x, mask=inside, other=0) != 0)
                here_row = here // region_width
                here_column = here - here_row * region_width
                was = _from_kept(
                    start, start_first, start_c, start_b, start_t,
                    table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
                    channel, channel, here_row, here_column, within,
                )  # fmt: skip
                term = was * magnitude
                was_phase = _from_kept(
                    start_phase, start_first, start_c, start_b, start_t,
                    table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
                    C + channel, channel, here_row, here_column, inside,
                )  # fmt: skip
                tl.store(scratch + 3 * cells + cell, term, mask=inside)
                tl.store(scratch + 4 * cells + cell, tl.cos(was_phase - moved) * term, mask=inside)
                tl.store(scratch + 5 * cells + cell, tl.cos(was_phase - shifted) * term,
                         mask=inside)  # fmt: skip
        tl.debug_barrier()
        for first in range(0, window, BLOCK):  # pass 2: decide, blend into the window
            spot = first + tl.arange(0, BLOCK)
            channel = tl.program_id(0) + spot * 0
            cell = channel * window + spot
            column = spot % W
            weight = _weight(u + k * W + column, v + k * H + spot // W, peak, hardness, span,
                             hard, spot < window)  # fmt: skip
            touched = (spot < window) & (weight > 0.0)
            magnitude = tl.load(scratch + cell, mask=touched, other=0.0, cache_modifier=".cg")
            moved = tl.load(scratch + cells + cell, mask=touched, other=0.0, cache_modifier=".cg")
            if AUTO:
                total = tl.zeros((BLOCK,), tl.float32)
                along = tl.zeros((BLOCK,), tl.float32)
                against = tl.zeros((BLOCK,), tl.float32)
                for side in tl.static_range(2 * CONTEXT + 1):
                    near = touched & (column + (side - CONTEXT) >= 0)
                    near = near & (column + (side - CONTEXT) < W)
                    at = cell + (side - CONTEXT)
                    total += tl.load(scratch + 3 * cells + at, mask=near, other=0.0,
                                     cache_modifier=".cg")  # fmt: skip
                    along += tl.load(scratch + 4 * cells + at, mask=near, other=0.0,
                                     cache_modifier=".cg")  # fmt: skip
                    against += tl.load(scratch + 5 * cells + at, mask=near, other=0.0,
                                       cache_modifier=".cg")  # fmt: skip
                total = tl.maximum(total, 1e-30)
                along = along / total
                against = against / total
                sure = tl.minimum(tl.maximum((along - low) * along_scale, 0.0), 1.0)
                sure = sure * tl.minimum(tl.maximum((along - against) * margin_scale, 0.0), 1.0)
                shifted = tl.load(scratch + 2 * cells + cell, mask=touched, other=0.0,
                                  cache_modifier=".cg")  # fmt: skip
                moved = _wrap(moved - shifted) * sure + shifted
            phase = _wrap(moved)
            place = (channel.to(tl.int64) * plane + (row0 + spot // W) * row_length + column0
                     + column)  # fmt: skip
            old = tl.load(held + place, mask=touched, other=0.0, cache_modifier=".cg")
            old_phase = tl.load(held_phase + place, mask=touched, other=0.0,
                                cache_modifier=".cg")  # fmt: skip
            old_real = tl.cos(old_phase) * old
            old_imag = tl.sin(old_phase) * old
            real = (tl.cos(phase) * magnitude - old_real) * weight + old_real
            imag = (tl.sin(phase) * magnitude - old_imag) * weight + old_imag
            tl.store(held + place, tl.sqrt(real * real + imag * imag), mask=touched)
            tl.store(held_phase + place, _atan2(imag, real), mask=touched)
        tl.debug_barrier()


def _plain_weight(along, down, peak, hardness, span, hard, inside):
    """A window cell's weight, from its column's and its row's distance from the dab's centre in
    radii (``along`` and ``down``, pointers; 2 past the dab's box) and the dab's ``peak``:
    :func:`~spectropaint.brushes.mask_compiled.weights`' arithmetic, bit for bit (the square
    root rounded as IEEE's, :func:`.triton_math._plain_falloff`); 0 where not ``inside``."""
    across = tl.load(down, mask=inside, other=2.0)
    at = tl.load(along, mask=inside, other=2.0)
    return _falloff(tl.sqrt_rn(across * across + at * at), hardness, span, hard) * peak


def _plain_ramps(
    ramp, drift, omega, band_hz, constants, phase, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
    region_width, region_plane, band0, n_bands, frame0, n_frames, C: tl.constexpr,
    CARRY: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    """What :func:`.warp.warp_prepare` computes of the region, for the program's channel: the
    steady-tone phase ``2 pi frac(hop f t / sr)`` of each cell's band and frame (reflected as the
    region's values are: the edge cell repeated, as :func:`~spectropaint.brushes.dab.reflect_index`
    reflects) in float64 as torch does (``constants`` read as float64 from the device: a Triton
    float argument is float32), rounded to float32; each row's advance per frame; and (``CARRY``)
    the channel's drift, wrapped as the kernel wraps phases (``floor(x + 1/2)``: a half turn
    exactly may round the other way than :func:`.phase.wrap`), from the phases as the stroke
    began (``phase`` to ``tile_frame0``), the column before the region's first read too."""
    channel = tl.program_id(0)
    hop_over_rate = tl.load(constants)
    turn = tl.load(constants + 1)
    advance_scale = tl.load(constants + 2)
    for start in range(0, region_plane, BLOCK):
        spot = start + tl.arange(0, BLOCK)
        inside = spot < region_plane
        b = spot // region_width
        t = spot - b * region_width
        row = ((band0 + b) % (2 * n_bands) + 2 * n_bands) % (2 * n_bands)  # (either sign)
        past = row // n_bands  # 1 in the reflection: the row counted back from the edge
        row = row * (1 - 2 * past) + past * (2 * n_bands - 1)
        frame = ((frame0 + t) % (2 * n_frames) + 2 * n_frames) % (2 * n_frames)
        frame = tl.minimum(frame, 2 * n_frames - 1 - frame)
        hz = tl.load(band_hz + row, mask=inside, other=0.0).to(tl.float64)
        rate = hz * hop_over_rate
        cycles = rate * frame.to(tl.float64)
        tl.store(ramp + spot, ((cycles - tl.floor(cycles)) * turn).to(tl.float32), mask=inside)
        tl.store(omega + b, (advance_scale * hz).to(tl.float32), mask=inside & (t == 0))
        if CARRY:
            centre = ((rate - tl.floor(rate)) * turn).to(tl.float32)  # the advance in a frame
            planes = channel + spot * 0  # (the channel as a vector, as the helper takes it)
            later = _from_kept(
                phase, first, plane_stride, row_stride, column_stride, table, table_columns,
                tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0, C + planes, planes, b,
                t, inside,
            )  # fmt: skip
            earlier = _from_kept(
                phase, first, plane_stride, row_stride, column_stride, table, table_columns,
                tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0, C + planes, planes, b,
                t - 1, inside,
            )  # fmt: skip
            tl.store(drift + spot, _wrap((later - earlier) - centre), mask=inside)


tl = _wrap = _atan2 = _from_kept = _ramps = _weight = _falloff = None  # (bound by _kernel)
