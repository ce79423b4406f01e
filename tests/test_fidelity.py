"""What strokes sound like after their settle, measured on the re-analysed output (n_fft 2048,
hop 512, 44.1 kHz): deep erase, exact gain, small consistency gaps, phase for moved energy."""

import numpy as np
import pytest
from fidelity_probes import (
    RATE,
    band,
    energy_db,
    eroded,
    heard,
    shown,
    snr_db,
    spectral_convergence_db,
    tone,
    tone_snr_db,
    zigzag,
)

from spectropaint.brushes.engine import paint
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document

HOP, BIN_HZ = 512, RATE / 2048


@pytest.fixture(scope="module")
def music():
    return band(3.0, seed=4)


@pytest.fixture(scope="module")
def steady():
    return tone(2.0)


def line(x0, x1, y, n=30):
    return [InputEvent(i / 60, x0 + (x1 - x0) * i / (n - 1), y) for i in range(n)]


def wiggle(x0, x1, y, amplitude, n=40):
    return [
        InputEvent(i / 60, x0 + (x1 - x0) * i / (n - 1), y + amplitude * np.sin(i / 6))
        for i in range(n)
    ]


def painted_and_settled(samples, brush, events, settings, params=None):
    """(what was painted, what it sounded like unsettled, the settled document, the original)."""
    original = shown(Document.from_samples(samples, RATE, device="cpu"))
    document = Document.from_samples(samples, RATE, device="cpu")
    paint(document, brush, events, settings, params=params, settle=False)
    painted, unsettled = shown(document), heard(document)
    document = Document.from_samples(samples, RATE, device="cpu")
    paint(document, brush, events, settings, params=params)
    return painted, unsettled, document, original


def test_a_hard_erase_is_heard_below_minus_60_db_two_cells_in(music):
    settings = BrushSettings(radius_frames=6, radius_bins=6, hardness=1.0)
    painted, unsettled, document, original = painted_and_settled(
        music, "erase", zigzag(60, 170, 104, 140, rows=4), settings
    )
    core = eroded((painted != original).any(axis=0), 2)
    assert core.sum() > 2000
    assert energy_db(unsettled, original, core) > -60  # what painting alone sounds like
    assert energy_db(heard(document), original, core) <= -60


def test_a_gain_of_minus_40_db_is_heard_within_1_db(music):
    settings = BrushSettings(radius_frames=6, radius_bins=6, hardness=1.0)
    painted, _, document, original = painted_and_settled(
        music, "gain", zigzag(60, 170, 104, 140, rows=4), settings, {"gain_db": -40.0}
    )
    full = (np.abs(np.abs(painted) / np.abs(original) - 0.01) < 1e-4).all(axis=0)
    assert energy_db(heard(document), original, eroded(full, 2)) == pytest.approx(-40, abs=1)


@pytest.mark.parametrize(
    ("brush", "params"),
    [
        ("blur", {"sigma": 0.5}),
        ("filter", {"mode": "highpass", "cutoff": 0.1}),
        ("warp", {"amount": 1.0}),
    ],
)
def test_what_is_heard_in_the_edited_box_is_within_half_a_db_of_what_was_painted(
    music, brush, params
):
    settings = BrushSettings(radius_frames=16, radius_bins=16, hardness=0.5)
    painted, unsettled, document, original = painted_and_settled(
        music, brush, wiggle(60, 190, 80, 20), settings, params
    )
    box = (painted != original).any(axis=0)
    assert abs(energy_db(painted, heard(document), box)) <= 0.5
    # and the shown coefficients are what is heard
    assert energy_db(shown(document) - heard(document), heard(document), box) < -80


@pytest.mark.parametrize("brush", ["clone", "warp"])
def test_a_tone_moved_in_time_keeps_running_through_the_patch(steady, brush):
    if brush == "clone":
        events, params = line(60, 110, 46.4), {"offset_frames": -30, "offset_bins": 0}
        settings = BrushSettings(radius_frames=8, radius_bins=12, hardness=0.5)
    else:
        events, params = line(60, 100, 46.0, n=11), {}
        settings = BrushSettings(radius_frames=16, radius_bins=16, hardness=1.0)
    document = Document.from_samples(steady, RATE, device="cpu")
    region = paint(document, brush, events, settings, params=params)
    out = document.edited_samples()[0]
    start, stop = document.transform.samples_reached(0, region.frame0, region.frame1, out.size)
    assert snr_db(out[start:stop], steady[0, start:stop]) >= 55


