"""The spectrogram shader's uniform block: field order, WGSL layout rules, packing to bytes."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

VIEW_FIELDS: tuple[tuple[str, str], ...] = (
    ("full_size", "vec2<f32>"),
    ("offset", "vec2<f32>"),
    ("t0", "f32"),
    ("t1", "f32"),
    ("w_lo", "f32"),
    ("w_hi", "f32"),
    ("hz0", "f32"),
    ("hz_step", "f32"),
    ("scale", "u32"),
    ("mode", "u32"),
    ("db_a", "f32"),
    ("db_b", "f32"),
    ("gamma", "f32"),
    ("colormap", "u32"),
    ("n_frames", "u32"),
    ("n_bins", "u32"),
    ("channel", "u32"),
    ("n_levels", "u32"),
    ("col_shift", "u32"),
    ("row_shift", "u32"),
    ("mag_cols", "u32"),
    ("tile_rows", "u32"),
    ("phase_col_shift", "u32"),
    ("phase_cols", "u32"),
    ("phase_colormap", "u32"),
    ("overlay_flags", "u32"),
    ("playhead", "f32"),
    ("row_mask", "u32"),
    ("level", "u32"),
    ("pad2", "u32"),
    ("level_offset", "array<vec4<u32>, 4>"),
    ("level_width", "array<vec4<u32>, 4>"),
    ("selection", "vec4<f32>"),
    ("mask_box", "vec4<f32>"),
    ("clip", "vec4<u32>"),
)
"""``View`` in shaders/spectrogram.wgsl, in order, with WGSL types."""

# WGSL type -> (struct code of one component, component count, alignment in bytes)
_TYPES = {
    "f32": ("f", 1, 4),
    "u32": ("I", 1, 4),
    "vec2<f32>": ("f", 2, 8),
    "vec4<f32>": ("f", 4, 16),
    "vec4<u32>": ("I", 4, 16),
    "array<vec4<u32>, 4>": ("I", 16, 16),
}


def _layout() -> tuple[str, int]:
    """A ``struct`` format with explicit padding following WGSL's alignment rules, and its size."""
    fmt, offset = "<", 0
    for _, kind in VIEW_FIELDS:
        code, count, align = _TYPES[kind]
        pad = -offset % align
        fmt += "x" * pad + code * count
        offset += pad + 4 * count
    pad = -offset % 16
    return fmt + "x" * pad, offset + pad


VIEW_FORMAT, VIEW_SIZE = _layout()


def pack_view(values: Mapping[str, float | int | Sequence[float | int]]) -> bytes:
    """The uniform block's bytes; every field of ``VIEW_FIELDS`` but the ``pad`` ones must be given."""
    flat: list[float | int] = []
    for name, kind in VIEW_FIELDS:
        value = 0 if name.startswith("pad") else values[name]
        if _TYPES[kind][1] == 1:
            flat.append(value)  # type: ignore[arg-type]
        else:
            flat.extend(value)  # type: ignore[arg-type]
    return struct.pack(VIEW_FORMAT, *flat)
