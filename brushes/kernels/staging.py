"""Host arrays that a GPU kernel reads where they lie, in pinned host memory, instead of uploading
them first.

A stamping brush's group hands its Triton kernels a few small host arrays (its dabs'
distances, where each dab lies) and warp's fused kernel its dabs' windows and maps. An upload of
them
(:func:`~spectropaint.transforms.torch_device.to_device_together`) costs the host a pinned
allocation, a copy's launch, a device allocation and a view an array: 73.5 us for three on the
H200's host (measured in a loop there). On CUDA every pinned page is mapped into the device's
address space, so a kernel can take a view of pinned memory as its argument and read it across
the bus (a few kilobytes a group; the kernel took as long as with the array on the device, 34 us
with its launch and a synchronisation): only numpy's writes and the views are left, 23 us.

The arrays go into a ring of pinned memory kept per thread. Before a quarter of the ring is
written again, the host waits for an event recorded on the stream once a further quarter had been
begun, which every kernel that read the quarter was launched before: a staged array must be read
by kernels launched before a quarter of the ring more is staged (the dab path launches a group's
kernels before it stages the next group's arrays). Nothing waits in practice: a quarter holds
hundreds of groups, which the device has long finished.

Torch's operations do not take such a view with the device's tensors (it is a CPU tensor to
torch): where a kernel's path is not taken after all, :func:`on_device` copies it there.
"""

from __future__ import annotations

import threading

import numpy as np
import torch

from spectropaint.transforms.torch_device import TORCH_TYPES, contiguous_strides, to_device_together

RING_BYTES = 1 << 22
"""Pinned bytes of each thread's ring."""
QUARTER = RING_BYTES // 4
MOST_BYTES = QUARTER // 4
"""The most bytes one call stages (more are uploaded)."""
ALIGNMENT = 16
"""Each array begins at a multiple of this many bytes: Triton specialises a pointer argument on
16-byte alignment, so a staged array takes the variant compiled for the device's tensors."""

_local = threading.local()


def for_kernels(parts: list[np.ndarray], device: torch.device) -> list[torch.Tensor]:
    """Host arrays (of :data:`~spectropaint.transforms.torch_device.TORCH_TYPES`) for kernels on
    ``device`` that read them through their pointers (Triton's), each in its own shape and type:
    on CUDA, views of this thread's pinned ring (see the module's docstring); elsewhere, or for
    more than :data:`MOST_BYTES`, as :func:`~spectropaint.transforms.torch_device.
    to_device_together` gives them."""
    sizes = [-(-part.nbytes // ALIGNMENT) * ALIGNMENT for part in parts]
    total = sum(sizes)
    if device.type != "cuda" or total > MOST_BYTES:
        return to_device_together(parts, device)
    rings = _local.__dict__.setdefault("rings", {})
    ring = rings.get(device) or rings.setdefault(device, _Ring(device))
    return ring.stage(parts, sizes, total)


def on_device(tensor: torch.Tensor | None, device: torch.device) -> torch.Tensor | None:
    """``tensor`` as torch's operations on ``device`` take it: a staged view (:func:`for_kernels`)
    copied there, without waiting; any other as it is."""
    if tensor is None or tensor.device.type == device.type:
        return tensor
    return tensor.to(device, non_blocking=True)


class _Ring:
    """A thread's pinned ring for one CUDA device: arrays placed one after another, wrapping to the
    start; an event per quarter (``event``'s: CUDA's), recorded on the current stream as it is
    begun. (``pinned`` and ``event`` are the tests' to change, on a machine without CUDA.)"""

    def __init__(self, device: torch.device, *, pinned: bool = True, event=None) -> None:
        self.device = device
        self.event = event or torch.cuda.Event
        self.buffer = torch.empty(RING_BYTES, dtype=torch.uint8, pin_memory=pinned)
        self.host = self.buffer.numpy()
        self.typed = {kind: self.buffer.view(torch_type) for kind, torch_type in
                      TORCH_TYPES.items()}  # fmt: skip
        self.cursor = 0
        self.quarter = -1  # the quarter the last staged byte lies in (none yet)
        self.begun: list = [None] * 4

    def stage(self, parts: list[np.ndarray], sizes: list[int], total: int) -> list[torch.Tensor]:
        start = self.cursor
        if start + total > RING_BYTES:
            start, self.quarter = 0, -1
        last = (start + total - 1) // QUARTER
        for quarter in range(max(self.quarter + 1, start // QUARTER), last + 1):
            self._begin(quarter)
        self.quarter, self.cursor = last, start + total
        views = []
        for part, size in zip(parts, sizes, strict=True):
            data = np.ascontiguousarray(part)
            self.host[start : start + data.nbytes] = data.view(np.uint8).ravel()
            views.append(self.typed[data.dtype].as_strided(
                data.shape, contiguous_strides(data.shape), start // data.itemsize))  # fmt: skip
            start += size
        return views

    def _begin(self, quarter: int) -> None:
        """Before ``quarter`` is written again: wait for the kernels that read it (launched before
        the quarter two on was begun), then mark its beginning on the stream."""
        waited = self.begun[(quarter + 2) % 4]
        if waited is not None:
            waited.synchronize()
        event = self.begun[quarter] or self.event()
        event.record()  # (the current stream: Triton's kernels are launched on it)
        self.begun[quarter] = event
