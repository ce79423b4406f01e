"""Arrays kept per square tile of a (bins, frames) grid: the sparse store of one stroke.

A stroke touches a thin band of a possibly ten-minute grid. Its original values (for undo and for
brushes that compute from the stroke's start) and its coverage on a device are kept only for the
tiles it touched, so memory and time follow the stroke's size, never the document's (a coverage kept
on the host: :mod:`.coverage_plane`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator

import torch

from spectropaint.transforms.regions import Region

TILE = 64
"""The smallest tile side in cells (bins and frames)."""
LARGEST_TILE = 256


def tile_for(radius: float) -> int:
    """The tile side for a brush of ``radius`` cells: about one dab across, 64 to 256.

    A dab then meets at most four tiles (a few more with a kernel's margin), so gathering a region
    from the tiles is a handful of copies, while small brushes keep undo data small.
    """
    side = TILE
    while side < 2 * radius and side < LARGEST_TILE:
        side *= 2
    return side


class TileMap:
    """Tensors ``[..., tile_bins, tile_frames]`` for the touched tiles of an ``n_bins x n_frames`` grid
    (of coefficient block ``block``).

    Tiles at the grid's far edges are cut to the grid, so a tile's tensor always matches its box.
    """

    def __init__(self, n_bins: int, n_frames: int, *, tile: int = TILE, block: int = 0):
        self.n_bins = n_bins
        self.n_frames = n_frames
        self.tile = tile
        self.block = block
        self.tiles: dict[tuple[int, int], torch.Tensor] = {}

    def keys(self, box: Region) -> Iterator[tuple[int, int]]:
        """Every tile key (row, column) that ``box`` overlaps, stored or not."""
        if box.empty:
            return
        t = self.tile
        for row in range(box.bin0 // t, (box.bin1 - 1) // t + 1):
            for column in range(box.frame0 // t, (box.frame1 - 1) // t + 1):
                yield row, column

    def tile_box(self, key: tuple[int, int], channels: tuple[int, ...]) -> Region:
        """The grid cells of tile ``key``."""
        row, column = key
        t = self.tile
        box = Region(row * t, (row + 1) * t, column * t, (column + 1) * t, channels, self.block)
        return box.clipped(self.n_bins, self.n_frames)

    def ensure(self, box: Region, make: Callable[[Region], torch.Tensor]) -> list[tuple[int, int]]:
        """Store ``make(tile_box)`` for every tile ``box`` overlaps that has none yet; the new keys."""
        new = [key for key in self.keys(box) if key not in self.tiles]
        for key in new:
            self.tiles[key] = make(self.tile_box(key, box.channels))
        return new

    def ensure_read(
        self, box: Region, read: Callable[[Region, int], torch.Tensor]
    ) -> list[tuple[int, int]]:
        """:meth:`ensure` for tensors read from the grid: ``read(region, count)`` gives the
        values of a region of ``count`` tiles of a row side by side, tile by tile ``[count, ...,
        bins, tile]`` (each tile contiguous), so that those are read in one call instead of one
        call a tile: a stroke across a ten-minute file seen whole meets some thirty new tiles a
        pointer move, each a launch or two on a GPU. The new keys."""
        new = [key for key in self.keys(box) if key not in self.tiles]
        t, start = self.tile, 0
        while start < len(new):
            row, first = new[start]
            stop = start + 1
            while stop < len(new) and new[stop] == (row, first + stop - start):
                stop += 1
            if stop - start > 1 and new[stop - 1][1] * t + t > self.n_frames:
                stop -= 1  # (a tile cut by the grid's last frame is read alone)
            keys = new[start:stop]
            if len(keys) == 1:
                self.tiles[keys[0]] = read(self.tile_box(keys[0], box.channels), 1)[0]
            else:
                run = Region(row * t, min(row * t + t, self.n_bins), first * t,
                             (first + len(keys)) * t, box.channels, self.block)  # fmt: skip
                self.tiles.update(zip(keys, read(run, len(keys)).unbind(0), strict=True))
            start = stop
        return new

    def _overlaps(
        self, box: Region, skip: Container[tuple[int, int]] = ()
    ) -> Iterator[tuple[torch.Tensor, tuple[slice, slice], tuple[slice, slice]]]:
        """(tile tensor, slices into the tile, slices into ``box``) for each stored tile ``box``
        meets, but those in ``skip``."""
        t = self.tile
        for key in self.keys(box):
            stored = self.tiles.get(key)
            if stored is None or key in skip:
                continue
            b0, f0 = key[0] * t, key[1] * t
            lo_b, hi_b = max(box.bin0, b0), min(box.bin1, b0 + stored.shape[-2])
            lo_f, hi_f = max(box.frame0, f0), min(box.frame1, f0 + stored.shape[-1])
            if lo_b >= hi_b or lo_f >= hi_f:
                continue
            in_tile = (slice(lo_b - b0, hi_b - b0), slice(lo_f - f0, hi_f - f0))
            in_box = (
                slice(lo_b - box.bin0, hi_b - box.bin0),
                slice(lo_f - box.frame0, hi_f - box.frame0),
            )
            yield stored, in_tile, in_box

    def paste_into(
        self, out: torch.Tensor, box: Region, skip: Container[tuple[int, int]] = ()
    ) -> torch.Tensor:
        """Overwrite ``out`` (covering ``box``) with the stored tiles where they exist, but those
        whose keys are in ``skip``; returns ``out``."""
        for stored, in_tile, in_box in self._overlaps(box, skip):
            out[(..., *in_box)] = stored[(..., *in_tile)]
        return out

    def raise_to(self, values: torch.Tensor, box: Region, out: torch.Tensor) -> torch.Tensor:
        """Raise the stored tiles ``box`` meets to ``values`` (covering ``box``) where they are
        lower, in place, and copy the raised values into ``out`` (covering ``box``); returns
        ``out``. One pass over the tiles."""
        for stored, in_tile, in_box in self._overlaps(box):
            part = stored[(..., *in_tile)]
            torch.maximum(part, values[(..., *in_box)], out=part)
            out[(..., *in_box)] = part
        return out
