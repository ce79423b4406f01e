"""Texture writes through wgpu-native's call with reused structs (:mod:`spectropaint.gpu.
texture_writes`) against wgpu-py's own ``write_texture``: the same texels, read back, for writes
at offsets with a row pitch into layers of an array texture; and wgpu-py's method where this wgpu
lacks what the direct call uses."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from spectropaint.gpu import texture_writes
from spectropaint.gpu.adapter import shared_device

WIDTH, HEIGHT, LAYERS = 40, 24, 3
WRITES = [  # (origin, offset in cells, row pitch in cells, rows a layer, size)
    ((0, 0, 0), 0, 50, 24, (40, 24, 1)),
    ((5, 3, 1), 117, 50, 7, (31, 7, 1)),
    ((39, 23, 2), 999, 50, 1, (1, 1, 1)),
    ((10, 0, 1), 60, 33, 12, (20, 12, 2)),  # two layers, one after the other in the buffer
]


def texture(device: wgpu.GPUDevice) -> wgpu.GPUTexture:
    return device.create_texture(
        size=(WIDTH, HEIGHT, LAYERS),
        format="r32float",
        usage=wgpu.TextureUsage.COPY_DST | wgpu.TextureUsage.COPY_SRC,
    )


def texels(device: wgpu.GPUDevice, into: wgpu.GPUTexture) -> np.ndarray:
    data = device.queue.read_texture(
        {"texture": into},
        {"bytes_per_row": 4 * WIDTH, "rows_per_image": HEIGHT},
        (WIDTH, HEIGHT, LAYERS),
    )
    return np.frombuffer(data, np.float32).reshape(LAYERS, HEIGHT, WIDTH).copy()


def written(device: wgpu.GPUDevice, write) -> np.ndarray:
    """The texels after every write of :data:`WRITES` made by ``write`` (with its arguments)."""
    buffer = np.random.default_rng(5).uniform(-1, 1, 2000).astype(np.float32)
    target = texture(device)
    for origin, offset, pitch, rows, size in WRITES:
        write(device.queue, target, origin, buffer, 4 * offset, 4 * pitch, rows, size)
    return texels(device, target)


def by_wgpu_py(queue, into, origin, buffer, offset, bytes_per_row, rows_per_image, size) -> None:
    queue.write_texture(
        {"texture": into, "origin": origin},
        buffer,
        {"offset": offset, "bytes_per_row": bytes_per_row, "rows_per_image": rows_per_image},
        size,
    )


def test_direct_writes_put_the_texels_wgpu_py_s_writes_put():
    device = shared_device()
    assert texture_writes._native() is not None  # (the wgpu the project pins has what it uses)
    got = written(device, texture_writes.write_texture)
    want = written(device, by_wgpu_py)
    assert np.count_nonzero(want) > 1500  # the writes wrote
    assert np.array_equal(got, want)


def test_without_the_native_call_it_is_wgpu_py_s_method(monkeypatch):
    device = shared_device()
    monkeypatch.setattr(texture_writes, "_native", lambda: None)
    calls = []
    real = type(device.queue).write_texture
    monkeypatch.setattr(
        type(device.queue),
        "write_texture",
        lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs),
    )
    got = written(device, texture_writes.write_texture)
    assert len(calls) == len(WRITES)
    monkeypatch.undo()
    assert np.array_equal(got, written(device, by_wgpu_py))


def test_a_write_past_the_texture_raises_as_wgpu_py_s_does():
    """Errors still come back as wgpu-py's (through its checked library calls)."""
    device = shared_device()
    buffer = np.zeros(100, np.float32)
    with pytest.raises(wgpu.GPUError):
        texture_writes.write_texture(
            device.queue, texture(device), (30, 0, 0), buffer, 0, 4 * 20, 2, (20, 2, 1)
        )