def test_a_tone_moved_in_frequency_is_a_pure_tone_at_its_new_pitch(steady):
    document = Document.from_samples(steady, RATE, device="cpu")
    settings = BrushSettings(radius_frames=8, radius_bins=12, hardness=0.5)
    params = {"offset_frames": 0, "offset_bins": -40}
    paint(document, "clone", line(60, 120, 86.4), settings, params=params)
    copy = document.edited_samples()[0] - steady[0]
    snr, amplitude = tone_snr_db(copy, 1000.0 + 40 * BIN_HZ, 70 * HOP, 110 * HOP)
    assert snr >= 55
    assert 20 * np.log10(amplitude / 0.25) == pytest.approx(0, abs=0.1)
    document = Document.from_samples(steady, RATE, device="cpu")
    events = [InputEvent(0.0, 80.0, 46.0), InputEvent(0.1, 80.0, 50.0), InputEvent(0.2, 80.0, 54.0)]
    paint(document, "warp", events, BrushSettings(radius_frames=30, radius_bins=16, hardness=1.0))
    snr, amplitude = tone_snr_db(
        document.edited_samples()[0], 1000.0 + 8 * BIN_HZ, 60 * HOP, 100 * HOP
    )
    assert snr >= 55


def test_music_cloned_by_whole_frames_is_the_source_shifted(music):
    document = Document.from_samples(music, RATE, device="cpu")
    settings = BrushSettings(radius_frames=10, radius_bins=600, hardness=1.0)
    params = {"offset_frames": -86, "offset_bins": 0}
    paint(document, "clone", line(130, 230, 512.0, n=40), settings, params=params)
    out = document.edited_samples()
    core = slice(136 * HOP + 1024, 224 * HOP - 1024)
    ideal = np.roll(music, 86 * HOP, axis=-1)
    assert snr_db(out[:, core], ideal[:, core]) >= 25


def librosa_spectral_convergence(target, changed, n_iter):
    import librosa

    signal = librosa.griffinlim(
        target[0],
        n_iter=n_iter,
        momentum=0.99,
        hop_length=HOP,
        n_fft=2048,
        window="hann",
        center=True,
        length=(target.shape[-1] - 1) * HOP,
        random_state=0,
    )
    found = shown(Document.from_samples(signal[None], RATE, device="cpu"))[..., : target.shape[-1]]
    return spectral_convergence_db(found, target, changed)


@pytest.mark.parametrize(
    ("brush", "margin"),
    [
        ("clone", 3.0),  # a whole copy: the source's own phase fits
        ("warp", 1.0),  # a smudge no signal has: every method meets its inconsistency
    ],
)
def test_moves_converge_further_than_librosa_griffin_lim_with_as_many_iterations(
    music, brush, margin
):
    if brush == "clone":
        settings = BrushSettings(radius_frames=10, radius_bins=600, hardness=1.0)
        events, params = line(130, 230, 512.0, n=40), {"offset_frames": -86, "offset_bins": 0}
    else:
        settings = BrushSettings(radius_frames=12, radius_bins=12)
        events, params = wiggle(60, 200, 200, 30), {"amount": 1.0}
    document = Document.from_samples(music, RATE, device="cpu")
    before = shown(document)
    from spectropaint.brushes.engine import StrokeSession
    from spectropaint.brushes.settle import apply_settle

    session = StrokeSession(document, brush, settings, params=params)
    for event in events:
        session.add_events([event])
    session.end()
    painted = shown(document)
    result = session.settle_plan().compute()
    region = apply_settle(document, None, result)
    frames = slice(region.frame0, region.frame1)
    target = np.abs(painted[..., frames])
    changed = (painted != before).any(axis=0)[:, frames]
    ours = spectral_convergence_db(heard(document)[..., frames], target, changed)
    theirs = librosa_spectral_convergence(target, changed, result.iterations)
    assert ours <= theirs - margin
