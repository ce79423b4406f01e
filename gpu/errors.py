"""Errors of the GPU side: no usable adapter, a document the adapter cannot hold, an image file."""

from __future__ import annotations

import os

from spectropaint.transforms.errors import SpectroPaintError


class GPUUnavailableError(SpectroPaintError):
    """No wgpu adapter (or none matching ``SPECTROPAINT_ADAPTER``), or one too small for the work."""


class ImageFileError(SpectroPaintError):
    """An image file could not be written; the message names the file and the reason."""

    def __init__(self, path: str | os.PathLike, reason: str, *, action: str = "write"):
        self.path = os.fspath(path)
        self.reason = reason
        self.action = action
        super().__init__(f"cannot {action} '{self.path}': {reason}")
