"""The clone's kernel compiled for the CPU (Numba): :func:`.clone.clone`'s result in one call.

On a CPU the clone's torch path is some eighty operations a dab (the phase ramps, the carried
advance, the continuation's sums, the wraps, the selections), 200 microseconds at radius 32 where
its arithmetic takes a fifth of that. Here each row of the region is computed in loops over its
cells, in three passes: the source's shifted phase, the phase carried forward by its measured
advance and, for ``auto``, the terms of the continuation's alignment over the whole row; then for
each cell of the box the alignment summed over :data:`~.phase.CONTEXT_FRAMES` frames either
side, the decision between the two phases and the copy; then the cells whose source lies past the
grid keep their own values. The ramps are computed in float64 per row as torch's path does, the
cells in float32, in its order; the cosines are :mod:`.compiled_math`'s. The result equals
torch's to float rounding (``tests/test_clone_kernels.py``).

Used on the CPU where Numba imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``;
compiled at its first use (some seconds), then loaded from Numba's cache on disk.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from spectropaint.brushes.kernels import compiled_math
from spectropaint.brushes.kernels.phase import ALIGNMENT, CONTEXT_FRAMES, MARGIN

WIDE_OFFSET = 2048
"""Frames of offset beyond which the carried advance is multiplied out in float64 (as torch's
path does, to keep the product exact to float32 rounding)."""


def available(device: torch.device) -> bool:
    """Whether the clone's dabs on ``device`` go through the compiled kernel (the first call
    imports Numba)."""
    return compiled_math.wanted(device) and _kernel() is not None


def clone(magnitude: torch.Tensor, phase: torch.Tensor, params, context):
    """What :func:`.clone.clone` gives for the region ``magnitude``, ``phase`` ``[C, Bm, Tm]``
    (CPU tensors), as new tensors ``[C, B, T]`` on the box."""
    source = context.source
    rows, columns = context.inner
    channels, _, _ = magnitude.shape
    destination_hz = context.bin_hz[rows]
    width = columns.stop - columns.start
    out = np.empty((2, channels, len(destination_hz), width), dtype=np.float32)
    valid = source.valid
    low, top = ALIGNMENT
    offset = params.offset_frames
    arrays = [
        magnitude[:, rows],
        phase[:, rows],
        source.magnitude,
        source.phase,
        torch.ones((1, 1), dtype=torch.bool) if valid is None else valid,
        destination_hz.to(torch.float64),
        source.bin_hz.to(torch.float64),
        context.frames.to(torch.float64),
    ]  # each C-contiguous: one compiled variant serves every dab (a new one takes seconds)
    arrays = [np.ascontiguousarray(array.numpy()) for array in arrays]
    _kernel()(
        *arrays[:5],
        valid is not None,
        *arrays[5:],
        context.hop / context.sample_rate,
        float(offset),
        abs(offset) > WIDE_OFFSET,
        params.phase != "shift",
        params.phase != "continue",
        columns.start,
        out,
        np.float32(low),
        np.float32(top - low),
        np.float32(MARGIN),
    )
    result = torch.from_numpy(out)
    return result[0], result[1]


@functools.cache
def _kernel():
    """The compiled kernel, or None where Numba does not import."""
    return compiled_math.compile_with(
        _clone_rows, "sincos", "wrap", "around", "clamp01", nogil=True
    )


def _clone_rows(
    magnitude, phase, source_magnitude, source_phase, valid, has_valid, destination_hz,
    source_hz, frames, frame_seconds, offset, wide, carry, move, column0, out, low, span, margin,
):  # fmt: skip
    """The kernel (see the module's docstring). ``magnitude``, ``phase`` ``[C, B, Tm]``: the
    region's rows; ``source_*`` ``[C, B, Tm + 1]`` with the frame before in front; ``valid``
    ``[B, Tm]`` (read where ``has_valid``); ``frame_seconds``: the hop over the sample rate;
    ``carry`` and ``move``: whether the ``continue`` and the ``shift`` modes are used (both:
    ``auto``); ``out`` ``[2, C, B, T]``: the box's columns from ``column0``; ``low``, ``span``
    and ``margin``: :data:`~.phase.ALIGNMENT`'s lower value and its range, :data:`~.phase.MARGIN`."""
    channels, n_rows, n_frames = magnitude.shape
    width = out.shape[3]
    pad = CONTEXT_FRAMES
    turn = 2 * np.pi
    auto = carry and move
    one, zero = np.float32(1.0), np.float32(0.0)
    ramp = np.empty(n_frames, dtype=np.float32)
    # per cell of a row, padded with zeros either side for the sums over frames: the shifted
    # phase, the continued one, the continuation's weight and its terms along and against, the
    # carried advance
    work = np.zeros((6, n_frames + 2 * pad), dtype=np.float32)
    for b in range(n_rows):
        shift_rate = (destination_hz[b] - source_hz[b]) * frame_seconds
        for t in range(n_frames):
            cycles = shift_rate * frames[t]
            ramp[t] = np.float32((cycles - np.floor(cycles)) * turn)
        source_rate = source_hz[b] * frame_seconds
        cycles = source_rate * -offset
        centre = np.float32((cycles - np.floor(cycles)) * turn)
        cycles = source_rate * 1.0
        omega = np.float32((cycles - np.floor(cycles)) * turn)
        for c in range(channels):
            before = source_phase[c, b]
            if wide:
                for t in range(n_frames):
                    deviation = _wrap((before[t + 1] - before[t]) - omega)
                    carried = np.float64(deviation) * -offset
                    carried = np.float32(carried - np.rint(carried * (1.0 / turn)) * turn)
                    work[5, np.uintp(pad + t)] = carried
            else:
                for t in range(n_frames):
                    deviation = _wrap((before[t + 1] - before[t]) - omega)
                    work[5, np.uintp(pad + t)] = deviation * np.float32(-offset)
            for t in range(n_frames):
                at = np.uintp(pad + t)
                shifted = before[t + 1] + ramp[t]
                continued = (shifted + centre) + work[5, at]
                weight = magnitude[c, b, t] * source_magnitude[c, b, t + 1]
                work[0, at], work[1, at], work[2, at] = shifted, continued, weight
                work[3, at] = _sincos(phase[c, b, t] - continued)[1] * weight
                work[4, at] = _sincos(phase[c, b, t] - shifted)[1] * weight
            for x in range(width):
                at = np.uintp(pad + column0 + x)
                total = max(_around(work, 2, at), np.float32(1e-30))
                along, against = _around(work, 3, at) / total, _around(work, 4, at) / total
                sure = _clamp01((along - low) / span) * _clamp01((along - against) / margin)
                sure = sure if auto else (one if carry else zero)
                shifted, continued = work[0, at], work[1, at]
                chosen = _wrap(continued - shifted) * sure + shifted
                chosen = chosen if auto else (continued if carry else shifted)
                out[0, c, b, x] = source_magnitude[c, b, np.uintp(column0 + x + 1)]
                out[1, c, b, x] = _wrap(chosen)
            if has_valid:  # where the source lies past the grid, the cell keeps its values
                for x in range(width):
                    t = column0 + x
                    if not valid[b, t]:
                        out[0, c, b, x], out[1, c, b, x] = magnitude[c, b, t], phase[c, b, t]


_sincos = _wrap = _around = _clamp01 = None  # (bound by _kernel)
