"""The history list's entries: each step named by what made it and where it was, written with one
precision for times, frequencies and levels (:func:`spectropaint.transforms.geometry.hz_label`)."""

import re

import pytest
from test_analysis_change import ERASE, RATE, SETTINGS, STFT, described_hz, erase, tones  # noqa: F401

from spectropaint.app.history_list import history_entries
from spectropaint.app.session import Session
from spectropaint.transforms.document import Document
from spectropaint.transforms.selection import Selection
from spectropaint.transforms.shapes import Rectangle

SECONDS = r"\d+\.\d\d-\d+\.\d\d s"
HZ = r"(0 Hz|\d\.\d Hz|\d\d\.\d Hz|\d\d\d Hz|\d\.\d\d kHz|\d\d\.\d kHz|\d\d\d kHz)"
PLACE = rf"{SECONDS}, {HZ}-{HZ}"


def test_entries_write_times_frequencies_and_levels_with_one_precision():
    """Before, one list read '431 Hz-452 Hz' next to '1.184 kHz-1.292 kHz', and an operation's
    gain was not named at all ('Gain: ...')."""
    session = Session(
        Document.from_samples(tones(6.0), RATE, settings=STFT, device="cpu"), settle=False
    )
    try:
        erase(session, 440.0, 1.0, 2.0)
        erase(session, 1234.5, 3.0, 3.5)
        session.set_selection(Selection.of(Rectangle(1.0, 2.0, 300.0, 3000.0)))
        session.apply_to_selection("gain", {"gain_db": -3.0})
        texts = [entry.text for entry in history_entries(session)]
    finally:
        session.close()
    assert texts[0] == "Opened"
    assert re.fullmatch(rf"Erase: {PLACE}", texts[1]), texts[1]
    assert re.fullmatch(rf"Erase: {PLACE}", texts[2]), texts[2]
    assert re.fullmatch(rf"Gain -3\.0 dB: {PLACE}", texts[3]), texts[3]
    assert "1.18 kHz-1.29 kHz" in texts[2]  # the 1234.5 Hz stroke's band, three digits each


SECONDS_SPAN = r"(\d+\.\d\d)-(\d+\.\d\d) s"


@pytest.mark.parametrize("settings", [STFT, SETTINGS], ids=["stft", "nsgt"])
def test_a_settled_stroke_is_named_by_where_it_was_painted(settings):
    """Named by the region its undo step held at the end, a settled erase at 1 kHz read
    '0 Hz-4.63 kHz' (the settle re-analyses every bin its frames reach) and, on the NSGT, its
    times were those of its slices: '0.00-17.83 s' for a stroke at 3 to 4 s."""
    session = Session(Document.from_samples(tones(6.0), RATE, settings=settings, device="cpu"))
    try:
        erase(session, 1000.0, 3.0, 4.0)
        assert session.wait_settled(60)
        step = session.history.undo_steps[-1]
        assert step.region != step.painted  # the settle did cover more
        text = history_entries(session)[-1].text
    finally:
        session.close()
    low, high = described_hz(text)
    assert 900.0 < low < 1000.0 < high < 1120.0, text
    start, stop = map(float, re.search(SECONDS_SPAN, text).groups())
    radius = ERASE.radius_seconds
    assert 3.0 - radius - 0.05 < start < 3.0 and 4.0 < stop < 4.0 + radius + 0.05, text
