"""A selection's outline for the renderer: its weight sampled on (a thinning of) the block's cells.

The renderer keeps :attr:`SelectionMask.weights` in a small texture and the shader
(``shaders/overlay.wgsl``) looks it up at every pixel's frame and bin, so the outline follows any
frequency axis and any zoom without re-sampling; only a new selection uploads anything. A
selection wider than :data:`MAX_COLUMNS` frames or :data:`MAX_ROWS` bins is sampled every few
cells (its outline is then that coarse).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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
    bin0: int
    bin_step: int


def selection_mask(
    selection: Selection | None, document, *, block: int = 0
) -> SelectionMask | None:
    """``selection`` (resolved) sampled for display on ``block``; None when it selects nothing."""
    if selection is None or selection.empty:
        return None
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
