"""Phase bookkeeping for brushes that create or move energy.

Three facts about a centred STFT keep moved or painted energy coherent:

- A steady sinusoid at a bin's centre frequency ``f`` advances by ``omega = 2 pi hop f / sr`` per
  frame; the pen paints exactly that ramp (:func:`phase_ramp`).
- The advance actually measured in a cell (the backward difference of phase, unwrapped around
  ``omega``) is that of whatever tone dominates it, bin centre or not.
- Moving energy from a bin at ``f_s`` to one at ``f_d`` is a modulation by ``f_d - f_s``: its phase at
  frame ``t`` gains ``2 pi hop (f_d - f_s) t / sr``, after which it is heard at the new frequency.

Moved energy keeps its phase in one of three ways (:data:`PHASE_MODES`): ``continue`` carries each
cell forward by its measured advance over the distance moved, so a steady tone (a hum, a held note)
moved or cloned in time stays in phase with itself around the patch; ``shift`` moves coefficients
as they are, which is exact for a pure time shift of whole frames and keeps clicks sharp; ``auto``
(the default) takes ``continue`` where the destination's own content already is what is moved,
carried on (:func:`continuation`: a partial running through the patch), and ``shift`` elsewhere
(other music, transients, silence), so the person never has to choose.
"""

from __future__ import annotations

import functools
import math

import torch

from spectropaint.transforms.torch_device import one_thread

PHASE_MODES = ("auto", "continue", "shift")
ALIGNMENT = (0.7, 0.95)
"""Alignment below the first value is no continuation, above the second a sure one."""
MARGIN = 0.1
"""By how much the continuation's alignment must beat the shifted copy's to be sure."""
CONTEXT_FRAMES = 2
"""Frames either side over which :func:`continuation` measures alignment."""


def constant(value: float, like: torch.Tensor) -> torch.Tensor | float:
    """``value`` for arithmetic with ``like``, the same number as Python's: a 0-dimensional CPU
    tensor of its type where that is float32 or float64 (an operation with a Python number
    converts the number to the tensor's type every time, which more than doubles its cost on a
    dab's window, measured here), else the number."""
    if like.dtype in (torch.float32, torch.float64):
        return _number(value, like.dtype)
    return value


