"""Reduced levels of a magnitude grid: each column the maximum over ``LEVEL_FACTOR ** level`` frames.

A zoomed-out view reads the level whose columns are about one pixel wide, so a short loud event
(a click, a transient) stays visible instead of falling between sampled columns. Levels are not kept
anywhere but in the textures: the columns a dirty rectangle reaches are recomputed from level 0 when
they are uploaded, which costs time in proportion to the rectangle, not to the document.
"""

from __future__ import annotations

import torch

from spectropaint.gpu.tiles import LEVEL_FACTOR, Rect


def pooled_columns(magnitude: torch.Tensor, level: int, rect: Rect) -> torch.Tensor:
    """Columns ``rect`` of reduced level ``level``.

    Parameters
    ----------
    magnitude : torch.Tensor [shape=(F, T)]
        Level 0 of one channel (non-negative).
    level : int
        0 returns the cells themselves; level ``L`` column ``j`` is the maximum over frames
        ``[j * 4**L, (j + 1) * 4**L)`` (the last column over the frames that exist).
    rect : Rect
        Rows (bins) and columns of ``level``.

    Returns
    -------
    torch.Tensor [shape=(rect.row1 - rect.row0, rect.col1 - rect.col0)]
    """
    scale = LEVEL_FACTOR**level
    frame0, frame1 = rect.col0 * scale, min(magnitude.shape[-1], rect.col1 * scale)
    cells = magnitude[rect.row0 : rect.row1, frame0:frame1]
    if level == 0:
        return cells
    rows, columns = cells.shape[0], rect.col1 - rect.col0
    whole = cells.shape[-1] // scale  # columns with all their frames: pooled from a view, no copy
    pooled = cells[:, : whole * scale].reshape(rows, whole, scale).amax(dim=-1)
    if whole == columns:
        return pooled
    # the last column holds the frames that exist (zeros never win a maximum of magnitudes), and
    # columns past the end are zero
    rest = cells.new_zeros((rows, columns - whole))
    if cells.shape[-1] > whole * scale:
        rest[:, 0] = cells[:, whole * scale :].amax(dim=-1)
    return torch.cat((pooled, rest), dim=1)
