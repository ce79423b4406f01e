"""A stroke's original values gathered in one launch (:mod:`spectropaint.brushes.kernels.
originals_fused`) against the tiles pasted one by one (:meth:`~spectropaint.brushes.history.
OpenStep.original` with the kernel off), bit for bit: boxes meeting one to eight kept tiles, fresh
tiles, the grid's edges, one channel of two, and whole strokes.

On a machine without CUDA the kernel runs through Triton's interpreter on CPU tensors; with CUDA,
compiled, on the GPU."""

import math

import pytest
import torch
from brush_fixtures import GPU, painted_values, small_document, triton_fixture, unscaled

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import OpenStep
from spectropaint.brushes.kernels import blur_fused, originals_fused
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
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


def test_a_box_meeting_many_kept_tiles_is_gathered_in_one_launch(fused, monkeypatch):
    """Each cell finds its tile in the step's table, whatever the number of tiles a box meets."""
    document = small_document(device=GPU)
    step = OpenStep(document, (0, 1), tile=32)
    wide = Region(0, 64, 0, 128, (0, 1))  # 2 x 4 tiles
    step.record(wide)
    document.write(wide, torch.zeros((2, 64, 128), device=GPU), torch.zeros((2, 64, 128),
                                                                           device=GPU))  # fmt: skip
    gathered = counted(monkeypatch, "gather")
    box = Region(10, 60, 10, 120, (0, 1))  # meets all eight
    got = step.original(box)
    assert len(gathered) == 1
    assert not torch.equal(got, torch.zeros((2, 2, 50, 110), device=GPU))
    assert torch.equal(got, pasted(monkeypatch, step, box))


@pytest.mark.parametrize(
    ("brush", "params"),
    [(unscaled("gain"), {"gain_db": -12.0}), ("blur", {"sigma": 0.5})],
    ids=["gain", "blur"],
)
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


def counted(monkeypatch, name: str) -> list:
    """Calls of ``originals_fused``'s ``name``, each still made."""
    calls = []
    real = getattr(originals_fused, name)
    monkeypatch.setattr(originals_fused, name, lambda *args: calls.append(1) or real(*args))
    return calls


@pytest.mark.parametrize(
    ("brush", "params"),
    [("gain", {"gain_db": -12.0}), ("gain", {"gain_db": 9.5}), ("erase", {})],
    ids=["cut", "boost", "erase"],
)
def test_a_scaling_brush_s_groups_are_one_launch_equal_to_its_kernel_and_blend(
    fused, monkeypatch, brush, params
):
    """Gain and erase read, scale, blend and write each group in one launch: the document equals,
    bit for bit, what the gathered originals, the kernel's product and the blend give; the stroke
    crosses cells it painted before (read from kept tiles) and cells it meets first (read from
    the document), and leaves every phase as it was."""
    document = small_document(device=GPU)
    start = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    stroke = {"radii": (6, 5), "events": 16, "start": (60.0, 40.0), "step": (4.1, 1.3)}
    scaled, gathered = counted(monkeypatch, "scale_into"), counted(monkeypatch, "gather")
    got = painted_values(document, brush, params, **stroke)
    assert len(scaled) >= 16 and not gathered  # every group in its one launch
    want = painted_values(document, unscaled(brush), params, **stroke)
    assert len(gathered) >= 16 and len(scaled) == len(gathered)  # (the same groups)
    changed = got[0] != start[0]
    assert changed.sum() > 500  # the stroke painted
    assert torch.equal(got, want)
    assert torch.equal(got[1], start[1])


def test_a_wide_brush_s_groups_meeting_many_kept_tiles_are_one_launch_each(fused, monkeypatch):
    """A wide gain brush's groups meet many kept tiles: each still goes through its one launch,
    and the stroke equals the same stroke through the gathered originals, the kernel and the
    blend."""
    document = small_document(device=GPU)
    stroke = {"radii": (40, 30), "events": 4, "start": (80.0, 60.0), "step": (6.0, 2.0)}
    start = document.blocks[0].magnitude.clone()
    scaled, gathered = counted(monkeypatch, "scale_into"), counted(monkeypatch, "gather")
    got = painted_values(document, "gain", {"gain_db": -6.0}, **stroke)
    want = painted_values(document, unscaled("gain"), {"gain_db": -6.0}, **stroke)
    assert len(scaled) >= 2 and len(scaled) == len(gathered)
    assert not torch.equal(got[0], start)
    assert torch.equal(got, want)


def test_a_scaling_brush_paints_the_nsgt_s_paired_blocks_in_one_launch_each(fused, monkeypatch):
    """On the NSGT a gain stroke in seconds and semitones paints each family's two blocks
    together (:func:`~spectropaint.brushes.dab.apply_dabs`): one launch a block. The kernel and
    torch's blend of the pair give the same values to float rounding (torch's ``lerp`` may fuse
    its multiply-add, the launch does not): every phase and every cell the stroke did not touch
    bit for bit, the magnitudes it changed within -120 dB of the change."""
    from test_nsgt_document import RATE as NSGT_RATE
    from test_nsgt_document import SETTINGS as NSGT_SETTINGS
    from test_nsgt_document import tones

    def painted(brush) -> list[torch.Tensor]:
        document = Document.from_samples(tones(2.0), NSGT_RATE, settings=NSGT_SETTINGS, device=GPU)
        settings = BrushSettings(radius_seconds=0.06, radius_semitones=2.0, hardness=0.5)
        stroke = StrokeSession(document, brush, settings, params={"gain_db": -9.0})
        for i in range(10):
            stroke.add_events([InputEvent(i / 60, 0.5 + 0.08 * i, 300.0 * 1.05**i, 0.8)])
        stroke.end()
        return [torch.stack([block.magnitude, block.phase]) for block in document.blocks]

    scaled = counted(monkeypatch, "scale_into")
    got = painted("gain")
    assert len(scaled) >= 20  # (ten events, on pairs of blocks)
    want = painted(unscaled("gain"))
    unpainted = Document.from_samples(tones(2.0), NSGT_RATE, settings=NSGT_SETTINGS, device=GPU)
    starts = [block.magnitude for block in unpainted.blocks]
    changed = [(w[0] - start).abs() for w, start in zip(want, starts, strict=True)]
    assert sum(int((change > 0).sum()) for change in changed) > 200  # the stroke painted
    for got_block, want_block, change in zip(got, want, changed, strict=True):
        assert torch.equal(got_block[1], want_block[1])
        assert torch.equal(got_block[0][change == 0], want_block[0][change == 0])
        error = float((got_block[0] - want_block[0]).abs().max())
        assert 20 * math.log10(error / max(float(change.max()), 1e-30) + 1e-300) < -120