@functools.cache
def _number(value: float, dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(value, dtype=dtype)


@functools.lru_cache(maxsize=32)
def kept_indices(size: int, device: torch.device) -> torch.Tensor:
    """``arange(size)`` on ``device``, made once and kept (outside inference mode: a normal
    tensor, whose views serve in and out of it), for regions to take their indices as views of
    (no launch on a GPU). Never written to."""
    with torch.inference_mode(False):
        return torch.arange(size, device=device)


def clear_constants() -> None:
    """Forget the kept numbers of :func:`constant` and the :func:`kept_indices`."""
    _number.cache_clear()
    kept_indices.cache_clear()


def wrap(angle: torch.Tensor, *, out: torch.Tensor | None = None) -> torch.Tensor:
    """Angles reduced to ``[-pi, pi]``: less the nearest whole number of turns (twice as fast as
    ``remainder`` on a dab's box on a CPU, measured here). ``out``: a tensor of ``angle``'s shape
    (not ``angle`` itself) to compute in and return."""
    turns = torch.mul(angle, constant(1 / (2 * math.pi), angle), out=out).round_()
    return torch.sub(angle, turns.mul_(constant(2 * math.pi, angle)), out=turns)


ATAN2_BLOCK = 64
"""The last elements :func:`atan2` computes again, as a block of a whole number of vectors."""
THREADED_CELLS = 32768
"""From this many elements torch shares an operation between its CPU threads (its grain size)."""


def atan2(y: torch.Tensor, x: torch.Tensor, *, out: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.atan2(y, x)`` whose result at an element does not depend on the tensor's size.

    On CPUs torch computes the last few elements of a tensor (what is left over after the
    vector registers' multiples) by a scalar routine that can differ in the last bit; here the
    last :data:`ATAN2_BLOCK` elements are computed again as a block of their own, by the vector
    routine, like all the others (on one thread: with several, each thread's part of a large
    tensor would have a tail of its own). The planned warp (:class:`~.warp.WarpPlan`) relies on it to
    equal the kernel dab by dab: its windows are larger than the dabs' boxes, and auto phase's
    decision amplifies a last-bit difference a thousandfold along a stroke. ``out``: a contiguous
    tensor of the result's shape to write into (and return).
    """
    if y.device.type != "cpu":
        return torch.atan2(y, x, out=out)
    if torch.get_num_threads() > 1 and max(y.numel(), x.numel()) > THREADED_CELLS:
        with one_thread():  # several threads would each take a part, each part with a tail
            return atan2(y, x, out=out)
    if out is not None and out.numel() < ATAN2_BLOCK:
        out.copy_(atan2(y, x))
        return out
    out = torch.atan2(y, x, out=out)
    n = out.numel()
    if n % ATAN2_BLOCK == 0:
        return out
    if n < ATAN2_BLOCK:
        y, x = (torch.nn.functional.pad(v.expand(out.shape).reshape(-1), (0, ATAN2_BLOCK - n))
                for v in (y, x))  # fmt: skip
        return torch.atan2(y, x)[:n].view(out.shape)
    if y.shape != out.shape or x.shape != out.shape:
        y, x = y.expand(out.shape), x.expand(out.shape)
    last = slice(n - ATAN2_BLOCK, n)
    out.view(-1)[last].copy_(torch.atan2(y.reshape(-1)[last], x.reshape(-1)[last]))
    return out


def phase_ramp(
    bin_hz: torch.Tensor, frames: torch.Tensor, *, hop: int, sample_rate: int
) -> torch.Tensor:
    """``2 pi frac(hop f t / sr)`` for every frequency ``f`` and frame ``t``.

    Parameters
    ----------
    bin_hz : torch.Tensor [shape=(B,) or (B, T)]
        Frequencies in Hz (float64 for accuracy: ten minutes at hop 512 is over 10^7 cycles).
    frames : torch.Tensor [shape=(T,)]
        Frame indices (or fractional frame positions).

    Returns
    -------
    torch.Tensor [shape=(B, T)], float64, radians in ``[0, 2 pi)``.
    """
    rate = bin_hz.to(torch.float64)
    rate = rate * constant(hop / sample_rate, rate)
    if rate.dim() == 1:
        rate = rate[:, None]
    cycles = rate * frames.to(torch.float64)[None, :]
    return cycles.sub_(torch.floor(cycles)).mul_(constant(2 * math.pi, cycles))


def continuation(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    moved_magnitude: torch.Tensor,
    carried: torch.Tensor,
    shifted: torch.Tensor,
) -> torch.Tensor:
    """How surely the destination's own content is what is moved there, carried on: 0..1 per cell.

    The destination (``magnitude``, ``phase``, as the stroke began) is compared with the moved
    content's two phases, carried on (``continue``) and as it was (``shift``): their
    magnitude-weighted alignment ``sum(w cos(difference)) / sum(w)`` over :data:`CONTEXT_FRAMES`
    frames either side. A steady partial present at both ends of the move lines up with its
    continuation (alignment 1); different music, noise, transients and silence line up with
    neither (about 0), and content that repeats exactly (a loop, a drum pattern) lines up with the
    shifted copy at least as well. Continuation is sure where its alignment rises through
    :data:`ALIGNMENT` and beats the shifted copy's by :data:`MARGIN`.

    Parameters
    ----------
    magnitude, phase, moved_magnitude, carried, shifted : torch.Tensor [shape=(C, B, T)]
    """
    moved_phase = torch.stack((carried, shifted))
    return Continuation(magnitude.shape, device=magnitude.device)(
        magnitude, phase, moved_magnitude, moved_phase
    )


class Continuation:
    """:func:`continuation` on tensors of one shape ``(C, B, T)``, as often as needed, in buffers
    of its own (a warp dab's window: some twenty operations instead of thirty-odd).

    The sums over :data:`CONTEXT_FRAMES` frames either side are shifted additions of a buffer
    padded with zeros in time: each cell's sum is taken in the same order whatever the frames
    around it, so a cell's result does not depend on how much of the grid the tensor holds (a warp
    dab's window past its box adds exact zeros).
    """

    def __init__(self, shape: tuple[int, int, int], *, device: torch.device):
        pad, n = CONTEXT_FRAMES, shape[-1]
        self._padded = torch.zeros((3, *shape[:-1], n + 2 * pad), device=device)
        values = self._padded[..., pad : pad + n]
        self._weight, self._aligned = values[0], values[1:]
        self._terms = [values] + [
            self._padded[..., pad + side * k : pad + side * k + n]
            for k in range(1, pad + 1)
            for side in (-1, 1)
        ]
        self._sums = torch.empty((3, *shape), device=device)
        self._aligned_sums, self._weight_sum = self._sums[1:], self._sums[0]
        # the alignments along and against, after the lower threshold: what each is compared with
        low, high = ALIGNMENT
        self._alignment = torch.full((3, *shape), low, device=device)
        self._along, self._levels = self._alignment[1:2], self._alignment[0::2]
        self._scales = torch.full((2, 1, 1, 1), high - low, device=device)
        self._scales[1].fill_(MARGIN)  # filled there: torch.tensor would copy from the host
        self._sure = torch.empty((2, *shape), device=device)
        self._sure_along, self._sure_margin = self._sure.unbind(0)

    def __call__(
        self,
        magnitude: torch.Tensor,
        phase: torch.Tensor,
        moved_magnitude: torch.Tensor,
        moved_phase: torch.Tensor,
    ) -> torch.Tensor:
        """:func:`continuation` of the destination (``magnitude``, ``phase``) and the moved content
        (``moved_magnitude``, and ``moved_phase`` ``[2, C, B, T]``: carried, then shifted), in a
        buffer of its own valid until the next call."""
        torch.mul(magnitude, moved_magnitude, out=self._weight)
        aligned = torch.sub(phase, moved_phase, out=self._aligned)
        torch.cos(aligned, out=aligned).mul_(self._weight)
        sums = torch.add(self._terms[0], self._terms[1], out=self._sums)
        for term in self._terms[2:]:
            sums.add_(term)
        torch.div(self._aligned_sums, self._weight_sum.clamp_min_(1e-30), out=self._alignment[1:])
        # (along - low) / (high - low) and (along - against) / MARGIN, each clamped to 0..1
        torch.sub(self._along, self._levels, out=self._sure).div_(self._scales).clamp_(0.0, 1.0)
        return self._sure_along.mul_(self._sure_margin)


def blend_phase(
    shift: torch.Tensor,
    carried: torch.Tensor,
    confidence: torch.Tensor,
    *,
    out: torch.Tensor | None = None,
    spare: torch.Tensor | None = None,
) -> torch.Tensor:
    """``shift`` moved towards ``carried`` by ``confidence`` (0..1), along the shorter way round.
    ``out`` and ``spare``: two tensors of the result's shape to compute in (``out`` is returned)."""
    moved = wrap(torch.sub(carried, shift, out=spare), out=out).mul_(confidence)
    return moved.add_(shift)
