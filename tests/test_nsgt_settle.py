"""The settle on NSGT documents: an edit's slices are resynthesised and every slice over them
re-analysed, with the target imposed; judged on the re-analysed output."""

import numpy as np
import pytest
import torch
from test_nsgt_document import RATE, SETTINGS, level_db, tones

from spectropaint.app.session import Session
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import apply_settle
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.consistency import MOMENTUM, Span, project
from spectropaint.transforms.document import Document
from spectropaint.transforms.nsgt import NSGT
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.regions import Region

BRUSH = BrushSettings(radius_seconds=0.4, radius_semitones=1.5, hardness=1.0)
ALONG_440 = [InputEvent(0.01 * i, 4.0 + 0.1 * i, 440.0) for i in range(41)]
"""From 4 to 8 s along the left channel's 440 Hz tone."""


SECONDS = 24.0
"""Long enough that the settle's slices are a part of it."""


def nsgt_document():
    return Document.from_samples(tones(SECONDS), RATE, settings=SETTINGS, device="cpu")


def blocks(document):
    return [torch.stack((b.magnitude, b.phase)).clone() for b in document.blocks]


def mismatch_db(document) -> float:
    """Energy of what the canvas shows minus the analysis of what is heard, relative to the
    latter, dB (every block)."""
    heard = document.transform.analyse(torch.from_numpy(document.edited_samples()))
    error = sum(
        float((torch.polar(block.magnitude, block.phase) - analysed).abs().pow(2).sum())
        for block, analysed in zip(document.blocks, heard, strict=True)
    )
    return 10 * np.log10(error / sum(float(a.abs().pow(2).sum()) for a in heard))


def painted(brush, params=None):
    """A document with a stroke of ``brush`` along the 440 Hz tone, not settled yet; its stroke
    and history."""
    document = nsgt_document()
    history = History(document)
    stroke = StrokeSession(document, brush, BRUSH, params=params, history=history)
    for event in ALONG_440:
        stroke.add_events([event])
    stroke.end()
    return document, stroke, history


@pytest.mark.parametrize("brush, params, change_db", [("erase", {}, -60.0), ("gain", None, -40.0)])
def test_an_nsgt_erase_and_gain_reach_their_targets_on_what_is_heard(brush, params, change_db):
    params = params if params is not None else {"gain_db": -40.0}
    document, stroke, history = painted(brush, params)
    assert mismatch_db(document) > -40  # as painted, the canvas is not what is heard
    apply_settle(document, history, stroke.settle_plan().compute())
    assert mismatch_db(document) < -100
    out, original = document.edited_samples(), tones(SECONDS)
    change = level_db(out[0], 440.0, 5.0, 7.0) - level_db(original[0], 440.0, 5.0, 7.0)
    if brush == "erase":
        assert change <= change_db
    else:
        assert abs(change - change_db) < 1.0
    # the other tones are kept: 110 Hz beside it, and the right channel
    assert abs(level_db(out[0], 110.0, 5.0, 7.0) - level_db(original[0], 110.0, 5.0, 7.0)) < 0.5
    assert abs(level_db(out[1], 1000.0, 5.0, 7.0) - level_db(original[1], 1000.0, 5.0, 7.0)) < 0.1


def test_a_settled_nsgt_stroke_undoes_and_redoes_bit_for_bit_and_touches_only_its_slices():
    document = nsgt_document()
    session = Session(document)
    before = blocks(document)
    session.begin_stroke("erase", BRUSH, {}, ALONG_440[0])
    for event in ALONG_440[1:]:
        session.paint(event)
    session.end_stroke()
    session.wait_settled()
    settled = blocks(document)
    assert mismatch_db(document) < -100
    out = document.edited_samples()
    start, stop = document.edited_sample_spans()[0]
    assert len(document.edited_sample_spans()) == 1
    assert np.array_equal(out[:, :start], tones(SECONDS)[:, :start])
    assert np.array_equal(out[:, stop:], tones(SECONDS)[:, stop:])
    assert stop - start < 0.6 * out.shape[-1]  # its slices and their neighbours only
    session.undo()
    assert all(torch.equal(a, b) for a, b in zip(blocks(document), before, strict=True))
    session.redo()
    assert all(torch.equal(a, b) for a, b in zip(blocks(document), settled, strict=True))
    session.close()


