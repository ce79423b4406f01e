"""What the spectrogram view shows: mapping settings, visible ranges, overlays.

Every field becomes a shader uniform: changing a view uploads nothing but the uniform block.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from spectropaint.gpu.colormaps import canonical_colormap, colormap_index
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import FREQ_SCALES

MODES = ("magnitude", "phase")


@dataclass(frozen=True)
class Selection:
    """A rectangle of time ``[start, stop)`` seconds and frequency ``[low, high)`` Hz."""

    start_seconds: float
    stop_seconds: float
    low_hz: float
    high_hz: float


@dataclass(frozen=True)
class Overlays:
    """Marks drawn over the spectrogram; ``None`` hides one."""

    playhead_seconds: float | None = None
    selection: Selection | None = None


@dataclass(frozen=True)
class ViewSettings:
    """How magnitudes become colours, and which part of the block is visible.

    Attributes
    ----------
    colormap : str
        One of ``colormaps.MAGNITUDE_COLORMAPS`` (or an alias of one, such as ``'gray'``).
    floor_db : float or None
        Level (dB relative to a full-scale sine) drawn with the colormap's first colour; ``None``
        means ``-range_db``, so that 0 dBFS is the top colour (Audacity's default picture).
    range_db : float
        dB from the floor to the top colour (default 80, as Audacity).
    gamma : float
        Exponent applied to the normalised level before the colour lookup (< 1 brightens).
    freq_scale : str
        ``'linear'``, ``'log'`` or ``'mel'``.
    time_range : (float, float) or None
        Visible texel positions along time, frames ``[start, stop)``; ``None``: the whole block.
    freq_range : (float, float) or None
        Visible frequencies (low, high) Hz; ``None``: every bin (a log axis starts near 20 Hz).
    channel : int
        The channel shown.
    mode : str
        ``'magnitude'`` or ``'phase'`` (phase drawn with ``phase_colormap``, which is cyclic).
    """

    colormap: str = "magma"
    floor_db: float | None = None
    range_db: float = 80.0
    gamma: float = 1.0
    freq_scale: str = "linear"
    time_range: tuple[float, float] | None = None
    freq_range: tuple[float, float] | None = None
    channel: int = 0
    mode: str = "magnitude"
    phase_colormap: str = "twilight"
    overlays: Overlays = field(default_factory=Overlays)

    def __post_init__(self) -> None:
        object.__setattr__(self, "colormap", canonical_colormap(self.colormap))
        colormap_index(self.colormap)
        colormap_index(self.phase_colormap, cyclic=True)
        if self.freq_scale not in FREQ_SCALES:
            raise SettingsError(
                f"frequency scale must be one of {', '.join(FREQ_SCALES)}, not {self.freq_scale!r}"
            )
        if self.mode not in MODES:
            raise SettingsError(f"view mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if not self.range_db > 0:
            raise SettingsError(f"dB range must be positive, not {self.range_db!r}")
        if not self.gamma > 0:
            raise SettingsError(f"gamma must be positive, not {self.gamma!r}")
        for name in ("time_range", "freq_range"):
            span = getattr(self, name)
            if span is not None and not span[0] < span[1]:
                raise SettingsError(f"{name} must be (low, high) with low < high, not {span!r}")
        if self.freq_scale == "log" and self.freq_range is not None and self.freq_range[0] <= 0:
            raise SettingsError(
                f"a log frequency axis needs a positive low edge, not {self.freq_range}"
            )
        if self.channel < 0:
            raise SettingsError(f"channel must be 0 or more, not {self.channel}")

    @property
    def resolved_floor_db(self) -> float:
        return -self.range_db if self.floor_db is None else self.floor_db

    def visible(self, geometry: BlockGeometry) -> tuple[float, float, float, float]:
        """``(start_frame, stop_frame, low_hz, high_hz)`` with the defaults filled in."""
        start, stop = self.time_range or (0.0, float(geometry.n_frames))
        low, high = self.freq_range or geometry.default_freq_range(self.freq_scale)
        return float(start), float(stop), float(low), float(high)


STORED_FIELDS = ("colormap", "floor_db", "range_db", "gamma", "freq_scale", "mode")
"""The look, kept in the preferences between runs (the channel and zoom depend on the file)."""
PROJECT_FIELDS = (*STORED_FIELDS, "channel", "time_range", "freq_range")
"""What a project keeps of the view: the look, the channel shown and the zoom."""


def view_values(view: ViewSettings) -> dict[str, Any]:
    """The fields of :data:`PROJECT_FIELDS` as plain JSON data."""
    values = {name: getattr(view, name) for name in PROJECT_FIELDS}
    return {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def view_from_values(base: ViewSettings, values: dict[str, Any], n_channels: int) -> ViewSettings:
    """``base`` with the fields a project stored; ``base`` itself when they do not validate
    (a project file is not trusted: ``ViewSettings`` checks names and ranges, this the types)."""
    fields = {name: values[name] for name in PROJECT_FIELDS if name in values}
    try:
        for name in ("time_range", "freq_range"):
            if fields.get(name) is not None:
                low, high = fields[name]
                fields[name] = (float(low), float(high))
        view = dataclasses.replace(base, **fields)
    except (SettingsError, TypeError, ValueError):
        return base
    numbers = (
        view.range_db,
        view.gamma,
        -view.range_db if view.floor_db is None else view.floor_db,
    )
    channel_ok = type(view.channel) is int and view.channel < n_channels
    return view if channel_ok and all(map(_is_number, numbers)) else base
