"""Changing the analysis (STFT <-> NSGT) of an edited document is one undo step of the session:
the edited sound is kept, undo gives the previous document back bit for bit, redo the new one, and
strokes on either side of the change undo and redo on their own analysis."""

import re
import threading

import numpy as np
import pytest
import torch
from test_nsgt_document import RATE, SETTINGS, level_db, tones

from spectropaint.app.analysis_change import AnalysisChange
from spectropaint.app.history_list import history_entries
from spectropaint.app.session import Session
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import Cancelled, SettingsError
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.stft import STFTSettings

ERASE = BrushSettings(radius_seconds=0.3, radius_semitones=1.0, hardness=0.8)
STFT = STFTSettings(n_fft=1024, hop=256)


def erase(session: Session, hz: float, t0: float, t1: float) -> None:
    events = [InputEvent(0.01 * i, t, hz) for i, t in enumerate(np.linspace(t0, t1, 11))]
    session.begin_stroke("erase", ERASE, {}, events[0])
    for event in events[1:]:
        session.paint(event)
    session.end_stroke()


def state(document: Document) -> list:
    """Copies of everything a document's coefficients are: per block magnitude, phase, flags."""
    return [(b.magnitude.clone(), b.phase.clone(), b.edited_frames.copy()) for b in document.blocks]


def assert_state(document: Document, expected: list, *, flags: bool = True) -> None:
    """Coefficients equal to the bit; the edited-frame flags too, unless an undone stroke left
    its frames flagged (as undo does: their values are the original ones)."""
    assert len(document.blocks) == len(expected)
    for block, (magnitude, phase, edited) in zip(document.blocks, expected, strict=True):
        assert torch.equal(block.magnitude, magnitude) and torch.equal(block.phase, phase)
        assert np.array_equal(block.edited_frames, edited) or not flags


def described_hz(text: str) -> tuple[float, float]:
    """The band a history entry names, ``'..., 431 Hz-1.2 kHz'``, in Hz."""
    values = re.findall(r"([0-9.]+) (k?)Hz", text)
    return tuple(float(number) * (1000.0 if kilo else 1.0) for number, kilo in values)


def snr_db(reference: np.ndarray, other: np.ndarray) -> float:
    return 20 * np.log10(np.linalg.norm(reference) / np.linalg.norm(other - reference))


@pytest.fixture
def session():
    document = Document.from_samples(tones(6.0), RATE, settings=STFT, device="cpu")
    return Session(document, settle=False)


def test_a_change_of_analysis_keeps_the_sound_and_undoes_and_redoes_bit_for_bit(session):
    erase(session, 440.0, 2.0, 3.0)
    stft = session.document
    heard_stft = stft.edited_samples()
    before = state(stft)
    changes = []
    session.changed.connect(changes.append)

    session.change_analysis(SETTINGS)
    nsgt = session.document
    assert nsgt is not stft and nsgt.settings == SETTINGS and nsgt.transform.name == "nsgt"
    assert [change.kind for change in changes] == ["document"]
    assert changes[0].completes_edit and session.modified
    assert snr_db(heard_stft, nsgt.edited_samples()) > 100  # the same sound, to float32 rounding
    after = state(nsgt)

    session.undo()
    assert session.document.settings == STFT and session.document is session.history.document
    assert_state(session.document, before)
    assert np.array_equal(session.document.edited_samples(), heard_stft)
    session.redo()
    assert session.document.settings == SETTINGS
    assert_state(session.document, after)
    assert [change.kind for change in changes] == ["document"] * 3
    strokes = [entry for entry in session.strokes.done if not isinstance(entry, AnalysisChange)]
    assert len(strokes) == 1 and strokes[0].brush == "erase"
    assert len(session.strokes.to_dicts()) == 1  # the change is the project's, not a stroke


def test_strokes_on_each_side_of_the_change_undo_and_redo_on_their_own_analysis(session):
    original = state(session.document)
    erase(session, 440.0, 1.0, 2.0)
    first = state(session.document)
    session.change_analysis(SETTINGS)
    changed = state(session.document)
    erase(session, 1000.0, 3.0, 4.0)  # on the NSGT: blocks of its own
    painted = state(session.document)
    out = session.document.edited_samples()
    assert level_db(out[1], 1000.0, 3.3, 3.7) - level_db(tones(6.0)[1], 1000.0, 3.3, 3.7) < -30
    entries = history_entries(session)
    assert [entry.text.split(":")[0] for entry in entries] == [
        "Opened",
        "Erase",
        "Analysis",
        "Erase",
    ]
    assert described_hz(entries[1].text)[0] < 440.0 < described_hz(entries[1].text)[1] < 500.0
    assert 900.0 < described_hz(entries[3].text)[0] < 1000.0 < described_hz(entries[3].text)[1]

    for expected, flags in ((changed, False), (first, True), (original, False)):
        session.undo()
        assert_state(session.document, expected, flags=flags)
    assert session.document.settings == STFT and session.undo() is None
    entries = history_entries(session)
    assert entries[3].undone and 900.0 < described_hz(entries[3].text)[0] < 1000.0
    for expected, flags in ((first, False), (changed, False), (painted, False)):
        session.redo()  # flags: strokes undo and redo whole tiles; the change, the undo's
        assert_state(session.document, expected, flags=flags)
    assert session.document.settings == SETTINGS


