"""The dab's footprint: an elliptical weight with a hardness falloff, on its clipped bounding box.

The weight is exactly 0 outside the ellipse (normalised distance ``r >= 1``), so blending through it
leaves every value outside the dab bit-identical.
"""

from __future__ import annotations

import math

import torch

from spectropaint.transforms.regions import Region


def dab_box(
    x: float,
    y: float,
    radius_frames: float,
    radius_bins: float,
    *,
    n_bins: int,
    n_frames: int,
    channels: tuple[int, ...],
) -> Region:
    """The grid cells an ellipse centred on frame ``x``, bin ``y`` can cover, clipped (never wrapped).

    Cells are at integer positions; a cell is in the box when it lies strictly inside the ellipse's
    bounding rectangle.
    """
    return Region(
        max(0, math.floor(y - radius_bins) + 1),
        min(n_bins, math.ceil(y + radius_bins)),
        max(0, math.floor(x - radius_frames) + 1),
        min(n_frames, math.ceil(x + radius_frames)),
        channels,
    )


def mask_from_distances(
    u: torch.Tensor, v: torch.Tensor, *, hardness: float, weight: float | torch.Tensor
) -> torch.Tensor:
    """The dab's weight from each frame's and bin's distance to its centre along its axis.

    Parameters
    ----------
    u : torch.Tensor [shape=(..., frames)], float32
        Distances along time in radii (leading dimensions: one per dab).
    v : torch.Tensor [shape=(..., bins)], float32
        Distances along frequency in radii.
    hardness : float
        0..1: the weight is the peak for ``r <= hardness`` and falls along a raised cosine to 0 at
        ``r = 1``, where ``r`` is the normalised elliptical distance.
    weight : float or torch.Tensor [shape=(..., 1, 1)]
        Peak weight (strength times the pressure's factor), per dab.

    Returns
    -------
    torch.Tensor [shape=(..., bins, frames)], float32
    """
    r = torch.sqrt(v[..., :, None] ** 2 + u[..., None, :] ** 2)
    if hardness >= 1.0:
        shape = (r < 1.0).to(torch.float32)
    else:
        ramp = ((r - hardness) / (1.0 - hardness)).clamp(0.0, 1.0)
        shape = 0.5 + 0.5 * torch.cos(math.pi * ramp)
        shape = torch.where(r < 1.0, shape, torch.zeros_like(shape))
    return shape * weight
