"""Spectral filter: low-, high- or band-pass the 2-D spectrum of the magnitude image in the dab.

Low-pass smooths the texture of the spectrogram, high-pass keeps its fine texture and flattens its
broad shape, band-pass keeps a band of texture scales. The response is a radial order-2 Butterworth in
cycles per cell; the image's mean (the 0 frequency) always passes, so the level stays, and magnitudes
that the filter would push below zero are set to zero. Phase is untouched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from spectropaint.brushes.kernels import filter_fused, triton_math
from spectropaint.brushes.kernels.context import DabContext
from spectropaint.brushes.kernels.fft import cached_transfer, fast_length, fft_filter, filter_taps
from spectropaint.brushes.kernels.originals_fused import Kept
from spectropaint.brushes.params import check_params, param
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.torch_device import to_device

MODES = ("lowpass", "highpass", "bandpass")
ORDER = 2


@dataclass(frozen=True)
class FilterParams:
    """Filter mode and cutoffs in cycles per cell (0.5 is the finest texture a grid holds).

    Attributes
    ----------
    mode : str
        ``lowpass``, ``highpass`` or ``bandpass``.
    cutoff : float
        The cutoff of low- and high-pass, the lower edge of band-pass; 0.005..0.5.
    cutoff_high : float
        The upper edge of band-pass (unused otherwise); above ``cutoff``, up to 0.5.
    """

    mode: str = param("lowpass", "Mode", choices=MODES)
    cutoff: float = param(0.1, "Cutoff", "cycles/cell", low=0.005, high=0.5, step=0.005, decimals=3)
    cutoff_high: float = param(
        0.25,
        "Upper cutoff",
        "cycles/cell",
        low=0.005,
        high=0.5,
        step=0.005,
        decimals=3,
        used_when=("mode", ("bandpass",)),
    )

    def __post_init__(self) -> None:
        check_params(self)
        if self.mode == "bandpass" and self.cutoff_high <= self.cutoff:
            raise SettingsError(
                f"cutoff_high ({self.cutoff_high}) must be above cutoff ({self.cutoff}) for bandpass"
            )

    def margin(self, settings) -> tuple[int, int]:
        """Cells of context (bins, frames): one period of the cutoff, at most the radius."""
        period = math.ceil(1.0 / self.cutoff)
        return (
            min(period, math.ceil(settings.radius_bins)),
            min(period, math.ceil(settings.radius_frames)),
        )


def lowpass_response(rho: torch.Tensor, cutoff: float) -> torch.Tensor:
    """Butterworth magnitude response at radial frequency ``rho`` (cycles per cell)."""
    return 1.0 / (1.0 + (rho / cutoff) ** (2 * ORDER))


def response(params: FilterParams, rho: torch.Tensor) -> torch.Tensor:
    """The filter's response at radial frequency ``rho``; 1 at ``rho == 0``."""
    low = lowpass_response(rho, params.cutoff)
    if params.mode == "lowpass":
        out = low
    elif params.mode == "highpass":
        out = 1.0 - low
    else:
        out = lowpass_response(rho, params.cutoff_high) - low
    return torch.where(rho == 0, torch.ones_like(out), out)


def spectral_filter(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    mask: torch.Tensor,
    params: FilterParams,
    context: DabContext,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The filtered magnitude image on the box (never below zero); ``magnitude`` and ``phase``
    may have leading dimensions (one per dab, each filtered alone). A small region on CUDA is
    summed directly at the box's cells (:mod:`.filter_fused`), a larger one or on the CPU goes
    through the FFT (:func:`.fft.fft_filter`)."""
    inner = (..., *context.inner)
    shape = tuple(magnitude.shape[-2:])
    if filter_fused.available(magnitude.device, shape, context.inner):
        try:
            return filter_fused.filtered(
                magnitude, _device_taps(params, shape, magnitude.device), context.inner
            ), phase[inner]
        except triton_math.Unavailable:  # (Triton cannot compile here: the FFT)
            pass
    out = fft_filter(magnitude, ("filter", params), lambda n_b, n_t: transfer(params, n_b, n_t))
    return out[inner].clamp_min(0.0), phase[inner]


class FilterInto:
    """The spectral filter's dabs of a group filtered, blended and written into the document in
    one launch a size of region (:func:`.filter_fused.filter_into`), where that kernel runs: what
    the dab path otherwise does in some twenty operations (the regions stacked by size, the
    filter, each cell's result gathered from its dab's, the blend). The brush's
    :attr:`~spectropaint.brushes.registry.BrushKind.blends_into`."""

    reads_kept = True
    """It also reads the region's values where they lie (:class:`~.triton_math.KernelInto`'s
    ``reads_kept``)."""
    reflects = True
    """A region past the grid's edges is read where its part inside the grid lies, each cell past
    them at its reflection (:func:`.filter_fused.filter_into`): no copy of the region first near
    the lowest and highest bands and a file's ends either."""

    @staticmethod
    def takes(device: torch.device, region: tuple[int, int], box: tuple[int, int]) -> bool:
        """Whether dabs whose regions are ``region`` ``(rows, columns)`` and boxes ``box`` go
        through the launch on ``device``."""
        inner = (slice(0, box[0]), slice(0, box[1]))
        return filter_fused.available(device, region, inner)

    @staticmethod
    def apply(values, weight, destination, params: FilterParams, context: DabContext,
              holders) -> bool:  # fmt: skip
        """:func:`.filter_fused.filter_into` for dabs of one size: ``values`` the group's region
        ``[2, C, Rm, Cm]`` (or where they lie, a :class:`~.originals_fused.Kept`), each dab's box
        at ``context.inner`` of its region, ``holders`` its ``dabs`` and ``last``; through this
        brush's taps for those regions; True. Raises :class:`~.triton_math.Unavailable` where
        Triton cannot compile."""
        rows, columns = context.inner
        box = (rows.stop - rows.start, columns.stop - columns.start)
        region = (box[0] + 2 * rows.start, box[1] + 2 * columns.start)
        taps = _device_taps(params, region, destination[0].device)
        if isinstance(values, torch.Tensor):  # (read as a document with no tile kept)
            values = Kept.of(values[0], values[1])
        filter_fused.filter_into(values, taps, *holders, weight, destination, box,
                                 (rows.start, columns.start))  # fmt: skip
        return True


def _device_taps(params: FilterParams, shape: tuple[int, int], device: torch.device):
    """The filter's taps for a region of ``shape`` (:func:`.fft.filter_taps` on its grid),
    float32 on ``device``; kept for the next dab of the same size."""
    grid = (fast_length(shape[0]), fast_length(shape[1]))

    def make() -> torch.Tensor:
        taps = filter_taps(lambda n_b, n_t: transfer(params, n_b, n_t), shape, grid)
        return to_device(taps.to(torch.float32).contiguous(), device)

    return cached_transfer(("filter taps", params, shape, device), None, make)


def transfer(params: FilterParams, n_b: int, n_t: int) -> torch.Tensor:
    """The response ``[n_b, n_t // 2 + 1]`` (float64, on the CPU) on the ``rfft2`` grid of
    ``n_b x n_t``."""
    f_b = torch.fft.fftfreq(n_b, dtype=torch.float64)
    f_t = torch.fft.rfftfreq(n_t, dtype=torch.float64)
    rho = torch.sqrt(f_b[:, None] ** 2 + f_t[None, :] ** 2)
    return response(params, rho)
