"""Operations on NSGT documents: the selection (seconds and Hz) rasterised on every block, each
block acted on over its own frames and bands; judged on the output audio (re-analysed by a windowed
DFT), with everything outside the selection's blocks and cells kept bit for bit."""

import numpy as np
import torch
from repair_measures import analysed, residual_drop_db
from test_nsgt_document import RATE, SETTINGS, level_db, tones

from spectropaint.brushes.history import History
from spectropaint.brushes.operations import Clipboard, apply_plans, plan_operation
from spectropaint.brushes.restoration import Click, click_selection
from spectropaint.transforms.document import Document
from spectropaint.transforms.selection import (
    Selection,
    rasterise,
    rasterise_blocks,
    selection_audio,
)
from spectropaint.transforms.shapes import Rectangle


def snapshot(document):
    return [torch.stack((b.magnitude, b.phase)).clone() for b in document.blocks]


def run(document, selection, name, params=None, *, clipboard=None, history=None):
    masks = rasterise_blocks(selection, document) if selection is not None else None
    plans = plan_operation(document, masks, name, params, clipboard=clipboard or Clipboard())
    return apply_plans(document, plans, label=name, history=history), masks


def untouched_outside(document, before, masks) -> bool:
    """Every cell of weight 0 (every cell of a block no mask reaches) is bit-identical."""
    weights = {mask.region.block: mask for mask in masks}
    for index, (block, old) in enumerate(zip(document.blocks, before, strict=True)):
        now = torch.stack((block.magnitude, block.phase))
        keep = torch.ones(now.shape[-2:], dtype=torch.bool)
        if index in weights:
            r = weights[index].region
            keep[r.bin0 : r.bin1, r.frame0 : r.frame1] = weights[index].weight == 0
        if not torch.equal(now[:, :, keep], old[:, :, keep]):
            return False
    return True


def test_a_rectangle_gain_acts_on_every_block_it_covers_and_nowhere_else():
    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    before = snapshot(document)
    changed, masks = run(
        document, Selection.of(Rectangle(4.0, 6.0, 300.0, 600.0)), "gain", {"gain_db": -40.0}
    )
    assert {mask.region.block for mask in masks} == {4, 5, 6, 7}  # 300-600 Hz: two groups' pairs
    assert {part.block for part in changed.parts} == {4, 5, 6, 7}
    assert untouched_outside(document, before, masks)
    out, original = document.edited_samples(), document.audio.samples
    drop = level_db(out[0], 440.0, 4.5, 5.5) - level_db(original[0], 440.0, 4.5, 5.5)
    assert -40.5 < drop < -38.0
    for channel, hz, t0, t1 in (
        (0, 110.0, 4.5, 5.5),
        (0, 440.0, 0.5, 1.5),
        (0, 440.0, 9.0, 10.0),
        (1, 1000.0, 4.5, 5.5),
    ):
        change = level_db(out[channel], hz, t0, t1) - level_db(original[channel], hz, t0, t1)
        assert abs(change) < 0.1, (channel, hz, t0, change)


def test_heal_removes_a_click_from_an_nsgt_document_and_undo_is_exact():
    """Each block's selection reaches the click's spread in that block (its own hop)."""
    clean = tones()
    rng = np.random.default_rng(5)
    damaged = clean.copy()
    at, n = int(5.0 * RATE), int(0.03 * RATE)
    decay = np.exp(-np.arange(n) / (0.008 * RATE))
    damaged[:, at : at + n] += 0.3 * rng.standard_normal((2, n)) * decay
    document = Document.from_samples(damaged, RATE, settings=SETTINGS, device="cpu")
    history = History(document)
    before = snapshot(document)
    click = Click(5.0, 5.03, 5.0, 1.0)
    masks, plans = [], []
    for block in range(len(document.blocks)):
        selection = click_selection(document, click, block=block, low_hz=0.0)
        masks.append(rasterise(selection, document, block=block))
        plans += plan_operation(
            document, masks[-1], "heal", {"mode": "partials"}, clipboard=Clipboard()
        )
    apply_plans(document, plans, label="heal", history=history)
    assert untouched_outside(document, before, masks)
    out = document.edited_samples()
    span = slice(int(4.7 * RATE), int(5.3 * RATE))
    click_energy = np.sum((damaged[:, span] - clean[:, span]) ** 2)
    left = np.sum((out[:, span] - clean[:, span]) ** 2)
    assert 10 * np.log10(click_energy / left) > 12  # on the waveform: phase errors count too
    for channel, hz in ((0, 440.0), (0, 110.0), (1, 1000.0)):
        change = level_db(out[channel], hz, 4.9, 5.15) - level_db(clean[channel], hz, 4.9, 5.15)
        assert abs(change) < 0.8, (hz, change)
    history.undo()
    assert all(torch.equal(a, b) for a, b in zip(snapshot(document), before, strict=True))


