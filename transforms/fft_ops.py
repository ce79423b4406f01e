"""Array kernels on torch tensors (FFTs of windowed frames, gathers, the polar split), fast on the
CPU as well as on GPUs: the NSGT's, and the STFT's analysis on the CPU.

On a GPU these are torch's own operations. On the CPU they run numpy and ``scipy.fft`` on the
tensors' memory, one thread per call (callers run calls on several threads: see
:func:`cpu_workers`). On this project's 2-core machine, pocketfft's batched complex FFTs of 256 to
8192 points were 2 to 3 times faster than torch's; ``np.take`` along the last axis 15 times faster
than ``torch.index_select`` on a strided complex tensor; numpy's ``abs`` and ``arctan2`` of complex64
3 to 4 times faster than torch's ``abs`` and ``angle``; and torch's own two-thread element-wise
operations were up to 50 times slower than one thread while other processes kept the cores busy
(OpenMP threads waiting for each other). ``tests/benchmarks/bench_transforms.py`` shows what this
gives for the NSGT. Each call computes the same bits for the same input whatever the thread.
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.lib.stride_tricks import sliding_window_view

MAX_CPU_WORKERS = 4
"""Most threads :func:`cpu_workers` gives: each holds a chunk of work in memory, and beyond a few
they wait for memory rather than compute."""


def cpu_workers(device: torch.device) -> int:
    """Threads to spread independent calls over: on the CPU, torch's thread count up to
    :data:`MAX_CPU_WORKERS`; else 1 (a GPU runs one stream)."""
    if device.type != "cpu":
        return 1
    return max(1, min(MAX_CPU_WORKERS, torch.get_num_threads()))


def _numpy(x: torch.Tensor) -> np.ndarray:
    return x.detach().resolve_conj().numpy()


def slice_spectra(
    samples: torch.Tensor,
    first: int,
    count: int,
    length: int,
    window: torch.Tensor,
    *,
    hop: int | None = None,
) -> torch.Tensor:
    """``rfft`` of ``count`` windowed slices of ``samples``.

    Parameters
    ----------
    samples : torch.Tensor [shape=(C, n)]
        Real samples; taken as zero outside ``[0, n)``.
    first : int
        Sample where slice 0 starts (may be negative); slices start ``hop`` apart (default
        ``length // 2``).
    window : torch.Tensor [shape=(length,)], float32
        On the device the spectra are computed on.

    Returns
    -------
    torch.Tensor [shape=(C, count, length // 2 + 1)], complex64
    """
    hop = length // 2 if hop is None else hop
    last = first + (count - 1) * hop + length
    lo, hi = max(0, first), min(samples.shape[-1], last)
    if window.device.type != "cpu":
        shape = (samples.shape[0], last - first)
        segment = torch.zeros(shape, dtype=torch.float32, device=window.device)
        if hi > lo:
            segment[:, lo - first : hi - first] = samples[:, lo:hi].to(window.device, torch.float32)
        return torch.fft.rfft(segment.unfold(-1, length, hop) * window)
    segment = np.zeros((samples.shape[0], last - first), dtype=np.float32)
    if hi > lo:
        segment[:, lo - first : hi - first] = _numpy(samples[:, lo:hi])
    return windowed_rfft(segment, length, hop, _numpy(window))


def windowed_rfft(signal: np.ndarray, length: int, hop: int, window: np.ndarray) -> torch.Tensor:
    """``rfft`` of the frames of float32 ``signal`` ``[C, n]``, ``length`` long and ``hop`` apart,
    times ``window``, by pocketfft on this thread: complex64 ``[C, frames, length // 2 + 1]``."""
    import scipy.fft  # on first use: opening the window needs no scipy

    frames = sliding_window_view(signal, length, axis=-1)[:, ::hop] * window
    return torch.from_numpy(scipy.fft.rfft(frames, overwrite_x=True))


def irfft(x: torch.Tensor, n: int) -> torch.Tensor:
    """``torch.fft.irfft`` of complex64 ``x`` along its last axis: float32 ``[..., n]``."""
    if x.device.type != "cpu":
        return torch.fft.irfft(x, n=n)
    import scipy.fft

    return torch.from_numpy(scipy.fft.irfft(_numpy(x), n=n))


def fft_(x: torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
    """The FFT (or, with ``inverse``, the inverse FFT, scaled by ``1 / n``) of complex64 ``x``
    along its last axis, which it may overwrite: pass a tensor of your own."""
    if x.device.type != "cpu":
        return torch.fft.ifft(x) if inverse else torch.fft.fft(x)
    import scipy.fft

    transform = scipy.fft.ifft if inverse else scipy.fft.fft
    return torch.from_numpy(transform(_numpy(x), overwrite_x=True))


def take_scaled(x: torch.Tensor, index: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """``x[..., index]`` times complex weights given as real pairs: a new contiguous tensor.

    Parameters
    ----------
    x : torch.Tensor [shape=(..., F)], complex64
    index : torch.Tensor [shape=(K,)], int64
        In ``[0, F)``.
    weights : torch.Tensor [shape=(K, 2)], float32
        Multiply the real parts by the first column and the imaginary parts by the second (a
        negative second column conjugates).
    """
    if x.device.type != "cpu":
        rows = torch.index_select(x, -1, index)
        torch.view_as_real(rows).mul_(weights)
        return rows
    rows = np.empty((*x.shape[:-1], index.shape[0]), dtype=np.complex64)
    np.take(_numpy(x), _numpy(index), axis=-1, out=rows, mode="clip")  # clip: unbuffered
    pairs = rows.view(np.float32).reshape(*rows.shape, 2)
    np.multiply(pairs, _numpy(weights), out=pairs)
    return torch.from_numpy(rows)


def scale_(x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Multiply complex64 ``x [..., K]`` in place as :func:`take_scaled` does; returns ``x``."""
    if x.device.type != "cpu":
        torch.view_as_real(x).mul_(weights)
        return x
    pairs = torch.view_as_real(x).numpy()
    np.multiply(pairs, _numpy(weights), out=pairs)
    return x


_NUMPY_TYPES = {torch.float32: np.float32, torch.complex64: np.complex64}


def empty(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A new uninitialised tensor (on the CPU numpy's memory, which asks the kernel for huge
    pages: a large tensor's first writes then fault 4 times faster, measured here)."""
    if device.type != "cpu":
        return torch.empty(shape, dtype=dtype, device=device)
    return torch.from_numpy(np.empty(shape, dtype=_NUMPY_TYPES[dtype]))


def zeros(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A new tensor of zeros, as :func:`empty`."""
    if device.type != "cpu":
        return torch.zeros(shape, dtype=dtype, device=device)
    return torch.from_numpy(np.zeros(shape, dtype=_NUMPY_TYPES[dtype]))


def copy_into(target: torch.Tensor, values: torch.Tensor) -> None:
    """``target[...] = values`` (same shape, any strides)."""
    if target.device.type != "cpu" or values.device.type != "cpu":
        target.copy_(values)
        return
    np.copyto(_numpy(target), _numpy(values))


def polar_into(values: torch.Tensor, magnitude: torch.Tensor, phase: torch.Tensor) -> None:
    """Write ``|values|`` and ``angle(values)`` (complex64, any strides) into the float32
    tensors ``magnitude`` and ``phase`` of the same shape (views of larger tensors are fine)."""
    if values.device.type != "cpu":
        magnitude.copy_(values.abs())
        phase.copy_(values.angle())
        return
    z = _numpy(values)
    np.abs(z, out=_numpy(magnitude))
    np.arctan2(z.imag, z.real, out=_numpy(phase))


def polar_to_complex(magnitude: torch.Tensor, phase: torch.Tensor) -> torch.Tensor:
    """``torch.polar(magnitude, phase)``: a new complex64 tensor from float32 tensors of one shape
    (any strides; on the CPU numpy's ``cos`` and ``sin``, 4 times faster than ``torch.polar`` here,
    with the same bits whatever the tensors' strides)."""
    if magnitude.device.type != "cpu":
        return torch.polar(magnitude, phase)
    m, p = _numpy(magnitude), _numpy(phase)
    out = np.empty(m.shape, dtype=np.complex64)
    parts = out.view(np.float32).reshape(*m.shape, 2)
    factor = np.cos(p)
    np.multiply(m, factor, out=parts[..., 0])
    np.sin(p, out=factor)
    np.multiply(m, factor, out=parts[..., 1])
    return torch.from_numpy(out)


def polar_difference(
    magnitude: torch.Tensor, phase: torch.Tensor, magnitude_b: torch.Tensor, phase_b: torch.Tensor
) -> torch.Tensor:
    """``polar(magnitude, phase) - polar(magnitude_b, phase_b)`` (as :func:`polar_to_complex`):
    a new complex64 tensor."""
    difference = polar_to_complex(magnitude, phase)
    other = polar_to_complex(magnitude_b, phase_b)
    if difference.device.type != "cpu":
        return difference.sub_(other)
    np.subtract(difference.numpy(), other.numpy(), out=difference.numpy())
    return difference


def polar_distance(
    magnitude: torch.Tensor, phase: torch.Tensor, magnitude_b: torch.Tensor, phase_b: torch.Tensor
) -> torch.Tensor:
    """``|polar(magnitude, phase) - polar(magnitude_b, phase_b)|`` of float32 tensors of one shape,
    from the polar forms (``(a - b)^2 + 4 a b sin^2(d / 2)``: no cancellation however small the
    distance): a new float32 tensor."""
    if magnitude.device.type != "cpu":
        return (torch.polar(magnitude, phase) - torch.polar(magnitude_b, phase_b)).abs()
    a, b = _numpy(magnitude), _numpy(magnitude_b)
    turn = np.subtract(_numpy(phase), _numpy(phase_b), dtype=np.float32)
    turn *= 0.5
    np.sin(turn, out=turn)
    turn *= turn
    turn *= a
    turn *= b
    turn *= 4.0
    gap = np.subtract(a, b, dtype=np.float32)
    gap *= gap
    gap += turn
    return torch.from_numpy(np.sqrt(gap, out=gap))


def polar(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(|values|, angle(values))`` as new float32 tensors, as :func:`polar_into` computes them."""
    magnitude = torch.empty(values.shape, dtype=torch.float32, device=values.device)
    phase = torch.empty_like(magnitude)
    polar_into(values, magnitude, phase)
    return magnitude, phase
