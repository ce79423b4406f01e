"""Colour tables for the spectrogram: 256 RGB entries each, read from ``resources/colormaps.json``.

The shader looks a value ``v`` in [0, 1] up at position ``v * 255`` and interpolates linearly between
the two nearest entries; :func:`lookup` does the same on the CPU (for the PNG colour bar).
Where the tables come from is written in the JSON file itself.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np

from spectropaint.transforms.errors import SettingsError

MAGNITUDE_COLORMAPS = ("magma", "viridis", "inferno", "plasma", "hot", "grayscale")
COLORMAP_ALIASES = {"gray": "grayscale", "grey": "grayscale"}
"""Other names people use for a table (matplotlib's, and the README's, for grayscale)."""
CYCLIC_COLORMAPS = ("twilight",)
TABLE_SIZE = 256


@functools.cache
def colormap_tables() -> dict[str, np.ndarray]:
    """Every table by name: float32 ``[256, 3]`` in [0, 1], magnitude maps first, then cyclic ones."""
    text = resources.files("spectropaint.resources").joinpath("colormaps.json").read_text("utf-8")
    stored = json.loads(text)["colormaps"]
    tables = {}
    for name in MAGNITUDE_COLORMAPS + CYCLIC_COLORMAPS:
        words = np.frombuffer(bytes.fromhex(stored[name]), dtype=">u2")
        table = (words.astype(np.float32) / 65535.0).reshape(TABLE_SIZE, 3)
        table.flags.writeable = False
        tables[name] = table
    return tables


def canonical_colormap(name: str) -> str:
    """The table's own name for ``name`` (``'gray'`` is ``'grayscale'``)."""
    return COLORMAP_ALIASES.get(name, name)


def colormap_index(name: str, *, cyclic: bool = False) -> int:
    """Row of ``name`` in the tables' stacking order; a :class:`SettingsError` for an unknown map."""
    allowed = CYCLIC_COLORMAPS if cyclic else MAGNITUDE_COLORMAPS
    if name not in allowed:
        kind = "cyclic colormap" if cyclic else "colormap"
        raise SettingsError(f"unknown {kind} {name!r}; use one of {', '.join(allowed)}")
    return list(colormap_tables()).index(name)


def lookup(name: str, values: np.ndarray) -> np.ndarray:
    """RGB in [0, 1], shape ``values.shape + (3,)``, for ``values`` clipped to [0, 1]."""
    table = colormap_tables()[name].astype(np.float64)
    position = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0) * (TABLE_SIZE - 1)
    index = np.minimum(np.floor(position).astype(np.int64), TABLE_SIZE - 2)
    fraction = (position - index)[..., None]
    return table[index] * (1.0 - fraction) + table[index + 1] * fraction
