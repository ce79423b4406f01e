""":func:`.blend.blend`'s complex crossfade compiled for the CPU (Numba): one loop over the cells
instead of some fifteen operations.

A clone or pen group's blend on a CPU is op-bound at small sizes and pays for the sines, cosines and
arctangent of every cell of its box at large ones: 134 us on a radius-32 dab's box in torch, 36 us
here. Each cell takes :mod:`.kernels.compiled_math`'s crossfade (the same arithmetic as
:func:`.blend._crossfade`, Cephes' sine, cosine and arctangent) where its weight is above 0, and
keeps its values exactly elsewhere; the loop has no branches, so the compiler vectorises it. The
result equals torch's to float rounding (``tests/test_blend_kernels.py``).

Used on the CPU where Numba imports, unless :data:`~.kernels.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from spectropaint.brushes.kernels import compiled_math


def available(device: torch.device) -> bool:
    """Whether blends on ``device`` go through the compiled loop."""
    return compiled_math.wanted(device) and _kernel() is not None


def crossfade(base: torch.Tensor, magnitude: torch.Tensor, phase: torch.Tensor, weight):
    """What :func:`.blend.blend` gives for a kernel that changes the phase: ``base`` ``[2, ...]``
    moved towards ``magnitude`` and ``phase`` (``[...]``) by ``weight`` (broadcast to them), as
    new CPU tensors."""
    shape = magnitude.shape
    arrays = [base[0], base[1], magnitude, phase, weight.expand(shape)]
    flat = [np.ascontiguousarray(array.numpy()).reshape(-1) for array in arrays]
    out = np.empty((2, flat[0].size), dtype=np.float32)
    _kernel()(*flat, out)
    result = torch.from_numpy(out)
    return result[0].view(shape), result[1].view(shape)


@functools.cache
def _kernel():
    """The compiled loop, or None where Numba does not import."""
    return compiled_math.compile_with(_blend_cells, "crossfade", nogil=True)


def _blend_cells(old_magnitude, old_phase, magnitude, phase, weight, out):
    """Each cell moved towards the new value by its weight where that is above 0 (selected, not
    branched on), else its old value: into ``out`` ``[2, N]``."""
    zero = np.float32(0.0)
    for cell in range(weight.shape[0]):
        was, was_phase, amount = old_magnitude[cell], old_phase[cell], weight[cell]
        moved, moved_phase = _crossfade(was, was_phase, magnitude[cell], phase[cell], amount)
        touched = amount > zero
        out[0, cell] = moved if touched else was
        out[1, cell] = moved_phase if touched else was_phase


_crossfade = None  # (bound by _kernel)
