"""Changing a session's analysis (STFT or NSGT, or their settings) as one undo step (no Qt).

:func:`~spectropaint.transforms.reanalyse.reanalyse` resynthesises the edited sound and analyses it
anew with the new settings (the long part, which only reads the document: a session runs it without
its lock); :func:`push_change` makes that the history's document and pushes an
:class:`AnalysisStep` (quick). The step keeps the document it replaced as a project keeps one, by its
settings and host copies of its edited frames (:class:`DocumentState`), never a second set of
coefficients. Undoing rebuilds that document from its audio (the unedited frames analysed again,
which gives the same bits, the edited ones written back) and keeps the one it replaces the same way,
for redo: both come back bit for bit, and each swap costs one analysis, which
:meth:`AnalysisStep.prepare` makes beforehand (with progress, cancellable, reading nothing the
document holds) so that the swap itself is quick.

Recorded strokes and operations stay as they are (seconds and Hz: they replay on any analysis). The
change is logged too (:class:`AnalysisChange`), keeping the log in step with the history, but not
saved with the strokes: a project stores its analysis itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from spectropaint.transforms.analysis import AnalysisSettings, describe
from spectropaint.transforms.document import Document
from spectropaint.transforms.files.audio_file import AudioData
from spectropaint.transforms.files.project_file import EditedRun, copy_edited_runs
from spectropaint.transforms.regions import EMPTY, Region
from spectropaint.transforms.transform import Progress


@dataclass(frozen=True)
class AnalysisChange:
    """The stroke log's entry for a change of analysis, from ``before`` to ``after``."""

    before: AnalysisSettings
    after: AnalysisSettings


@dataclass(frozen=True)
class DocumentState:
    """What rebuilds a document: its audio, settings and device, and copies of its edited runs."""

    audio: AudioData
    settings: AnalysisSettings
    device: torch.device
    runs: list[EditedRun]

    @classmethod
    def of(cls, document: Document) -> DocumentState:
        return cls(document.audio, document.settings, document.device, copy_edited_runs(document))

    @property
    def nbytes(self) -> int:
        return sum(run.magnitude.nbytes + run.phase.nbytes for run in self.runs)

    def rebuild(self, progress: Progress | None = None) -> Document:
        """The document again, with the same coefficients and edited frames; ``progress`` sees its
        analysis (returning False raises ``Cancelled``)."""
        document = Document(
            self.audio, settings=self.settings, device=self.device, progress=progress
        )
        channels = tuple(range(document.n_channels))
        for run in self.runs:
            region = Region(0, run.magnitude.shape[1], run.frame0, run.frame1, channels, run.block)
            document.write(region, run.magnitude, run.phase)
        return document


class AnalysisStep:
    """The undo step of a change of analysis: swapping puts the other document in ``history``.

    Attributes
    ----------
    label : str
        ``'Analysis: '`` and the settings changed to.
    before, after : AnalysisSettings
    other : DocumentState
        The document that undo (or, once undone, redo) brings back.
    """

    region = EMPTY

    def __init__(self, history, replaced: Document, after: AnalysisSettings):
        self.history = history
        self.before, self.after = replaced.settings, after
        self.label = f"Analysis: {describe(after)}"
        self.other = DocumentState.of(replaced)
        self._rebuilt: Document | None = None

    @property
    def nbytes(self) -> int:
        return self.other.nbytes

    def prepare(self, progress: Progress | None = None) -> None:
        """Rebuild :attr:`other` now (the long part of a swap: one analysis), for the next
        :meth:`swap`. It reads only this step's own copies, so no lock is needed; a cancelled
        ``progress`` raises ``Cancelled`` and nothing changes."""
        if self._rebuilt is None:
            self._rebuilt = self.other.rebuild(progress)

    def swap(self, document: Document) -> Region:
        """Put :attr:`other` (rebuilt by :meth:`prepare`, or now) in the history as its document
        and keep ``document`` in its place (nothing changes when rebuilding raises)."""
        self.prepare()
        rebuilt, self._rebuilt = self._rebuilt, None
        self.other = DocumentState.of(document)
        self.history.document = rebuilt
        return EMPTY


def push_change(history, new: Document, settings: AnalysisSettings) -> AnalysisStep:
    """Make ``new`` (``history``'s document analysed anew with ``settings``: :func:`reanalyse`)
    the history's document and push the undo step that brings the one it replaces back."""
    step = AnalysisStep(history, history.document, settings)
    history.document = new
    history.push(step)
    return step
