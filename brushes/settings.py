"""Brush settings common to every brush, and the validation shared with each kernel's parameters.

Every value is checked when the dataclass is made, so a bad number from the GUI, a recorded stroke
file or a test fails at once with a :class:`SettingsError` that names the setting and its range.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from spectropaint.transforms.errors import SettingsError

T = TypeVar("T")


def check_number(name: str, value: Any, low: float, high: float) -> None:
    """Raise :class:`SettingsError` unless ``value`` is a finite real number in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SettingsError(f"{name} must be a finite number, not {value!r}")
    if not low <= value <= high:
        raise SettingsError(f"{name} must be from {low:g} to {high:g}, not {value!r}")


def check_integer(name: str, value: Any, low: int, high: int) -> None:
    """Raise :class:`SettingsError` unless ``value`` is an integer in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(f"{name} must be an integer, not {value!r}")
    if not low <= value <= high:
        raise SettingsError(f"{name} must be from {low} to {high}, not {value!r}")


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """Raise :class:`SettingsError` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, not {value!r}")


def from_mapping(cls: type[T], values: Mapping[str, Any], *, what: str) -> T:
    """Build the dataclass ``cls`` from a mapping, refusing keys it does not have.

    Integral floats (``3.0`` from JSON) are accepted where the default is an integer.
    """
    if not isinstance(values, Mapping):
        raise SettingsError(f"{what} must be an object of named values, not {values!r}")
    fields = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise SettingsError(
            f"unknown {what} {', '.join(map(repr, unknown))} (known: {', '.join(fields) or 'none'})"
        )
    converted = {}
    for key, value in values.items():
        default = fields[key].default
        if isinstance(default, int) and isinstance(value, float) and value.is_integer():
            value = int(value)
        converted[key] = value
    return cls(**converted)


def to_mapping(instance: Any) -> dict[str, Any]:
    """The fields of a settings dataclass as a plain dict (JSON-ready)."""
    return dataclasses.asdict(instance)


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

    radius_frames: float = 8.0
    radius_bins: float = 8.0
    hardness: float = 0.5
    strength: float = 1.0
    spacing: float = 0.25
    pressure_size: float = 0.0
    pressure_strength: float = 1.0
    channel: int | None = None
    radius_seconds: float | None = None
    radius_semitones: float | None = None
    radius_hz: float | None = None

    def __post_init__(self) -> None:
        check_number("radius_frames", self.radius_frames, 0.5, 4096)
        check_number("radius_bins", self.radius_bins, 0.5, 4096)
        pitch = [
            name for name in ("radius_semitones", "radius_hz") if getattr(self, name) is not None
        ]
        if (self.radius_seconds is None) != (not pitch) or len(pitch) > 1:
            raise SettingsError(
                "physical radii are radius_seconds with one of radius_semitones or radius_hz"
            )
        if self.radius_seconds is not None:
            check_number("radius_seconds", self.radius_seconds, 0.0005, 600.0)
            if self.radius_semitones is not None:
                check_number("radius_semitones", self.radius_semitones, 0.01, 120.0)
            else:
                check_number("radius_hz", self.radius_hz, 0.1, 100000.0)
        check_number("hardness", self.hardness, 0.0, 1.0)
        check_number("strength", self.strength, 0.0, 1.0)
        check_number("spacing", self.spacing, 0.02, 4.0)
        check_number("pressure_size", self.pressure_size, 0.0, 1.0)
        check_number("pressure_strength", self.pressure_strength, 0.0, 1.0)
        if self.channel is not None:
            check_integer("channel", self.channel, 0, 255)

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
