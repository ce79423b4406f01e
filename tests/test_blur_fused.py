"""The blur's two Triton launches (:mod:`spectropaint.brushes.kernels.blur_fused`) against its FFTs
(:func:`spectropaint.brushes.kernels.blur.blur` with compiled code off) and scipy's
``gaussian_filter``, on regions of one and several planes, and a stroke through them against torch's.

On a machine without CUDA the kernel runs through Triton's interpreter on CPU tensors; with CUDA,
compiled, on the GPU."""

import math

import numpy as np
import pytest
import scipy.ndimage
import torch
from brush_fixtures import (
    GPU,
    blended_apart,
    painted_values,
    small_document,
    tiles_held,
    triton_fixture,
)

from spectropaint.brushes.kernels import blur_fused, compiled_math
from spectropaint.brushes.kernels.blur import BlurInto, BlurParams, blur, support
from spectropaint.brushes.kernels.context import DabContext
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

fused = triton_fixture(blur_fused)


def case(radius, sigma, planes, seed):
    """A region ``[planes, Bm, Tm]`` of a box of the brush's size and the Gaussian's margin, its
    box's slices, and the kernel's context."""
    margin = (support(sigma * radius[1]), support(sigma * radius[0]))
    box = (2 * int(radius[1]) + 1, 2 * int(radius[0]) + 1)
    rng = np.random.default_rng(seed)
    shape = (planes, box[0] + 2 * margin[0], box[1] + 2 * margin[1])
    magnitude = np.abs(rng.standard_normal(shape)) + scipy.ndimage.gaussian_filter(
        rng.random(shape), 3
    )
    inner = (slice(margin[0], margin[0] + box[0]), slice(margin[1], margin[1] + box[1]))
    context = DabContext(inner=inner, bin_hz=None, frames=None, hop=64, sample_rate=16000,
                         radius=radius)  # fmt: skip
    phase = torch.rand(shape) * 2 * math.pi - math.pi
    return torch.tensor(magnitude, dtype=torch.float32).to(GPU), phase.to(GPU), inner, context


CASES = [
    pytest.param((6.0, 10.0), 0.3, 2, id="small-stereo"),
    pytest.param((20.0, 12.0), 0.4, 2, id="wider"),
    pytest.param((3.0, 2.0), 1.5, 4, id="broad-gaussian-pair"),  # a family's two blocks stacked
    pytest.param((8.0, 8.0), 0.01, 1, id="a-tap"),  # support 0: the values themselves
    pytest.param(
        (64.0, 40.0),
        0.3,
        2,
        id="wide",
        marks=pytest.mark.skipif(
            not torch.cuda.is_available(), reason="needs CUDA (155 taps take minutes interpreted)"
        ),
    ),
]


@pytest.mark.parametrize(("radius", "sigma", "planes"), CASES)
def test_the_fused_blur_equals_the_fft_s_and_scipy_s(fused, monkeypatch, radius, sigma, planes):
    magnitude, phase, inner, context = case(radius, sigma, planes, seed=planes)
    params = BlurParams(sigma=sigma)
    calls = []
    real = blur_fused.blur
    monkeypatch.setattr(blur_fused, "blur", lambda *args: calls.append(1) or real(*args))
    got, got_phase = blur(magnitude, phase, None, params, context)
    assert calls  # (it went through the kernel)
    with monkeypatch.context() as off:
        off.setenv(compiled_math.COMPILED_ENV, "0")
        want, want_phase = blur(magnitude, phase, None, params, context)
    assert got.shape == want.shape and torch.equal(got_phase, want_phase)
    assert (got - want).abs().max() <= 1e-6 * want.abs().max()
    assert got.min() >= 0
    reference = scipy.ndimage.gaussian_filter(
        magnitude.double().cpu().numpy(), sigma=(0, sigma * radius[1], sigma * radius[0]),
        truncate=4.0,
    )[(slice(None), *inner)]  # fmt: skip
    assert np.abs(got.cpu().numpy() - reference).max() < 1e-5 * reference.max()
    if sigma > 0.1:  # it does blur
        assert (
            np.abs(got.cpu().numpy() - magnitude[(slice(None), *inner)].cpu().numpy()).max() > 0.1
        )


def painted(document, events: int = 10) -> torch.Tensor:
    """The document's values after a blur stroke of ``events`` events (then undone, checked to
    restore them)."""
    return painted_values(document, "blur", {"sigma": 0.5}, radii=(6, 5), events=events,
                          step=(3.7, 1.1))  # fmt: skip


def test_a_stroke_through_it_equals_torch_s(fused, monkeypatch):
    document = small_document(device=GPU)
    start = document.blocks[0].magnitude.clone()
    events = 6 if GPU.type == "cpu" else 10  # (interpreted, an event costs seconds)
    got = painted(document, events)
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    want = painted(document, events)
    changed = (want[0] - start).abs().max()
    assert changed > 1e-3
    assert 20 * math.log10(float((got[0] - want[0]).abs().max() / changed) + 1e-300) < -100
    assert torch.equal(got[1], want[1])  # the phase untouched both ways


