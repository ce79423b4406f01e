"""The settle of a transform with a cheap local model (the NSGT): find the change of the sound
that brings an edit near its target, and store the analysis of that change.

:func:`~spectropaint.transforms.consistency.project` resynthesises an edit's reach, then iterates
on the exact synthesis and analysis of its imposed cells. On the NSGT both are transforms of whole
slices (6 or 12 s at 24 or 48 bins per octave), so a settle that way took 140 to 290 ms for a
one-second stroke. Here instead:

1. the iterations run on the transform's local model
   (:meth:`~spectropaint.transforms.transform.Transform.local_model`; for the NSGT
   :class:`~spectropaint.transforms.nsgt_local.SliceModel`: synthesis then analysis inside each
   slice's spectrum, over the bands the edit holds), starting from the values before the edit plus
   the model's analysis of what was painted;
2. the change found on the imposed cells (what was painted, minus what was there before, plus what
   the iterations added) is synthesised once, exactly: ``z``, the change of the sound;
3. ``z`` is analysed exactly over every band and slice it may move by ``floor`` or more (a bound
   from the slice's spectrum tells which), and each cell there becomes its value before the edit
   plus the analysis of ``z``.

The analysis is linear, so where the document held the analysis of what is heard before the edit
(every settled document does), it holds after it the analysis of what is heard: the heard signal
is never resynthesised, and the cost follows the edit's cells, bands and slices, not the file. An
earlier edit that was never settled stays as it was (it is not re-analysed on the way).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.consistency import TOLERANCE, Alternation, Span
from spectropaint.transforms.transform import Transform

MODEL_WORK = 400_000
"""Coefficients (per channel) the model's iterations may transform in all (:attr:`.size` of
:class:`~spectropaint.transforms.nsgt_local.SliceModel` per iteration): for a one-second stroke
six semitones high, 5 iterations at 48 bins per octave and 10 at 24, 1.5 to 2.5 ms each on this
2-core machine, so that its settle stays within 100 ms (``tests/benchmarks/bench_fidelity.py``);
the count depends on the edit alone, so a recorded stroke replays to the same sound."""
ITERATIONS = (4, 32)
"""Fewest and most iterations."""

Edit = tuple[int, int, int, torch.Tensor, torch.Tensor, torch.Tensor]
"""``(block, bin0, frame0, target [C, b, t], weight [b, t], before [C, b, t])``: what an edit
painted on a box of a block (complex), how much it holds (0: free) and what was there before."""


@dataclass
class ChangeProjection:
    """The result of :func:`project_change`.

    Attributes
    ----------
    pieces : list of (block, bin0, frame0, coefficients [C, bins, frames] complex64, piece)
        The settled values of the bands and frames re-analysed, with the index of the span's piece
        they lie in.
    iterations : int
    residual_db : float
        Weighted energy of (target minus result) on the imposed cells, relative to the values
        the iterations started from, dB.
    """

    pieces: list[tuple[int, int, int, torch.Tensor, int]]
    iterations: int
    residual_db: float


def project_change(
    transform: Transform,
    span: Span,
    current: list[torch.Tensor],
    edits: list[Edit],
    *,
    floor: float,
    magnitude_only: bool = False,
    iterations: int | None = None,
    tolerance: float = TOLERANCE,
    stop: Callable[[], bool] | None = None,
) -> ChangeProjection:
    """Settle an edit by the change of the sound it makes (see the module).

    Parameters
    ----------
    transform : Transform
        One that :attr:`~Transform.settles_by_change`.
    span : Span
        Its pieces are the frames that may be re-analysed (they hold the edits).
    current : list of torch.Tensor [shape=(2, C, F, T)]
        The document's magnitude and phase over each of the span's pieces (as painted).
    edits : list of Edit
    floor : float
        Bands whose coefficients the change moves by less than this are not re-analysed.
    iterations : int, optional
        The most iterations; default: as many as :data:`MODEL_WORK` allows, within
        :data:`ITERATIONS`.
    magnitude_only, tolerance, stop
        As :func:`~spectropaint.transforms.consistency.project`'s.
    """
    stop = stop or (lambda: False)
    device = transform.device
    pieces, wanted, started, weight = [], [], [], []
    for block, bin0, frame0, target, weights, before in edits:
        cells = weights.to(device) > 0
        if not cells.any():
            continue
        rows, columns = torch.nonzero(cells.any(dim=1)).flatten(), torch.nonzero(cells.any(dim=0))
        b0, b1 = int(rows[0]), int(rows[-1]) + 1
        t0, t1 = int(columns[0]), int(columns[-1]) + 1
        mask = cells[b0:b1, t0:t1]
        pieces.append((block, bin0 + b0, frame0 + t0, mask))
        wanted.append(target.to(device)[:, b0:b1, t0:t1][:, mask])
        started.append(before.to(device)[:, b0:b1, t0:t1][:, mask])
        weight.append(weights.to(device)[b0:b1, t0:t1][mask])
    model = transform.local_model(pieces)
    if iterations is None:
        iterations = min(ITERATIONS[1], max(ITERATIONS[0], MODEL_WORK // max(1, model.size)))
    wanted, started, weight = (torch.cat(x, dim=-1) for x in (wanted, started, weight))
    painted = wanted - started
    values = started + model.apply(painted)  # the model's analysis of the edit as heard
    added = torch.zeros_like(values)

    def impose(change: torch.Tensor, last: bool) -> torch.Tensor:
        nonlocal values
        added.add_(change)
        values = values + model.apply(change)
        return values

    alternation = Alternation(wanted, weight, values, magnitude_only=magnitude_only)
    values, done = alternation.run(values, impose, iterations, tolerance, stop)
    first, change = _synthesise(transform, span.n_samples, pieces, painted + added)
    found = []
    for block, bin0, frame0, analysed, number in model.analyse_change(
        change, first, list(span.pieces), floor
    ):
        lo = span.pieces[number][1]
        box = (
            slice(bin0, bin0 + analysed.shape[1]),
            slice(frame0 - lo, frame0 - lo + analysed.shape[2]),
        )
        base = fft_ops.polar_to_complex(
            *current[number][(slice(None), slice(None), *box)].to(device)
        )
        for edit_block, edit_bin0, edit_frame0, _, weights, before in edits:
            if edit_block == block:
                _put(base, (bin0, frame0), before.to(device), (edit_bin0, edit_frame0), weights > 0)
        found.append((block, bin0, frame0, analysed + base, number))
    settled = []
    for block, bin0, frame0, mask in pieces:
        dense = torch.zeros((values.shape[0], *mask.shape), dtype=values.dtype, device=device)
        for found_block, found_bin0, found_frame0, coefficients, _ in found:
            if found_block == block:
                _put(dense, (bin0, frame0), coefficients, (found_bin0, found_frame0), None)
        settled.append(dense[:, mask])
    return ChangeProjection(found, done, alternation.residual_db(torch.cat(settled, dim=1)))


def _put(into: torch.Tensor, at: tuple[int, int], values: torch.Tensor, origin, where) -> None:
    """Copy ``values`` ``[C, b, t]`` (at bin and frame ``origin``) into ``into`` ``[C, B, T]``
    (at bin and frame ``at``) where they overlap, on the cells ``where`` (bool ``[b, t]``) only
    if given."""
    b0, b1 = max(at[0], origin[0]), min(at[0] + into.shape[1], origin[0] + values.shape[1])
    t0, t1 = max(at[1], origin[1]), min(at[1] + into.shape[2], origin[1] + values.shape[2])
    if b1 <= b0 or t1 <= t0:
        return
    target = into[:, b0 - at[0] : b1 - at[0], t0 - at[1] : t1 - at[1]]
    source = values[:, b0 - origin[0] : b1 - origin[0], t0 - origin[1] : t1 - origin[1]]
    if where is None:
        target.copy_(source)
    else:
        mask = where[b0 - origin[0] : b1 - origin[0], t0 - origin[1] : t1 - origin[1]]
        target[:, mask] = source[:, mask]


def _synthesise(transform, n_samples: int, pieces, change) -> tuple[int, torch.Tensor]:
    """The samples of ``change`` ``[C, cells]`` on the imposed cells of ``pieces``:
    ``(first, [C, n])``."""
    parts, offset = [], 0
    layout = transform.layout(n_samples)
    for block, bin0, frame0, mask in pieces:
        count = int(mask.sum())
        bins = layout[block].n_bins
        part = change.new_zeros((change.shape[0], bins, mask.shape[1]))
        part[:, bin0 : bin0 + mask.shape[0]][:, mask] = change[:, offset : offset + count]
        offset += count
        parts.append((block, frame0, part))
    return transform.synthesise_many(parts, n_samples)
