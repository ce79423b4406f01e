"""Projection onto consistent coefficients over a frame span: what an edit sounds like, made to
approach what was painted.

An STFT with overlapping windows cannot hold any picture: coefficients written by a brush are
generally not the transform of any signal, and resynthesis followed by re-analysis gives something
else. Over a span of frames, :func:`project` finds a signal that differs from the current one only
on a given span of samples and whose coefficients approach a target on the cells where one is
imposed, each by a weight from 0 (free) to 1. Two targets:

- **complex values** (gain, erase, moves with a chosen phase): the least-squares problem
  ``min_d sum W |S(y + d) - target|^2`` over changes ``d`` of the free samples is linear and
  solved by conjugate gradients on its normal equations (CGLS), which reach in 10 iterations what
  alternating projections reach in 20 to 40 (measured on the erase probe of
  ``tests/benchmarks/bench_fidelity.py``);
- **magnitudes** (blur, filter, moves in ``auto`` phase): alternating projections, Griffin-Lim's,
  restricted to the span: move each cell's magnitude towards the target by its weight keeping
  the current phase, resynthesise the frames, keep the free samples, re-analyse; with the
  momentum of the fast
  Griffin-Lim algorithm (Perraudin, Balazs and Sondergaard, 2013).

A transform without the adjoint the first needs imposes complex values by the same alternating
projections, moving each cell to the target value instead of its magnitude. (The NSGT's settle
goes another way, on the change of the sound: :mod:`.settle_change`; :class:`Alternation` is
shared.) A span
may hold frames of several blocks (an NSGT edit's slices reach every block): coefficients are
then flat vectors, each block's frames flattened and joined.

Both start from the current signal and stop after a given number of iterations or when the
residual stops falling. The coefficients returned are those of the last analysis, so they are
exactly (to float32) the transform of the signal returned: storing them makes what is shown and
what is heard one. Cost per iteration: one analysis and one synthesis of the span's frames (for
alternating projections, of the frames that hold imposed cells only, the change synthesised and
added to the signal), so it follows the edit's size, never the file's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from spectropaint.transforms.transform import Transform

MOMENTUM = 0.9
"""Of Griffin-Lim's imposed sequence; 0.9 converged fastest on the probes of
``tests/benchmarks/bench_fidelity.py`` (0.99, FGLA's usual value, overshoots on short spans)."""
LOCKED = 10 ** (-30 / 20)
"""Griffin-Lim holds cells whose value differs from the target by less than this (relative)."""
TOLERANCE = 1e-4
"""Stop when an iteration lowers the residual by less than this fraction of it."""


Piece = tuple[int, int, int]
"""``(block, frame0, frame1)``: a span of one block's frames."""


@dataclass(frozen=True)
class Span:
    """Where a projection works, in a signal ``n_samples`` long.

    Attributes
    ----------
    pieces : tuple of (block, frame0, frame1)
        The frames re-analysed (and returned), per block: every frame of every block that reaches
        ``[free0, free1)`` (the STFT has one block; an NSGT edit's slices reach every block).
    free0, free1 : int
        The samples that may change.
    start, stop : int
        The samples held: everything the frames' analysis reads.
    """

    pieces: tuple[Piece, ...]
    free0: int
    free1: int
    start: int
    stop: int
    n_samples: int

    @classmethod
    def around(cls, transform: Transform, regions, n_samples: int) -> Span:
        """The span an edit of ``regions`` (boxes of any blocks) settles over: the samples their
        frames reach may change, and every frame that reaches them is re-analysed."""
        reached = [
            transform.samples_reached(box.block, box.frame0, box.frame1, n_samples)
            for box in regions
        ]
        free0, free1 = min(a for a, _ in reached), max(b for _, b in reached)
        pieces = []
        for block in range(len(transform.layout(n_samples, 1))):
            lo, hi = transform.frames_over(block, free0, free1, n_samples)
            if hi > lo:
                pieces.append((block, lo, hi))
        read = [transform.samples_read(block, lo, hi, n_samples) for block, lo, hi in pieces]
        start, stop = min(a for a, _ in read), max(b for _, b in read)
        return cls(tuple(pieces), free0, free1, start, stop, n_samples)

    def cells(self, transform: Transform) -> list[tuple[int, int]]:
        """``(bins, frames)`` of each piece."""
        layout = transform.layout(self.n_samples, 1)
        return [(layout[block].n_bins, hi - lo) for block, lo, hi in self.pieces]


@dataclass
class Projection:
    """The result of :func:`project`.

    Attributes
    ----------
    coefficients : list of torch.Tensor [shape=(C, F, frame1 - frame0)], complex64
        The analysis of ``samples`` over the span's frames, per piece.
    samples : torch.Tensor [shape=(C, stop - start)]
        The signal found (equal to the one given outside ``[free0, free1)``).
    iterations : int
    residual_db : float
        Weighted energy of (target minus result), relative to the signal given's there, dB.
    """

    coefficients: list[torch.Tensor]
    samples: torch.Tensor
    iterations: int
    residual_db: float


def power(values: torch.Tensor) -> torch.Tensor:
    """``|values| ** 2`` of complex values, in real arithmetic (faster than ``abs`` on CPUs)."""
    parts = torch.view_as_real(values)
    return (parts * parts).sum(dim=-1)


def magnitude(values: torch.Tensor) -> torch.Tensor:
    """``|values|`` of complex values, in real arithmetic."""
    return torch.sqrt(power(values))


class _Operator:
    """The analysis of the span's frames as a function of the free samples, and its adjoint.

    Coefficients are flat ``[C, K]``: the pieces' ``[C, F, T]`` flattened and joined in order.
    """

    def __init__(self, transform: Transform, span: Span, samples: torch.Tensor):
        self.transform, self.span = transform, span
        self.signal = samples.to(device=transform.device, dtype=torch.float32).clone()
        self.free = slice(span.free0 - span.start, span.free1 - span.start)
        self.shapes = span.cells(transform)

    def pieces(self, signal: torch.Tensor | None = None) -> list[torch.Tensor]:
        """The analysis of ``signal`` (default: the current one) over each piece, ``[C, F, T]``."""
        span = self.span
        signal = self.signal if signal is None else signal
        return self.transform.analyse_pieces(signal, span.start, span.pieces, span.n_samples)

    def analyse(self, signal: torch.Tensor | None = None) -> torch.Tensor:
        """The analysis flat, ``[C, K]``, of a span of one piece."""
        (part,) = self.pieces(signal)
        return part.flatten(1)

    def split(self, coefficients: torch.Tensor) -> list[torch.Tensor]:
        """Flat ``[C, K]`` coefficients as each piece's ``[C, F, T]`` (views)."""
        sizes = [bins * frames for bins, frames in self.shapes]
        parts = torch.split(coefficients, sizes, dim=1)
        return [
            part.view(part.shape[0], *shape) for part, shape in zip(parts, self.shapes, strict=True)
        ]

    def adjoint(self, coefficients: torch.Tensor) -> torch.Tensor:
        """The analysis' adjoint on the free samples, of flat ``coefficients`` of a span of one
        piece."""
        span = self.span
        ((block, lo, _),) = span.pieces
        (part,) = self.split(coefficients)
        first, samples = self.transform.synthesise_frames(
            part, block, lo, span.n_samples, adjoint=True
        )
        return samples[:, span.free0 - first : span.free1 - first].to(torch.float32)

    def change(self, delta: torch.Tensor) -> torch.Tensor:
        """The analysis of a change ``delta`` of the free samples alone."""
        signal = torch.zeros_like(self.signal)
        signal[:, self.free] = delta
        return self.analyse(signal)


class _Imposed:
    """The analysis and the synthesis of the imposed cells alone, for alternating projections.

    Only the cells where a target is imposed change between iterations; every other coefficient is
    the analysis of the current signal, whose synthesis gives that signal back on the free samples
    (every frame that reaches them is in the span). So an iteration synthesises the change of the
    imposed cells alone and adds it to the signal (the resynthesis by difference), and reads back
    the cells alone: both over each piece's frames from the first to the last that holds one
    (an NSGT edit's cells lie in a few of its blocks).

    Where the analysis comes as a transposed view of time-major frames (the STFT on the CPU), the
    cells are read from, and the change written in, that layout: flattening the view would copy
    every frame, and the synthesis would transpose the change back (measured: a third of an
    iteration on a 250-frame warp).
    """

    def __init__(self, operator: _Operator, cells: torch.Tensor):
        self.operator = operator
        self.pieces: list[tuple[int, int, int]] = []
        self.index: list[torch.Tensor] = []  # per piece, the cells among its frames, flat
        self.time_index: list[torch.Tensor] = []  # the same cells in time-major order
        self.time_major = False  # whether the analysis comes time-major (see values)
        self.shapes: list[tuple[int, int]] = []
        for (block, lo, _), mask in zip(
            operator.span.pieces, operator.split(cells[None]), strict=True
        ):
            columns = torch.nonzero(mask[0].any(dim=0)).flatten()
            if not columns.numel():
                continue
            t0, t1 = int(columns[0]), int(columns[-1]) + 1
            self.pieces.append((block, lo + t0, lo + t1))
            index = torch.nonzero(mask[0, :, t0:t1].flatten()).flatten()
            self.index.append(index)
            self.time_index.append((index % (t1 - t0)) * mask.shape[1] + index // (t1 - t0))
            self.shapes.append((mask.shape[1], t1 - t0))

    def values(self) -> torch.Tensor:
        """The analysis of the current signal on the cells ``[C, cells]`` (in flat order)."""
        operator, span = self.operator, self.operator.span
        if not self.pieces:
            return operator.signal.new_zeros((operator.signal.shape[0], 0), dtype=torch.complex64)
        parts = operator.transform.analyse_pieces(
            operator.signal, span.start, self.pieces, span.n_samples
        )
        self.time_major = all(part.transpose(1, 2).is_contiguous() for part in parts)
        if self.time_major:
            found = [
                part.transpose(1, 2).reshape(part.shape[0], -1)[:, index]
                for part, index in zip(parts, self.time_index, strict=True)
            ]
        else:
            found = [
                part.flatten(1)[:, index] for part, index in zip(parts, self.index, strict=True)
            ]
        return torch.cat(found, dim=1)

    def add(self, change: torch.Tensor) -> None:
        """Add to the free samples the synthesis of ``change`` ``[C, cells]`` on the cells."""
        operator, span = self.operator, self.operator.span
        if not self.pieces:
            return
        pieces, offset = [], 0
        indices = self.time_index if self.time_major else self.index
        for (block, lo, _), index, shape in zip(self.pieces, indices, self.shapes, strict=True):
            part = change.new_zeros((change.shape[0], shape[0] * shape[1]))
            part[:, index] = change[:, offset : offset + index.numel()]
            offset += index.numel()
            if self.time_major:
                part = part.view(change.shape[0], shape[1], shape[0]).transpose(1, 2)
            else:
                part = part.view(change.shape[0], *shape)
            pieces.append((block, lo, part))
        first, samples = operator.transform.synthesise_many(pieces, span.n_samples)
        a, b = max(first, span.free0), min(first + samples.shape[-1], span.free1)
        operator.signal[:, a - span.start : b - span.start] += samples[:, a - first : b - first].to(
            torch.float32
        )


def project(
    transform: Transform,
    span: Span,
    samples: torch.Tensor,
    target: torch.Tensor,
    weights: torch.Tensor,
    *,
    magnitude_only: bool = False,
    iterations: int = 100,
    tolerance: float = TOLERANCE,
    stop: Callable[[], bool] | None = None,
    alternative: torch.Tensor | None = None,
) -> Projection:
    """A signal near ``samples`` whose coefficients approach ``target`` where ``weights > 0``.

    Parameters
    ----------
    transform : Transform
    span : Span
    samples : torch.Tensor [shape=(C, span.stop - span.start)]
        The current signal over the span.
    target : torch.Tensor [shape=(C, K)], complex
        Wanted coefficients over the span's frames, flat (each piece's ``[C, F, T]`` flattened,
        in order; read only where ``weights > 0``).
    weights : torch.Tensor [shape=(K,)]
        How much the target holds in each cell, 0..1 (0: the cell is free).
    magnitude_only : bool
        Impose ``|target|`` alone (Griffin-Lim) instead of ``target`` (conjugate gradients where
        the transform has an adjoint (:attr:`Transform.least_squares_settle`) and the span one
        piece; alternating projections with the complex target otherwise).
    iterations : int
        The most iterations (0 returns the analysis of ``samples``).
    tolerance : float
        See :data:`TOLERANCE`.
    stop : callable, optional
        Asked before each iteration: True ends the iterations there. What is returned is still the
        analysis of a signal (consistent), only further from the target.
    alternative : torch.Tensor [shape=(C, span.stop - span.start)], optional
        Another start, equal to ``samples`` outside ``[free0, free1)``: with ``magnitude_only``,
        the iterations start from whichever of the two has the analysis nearer ``|target|`` on the
        imposed cells.
    """
    operator = _Operator(transform, span, samples)
    stop = stop or (lambda: False)
    target = target.to(transform.device)
    weights = weights.to(device=transform.device, dtype=torch.float32)
    if magnitude_only or not transform.least_squares_settle or len(span.pieces) > 1:
        return _griffin_lim(
            operator,
            target,
            weights,
            iterations,
            tolerance,
            stop,
            magnitude_only=magnitude_only,
            alternative=alternative if magnitude_only else None,
        )
    return _conjugate_gradients(operator, target, weights, iterations, tolerance, stop)


def _conjugate_gradients(
    operator: _Operator,
    target: torch.Tensor,
    weights: torch.Tensor,
    iterations: int,
    tolerance: float,
    stop: Callable[[], bool],
) -> Projection:
    """CGLS on ``min_d sum W |S(y + d) - target|^2`` over the cells of weight ``W > 0``.

    The residual lives on those cells only, kept as a compact real vector scaled by
    ``sqrt(W * b)`` (``b``: the transform's inner-product weights), so inner products are plain
    dot products.
    """
    cells = weights > 0
    ((block, lo, hi),) = operator.span.pieces
    band = operator.transform.coefficient_weights(block)[:, None].expand(-1, hi - lo).flatten()
    scale = torch.sqrt(weights[cells] * band[cells])[None, :, None]  # [1, K, 1]
    # the analysis' adjoint is for the band-weighted inner product: divide the band weight out
    back = torch.sqrt(weights[cells] / band[cells])[None, :, None]

    def compact(coefficients: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(coefficients[:, cells]) * scale

    def spread(vector: torch.Tensor) -> torch.Tensor:
        """The adjoint of :func:`compact` followed by the analysis' adjoint's weighting."""
        full = torch.zeros(target.shape, dtype=target.dtype, device=target.device)
        full[:, cells] = torch.view_as_complex((vector * back).contiguous())
        return full

    start = operator.analyse()
    residual = compact(target) - compact(start)
    energy = float(torch.sum(compact(start) ** 2)) or 1.0
    delta = torch.zeros_like(operator.signal[:, operator.free])
    gradient = operator.adjoint(spread(residual))
    direction = gradient.clone()
    gamma = float(torch.sum(gradient * gradient))
    done = 0
    last = float(torch.sum(residual * residual))
    while done < iterations and gamma > 0 and not stop():
        image = compact(operator.change(direction))
        alpha = gamma / float(torch.sum(image * image))
        delta += alpha * direction
        residual -= alpha * image
        gradient = operator.adjoint(spread(residual))
        following = float(torch.sum(gradient * gradient))
        direction = gradient + (following / gamma) * direction
        gamma = following
        done += 1
        now = float(torch.sum(residual * residual))
        if last - now < tolerance * now:
            break
        last = now
    operator.signal[:, operator.free] += delta
    coefficients = operator.analyse()
    found = compact(target) - compact(coefficients)
    return Projection(
        operator.split(coefficients),
        operator.signal,
        done,
        10 * math.log10(max(float(torch.sum(found * found)) / energy, 1e-30)),
    )


class Alternation:
    """The imposing half of alternating projections with momentum on the cells of weight above 0:
    moving each cell's magnitude to ``|target|`` by its weight (a relaxed projection where the
    weight is below 1); with ``magnitude_only=False``, moving each cell's value to ``target``.

    Cells whose starting value already has the target, complex value and all, to within
    :data:`LOCKED` are held to it, phase included: the phase a move or a copy gave them fits, and
    leaving it free would let the inconsistency at the stroke's edges seep into them, iteration
    after iteration (a tone moved by whole bins kept 68 dB of SNR held, 48 dB left free).

    Parameters
    ----------
    target : torch.Tensor [shape=(C, K)], complex
        On the imposed cells.
    weight : torch.Tensor [shape=(K,)]
        Above 0.
    start : torch.Tensor [shape=(C, K)], complex
        The values the iterations start from.
    """

    def __init__(
        self,
        target: torch.Tensor,
        weight: torch.Tensor,
        start: torch.Tensor,
        *,
        magnitude_only: bool,
    ):
        self.target, self.weight, self.magnitude_only = target, weight, magnitude_only
        self.wanted = magnitude(target)
        self.fallback = torch.sgn(target) + (
            self.wanted == 0
        )  # its phase where the signal has none
        self.locked = (weight >= 1) & (power(start - target) <= LOCKED**2 * self.wanted**2)
        self.energy = float((weight * power(start)).sum()) or 1.0
        self.previous: torch.Tensor | None = None

    def residual(self, values: torch.Tensor) -> float:
        """Weighted energy of (target minus ``values``)."""
        if not self.magnitude_only:
            return float((self.weight * power(values - self.target)).sum())
        return float((self.weight * (magnitude(values) - self.wanted) ** 2).sum())

    def residual_db(self, values: torch.Tensor) -> float:
        """:meth:`residual` relative to the starting values' energy, dB."""
        return 10 * math.log10(max(self.residual(values) / self.energy, 1e-30))

    def change(self, values: torch.Tensor) -> torch.Tensor:
        """What to add to the cells' ``values`` (the analysis of the current signal): the target
        imposed, with momentum."""
        weight = self.weight
        if self.magnitude_only:
            size = magnitude(values)
            moved = values * (1 - weight + weight * self.wanted / size.clamp_min(1e-30))
            moved = torch.where(size > 0, moved, weight * self.wanted * self.fallback)
        else:
            moved = values + weight * (self.target - values)
        fixed = torch.where(self.locked, self.target, moved)
        previous, self.previous = self.previous, fixed
        wanted_now = fixed if previous is None else fixed + MOMENTUM * (fixed - previous)
        return wanted_now - values

    def run(
        self,
        values: torch.Tensor,
        impose: Callable[[torch.Tensor, bool], torch.Tensor],
        iterations: int,
        tolerance: float,
        stop: Callable[[], bool],
    ) -> tuple[torch.Tensor, int]:
        """Iterate from ``values``: ``impose(change, last)`` adds a change to the cells and returns
        their values after it (``last`` for the last iteration of ``iterations``); the values
        reached and the iterations made."""
        done = 0
        last = self.residual(values)
        while done < iterations and not stop():
            done += 1
            values = impose(self.change(values), done == iterations)
            now = self.residual(values)
            if 0 <= last - now < tolerance * now:  # momentum may raise it for a while: go on then
                break
            last = now
        return values, done


def _griffin_lim(
    operator: _Operator,
    target: torch.Tensor,
    weights: torch.Tensor,
    iterations: int,
    tolerance: float,
    stop: Callable[[], bool],
    *,
    magnitude_only: bool = True,
    alternative: torch.Tensor | None = None,
) -> Projection:
    """:class:`Alternation` on the exact synthesis and analysis of the imposed cells.

    Only the cells of weight above 0 are imposed (and carry the momentum); the others take the
    analysis as it comes, so the work per iteration besides the transforms follows the stroke.
    """
    cells = weights > 0
    imposed = _Imposed(operator, cells)

    def everywhere() -> tuple[list[torch.Tensor], torch.Tensor]:
        """Every piece's analysis of the current signal, and its values on the cells."""
        parts = operator.pieces()
        masks = operator.split(cells[None])
        on_cells = [
            part.flatten(1)[:, mask.flatten()] for part, mask in zip(parts, masks, strict=True)
        ]
        return parts, torch.cat(on_cells, dim=1)

    analysed = []  # every piece's analysis of the current signal, once made

    def impose(change: torch.Tensor, last: bool) -> torch.Tensor:
        imposed.add(change)
        if not last:
            return imposed.values()
        parts, values = everywhere()  # the last: the analysis returned serves it too
        analysed.append(parts)
        return values

    values = imposed.values()
    if alternative is not None:
        wanted = magnitude(target[:, cells])
        first = operator.signal
        operator.signal = alternative.to(device=first.device, dtype=torch.float32).clone()
        other = imposed.values()
        if float(torch.sum((magnitude(other) - wanted) ** 2)) < float(
            torch.sum((magnitude(values) - wanted) ** 2)
        ):
            values = other
        else:
            operator.signal = first
    alternation = Alternation(
        target[:, cells], weights[cells], values, magnitude_only=magnitude_only
    )
    values, done = alternation.run(values, impose, iterations, tolerance, stop)
    if not analysed:
        parts, values = everywhere()
        analysed.append(parts)
    return Projection(analysed[0], operator.signal, done, alternation.residual_db(values))
