"""A selection's outline for the renderer: its weight sampled on (a thinning of) the block's cells.

The renderer keeps :attr:`SelectionMask.weights` in a small texture and the shader
(``shaders/overlay.wgsl``) looks it up at every pixel's frame and bin, so the outline follows any
frequency axis and any zoom without re-sampling; only a new selection uploads anything. A
selection wider than :data:`MAX_COLUMNS` frames or :data:`MAX_ROWS` bins is sampled every few
cells (its outline is then that coarse). An NSGT document's canvas draws on the frames of the
default STFT (:func:`~spectropaint.gpu.geometry.reference_geometry`) and counts its rows in Hz:
its selection is sampled on those frames, and on rows of a few Hz or less, since its bands are
narrower than an STFT bin below a few hundred Hz.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from spectropaint.gpu.geometry import reference_geometry
from spectropaint.transforms.selection import Selection, bounds_region, main_lobe_bins
from spectropaint.transforms.shapes import CellGrid

MAX_COLUMNS = 4096
MAX_ROWS = 2048


@dataclass(frozen=True, eq=False)
class SelectionMask:
    """Weights ``[rows, columns]`` (float32, 0..1): column ``c`` covers frames
    ``[frame0 + c * frame_step, frame0 + (c + 1) * frame_step)`` and row ``r`` bins
    ``[bin0 + r * bin_step, ...)``; everything outside has weight 0."""

    weights: np.ndarray
    frame0: int
    frame_step: int
    bin0: float
    bin_step: float
    """(For an NSGT document's canvas, whose cells are Hz: ``bin0`` and ``bin_step`` in Hz.)"""


def selection_mask(
    selection: Selection | None, document, *, block: int = 0
) -> SelectionMask | None:
    """``selection`` (resolved) sampled for display on ``block`` (on an NSGT document's canvas,
    see :func:`_reference_mask`); None when it selects nothing."""
    if selection is None or selection.empty:
        return None
    if document.transform.name == "nsgt":
        return _reference_mask(selection, document)
    region = bounds_region(document, selection.bounds(), channels=(0,), block=block)
    if region.empty:
        return None
    data = document.blocks[block]
    frame_step = math.ceil(region.shape[1] / MAX_COLUMNS)
    bin_step = math.ceil(region.shape[0] / MAX_ROWS)
    columns = np.arange(region.frame0, region.frame1, frame_step)
    rows = np.arange(region.bin0, region.bin1, bin_step)
    band = np.asarray(data.band_hz, dtype=np.float64)
    spacing = np.abs(np.gradient(band)) if len(band) > 1 else np.ones(1)
    middle = np.minimum(columns + frame_step // 2, data.n_frames - 1)
    grid = CellGrid(
        seconds=np.asarray(data.frame_seconds, dtype=np.float64)[middle],
        hz=band[np.minimum(rows + bin_step // 2, len(band) - 1)],
        step_seconds=frame_step * data.hop / document.sample_rate,
        spacing_hz=spacing[rows] * bin_step,
        lobe_hz=main_lobe_bins(document) * spacing[rows],
    )
    weights = selection.weights(grid)
    if not weights.any():
        return None
    return SelectionMask(
        np.ascontiguousarray(weights, dtype=np.float32),
        region.frame0,
        frame_step,
        region.bin0,
        bin_step,
    )


def _reference_mask(selection: Selection, document) -> SelectionMask | None:
    """``selection`` sampled for an NSGT document's canvas: on the frames of its view and on rows
    counted in Hz (the bands renderer's cells), half its finest band spacing apart or as many as
    :data:`MAX_ROWS`, each cell taking the document's main lobe at its frequency."""
    geometry = reference_geometry(document)
    t0, t1, f0, f1 = selection.bounds()
    t0, t1 = max(t0, 0.0), min(t1, document.n_samples / document.sample_rate)
    f0, f1 = max(f0, 0.0), min(f1, document.sample_rate / 2)
    if not (t0 < t1 and f0 < f1):
        return None
    position = geometry.frame_position([t0, t1]) - 0.5  # fractional frames
    frame0 = max(0, math.floor(position[0]) - 1)
    frame1 = min(geometry.n_frames, math.ceil(position[1]) + 2)
    frame_step = math.ceil((frame1 - frame0) / MAX_COLUMNS)
    columns = np.arange(frame0, frame1, frame_step)
    middle = np.minimum(columns + frame_step // 2, geometry.n_frames - 1)
    bands = np.unique(np.concatenate([np.asarray(b.band_hz, np.float64) for b in document.blocks]))
    spacing = np.abs(np.gradient(bands))
    hz_step = max(0.5 * float(np.interp(f0, bands, spacing)), (f1 - f0) / (MAX_ROWS - 4))
    low = max(0.0, f0 - 2 * hz_step)
    hz = low + (np.arange(math.ceil((f1 + 2 * hz_step - low) / hz_step)) + 0.5) * hz_step
    grid = CellGrid(
        seconds=geometry.seconds_at(middle + 0.5),
        hz=hz,
        step_seconds=frame_step * geometry.step_seconds,
        spacing_hz=np.full(len(hz), hz_step),
        lobe_hz=main_lobe_bins(document) * np.interp(hz, bands, spacing),
    )
    weights = selection.weights(grid)
    if not weights.any():
        return None
    return SelectionMask(
        np.ascontiguousarray(weights, dtype=np.float32), frame0, frame_step, low, hz_step
    )
