"""The complex blend's kernels against torch's (:func:`spectropaint.brushes.blend.blend` with
compiled code off): compiled for the CPU (:mod:`spectropaint.brushes.blend_compiled`) and in one
GPU launch (:mod:`spectropaint.brushes.blend_fused`), on a group's box and a family's two stacked,
read through the strides of views, each cell within float rounding, cells of weight 0 exactly as
they were.

On a machine without CUDA the Triton kernel runs through Triton's interpreter on CPU tensors; with
CUDA, compiled, on the GPU."""

import math
import os

import pytest
import torch
from brush_fixtures import triton_kernel_on

if not torch.cuda.is_available():  # before Triton is imported: its interpreter, on CPU tensors
    os.environ.setdefault("TRITON_INTERPRET", "1")

from spectropaint.brushes import blend_compiled, blend_fused
from spectropaint.brushes.blend import blend
from spectropaint.brushes.kernels import compiled_math, triton_math

GPU = torch.device("cuda" if torch.cuda.is_available() else "cpu")
"""Where the Triton kernel runs (interpreted on the CPU)."""


@pytest.fixture
def fused(monkeypatch):
    """The kernel on for :data:`GPU` (interpreted on the CPU), compiled afresh."""
    with triton_kernel_on(monkeypatch, blend_fused, GPU):
        yield


def torch_blend(monkeypatch, *args):
    with monkeypatch.context() as off:
        off.setenv(compiled_math.COMPILED_ENV, "0")
        return blend(*args, keeps_phase=False)


def blend_case(paired: bool, device: torch.device, seed: int):
    """``base`` (a view of a wider region, as the dab path gives it), ``magnitude`` (a view too,
    as the clone's copied magnitudes are), ``phase`` and ``weight`` (0 in about a third of the
    cells; each block's own when ``paired``)."""
    generator = torch.Generator().manual_seed(seed)
    lead = (2, 2) if paired else (2,)  # (blocks,) channels
    region = torch.rand((2, *lead, 40, 70), generator=generator)
    region[1] = region[1] * 2 * math.pi - math.pi
    base = region.to(device)[..., 2:-3, 3:-4]
    shape = base.shape[1:]
    wide = torch.rand((*shape[:-1], shape[-1] + 5), generator=generator)
    phase = torch.rand(shape, generator=generator) * 2 * math.pi - math.pi
    weight = torch.rand(((2, 1) if paired else ()) + shape[-2:], generator=generator)
    weight[weight < 0.3] = 0.0
    return base, wide.to(device)[..., 5:], phase.to(device), weight.to(device)


def check_blend(got, want, base, weight, *, phase_tolerance: float) -> None:
    shape = base.shape[1:]
    untouched = (weight == 0).expand(shape)
    for mine, theirs, was in zip(got, want, base, strict=True):
        assert mine.shape == theirs.shape == shape
        assert torch.equal(mine[untouched], was[untouched])  # weight 0: exactly as it was
    assert (got[0] - want[0]).abs().max() < 5e-7
    apart = torch.remainder(got[1] - want[1] + math.pi, 2 * math.pi) - math.pi
    assert apart.abs().max() < phase_tolerance
    assert float((got[0] - base[0]).abs()[~untouched].mean()) > 0.05  # the weights do move it
    if weight.dim() > 2:  # each block's own weight: the second's differ from the first's
        assert not torch.equal(got[0][0], got[0][1])


@pytest.mark.parametrize("paired", [False, True])
def test_the_compiled_blend_equals_torch_s(monkeypatch, paired):
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    assert blend_compiled.available(torch.device("cpu"))
    base, magnitude, phase, weight = blend_case(paired, torch.device("cpu"), seed=3)
    got = blend(base, magnitude, phase, weight, keeps_phase=False)
    want = torch_blend(monkeypatch, base, magnitude, phase, weight)
    check_blend(got, want, base, weight, phase_tolerance=2e-5)


@pytest.mark.parametrize("paired", [False, True])
def test_the_fused_blend_equals_torch_s(fused, monkeypatch, paired):
    assert blend_fused.available(GPU)
    base, magnitude, phase, weight = blend_case(paired, GPU, seed=5)
    got = blend_fused.crossfade(base, magnitude, phase, weight)
    want = torch_blend(monkeypatch, base, magnitude, phase, weight)
    check_blend(got, want, base, weight, phase_tolerance=2e-6)


def test_the_compiled_blend_is_for_the_cpu_and_turned_off_by_its_variable(monkeypatch):
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    assert not blend_compiled.available(torch.device("meta"))
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    assert not blend_compiled.available(torch.device("cpu"))
    base = torch.rand(2, 1, 4, 4)
    assert torch.isfinite(
        blend(base, base[0], base[1], torch.ones(4, 4), keeps_phase=False)[0]
    ).all()


def test_the_fused_blend_is_for_cuda_and_turned_off_by_the_compiled_switch(monkeypatch):
    pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")
    monkeypatch.setattr(triton_math, "INTERPRETED", False)
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    assert not blend_fused.available(torch.device("cpu"))
    assert blend_fused.available(torch.device("cuda"))
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    assert not blend_fused.available(torch.device("cuda"))


class NoCompiler:
    """A kernel whose launches fail as Triton's first does where it finds no C compiler."""

    def __getitem__(self, grid):
        def run(*args, **options):
            raise RuntimeError(
                "Failed to find C compiler. Please specify via CC environment variable."
            )

        return run


def test_a_kernel_that_cannot_compile_leaves_its_work_to_torch_s_path(monkeypatch, caplog):
    pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    monkeypatch.setattr(triton_math, "INTERPRETED", True)
    monkeypatch.setattr(triton_math, "_failure", None)
    monkeypatch.setattr(blend_compiled, "available", lambda device: False)
    broken = NoCompiler()
    monkeypatch.setattr(blend_fused, "_kernel", lambda: broken)
    base, magnitude, phase, weight = blend_case(False, torch.device("cpu"), seed=7)
    assert blend_fused.available(torch.device("cpu"))
    got = blend(base, magnitude, phase, weight, keeps_phase=False)
    want = torch_blend(monkeypatch, base, magnitude, phase, weight)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert "C compiler" in triton_math.failure() and "C compiler" in caplog.text
    assert not triton_math.takes(torch.device("cuda"))  # every Triton kernel is off now
    # a kernel that has launched once raises what it raises
    monkeypatch.setattr(triton_math, "_failure", None)
    monkeypatch.setattr(triton_math, "_launched", {broken})
    with pytest.raises(RuntimeError, match="C compiler"):
        blend(base, magnitude, phase, weight, keeps_phase=False)
