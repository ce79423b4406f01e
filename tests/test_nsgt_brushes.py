"""Brushes on NSGT documents: dabs in seconds and semitones edit every block they reach, judged on
the re-analysed output; the same stroke replays on the STFT; undo is exact."""

import numpy as np
import pytest
import torch
from test_nsgt_document import RATE, SETTINGS, level_db, tones

from spectropaint.brushes.engine import StrokeSession, paint
from spectropaint.brushes.history import History
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.stft import STFTSettings

ERASE = BrushSettings(radius_seconds=0.3, radius_semitones=1.0, hardness=0.8)
ALONG_440 = [InputEvent(0.01 * i, 4.0 + 0.1 * i, 440.0) for i in range(21)]  # 4 s to 6 s


def snapshot(document):
    return [(b.magnitude.clone(), b.phase.clone()) for b in document.blocks]


@pytest.mark.parametrize("settings", [SETTINGS, STFTSettings()], ids=["nsgt", "stft"])
def test_one_erase_stroke_in_seconds_and_semitones_works_on_either_transform(settings):
    document = Document.from_samples(tones(), RATE, settings=settings, device="cpu")
    paint(document, "erase", ALONG_440, ERASE)
    out, original = document.edited_samples(), document.audio.samples
    assert level_db(out[0], 440.0, 4.5, 5.5) - level_db(original[0], 440.0, 4.5, 5.5) < -40
    for hz, t0, t1 in ((110.0, 4.5, 5.5), (440.0, 0.5, 1.5), (440.0, 9.0, 10.0)):
        assert abs(level_db(out[0], hz, t0, t1) - level_db(original[0], hz, t0, t1)) < 0.1


def test_a_stroke_edits_each_block_it_reaches_and_reports_one_box_per_block():
    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    before = snapshot(document)
    session = StrokeSession(document, "erase", ERASE)
    for event in ALONG_440[:3]:
        changed = session.add_events([event])
        assert {region.block for region in changed.parts} == {6, 7}  # 440 Hz: one group's pair
        assert len({region.block for region in changed.parts}) == len(changed.parts)
    session.end()
    for index, (magnitude, phase) in enumerate(before):
        block = document.blocks[index]
        if index in (6, 7):
            assert not torch.equal(block.magnitude, magnitude)
        else:
            assert torch.equal(block.magnitude, magnitude) and torch.equal(block.phase, phase)


def test_undo_and_redo_of_an_nsgt_stroke_are_exact():
    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    history = History(document)
    before = snapshot(document)
    paint(document, "blur", ALONG_440, ERASE, history=history)
    after = snapshot(document)
    history.undo()
    assert all(
        torch.equal(b.magnitude, m) and torch.equal(b.phase, p)
        for b, (m, p) in zip(document.blocks, before, strict=True)
    )
    history.redo()
    assert all(
        torch.equal(b.magnitude, m) and torch.equal(b.phase, p)
        for b, (m, p) in zip(document.blocks, after, strict=True)
    )


def test_the_pen_paints_its_level_once_though_two_slice_parities_hold_each_time():
    """Each parity adds the tone times its slice window; the windows sum to one."""
    document = Document.from_samples(0 * tones(), RATE, settings=SETTINGS, device="cpu")
    pen = BrushSettings(radius_seconds=0.05, radius_semitones=0.3, hardness=1.0)
    events = [InputEvent(0.0, 3.0, 1000.0), InputEvent(0.1, 7.0, 1000.0)]
    paint(document, "pen", events, pen, params={"level_db": -20.0})
    out = document.edited_samples()[0]
    peak = max(level_db(out, hz, 4.0, 6.0) for hz in np.linspace(960.0, 1040.0, 321))
    assert abs(peak + 20.0) < 1.0


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_every_brush_changes_only_what_its_dabs_reach(brush):
    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    params = {"offset_seconds": -1.0, "offset_pitch": 0.0} if brush == "clone" else None
    region = paint(document, brush, ALONG_440[5:12], ERASE, params=params)
    assert not region.empty
    out, original = document.edited_samples(), document.audio.samples
    starts, stops = zip(*(document.samples_of(part) for part in region.parts), strict=True)
    start, stop = min(starts), max(stops)
    assert np.array_equal(out[:, :start], original[:, :start])
    assert np.array_equal(out[:, stop:], original[:, stop:])
    assert not np.array_equal(out[:, start:stop], original[:, start:stop])


