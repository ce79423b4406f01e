"""FFT filtering of region images: the cost grows with the region's area, not the kernel's width."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

import torch

CACHED_CELLS = 1 << 16
"""Transfer functions of up to this many values are kept for the next dab of the same size (its
making is a dozen small operations, the cost of a small dab on a GPU); larger ones, whose FFTs
cost more than their making, are made each time, so the cache holds at most a few MB."""
CACHED_TRANSFERS = 32
_transfers: dict[Hashable, torch.Tensor] = {}
_lock = threading.Lock()


def cached_transfer(key: Hashable, cells: int, make: Callable[[], torch.Tensor]) -> torch.Tensor:
    """``make()``, kept under ``key`` when it holds at most :data:`CACHED_CELLS` values (the
    oldest of :data:`CACHED_TRANSFERS` dropped first). Callers must not modify the result."""
    if cells > CACHED_CELLS:
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
response is sampled on its padded grid, so it keeps the same lengths on every device."""


def fast_length(n: int, device: torch.device | None = None) -> int:
    """A length at least ``n`` that the FFT handles quickly: the smallest ``2^a 3^b 5^c``, or on
    a CUDA ``device`` the smallest power of two (see :data:`GPU_LENGTHS`)."""
    best = 1
    while best < n:
        best *= 2
    if device is not None and device.type == "cuda":
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


def fft_filter(x: torch.Tensor, transfer: Callable[[int, int], torch.Tensor]) -> torch.Tensor:
    """Filter the last two axes of ``x`` by a transfer function, circularly on a zero-padded grid.

    Parameters
    ----------
    x : torch.Tensor [shape=(..., B, T)], float32
    transfer : callable
        ``transfer(n_b, n_t)`` returns the (real or complex) response ``[n_b, n_t // 2 + 1]`` on the
        ``rfft2`` grid of the padded size ``n_b x n_t`` (each a :func:`fast_length`).

    Returns
    -------
    torch.Tensor [shape=(..., B, T)]
    """
    n_b, n_t = fast_length(x.shape[-2]), fast_length(x.shape[-1])
    spectrum = torch.fft.rfft2(x, s=(n_b, n_t))
    out = torch.fft.irfft2(spectrum * transfer(n_b, n_t), s=(n_b, n_t))
    return out[..., : x.shape[-2], : x.shape[-1]]


def warm_lengths(device: torch.device) -> None:
    """Load cuFFT's kernels for every length of :data:`GPU_LENGTHS`: a real FFT and its inverse
    along the last axis and along the one before it (a blur's two passes)."""
    if device.type != "cuda":
        return
    for n in GPU_LENGTHS:
        x = torch.zeros((2, 4, n), device=device)
        torch.fft.irfft(torch.fft.rfft(x, dim=-1), n=n, dim=-1)
        y = torch.zeros((2, n, 4), device=device)
        torch.fft.irfft(torch.fft.rfft(y, dim=-2), n=n, dim=-2)
