"""Blending a kernel's result into the values it was computed from, through the dab's weight.

:func:`blend` computes a new tensor (a stamping brush's group, once); :class:`WindowBlend` does the
same arithmetic in place on a dragging brush's window, dab after dab, in buffers made once.
"""

from __future__ import annotations

import contextlib

import torch

from spectropaint.brushes import blend_compiled, blend_fused
from spectropaint.brushes.kernels import triton_math
from spectropaint.brushes.kernels.phase import ATAN2_BLOCK, atan2, constant
from spectropaint.brushes.kernels.select import select


def blend(
    base: torch.Tensor,
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    weight: torch.Tensor,
    *,
    keeps_phase: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``base`` (``[2, C, B, T]``) moved towards the kernel's result by ``weight`` ``[B, T]``.

    Magnitude-only kernels blend magnitude linearly and keep ``base``'s phase; the others blend the
    complex coefficients (a crossfade, as mixing the two sounds would), in real arithmetic (torch's
    complex ``polar``, ``abs`` and ``angle`` are several times slower on CPUs). Cells of weight 0
    keep ``base``'s values exactly. The complex blend is one compiled loop on the CPU
    (:mod:`.blend_compiled`) where Numba is installed, one launch on CUDA (:mod:`.blend_fused`)
    where Triton is.
    """
    if not keeps_phase:
        for fused in (blend_compiled, blend_fused):
            if fused.available(base.device):
                with contextlib.suppress(triton_math.Unavailable):  # (then torch's path)
                    return fused.crossfade(base, magnitude, phase, weight)
    old_magnitude, old_phase = base.unbind(0)
    touched = weight > constant(0.0, weight)
    if keeps_phase:
        return select(
            touched, torch.lerp(old_magnitude, magnitude, weight), old_magnitude
        ), old_phase
    trig = torch.empty((2, 2, *base.shape[1:]), device=base.device)
    parts = _trig_parts(trig)
    real, imag = _crossfade(
        torch.stack((old_phase, phase)), old_magnitude, magnitude, weight, parts
    ).unbind(0)
    return (
        select(touched, torch.add(real * real, imag * imag).sqrt_(), old_magnitude),
        select(touched, torch.atan2(imag, real), old_phase),
    )


def _trig_parts(trig: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Views of ``trig`` ``[2, 2, ...]`` ((cos, sin) x (old, new)) that :func:`_crossfade` works
    in: the cosines, the sines, the old values' two, the new values' two."""
    return *trig.unbind(0), *trig.unbind(1)


def _crossfade(
    phases: torch.Tensor,
    old_magnitude: torch.Tensor,
    magnitude: torch.Tensor,
    weight: torch.Tensor,
    trig: tuple[torch.Tensor, ...],
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """The real and imaginary parts ``[2, ...]`` of the old values (``phases[0]``,
    ``old_magnitude``) moved towards the new (``phases[1]``, ``magnitude``) by ``weight``:
    ``old + (new - old) * weight``, each part's cosines or sines of both phases computed at once
    in ``trig`` (:func:`_trig_parts`); into ``out`` where given."""
    cos, sin, old, new = trig
    torch.cos(phases, out=cos)
    torch.sin(phases, out=sin)
    old.mul_(old_magnitude)
    new.mul_(magnitude)
    return torch.sub(new, old, out=out).mul_(weight).add_(old)


class WindowBlend:
    """:func:`blend` of a complex-blending kernel's result into a window ``[2, C, H, W]`` of the
    values, in place, in buffers of its own: some dozen operations instead of thirty-odd (a
    dragging brush's dab at radius 8 is a few dozen, each some microseconds on a CPU).

    The same arithmetic as :func:`blend`, cell by cell, the old and new values' cosines, sines and
    products each computed in one operation for both; the phase by
    :func:`~.kernels.phase.atan2` on rows padded to a whole number of its blocks, so every cell's
    comes from the vector routine whatever the window's size (a planned warp's windows are larger
    than the dabs' boxes, and must give what the dab alone gives).

    Parameters
    ----------
    shape : tuple of int
        ``(C, H, W)``: the windows' channels, rows and columns.
    device : torch.device
    """

    def __init__(self, shape: tuple[int, int, int], *, device: torch.device):
        plane = shape[0] * shape[1] * shape[2]
        row = -(-plane // ATAN2_BLOCK) * ATAN2_BLOCK
        self._phases = torch.empty((2, *shape), device=device)  # old, new
        self.phase = self._phases[1]
        """Where the kernel may leave its phase ``[C, H, W]`` (saves a copy)."""
        self._trig = _trig_parts(torch.empty((2, 2, *shape), device=device))
        self._old_phase = self._phases[0]
        self._parts = torch.zeros((2, row), device=device)  # real, imag
        self._real, self._imag = self._parts.unbind(0)
        self._blended = self._parts[:, :plane].view(2, *shape)
        self._squares = torch.empty((2, *shape), device=device)
        self._square_parts = self._squares.unbind(0)
        self._out = torch.zeros((2, row), device=device)  # magnitude, phase
        self._magnitude, self._angle = self._out[0, :plane].view(shape), self._out[1]
        self._result = self._out[:, :plane].view(2, *shape)

    def __call__(
        self,
        window: torch.Tensor,
        magnitude: torch.Tensor,
        phase: torch.Tensor,
        weight: torch.Tensor,
        touched: torch.Tensor,
    ) -> None:
        """``window`` ``[2, C, H, W]`` (a view of the values held) moved towards ``magnitude``
        and ``phase`` ``[C, H, W]`` by ``weight`` ``[H, W]`` where ``touched`` (``weight > 0``)."""
        if phase is not self.phase:
            self.phase.copy_(phase)
        old_magnitude, old_phase = window
        self._old_phase.copy_(old_phase)
        blended = _crossfade(self._phases, old_magnitude, magnitude, weight, self._trig,
                             self._blended)  # fmt: skip
        torch.mul(blended, blended, out=self._squares)
        torch.add(*self._square_parts, out=self._magnitude).sqrt_()
        atan2(self._imag, self._real, out=self._angle)
        torch.where(touched, self._result, window, out=window)
