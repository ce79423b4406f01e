"""Choosing the wgpu adapter and opening a device on it.

A discrete GPU is preferred, then an integrated one, then anything else, and a CPU rasteriser
(lavapipe, llvmpipe) last; native back ends (Vulkan, Metal, D3D12) beat OpenGL. The environment
variable ``SPECTROPAINT_ADAPTER`` forces a choice: ``cpu`` for a software adapter, or any part of an
adapter's name (``nvidia``, ``intel``, ``opengl``...), matched case-insensitively.

Before wgpu looks for adapters, Triton's library is loaded where Triton is installed (torch's CUDA
builds bring it): Mesa's drivers (lavapipe among them) load the system's LLVM, and a Triton loaded
after them registers its own LLVM's options into that one's and crashes the process (seen with
lavapipe and LLVM 15: a segmentation fault in ``llvm::cl::Option::addArgument``, whether Triton
came for warp's fused kernel or through ``torch._dynamo``). Loaded first, each keeps its own.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
from collections.abc import Sequence

import wgpu

from spectropaint.gpu.errors import GPUUnavailableError, gpu_errors

ENV_VAR = "SPECTROPAINT_ADAPTER"

_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "Unknown": 3, "CPU": 4}
_NATIVE_BACKENDS = ("Vulkan", "Metal", "D3D12")
NO_ADAPTER_HINT = (
    "no wgpu adapter found: install a GPU driver with Vulkan, Metal or D3D12 support, or on Linux "
    "the software rasteriser lavapipe (Debian/Ubuntu package mesa-vulkan-drivers)"
)


def describe_adapter(adapter: wgpu.GPUAdapter) -> str:
    """One line naming an adapter, e.g. ``'llvmpipe (LLVM 15.0.6, 256 bits) (CPU) via Vulkan'``."""
    info = adapter.info
    return f"{info.get('device', '?')} ({info.get('adapter_type', '?')}) via {info.get('backend_type', '?')}"


def _rank(adapter: wgpu.GPUAdapter) -> tuple[int, int]:
    info = adapter.info
    native = info.get("backend_type") in _NATIVE_BACKENDS
    return _TYPE_RANK.get(info.get("adapter_type", "Unknown"), 3), 0 if native else 1


def _matches(adapter: wgpu.GPUAdapter, wanted: str) -> bool:
    info = adapter.info
    if wanted == "cpu":
        return info.get("adapter_type") == "CPU"
    text = " ".join(str(info.get(key, "")) for key in ("device", "vendor", "description"))
    return wanted in f"{text} {describe_adapter(adapter)}".lower()


def choose_adapter(
    adapters: Sequence[wgpu.GPUAdapter], forced: str | None = None
) -> wgpu.GPUAdapter:
    """The best of ``adapters``, or the best one matching ``forced`` (``'cpu'`` or a name part).

    Raises
    ------
    GPUUnavailableError
        When ``adapters`` is empty or none matches ``forced``; the message lists what exists.
    """
    if not adapters:
        raise GPUUnavailableError(NO_ADAPTER_HINT)
    candidates = list(adapters)
    if forced:
        wanted = forced.strip().lower()
        candidates = [adapter for adapter in adapters if _matches(adapter, wanted)]
        if not candidates:
            names = "; ".join(describe_adapter(adapter) for adapter in adapters)
            raise GPUUnavailableError(
                f"{ENV_VAR}={forced!r} matches no wgpu adapter (available: {names})"
            )
    return min(candidates, key=_rank)


def request_adapter(forced: str | None = None) -> wgpu.GPUAdapter:
    """The adapter to render with: ``forced``, else ``$SPECTROPAINT_ADAPTER``, else the best."""
    _load_triton_first()
    forced = forced if forced is not None else os.environ.get(ENV_VAR) or None
    return choose_adapter(wgpu.gpu.enumerate_adapters_sync(), forced)


@functools.cache
def _load_triton_first() -> None:
    """Triton's library loaded (not its Python package: some 20 ms, and Triton's settings are read
    only when the package is imported), where Triton is installed; see the module's docstring."""
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        return
    library = os.path.join(os.path.dirname(spec.origin), "_C", "libtriton.so")
    if os.path.exists(library):
        ctypes.CDLL(library)


def request_device(adapter: wgpu.GPUAdapter | None = None) -> wgpu.GPUDevice:
    """A device with the adapter's own texture size and layer limits (WebGPU defaults are lower).

    Raises
    ------
    GPUUnavailableError
        No adapter, or the adapter would not open a device (the message names it and says why).
    """
    adapter = adapter or request_adapter()
    limits = {
        key: adapter.limits[key] for key in ("max-texture-dimension-2d", "max-texture-array-layers")
    }
    try:
        with gpu_errors(f"opening a device on {describe_adapter(adapter)}"):
            return adapter.request_device_sync(label="spectropaint", required_limits=limits)
    except RuntimeError as exc:  # wgpu-py's "Request device failed (status): message"
        raise GPUUnavailableError(
            f"the GPU adapter {describe_adapter(adapter)} would not open a device ({exc}); "
            f"choose another adapter with {ENV_VAR} (cpu for software rendering) or update the "
            "GPU driver"
        ) from exc


@functools.cache
def shared_device() -> wgpu.GPUDevice:
    """One device per process, on the adapter :func:`request_adapter` picks."""
    return request_device()


def check_adapter() -> str:
    """Open the shared device now and describe its adapter, for a start-up check.

    Returns
    -------
    str
        E.g. ``'llvmpipe (LLVM 15.0.6, 256 bits) (CPU) via Vulkan'``.

    Raises
    ------
    GPUUnavailableError
        With the message to show: no adapter, none matching ``SPECTROPAINT_ADAPTER``, or no device.
    """
    return describe_adapter(shared_device().adapter)
