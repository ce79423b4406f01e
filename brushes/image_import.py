"""A picture as sound: brightness placed on a time and frequency rectangle, as level in dB.

:func:`plan_image` samples the picture at every cell of the rectangle, in every block of the
document it reaches (each in seconds and Hz; its rows along the chosen
frequency axis, so a picture placed on a log axis looks right on a log view) after smoothing it to
the cells' spacing, maps brightness 1 to ``top_db`` and brightness towards 0 down to
``top_db - range_db`` (pure black is silence), and gives each band a steady partial at its centre
frequency: the phase advances by the band's own rate from frame to frame, from a start per band
(seeded), so the picture sounds like held tones, not noise (on the NSGT, each frame's level is
shared between the slice parities by their weights). The result is added to what is
there or replaces it; a few Griffin-Lim iterations on the rectangle
(:func:`~spectropaint.brushes.heal.reconstruct_phase`) make it a sound the STFT can hold, so the
picture analysed back from the exported audio is the picture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from spectropaint.brushes.heal import reconstruct_phase
from spectropaint.brushes.kernels.phase import phase_ramp
from spectropaint.brushes.operations import Plan
from spectropaint.brushes.params import check_params, param
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import FREQ_SCALES, warp
from spectropaint.transforms.selection import Selection, block_grid, rasterise_blocks
from spectropaint.transforms.shapes import Rectangle

IMAGE_MODES = ("add", "replace")
BLACK = 0.5 / 255
"""Brightness at or below this is silence."""
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
"""A band's start phase is ``2 pi frac((f + seed) GOLDEN)``: unrelated between neighbours."""


@dataclass(frozen=True)
class ImagePlacement:
    """Where and how loud a picture goes.

    Attributes
    ----------
    t0, t1 : float
        Its left and right edges, seconds.
    f0, f1 : float
        Its bottom and top edges, Hz.
    top_db : float
        Level of white per cell, dB relative to a full-scale sinusoid.
    range_db : float
        dB from white down to the darkest grey (black is silence).
    mode : str
        ``add`` to what is there, or ``replace`` it.
    freq_scale : str
        The frequency axis the picture's rows are spread along (``linear``, ``log``, ``mel``).
    """

    t0: float = param(0.0, "Start", "s", low=0.0, decimals=3)
    t1: float = param(1.0, "End", "s", low=0.0, decimals=3)
    f0: float = param(100.0, "Low", "Hz", low=0.0, decimals=1)
    f1: float = param(8000.0, "High", "Hz", low=0.0, decimals=1)
    top_db: float = param(-50.0, "White", "dB", low=-120.0, high=6.0, decimals=1)
    range_db: float = param(60.0, "Range", "dB", low=1.0, high=150.0, decimals=1)
    mode: str = param("add", "Mode", choices=IMAGE_MODES)
    freq_scale: str = param("linear", "Rows along", choices=FREQ_SCALES)

    def __post_init__(self) -> None:
        check_params(self)
        if not (self.t0 < self.t1 and self.f0 < self.f1):
            raise SettingsError(
                f"an image needs t0 < t1 and f0 < f1, not {self.t0}, {self.t1}, {self.f0}, "
                f"{self.f1}"
            )
        if self.freq_scale == "log" and self.f0 <= 0:
            raise SettingsError("an image on a log axis needs a low edge above 0 Hz")


