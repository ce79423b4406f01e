"""Regions of the coefficient grid: the boxes that edits change.

A :class:`Region` is a half-open box of bins and frames in one coefficient block, for a set of
channels; :class:`Regions` holds boxes of several blocks (a stroke on an NSGT document changes
every block its dabs reach). Everything downstream of an edit (texture uploads, playback
resynthesis, undo) works in these boxes, so they are plain data with no torch or numpy inside.
Either one's ``parts`` gives its non-empty boxes.
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

    @property
    def parts(self) -> tuple[Region, ...]:
        """The non-empty boxes (this one, or none)."""
        return () if self.empty else (self,)

    def union(self, other: Region | Regions) -> Region | Regions:
        """The smallest box holding both (channels merged); an empty side is ignored. Boxes of
        different blocks give :class:`Regions`."""
        if isinstance(other, Regions) or (
            not other.empty and not self.empty and other.block != self.block
        ):
            return Regions(self.parts).union(other)
        if other.empty:
            return self
        if self.empty:
            return other
        return Region(
            min(self.bin0, other.bin0),
            max(self.bin1, other.bin1),
            min(self.frame0, other.frame0),
            max(self.frame1, other.frame1),
            self.channels
            if other.channels == self.channels  # (a stroke's boxes: no sets to merge)
            else tuple(sorted(set(self.channels) | set(other.channels))),
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


@dataclass(frozen=True)
class Regions:
    """Boxes in several blocks, at most one per block, in block order."""

    parts: tuple[Region, ...]

    @property
    def empty(self) -> bool:
        return not self.parts

    def union(self, other: Region | Regions) -> Regions:
        boxes = {part.block: part for part in self.parts}
        for part in other.parts:
            boxes[part.block] = boxes[part.block].union(part) if part.block in boxes else part
        return Regions(tuple(boxes[block] for block in sorted(boxes)))
