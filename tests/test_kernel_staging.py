"""Host arrays staged for kernels in a pinned ring (:mod:`spectropaint.brushes.kernels.staging`):
each arrives whole in its own type and shape at a 16-byte boundary, and no part of the ring is
written again before the host has waited for an event recorded after every kernel that could
read it was launched. The ring's logic is checked on the CPU with events that log what they are
asked; on CUDA a stroke of every brush with its arrays staged equals the same stroke uploaded."""

import itertools

import numpy as np
import pytest
import torch
from brush_fixtures import painted_values, small_document

from spectropaint.brushes import dab
from spectropaint.brushes.kernels import staging, warp_fused
from spectropaint.brushes.registry import BRUSHES
from spectropaint.transforms.torch_device import to_device_together


class Clock:
    """Counts the calls that stage (each standing for a group: its kernels launched before the
    next call), and logs which events were recorded and waited for at which call."""

    def __init__(self):
        self.now = 0
        self.waits: list[tuple[int, int]] = []  # (call that waited, call the event was recorded at)

    def event(self):
        clock = self

        class Event:
            recorded = None

            def record(self):
                self.recorded = clock.now

            def synchronize(self):
                clock.waits.append((clock.now, self.recorded))

        return Event()


def small_ring(monkeypatch, clock, ring_bytes=1024):
    monkeypatch.setattr(staging, "RING_BYTES", ring_bytes)
    monkeypatch.setattr(staging, "QUARTER", ring_bytes // 4)
    return staging._Ring(torch.device("cpu"), pinned=False, event=clock.event)


def stage(ring, parts):
    sizes = [-(-part.nbytes // staging.ALIGNMENT) * staging.ALIGNMENT for part in parts]
    return ring.stage(parts, sizes, sum(sizes))


def test_each_array_arrives_whole_in_its_type_and_shape_on_a_boundary(monkeypatch):
    ring = small_ring(monkeypatch, Clock())
    rng = np.random.default_rng(0)
    parts = [
        rng.random((3, 5), dtype=np.float32),
        rng.random(7) > 0.5,  # 7 bytes
        rng.integers(-9, 9, size=(2, 3), dtype=np.int32),
        rng.normal(size=(2, 2)),
        rng.integers(-(2**40), 2**40, size=3),
    ]
    views = stage(ring, parts)
    base = ring.buffer.data_ptr()
    for part, view in zip(parts, views, strict=True):
        assert view.dtype == torch.from_numpy(part).dtype and tuple(view.shape) == part.shape
        np.testing.assert_array_equal(view.numpy(), part)
        assert (view.data_ptr() - base) % staging.ALIGNMENT == 0
    ends = sorted((v.data_ptr(), v.data_ptr() + v.numel() * v.element_size()) for v in views)
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(ends))  # none overlaps


def test_no_quarter_is_written_again_before_its_readers_are_waited_for(monkeypatch):
    """Sixty groups of 48 to 208 bytes, some seven laps of a 1024-byte ring: each time a call
    writes a quarter again that the call before it did not write (begins it again), it has waited
    for an event recorded at a later call than every call that wrote that quarter before (whose
    kernels were launched before that later call)."""
    clock = Clock()
    ring = small_ring(monkeypatch, clock)
    rng = np.random.default_rng(1)
    writers = {quarter: [] for quarter in range(4)}  # the calls that wrote each quarter
    begun_again = 0
    for call in range(1, 61):
        clock.now = call
        part = rng.random(int(rng.integers(12, 52)), dtype=np.float32)
        (view,) = stage(ring, [part])
        np.testing.assert_array_equal(view.numpy(), part)
        first = view.data_ptr() - ring.buffer.data_ptr()
        last = (first + part.nbytes - 1) // staging.QUARTER
        waits = [recorded for when, recorded in clock.waits if when == call]
        for quarter in range(first // staging.QUARTER, last + 1):
            earlier = writers[quarter]
            if earlier and earlier[-1] != call - 1:
                assert any(recorded > earlier[-1] for recorded in waits), (call, quarter)
                begun_again += 1
            earlier.append(call)
    assert begun_again >= 20


def test_on_the_cpu_the_arrays_are_shared_and_nothing_is_staged():
    parts = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(4, dtype=np.int32)]
    for got, want in zip(staging.for_kernels(parts, torch.device("cpu")),
                         to_device_together(parts, torch.device("cpu")), strict=True):  # fmt: skip
        assert torch.equal(got, want) and got.data_ptr() == want.data_ptr()
    assert staging.on_device(None, torch.device("cpu")) is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_staged_view_is_copied_to_the_device_for_torch():
    (view,) = staging.for_kernels([np.arange(5, dtype=np.float32)], torch.device("cuda"))
    assert view.device.type == "cpu" and view.is_pinned()
    copied = staging.on_device(view, torch.device("cuda"))
    assert copied.device.type == "cuda"
    assert torch.equal(copied.cpu(), torch.arange(5, dtype=torch.float32))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_a_cuda_stroke_staged_equals_it_uploaded(monkeypatch, brush):
    """Every brush's stroke on CUDA with its kernels reading the host's arrays in the ring, and
    with them uploaded instead: the same values bit for bit, and the ring was used."""
    staged = []

    def counting(parts, device):
        staged.append(len(parts))
        return for_kernels(parts, device)

    for_kernels = staging.for_kernels
    monkeypatch.setattr(staging, "for_kernels", counting)
    document = small_document(device="cuda")
    with_ring = painted_values(document, brush, {}).cpu()
    assert staged, "no array was staged"
    monkeypatch.setattr(staging, "for_kernels", to_device_together)
    uploaded = painted_values(document, brush, {}).cpu()
    assert torch.equal(with_ring, uploaded)
    assert dab.staging is staging and warp_fused.staging is staging
