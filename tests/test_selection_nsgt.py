"""Selections measured on the sound of an NSGT document (every block, in seconds and Hz: its
block 0 is the 0 Hz band alone): a harmonic selection's pitch track and the magic wand, judged on
the output audio re-analysed by an STFT."""

import numpy as np
from music_fixtures import RATE, harmonic_tone
from repair_measures import analysed
from test_nsgt_document import SETTINGS

from spectropaint.brushes.operations import Clipboard, apply_plans, plan_operation
from spectropaint.transforms.document import Document
from spectropaint.transforms.selection import Selection, rasterise_blocks, resolve
from spectropaint.transforms.shapes import Harmonic, Wand
from spectropaint.transforms.sound_analysis import track_fundamental


def act(document, selection, name, params):
    masks = rasterise_blocks(resolve(selection, document), document)
    plans = plan_operation(document, masks, name, params, clipboard=Clipboard())
    apply_plans(document, plans, label=name)
    return masks


def stft_levels(samples):
    """``(seconds [T], hz [B], magnitude [B, T])`` of mono ``samples`` by the default STFT."""
    document = Document.from_samples(samples, RATE, device="cpu")
    block = document.blocks[0]
    return block.frame_seconds, np.asarray(block.band_hz), analysed(samples, RATE)[0]


def energy_db(magnitude, where):
    return 10 * np.log10(np.sum(magnitude[where] ** 2) + 1e-30)


def test_a_harmonic_selection_on_an_nsgt_document_takes_all_ten_harmonics_and_only_them():
    t = np.arange(3 * RATE) / RATE
    voice = 0.05 * harmonic_tone(t, 220.0, harmonics=10, vibrato_cents=50.0, rolloff=0.85)
    other = 0.02 * np.sin(2 * np.pi * 2530.0 * t)  # between harmonics 11 and 12
    noise = 0.0005 * np.random.default_rng(2).standard_normal(len(t))
    document = Document.from_samples(voice + other + noise, RATE, settings=SETTINGS, device="cpu")
    seconds, track = track_fundamental(document, 0.2, 2.8, 220.0, 10)
    true = 220.0 * 2 ** (50 / 1200 * np.sin(2 * np.pi * 5.0 * seconds))
    assert np.abs(1200 * np.log2(track / true)).max() < 15  # the vibrato followed, in cents
    masks = act(
        document, Selection.of(Harmonic(0.2, 2.8, 220.0, 10, 50.0)), "gain", {"gain_db": -40.0}
    )
    assert len(masks) > 4  # the harmonics span several groups of bands
    seconds, hz, before = stft_levels(voice + other + noise)
    after = analysed(document.edited_samples(), RATE)[0]
    alone = analysed(voice, RATE)[0]
    # over the whole length, a quarter of a second at a time, each harmonic's lobe drops (less
    # for the fundamental near the ends: its band's long cells reach the sound outside)
    for start in np.arange(0.3, 2.6, 0.2):
        columns = np.flatnonzero((seconds >= start) & (seconds < min(start + 0.2, 2.7)))
        pitch = 220.0 * 2 ** (50 / 1200 * np.sin(2 * np.pi * 5.0 * seconds[columns]))
        for h in range(1, 11):
            lobe = np.zeros(before.shape, dtype=bool)
            lobe[:, columns] = np.abs(hz[:, None] - h * pitch[None, :]) <= 2 * (hz[1] - hz[0])
            drop = energy_db(alone, lobe) - energy_db(after, lobe)
            edge = h == 1 and not 0.5 <= start < 2.5
            assert drop > (10 if edge else 20), (start, h, drop)
    columns = (seconds > 0.3) & (seconds < 2.7)
    near = np.zeros(before.shape, dtype=bool)
    near[np.abs(hz - 2530.0) < 60] = True
    near[:, ~columns] = False
    assert abs(energy_db(after, near) - energy_db(before, near)) < 0.5  # the rest is kept


def test_the_wand_on_an_nsgt_document_takes_the_loud_partial_and_not_its_neighbour():
    t = np.arange(3 * RATE) / RATE
    gate = np.clip(np.minimum(t - 0.8, 2.2 - t) / 0.05, 0, 1)
    loud = 0.1 * gate * np.sin(2 * np.pi * 440.0 * t)
    neighbour = 0.02 * gate * np.sin(2 * np.pi * 587.3 * t)  # five semitones up
    noise = 0.001 * np.random.default_rng(1).standard_normal(len(t))
    samples = loud + neighbour + noise
    document = Document.from_samples(samples, RATE, settings=SETTINGS, device="cpu")
    masks = act(document, Selection.of(Wand(1.5, 440.0, 20.0)), "erase", None)
    holding = {i for i, b in enumerate(document.blocks) if b.band_hz[0] < 440 < b.band_hz[-1]}
    assert len(holding) == 2 and holding <= {mask.region.block for mask in masks}  # both parities
    seconds, hz, before = stft_levels(samples)
    after = analysed(document.edited_samples(), RATE)[0]
    columns = (seconds > 1.0) & (seconds < 2.0)
    for tone, change in ((440.0, (-np.inf, -30.0)), (587.3, (-0.5, 0.5))):
        where = np.zeros(before.shape, dtype=bool)
        where[np.abs(hz - tone) < 15] = True
        where[:, ~columns] = False
        drop = energy_db(after, where) - energy_db(before, where)
        assert change[0] < drop < change[1], (tone, drop)
