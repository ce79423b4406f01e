"""Changing a document's transform while keeping its edits (no Qt; a session makes it one undo step:
:mod:`spectropaint.app.analysis_change`).

:func:`reanalyse` analyses the original audio anew with other settings, then writes, over every frame
of the new transform that reaches an edited sample span, the analysis of the *edited* signal, and
marks those frames edited. Resynthesis by difference then gives back the edited signal (up to the
float32 rounding of two transforms, about -130 dB), while the original audio stays the document's
original: bypass, projects and further edits work as before, and unedited samples stay bit-identical.
"""

from __future__ import annotations

import numpy as np
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.analysis import AnalysisSettings
from spectropaint.transforms.document import Document, edited_runs
from spectropaint.transforms.transform import Progress


def reanalyse(
    document: Document,
    settings: AnalysisSettings,
    *,
    progress: Progress | None = None,
    reserve_bytes: int = 0,
) -> Document:
    """A new document of ``document``'s audio analysed with ``settings``, holding its edits.

    ``progress`` sees the resynthesis of the edits as the first tenth, the analysis as the rest;
    returning ``False`` cancels (:class:`~spectropaint.transforms.errors.Cancelled`) and leaves
    ``document`` as it was. Raises what :class:`Document` raises for settings that do not fit.
    """

    def part(offset: float, share: float) -> Progress | None:
        return None if progress is None else (lambda done: progress(offset + share * done))

    edited = document.edited_samples(progress=part(0.0, 0.1))
    spans = document.edited_sample_spans()
    new = Document(
        document.audio,
        settings=settings,
        device=document.device,
        progress=part(0.1, 0.9),
        reserve_bytes=reserve_bytes,
    )
    for message in document.notices.emitted:
        new.notices.emit(message)
    if spans:
        new.on_cpu_after_oom("re-analysing the edits", lambda: _write_edits(new, edited, spans))
    return new


def _write_edits(document: Document, edited: np.ndarray, spans: list[tuple[int, int]]) -> None:
    samples = torch.from_numpy(np.ascontiguousarray(edited))
    if document.device.type != "cpu":
        samples = samples.to(document.device, torch.float32)
    n = document.n_samples
    with document.transform.sharing_work():
        _write_blocks(document, samples, spans, n)


def _write_blocks(document: Document, samples: torch.Tensor, spans, n: int) -> None:
    for index, block in enumerate(document.blocks):
        reached = np.zeros(block.n_frames, dtype=bool)
        for start, stop in spans:
            lo, hi = document.transform.frames_over(index, start, stop, n)
            reached[lo:hi] = True
        for frame0, frame1 in edited_runs(reached):
            coefficients = document.transform.analyse_frames(samples, index, frame0, frame1)
            fft_ops.polar_into(
                coefficients,
                block.magnitude[:, :, frame0:frame1],
                block.phase[:, :, frame0:frame1],
            )
            block.edited_frames[frame0:frame1] = True
