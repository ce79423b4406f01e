"""The NSGT's settle by the change of the sound (transforms/settle_change.py,
transforms/nsgt_local.py): the slice-spectrum model against the exact synthesis and analysis, the
bands its analysis leaves out against the whole analysis, and an erase across a slice
cross-fade judged on what is heard."""

import numpy as np
import torch
from test_nsgt_document import RATE, SETTINGS, level_db, tones

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import apply_settle
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.consistency import Span
from spectropaint.transforms.document import Document
from spectropaint.transforms.nsgt import NSGT
from spectropaint.transforms.nsgt_local import SliceModel
from spectropaint.transforms.regions import Region

N_SAMPLES = 12 * RATE
BLOCK = 6  # group 3, even slices


def db(error: torch.Tensor, reference: torch.Tensor) -> float:
    ratio = float(error.abs().pow(2).sum()) / float(reference.abs().pow(2).sum())
    return 10 * np.log10(max(ratio, 1e-30))


def box_in_slice(transform: NSGT, slice_of_parity: int, bins: slice, share: tuple[float, float]):
    """A mask of a block's bands ``bins`` over ``share`` (fractions) of one slice's frames."""
    m = transform.group_tensors[transform.group_of(BLOCK)[0]].m
    frame0 = slice_of_parity * m + int(share[0] * m)
    frame1 = slice_of_parity * m + int(share[1] * m)
    mask = torch.zeros(bins.stop - bins.start, frame1 - frame0, dtype=torch.bool)
    mask[1:-1, 2:-2] = True  # not a rectangle
    return frame0, frame1, mask


def exact(transform: NSGT, bin0: int, frame0: int, mask: torch.Tensor, change: torch.Tensor):
    """Synthesis of ``change`` on the cells, then analysis there, by the whole transform."""
    bins = transform.layout(N_SAMPLES)[BLOCK].n_bins
    part = torch.zeros((change.shape[0], bins, mask.shape[1]), dtype=torch.complex64)
    part[:, bin0 : bin0 + mask.shape[0]][:, mask] = change
    first, samples = transform.synthesise_many([(BLOCK, frame0, part)], N_SAMPLES)
    signal = torch.zeros((change.shape[0], N_SAMPLES))
    signal[:, first : first + samples.shape[-1]] = samples
    (found,) = transform.analyse_pieces(
        signal, 0, [(BLOCK, frame0, frame0 + mask.shape[1])], N_SAMPLES
    )
    return found[:, bin0 : bin0 + mask.shape[0]][:, mask], first, samples


def random_change(mask: torch.Tensor, seed: int = 5) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    count = int(mask.sum())
    values = rng.standard_normal((2, count)) + 1j * rng.standard_normal((2, count))
    return torch.from_numpy(values.astype(np.complex64))


def test_the_model_is_the_exact_synthesis_then_analysis_in_a_slice_s_flat_middle():
    transform = NSGT(SETTINGS, RATE)
    frame0, _, mask = box_in_slice(transform, 2, slice(4, 14), (0.4, 0.6))
    change = random_change(mask)
    wanted, _, _ = exact(transform, 4, frame0, mask, change)
    model = SliceModel(transform, [(BLOCK, 4, frame0, mask)])
    found = model.apply(change)
    assert db(found - wanted, wanted) < -60
    # in a slice's cross-fade the model leaves out the window: near, not exact
    frame0, _, mask = box_in_slice(transform, 2, slice(4, 14), (0.7, 0.8))
    change = random_change(mask)
    wanted, _, _ = exact(transform, 4, frame0, mask, change)
    found = SliceModel(transform, [(BLOCK, 4, frame0, mask)]).apply(change)
    assert -60 < db(found - wanted, wanted) < 0


def test_the_change_s_analysis_leaves_out_only_bands_it_moves_less_than_the_floor():
    transform = NSGT(SETTINGS, RATE)
    frame0, frame1, mask = box_in_slice(transform, 2, slice(4, 14), (0.4, 0.6))
    _, first, samples = exact(transform, 4, frame0, mask, random_change(mask))
    box = Region(4, 14, frame0, frame1, (0, 1), BLOCK)
    span = Span.around(transform, [box], N_SAMPLES)
    signal = torch.zeros((2, N_SAMPLES))
    signal[:, first : first + samples.shape[-1]] = samples
    whole = transform.analyse_pieces(signal, 0, list(span.pieces), N_SAMPLES)
    floor = 1e-5 * max(float(piece.abs().max()) for piece in whole)
    model = SliceModel(transform, [(BLOCK, 4, frame0, mask)])
    found = model.analyse_change(samples, first, list(span.pieces), floor)
    covered = [torch.zeros(piece.shape[1:], dtype=torch.bool) for piece in whole]
    for _, bin0, start, coefficients, number in found:
        lo = span.pieces[number][1]
        inside = (
            slice(bin0, bin0 + coefficients.shape[1]),
            slice(start - lo, start - lo + coefficients.shape[2]),
        )
        reference = whole[number][(slice(None), *inside)]
        assert db(coefficients - reference, reference) < -100
        covered[number][inside] = True
    left_out = max(
        float(piece.abs()[:, ~mask_].max()) if (~mask_).any() else 0.0
        for piece, mask_ in zip(whole, covered, strict=True)
    )
    assert left_out < floor
    assert sum(int(c.sum()) for c in covered) < 0.5 * sum(c.numel() for c in covered)


def test_an_erase_across_a_slice_cross_fade_is_heard_60_db_down():
    # slices are 2.97 s, 1.49 s apart: slice 3 fades into slice 4 from 5.0 to 5.4 s
    document = Document.from_samples(tones(12.0), RATE, settings=SETTINGS, device="cpu")
    history = History(document)
    brush = BrushSettings(radius_seconds=0.4, radius_semitones=1.5, hardness=1.0)
    stroke = StrokeSession(document, "erase", brush, history=history)
    for i in range(41):
        stroke.add_events([InputEvent(0.01 * i, 4.2 + 0.05 * i, 440.0)])
    stroke.end()
    apply_settle(document, history, stroke.settle_plan().compute())
    out, original = document.edited_samples(), tones(12.0)
    change = level_db(out[0], 440.0, 4.8, 5.6) - level_db(original[0], 440.0, 4.8, 5.6)
    assert change <= -60
    assert abs(level_db(out[0], 110.0, 4.8, 5.6) - level_db(original[0], 110.0, 4.8, 5.6)) < 0.5
    heard = document.transform.analyse(torch.from_numpy(out))
    shown = [torch.polar(block.magnitude, block.phase) for block in document.blocks]
    error = sum(float((s - h).abs().pow(2).sum()) for s, h in zip(shown, heard, strict=True))
    assert 10 * np.log10(error / sum(float(h.abs().pow(2).sum()) for h in heard)) < -100