def test_a_new_edit_after_undoing_the_change_drops_the_redo(session):
    erase(session, 440.0, 1.0, 2.0)
    session.change_analysis(SETTINGS)
    session.undo()
    erase(session, 110.0, 3.0, 4.0)
    assert session.redo() is None and session.document.settings == STFT
    assert [type(entry).__name__ for entry in session.strokes.done] == [
        "RecordedStroke",
        "RecordedStroke",
    ]


def test_settings_the_sample_rate_cannot_have_change_nothing(session):
    document, original = session.document, state(session.document)
    erase(session, 440.0, 1.0, 2.0)
    painted = state(document)
    changes = []
    session.changed.connect(changes.append)
    with pytest.raises(SettingsError, match="fmax"):
        session.change_analysis(NSGTSettings(fmax=20000.0))  # above 11 kHz at 22050 Hz
    assert session.document is document and changes == []
    assert_state(document, painted)
    session.undo()  # the stroke, not a change that did not happen
    assert session.document is document
    assert_state(document, original, flags=False)


def log_and_steps(session: Session) -> tuple:
    """What undo and redo act on: the steps and log entries (by identity), and the generation."""
    history = session.history
    return (
        history.undo_steps,
        history.redo_steps,
        tuple(session.strokes.done),
        tuple(session.strokes.undone),
        session.generation,
    )


def test_a_cancelled_change_or_undo_of_one_changes_nothing(session):
    erase(session, 440.0, 1.0, 2.0)
    stft, painted, before = session.document, state(session.document), log_and_steps(session)
    fractions = []

    def cancel_at_half(done: float) -> bool:
        fractions.append(done)
        return done < 0.5

    with pytest.raises(Cancelled):
        session.change_analysis(SETTINGS, progress=cancel_at_half)
    assert fractions == sorted(fractions) and fractions[-1] >= 0.5  # progress, then stopped
    assert session.document is stft and log_and_steps(session) == before
    assert_state(stft, painted)
    assert not session.replacing

    session.change_analysis(SETTINGS)
    nsgt, changed, before = session.document, state(session.document), log_and_steps(session)
    fractions.clear()
    with pytest.raises(Cancelled):
        session.undo(progress=cancel_at_half)
    assert fractions == sorted(fractions) and fractions[-1] >= 0.5
    assert session.document is nsgt and log_and_steps(session) == before
    assert_state(nsgt, changed)
    session.undo()  # the step is whole: undone, it is the painted STFT to the bit
    assert_state(session.document, painted)


def test_edits_are_refused_and_the_lock_is_free_while_the_analysis_changes(session):
    """The analysis runs without the session's lock (a save's snapshot, playback and the
    window's reads go on), and every edit meanwhile is refused rather than lost in a race."""
    erase(session, 440.0, 1.0, 2.0)
    stft = session.document
    analysing, release = threading.Event(), threading.Event()

    def held(done: float) -> bool:
        analysing.set()
        release.wait(30)
        return True

    changer = threading.Thread(target=lambda: session.change_analysis(SETTINGS, progress=held))
    changer.start()
    try:
        assert analysing.wait(30)
        assert session.lock.acquire(timeout=5)  # not held while analysing
        session.lock.release()
        assert session.replacing
        snapshot = session.snapshot({})
        assert snapshot.document is stft
        with pytest.raises(RuntimeError, match="analysis changes"):
            erase(session, 1000.0, 3.0, 4.0)
        with pytest.raises(RuntimeError, match="analysis changes"):
            session.undo()
        with pytest.raises(RuntimeError, match="analysis changes"):
            session.change_analysis(STFTSettings(n_fft=512, hop=128))
    finally:
        release.set()
        changer.join()
    assert session.document.settings == SETTINGS and not session.replacing
    assert [type(entry).__name__ for entry in session.strokes.done] == [
        "RecordedStroke",
        "AnalysisChange",
    ]
