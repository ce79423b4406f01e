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
    box = Region(
        math.floor(y - radius_bins) + 1,
        math.ceil(y + radius_bins),
        math.floor(x - radius_frames) + 1,
        math.ceil(x + radius_frames),
        channels,
    )
    return box.clipped(n_bins, n_frames)


def dab_mask(
    box: Region,
    x: float,
    y: float,
    radius_frames: float,
    radius_bins: float,
    *,
    hardness: float,
    weight: float,
    device: torch.device,
) -> torch.Tensor:
    """The dab's weight on ``box``.

    Parameters
    ----------
    box : Region
        Cells to evaluate, usually :func:`dab_box`.
    x, y : float
        Centre in frames and bins.
    radius_frames, radius_bins : float
        Semi-axes in frames and bins.
    hardness : float
        0..1: weight is ``weight`` for ``r <= hardness`` and falls along a raised cosine to 0 at
        ``r = 1``, where ``r`` is the normalised elliptical distance.
    weight : float
        Peak weight (strength times the pressure's factor).

    Returns
    -------
    torch.Tensor [shape=(bins, frames)], float32 on ``device``
    """
    frames = torch.arange(box.frame0, box.frame1, device=device, dtype=torch.float32)
    bins = torch.arange(box.bin0, box.bin1, device=device, dtype=torch.float32)
    u = (frames - x) / radius_frames
    v = (bins - y) / radius_bins
    return mask_from_distances(u, v, hardness=hardness, weight=weight)


def mask_from_distances(
    u: torch.Tensor, v: torch.Tensor, *, hardness: float, weight: float
) -> torch.Tensor:
    """The dab's weight ``[bins, frames]`` from each frame's and bin's distance to the centre along
    its axis, in radii (``u`` ``[frames]``, ``v`` ``[bins]``, float32); see :func:`dab_mask`."""
    r = torch.sqrt(v[:, None] ** 2 + u[None, :] ** 2)
    if hardness >= 1.0:
        shape = (r < 1.0).to(torch.float32)
    else:
        ramp = ((r - hardness) / (1.0 - hardness)).clamp(0.0, 1.0)
        shape = 0.5 + 0.5 * torch.cos(math.pi * ramp)
        shape = torch.where(r < 1.0, shape, torch.zeros_like(shape))
    return shape * weight
