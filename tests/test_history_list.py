"""The history list's entries: each step named by what made it and where it was, written with one
precision for times, frequencies and levels (:func:`spectropaint.transforms.geometry.hz_label`)."""

import re

from test_analysis_change import ERASE, RATE, STFT, erase, tones  # noqa: F401

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
