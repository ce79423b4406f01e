"""Where each coefficient lives in the GPU's texture tiles, and which parts need uploading.

One block's magnitude is stored in a single 2-D array texture whose layers are the tiles, each no
wider or taller than the adapter's ``max_texture_dimension_2d``. The shader then reaches any tile from
any pixel, so a pixel whose footprint straddles two tiles needs no seam handling.

Columns: the reduced levels (level ``L`` max-pools ``LEVEL_FACTOR ** L`` frames into one column) are
laid end to end in one *virtual* column axis, level 0 first, and that axis is cut into tile columns of
``tile_width``; rows (bins) are cut into tile rows of ``tile_height``. The layer of a tile is
``(channel * tile_rows + tile_row) * tile_cols + tile_col``. Texture coordinates are (x, y) = (column,
row): the reverse of numpy's (row, column) order.

Nothing here touches the GPU, so the bookkeeping is tested on its own.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

LEVEL_FACTOR = 4
"""Frames pooled into one column per level step."""
MIN_LEVEL_WIDTH = 16
"""Levels are added until one is at most this many columns wide (narrower than any view)."""
MAX_LEVELS = 16
"""The shader's uniform block holds this many level offsets."""


def level_widths(n_frames: int, *, min_width: int = MIN_LEVEL_WIDTH) -> tuple[int, ...]:
    """Columns in each level: ``n_frames``, then ``ceil(previous / LEVEL_FACTOR)`` while too wide."""
    widths = [n_frames]
    while widths[-1] > min_width and len(widths) < MAX_LEVELS:
        widths.append(-(-widths[-1] // LEVEL_FACTOR))
    return tuple(widths)


class Rect(NamedTuple):
    """Rows ``[row0, row1)`` (bins) and columns ``[col0, col1)`` (frames or level columns)."""

    row0: int
    row1: int
    col0: int
    col1: int

    @property
    def size(self) -> int:
        return max(0, self.row1 - self.row0) * max(0, self.col1 - self.col0)

    def touches(self, other: Rect) -> bool:
        """Overlapping or sharing an edge (so that their union box wastes little)."""
        return (
            self.row0 <= other.row1
            and other.row0 <= self.row1
            and self.col0 <= other.col1
            and other.col0 <= self.col1
        )

    def union(self, other: Rect) -> Rect:
        return Rect(
            min(self.row0, other.row0),
            max(self.row1, other.row1),
            min(self.col0, other.col0),
            max(self.col1, other.col1),
        )

    def at_level(self, level: int) -> Rect:
        """The columns of reduced level ``level`` that hold any of this rectangle's frames."""
        scale = LEVEL_FACTOR**level
        return Rect(self.row0, self.row1, self.col0 // scale, -(-self.col1 // scale))


def merge_rects(rects: Iterable[Rect]) -> list[Rect]:
    """Merge touching rectangles until none touch: every cell is then in exactly one of them."""
    merged: list[Rect] = []
    for rect in rects:
        merged = add_rect(merged, rect)
    return merged


def add_rect(merged: list[Rect], rect: Rect) -> list[Rect]:
    """``merged`` (rectangles none of which touch) with ``rect`` added: those it touches, and those
    their union then touches, become one. Each rectangle is looked at once per union."""
    if rect.size == 0:
        return merged
    kept = list(merged)
    while True:
        hit = next((i for i, other in enumerate(kept) if other.touches(rect)), None)
        if hit is None:
            break
        rect = rect.union(kept.pop(hit))
    kept.append(rect)
    return kept


class DirtyRects:
    """Rectangles of level-0 cells changed since the last upload, merged per channel.

    Thread-safe: edits may be reported from a worker thread while the GUI thread uploads.
    """

    def __init__(self) -> None:
        self._rects: dict[int, list[Rect]] = {}
        self._lock = threading.Lock()

    def add(self, channel: int, rect: Rect) -> None:
        with self._lock:
            self._rects[channel] = add_rect(self._rects.get(channel, []), rect)

    def take(self) -> dict[int, list[Rect]]:
        """The pending rectangles by channel; the set is empty afterwards."""
        with self._lock:
            rects, self._rects = self._rects, {}
        return {channel: found for channel, found in rects.items() if found}


class Piece(NamedTuple):
    """The part of a rectangle inside one tile: texture ``origin`` and ``size`` plus source offset.

    ``origin`` is (x, y, layer) and ``size`` (width, height, 1), in texture order; ``source`` is the
    (row, column) of the piece's first cell within the rectangle, in numpy order.
    """

    origin: tuple[int, int, int]
    size: tuple[int, int, int]
    source: tuple[int, int]


@dataclass(frozen=True)
class TileGrid:
    """The tiles of one block for ``n_channels`` channels and reduced levels of ``level_widths``.

    Its derived numbers are computed once (every texture write asks for them)."""

    n_channels: int
    n_bins: int
    level_widths: tuple[int, ...]
    tile_width: int
    tile_height: int

    @classmethod
    def create(
        cls, n_channels: int, n_bins: int, level_widths: tuple[int, ...], *, max_dim: int
    ) -> TileGrid:
        """Tiles no side longer than ``max_dim`` texels.

        Tile widths are powers of two, and so are tile heights when the bins need several tile
        rows, so that the shader finds a texel with shifts and masks: integer division is slow on
        CPU rasterisers (no SIMD divide). One row of tiles is exactly ``n_bins`` high.
        """
        largest = 1 << (max_dim.bit_length() - 1)
        width = min(largest, 1 << max(0, sum(level_widths) - 1).bit_length())
        return cls(
            n_channels, n_bins, level_widths, width, n_bins if n_bins <= max_dim else largest
        )

    @functools.cached_property
    def level_offsets(self) -> tuple[int, ...]:
        """Virtual column where each level starts."""
        offsets, total = [], 0
        for width in self.level_widths:
            offsets.append(total)
            total += width
        return tuple(offsets)

    @functools.cached_property
    def column_shift(self) -> int:
        """``log2(tile_width)``: virtual column ``v`` is in tile column ``v >> column_shift``."""
        return self.tile_width.bit_length() - 1

    @functools.cached_property
    def row_shift_and_mask(self) -> tuple[int, int]:
        """Bin ``b`` is in tile row ``b >> shift``, texel row ``b & mask`` (shift 31 for one row)."""
        if self.tile_rows == 1:
            return 31, 0xFFFFFFFF
        return self.tile_height.bit_length() - 1, self.tile_height - 1

    @functools.cached_property
    def tile_cols(self) -> int:
        return -(-sum(self.level_widths) // self.tile_width)

    @functools.cached_property
    def tile_rows(self) -> int:
        return -(-self.n_bins // self.tile_height)

    @functools.cached_property
    def n_layers(self) -> int:
        return self.n_channels * self.tile_rows * self.tile_cols

    def layer(self, channel: int, tile_row: int, tile_col: int) -> int:
        return (channel * self.tile_rows + tile_row) * self.tile_cols + tile_col

    def full_rect(self, level: int = 0) -> Rect:
        return Rect(0, self.n_bins, 0, self.level_widths[level])

    def pieces(self, channel: int, level: int, rect: Rect) -> list[Piece]:
        """Split ``rect`` (rows = bins, columns of ``level``) at tile borders."""
        start = self.level_offsets[level]
        pieces = []
        row = rect.row0
        while row < rect.row1:
            tile_row, y = divmod(row, self.tile_height)
            height = min(self.tile_height - y, rect.row1 - row)
            col = rect.col0
            while col < rect.col1:
                tile_col, x = divmod(start + col, self.tile_width)
                width = min(self.tile_width - x, rect.col1 - col)
                layer = self.layer(channel, tile_row, tile_col)
                pieces.append(
                    Piece((x, y, layer), (width, height, 1), (row - rect.row0, col - rect.col0))
                )
                col += width
            row += height
        return pieces


class MissingColumns:
    """Columns of each level not uploaded yet: the first frame uploads what its view reads, the rest
    is streamed in a budget at a time, coarsest level first.

    Spans are half-open ``(col0, col1)`` per level, kept sorted and disjoint.
    """

    def __init__(self, level_widths: tuple[int, ...]) -> None:
        self.level_widths = level_widths
        self._spans: dict[int, list[tuple[int, int]]] = {}
        self.reset()

    def reset(self) -> None:
        """Every column of every level is missing again (another channel shown)."""
        self._spans = {level: [(0, width)] for level, width in enumerate(self.level_widths)}

    @property
    def pending(self) -> bool:
        return any(self._spans.values())

    def columns(self) -> int:
        """Missing columns over all levels."""
        return sum(b - a for spans in self._spans.values() for a, b in spans)

    def take(self, level: int, col0: int, col1: int) -> list[tuple[int, int]]:
        """Remove columns ``[col0, col1)`` of ``level``; the spans of them that were missing."""
        taken, kept = [], []
        for a, b in self._spans[level]:
            lo, hi = max(a, col0), min(b, col1)
            if lo >= hi:
                kept.append((a, b))
                continue
            taken.append((lo, hi))
            kept.extend(span for span in ((a, lo), (hi, b)) if span[0] < span[1])
        self._spans[level] = kept
        return taken

    def take_next(self, budget: int) -> list[tuple[int, int, int]]:
        """Up to ``budget`` missing columns, coarsest level first: ``(level, col0, col1)`` spans."""
        found = []
        for level in sorted(self._spans, reverse=True):
            while budget > 0 and self._spans[level]:
                a, b = self._spans[level][0]
                span = self.take(level, a, min(b, a + budget))[0]
                found.append((level, *span))
                budget -= span[1] - span[0]
        return found