def test_an_operation_on_an_nsgt_selection_is_settled_over_every_block():
    from spectropaint.transforms.selection import Selection
    from spectropaint.transforms.shapes import Rectangle

    session = Session(nsgt_document())
    session.set_selection(Selection.of(Rectangle(4.0, 8.0, 400.0, 480.0)))
    session.apply_to_selection("gain", {"gain_db": -40.0})
    session.wait_settled()
    assert mismatch_db(session.document) < -100
    out, original = session.document.edited_samples(), tones(SECONDS)
    change = level_db(out[0], 440.0, 5.0, 7.0) - level_db(original[0], 440.0, 5.0, 7.0)
    assert abs(change + 40.0) < 1.0
    assert abs(level_db(out[1], 1000.0, 5.0, 7.0) - level_db(original[1], 1000.0, 5.0, 7.0)) < 0.1
    session.close()


def test_projections_by_difference_follow_the_whole_resynthesis_they_replace():
    """Alternating projections synthesise only the imposed cells' change and read only their
    frames; the plain algorithm (impose, resynthesise every piece, re-analyse every piece) computed
    here gives the same coefficients to float32 rounding, on every block."""
    transform = NSGT(NSGTSettings(bins_per_octave=12, fmin=200.0), RATE)
    n = 4 * RATE
    signal = torch.from_numpy(np.random.default_rng(4).standard_normal((2, n)).astype(np.float32))
    block = 6  # a group in the middle, even slices
    frames = transform.layout(n)[block].n_frames
    box = Region(3, 9, frames // 2 - 20, frames // 2 + 20, (0, 1), block)
    span = Span.around(transform, [box], n)
    shapes = span.cells(transform)
    weights = []
    for (piece_block, lo, hi), (bins, _) in zip(span.pieces, shapes, strict=True):
        weight = torch.zeros(bins, hi - lo)
        if piece_block == block:
            weight[box.bin0 : box.bin1, box.frame0 - lo : box.frame1 - lo] = 0.5  # relaxed
        weights.append(weight.flatten())
    weights = torch.cat(weights)
    samples = signal[:, span.start : span.stop]
    target = torch.zeros((2, weights.numel()), dtype=torch.complex64)  # an erase, relaxed
    found = project(transform, span, samples, target, weights, iterations=4, tolerance=0.0)
    assert found.iterations == 4

    # the plain algorithm
    cells = weights > 0
    free = slice(span.free0 - span.start, span.free1 - span.start)
    current = samples.clone()

    def analysed() -> torch.Tensor:
        return torch.cat(
            [
                transform.analyse_span(current, span.start, b, lo, hi, n).flatten(1)
                for b, lo, hi in span.pieces
            ],
            dim=1,
        )

    coefficients, previous = analysed(), None
    for _ in range(4):
        fixed = coefficients[:, cells] + 0.5 * (target[:, cells] - coefficients[:, cells])
        coefficients[:, cells] = (
            fixed if previous is None else fixed + MOMENTUM * (fixed - previous)
        )
        previous = fixed
        parts = torch.split(coefficients, [b * t for b, t in shapes], dim=1)
        pieces = [
            (b, lo, part.view(2, *shape))
            for (b, lo, _), part, shape in zip(span.pieces, parts, shapes, strict=True)
        ]
        first, out = transform.synthesise_many(pieces, n)
        current[:, free] = out[:, span.free0 - first : span.free1 - first]
        coefficients = analysed()
    ours = torch.cat([part.flatten(1) for part in found.coefficients], dim=1)
    error = float((ours - coefficients).abs().pow(2).sum() / coefficients.abs().pow(2).sum())
    assert 10 * np.log10(error) < -100
    assert float(coefficients[:, cells].abs().max()) < 0.1 * float(ours.abs().max())  # it erased
