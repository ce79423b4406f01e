"""A stroke's original values gathered in one launch (:mod:`spectropaint.brushes.kernels.
originals_fused`) against the tiles pasted one by one (:meth:`~spectropaint.brushes.history.
OpenStep.original` with the kernel off), bit for bit: boxes meeting one to four kept tiles, fresh
tiles, the grid's edges, one channel of two, and whole strokes.

On a machine without CUDA the kernel runs through Triton's interpreter on CPU tensors; with CUDA,
compiled, on the GPU."""

import pytest
import torch
from brush_fixtures import GPU, painted_values, small_document, triton_fixture

from spectropaint.brushes.history import OpenStep
from spectropaint.brushes.kernels import blur_fused, originals_fused
from spectropaint.transforms.regions import Region

fused = triton_fixture(originals_fused)


def pasted(monkeypatch, step: OpenStep, box: Region, fresh=frozenset()) -> torch.Tensor:
    """The step's original values of ``box`` with the kernel off: each kept tile pasted."""
    with monkeypatch.context() as off:
        off.setattr(originals_fused, "available", lambda device: False)
        return step.original(box, fresh)


@pytest.mark.parametrize("channels", [(0, 1), (1,)], ids=["stereo", "second-channel"])
def test_a_box_s_originals_are_the_pasted_tiles_bit_for_bit(fused, monkeypatch, channels):
    document = small_document(device=GPU)  # 129 bins x 251 frames
    block = document.blocks[0]
    step = OpenStep(document, channels, tile=32)
    generator = torch.Generator().manual_seed(3)
    # kept tiles: a box across four tiles, one at the grid's far corner (tiles cut to the grid)
    for box in [Region(20, 70, 40, 90, channels), Region(100, 129, 230, 251, channels)]:
        step.record(box)
        document.write(box, *(torch.rand((2, len(channels), *box.shape), generator=generator)
                              .to(GPU).unbind(0)))  # fmt: skip
    gathered = []
    real = originals_fused.gather
    monkeypatch.setattr(originals_fused, "gather",
                        lambda *args: gathered.append(1) or real(*args))  # fmt: skip
    cases = [
        (Region(40, 50, 70, 80, channels), frozenset()),  # inside one tile
        (Region(30, 50, 50, 80, channels), frozenset()),  # across four
        (Region(10, 40, 30, 70, channels), frozenset()),  # kept tiles and cells never recorded
        (Region(110, 129, 240, 251, channels), frozenset()),  # the grid's corner
    ]
    fresh_box = Region(60, 75, 85, 100, channels)  # meets kept tiles and a new one
    cases.append((fresh_box, step.record(fresh_box)))
    for box, fresh in cases:
        got = step.original(box, fresh)
        want = pasted(monkeypatch, step, box, fresh)
        assert got.shape == (2, len(channels), *box.shape)
        assert torch.equal(got, want)
    assert len(gathered) == len(cases)
    # the kept values differ from the document's now: the tiles were read, not the document
    inside = cases[1][0]
    now = torch.stack(document.read(inside))
    assert not torch.equal(step.original(inside), now)
    assert block.magnitude.device.type == GPU.type  # (the kernel read the device's tensors)


def test_a_box_meeting_more_tiles_than_one_launch_reads_is_pasted(fused, monkeypatch):
    document = small_document(device=GPU)
    step = OpenStep(document, (0, 1), tile=32)
    wide = Region(0, 64, 0, 128, (0, 1))  # 2 x 4 tiles
    step.record(wide)
    document.write(wide, torch.zeros((2, 64, 128), device=GPU), torch.zeros((2, 64, 128),
                                                                           device=GPU))  # fmt: skip
    monkeypatch.setattr(originals_fused, "gather", None)  # (a launch would fail)
    box = Region(10, 60, 10, 120, (0, 1))
    assert not torch.equal(step.original(box), torch.zeros((2, 2, 50, 110), device=GPU))
    assert torch.equal(step.original(box), pasted(monkeypatch, step, box))


@pytest.mark.parametrize(("brush", "params"), [("gain", {"gain_db": -12.0}),
                                               ("blur", {"sigma": 0.5})])  # fmt: skip
def test_a_stroke_through_the_gathered_originals_equals_the_pasted_one(fused, monkeypatch, brush,
                                                                       params):  # fmt: skip
    """The blur reads its region with the Gaussian's margin (through its FFTs here: its own
    kernel takes minutes through the interpreter)."""
    monkeypatch.setattr(blur_fused, "available", lambda device: False)
    document = small_document(device=GPU)
    start = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    gathered = []
    real = originals_fused.gather
    monkeypatch.setattr(originals_fused, "gather",
                        lambda *args: gathered.append(1) or real(*args))  # fmt: skip
    got = painted_values(document, brush, params, radii=(6, 5), start=(60.0, 40.0),
                         step=(9.1, 2.3))  # fmt: skip
    assert len(gathered) >= 12  # each group's originals were gathered
    with monkeypatch.context() as off:
        off.setattr(originals_fused, "available", lambda device: False)
        want = painted_values(document, brush, params, radii=(6, 5), start=(60.0, 40.0),
                              step=(9.1, 2.3))  # fmt: skip
    assert not torch.equal(want, start)  # the stroke painted
    assert torch.equal(got, want)
