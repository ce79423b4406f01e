"""Warp's dabs of one group in one GPU launch (Triton): what :meth:`.warp.WarpPlan.dab` and
:class:`~spectropaint.brushes.blend.WindowBlend` compute dab after dab, in one program.

On CUDA a planned group's dabs otherwise cost some fifty kernel launches each (gather, phases,
their cosines and sines, bilinear sums, atan2, the continuation's alignment, the phase blend, the
crossfade into the window): a warp event at radius 8 was 4 ms on an H200, nearly all of it
launches. Here one program (one block of threads) takes the group's dabs in order, each in two
passes over its window separated by a barrier, so that a dab reads what the previous one left:

1. every window cell gathers its four neighbours' magnitude and phase from the values held,
   carries their phases in each mode by the plan's offsets, and sums the bilinear phasors into a
   magnitude and one moved phase per mode (and, for ``auto``, the terms of the continuation's
   alignment), kept in a scratch buffer;
2. every cell sums those terms over :data:`~.phase.CONTEXT_FRAMES` columns either side, decides
   how surely the destination continues (``auto``), blends the phases, and crossfades the result
   into the window through the dab's weight, leaving cells of weight 0 untouched.

The arithmetic is the plan's, cell by cell; only the order of a few float32 sums and the
transcendental routines differ, so a group's result equals the torch path to float rounding
(``tests/test_warp_fused.py``). The plan's tensors (which neighbours, their weights, the phase
each is carried by) are computed as before, by :class:`~.warp.WarpPlan`.

Used on CUDA where Triton imports (it comes with torch's CUDA builds on Linux);
``SPECTROPAINT_FUSED_WARP=0`` turns it off. The tests run it through Triton's interpreter on the
CPU (``TRITON_INTERPRET=1`` before Triton is first imported).
"""

from __future__ import annotations

import functools
import os

import numpy as np
import torch

from spectropaint.brushes.kernels.phase import ALIGNMENT, CONTEXT_FRAMES, MARGIN
from spectropaint.transforms.torch_device import to_device

FUSED_ENV = "SPECTROPAINT_FUSED_WARP"
BLOCK = 256
"""Window cells each pass handles at once (the program loops over the window in such chunks)."""
INTERPRETED = False
"""Set by the tests (with ``TRITON_INTERPRET=1``) to run the kernel on CPU tensors through
Triton's interpreter."""


def available(device: torch.device) -> bool:
    """Whether a group's dabs on ``device`` go through the fused kernel."""
    if os.environ.get(FUSED_ENV, "").strip() == "0":
        return False
    return (device.type == "cuda" or INTERPRETED) and _triton() is not None


@functools.cache
def _triton():
    """Triton, imported once (about a second; only where a group is about to use it), or None."""
    try:
        import triton
    except ImportError:
        return None
    return triton


