"""The undo history as a list a person reads (no Qt): one entry per state, from the oldest kept to
the newest undone, each step named by what made it and where it was, and the undos or redos that
reach any entry."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spectropaint.app.analysis_change import AnalysisStep
from spectropaint.app.session import Session
from spectropaint.transforms.analysis import make_transform
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
    """``'1.25-2.50 s, 200 Hz-1.2 kHz'``: the times of a step's frames (their centres) and the
    frequencies of their bands, in any block of any transform. Not the samples the frames reach:
    on the NSGT those are whole slices (a stroke at 10 s would read '0.00-17.83 s')."""
    times, freqs = [], []
    for part in region.parts:
        block = document.blocks[part.block]
        seconds, band = block.frame_seconds, block.band_hz
        times += [float(seconds[max(0, part.frame0)]), float(seconds[part.frame1 - 1])]
        freqs += [float(band[max(0, part.bin0)]), float(band[min(len(band), part.bin1) - 1])]
    if not times:
        return "nothing changed"
    low, high = max(0.0, min(freqs)), max(freqs)
    start = max(0.0, min(times))
    stop = min(document.n_samples / document.sample_rate, max(times))
    return f"{seconds_span_label(start, stop)}, {hz_label(low)}-{hz_label(high)}"


@dataclass(frozen=True)
class _GridBlock:
    """What :func:`describe_region` reads of a block."""

    band_hz: np.ndarray
    frame_seconds: np.ndarray


class _Grid:
    """What :func:`describe_region` reads of a document, for an analysis that no document holds
    now (the one before or after a change of analysis)."""

    def __init__(self, settings, document):
        self.sample_rate, self.n_samples = document.sample_rate, document.n_samples
        layouts = make_transform(settings, self.sample_rate).layout(
            self.n_samples, self.sample_rate
        )
        self.blocks = [
            _GridBlock(layout.band_hz, layout.frame_seconds(self.sample_rate)) for layout in layouts
        ]


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
            text = f"{name}: {describe_region(step.painted, grid)}"
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
