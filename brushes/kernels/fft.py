"""FFT filtering of region images: the cost grows with the region's area, not the kernel's width."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable

import torch

from spectropaint.transforms.torch_device import to_device

CACHED_CELLS = 1 << 16
"""Transfer functions of up to this many values are kept for the next dab of the same size (its
making is a dozen small operations, the cost of a small dab on a GPU); larger ones, whose FFTs
cost more than their making, are made each time, so the cache holds at most a few MB."""
CACHED_TRANSFERS = 32
_transfers: dict[Hashable, torch.Tensor] = {}
_lock = threading.Lock()


def cached_transfer(
    key: Hashable, cells: int | None, make: Callable[[], torch.Tensor]
) -> torch.Tensor:
    """``make()``, kept under ``key`` when it holds at most :data:`CACHED_CELLS` values, or
    whatever its size when ``cells`` is None (the oldest of :data:`CACHED_TRANSFERS` dropped
    first). Callers must not modify the result."""
    if cells is not None and cells > CACHED_CELLS:
        return make()
    with _lock:
        found = _transfers.get(key)
    if found is None:
        found = make()
        with _lock:
            while len(_transfers) >= CACHED_TRANSFERS:
                _transfers.pop(next(iter(_transfers)))
            _transfers[key] = found
    return found


def clear_transfers() -> None:
    """Forget every kept transfer function."""
    with _lock:
        _transfers.clear()


GPU_LENGTHS = tuple(2**k for k in range(4, 15))
"""The blur's FFT lengths on a CUDA device (powers of two, 16 to 16384; longer ones are the next
power of two too): cuFFT loads the kernels of each length at its first use, 30 to 170 ms on the
H200, so a blur that met a new ``2^a 3^b 5^c`` length on most moves stalled each time. These are
few enough to load before the first stroke (:func:`warm_lengths`). The blur's result does not
depend on the length (its Gaussian is truncated within the region's margin); the filter brush's
response is sampled on a padded grid of ``2^a 3^b 5^c`` lengths, and on a CUDA device it is applied
by a linear convolution on these lengths instead (:func:`fft_filter`)."""


def fast_length(n: int, device: torch.device | None = None) -> int:
    """A length at least ``n`` that the FFT handles quickly: the smallest ``2^a 3^b 5^c``, or on
    a CUDA ``device`` the smallest power of two (see :data:`GPU_LENGTHS`); remembered (a filter
    event asks four times, and the search is some thirty steps)."""
    return _fast_length(n, device is not None and device.type == "cuda")


@functools.lru_cache(maxsize=4096)
def _fast_length(n: int, power_of_two: bool) -> int:
    best = 1
    while best < n:
        best *= 2
    if power_of_two:
        return best
    power5 = 1
    while power5 < 2 * n:
        power35 = power5
        while power35 < 2 * n:
            candidate = power35
            while candidate < n:
                candidate *= 2
            best = min(best, candidate)
            power35 *= 3
        power5 *= 5
    return best


def fft_filter(
    x: torch.Tensor, key: Hashable, response: Callable[[int, int], torch.Tensor]
) -> torch.Tensor:
    """Filter the last two axes of ``x`` circularly on its zero-padded grid of ``n_b x n_t``
    (each the :func:`fast_length` of the axis, a ``2^a 3^b 5^c``).

    On a CUDA device the same filter is applied by :func:`linear_filter` on powers of two (cuFFT
    loads each new length's kernels at its first use, 60 to 190 ms on the H200, and the filter met
    a new length with every new brush size and every NSGT band group; the powers of two are loaded
    before the first stroke): equal to float precision.

    Parameters
    ----------
    x : torch.Tensor [shape=(..., B, T)], float32
    key : hashable
        Names the response (with the sizes) among the transfer functions kept.
    response : callable
        ``response(n_b, n_t)``: the real response ``[n_b, n_t // 2 + 1]`` on the ``rfft2`` grid of
        ``n_b x n_t``, float64 on the CPU.

    Returns
    -------
    torch.Tensor [shape=(..., B, T)]
    """
    shape = x.shape[-2:]
    grid = (fast_length(shape[0]), fast_length(shape[1]))
    if x.device.type == "cuda":
        return linear_filter(x, key, response, grid)
    transfer = cached_transfer(
        (key, grid, x.device),
        grid[0] * grid[1],
        lambda: response(*grid).to(x.device, torch.float32),
    )
    out = torch.fft.irfft2(torch.fft.rfft2(x, s=grid) * transfer, s=grid)
    return out[..., : shape[0], : shape[1]]


def linear_filter(
    x: torch.Tensor,
    key: Hashable,
    response: Callable[[int, int], torch.Tensor],
    grid: tuple[int, int],
) -> torch.Tensor:
    """:func:`fft_filter`'s circular filter on ``grid``, applied by a linear convolution on
    power-of-two lengths.

    A cell ``i`` of the result reads cell ``j`` of ``x`` through the grid's periodic kernel at
    offset ``(i - j) mod n``, ``|i - j| < s`` (``s``: the axis' size). Those ``2 s - 1`` taps per
    axis, convolved with ``x``, give the result at ``s - 1 .. 2 s - 2`` of the linear convolution
    (``3 s - 2`` long); an FFT of ``L >= 2 s - 1`` points wraps only its tail past ``L`` onto
    ``0 .. s - 2``, which is not read. The taps' transform is made on the CPU once per response
    and size, and kept.
    """
    shape = tuple(x.shape[-2:])
    lengths = tuple(fast_length(2 * s - 1, x.device) for s in shape)

    def make() -> torch.Tensor:
        taps = filter_taps(response, shape, grid)
        spectrum = torch.fft.rfft2(taps, s=lengths).to(torch.complex64)
        return to_device(spectrum, x.device)  # through pinned memory: a stroke never waits

    transfer = cached_transfer((key, shape, grid, lengths, x.device), None, make)
    out = torch.fft.irfft2(torch.fft.rfft2(x, s=lengths) * transfer, s=lengths)
    return out[..., shape[0] - 1 : 2 * shape[0] - 1, shape[1] - 1 : 2 * shape[1] - 1]


def filter_taps(
    response: Callable[[int, int], torch.Tensor], shape: tuple[int, int], grid: tuple[int, int]
) -> torch.Tensor:
    """The taps ``[2 S - 1, 2 T - 1]`` (float64, on the CPU) by which :func:`fft_filter`'s
    circular filter on ``grid`` reads an image of ``shape`` ``(S, T)``: a cell ``i`` of the result
    is the sum over the image's cells ``j`` of ``x[j] * taps[i - j + (S - 1, T - 1)]`` (the grid's
    periodic kernel at offset ``(i - j) mod grid``)."""
    taps = torch.fft.irfft2(response(*grid), s=grid)
    for axis, (s, n) in enumerate(zip(shape, grid, strict=True)):
        offsets = torch.remainder(torch.arange(-(s - 1), s), n)
        taps = taps.index_select(axis, offsets)
    return taps


def warm_lengths(device: torch.device) -> None:
    """Load cuFFT's kernels for every length of :data:`GPU_LENGTHS`: a real FFT and its inverse
    along the last axis and along the one before it (a blur's two passes), and a complex one along
    the one before it (the second axis of the filter's ``rfft2``)."""
    if device.type != "cuda":
        return
    for n in GPU_LENGTHS:
        x = torch.zeros((2, 4, n), device=device)
        torch.fft.irfft(torch.fft.rfft(x, dim=-1), n=n, dim=-1)
        y = torch.zeros((2, n, 4), device=device)
        torch.fft.irfft(torch.fft.rfft(y, dim=-2), n=n, dim=-2)
        z = torch.zeros((2, n, 4), device=device, dtype=torch.complex64)
        torch.fft.ifft(torch.fft.fft(z, dim=-2), dim=-2)
