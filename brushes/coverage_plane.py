"""A stroke's coverage of one block kept on the host: the largest weight any of its dabs gave each
cell, in one float32 array of the block's cells. No torch.

The array is made zeroed when the stroke's first dab raises it; the system hands such memory out
zeroed a page at a time as it is first written, so a stroke pays for the pages its dabs reach and
no more (the array's size is the block's, the memory it holds the stroke's). Before, the coverage
was kept in 256 x 256 tiles, each zeroed whole as a dab first met it and raised tile by tile: on
the H200's host a move across a ten-minute file seen whole met about six new tiles, and taking
them (new, or zeroed again after an earlier stroke) was a fifth of the move's time, their raise a
tenth (py-spy on ``tests/benchmarks/bench_whole_view.py``'s moves). The first writes of the
plane's pages take part of that back: such a move, the trees alternated three times on the
H200, took 2.05, 2.11 and 2.22 ms with the plane and 2.08, 2.28 and 2.32 with the tiles.
"""

from __future__ import annotations

import numpy as np

from spectropaint.transforms.regions import Region


class CoveragePlane:
    """The coverage of a block of ``n_bins x n_frames`` cells (:meth:`raise_to`)."""

    def __init__(self, n_bins: int, n_frames: int) -> None:
        self.shape = (n_bins, n_frames)
        self.array: np.ndarray | None = None
        """The cells (None until the first raise, and once released)."""

    def raise_to(self, values: np.ndarray, box: Region) -> np.ndarray:
        """Raise the cells of ``box`` (inside the block) to ``values`` ``[bins, frames]`` where
        they are lower; the raised values (a new array)."""
        if self.array is None:
            self.array = np.zeros(self.shape, dtype=np.float32)
        cells = self.array[box.bin0 : box.bin1, box.frame0 : box.frame1]
        np.maximum(cells, values, out=cells)
        return cells.copy()

    def release(self) -> None:
        """Give the memory back (the stroke has ended)."""
        self.array = None
