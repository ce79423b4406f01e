"""Reduced levels of a magnitude grid: each column the maximum over ``LEVEL_FACTOR ** level`` frames.

A zoomed-out view reads the level whose columns are about one pixel wide, so a short loud event
(a click, a transient) stays visible instead of falling between sampled columns. The renderer keeps
the levels next to the document (:class:`ReducedLevels`): the columns a dirty rectangle reaches are
recomputed from four columns of the level below each, which costs time in proportion to the
rectangle, not to the document. :func:`pooled_columns` computes any columns from level 0 alone.
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


def _pool_four(cells: torch.Tensor, columns: int, out: torch.Tensor | None = None) -> torch.Tensor:
    """``columns`` maxima of ``cells`` ``[F, n]`` over groups of ``LEVEL_FACTOR`` (the last group
    over what is there; ``n > LEVEL_FACTOR * (columns - 1)``), written into ``out`` ``[F, columns]``
    (any strides: a box of the level above) when given, with no intermediate tensor."""
    whole = cells.shape[-1] // LEVEL_FACTOR
    grouped = cells[:, : whole * LEVEL_FACTOR].reshape(cells.shape[0], whole, LEVEL_FACTOR)
    if out is None:
        pooled = grouped.amax(dim=-1)
        if whole == columns:
            return pooled
        rest = cells[:, whole * LEVEL_FACTOR :].amax(dim=-1, keepdim=True)
        return torch.cat((pooled, rest), dim=1)
    torch.amax(grouped, dim=-1, out=out[:, :whole])
    if whole < columns:
        torch.amax(cells[:, whole * LEVEL_FACTOR :], dim=-1, keepdim=True, out=out[:, whole:])
    return out


def _pool_box(lower: torch.Tensor, upper: torch.Tensor, box: Rect) -> torch.Tensor:
    """Recompute ``box`` (rows, columns) of ``upper`` from ``lower``, the level below it (both
    ``[F, columns]``); the box of ``upper``, a view. The box and its groups of four are addressed
    by strides: an edit runs this for every level, and on CUDA each slice or reshape costs host
    time as a launch does."""
    rows, columns = box.row1 - box.row0, box.col1 - box.col0
    row_step, column_step = upper.stride()
    out = upper.as_strided(
        (rows, columns),
        (row_step, column_step),
        upper.storage_offset() + box.row0 * row_step + box.col0 * column_step,
    )
    if lower.shape[-1] < LEVEL_FACTOR * box.col1:  # the level's last column: fewer than four
        cells = lower[box.row0 : box.row1, LEVEL_FACTOR * box.col0 :]
        return _pool_four(cells, columns, out=out)
    row_step, column_step = lower.stride()
    grouped = lower.as_strided(
        (rows, columns, LEVEL_FACTOR),
        (row_step, LEVEL_FACTOR * column_step, column_step),
        lower.storage_offset() + box.row0 * row_step + LEVEL_FACTOR * box.col0 * column_step,
    )
    return torch.amax(grouped, dim=-1, out=out)


class ReducedLevels:
    """The reduced levels of one channel, kept on the magnitudes' device, each made from the one
    below it (level ``L + 1`` column ``j`` is the maximum of level ``L`` columns ``4j .. 4j + 3``,
    which is the maximum of its frames: the same values :func:`pooled_columns` gives).

    An edit then costs what it changed: :meth:`update` recomputes, level by level, only the columns
    over the edited ones, from four columns of the level below each. A level is made whole the first
    time it is asked for (:meth:`columns`); it costs a third of level 0's memory, all levels together.

    Parameters
    ----------
    magnitude : torch.Tensor [shape=(F, T)]
        Level 0 (read again on every call: it may be a view the document writes into).
    level_widths : tuple of int
        Columns of each level, level 0 first (``tiles.level_widths(T)``).
    """

    def __init__(self, magnitude: torch.Tensor, level_widths: tuple[int, ...]):
        self.magnitude = magnitude
        self.level_widths = level_widths
        self._levels: list[torch.Tensor | None] = [magnitude] + [None] * (len(level_widths) - 1)
        self._boxes: dict[tuple[int, Rect], torch.Tensor] = {}
        """The boxes above level 0 that the last :meth:`update` wrote, as views of their levels:
        :meth:`columns` of them then slices nothing."""

    def _level(self, level: int) -> torch.Tensor:
        if self._levels[level] is None:
            self._levels[level] = _pool_four(self._level(level - 1), self.level_widths[level])
        return self._levels[level]

    def rebase(self, magnitude: torch.Tensor) -> None:
        """Level 0 is now ``magnitude`` (the same cells: every change is still reported)."""
        self._levels[0] = magnitude

    def columns(self, level: int, rect: Rect) -> torch.Tensor:
        """Rows and columns ``rect`` of ``level`` ``[rows, columns]`` (a view)."""
        box = self._boxes.get((level, rect))
        if box is not None:
            return box
        return self._level(level)[rect.row0 : rect.row1, rect.col0 : rect.col1]

    def update(self, rect: Rect) -> list[tuple[int, Rect]]:
        """Level-0 cells ``rect`` changed: recompute the columns over them in every level made so
        far; the rectangle of each level (level 0 included) that is now to be uploaded."""
        changed = [(0, rect)]
        self._boxes = {}
        for level in range(1, len(self.level_widths)):
            below = changed[-1][1]
            here = Rect(
                below.row0, below.row1, below.col0 // LEVEL_FACTOR, -(-below.col1 // LEVEL_FACTOR)
            )
            if self._levels[level] is not None:
                box = _pool_box(self._levels[level - 1], self._levels[level], here)
                self._boxes[level, here] = box
            changed.append((level, here))
        return changed
