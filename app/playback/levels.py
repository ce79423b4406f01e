"""Level meters and the time counter, as numbers (no Qt): the peak and RMS of what plays around the
playhead, per channel, with the ballistics a meter shows them with, and the playhead as a clock and
in samples."""

from __future__ import annotations

import math

import numpy as np

WINDOW_S = 0.05
"""Samples measured: the 50 ms before the playhead (a block or two of audio)."""
FLOOR_DB = -90.0
"""The bottom of the meter: quieter reads as this."""
PEAK_HOLD_S = 1.5
FALL_DB_PER_S = 24.0


def measure(
    samples: np.ndarray, position: int, sample_rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """Peak and RMS in dB of full scale (1.0) of the :data:`WINDOW_S` before ``position``.

    Parameters
    ----------
    samples : np.ndarray [shape=(N, C)]
    position : int
        The playhead, a sample index.
    sample_rate : float

    Returns
    -------
    (peak_db, rms_db) : np.ndarray [shape=(C,)] each, no lower than :data:`FLOOR_DB`
    """
    window = max(1, round(WINDOW_S * sample_rate))
    stop = min(max(position, 0), len(samples))
    segment = np.asarray(samples[max(0, stop - window) : stop], dtype=np.float64)
    channels = samples.shape[1]
    if len(segment) == 0:
        floor = np.full(channels, FLOOR_DB)
        return floor, floor.copy()
    peak = np.abs(segment).max(axis=0)
    rms = np.sqrt(np.mean(segment**2, axis=0))
    with np.errstate(divide="ignore"):
        return (
            np.maximum(20 * np.log10(peak), FLOOR_DB),
            np.maximum(20 * np.log10(rms), FLOOR_DB),
        )


class Ballistics:
    """What a meter shows: the RMS as measured, and a peak that holds :data:`PEAK_HOLD_S` then falls
    at :data:`FALL_DB_PER_S`, per channel."""

    def __init__(self, channels: int):
        self.peak = np.full(channels, FLOOR_DB)
        self.rms = np.full(channels, FLOOR_DB)
        self._held_for = np.zeros(channels)

    def update(self, peak_db: np.ndarray, rms_db: np.ndarray, dt: float) -> None:
        """New measurements, ``dt`` seconds after the last ones."""
        self._held_for += dt
        fallen = np.where(
            self._held_for > PEAK_HOLD_S,
            self.peak - FALL_DB_PER_S * dt,
            self.peak,
        )
        higher = peak_db >= fallen
        self.peak = np.maximum(np.where(higher, peak_db, fallen), FLOOR_DB)
        self._held_for = np.where(higher, 0.0, self._held_for)
        self.rms = np.asarray(rms_db, dtype=np.float64)

    def reset(self) -> None:
        self.peak[:] = FLOOR_DB
        self.rms[:] = FLOOR_DB
        self._held_for[:] = 0.0


def clock_text(seconds: float) -> str:
    """``'0:01:23.456'``: hours, minutes, seconds and milliseconds."""
    millis = max(0, round(seconds * 1000))
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
    return f"{hours}:{minutes:02d}:{secs:02d}.{millis:03d}"


def samples_text(samples: int) -> str:
    """``'3 662 400 smp'``: thin-spaced thousands."""
    return f"{samples:,} smp".replace(",", "\u2009")


def db_fraction(db: float) -> float:
    """Where ``db`` sits on a meter from :data:`FLOOR_DB` (0) to 0 dB (1)."""
    if not math.isfinite(db):
        return 0.0
    return min(1.0, max(0.0, 1.0 - db / FLOOR_DB))