def recorded(monkeypatch, keyword: str) -> list:
    """The ``keyword`` argument of each call of :func:`~spectropaint.brushes.kernels.blur_fused.
    blur` from now on (None where not given), in a list the calls go on filling."""
    calls = []
    real = blur_fused.blur
    monkeypatch.setattr(
        blur_fused, "blur", lambda *args, **kw: calls.append(kw.get(keyword)) or real(*args, **kw)
    )
    return calls


def test_the_blur_blended_into_the_document_by_its_second_launch_equals_the_blend_s(
    fused, monkeypatch
):
    """The second launch blending the blur into the document (:class:`~spectropaint.brushes.
    kernels.blur.BlurInto`) against the blurred box blended by the fused blend's own launch: equal
    to float rounding, along a stroke that climbs from past the lowest bin (regions reflected
    there) into the grid; cells the stroke left keep their values."""
    document = small_document(device=GPU)
    start_values = document.blocks[0].magnitude.clone()
    into = recorded(monkeypatch, "into")
    stroke = {"radii": (6, 5), "events": 8, "start": (220.0, 2.0), "step": (3.7, 2.5)}
    got = painted_values(document, "blur", {"sigma": 0.3}, **stroke)
    assert len(into) >= 8 and all(part is not None for part in into)
    into.clear()
    want = painted_values(document, blended_apart("blur"), {"sigma": 0.3}, **stroke)
    assert len(into) >= 8 and all(part is None for part in into)
    change = float((want[0] - start_values).abs().max())
    assert change > 1e-3
    assert torch.equal(got[1], want[1])
    assert (got[0] - want[0]).abs().max() <= 1e-6 * change
    untouched = (want[0] == start_values).all(dim=0)
    assert untouched.any() and torch.equal(got[0][:, untouched], want[0][:, untouched])


def test_the_blur_reading_the_region_where_it_lies_equals_it_reading_its_copy(fused, monkeypatch):
    """A group's two launches read its region's starting values from the stroke's kept tiles and
    elsewhere the document (:class:`~spectropaint.brushes.kernels.originals_fused.Kept`) instead
    of a gathered copy: the same values bit for bit, along a stroke that climbs from past the
    lowest bin (those regions read at the reflections of their cells past it) into the grid,
    where later events read tiles that earlier ones kept; and along one that runs off the grid's
    last frames and highest bins."""
    document = small_document(device=GPU)
    block = document.blocks[0]
    kept = recorded(monkeypatch, "kept")
    low = {"radii": (6, 5), "events": 4, "start": (220.0, 2.0), "step": (3.7, 2.5)}
    high = {"radii": (6, 5), "events": 2, "start": (block.n_frames - 8.0, block.n_bins - 8.0),
            "step": (3.0, 3.0)}  # fmt: skip
    got = [painted_values(document, "blur", {"sigma": 0.3}, **stroke) for stroke in (low, high)]
    assert None not in kept and len(kept) >= 5
    assert any(held > 0 for held in map(tiles_held, kept))
    # (regions past the grid's lowest bin, then past its highest bin and last frame)
    places = [found.places[-2:] for found in kept]
    assert any(bin0 < 0 for bin0, _ in places)
    shapes = [found.shape for found in kept]
    assert any(
        bin0 + rows > block.n_bins and frame0 + columns > block.n_frames
        for (bin0, frame0), (_, rows, columns) in zip(places, shapes, strict=True)
    )
    monkeypatch.setattr(BlurInto, "reads_kept", False)
    kept.clear()
    want = [painted_values(document, "blur", {"sigma": 0.3}, **stroke) for stroke in (low, high)]
    assert kept and set(kept) == {None}
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


def test_a_region_farther_past_the_grid_than_its_part_inside_is_deep_is_copied(fused, monkeypatch):
    """On a grid of 9 bins, a blur 12 bins high reads a region that lies farther past the grid
    than its part inside it is deep, where one reflection does not bring a cell back: its group
    reads a copy reflected as often as needed, the same values as with no region read where it
    lies."""
    samples = 0.1 * np.random.default_rng(2).standard_normal((1, 4000))
    document = Document.from_samples(samples, 16000, settings=STFTSettings(n_fft=16, hop=8),
                                     device=GPU)  # fmt: skip
    assert document.blocks[0].n_bins == 9
    kept = recorded(monkeypatch, "kept")
    stroke = {"radii": (6, 12), "events": 3, "start": (100.0, 4.0), "step": (3.0, 0.0)}
    got = painted_values(document, "blur", {"sigma": 0.3}, **stroke)
    assert kept and set(kept) == {None}
    monkeypatch.setattr(BlurInto, "reads_kept", False)
    want = painted_values(document, "blur", {"sigma": 0.3}, **stroke)
    assert float((want[0] - document.blocks[0].magnitude).abs().max()) > 1e-4  # it blurred
    assert torch.equal(got, want)
