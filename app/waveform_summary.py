"""The waveform of a whole sound in little memory: the minimum and maximum of every block of
:data:`BLOCK` samples per channel, from which any number of overview columns is drawn. Edits update
only the blocks they reach. No Qt."""

from __future__ import annotations

import numpy as np

BLOCK = 256


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
        if whole > first:
            part = samples[first * BLOCK : whole * BLOCK].reshape(whole - first, BLOCK, -1)
            self.low[:, first:whole] = part.min(axis=1).T
            self.high[:, first:whole] = part.max(axis=1).T
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
