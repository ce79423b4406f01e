"""Which torch device the document and the brushes compute on.

An explicit choice (argument, then the ``SPECTROPAINT_DEVICE`` environment variable) wins; otherwise
CUDA, then Apple's MPS, then the CPU. Asking for a device that is not there is an error, not a silent
fallback, so a person who typed ``--device cuda`` learns that CUDA is missing. A device that runs out
of memory later is another matter: the document moves to the CPU and says so
(:meth:`~spectropaint.transforms.document.Document.continue_on_cpu`); :func:`release_cache` and
:func:`continue_on_cpu_notice` are its device-specific parts.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from spectropaint.transforms.errors import SettingsError

ENV_VAR = "SPECTROPAINT_DEVICE"


def available_devices() -> list[str]:
    """Names of the devices this machine can compute on, best first."""
    names = []
    if torch.cuda.is_available():
        names.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps")
    names.append("cpu")
    return names


def choose_device(explicit: str | torch.device | None = None) -> torch.device:
    """The device to use: ``explicit``, else ``$SPECTROPAINT_DEVICE``, else the best available."""
    wanted = explicit if explicit is not None else os.environ.get(ENV_VAR) or None
    if wanted is None:
        return _as_tensors_say(torch.device(available_devices()[0]))
    try:
        device = torch.device(wanted)
    except (RuntimeError, TypeError) as exc:
        raise SettingsError(f"unknown torch device {wanted!r}: {exc}") from None
    if device.type not in available_devices():
        raise SettingsError(
            f"torch device {device.type!r} was asked for but is not available here "
            f"(available: {', '.join(available_devices())})"
        )
    if (
        device.type == "cuda"
        and device.index is not None
        and device.index >= torch.cuda.device_count()
    ):
        raise SettingsError(
            f"CUDA device {device.index} was asked for but only {torch.cuda.device_count()} exist"
        )
    return _as_tensors_say(device)


def _as_tensors_say(device: torch.device) -> torch.device:
    """``device`` named as its tensors name it (``cuda`` is ``cuda:0`` when that is the current
    device; ``cpu:0`` is ``cpu``), so that comparing a tensor's device with it tells whether they
    are one (a stroke's state moved every tile at every group, taking ``cuda`` for another device)."""
    if device.type == "cpu":
        return torch.device("cpu")
    if device.index is None:
        index = torch.cuda.current_device() if device.type == "cuda" else 0
        return torch.device(device.type, index)
    return device


CUFFT_PLANS = 64
"""cuFFT plans kept per CUDA device. Blur and filter dabs of many sizes each make a plan, and torch
keeps up to 4096 of them in host memory: about 420 MiB after 5,000 strokes on an H200, against 4 MiB
with 64 kept, at the same speed (``tests/benchmarks/bench_soak.py --device cuda``)."""


def limit_fft_plans(device: torch.device) -> None:
    """Keep at most :data:`CUFFT_PLANS` cuFFT plans for ``device`` (nothing to do elsewhere)."""
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        cache = torch.backends.cuda.cufft_plan_cache[index]
        cache.max_size = min(cache.max_size, CUFFT_PLANS)


def describe(device: torch.device) -> str:
    """A one-line description for the About box and benchmark tables."""
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return device.type


def device_name(device: torch.device) -> str:
    """``'CUDA'``, ``'MPS'``, ``'CPU'``: how a notice names a kind of device."""
    return device.type.upper()


OUT_OF_MEMORY_MARKS = ("out of memory", "CUFFT_ALLOC_FAILED", "CUBLAS_STATUS_ALLOC_FAILED")
"""Words in the errors of device libraries that failed to allocate (cuFFT and cuBLAS raise
plain ``RuntimeError`` when they cannot get their workspace, not ``torch.OutOfMemoryError``)."""


def out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` says a device ran out of memory."""
    if isinstance(error, torch.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and any(
        mark in str(error) for mark in OUT_OF_MEMORY_MARKS
    )


def release_cache(device: torch.device) -> None:
    """Hand the memory torch's caching allocator keeps on ``device`` back to the driver."""
    if device.type == "cuda":
        with torch.cuda.device(device):
            torch.cuda.empty_cache()
    elif device.type == "mps":
        torch.mps.empty_cache()


def continue_on_cpu_notice(previous: torch.device, operation: str) -> str:
    """What to tell a person when ``previous`` ran out of memory during ``operation``."""
    if previous.type == "cpu":
        return f"out of memory while {operation}; SpectroPaint tried once more"
    return (
        f"{device_name(previous)} ran out of memory while {operation}; "
        "SpectroPaint continues on the CPU (slower)"
    )


def to_device(array: np.ndarray | torch.Tensor, device: torch.device) -> torch.Tensor:
    """A host array (or CPU tensor) on ``device`` without waiting for the device: through pinned
    memory, copied asynchronously (the caching host allocator keeps the buffer until the copy is
    done). From pageable memory a copy first waits for everything queued on the device (CUDA
    synchronises the stream before it); on the CPU the array's own memory, shared."""
    if device.type == "cuda" and isinstance(array, np.ndarray) and array.dtype in TORCH_TYPES:
        # written into pinned memory by numpy: two torch calls, not four (the host's cost)
        pinned = torch.empty(array.shape, dtype=TORCH_TYPES[array.dtype], pin_memory=True)
        pinned.numpy()[...] = array
        return pinned.to(device, non_blocking=True)
    if isinstance(array, torch.Tensor):
        tensor = array.contiguous()
    else:
        tensor = torch.from_numpy(np.ascontiguousarray(array))
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def to_device_together(
    parts: list[np.ndarray], device: torch.device, dtype=None
) -> list[torch.Tensor]:
    """Host arrays on ``device`` (as ``dtype`` where given), each in its own shape and type,
    copied there in one piece: one copy instead of one an array (:func:`packed_upload`); arrays
    all of one type and shape go up stacked and are unbound (one call on the device parts them).
    On the CPU, each array's own memory, shared (as :func:`to_device`)."""
    if dtype is not None:
        parts = [part.astype(dtype, copy=False) for part in parts]
    if device.type == "cpu":  # each array's own memory: nothing to copy
        return [torch.from_numpy(np.ascontiguousarray(part)) for part in parts]
    if len(parts) == 1:
        return [to_device(parts[0], device)]
    first = parts[0]
    if all(part.dtype == first.dtype and part.shape == first.shape for part in parts):
        return list(to_device(np.stack(parts), device).unbind(0))
    return packed_upload(parts, device)


def packed_upload(parts: list[np.ndarray], device: torch.device) -> list[torch.Tensor]:
    """Host arrays of any of :data:`TORCH_TYPES` on ``device`` in one copy of their bytes: each
    placed from a multiple of 8 bytes (where a view of any type may begin) in one host buffer
    (pinned on CUDA, written by numpy), and on the device seen through a view of the copy as each
    type present (one call a type) and then its own shape and place (one call an array)."""
    sizes = [-(-part.nbytes // 8) * 8 for part in parts]
    starts = list(itertools.accumulate([0, *sizes]))
    buffer = torch.empty(max(8, starts[-1]), dtype=torch.uint8, pin_memory=device.type == "cuda")
    host = buffer.numpy()
    for part, start in zip(parts, starts, strict=False):
        host[start : start + part.nbytes] = np.ascontiguousarray(part).view(np.uint8).ravel()
    uploaded = buffer.to(device, non_blocking=True)
    typed = {kind: uploaded.view(TORCH_TYPES[kind]) for kind in {part.dtype for part in parts}}
    return [
        typed[part.dtype].as_strided(
            part.shape, contiguous_strides(part.shape), start // part.itemsize
        )
        for part, start in zip(parts, starts, strict=False)
    ]


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides (in elements) of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


TORCH_TYPES = {
    np.dtype(name): getattr(torch, name)
    for name in ("float32", "float64", "int32", "int64", "uint8")
} | {np.dtype(np.bool_): torch.bool}
"""Torch's type of each array type :func:`packed_upload` mixes (and :func:`to_device` writes into
pinned memory itself)."""


PINNED_MOST = 1 << 25
"""Bytes, at most, that :func:`to_host` copies through pinned memory (which the caching host
allocator keeps once allocated); larger copies go through pageable memory."""


def to_host(tensor: torch.Tensor) -> np.ndarray:
    """A tensor's values as a host array. From a CUDA tensor of up to :data:`PINNED_MOST` bytes,
    through pinned memory: 0.24 ms for 29.7 s of stereo float32 on the H200, against 0.74 ms from
    pageable memory. On the CPU, the tensor's own memory, shared."""
    if tensor.device.type == "cuda" and tensor.nbytes <= PINNED_MOST:
        pinned = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
        pinned.copy_(tensor)
        return pinned.numpy()
    return tensor.cpu().numpy()


class HostRead:
    """A small tensor's values on their way to the host without waiting for the GPU: from CUDA, a
    copy into pinned memory queued behind the work already asked of the device (a stroke's
    kernels), with an event to ask whether it arrived. Elsewhere they are there at once.

    On the H200 the readout under the pointer waited 0.45 ms a pointer move for the stroke's
    kernels queued before it, on the window's thread (``bench_app.py``'s stroke, its functions
    timed).
    """

    def __init__(self, tensor: torch.Tensor):
        self._event = None
        if tensor.device.type == "cuda":
            self._values = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
            self._values.copy_(tensor, non_blocking=True)
            self._event = torch.cuda.Event()
            self._event.record()
        else:
            self._values = tensor.cpu()

    def ready(self) -> bool:
        """The values arrived (:meth:`values` does not wait)."""
        return self._event is None or self._event.query()

    def values(self) -> np.ndarray:
        """The values, waiting for them where they did not arrive yet."""
        if self._event is not None:
            self._event.synchronize()
        return self._values.numpy()


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with one torch intra-op thread on the calling thread (the setting is the
    thread's own: other threads keep theirs), then restore it.

    For work made of many small operations, such as a stroke's settle: on a 2-core machine shared
    with other work, two threads wait on each other at every operation (the settle of a one-second
    stereo blur stroke took 105 to 141 ms with one thread and 0.8 to 2.6 s with two, measured here
    with other processes running).
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