def test_copy_and_paste_move_a_passage_on_an_nsgt_document():
    t = np.arange(10 * RATE) / RATE
    burst = np.where((t > 2.0) & (t < 3.0), 0.2 * np.sin(2 * np.pi * 440.0 * t), 0.0)
    document = Document.from_samples(burst, RATE, settings=SETTINGS, device="cpu")
    clipboard = Clipboard()
    run(document, Selection.of(Rectangle(1.8, 3.2, 300.0, 600.0)), "copy", clipboard=clipboard)
    assert len(clipboard.clips) == 4
    before = snapshot(document)
    changed, _ = run(document, None, "paste", {"at_seconds": 6.3}, clipboard=clipboard)
    assert {part.block for part in changed.parts} == {4, 5, 6, 7}
    out = document.edited_samples()[0]
    source = level_db(burst, 440.0, 2.2, 2.8)
    pasted = level_db(out, 440.0, 6.7, 7.3)
    assert abs(pasted - source) < 1.0
    assert abs(level_db(out, 440.0, 2.2, 2.8) - source) < 0.01  # the source stays
    assert level_db(out, 440.0, 4.5, 5.5) < source - 60
    for index in set(range(len(document.blocks))) - {4, 5, 6, 7}:
        assert torch.equal(
            torch.stack((document.blocks[index].magnitude, document.blocks[index].phase)),
            before[index],
        )


def test_auditioning_a_selection_on_an_nsgt_document_plays_every_block_it_reaches():
    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    masks = rasterise_blocks(Selection.of(Rectangle(3.0, 7.0, 300.0, 600.0)), document)
    first, samples = selection_audio(document, masks)
    t = np.arange(samples.shape[-1]) / RATE + first / RATE
    middle = (t > 4.0) & (t < 6.0)
    expected = 0.3 * np.sin(2 * np.pi * 440 * t[middle])  # the 440 Hz tone, not the 110 Hz one
    error = samples[0, middle] - expected
    assert 10 * np.log10(np.sum(expected**2) / np.sum(error**2)) > 25
    assert level_db(samples[0], 110.0, 4.0 - first / RATE, 6.0 - first / RATE) < -60


def test_pattern_heal_on_an_nsgt_document_takes_the_click_away():
    """The pattern's frames are copied from other times of the slice, whose slice weights differ:
    each is brought to the weight of the frame it fills."""
    clean = tones()
    rng = np.random.default_rng(5)
    damaged = clean.copy()
    at, n = int(5.0 * RATE), int(0.03 * RATE)
    damaged[:, at : at + n] += 0.3 * rng.standard_normal((2, n)) * np.exp(-np.arange(n) / 176.0)
    document = Document.from_samples(damaged, RATE, settings=SETTINGS, device="cpu")
    run(document, Selection.of(Rectangle(4.97, 5.06, 0.0, RATE / 2)), "heal", {"mode": "pattern"})
    out = document.edited_samples()
    # the click's broadband energy, where channel 0 has no tone (above 1.5 kHz), by an STFT
    seconds = Document.from_samples(clean[:1], RATE, device="cpu").blocks[0].frame_seconds
    hz = Document.from_samples(clean[:1], RATE, device="cpu").blocks[0].band_hz
    before, after, truth = (analysed(x[:1], RATE)[0] for x in (damaged, out, clean))
    where = np.ix_(hz > 1500, (seconds > 4.9) & (seconds < 5.15))
    drop = residual_drop_db(before[where], after[where], truth[where])
    assert drop > 20
    for channel, tone in ((0, 440.0), (0, 110.0), (1, 1000.0)):
        change = level_db(out[channel], tone, 4.9, 5.15) - level_db(clean[channel], tone, 4.9, 5.15)
        assert abs(change) < 1.0, (tone, change)
