"""The complex blend's kernels against torch's (:func:`spectropaint.brushes.blend.blend` with
compiled code off): compiled for the CPU (:mod:`spectropaint.brushes.blend_compiled`) and in one
GPU launch (:mod:`spectropaint.brushes.blend_fused`), on a group's box and a family's two stacked,
read through the strides of views, each cell within float rounding, cells of weight 0 exactly as
they were. The GPU's blend written straight into the document (``blend_into``, either blend, only
the cells a group's dabs hold) against torch's blend, selection and write, call by call and stroke
by stroke.

On a machine without CUDA the Triton kernel runs through Triton's interpreter on CPU tensors; with
CUDA, compiled, on the GPU."""

import math

import pytest
import torch
from brush_fixtures import (
    GPU,
    NoCompiler,
    blended_apart,
    painted_values,
    small_document,
    triton_fixture,
    unscaled,
)

from spectropaint.brushes import blend_compiled, blend_fused
from spectropaint.brushes.blend import blend
from spectropaint.brushes.kernels import compiled_math, pen_fused, triton_math

fused = triton_fixture(blend_fused)


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
    monkeypatch.setattr(triton_math, "_compiled", {id(broken): (broken, {})})
    with pytest.raises(RuntimeError, match="C compiler"):
        blend(base, magnitude, phase, weight, keeps_phase=False)


@pytest.mark.parametrize("keeps_phase", [True, False], ids=["magnitude-only", "complex"])
def test_the_blend_written_into_the_document_equals_torch_s_blend_select_and_write(
    fused, monkeypatch, keeps_phase
):
    base, magnitude, phase, weight = blend_case(False, GPU, seed=11)
    generator = torch.Generator().manual_seed(12)
    owner = (torch.rand(weight.shape, generator=generator) > 0.25).to(GPU)
    # the document's block: the box lies at rows 5.., columns 9.. of its first two channels
    block = torch.rand((2, 3, 60, 90), generator=generator).to(GPU)
    rows, columns = slice(5, 5 + base.shape[-2]), slice(9, 9 + base.shape[-1])
    want = block.clone()
    blended = torch_blend_kept(monkeypatch, base, magnitude, phase, weight, keeps_phase)
    for part in (0,) if keeps_phase else (0, 1):
        view = want[part, :2, rows, columns]
        view.copy_(torch.where(owner, blended[part], view))
    got = block.clone()
    first = rows.start * got.stride(2) + columns.start * got.stride(3)  # (channel 0)
    blend_fused.blend_into(base, magnitude, phase, weight, (got[0], got[1], first), owner=owner,
                           keeps_phase=keeps_phase)  # fmt: skip
    outside = torch.ones(block.shape[1:], dtype=torch.bool, device=GPU)
    outside[:2, rows, columns] = ~owner
    assert torch.equal(got[:, outside], block[:, outside])  # nothing else written
    if keeps_phase:
        assert torch.equal(got[1], block[1])
    held = ~outside
    assert (got[0][held] - want[0][held]).abs().max() < 5e-7
    apart = torch.remainder(got[1][held] - want[1][held] + math.pi, 2 * math.pi) - math.pi
    assert apart.abs().max() < 2e-6
    assert (got[0][held] - block[0][held]).abs().mean() > 0.05  # the weights do move it


def torch_blend_kept(monkeypatch, base, magnitude, phase, weight, keeps_phase):
    with monkeypatch.context() as off:
        off.setenv(compiled_math.COMPILED_ENV, "0")
        return blend(base, magnitude, phase, weight, keeps_phase=keeps_phase)


STROKES = [
    # magnitude-only, one owner a cell (through the kernel: the scaling brushes' one launch off)
    pytest.param(unscaled("gain"), {"gain_db": -12.0}, id="gain"),
    # magnitude-only, cells no dab's box holds (its own launches that blend it off)
    pytest.param(blended_apart("filter"), {}, id="filter"),
    # complex, cells no dab's box holds (its own launch that blends it off)
    pytest.param(blended_apart("pen"), {"level_db": -20.0}, id="pen"),
]


@pytest.mark.parametrize(("brush", "params"), STROKES)
def test_a_stroke_blended_into_the_document_equals_torch_s(fused, monkeypatch, brush, params):
    monkeypatch.setattr(pen_fused, "available", lambda *args: False)  # (its own tests)
    document = small_document(device=GPU)
    start = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    written = []
    real = blend_fused.blend_into
    monkeypatch.setattr(blend_fused, "blend_into",
                        lambda *args, **kwargs: written.append(1) or real(*args, **kwargs))  # fmt: skip
    got = painted_values(document, brush, params)
    assert len(written) >= 12  # every group went through it
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    want = painted_values(document, brush, params)
    changed = torch.polar(want[0].double(), want[1].double()) - torch.polar(
        start[0].double(), start[1].double()
    )
    error = torch.polar(got[0].double(), got[1].double()) - torch.polar(
        want[0].double(), want[1].double()
    )
    assert changed.abs().max() > 1e-3  # the stroke did change the document
    assert 20 * math.log10(error.abs().max() / changed.abs().max() + 1e-300) < -100
    untouched = changed == 0  # cells torch's stroke left: left alike
    assert torch.equal(got[:, untouched], start[:, untouched])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="compiled kernels need CUDA")
def test_a_compiled_kernel_launched_again_directly_gives_triton_s_result(fused, monkeypatch):
    """Launches after the second go straight to the compiled kernel (``triton_math.launch``):
    boxes of other sizes, places and strides each get torch's blend, from one compilation."""
    monkeypatch.setattr(triton_math, "_compiled", {})
    for seed, (rows, columns) in enumerate([(20, 30), (7, 61), (33, 12), (20, 30), (5, 5)]):
        generator = torch.Generator().manual_seed(seed)
        block = torch.rand((2, 2, 50, 80), generator=generator).to(GPU)
        base = torch.rand((2, 2, rows + 4, columns + 2), generator=generator).to(GPU)
        base = base[..., 2:-2, 1:-1]
        magnitude = torch.rand((2, rows, columns), generator=generator).to(GPU)
        weight = torch.rand((rows, columns), generator=generator).to(GPU)
        at = (slice(None), slice(seed, seed + rows), slice(2 * seed, 2 * seed + columns))
        first = seed * block.stride(2) + 2 * seed * block.stride(3)
        blend_fused.blend_into(base, magnitude, base[1], weight, (block[0], block[1], first),
                               keeps_phase=True)  # fmt: skip
        want = torch.where(weight > 0, base[0].lerp(magnitude, weight), base[0])
        assert (block[0][at] - want).abs().max() < 5e-7
    variants = triton_math._compiled[id(blend_fused._kernel())][1]
    assert [compiled is not None for compiled, _ in variants.values()] == [True]