def test_a_clone_stroke_in_seconds_needs_its_offset_in_seconds():
    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    with pytest.raises(SettingsError, match="offset_seconds and offset_pitch"):
        StrokeSession(document, "clone", ERASE)


def test_playback_follows_a_stroke_on_every_block_it_changed():
    import threading

    from spectropaint.app.playback.engine import OutputDevice, PlaybackEngine
    from spectropaint.app.playback.resynthesis import Resynthesizer

    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    engine = PlaybackEngine(
        document.audio.samples, RATE, device=OutputDevice(None, "", 0, "no device (test)")
    )
    lock = threading.Lock()
    resynthesizer = Resynthesizer(document, engine, lock)
    try:
        with lock:
            region = paint(document, "erase", ALONG_440, ERASE)
        resynthesizer.schedule(region)
        assert resynthesizer.wait_idle(60) and resynthesizer.error is None
    finally:
        resynthesizer.close()
    np.testing.assert_allclose(engine.edited(), document.edited_samples().T, atol=1e-6)
    assert np.abs(engine.edited() - document.audio.samples.T).max() > 0.1


def painted(brush, *, pair, stroke_events, settings, params, seconds=12.0):
    """An NSGT document's blocks before and after a stroke (not settled), the boxes each event
    reported, and how many blocks each stamping group was applied to at once."""
    from spectropaint.brushes import dab as dab_module

    document = Document.from_samples(tones(seconds), RATE, settings=SETTINGS, device="cpu")
    members = []
    original = dab_module._apply_stamping

    def counting(state, group_members):
        members.append(len(group_members))
        return original(state, group_members)

    before = snapshot(document)
    dab_module._apply_stamping = counting
    try:
        session = StrokeSession(document, brush, settings, params=params, pair=pair)
        reported = [session.add_events((event,)) for event in stroke_events]
        session.end()
    finally:
        dab_module._apply_stamping = original
    return before, snapshot(document), reported, members


# from the file's first frames (where the two parities' grids end differently) into its middle
ACROSS = [
    InputEvent(i / 60, 0.05 + 0.35 * i, 440.0 * 2 ** (np.sin(i / 2) / 2), 0.6 + 0.03 * i)
    for i in range(14)
]


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_painting_a_parity_pair_together_equals_painting_each_block_alone(brush):
    """Every brush, with a kernel margin where it has one, on both paths: the blocks agree to
    float tolerance (the pair shares the first block's masks), report the same boxes, and the
    stroke used the paired path in the middle of the file and each block alone at its start."""
    settings = BrushSettings(radius_seconds=0.15, radius_semitones=2.0, hardness=0.5)
    params = {"offset_seconds": -0.7, "offset_pitch": 2.0} if brush == "clone" else None
    if brush == "blur":
        params = {"sigma": 0.6}
    start, alone, boxes_alone, members_alone = painted(
        brush, pair=False, stroke_events=ACROSS, settings=settings, params=params
    )
    _, together, boxes_together, members = painted(
        brush, pair=True, stroke_events=ACROSS, settings=settings, params=params
    )
    assert boxes_together == boxes_alone
    for (magnitude, phase), (magnitude_ref, phase_ref) in zip(together, alone, strict=True):
        assert float((magnitude - magnitude_ref).abs().max()) <= 2e-6
        energetic = magnitude_ref > 1e-4
        turn = torch.remainder(phase - phase_ref + np.pi, 2 * np.pi) - np.pi
        assert float(turn[energetic].abs().max()) < 1e-4
    edited = [
        not torch.equal(after[0], first[0]) for after, first in zip(alone, start, strict=True)
    ]
    assert sum(edited) >= 2
    if BRUSHES[brush].drags:
        assert members == members_alone == []  # warp drags: each block alone on both paths
    else:
        assert set(members_alone) == {1}
        assert 2 in members and 1 in members


def test_a_paired_erase_removes_the_tone_from_both_parities():
    """If either block of the pair were skipped, half the tone (its slice window's share) would
    stay: about -6 dB instead of below -40 dB on the output."""
    document = Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")
    before = snapshot(document)
    session = StrokeSession(document, "erase", ERASE)
    for event in ALONG_440:
        session.add_events([event])
    session.end()
    for index in (6, 7):
        assert float(document.blocks[index].magnitude.sum()) < 0.9 * float(before[index][0].sum())
    out, original = document.edited_samples(), document.audio.samples
    assert level_db(out[0], 440.0, 4.5, 5.5) - level_db(original[0], 440.0, 4.5, 5.5) < -40
