"""The settings every brush has (size, hardness, strength, spacing, pressure, channel)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spectropaint.brushes.params import check_params, param
from spectropaint.brushes.validation import from_mapping, to_mapping
from spectropaint.transforms.errors import SettingsError


@dataclass(frozen=True)
class BrushSettings:
    """Settings every brush has.

    Attributes
    ----------
    radius_frames, radius_bins : float
        Half-width of the elliptical dab in frames (time) and bins (frequency), at full size.
    radius_seconds, radius_semitones, radius_hz : float or None
        Half-widths in physical units instead (strokes files version 2): seconds, with semitones
        or Hz. Given, they replace the frames and bins, and the stroke's events are in seconds and
        Hz (see :mod:`spectropaint.brushes.plane`).
    hardness : float
        0..1: the fraction of the radius at full weight; beyond it the weight falls to 0 at the rim
        along a raised cosine. 1 is a hard edge.
    strength : float
        0..1: the stroke's opacity. A stroke never weighs more than this anywhere, however many of
        its dabs overlap (dabs combine by maximum, not by sum).
    spacing : float
        Distance between dabs in units of the radius (the ellipse's own metric), 0.02..4.
    pressure_size, pressure_strength : float
        0..1: how much pen pressure scales the dab's radius and weight. 0 ignores pressure; 1 makes
        them proportional to it.
    channel : int or None
        The one channel the stroke edits, or None for all channels together (linked).
    """

    radius_frames: float = param(8.0, "Width", "frames", low=0.5, high=4096, step=1.0, decimals=1)
    radius_bins: float = param(8.0, "Height", "bins", low=0.5, high=4096, step=1.0, decimals=1)
    hardness: float = param(0.5, "Hardness", low=0.0, high=1.0, step=0.05)
    strength: float = param(1.0, "Strength", low=0.0, high=1.0, step=0.05)
    spacing: float = param(0.25, "Spacing", "radii", low=0.02, high=4.0, step=0.05)
    pressure_size: float = param(0.0, "Pressure → size", low=0.0, high=1.0, step=0.1)
    pressure_strength: float = param(1.0, "Pressure → strength", low=0.0, high=1.0, step=0.1)
    channel: int | None = param(
        None, "Channel", low=0, high=255, integer=True, optional=True, decimals=0
    )
    radius_seconds: float | None = param(
        None, "Length", "s", low=0.0005, high=600.0, optional=True, step=0.01, decimals=4
    )
    radius_semitones: float | None = param(
        None, "Height", "semitones", low=0.01, high=120.0, optional=True, step=0.5
    )
    radius_hz: float | None = param(
        None, "Height", "Hz", low=0.1, high=100000.0, optional=True, step=10.0, decimals=1
    )

    def __post_init__(self) -> None:
        check_params(self)
        pitch = [
            name for name in ("radius_semitones", "radius_hz") if getattr(self, name) is not None
        ]
        if (self.radius_seconds is None) != (not pitch) or len(pitch) > 1:
            raise SettingsError(
                "physical radii are radius_seconds with one of radius_semitones or radius_hz"
            )

    def size_at(self, pressure: float) -> float:
        """The radius scale at ``pressure`` (0..1)."""
        return 1.0 - self.pressure_size + self.pressure_size * pressure

    def weight_at(self, pressure: float) -> float:
        """The dab's peak weight at ``pressure`` (0..1)."""
        return self.strength * (1.0 - self.pressure_strength + self.pressure_strength * pressure)

    def channels(self, n_channels: int) -> tuple[int, ...]:
        """The channels a stroke with these settings edits in a document of ``n_channels``."""
        if self.channel is None:
            return tuple(range(n_channels))
        if self.channel >= n_channels:
            raise SettingsError(
                f"channel must be below {n_channels} (the document's channel count), "
                f"not {self.channel}"
            )
        return (self.channel,)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> BrushSettings:
        return from_mapping(cls, values, what="brush setting")

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values; physical radii only when given."""
        values = to_mapping(self)
        for name in ("radius_seconds", "radius_semitones", "radius_hz"):
            if values[name] is None:
                del values[name]
        return values
