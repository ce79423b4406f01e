"""The checks shared by every brush setting and parameter, and dataclasses from and to JSON mappings.

Every value is checked when its dataclass is made, so a bad number from the GUI, a recorded stroke
file or a test fails at once with a :class:`SettingsError` that names the setting and its range.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
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
