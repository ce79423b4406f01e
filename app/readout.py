"""The status bar's readout of the point under the pointer: time, frequency, note and the level of
each channel there, as text. No Qt.

Levels are dB relative to the document's full scale (a full-scale sinusoid reads 0 dB). Below
:data:`SILENCE_DB` a level is read as silence: digital silence and the rounding noise of float
samples would otherwise read -300 or -650 dB, numbers that say nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from spectropaint.transforms.geometry import note_label

SILENCE_DB = -150.0
"""Quieter than the noise floor of 24-bit audio (-144 dB): shown as ``< -150 dB``."""


def format_db(db: float) -> str:
    """``' -12.3 dB'``, or ``'< -150 dB'`` below :data:`SILENCE_DB` (and for silence)."""
    if not math.isfinite(db) or db < SILENCE_DB:
        return f"< {SILENCE_DB:.0f} dB"
    return f"{db:6.1f} dB"


def level_db(magnitude: float, reference: float) -> float:
    """``magnitude`` in dB relative to ``reference`` (-inf for 0)."""
    if magnitude <= 0:
        return -math.inf
    return 20.0 * math.log10(magnitude / reference)


def readout_text(
    seconds: float, hz: float, levels_db: Sequence[float] | None, shown: int | None = None
) -> str:
    """One line: time, frequency, note, then the shown channel's level and every channel's.

    ``levels_db`` is None outside the document's cells (only the position is read out); ``shown``
    is the channel drawn alone (None when all are drawn).
    """
    text = f"{seconds:8.3f} s   {hz:8.1f} Hz   {note_label(hz):>9}"
    if levels_db is None:
        return text
    if shown is not None:
        text += f"   {format_db(levels_db[shown])}"
    channels = "  ".join(
        f"ch{index + 1} {format_db(value)}" for index, value in enumerate(levels_db)
    )
    return f"{text}   {channels}"
