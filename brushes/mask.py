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
    return falloff(torch.sqrt(v[:, None] ** 2 + u[None, :] ** 2), hardness) * weight


def falloff(r: torch.Tensor, hardness: float) -> torch.Tensor:
    """The dab's shape (1 at the centre) at normalised elliptical distances ``r`` (any shape)."""
    if hardness >= 1.0:
        return (r < 1.0).to(torch.float32)
    ramp = ((r - hardness) / (1.0 - hardness)).clamp(0.0, 1.0)
    shape = 0.5 + 0.5 * torch.cos(math.pi * ramp)
    return torch.where(r < 1.0, shape, torch.zeros_like(shape))


def ellipses_mask(
    box: Region,
    boxes: list[Region],
    ellipses: list[tuple[float, float, float, float, float]],
    *,
    hardness: float,
    device: torch.device,
) -> torch.Tensor:
    """The largest weight any of several dabs gives each cell of ``box``, computed together.

    The same values as the maximum of :func:`dab_mask` over the dabs (each evaluated on its own
    box, zero outside it), in a few tensor operations whatever the number of dabs: a stroke
    across a long file seen whole has hundreds of small dabs per pointer event.

    Parameters
    ----------
    box : Region
        The cells to fill; it holds every one of ``boxes``.
    boxes : list of Region
        Each dab's box (:func:`dab_box`).
    ellipses : list of (x, y, radius_frames, radius_bins, weight)
        Each dab's centre in frames and bins, semi-axes and peak weight.
    hardness : float
        See :func:`dab_mask`.

    Returns
    -------
    torch.Tensor [shape=(box bins, box frames)], float32 on ``device``
    """
    corners = [(b.bin0, b.frame0, b.bin1 - b.bin0, b.frame1 - b.frame0) for b in boxes]
    bin0, frame0, height, width = torch.tensor(corners, device=device).T[:, :, None]
    rows, columns = max(c[2] for c in corners), max(c[3] for c in corners)
    x, y, radius_x, radius_y, weight = torch.tensor(ellipses, device=device, dtype=torch.float32).T[
        :, :, None
    ]
    along_t = torch.arange(columns, device=device)[None, :]
    along_b = torch.arange(rows, device=device)[None, :]
    u = ((frame0 + along_t).to(torch.float32) - x) / radius_x  # [dabs, columns]
    v = ((bin0 + along_b).to(torch.float32) - y) / radius_y  # [dabs, rows]
    shape = falloff(torch.sqrt(v[:, :, None] ** 2 + u[:, None, :] ** 2), hardness)
    inside = (along_b < height)[:, :, None] & (along_t < width)[:, None, :]
    weights = torch.where(inside, shape * weight[:, :, None], torch.zeros_like(shape))
    # each dab's cells as indices of a buffer padded by one window, where cells past its own box
    # (always weight 0) land harmlessly
    padded_rows, padded_columns = box.shape[0] + rows, box.shape[1] + columns
    row_index = (bin0 - box.bin0) + along_b  # [dabs, rows]
    column_index = (frame0 - box.frame0) + along_t  # [dabs, columns]
    index = row_index[:, :, None] * padded_columns + column_index[:, None, :]
    out = torch.zeros(padded_rows * padded_columns, device=device, dtype=torch.float32)
    out.scatter_reduce_(0, index.reshape(-1), weights.reshape(-1), "amax")
    return out.view(padded_rows, padded_columns)[: box.shape[0], : box.shape[1]].contiguous()
