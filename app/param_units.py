"""How a brush's declared parameters are shown: in the units people use (milliseconds, Hz,
semitones), converted to and from the units the brushes store (frames and bins of the block).

A parameter is declared once, with its unit and range, next to its field
(:mod:`spectropaint.brushes.params`); this module only converts. The brush's size, stored as radii in
frames and bins, is shown as its full length in milliseconds and its full height in Hz, or in
semitones measured upwards from a reference frequency (the pointer's: on a linear-bin transform a
size in semitones depends on where the brush is). Offsets in frames and bins (the clone source) are
shown in milliseconds and Hz, within the document's extent. Every other parameter is shown as
declared. No Qt.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from spectropaint.brushes.params import Param
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.transforms.errors import SettingsError

HEIGHT_UNITS = ("Hz", "semitones")
DEFAULT_REFERENCE_HZ = 1000.0
"""Where semitones are measured when the pointer has not said (1 kHz)."""


@dataclass(frozen=True)
class Shown:
    """One parameter as the panel shows it.

    ``to_shown`` and ``from_shown`` convert a stored value and back; ``low``, ``high``, ``step``
    and ``decimals`` are in the shown unit; ``log`` asks for a logarithmic slider (sizes).
    """

    label: str
    unit: str
    low: float
    high: float
    step: float
    decimals: int
    log: bool
    scale: float = 1.0
    """shown = stored * scale (when ``semitones_at`` is None)."""
    integer: bool = False
    semitones_at: float | None = None
    """For a height in semitones: the reference frequency, Hz."""
    hz_per_stored: float = 1.0
    """Hz per stored unit, for semitones."""

    @property
    def caption(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def to_shown(self, value: float) -> float:
        if self.semitones_at is not None:
            return 24.0 * math.log2(1.0 + value * self.hz_per_stored / self.semitones_at)
        return value * self.scale

    def from_shown(self, shown: float) -> float | int:
        if self.semitones_at is not None:
            value = self.semitones_at * (2.0 ** (shown / 24.0) - 1.0) / self.hz_per_stored
        else:
            value = shown / self.scale
        return round(value) if self.integer else value


def _within(spec: Param, extent: int, radius: bool) -> tuple[float, float]:
    """The declared range, no wider than the document: a radius up to the whole ``extent`` cells,
    an offset from ``-extent`` to ``extent``."""
    if radius:
        return spec.low, max(spec.low, min(spec.high, float(extent)))
    return max(spec.low, -float(extent)), min(spec.high, float(extent))


def shown_as(
    name: str,
    spec: Param,
    geometry: BlockGeometry,
    *,
    height_unit: str = "Hz",
    reference_hz: float = DEFAULT_REFERENCE_HZ,
) -> Shown:
    """How parameter ``name`` declared by ``spec`` is shown for a block of ``geometry``.

    Raises ``SettingsError`` for an unknown ``height_unit``.
    """
    if height_unit not in HEIGHT_UNITS:
        raise SettingsError(f"height unit must be one of {', '.join(HEIGHT_UNITS)}")
    radius = name.startswith("radius")
    if spec.unit == "frames":
        scale = 1000.0 * geometry.step_seconds * (2 if radius else 1)
        low, high = _within(spec, geometry.n_frames, radius)
        step = scale if spec.integer else scale / 2
        label = "Length" if radius else spec.label
        return Shown(label, "ms", low * scale, high * scale, step, 1, radius, scale, spec.integer)
    if spec.unit == "bins":
        scale = geometry.step_hz * (2 if radius else 1)
        label = "Height" if radius else spec.label
        if radius and height_unit == "semitones":
            shown = Shown(
                label,
                "semitones",
                0.0,
                0.0,
                0.5,
                2,
                True,
                semitones_at=reference_hz,
                hz_per_stored=geometry.step_hz,
            )
            low, high = _within(spec, geometry.n_bins, radius)
            return dataclasses.replace(shown, low=shown.to_shown(low), high=shown.to_shown(high))
        low, high = _within(spec, geometry.n_bins, radius)
        step = scale if spec.integer else scale / 2
        return Shown(label, "Hz", low * scale, high * scale, step, 1, radius, scale, spec.integer)
    return Shown(
        spec.label,
        spec.unit,
        spec.low,
        spec.high,
        spec.step,
        spec.decimals,
        False,
        1.0,
        spec.integer,
    )


DEFAULT_GEOMETRY = BlockGeometry(
    n_frames=10**6, n_bins=1025, first_hz=0.0, step_hz=44100 / 2048, first_seconds=0.0,
    step_seconds=512 / 44100,
)  # fmt: skip
"""What sizes are shown in before a document is open: the default STFT (n_fft 2048, hop 512) at
44.1 kHz."""

SIZE_PRESETS: dict[str, tuple[float, float]] = {
    "Fine": (20.0, 40.0),
    "Small": (60.0, 150.0),
    "Medium": (150.0, 400.0),
    "Large": (400.0, 1200.0),
    "Click (short, tall)": (25.0, 8000.0),
    "Tone (long, thin)": (1000.0, 40.0),
}
"""Brush sizes by name: full length in milliseconds and full height in Hz."""


def preset_radii(
    name: str, geometry: BlockGeometry, limits: tuple[Param, Param]
) -> tuple[float, float]:
    """``(radius_frames, radius_bins)`` of size preset ``name`` on ``geometry``, within the
    declared ranges ``limits`` of the two radii."""
    length_ms, height_hz = SIZE_PRESETS[name]
    frames = length_ms / (2000.0 * geometry.step_seconds)
    bins = height_hz / (2.0 * geometry.step_hz)
    (frame_spec, bin_spec) = limits
    return (
        min(max(frames, frame_spec.low), frame_spec.high),
        min(max(bins, bin_spec.low), bin_spec.high),
    )
