"""The dab's footprint: an elliptical weight with a hardness falloff, on its clipped bounding box.

The weight is exactly 0 outside the ellipse (normalised distance ``r >= 1``), so blending through it
leaves every value outside the dab bit-identical.
"""

from __future__ import annotations

import math

import torch

from spectropaint.brushes.kernels.phase import constant

FAR = float(1 << 40)
"""Cell indices are clipped to this before they become integers (positions may reach ``1e308``)."""


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
    v, u = v[..., :, None], u[..., None, :]
    return mask_from_radius(torch.add(v * v, u * u).sqrt_(), hardness=hardness, weight=weight)


def mask_from_radius(
    r: torch.Tensor, *, hardness: float, weight: float | torch.Tensor
) -> torch.Tensor:
    """The dab's weight at normalised elliptical distances ``r`` (float32, any shape): see
    :func:`mask_from_distances`. It never rises with ``r``."""
    one = constant(1.0, r)
    if hardness >= 1.0:
        shape = (r < one).to(torch.float32)
    else:  # in place where it can be: a dab's mask is small, its cost the operations
        ramp = (r - constant(hardness, r)).div_(constant(1.0 - hardness, r)).clamp_(0.0, 1.0)
        half = constant(0.5, r)
        shape = ramp.mul_(constant(math.pi, r)).cos_().mul_(half).add_(half)
        shape.masked_fill_(r >= one, 0.0)
    return shape * weight
