"""Which renderer draws a document: evenly spaced bins (the STFT) or bands (the NSGT)."""

from __future__ import annotations

import wgpu

from spectropaint.gpu.bands_renderer import BandsRenderer
from spectropaint.gpu.renderer import SpectrogramRenderer


def renderer_for(device: wgpu.GPUDevice, document, **options) -> SpectrogramRenderer:
    """The renderer of ``document``: :class:`SpectrogramRenderer` for one block of evenly spaced
    bins (the STFT), :class:`~spectropaint.gpu.bands_renderer.BandsRenderer` for the NSGT."""
    if getattr(getattr(document, "transform", None), "name", None) == "nsgt":
        return BandsRenderer(device, document, **options)
    return SpectrogramRenderer(device, document, **options)
