"""The waveform of a whole sound in little memory: the minimum and maximum of every block of
:data:`BLOCK` samples per channel, from which any number of overview columns is drawn. Edits update
only the blocks they reach. No Qt."""

from __future__ import annotations

import numpy as np

BLOCK = 256
BLOCKS_AT_ONCE = 4096
"""Blocks reduced together (a copy of about 1 M samples per channel at a time)."""


class WaveformSummary:
    """Parameters: ``samples [N, C]`` (a playback buffer's layout)."""

    def __init__(self, samples: np.ndarray):
        self.n_samples, self.n_channels = samples.shape
        blocks = -(-self.n_samples // BLOCK)
        self.low = np.zeros((self.n_channels, blocks), np.float32)
        self.high = np.zeros((self.n_channels, blocks), np.float32)
        self.update(samples, 0, self.n_samples)

    def update(self, samples: np.ndarray, start: int, stop: int) -> None:
        """Samples ``[start, stop)`` of ``samples [N, C]`` changed: recompute their blocks."""
        first = max(0, start) // BLOCK
        last = -(-min(stop, self.n_samples) // BLOCK)
        if last <= first:
            return
        whole = min(last, self.n_samples // BLOCK)
        for begin in range(first, whole, BLOCKS_AT_ONCE):
            end = min(whole, begin + BLOCKS_AT_ONCE)
            # channel by channel, each block's samples in a row: the reductions run along memory
            # (along ``[N, C]``'s rows they were 30 times slower)
            rows = np.ascontiguousarray(samples[begin * BLOCK : end * BLOCK].T)
            part = rows.reshape(self.n_channels, end - begin, BLOCK)
            self.low[:, begin:end] = part.min(axis=2)
            self.high[:, begin:end] = part.max(axis=2)
        if last > whole:  # the short block at the end
            tail = samples[whole * BLOCK :]
            self.low[:, whole] = tail.min(axis=0)
            self.high[:, whole] = tail.max(axis=0)

    def columns(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of ``width`` columns over the whole sound, each ``[C, width]``: the
        extremes of the blocks each column covers."""
        blocks = self.low.shape[1]
        edges = np.linspace(0, blocks, width + 1).astype(np.int64)
        edges[1:] = np.maximum(edges[1:], edges[:-1] + 1)
        edges = np.minimum(edges, blocks)
        starts = np.minimum(edges[:-1], blocks - 1)
        low = np.minimum.reduceat(self.low, starts, axis=1)
        high = np.maximum.reduceat(self.high, starts, axis=1)
        return low, high
