"""The stroke-end step: make what a stroke shows what it sounds like, and bring it near its target.

A brush writes coefficients that no signal has (an STFT with overlapping windows cannot hold any
picture). When a stroke ends, the samples its frames reach are resynthesised and re-analysed, and
the document's coefficients over that reach become the re-analysed ones, so the canvas, playback,
projects and exports agree. On the way, :func:`~spectropaint.transforms.consistency.project`
iterates locally so that the heard result approaches what was painted: the painted values are
imposed on the cells the stroke changed (complex values for gain and erase, whose phase is the
original's; the magnitude alone for the others, whose phase settles from the kernel's, or for
warp from the phase integrated from the cells around the stroke where that starts nearer:
:mod:`~spectropaint.transforms.phase_init`), and the cells around are free. The pen instead synthesises its partial in the time domain and adds it
to the sound the stroke began from (:mod:`.pen_partial`).

Three calls, so that a window can do the work off its GUI thread::

    stroke.end()                        # commits the stroke's undo step (under the document lock)
    plan = stroke.settle_plan()         # under the lock, cheap: copies what the work needs
    result = plan.compute()             # any thread, no lock: touches no shared state
    region = apply_settle(document, history, result)   # under the lock: writes, records for undo

``apply_settle`` records the settled cells into the stroke's own undo step, so one undo returns to
the state before the stroke bit for bit and redo to the settled state. A result computed while the
document changed (another stroke, an undo) is stale and dropped (``EMPTY``). A new stroke begun
before a pending result is applied makes it stale: a caller that wants every stroke settled applies
(or waits for) the pending result first; :meth:`SettlePlan.compute` takes about the same time
whatever the stroke (:data:`WORK_CELLS`).

Operations on a selection (gain, erase, heal, fill, paste, an image, de-click, de-hum) settle the
same way, into their own undo step: :func:`plan_edit_settle` plans the regions they wrote, each
part (spans far enough apart settle alone) with the values written as the target; the phase is
imposed too where the operation kept every changed cell's phase. :func:`settle_now` does all three
calls at once (the command line, replays).

On an NSGT document the span is the edit's slices (the samples they reach may change) and every
block's frames over them (those the change reaches are re-analysed); the settle works on the
change of the sound (:func:`~spectropaint.transforms.settle_change.project_change`), with the
values before the edit.

The settled region is every frame whose analysis reads a sample the stroke's frames reach (three
frames either side for ``n_fft = 4 hop``), and the bins where the settle changed something by more
than :data:`UNCHANGED` of the span's largest coefficient; the samples that may change are those the
stroke's frames reach, so everything beyond stays bit-identical.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from spectropaint.brushes.history import History, Step, read_stacked
from spectropaint.brushes.pen_partial import PenPath, synthesise_partial
from spectropaint.transforms import fft_ops
from spectropaint.transforms.consistency import Span, project
from spectropaint.transforms.document import EditedRun, resynthesise
from spectropaint.transforms.phase_init import integrate_phase
from spectropaint.transforms.regions import EMPTY, Region
from spectropaint.transforms.settle_change import Edit, project_change
from spectropaint.transforms.torch_device import one_thread
from spectropaint.transforms.transform import Transform

WORK_CELLS = 3_000_000
"""Coefficient cells (frames x bins x channels of the span) all iterations may analyse together:
the iteration count follows the stroke's size, so that a settle takes about the same time
whatever the stroke (within 100 ms on 2 cores for a second of audio, measured in
``tests/benchmarks/bench_fidelity.py``), and is the same on every machine and run, so that a
recorded stroke replays to the same sound headless as in the window."""
ITERATIONS = (4, 32)
"""Fewest and most iterations."""


def iterations_for(cells: int) -> int:
    """How many iterations a settle of ``cells`` coefficient cells (all channels) gets (see
    :data:`WORK_CELLS`)."""
    return int(min(ITERATIONS[1], max(ITERATIONS[0], WORK_CELLS // max(1, cells))))


INTEGRATE_PHASE = True
"""Whether warp's settle may start from the phase integrated from the cells around the stroke
(:func:`.integrate_phase`, on a Hann-window STFT) where its analysis is nearer the painted
magnitude than the painted phase's: on the r24 warp of ``tests/benchmarks/bench_fidelity.py``
the settled spectral convergence goes from -15.5 to -16.7 dB, for 12 ms more. Clone's phase is
the source's, consistent already, and the pen synthesises its own."""


