"""Blur: a Gaussian blur of magnitude, by FFT so that wide brushes cost no more per cell.

The Gaussian is truncated at ``TRUNCATE`` standard deviations and normalised, as
``scipy.ndimage.gaussian_filter`` does; the region carries that many cells of margin, so the circular
FFT convolution equals the linear one on the dab's box, and its cost grows with the region's area
(times a logarithm), not with the Gaussian's width. Phase is untouched.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from spectropaint.brushes.kernels import blur_fused, triton_math
from spectropaint.brushes.kernels.context import DabContext
from spectropaint.brushes.kernels.fft import cached_transfer, fast_length
from spectropaint.brushes.params import check_params, param
from spectropaint.transforms.torch_device import to_device

TRUNCATE = 4.0


def support(sigma: float) -> int:
    """Half-width in cells of the truncated Gaussian of standard deviation ``sigma``."""
    return int(TRUNCATE * sigma + 0.5)


@dataclass(frozen=True)
class BlurParams:
    """``sigma``: the Gaussian's standard deviation in radii (per axis: times each radius), 0.01..2."""

    sigma: float = param(0.25, "Blur", "radii", low=0.01, high=2.0, step=0.05)

    def __post_init__(self) -> None:
        check_params(self)

    def margin(self, settings) -> tuple[int, int]:
        """Cells of context (bins, frames): the Gaussian's support."""
        return (
            support(self.sigma * settings.radius_bins),
            support(self.sigma * settings.radius_frames),
        )


def _taps(sigma: float) -> torch.Tensor:
    """The normalised truncated Gaussian ``[2 support + 1]`` (float64, on the CPU)."""
    half = support(sigma)
    offsets = torch.arange(-half, half + 1, dtype=torch.float64)
    taps = torch.exp(-0.5 * (offsets / sigma) ** 2)
    return taps / taps.sum()


def _circular_taps(sigma: float, n: int) -> torch.Tensor:
    """:func:`_taps` centred on index 0 of a length-``n`` circle (float64, on the CPU)."""
    half = support(sigma)
    circle = torch.zeros(n, dtype=torch.float64)
    circle[torch.remainder(torch.arange(-half, half + 1), n)] = _taps(sigma)
    return circle


def blur(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    mask: torch.Tensor,
    params: BlurParams,
    context: DabContext,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian-blurred magnitude on the box (standard deviations ``sigma`` times each radius).

    Separable: along frames for every row of the region, keeping the box's columns, then along bins
    for those columns only, each by a real FFT of a fast length (on CUDA, each directly in one
    launch: :mod:`.blur_fused`).
    """
    radius_frames, radius_bins = context.radius
    rows, columns = context.inner
    if blur_fused.available(magnitude.device):
        with contextlib.suppress(triton_math.Unavailable):  # (then the FFTs)
            out = blur_fused.blur(magnitude, _gaussians(params, context, magnitude.device),
                                  context.inner)  # fmt: skip
            return out, phase[(slice(None), rows, columns)]
    along_t = _fft_blur(magnitude, params.sigma * radius_frames, dim=-1)[..., columns]
    out = _fft_blur(along_t, params.sigma * radius_bins, dim=-2)[..., rows, :]
    return out.clamp_min(0.0), phase[(slice(None), rows, columns)]


class BlurInto:
    """The blur of a group's region blended and written into the document by its second launch
    (:func:`.blur_fused.blur`'s ``into``), where the launches run: the blend's launch and the
    blurred box's buffer fewer. The brush's :attr:`~spectropaint.brushes.registry.BrushKind.
    blends_into`."""

    reads_kept = True
    """It also reads the region's values where they lie (:class:`~.triton_math.KernelInto`'s
    ``reads_kept``)."""
    reflects = True
    """A region past the grid's edges is read where its part inside the grid lies, each cell past
    them at its reflection (:func:`.blur_fused.blur`'s ``kept``): near the lowest and highest
    bands and a file's ends too, no copy of the region first."""

    @staticmethod
    def takes(device: torch.device, region: tuple[int, int], box: tuple[int, int]) -> bool:
        """Whether a group's region of any size goes through the launches on ``device``."""
        return blur_fused.available(device)

    @staticmethod
    def apply(values, weight, destination, params: BlurParams, context: DabContext,
              holders=None) -> bool:  # fmt: skip
        """:func:`blur`'s magnitude of the box ``context.inner`` of the group's region ``values``
        ``[2, C, Bm, Tm]`` (or where they lie, a :class:`~.originals_fused.Kept`) blended by
        ``weight`` into ``destination`` (as :func:`.blur_fused.blur`'s ``into``); True. Raises
        :class:`~.triton_math.Unavailable` where Triton cannot compile."""
        gaussians = _gaussians(params, context, destination[0].device)
        if isinstance(values, torch.Tensor):
            blur_fused.blur(values[0], gaussians, context.inner, into=(weight, destination))
        else:
            blur_fused.blur(None, gaussians, context.inner, into=(weight, destination),
                            kept=values)  # fmt: skip
        return True


def _gaussians(params: BlurParams, context: DabContext, device: torch.device):
    """The truncated Gaussians' taps (bins, frames) of a dab of ``context.radius`` on ``device``."""
    radius_frames, radius_bins = context.radius
    return [_device_taps(params.sigma * radius, device) for radius in (radius_bins, radius_frames)]


def _fft_blur(x: torch.Tensor, sigma: float, *, dim: int) -> torch.Tensor:
    """``x`` convolved along ``dim`` with the truncated Gaussian, circularly on a fast length."""
    n = fast_length(x.shape[dim], x.device)
    transfer = cached_transfer(
        ("blur", sigma, n, x.device), n, lambda: _transfer(sigma, n, x.device)
    )
    if dim == -2:
        transfer = transfer[:, None]
    spectrum = torch.fft.rfft(x, n=n, dim=dim)
    return torch.fft.irfft(spectrum * transfer, n=n, dim=dim).narrow(dim, 0, x.shape[dim])


def _transfer(sigma: float, n: int, device: torch.device) -> torch.Tensor:
    """The truncated Gaussian's real response ``[n // 2 + 1]`` (float32) on a length-``n`` circle,
    computed on the CPU (a float64 FFT on a GPU would load kernels of its own for each length)
    and uploaded through pinned memory (a stroke never waits for it)."""
    return to_device(torch.fft.rfft(_circular_taps(sigma, n)).real.to(torch.float32), device)


def _device_taps(sigma: float, device: torch.device) -> torch.Tensor:
    """:func:`_taps` as float32 on ``device`` (kept, as the FFT's responses are)."""
    return cached_transfer(
        ("blur taps", sigma, device), 2 * support(sigma) + 1,
        lambda: to_device(_taps(sigma).to(torch.float32), device),
    )  # fmt: skip
