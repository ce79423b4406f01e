"""Where a stroke's kept tiles of one block lie, as a table on the device that the fused kernels
look each cell's tile up in (:func:`~.triton_math._plain_from_kept`).

A stroke keeps the original values of each tile it writes to (:class:`~spectropaint.brushes.
tiles.TileMap`, one tensor ``[2, C, h, w]`` a tile). A kernel that reads a group's starting values
where they lie takes each cell from its kept tile, else from the document. The table holds, for
each tile of the block's grid, the address of its kept tensor (0 where none is kept): a cell finds
its tile by one division and one load, whatever the number of tiles its region meets, and a
kernel takes the table in seven arguments (:meth:`TileTable.places`).

The table is written as tiles are kept (:meth:`TileTable.enter`, one small launch that reads the
new entries from pinned memory, in the stream's order after the copies that made the tiles), so a
kernel launched later finds every tile kept before it, and the tile's copy holds its values by
then: a tile kept by the group's own record is read from its copy, like any other.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from spectropaint.brushes.kernels import staging, triton_math

NO_TILE_SIDE = 1 << 30
"""The tile side of a table that holds no tile (:func:`no_tiles`; its row of no columns tells the
kernels to read the document alone)."""
BLOCK = 128
"""Entries each program of :meth:`TileTable.enter` writes."""


class TileTable:
    """The addresses of a block's kept tiles: ``[rows, columns]`` int64 on ``device``, one entry a
    tile of ``side`` cells of an ``n_bins x n_frames`` grid (tiles at its far edges cut to it)."""

    def __init__(self, n_bins: int, n_frames: int, side: int, device: torch.device) -> None:
        self.n_bins, self.n_frames, self.side = n_bins, n_frames, side
        self.columns = -(-n_frames // side)
        self.addresses = torch.zeros((-(-n_bins // side), self.columns), dtype=torch.int64,
                                     device=device)  # fmt: skip

    @property
    def device(self) -> torch.device:
        return self.addresses.device

    def enter(self, tiles: dict[tuple[int, int], torch.Tensor]) -> None:
        """Enter ``tiles`` (by key: tile row and column), each contiguous ``[2, C, h, w]``, ``h``
        and ``w`` the tile's cells in the grid. Raises :class:`~.triton_math.Unavailable` where
        Triton cannot compile."""
        if not tiles:
            return
        places = [row * self.columns + column for row, column in tiles]
        addresses = [tensor.data_ptr() for tensor in tiles.values()]
        entries = np.array([places, addresses], dtype=np.int64)
        (staged,) = staging.for_kernels([entries], self.device)
        count = len(tiles)
        triton_math.launch(_kernel(), (-(-count // BLOCK),), self.addresses, staged, count,
                           BLOCK=BLOCK)  # fmt: skip

    def places(self, bin0: int, frame0: int) -> tuple:
        """A kernel's arguments for finding the tile of a box's cells, its first cell at ``bin0``,
        ``frame0`` in the grid (:func:`~.triton_math._plain_from_kept`'s order)."""
        return (self.addresses, self.columns, self.side, self.n_bins, self.n_frames, bin0, frame0)


def no_tiles(device: torch.device) -> tuple:
    """:meth:`TileTable.places` of a table that holds no tile: every cell is the document's."""
    table = triton_math.one_cell(device, torch.int64, 0)
    return (table, 0, NO_TILE_SIDE, NO_TILE_SIDE, NO_TILE_SIDE, 0, 0)


@functools.cache
def _kernel():
    """The entering kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``); no argument
    specialised on."""
    return triton_math.jit_with(_enter, general=True)


def _enter(addresses, entries, count, BLOCK: tl.constexpr):
    """Store ``entries``' second row at the places of ``addresses`` its first row gives."""
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = at < count
    place = tl.load(entries + at, mask=inside, other=0)
    tl.store(addresses + place, tl.load(entries + count + at, mask=inside, other=0), mask=inside)


tl = None  # (bound by _kernel)