UNCHANGED = 1e-5
"""Cells that a settle changes by less than this fraction of the span's largest magnitude
(-100 dB) are not written: far from the stroke, re-analysis reproduces the stored values to
float32 rounding, and writing them would only grow the undo step."""


@dataclass
class SettleResult:
    """What :func:`apply_settle` writes: per part, the region and its settled magnitude and phase
    ``[2, C, bins, frames]``; and what it checks (the document's revision and the undo step)."""

    writes: list[tuple[Region, torch.Tensor]]
    revision: int
    step: Step | None
    iterations: int = 0
    residual_db: float = -math.inf
    seconds: float = 0.0

    @property
    def region(self) -> Region:
        """The box of everything written (``EMPTY`` if nothing)."""
        region = EMPTY
        for part, _ in self.writes:
            region = region.union(part)
        return region


@dataclass
class SettlePart:
    """What the settle of one span needs, copied from the document (see the module).

    Attributes
    ----------
    transform : Transform
        The document's transform when planned (immutable).
    samples, original : torch.Tensor, np.ndarray [shape=(C_doc, N)]
        The document's original samples (never written; read, not copied).
    channels : tuple of int
    span : Span
        The frames re-analysed (per block) and the samples that may change.
    runs : list of (block, EditedRun)
        Copies of the coefficients of the edited frames that reach the span's samples (as before
        the stroke, for the pen); none where the transform settles by change.
    current : list of torch.Tensor [shape=(2, C, F, frames)]
        The document's values over each piece of the span (to tell what the settle changes).
    boxes : list of Region
        The edit's boxes (one per block).
    targets : list of torch.Tensor [shape=(2, C, bins, frames)] or None
        Painted magnitude and phase on each box.
    weights : list of torch.Tensor [shape=(bins, frames)] or None
        How much each target holds on each cell of its box (:func:`imposed_weights`).
    befores : list of torch.Tensor [shape=(2, C, bins, frames)] or None
        Each box's values before the edit (where the transform settles by change).
    magnitude_only : bool
        Impose the targets' magnitude alone.
    pen : PenPath or None
        The pen's partial, synthesised instead of iterating (one block).
    iterations : int
        The most iterations (see :data:`WORK_CELLS`; where the transform settles by change,
        :func:`.project_change` counts its own).
    integrate : bool
        Start the iterations from the phase integrated from the cells around
        (:func:`.integrate_phase`) instead of the painted one.
    """

    transform: Transform
    samples: torch.Tensor
    original: np.ndarray
    channels: tuple[int, ...]
    span: Span
    runs: list[tuple[int, EditedRun]]
    current: list[torch.Tensor]
    boxes: list[Region]
    targets: list[torch.Tensor] | None
    weights: list[torch.Tensor] | None
    befores: list[torch.Tensor] | None
    magnitude_only: bool
    pen: PenPath | None
    iterations: int
    integrate: bool = False

    def compute(
        self, stop: Callable[[], bool] | None = None
    ) -> tuple[list[tuple[Region, torch.Tensor]], int, float]:
        """The regions changed with their settled values, the iterations made and the residual
        (dB); ``stop`` ends the iterations early (see :func:`~.consistency.project`)."""
        span = self.span
        if self.transform.settles_by_change:
            return self._by_change(stop)
        heard = self._heard(self.runs)
        iterations, residual_db = 0, -math.inf
        if self.pen is not None:
            free = slice(span.free0 - span.start, span.free1 - span.start)
            heard[:, free] += torch.from_numpy(
                synthesise_partial(self.pen, span.free0, span.free1)
            )[None, :]
            pieces = self.transform.analyse_pieces(heard, span.start, span.pieces, span.n_samples)
        else:
            target, weights = self._over_span()
            projection = project(
                self.transform,
                span,
                heard,
                target,
                weights,
                magnitude_only=self.magnitude_only,
                iterations=self.iterations,
                stop=stop,
                alternative=self._heard(self._integrated()) if self.integrate else None,
            )
            pieces = projection.coefficients
            iterations, residual_db = projection.iterations, projection.residual_db
        found = zip(self.span.pieces, pieces, self.current, strict=True)
        return (
            self._changed(
                [(block, lo, piece, current, 0) for (block, lo, _), piece, current in found]
            ),
            iterations,
            residual_db,
        )

    def _heard(self, runs: list[tuple[int, EditedRun]]) -> torch.Tensor:
        """The span's samples ``[C, stop - start]`` with ``runs`` resynthesised."""
        span = self.span
        return torch.from_numpy(
            resynthesise(
                self.transform,
                self.samples,
                self.original,
                span.start,
                span.stop,
                runs,
                channels=self.channels,
            )
        )

    def _integrated(self) -> list[tuple[int, EditedRun]]:
        """The runs with the phase of the imposed cells integrated from the cells around them
        (:func:`.integrate_phase`, on each box and the cells next to it)."""
        runs = []
        settings = self.transform.settings
        for block, run in self.runs:
            phase = run.phase
            for box, held in zip(self.boxes, self.weights, strict=True):
                b0, b1 = max(box.bin0 - 1, 0), min(box.bin1 + 1, run.magnitude.shape[1])
                t0 = max(box.frame0 - 1 - run.frame0, 0)
                t1 = min(box.frame1 + 1 - run.frame0, run.magnitude.shape[2])
                free = np.zeros((b1 - b0, t1 - t0), dtype=bool)
                inner = (
                    slice(box.bin0 - b0, box.bin1 - b0),
                    slice(box.frame0 - run.frame0 - t0, box.frame1 - run.frame0 - t0),
                )
                free[inner] = held.cpu().numpy() > 0
                if phase is run.phase:
                    phase = phase.clone()
                for c in range(phase.shape[0]):
                    filled = integrate_phase(
                        run.magnitude[c, b0:b1, t0:t1].cpu().numpy(),
                        phase[c, b0:b1, t0:t1].cpu().numpy(),
                        free,
                        bin0=b0,
                        n_fft=settings.n_fft,
                        hop=settings.hop,
                    )
                    phase[c, b0:b1, t0:t1] = torch.from_numpy(filled).to(phase)
            runs.append((block, EditedRun(run.frame0, run.magnitude, phase, run.edited)))
        return runs

    def _by_change(
        self, stop: Callable[[], bool] | None
    ) -> tuple[list[tuple[Region, torch.Tensor]], int, float]:
        """:meth:`compute` by the change of the sound (:func:`.project_change`)."""
        largest = max(float(current[0].max()) for current in self.current)
        projection = project_change(
            self.transform,
            self.span,
            self.current,
            self._edits(),
            floor=UNCHANGED * largest,
            magnitude_only=self.magnitude_only,
            stop=stop,
        )
        pieces = []
        for block, bin0, frame0, settled, number in projection.pieces:
            lo = self.span.pieces[number][1]
            bins, frames = settled.shape[1:]
            inside = (slice(bin0, bin0 + bins), slice(frame0 - lo, frame0 - lo + frames))
            pieces.append(
                (
                    block,
                    frame0,
                    settled,
                    self.current[number][(slice(None), slice(None), *inside)],
                    bin0,
                )
            )
        return self._changed(pieces, largest), projection.iterations, projection.residual_db

    def _edits(self) -> list[Edit]:
        """Per block, the bounding box of its boxes with their targets, weights and values
        before the edit (complex; later boxes over earlier ones)."""
        device = self.transform.device
        edits = []
        for block in sorted({box.block for box in self.boxes}):
            mine = [i for i, box in enumerate(self.boxes) if box.block == block]
            bound = self.boxes[mine[0]]
            for i in mine[1:]:
                bound = bound.union(self.boxes[i])
            shape = (len(self.channels), bound.bin1 - bound.bin0, bound.frame1 - bound.frame0)
            target = torch.zeros(shape, dtype=torch.complex64, device=device)
            before = torch.zeros_like(target)
            weight = torch.zeros(shape[1:], dtype=torch.float32, device=device)
            for i in mine:
                box = self.boxes[i]
                inside = (
                    slice(box.bin0 - bound.bin0, box.bin1 - bound.bin0),
                    slice(box.frame0 - bound.frame0, box.frame1 - bound.frame0),
                )
                target[(slice(None), *inside)] = fft_ops.polar_to_complex(
                    *self.targets[i].to(device)
                )
                before[(slice(None), *inside)] = fft_ops.polar_to_complex(
                    *self.befores[i].to(device)
                )
                weight[inside] = self.weights[i].to(device)
            edits.append((block, bound.bin0, bound.frame0, target, weight, before))
        return edits

    def _over_span(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Target and weights on the span's frames, flat: ``[C, K]`` and ``[K]`` (written in
        place through each piece's view; zero outside the boxes)."""
        device = self.transform.device
        shapes = self.span.cells(self.transform)
        size = sum(bins * frames for bins, frames in shapes)
        target = fft_ops.zeros((len(self.channels), size), torch.complex64, device)
        weight = fft_ops.zeros((size,), torch.float32, device)
        offset = 0
        for (block, lo, _), (bins, frames) in zip(self.span.pieces, shapes, strict=True):
            cells = slice(offset, offset + bins * frames)
            offset = cells.stop
            piece_target = target[:, cells].view(-1, bins, frames)
            piece_weight = weight[cells].view(bins, frames)
            for box, painted, held in zip(self.boxes, self.targets, self.weights, strict=True):
                if box.block != block:
                    continue
                inside = (slice(box.bin0, box.bin1), slice(box.frame0 - lo, box.frame1 - lo))
                painted = painted.to(device)
                piece_target[(slice(None), *inside)] = fft_ops.polar_to_complex(*painted)
                piece_weight[inside] = held.to(device)
        return target, weight

    def _changed(self, pieces, largest: float | None = None) -> list[tuple[Region, torch.Tensor]]:
        """Per piece ``(block, frame0, settled [C, b, T] complex, current [2, C, b, T], bin0)``
        (its bins from ``bin0``), the box of cells the settle changes (by more than
        :data:`UNCHANGED` of ``largest``, default the settled values' largest magnitude) and the
        settled magnitude and phase there (pieces where nothing changed are left out)."""
        polar = [fft_ops.polar(piece[2]) for piece in pieces]
        if largest is None:
            largest = max(float(magnitude.max()) for magnitude, _ in polar)
        writes = []
        for (block, lo, _, current, bin0), (magnitude, phase) in zip(pieces, polar, strict=True):
            current = current.to(magnitude.device)
            change = fft_ops.polar_distance(magnitude, phase, current[0], current[1])
            changed = change.amax(dim=0) > UNCHANGED * largest
            if not changed.any():
                continue
            rows = torch.nonzero(changed.any(dim=1)).flatten()
            columns = torch.nonzero(changed.any(dim=0)).flatten()
            b0, b1 = int(rows[0]), int(rows[-1]) + 1
            t0, t1 = int(columns[0]), int(columns[-1]) + 1
            box = (slice(None), slice(b0, b1), slice(t0, t1))
            region = Region(bin0 + b0, bin0 + b1, lo + t0, lo + t1, self.channels, block)
            writes.append((region, torch.stack((magnitude[box], phase[box]))))
        return writes


@dataclass
class SettlePlan:
    """One edit's settle: its parts (spans far enough apart to settle alone), the document's
    revision when planned and the edit's undo step."""

    parts: list[SettlePart]
    revision: int
    step: Step | None
    hurry: threading.Event = field(default_factory=threading.Event, compare=False)
    """Set (from any thread) to end the iterations at the next one: the result is then the
    analysis of what the edit sounds like so far, consistent but less close to what was painted."""

    def compute(self) -> SettleResult:
        """The settled values (any thread; reads only this plan and immutable samples; one torch
        thread, see :func:`~spectropaint.transforms.torch_device.one_thread`)."""
        began = time.perf_counter()
        writes, iterations, residual_db = [], 0, -math.inf
        with one_thread():
            for part in self.parts:
                written, done, residual = part.compute(self.hurry.is_set)
                writes += written
                iterations, residual_db = max(iterations, done), max(residual_db, residual)
        return SettleResult(
            writes,
            self.revision,
            self.step,
            iterations,
            residual_db,
            time.perf_counter() - began,
        )


def values_before(document, step: Step, box: Region) -> torch.Tensor:
    """``box``'s values ``[2, C, bins, frames]`` as they were before the edit of ``step`` (its
    atoms hold them where it wrote; the document elsewhere)."""
    values = read_stacked(document, box)
    for atom in step.atoms:
        if atom.region.block != box.block:
            continue
        part = atom.region.intersection(box)
        if part.empty:
            continue
        inside_atom = (
            slice(part.bin0 - atom.region.bin0, part.bin1 - atom.region.bin0),
            slice(part.frame0 - atom.region.frame0, part.frame1 - atom.region.frame0),
        )
        inside_box = (
            slice(part.bin0 - box.bin0, part.bin1 - box.bin0),
            slice(part.frame0 - box.frame0, part.frame1 - box.frame0),
        )
        values[(..., *inside_box)] = atom.values[(..., *inside_atom)].to(values.device)
    return values


def imposed_weights(painted: torch.Tensor, before: torch.Tensor) -> torch.Tensor:
    """Where an edit's painted values are imposed ``[bins, frames]``: 1 on every cell it changed
    in any channel, 0 (free) elsewhere.

    Weighting cells by how much they changed (so that soft rims are nearly free) was measured too:
    on the erase and gain probes of ``tests/benchmarks/bench_fidelity.py`` it erased less deep and
    lost more of the rims' energy.
    """
    return (painted != before).any(dim=0).any(dim=0).to(torch.float32)


def _targets(
    document, boxes: list[Region], befores: list[torch.Tensor]
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The targets of an edit of ``boxes`` (what they hold now) and their weights
    (:func:`imposed_weights`) given the values ``befores`` they held before it."""
    targets = [read_stacked(document, box) for box in boxes]
    return targets, [imposed_weights(t, b) for t, b in zip(targets, befores, strict=True)]


def _part(
    document,
    boxes: list[Region],
    targets: list[torch.Tensor] | None,
    weights: list[torch.Tensor] | None,
    *,
    magnitude_only: bool,
    befores: list[torch.Tensor] | None = None,
    pen: tuple[PenPath, torch.Tensor] | None = None,
) -> SettlePart:
    """The settle of ``boxes`` (one per block) towards ``targets`` held by ``weights``
    (:func:`_targets`); for the pen (one box), None and ``pen``: its path and the box's values
    before the stroke ``[2, C, b, f]``, to which the partial is added.
    """
    transform = document.transform
    n = document.n_samples
    channels = boxes[0].channels
    span = Span.around(transform, boxes, n)
    runs = []
    by_change = transform.settles_by_change
    for block in range(0 if by_change else len(document.blocks)):
        lo, hi = transform.frames_over(block, span.start, span.stop, n)
        run = document.edited_run(lo, hi, block=block, channels=channels) if hi > lo else None
        if run is not None:
            runs.append((block, run.copy()))
    current = [
        read_stacked(document, Region(0, document.blocks[block].n_bins, lo, hi, channels, block))
        for block, lo, hi in span.pieces
    ]
    path = None
    if pen is not None:
        # the partial is added to the sound the stroke began from, not to its preview
        (path, before), (box,), ((_, run),) = pen, boxes, runs
        inside = (slice(None), slice(box.bin0, box.bin1))
        frames = slice(box.frame0 - run.frame0, box.frame1 - run.frame0)
        run.magnitude[(*inside, frames)] = before[0]
        run.phase[(*inside, frames)] = before[1]
    cells = sum(bins * frames for bins, frames in span.cells(transform)) * len(channels)
    return SettlePart(
        transform=transform,
        samples=document.analysed_samples,
        original=document.audio.samples,
        channels=channels,
        span=span,
        runs=runs,
        current=current,
        boxes=boxes,
        targets=targets,
        weights=weights,
        befores=befores if by_change else None,
        magnitude_only=magnitude_only,
        pen=path,
        iterations=iterations_for(cells),
    )


def plan_settle(stroke) -> SettlePlan | None:
    """The plan of a finished stroke's settle; None when the stroke changed nothing."""
    boxes = list(stroke.region.parts)
    document = stroke.document
    if not boxes or not document.transform.supports_settle:
        return None
    state = stroke.state
    step = stroke.committed
    befores = [
        state.step.original(box) if step is None else values_before(document, step, box)
        for box in boxes
    ]
    magnitude_only = not state.kind.settles_phase
    if state.kind.name == "pen" and len(document.blocks) == 1:
        pen = (PenPath.of_stroke(stroke), befores[0])
        part = _part(document, boxes, None, None, magnitude_only=magnitude_only, pen=pen)
    else:  # on the NSGT, the pen's painting settles as a target
        targets, weights = _targets(document, boxes, befores)
        part = _part(
            document, boxes, targets, weights, magnitude_only=magnitude_only, befores=befores
        )
        window = getattr(getattr(document.transform, "settings", None), "window", None)
        part.integrate = INTEGRATE_PHASE and state.kind.name == "warp" and window == "hann"
    return SettlePlan([part], document.revision, step)


def plan_edit_settle(document, step: Step | None, regions: list[Region]) -> SettlePlan | None:
    """The settle of an operation that wrote ``regions`` as undo ``step`` (just committed).

    Regions whose spans meet settle together (their bounding box, the cells between free), others
    each alone. The painted phase is imposed too where the operation kept the phase of every cell
    it changed (gain, erase: complex values by conjugate gradients); elsewhere (heal, fill, paste,
    an image) the magnitude alone. None when nothing changed, or without the step (the values
    before the operation are in it).
    """
    transform = document.transform
    boxes = [box for box in regions if not box.empty]
    if step is None or not boxes or not transform.supports_settle:
        return None
    channels = tuple(sorted({c for box in boxes for c in box.channels}))
    n = document.n_samples
    groups: list[tuple[dict[int, Region], Span]] = []
    for box in sorted(
        boxes, key=lambda box: transform.samples_reached(box.block, box.frame0, box.frame1, n)
    ):
        box = Region(box.bin0, box.bin1, box.frame0, box.frame1, channels, box.block)
        span = Span.around(transform, [box], n)
        if groups and span.start < groups[-1][1].stop:
            merged = groups[-1][0]
            merged[box.block] = merged[box.block].union(box) if box.block in merged else box
            groups[-1] = (merged, Span.around(transform, list(merged.values()), n))
        else:
            groups.append(({box.block: box}, span))
    parts = []
    for merged, _ in groups:
        boxes = [merged[block] for block in sorted(merged)]
        befores = [values_before(document, step, box) for box in boxes]
        nows, weights = _targets(document, boxes, befores)
        if not any(weight.any() for weight in weights):
            continue
        kept = all(
            torch.equal(now[1][:, weight > 0], before[1][:, weight > 0])
            for now, before, weight in zip(nows, befores, weights, strict=True)
        )
        parts.append(
            _part(document, boxes, nows, weights, magnitude_only=not kept, befores=befores)
        )
    return SettlePlan(parts, document.revision, step) if parts else None


def plan_operation_settle(
    history: History, changed: Region, regions: list[Region]
) -> SettlePlan | None:
    """:func:`plan_edit_settle` of the operation that just wrote ``regions`` (``changed`` in all)
    as the latest step of ``history`` (call under the same lock, before anything else writes)."""
    if changed.empty or not history.undo_steps:
        return None  # nothing changed, or the step went over the history's budget
    return plan_edit_settle(history.document, history.undo_steps[-1], regions)


def apply_settle(document, history: History | None, result: SettleResult | None) -> Region:
    """Write a settle's result and record it into its edit's undo step; the region written.

    ``EMPTY`` when there is nothing to write or the result is stale: the document was written since
    the plan (its revision moved), or the edit's step is no longer the latest undo step. The
    caller tells its listeners (the session emits a ``settle`` change).
    """
    if result is None or not result.writes or document.revision != result.revision:
        return EMPTY
    if history is not None and result.step is not None:
        for index, (region, _) in enumerate(result.writes):
            # False at the first: stale; later (the grown step went over the budget): write on
            if not history.amend_top(result.step, region) and index == 0:
                return EMPTY
    for region, values in result.writes:
        document.write(region, values[0], values[1])
    return result.region


def settle_now(document, history: History | None, plan: Callable[[], SettlePlan | None]) -> Region:
    """Plan, compute and apply a settle at once (the command line, a replay); the region written.

    Should the device run out of memory, the document continues on the CPU and settles there.
    """

    def settled() -> SettleResult | None:
        found = plan()
        return None if found is None else found.compute()

    return apply_settle(document, history, document.on_cpu_after_oom("settling", settled))
