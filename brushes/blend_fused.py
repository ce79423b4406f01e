""":func:`.blend.blend`'s complex crossfade in one GPU launch (Triton): what some twenty torch
operations compute (the cosines and sines of both phases, the products, the mix, the magnitude, the
arctangent, the two selections).

On CUDA each of those operations costs the host a launch: on the H200's host some 10 us each, so
the blend of a clone or pen group took about 0.2 ms of host time whatever its size; one launch
takes some 20 us. Each cell takes the same arithmetic as :func:`.blend._crossfade`, without fused
multiply-adds (torch rounds each product), where its weight is above 0, and keeps its values
exactly elsewhere (:mod:`.kernels.triton_math`'s ``crossfade``, which the pen's and the clone's
kernels blend through too); the arctangent is :mod:`.kernels.triton_math`'s (within 2e-7 of the true
angle), so the result equals torch's to float rounding (``tests/test_blend_kernels.py``). The CPU's
counterpart is :mod:`.blend_compiled`.

:func:`blend_into` writes a group's blend straight into the document's cells, either blend (a
magnitude-only kernel's is torch's ``lerp``, and writes no phase), and only the cells the group's
dabs hold: one launch for what the blend, the selection of those cells and the document's write
took in some ten operations (on the H200, clone and pen events 7 to 14 % shorter, the others
unchanged).

Used on CUDA where Triton imports, unless :data:`~.kernels.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import torch

from spectropaint.brushes.kernels import triton_math

BLOCK = 512
"""Cells each program blends."""


def available(device: torch.device) -> bool:
    """Whether complex blends on ``device`` go through the fused kernel."""
    return triton_math.wanted(device)


def crossfade(base: torch.Tensor, magnitude: torch.Tensor, phase: torch.Tensor, weight):
    """What :func:`.blend.blend` gives for a kernel that changes the phase: ``base``
    ``[2, ..., B, T]`` moved towards ``magnitude`` and ``phase`` ``[..., B, T]`` by ``weight``
    (``[B, T]``, or ``[P, 1, B, T]`` for a stack of ``P`` blocks' values ``[P, C, B, T]``), as new
    tensors.

    The leading dimensions of each tensor are read as one (each a whole number of the next's
    strides, as slices of the values read for a group are)."""
    out = torch.empty((2, *magnitude.shape), device=magnitude.device)
    _launch(base, magnitude, phase, weight, out[0], out[1], None, keeps_phase=False)
    return out[0], out[1]


def blend_into(base, magnitude, phase, weight, destination, *, owner=None, keeps_phase: bool):
    """:func:`.blend.blend` written straight into ``destination`` (the document's magnitude and
    phase and the index of the group's box's first cell in them, as
    :meth:`~spectropaint.transforms.document.Document.cells` gives them: the box's cells are
    read through the tensors' strides from there, with no view made), in one launch: where ``owner``
    (``[B, T]``, bool) is given, only the cells it marks are written (the others keep what they
    hold); a magnitude-only kernel's blend (``keeps_phase``: the linear blend of magnitudes,
    :func:`torch.lerp`'s arithmetic) writes no phase, which the stroke leaves as it was. ``weight``
    is ``[B, T]``."""
    out_magnitude, out_phase, first = destination
    _launch(base, magnitude, phase, weight, out_magnitude, out_phase, owner,
            keeps_phase=keeps_phase, first=first)  # fmt: skip


def _launch(base, magnitude, phase, weight, out_magnitude, out_phase, owner, *, keeps_phase,
            first=0):  # fmt: skip
    rows, width = magnitude.shape[-2:]
    planes = magnitude.numel() // (rows * width)
    group = planes if weight.dim() == 2 else planes // weight.shape[0]  # planes per weight
    strides = [
        (tensor.stride(-3) if tensor.dim() > 2 else 0, tensor.stride(-2), tensor.stride(-1))
        for tensor in (base, magnitude, phase, weight, out_magnitude)
    ]  # (a weight's plane stride: between blocks' planes)
    strides[3] = (weight.stride(0) if weight.dim() > 2 else 0, *strides[3][1:])
    if owner is None:  # every cell written: a placeholder read through strides of 0
        owner, owner_strides = triton_math.one_cell(magnitude.device, torch.bool, True), (0, 0)
    else:
        owner_strides = owner.stride()
    cells = planes * rows * width
    triton_math.launch(
        _kernel(), (-(-cells // BLOCK),),
        base, magnitude, phase, weight, owner, out_magnitude, out_phase, base.stride(0),
        *strides[0], *strides[1], *strides[2], *strides[3], *owner_strides, first, *strides[4], cells,
        rows, width, group, int(keeps_phase), BLOCK=BLOCK, enable_fp_fusion=False,
    )  # fmt: skip


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``) with its helper; no
    argument specialised on (:func:`~.kernels.triton_math.jit_with`'s ``general``)."""
    return triton_math.jit_with(_blend_cells, "crossfade", "lerp", general=True)


def _blend_cells(
    base, magnitude, phase, weight, owner, out_magnitude, out_phase, part, base_plane, base_row,
    base_column, magnitude_plane, magnitude_row, magnitude_column, phase_plane, phase_row,
    phase_column, weight_group, weight_row, weight_column, owner_row, owner_column, out_first,
    out_plane, out_row, out_column, cells, rows, width, group, keeps_phase, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of ``out_magnitude`` and ``out_phase`` ``[planes, rows,
    width]`` (through their strides, from ``out_first``) from the same cells of ``base`` (magnitudes, then ``part``
    further on the phases), ``magnitude`` and ``phase``, each read through its (plane, row, column)
    strides, ``weight``'s cell of the same row and column in its ``plane // group``-th plane, and
    ``owner``'s (which cells are written). ``keeps_phase``: the magnitudes blended linearly, no
    phase written."""
    cell = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < cells
    column = cell % width
    row = (cell // width) % rows
    plane = cell // (width * rows)
    old_magnitude = tl.load(base + plane * base_plane + row * base_row + column * base_column,
                            mask=inside, other=0.0)  # fmt: skip
    old_phase = tl.load(base + part + plane * base_plane + row * base_row + column * base_column,
                        mask=inside, other=0.0)  # fmt: skip
    new_magnitude = tl.load(
        magnitude + plane * magnitude_plane + row * magnitude_row + column * magnitude_column,
        mask=inside, other=0.0,
    )  # fmt: skip
    new_phase = tl.load(phase + plane * phase_plane + row * phase_row + column * phase_column,
                        mask=inside, other=0.0)  # fmt: skip
    amount = tl.load(
        weight + (plane // group) * weight_group + row * weight_row + column * weight_column,
        mask=inside, other=0.0,
    )  # fmt: skip
    written = inside & (tl.load(owner + row * owner_row + column * owner_column, mask=inside,
                                other=0) != 0)  # fmt: skip
    at = out_first + plane * out_plane + row * out_row + column * out_column
    if keeps_phase != 0:
        tl.store(out_magnitude + at, _lerp(old_magnitude, new_magnitude, amount), mask=written)
    else:
        blended, turned = _crossfade(old_magnitude, old_phase, new_magnitude, new_phase, amount)
        tl.store(out_magnitude + at, blended, mask=written)
        tl.store(out_phase + at, turned, mask=written)


tl = _crossfade = _lerp = None  # (bound by _kernel)
