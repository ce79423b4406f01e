"""A stroke in progress never waits for the device: no value of a tensor is read on the host.

On a GPU every such read (``.item()``, ``bool(tensor)``, ``.cpu()``, ``nonzero()``, a boolean mask
index, a blocking copy) stalls the host until all queued work is done, so a pointer event would cost
the device's whole queue instead of its launches. On CUDA this is checked by torch's own sync
debugger; on the CPU every operation of the stroke passes a dispatch mode that refuses the ones that
read values (they are the same on any device), and the methods that hand tensors to the host.
"""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from torch.utils._python_dispatch import TorchDispatchMode

from spectropaint.brushes import blend_compiled
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import clone_compiled, warp_compiled
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent

PARAMS = {"clone": {"offset_frames": -30, "offset_bins": 5}}
PHYSICAL_PARAMS = {"clone": {"offset_seconds": -0.3, "offset_pitch": 2.0}}
READS = {
    "aten::_local_scalar_dense",  # .item(), bool(), float(), int()
    "aten::is_nonzero",
    "aten::item",
    "aten::nonzero",
    "aten::nonzero_static",
    "aten::masked_select",
    "aten::_unique2",
    "aten::unique_consecutive",
    "aten::unique_dim",
    "aten::equal",
    "aten::allclose",
}


class HostReads(TorchDispatchMode):
    """Refuses every operation whose result needs the tensor's values on the host."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name
        if name in READS:
            raise AssertionError(f"{name} reads a tensor's values on the host during a stroke")
        if name.startswith("aten::index") and any(
            isinstance(index, torch.Tensor) and index.dtype == torch.bool
            for index in (args[1] if len(args) > 1 and isinstance(args[1], list | tuple) else ())
        ):
            raise AssertionError(f"{name} with a boolean mask reads the mask on the host")
        return func(*args, **(kwargs or {}))


def refused(name):
    def method(*args, **kwargs):
        raise AssertionError(f"Tensor.{name}() hands a tensor to the host during a stroke")

    return method


def stroke_events():
    return [InputEvent(i / 60, 20.0 + 7.0 * i, 40.0 + 9.0 * np.sin(i / 3), 0.7) for i in range(10)]


def physical_events():
    return [
        InputEvent(i / 60, 0.3 + 0.04 * i, 800.0 + 200.0 * np.sin(i / 3), 0.7) for i in range(10)
    ]


@pytest.mark.parametrize("plane", ["cells", "seconds"])
@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_a_stroke_reads_no_tensor_on_the_host(monkeypatch, brush, plane):
    document = small_document()
    if plane == "cells":
        settings, params, events = (
            BrushSettings(radius_frames=6, radius_bins=5),
            PARAMS,
            stroke_events(),
        )
    else:
        settings = BrushSettings(radius_seconds=0.03, radius_semitones=1.5)
        params, events = PHYSICAL_PARAMS, physical_events()
    history = History(document)
    before = torch.stack((document.blocks[0].magnitude, document.blocks[0].phase)).clone()
    # the CPU's compiled kernels view CPU tensors as arrays (no copy, and no device to wait for);
    # the path this guards is the one the GPU takes
    monkeypatch.setattr(warp_compiled, "available", lambda device: False)
    monkeypatch.setattr(clone_compiled, "available", lambda device: False)
    monkeypatch.setattr(blend_compiled, "available", lambda device: False)
    stroke = StrokeSession(document, brush, settings, params=params.get(brush), history=history)
    for name in ("tolist", "numpy", "cpu", "__array__"):
        monkeypatch.setattr(torch.Tensor, name, refused(name))
    with HostReads():
        for event in events:
            stroke.add_events((event,))
    monkeypatch.undo()
    stroke.end()
    after = torch.stack((document.blocks[0].magnitude, document.blocks[0].phase))
    assert not torch.equal(after, before)
    history.undo()
    assert torch.equal(
        torch.stack((document.blocks[0].magnitude, document.blocks[0].phase)), before
    )


def test_the_check_catches_a_host_read():
    x = torch.ones(4)
    with HostReads(), pytest.raises(AssertionError, match="_local_scalar_dense"):
        bool(x.sum() > 0)
    with HostReads(), pytest.raises(AssertionError, match="nonzero|boolean"):
        x[x > 0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_a_cuda_stroke_never_synchronises(brush):
    """torch's sync debugger raises on any synchronising call while the events are painted, from
    a stroke's first (after a first stroke has loaded the kernels); the stroke then equals the
    same stroke on the CPU and undoes exactly."""
    settings = BrushSettings(radius_frames=6, radius_bins=5)
    results = {}
    for device in ("cpu", "cuda"):
        document = small_document(device=device)
        history = History(document)
        before = torch.stack((document.blocks[0].magnitude, document.blocks[0].phase)).cpu()
        first = StrokeSession(document, brush, settings, params=PARAMS.get(brush), history=history)
        first.add_events(stroke_events()[:1])  # first use: kernels load, caches fill
        first.end()
        history.undo()
        stroke = StrokeSession(document, brush, settings, params=PARAMS.get(brush), history=history)
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
        try:
            for event in stroke_events():  # (from the first: the stroke's state moves there)
                stroke.add_events((event,))
        finally:
            torch.cuda.set_sync_debug_mode("default")
        stroke.end()
        block = document.blocks[0]
        results[device] = torch.stack((block.magnitude, block.phase)).cpu()
        history.undo()
        assert torch.equal(torch.stack((block.magnitude, block.phase)).cpu(), before)
    cpu, cuda = results["cpu"], results["cuda"]
    assert float((cpu[0] - cuda[0]).abs().max()) <= 1e-4 * float(cpu[0].abs().max())
