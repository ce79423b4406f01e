"""De-click and de-hum on synthesised music (tests/music_fixtures.py), judged on what is heard."""

import numpy as np
from music_fixtures import RATE, insert_clicks, music
from repair_measures import analysed, heard, log_spectral_distance, residual_drop_db

from spectropaint.brushes.history import History
from spectropaint.brushes.operations import Clipboard, apply_plans, plan_operation
from spectropaint.brushes.restoration import declick_plans, dehum_selection, find_clicks
from spectropaint.transforms.document import Document
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.selection import rasterise, resolve

NSGT_SETTINGS = NSGTSettings(bins_per_octave=24, fmin=55.0)


def matches(clicks, times, tolerance=0.03):
    hits = sum(any(abs(c.peak_seconds - t) < tolerance for c in clicks) for t in times)
    false = sum(not any(abs(c.peak_seconds - t) < tolerance for t in times) for c in clicks)
    return hits, false


def assert_clicks_lowered(seconds, times, before, repaired, reference):
    """Over the STFT frames (centred at ``seconds``) within 30 ms of a click, the damage falls
    more than 3 dB and the log-spectral distance to the clean sound more than 1.5 dB."""
    near = np.zeros(len(seconds), dtype=bool)
    for at in times:
        near |= np.abs(seconds - at) < 0.03
    # short clicks (1 to 4 ms) in dense music: a click's frames hold about as much music as click,
    # and what healing rebuilds of the music is not the music itself
    drop = residual_drop_db(before[:, near], repaired[:, near], reference[:, near])
    assert drop > 3
    distance = log_spectral_distance(repaired[:, near], reference[:, near])
    assert distance < log_spectral_distance(before[:, near], reference[:, near]) - 1.5


def test_the_declicker_finds_95_percent_of_50_clicks_in_music_with_at_most_2_false_ones():
    clean = music(20.0, seed=1)
    damaged, times = insert_clicks(clean, 50, seed=2)
    clicks = find_clicks(Document.from_samples(damaged, RATE, device="cpu"))
    hits, false = matches(clicks, times)
    assert hits >= 48 and false <= 2, (hits, false)
    assert len(find_clicks(Document.from_samples(clean, RATE, device="cpu"))) <= 2


def test_declicking_heals_every_click_found_in_one_undo_step():
    clean = music(6.0, seed=4)
    damaged, times = insert_clicks(clean, 12, seed=5)
    document = Document.from_samples(damaged, RATE, device="cpu")
    history = History(document)
    clicks = find_clicks(document)
    assert matches(clicks, times)[0] >= 11
    apply_plans(document, declick_plans(document, clicks), label="de-click", history=history)
    assert len(history.undo_steps) == 1
    # judged on the spectrogram heard, over the frames of every click
    repaired, reference, before = (
        heard(document)[0],
        analysed(clean, RATE)[0],
        analysed(damaged, RATE)[0],
    )
    assert_clicks_lowered(document.blocks[0].frame_seconds, times, before, repaired, reference)


def test_dehum_takes_the_hum_and_its_harmonics_and_leaves_the_music():
    t = np.arange(6 * RATE) / RATE
    hum = sum(0.006 / h * np.sin(2 * np.pi * h * 50.0 * t + h) for h in range(1, 9))
    tune = music(6.0, seed=6)
    document = Document.from_samples(tune + hum, RATE, device="cpu")
    selection = resolve(dehum_selection(document, count=10), document)
    mask = rasterise(selection, document)
    plans = plan_operation(document, mask, "gain", {"gain_db": -40.0}, clipboard=Clipboard())
    apply_plans(document, plans, label="de-hum")
    out = document.edited_samples()[0]
    # the hum's lines in a fine spectrum: measured on the hum's own frequencies
    window = np.hanning(len(t))
    freqs = np.fft.rfftfreq(len(t), 1 / RATE)

    def line_power(x, f):
        spectrum = np.abs(np.fft.rfft(x * window)) ** 2
        return spectrum[np.abs(freqs - f) < 0.5].sum()

    for h in range(1, 9):
        before = line_power(tune + hum, 50.0 * h) - line_power(tune, 50.0 * h)
        after = max(line_power(out, 50.0 * h) - line_power(tune, 50.0 * h), 1e-30)
        assert 10 * np.log10(before / abs(after)) > 15, h
    # the music away from the hum's bands keeps its level
    kept = heard(document)[0]
    music_alone = analysed(tune + hum, RATE)[0]
    r = mask.region
    outside = np.ones(kept.shape, dtype=bool)
    outside[r.bin0 : r.bin1] = False
    level = 10 * np.log10(np.sum(kept[outside] ** 2) / np.sum(music_alone[outside] ** 2))
    assert abs(level) < 0.5


def test_the_declicker_finds_and_heals_clicks_on_an_nsgt_document():
    """Clicks are found in the edited sound (by a short STFT of its own, whatever the document's
    transform) and healed on every NSGT block they reach; judged on the output by an STFT."""
    clean = music(20.0, seed=1)
    damaged, times = insert_clicks(clean, 50, seed=2)
    document = Document.from_samples(damaged, RATE, settings=NSGT_SETTINGS, device="cpu")
    clicks = find_clicks(document)
    hits, false = matches(clicks, times)
    assert hits >= 48 and false <= 2, (hits, false)
    apply_plans(document, declick_plans(document, clicks), label="de-click")
    repaired = analysed(document.edited_samples(), RATE)[0]
    reference, before = analysed(clean, RATE)[0], analysed(damaged, RATE)[0]
    seconds = Document.from_samples(clean, RATE, device="cpu").blocks[0].frame_seconds
    assert_clicks_lowered(seconds, times, before, repaired, reference)
