"""Coordinates of a coefficient block on screen: seconds and Hz to texel positions.

Texel coordinates put frame ``i`` over ``[i, i + 1)`` (its centre time at ``i + 0.5``) and bin ``k``
over ``[k, k + 1)`` (its centre frequency at ``k + 0.5``). A frequency scale is a monotonic *warp*
``w(hz)`` (:func:`spectropaint.transforms.geometry.warp`); the screen is linear in ``w``. The shader
computes the same warps (spectrogram.wgsl).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import even_step, samples_to_seconds

LOG_LOW_HZ = 20.0
"""Default lower edge of a logarithmic frequency axis."""


@dataclass(frozen=True)
class BlockGeometry:
    """The axes of one block with evenly spaced bins and frames (the STFT's).

    Attributes
    ----------
    n_frames, n_bins : int
    first_hz, step_hz : float
        Centre frequency of bin 0 and the spacing of bins, Hz.
    first_seconds, step_seconds : float
        Centre time of frame 0 and the spacing of frames, seconds.
    """

    n_frames: int
    n_bins: int
    first_hz: float
    step_hz: float
    first_seconds: float
    step_seconds: float

    @classmethod
    def from_block(cls, block, sample_rate: float) -> BlockGeometry:
        """Read ``band_hz``, ``hop`` and ``frame_seconds`` of a coefficient block."""
        band = np.asarray(block.band_hz, dtype=np.float64)
        n_bins = len(band)
        step = even_step(band) if n_bins > 1 else sample_rate / 2
        if step is None:
            raise SettingsError(
                "the renderer draws blocks with evenly spaced bins (the STFT's); "
                "this block's bands are unevenly spaced"
            )
        seconds = np.asarray(block.frame_seconds, dtype=np.float64)
        first_seconds = float(seconds[0]) if len(seconds) else 0.0
        return cls(
            n_frames=int(block.magnitude.shape[-1]),
            n_bins=n_bins,
            first_hz=float(band[0]),
            step_hz=float(step),
            first_seconds=first_seconds,
            step_seconds=float(samples_to_seconds(block.hop, sample_rate=sample_rate)),
        )

    @property
    def low_edge_hz(self) -> float:
        """Lower edge of bin 0's cell."""
        return self.first_hz - 0.5 * self.step_hz

    @property
    def high_edge_hz(self) -> float:
        """Upper edge of the last bin's cell."""
        return self.low_edge_hz + self.n_bins * self.step_hz

    def frame_position(self, seconds):
        """Texel coordinate along time of a time in seconds (frame ``i``'s centre is ``i + 0.5``)."""
        return (
            np.asarray(seconds, dtype=np.float64) - self.first_seconds
        ) / self.step_seconds + 0.5

    def seconds_at(self, position):
        """Inverse of :meth:`frame_position`."""
        return (
            np.asarray(position, dtype=np.float64) - 0.5
        ) * self.step_seconds + self.first_seconds

    def default_freq_range(self, scale: str) -> tuple[float, float]:
        """Every bin's cell; a logarithmic axis starts at ``LOG_LOW_HZ`` or at the centre of the
        first bin above 0 Hz, whichever is higher."""
        if scale != "log":
            return self.low_edge_hz, self.high_edge_hz
        first_positive = self.first_hz if self.first_hz > 0 else self.first_hz + self.step_hz
        return max(LOG_LOW_HZ, first_positive), self.high_edge_hz


def reference_geometry(document) -> BlockGeometry:
    """The view's axes for an NSGT document: frames and bins of the default STFT at its rate."""
    from spectropaint.transforms.stft import STFTSettings  # torch, which this module needs not

    stft = STFTSettings()
    rate = document.sample_rate
    return BlockGeometry(
        n_frames=1 + document.n_samples // stft.hop,
        n_bins=stft.n_fft // 2 + 1,
        first_hz=0.0,
        step_hz=rate / stft.n_fft,
        first_seconds=0.0,
        step_seconds=stft.hop / rate,
    )
