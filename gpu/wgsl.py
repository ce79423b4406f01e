"""WGSL sources from the ``spectropaint.shaders`` package, read once and cached."""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def shader_source(*names: str) -> str:
    """The named ``.wgsl`` files joined in order (WGSL has no includes)."""
    folder = resources.files("spectropaint.shaders")
    return "\n".join(folder.joinpath(name).read_text("utf-8") for name in names)
