"""One frame's GPU work: each prepared renderer draws its clip of the target, in one submit.

Two ways to run the same shader (``shade`` in shaders/spectrogram.wgsl):

- a **render pass** (``fs_main``, one full-screen triangle per renderer, scissored to its clip);
- a **compute pass** (``cs_main``) into a storage texture kept for the target's size, then a copy of
  each clip into the target. GPUs built for compute run fragment shaders on a few of their cores:
  on the H200 a 3840x2160 frame took 4.6 ms of GPU time as a render pass. The compute pass needs a
  target that can be copied into (``COPY_DST``), and renderers that have the compute pipeline
  (the bands renderer draws by render pass); otherwise the render pass is used.

:func:`use_compute` says which a device prefers: compute on a GPU, the render pass on a CPU
rasteriser (lavapipe), where a compute pass gains nothing.
"""

from __future__ import annotations

import threading
import weakref

import wgpu

from spectropaint.gpu.errors import gpu_errors

WORKGROUP = (16, 8)
"""``@workgroup_size`` of ``cs_main``."""
PICTURE_FORMAT = "rgba8unorm"


def use_compute(device: wgpu.GPUDevice) -> bool:
    """Draw by compute pass on this device (any adapter but a CPU one)."""
    return device.adapter.info.get("adapter_type") != "CPU"


_local = threading.local()


def picture_texture(device: wgpu.GPUDevice, size: tuple[int, int]) -> wgpu.GPUTexture:
    """The device's storage texture of ``size`` for this thread (the window draws on its thread
    while an export draws on another), made again when the size changes."""
    pictures = getattr(_local, "pictures", None)
    if pictures is None:
        pictures = _local.pictures = weakref.WeakKeyDictionary()
    picture = pictures.get(device)
    if picture is None or tuple(picture.size[:2]) != size:
        if picture is not None:
            picture.destroy()
        picture = device.create_texture(
            label="compute picture",
            size=(*size, 1),
            format=PICTURE_FORMAT,
            usage=wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.COPY_SRC,
        )
        pictures[device] = picture
    return picture


STORAGE_PICTURE = {
    "storage_texture": {"access": "write-only", "format": PICTURE_FORMAT, "view_dimension": "2d"}
}
"""The bind group layout entry of the picture ``cs_main`` writes."""


def draw_frame(
    device: wgpu.GPUDevice,
    target: wgpu.GPUTextureView,
    parts: list,
    *,
    keep: bool,
) -> None:
    """Submit one frame: ``parts`` are ``(renderer, clip)``, each renderer prepared for its clip
    (``x, y, width, height`` of the target); ``keep`` leaves the target's other pixels as they are,
    otherwise they are cleared to black (a compute pass whose copy covers the whole target clears
    nothing: a clear is a render pass, slow where render passes are)."""
    texture = target.texture
    size = (texture.size[0], texture.size[1])
    compute = (
        bool(parts)
        and texture.format == PICTURE_FORMAT
        and texture.usage & wgpu.TextureUsage.COPY_DST
        and all(getattr(renderer, "compute", False) for renderer, _ in parts)
    )
    with gpu_errors("drawing the spectrogram"):
        encoder = device.create_command_encoder()
        if compute:
            picture = picture_texture(device, size)
            compute_pass = encoder.begin_compute_pass()
            for renderer, clip in parts:
                renderer.dispatch(compute_pass, picture, clip)
            compute_pass.end()
        covered = any(tuple(clip) == (0, 0, *size) for _, clip in parts)
        if not compute or not (keep or covered):  # a clear only where no copy covers the target
            render_pass = encoder.begin_render_pass(
                color_attachments=[
                    {
                        "view": target,
                        "load_op": "load" if keep else "clear",
                        "store_op": "store",
                        "clear_value": (0.0, 0.0, 0.0, 1.0),
                    }
                ]
            )
            if not compute:
                for renderer, clip in parts:
                    render_pass.set_scissor_rect(*clip)
                    renderer.encode(render_pass)
            render_pass.end()
        if compute:
            for _, (x, y, width, height) in parts:
                encoder.copy_texture_to_texture(
                    {"texture": picture, "origin": (x, y, 0)},
                    {"texture": texture, "origin": (x, y, 0)},
                    (width, height, 1),
                )
        device.queue.submit([encoder.finish()])
