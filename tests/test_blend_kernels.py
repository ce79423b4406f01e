"""The complex blend compiled for the CPU (:mod:`spectropaint.brushes.blend_compiled`) against
torch's (:func:`spectropaint.brushes.blend.blend` with compiled code off): a group's box and a
family's two stacked, each cell within float rounding, cells of weight 0 exactly as they were."""

import math

import pytest
import torch

from spectropaint.brushes import blend_compiled
from spectropaint.brushes.blend import blend
from spectropaint.brushes.kernels import compiled_math


def torch_blend(monkeypatch, *args):
    with monkeypatch.context() as off:
        off.setenv(compiled_math.COMPILED_ENV, "0")
        return blend(*args, keeps_phase=False)


@pytest.mark.parametrize("paired", [False, True])
def test_the_compiled_blend_equals_torch_s(monkeypatch, paired):
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    assert blend_compiled.available(torch.device("cpu"))
    generator = torch.Generator().manual_seed(3)
    lead = (2, 2) if paired else (2,)  # (blocks,) channels
    region = torch.rand((2, *lead, 40, 70), generator=generator)
    region[1] = region[1] * 2 * math.pi - math.pi
    base = region[..., 3:-3]  # a view of a wider region, as the dab path gives it
    shape = base.shape[1:]
    magnitude = torch.rand(shape, generator=generator)
    phase = torch.rand(shape, generator=generator) * 2 * math.pi - math.pi
    weight = torch.rand(((2, 1) if paired else ()) + shape[-2:], generator=generator)
    weight[weight < 0.3] = 0.0
    got = blend(base, magnitude, phase, weight, keeps_phase=False)
    want = torch_blend(monkeypatch, base, magnitude, phase, weight)
    untouched = (weight == 0).expand(shape)
    for mine, theirs, was in zip(got, want, base, strict=True):
        assert mine.shape == theirs.shape == shape
        assert torch.equal(mine[untouched], was[untouched])  # weight 0: exactly as it was
    assert (got[0] - want[0]).abs().max() < 5e-7
    apart = torch.remainder(got[1] - want[1] + math.pi, 2 * math.pi) - math.pi
    assert apart.abs().max() < 2e-5
    assert float((got[0] - base[0]).abs()[~untouched].mean()) > 0.05  # the weights do move it


def test_it_is_for_the_cpu_and_turned_off_by_its_variable(monkeypatch):
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    assert not blend_compiled.available(torch.device("meta"))
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    assert not blend_compiled.available(torch.device("cpu"))
    base = torch.rand(2, 1, 4, 4)
    assert torch.isfinite(
        blend(base, base[0], base[1], torch.ones(4, 4), keeps_phase=False)[0]
    ).all()
