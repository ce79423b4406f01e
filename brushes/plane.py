"""A stroke's plane: its coordinates (x along time, y along frequency) and each block's cells in them.

A stroke is drawn in one plane, whose units its settings say (:meth:`StrokePlane.of`):

- **frames and bins** (``radius_frames``, ``radius_bins``; strokes files version 1, the window on
  the STFT): cells of an STFT grid, the document's own when it is an STFT, else the default
  analysis (``n_fft`` 2048, hop 512) at the document's rate;
- **seconds and semitones** or **seconds and Hz** (``radius_seconds`` with ``radius_semitones`` or
  ``radius_hz``; strokes files version 2): physical, so a stroke recorded on one transform replays
  on another. Events are then ``(t, seconds, hz)`` and y is the MIDI note number (or Hz).

The dab is an ellipse in the plane. :class:`BlockAxes` places one block's frames and bands in it
(x of frame ``j`` is affine in ``j``; y of band ``k`` is any ascending array), converted once per
stroke and block; the one dab function then edits each block over its own frames and bands. On an
STFT document, a frames-and-bins stroke meets block 0 as the identity, so its arithmetic is exactly
that of the cells themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spectropaint.transforms.stft import STFTSettings

A4_HZ, A4_NOTE = 440.0, 69.0
LOWEST_HZ = 1e-3
"""Frequencies below this (the DC band's 0 Hz) are placed here on a semitone axis."""


def hz_to_semitones(hz):
    """MIDI note number of a frequency (69 is A4, 440 Hz)."""
    hz = np.maximum(np.asarray(hz, dtype=np.float64), LOWEST_HZ)
    return A4_NOTE + 12.0 * np.log2(hz / A4_HZ)


def semitones_to_hz(note):
    return A4_HZ * 2.0 ** ((np.asarray(note, dtype=np.float64) - A4_NOTE) / 12.0)


@dataclass(frozen=True)
class StrokePlane:
    """The units of a stroke's coordinates, and the STFT grid that frames and bins refer to.

    Attributes
    ----------
    time : str
        ``'frames'`` or ``'seconds'``.
    pitch : str
        ``'bins'``, ``'semitones'`` or ``'hz'``.
    frame_seconds, first_seconds, bin_hz : float
        The frames-and-bins grid: seconds per frame, centre of frame 0, Hz per bin.
    radius : tuple of float
        The brush's full-size radii in these units (x, y).
    """

    time: str
    pitch: str
    frame_seconds: float
    first_seconds: float
    bin_hz: float
    radius: tuple[float, float]

    @classmethod
    def of(cls, settings, document) -> StrokePlane:
        """The plane of a stroke with ``settings`` on ``document``."""
        stft = document.settings if isinstance(document.settings, STFTSettings) else STFTSettings()
        rate = document.sample_rate
        grid = (stft.hop / rate, 0.0, rate / stft.n_fft)
        if settings.radius_seconds is None:
            return cls("frames", "bins", *grid, (settings.radius_frames, settings.radius_bins))
        if settings.radius_semitones is not None:
            return cls(
                "seconds", "semitones", *grid, (settings.radius_seconds, settings.radius_semitones)
            )
        return cls("seconds", "hz", *grid, (settings.radius_seconds, settings.radius_hz))

    @property
    def physical(self) -> bool:
        return self.time == "seconds"

    def y_of_hz(self, hz):
        """Plane y of frequencies in Hz."""
        if self.pitch == "semitones":
            return hz_to_semitones(hz)
        if self.pitch == "bins":
            return np.asarray(hz, dtype=np.float64) / self.bin_hz
        return np.asarray(hz, dtype=np.float64)

    def x_of_seconds(self, seconds):
        seconds = np.asarray(seconds, dtype=np.float64)
        if self.time == "seconds":
            return seconds
        return (seconds - self.first_seconds) / self.frame_seconds

    def axes(self, document, block: int) -> BlockAxes:
        """Where ``block``'s frames and bands lie in this plane."""
        data = document.blocks[block]
        if not self.physical and isinstance(document.settings, STFTSettings) and block == 0:
            return BlockAxes(1.0, 0.0, np.arange(data.n_bins, dtype=np.float64), identity=True)
        seconds = data.frame_seconds
        first = float(seconds[0]) if len(seconds) else 0.0
        step = data.hop / document.sample_rate
        x0, x1 = self.x_of_seconds([first, first + step])
        return BlockAxes(float(x1 - x0), float(x0), self.y_of_hz(data.band_hz), identity=False)


@dataclass(frozen=True)
class BlockAxes:
    """One block's cells in a stroke's plane: frame ``j`` at ``x = x_offset + x_scale * j``, band
    ``k`` at ``y[k]`` (ascending). ``identity``: the plane is the block's own cells."""

    x_scale: float
    x_offset: float
    y: np.ndarray
    identity: bool = False

    def cell_of(self, x, y) -> tuple[np.ndarray, np.ndarray]:
        """Fractional frames and bands of the plane points ``(x, y)`` (bands interpolated); arrays
        of ``x``'s and ``y``'s shape, float64."""
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        positions = np.arange(len(self.y), dtype=np.float64)
        band = np.interp(y, self.y, positions) if len(self.y) else np.zeros_like(y)
        return (x - self.x_offset) / self.x_scale, band

    def cells_per_unit(self, y) -> tuple[float, np.ndarray]:
        """Frames per x unit, and bands per y unit near each ``y`` (the local density; an array of
        ``y``'s shape)."""
        y = np.asarray(y, dtype=np.float64)
        if len(self.y) < 2:
            return 1.0 / self.x_scale, np.ones_like(y)
        k = np.clip(np.searchsorted(self.y, y), 1, len(self.y) - 1)
        dy = self.y[k] - self.y[k - 1]
        fine = (dy > 0) & np.isfinite(dy)
        return 1.0 / self.x_scale, np.where(fine, 1.0 / np.where(fine, dy, 1.0), 1.0)
