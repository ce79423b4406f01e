"""Regions of the coefficient grid and the region-changed event that the document emits.

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

    def intersection(self, other: Region) -> Region:
        """The cells of both boxes (``self``'s channels and block); empty when they do not meet."""
        return Region(
            max(self.bin0, other.bin0),
            min(self.bin1, other.bin1),
            max(self.frame0, other.frame0),
            min(self.frame1, other.frame1),
            self.channels,
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


class RegionChanged:
    """A minimal observer list: ``connect(callback)``, ``emit(region)``.

    The document owns one; the renderer, the playback buffer and the GUI connect to it. Callbacks run
    synchronously on the emitting thread.
    """

    def __init__(self) -> None:
        self._callbacks: list = []

    def connect(self, callback) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback) -> None:
        self._callbacks.remove(callback)

    def emit(self, region: Region) -> None:
        for callback in list(self._callbacks):
            callback(region)