def _sampled(image: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The picture at fractional pixel columns ``x [T]`` and rows ``y [B]``: ``[B, T]``, smoothed
    first to the sampling's spacing where that is coarser than a pixel."""
    from scipy.ndimage import gaussian_filter, map_coordinates

    spacing = (
        float(np.median(np.abs(np.diff(y)))) if len(y) > 1 else 1.0,
        float(np.median(np.abs(np.diff(x)))) if len(x) > 1 else 1.0,
    )
    sigma = tuple(0.5 * s if s > 1 else 0.0 for s in spacing)
    smooth = gaussian_filter(image.astype(np.float64), sigma, mode="nearest")
    rows, columns = np.meshgrid(y, x, indexing="ij")
    return map_coordinates(smooth, [rows, columns], order=1, mode="nearest")


def image_levels(document, image: np.ndarray, placement: ImagePlacement, region) -> np.ndarray:
    """The picture's magnitude on the cells of ``region``: float32 ``[B, T]``."""
    grid = block_grid(document, region)
    height, width = image.shape
    x = (grid.seconds - placement.t0) / (placement.t1 - placement.t0) * width - 0.5
    low, high = warp([placement.f0, placement.f1], placement.freq_scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = warp(np.maximum(grid.hz, 1e-9), placement.freq_scale)
    y = (1.0 - (w - low) / (high - low)) * height - 0.5
    brightness = _sampled(image, x, np.nan_to_num(y, nan=height))
    level_db = placement.top_db - placement.range_db * (1.0 - np.clip(brightness, 0, 1))
    magnitude = document.full_scale * 10.0 ** (level_db / 20.0)
    return np.where(brightness > BLACK, magnitude, 0.0).astype(np.float32)


def plan_image(
    document,
    image: np.ndarray,
    placement: ImagePlacement,
    *,
    channels: tuple[int, ...] | None = None,
    seed: int = 0,
) -> list[Plan]:
    """The plans that write ``image`` (luminance ``[H, W]`` in 0..1) at ``placement``: one per
    block the rectangle reaches (the STFT's one; every NSGT block of a group of bands and slice
    parity it covers), none when it misses the document."""
    rectangle = Rectangle(placement.t0, placement.t1, placement.f0, placement.f1)
    masks = rasterise_blocks(Selection.of(rectangle), document, channels=channels)
    return [_block_plan(document, image, placement, mask.region, seed) for mask in masks]


def _block_plan(document, image: np.ndarray, placement: ImagePlacement, region, seed: int) -> Plan:
    """The picture written on ``region`` (the rectangle's cells in one block).

    Each band is a steady partial at its centre: its phase is that of a sinusoid in absolute time
    (``2 pi f t``, ``t`` the frame's centre, the convention of both transforms) from a start that
    depends on the band's frequency and ``seed`` alone, so the two slice parities of an NSGT group
    agree; on the NSGT each frame's magnitude is shared by its slice weight.
    """
    block = document.blocks[region.block]
    device = document.device
    magnitude = torch.from_numpy(image_levels(document, image, placement, region)).to(device)
    frames = torch.arange(region.frame0, region.frame1)
    weight = document.transform.frame_weight(region.block, frames.to(device))
    if weight is not None:
        magnitude = magnitude * weight.to(magnitude.dtype)[None, :]
    band_hz = torch.as_tensor(block.band_hz[region.bin0 : region.bin1], dtype=torch.float64)
    start = 2 * math.pi * torch.frac((band_hz + seed) * GOLDEN)[:, None]
    position = frames.double() + block.layout.frame0_sample / block.hop
    ramp = phase_ramp(band_hz, position, hop=block.hop, sample_rate=document.sample_rate) + start
    tone_phase = torch.remainder(ramp, 2 * math.pi).to(device, torch.float32)
    ones = torch.ones(region.shape, device=device)
    free = torch.ones((len(region.channels), *region.shape), dtype=torch.bool, device=device)
    consistent = document.transform.name == "stft"

    def compute(old_magnitude, old_phase):
        new_magnitude = magnitude.expand_as(old_magnitude)
        new_phase = tone_phase.expand_as(old_phase)
        if placement.mode == "add":
            real = old_magnitude * torch.cos(old_phase) + new_magnitude * torch.cos(new_phase)
            imag = old_magnitude * torch.sin(old_phase) + new_magnitude * torch.sin(new_phase)
            new_magnitude = torch.sqrt(real * real + imag * imag)
            new_phase = torch.atan2(imag, real)
        if consistent:
            new_phase = reconstruct_phase(
                document.transform,
                region,
                n_samples=document.n_samples,
                base=torch.stack((old_magnitude, old_phase)),
                magnitude=new_magnitude,
                phase=new_phase,
                weight=ones,
                free=free,
            )
        return new_magnitude.contiguous(), new_phase

    return Plan(f"import image ({placement.mode})", region, compute)
