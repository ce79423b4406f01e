"""Regions of the coefficient grid: the boxes that edits change.

A :class:`Region` is a half-open box of bins and frames in one coefficient block, for a set of
channels. Everything downstream of an edit (texture uploads, playback resynthesis, undo) works in
these boxes, so they are plain data with no torch or numpy inside.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Region:
    """Bins ``[bin0, bin1)`` and frames ``[frame0, frame1)`` of ``channels`` in block ``block``."""

    bin0: int
    bin1: int
    frame0: int
    frame1: int
    channels: tuple[int, ...] = (0,)
    block: int = 0

    @property
    def empty(self) -> bool:
        return self.bin1 <= self.bin0 or self.frame1 <= self.frame0 or not self.channels

    @property
    def shape(self) -> tuple[int, int]:
        """(bins, frames), numpy order."""
        return (max(0, self.bin1 - self.bin0), max(0, self.frame1 - self.frame0))

    def union(self, other: Region) -> Region:
        """The smallest box holding both (channels merged); an empty side is ignored."""
        if other.empty:
            return self
        if self.empty:
            return other
        if other.block != self.block:
            raise ValueError("cannot merge regions of different blocks")
        return Region(
            min(self.bin0, other.bin0),
            max(self.bin1, other.bin1),
            min(self.frame0, other.frame0),
            max(self.frame1, other.frame1),
            tuple(sorted(set(self.channels) | set(other.channels))),
            self.block,
        )

    def clipped(self, n_bins: int, n_frames: int) -> Region:
        """This box clipped to a grid of ``n_bins`` x ``n_frames`` (never wrapped)."""
        return Region(
            max(0, self.bin0),
            min(n_bins, self.bin1),
            max(0, self.frame0),
            min(n_frames, self.frame1),
            self.channels,
            self.block,
        )


EMPTY = Region(0, 0, 0, 0, ())