def apply(
    plan,
    current: torch.Tensor,
    masks: torch.Tensor,
    first_rows: np.ndarray,
    first_columns: np.ndarray,
) -> None:
    """Every dab of ``plan`` (a :class:`~.warp.WarpPlan` of ``K`` dabs on ``[C, H, W]`` windows)
    applied in order to ``current`` ``[2, C, R, S]`` (contiguous), in place: dab ``k``'s window
    is ``current[:, :, first_rows[k] : + H, first_columns[k] : + W]``, its weight ``masks[k]``
    ``[H, W]``."""
    n_dabs, height, width = masks.shape
    channels = current.shape[1]
    corners = to_device(np.stack((first_rows, first_columns)).astype(np.int32), current.device)
    scratch = torch.empty((6 if plan.auto else 2, channels, height, width), device=current.device)
    low, high = ALIGNMENT
    start = plan.stacked_start if plan.auto else scratch
    tensors = (plan.stacked_index, plan.stacked_weights, plan.stacked_ramp_source,
               plan.stacked_offsets, plan.stacked_ramp, start, masks)  # fmt: skip
    plane, row_length = current.shape[-2] * current.shape[-1], current.shape[-1]
    _kernel()[(1,)](
        current, *(tensor.contiguous() for tensor in tensors), corners, scratch, n_dabs, plane,
        row_length, low, 1.0 / (high - low), 1.0 / MARGIN, height, width,
        C=channels, AUTO=plan.auto, CONTEXT=CONTEXT_FRAMES, BLOCK=BLOCK,
    )  # fmt: skip


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``) with its helpers."""
    global tl, _wrap, _atan2
    triton = _triton()
    import triton.language as tl

    _wrap, _atan2 = triton.jit(_plain_wrap), triton.jit(_plain_atan2)
    return triton.jit(_warp_dabs)


def _warp_dabs(
    held, index, weights, ramp_source, offsets, ramp, start, masks, corners, scratch,
    n_dabs, plane, row_length, low, along_scale, margin_scale, H, W,
    C: tl.constexpr, AUTO: tl.constexpr,
    CONTEXT: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel (see the module's docstring). ``held`` ``[2, C, plane]``: magnitudes, then
    phases; ``index``, ``weights``, ``ramp_source`` ``[K, 4, H, W]``; ``offsets`` ``[K, M, C, 4,
    H, W]`` (``M``: 2 modes, continue then shift, where ``AUTO``, else 1); ``ramp``, ``masks``
    ``[K, H, W]``; ``start`` ``[K, 2, C, H, W]``; ``corners`` ``[2, K]``: each window's first row
    and column; ``scratch`` ``[6, C, H, W]``: magnitude, the moved phase of each mode, the
    continuation's weight and its two alignments."""
    M = 2 if AUTO else 1
    window = H * W
    cells = C * window
    for k in range(n_dabs):
        row0 = tl.load(corners + k)
        column0 = tl.load(corners + n_dabs + k)
        for first in range(0, cells, BLOCK):  # pass 1: gather, carry, sum
            cell = first + tl.arange(0, BLOCK)
            inside = cell < cells
            channel = cell // window
            spot = cell % window
            magnitude = tl.zeros((BLOCK,), tl.float32)
            real = tl.zeros((BLOCK,), tl.float32)
            imag = tl.zeros((BLOCK,), tl.float32)
            real_shift = tl.zeros((BLOCK,), tl.float32)
            imag_shift = tl.zeros((BLOCK,), tl.float32)
            for tap in tl.static_range(4):
                at = (k * 4 + tap) * window + spot
                place = tl.load(index + at, mask=inside, other=0).to(tl.int64)
                weight = tl.load(weights + at, mask=inside, other=0.0)
                value = tl.load(held + channel * plane + place, mask=inside, other=0.0,
                                cache_modifier=".cg")  # fmt: skip
                phase = tl.load(held + (C + channel) * plane + place, mask=inside, other=0.0,
                                cache_modifier=".cg")  # fmt: skip
                magnitude += value * weight
                deviation = phase - tl.load(ramp_source + at, mask=inside, other=0.0)
                carry = ((k * M * C + channel) * 4 + tap) * window + spot
                theta = deviation + tl.load(offsets + carry, mask=inside, other=0.0)
                real += weight * tl.cos(theta)
                imag += weight * tl.sin(theta)
                if AUTO:
                    carry = (((k * M + 1) * C + channel) * 4 + tap) * window + spot
                    theta = deviation + tl.load(offsets + carry, mask=inside, other=0.0)
                    real_shift += weight * tl.cos(theta)
                    imag_shift += weight * tl.sin(theta)
            ramp_here = tl.load(ramp + k * window + spot, mask=inside, other=0.0)
            moved = _atan2(imag, real) + ramp_here
            tl.store(scratch + cell, magnitude, mask=inside)
            tl.store(scratch + cells + cell, moved, mask=inside)
            if AUTO:
                shifted = _atan2(imag_shift, real_shift) + ramp_here
                tl.store(scratch + 2 * cells + cell, shifted, mask=inside)
                was = (k * 2 * C + channel) * window + spot
                term = tl.load(start + was, mask=inside, other=0.0) * magnitude
                was_phase = tl.load(start + was + C * window, mask=inside, other=0.0)
                tl.store(scratch + 3 * cells + cell, term, mask=inside)
                tl.store(scratch + 4 * cells + cell, tl.cos(was_phase - moved) * term, mask=inside)
                tl.store(scratch + 5 * cells + cell, tl.cos(was_phase - shifted) * term,
                         mask=inside)  # fmt: skip
        tl.debug_barrier()
        for first in range(0, cells, BLOCK):  # pass 2: decide, blend into the window
            cell = first + tl.arange(0, BLOCK)
            channel = cell // window
            spot = cell % window
            column = spot % W
            weight = tl.load(masks + k * window + spot, mask=cell < cells, other=0.0)
            touched = (cell < cells) & (weight > 0.0)
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
            place = channel * plane + (row0 + spot // W) * row_length + column0 + column
            old = tl.load(held + place, mask=touched, other=0.0, cache_modifier=".cg")
            old_phase = tl.load(held + C * plane + place, mask=touched, other=0.0,
                                cache_modifier=".cg")  # fmt: skip
            old_real = tl.cos(old_phase) * old
            old_imag = tl.sin(old_phase) * old
            real = (tl.cos(phase) * magnitude - old_real) * weight + old_real
            imag = (tl.sin(phase) * magnitude - old_imag) * weight + old_imag
            tl.store(held + place, tl.sqrt(real * real + imag * imag), mask=touched)
            tl.store(held + C * plane + place, _atan2(imag, real), mask=touched)
        tl.debug_barrier()


def _plain_wrap(angle):
    """Angles less the nearest whole number of turns: ``[-pi, pi]``."""
    return angle - tl.floor(angle * 0.15915494309189535 + 0.5) * 6.283185307179586  # 1 / 2 pi, 2 pi


def _plain_atan2(y, x):
    """``atan2(y, x)``: the octant reduced to ``[0, 1]``, then Cephes' ``atanf`` (its argument
    reduced once more past ``tan(pi / 8)``), within 2e-7 of the true angle."""
    ax = tl.abs(x)
    ay = tl.abs(y)
    big = tl.maximum(ax, ay)
    small = tl.minimum(ax, ay)
    ratio = tl.where(big > 0.0, small / tl.where(big > 0.0, big, 1.0), 0.0)
    reduced = ratio > 0.4142135623730950
    t = tl.where(reduced, (ratio - 1.0) / (ratio + 1.0), ratio)
    z = t * t
    angle = (
        (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
         - 3.33329491539e-1) * z * t + t
    )  # fmt: skip
    angle = tl.where(reduced, angle + 0.7853981633974483, angle)  # pi / 4
    angle = tl.where(ay > ax, 1.5707963267948966 - angle, angle)
    angle = tl.where(x < 0.0, 3.141592653589793 - angle, angle)
    return tl.where(y < 0.0, -angle, angle)


tl = _wrap = _atan2 = None  # (bound by _kernel)
