"""The undo history as a list a person reads (no Qt): one entry per state, from the oldest kept to
the newest undone, each step named by what made it and where it was, and the undos or redos that
reach any entry."""

from __future__ import annotations

from dataclasses import dataclass

from spectropaint.app.analysis_change import AnalysisStep
from spectropaint.app.session import Session
from spectropaint.transforms.analysis import make_transform
from spectropaint.transforms.document import Document
from spectropaint.transforms.geometry import hz_label, seconds_span_label
from spectropaint.transforms.regions import Region, Regions


@dataclass(frozen=True)
class Entry:
    """One state of the document: ``position`` steps after the oldest kept state."""

    position: int
    text: str
    undone: bool
    """Undone (a redo brings it back)."""


def describe_region(region: Region | Regions, document) -> str:
    """``'1.25-2.50 s, 200 Hz-1.2 kHz'``: the time a step's boxes reach (the samples its edit
    changes) and the frequencies of their bands, in any block of any transform."""
    times, freqs = [], []
    for part in region.parts:
        start, stop = document.samples_of(part)
        times += [start / document.sample_rate, stop / document.sample_rate]
        band = document.blocks[part.block].band_hz
        freqs += [float(band[max(0, part.bin0)]), float(band[min(len(band), part.bin1) - 1])]
    if not times:
        return "nothing changed"
    low, high = max(0.0, min(freqs)), max(freqs)
    return f"{seconds_span_label(min(times), max(times))}, {hz_label(low)}-{hz_label(high)}"


class _Grid:
    """What :func:`describe_region` reads of a document, for an analysis that no document holds
    now (the one before or after a change of analysis)."""

    def __init__(self, settings, document):
        self.sample_rate, self.n_samples = document.sample_rate, document.n_samples
        self.transform = make_transform(settings, self.sample_rate)
        self.blocks = self.transform.layout(self.n_samples, self.sample_rate)

    samples_of = Document.samples_of
    """The document's own rule, read on this grid's ``transform`` and ``n_samples``."""


def _step_documents(session: Session, done: tuple, undone: tuple) -> list:
    """The document (or its :class:`_Grid`) each step's region is in: a change of analysis
    separates the steps made on the analysis before it from those made after it."""
    grids = []
    grid = session.document
    for step in reversed(done):
        grids.append(grid)
        if isinstance(step, AnalysisStep):
            grid = _Grid(step.before, session.document)
    grids.reverse()
    grid = session.document
    for step in undone:
        if isinstance(step, AnalysisStep):
            grid = _Grid(step.after, session.document)
        grids.append(grid)
    return grids


def history_entries(session: Session) -> list[Entry]:
    """Every state the history can reach, oldest first; :func:`current_position` is the shown one."""
    history = session.history
    done, undone = history.undo_steps, tuple(reversed(history.redo_steps))
    first = "Opened" if len(done) == len(session.strokes.done) else "Oldest kept state"
    entries = [Entry(0, first, False)]
    grids = _step_documents(session, done, undone)
    for index, (step, grid) in enumerate(zip(done + undone, grids, strict=True), start=1):
        if isinstance(step, AnalysisStep):
            text = step.label
        else:
            name = step.label.replace("_", " ")
            name = name[:1].upper() + name[1:] or "Edit"  # 'Gain -3.0 dB': units keep their case
            text = f"{name}: {describe_region(step.region, grid)}"
        entries.append(Entry(index, text, index > len(done)))
    return entries


def current_position(session: Session) -> int:
    return len(session.history.undo_steps)


def go_to(session: Session, position: int) -> int:
    """Undo or redo until the document is in state ``position``; the steps taken."""
    taken = 0
    while current_position(session) > position and session.undo() is not None:
        taken += 1
    while current_position(session) < position and session.redo() is not None:
        taken += 1
    return taken
