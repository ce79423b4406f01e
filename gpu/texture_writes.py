"""``queue.write_texture`` for the many small writes of an upload, at a fraction of its host cost.

wgpu-py's ``GPUQueue.write_texture`` checks its two dicts and builds four C structs for every call
before it calls wgpu-native's ``wgpuQueueWriteTexture``: a 256 x 256 edit's seven writes took
about half of its upload's host time on the H200 (cProfile of ``bench_render.py``'s upload).
:func:`write_texture` makes the same native call, through wgpu-py's own error-checking wrapper,
with structs made once per thread (the mip level and aspect set then) whose other fields it
fills. Where wgpu's native backend does not have what it uses (another wgpu version), it is
wgpu-py's own method.
"""

from __future__ import annotations

import functools
import threading

import cffi
import numpy as np
import wgpu

_structs = threading.local()
"""Each thread's destination, layout and size structs (filled before each call)."""


@functools.cache
def _native():
    """wgpu-native's cffi module, its checked library calls and its aspect value for a colour
    texture's whole texel, or None where this wgpu does not have them."""
    try:
        from wgpu.backends.wgpu_native import _api

        ffi, calls, aspect = _api.ffi, _api.libf, _api.lib.WGPUTextureAspect_All
        calls.wgpuQueueWriteTexture  # noqa: B018 - (present in this wgpu)
        ffi.new("WGPUTexelCopyTextureInfo *")
    except (ImportError, AttributeError, cffi.CDefError):  # (a struct this wgpu does not name)
        return None
    return ffi, calls, aspect


def write_texture(
    queue: wgpu.GPUQueue,
    texture: wgpu.GPUTexture,
    origin: tuple[int, int, int],
    buffer: np.ndarray,
    offset: int,
    bytes_per_row: int,
    rows_per_image: int,
    size: tuple[int, int, int],
) -> None:
    """``queue.write_texture({"texture": texture, "origin": origin}, buffer, {"offset": offset,
    "bytes_per_row": bytes_per_row, "rows_per_image": rows_per_image}, size)`` (mip level 0):
    ``buffer`` is a C-contiguous array; wgpu copies what it reads before returning."""
    native = _native()
    if native is None:
        queue.write_texture(
            {"texture": texture, "origin": origin},
            buffer,
            {"offset": offset, "bytes_per_row": bytes_per_row, "rows_per_image": rows_per_image},
            size,
        )
        return
    ffi, calls, aspect = native
    made = getattr(_structs, "made", None)
    if made is None:
        made = _structs.made = (
            ffi.new("WGPUTexelCopyTextureInfo *", {"mipLevel": 0, "aspect": aspect}),
            ffi.new("WGPUTexelCopyBufferLayout *"),
            ffi.new("WGPUExtent3D *"),
        )
    destination, layout, extent = made
    destination.texture = texture._internal
    destination.origin.x, destination.origin.y, destination.origin.z = origin
    layout.offset, layout.bytesPerRow, layout.rowsPerImage = offset, bytes_per_row, rows_per_image
    extent.width, extent.height, extent.depthOrArrayLayers = size
    calls.wgpuQueueWriteTexture(
        queue._internal,
        destination,
        ffi.cast("uint8_t *", buffer.ctypes.data),
        buffer.nbytes,
        layout,
        extent,
    )
