"""The spectral filter summed directly at the box's cells in one launch (:mod:`spectropaint.
brushes.kernels.filter_fused`) against the FFT filter it replaces for small regions: to float
rounding, for each mode, boxes anywhere in their regions and leading dimensions of dabs and
channels; a stroke through it against the same stroke through the FFT; and large regions left to
the FFT.

On a machine without CUDA the kernel runs through Triton's interpreter on CPU tensors; with CUDA,
compiled, on the GPU. Interpreted, a stroke's launches read gathered copies of its starting
values but in the test of reading them where they lie: such a read costs the interpreter some
twenty operations where a copy's costs one, and the sum reads every cell of a dab's region for
each of its box's cells."""

import math

import numpy as np
import pytest
import torch
from brush_fixtures import GPU, painted_values, small_document, tiles_held, triton_kernel_on

from spectropaint.brushes.kernels import filter_fused
from spectropaint.brushes.kernels.context import DabContext
from spectropaint.brushes.kernels.fft import clear_transfers, fft_filter
from spectropaint.brushes.kernels.originals_fused import Kept
from spectropaint.brushes.kernels.spectral_filter import (
    FilterInto,
    FilterParams,
    _device_taps,
    spectral_filter,
    transfer,
)
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings


@pytest.fixture
def fused(monkeypatch):
    """The kernel on (see the module's docstring for what it reads, interpreted)."""
    with triton_kernel_on(monkeypatch, filter_fused, GPU):
        monkeypatch.setattr(FilterInto, "reads_kept", GPU.type == "cuda")
        yield


def filter_context(shape: tuple[int, int], inner: tuple[slice, slice]) -> DabContext:
    return DabContext(inner=inner, bin_hz=None, frames=None, hop=64, sample_rate=16000,
                      radius=(shape[1] / 2, shape[0] / 2), hardness=0.5)  # fmt: skip


@pytest.mark.parametrize(
    ("params", "shape", "inner"),
    [
        (FilterParams(mode="lowpass", cutoff=0.1), (2, 33, 33), (slice(8, 25), slice(8, 25))),
        (FilterParams(mode="highpass", cutoff=0.2), (3, 2, 21, 47), (slice(3, 18), slice(0, 40))),
        (
            FilterParams(mode="bandpass", cutoff=0.05, cutoff_high=0.3),
            (1, 40, 9),
            (slice(0, 40), slice(2, 9)),
        ),  # fmt: skip
    ],
    ids=["lowpass", "highpass-dabs", "bandpass-edge"],
)
def test_the_direct_sum_equals_the_fft_filter_at_the_box(fused, params, shape, inner):
    x = torch.tensor(np.random.default_rng(4).random(shape), dtype=torch.float32)
    phase = torch.zeros(shape)
    clear_transfers()
    context = filter_context(shape[-2:], inner)
    assert filter_fused.available(GPU, shape[-2:], inner)
    got, got_phase = spectral_filter(x.to(GPU), phase.to(GPU), None, params, context)
    full = fft_filter(x, ("filter", params), lambda n_b, n_t: transfer(params, n_b, n_t))
    want = full[(..., *inner)]
    assert got.shape == want.shape and got_phase.shape == want.shape
    got = got.cpu()
    assert (got >= 0).all()
    assert (got - want.clamp_min(0)).abs().max() < 1e-5 * want.abs().max()
    if params.mode == "highpass":  # the clamp: where the filter undershoots, 0
        assert (want < 0).any() and (got[want < -1e-4 * want.abs().max()] == 0).all()


def test_a_tile_s_sums_are_added_up_by_its_last_program_which_sets_its_count_back(
    fused, monkeypatch
):
    """A tile's sum is spread over programs (ROWS rows of the taps each) whose sums the last to
    finish adds up: equal to the FFT's where a launch needs more room than the kept buffers have
    (they are made larger) and where it needs more than is kept at most (it has its own), and
    every tile's count back at 0 after each launch."""
    params = FilterParams(mode="lowpass", cutoff=0.1)
    filter_fused._sums.kept.clear()
    kept = []
    cases = [((1, 13, 13), (slice(3, 10), slice(3, 10))),
             ((2, 41, 37), (slice(5, 36), slice(4, 33))),
             ((2, 59, 59), (slice(5, 54), slice(5, 54)))]  # fmt: skip
    for index, (shape, inner) in enumerate(cases):
        assert filter_fused._grid(1, 1, shape[1])[1] > 1  # (programs a tile)
        if index == 2:  # (more than is kept, and less kept at most than the launch needs)
            monkeypatch.setattr(filter_fused, "MOST_KEPT", 1000)
        x = torch.tensor(np.random.default_rng(5 + index).random(shape), dtype=torch.float32)
        values = x.to(GPU)
        got = filter_fused.filtered(values, _device_taps(params, shape[1:], GPU), inner)
        want = fft_filter(x, ("filter", params), lambda n_b, n_t: transfer(params, n_b, n_t))
        want = want[(..., *inner)].clamp_min(0)
        assert (got.cpu() - want).abs().max() < 1e-5 * want.abs().max()
        kept.append(filter_fused._sums.kept[values.device])
        assert (kept[-1][1] == 0).all()
    assert kept[1][0].numel() > kept[0][0].numel() and kept[1][1].numel() > kept[0][1].numel()
    assert kept[2][0] is kept[1][0] and kept[2][1] is kept[1][1]


def test_a_large_region_is_left_to_the_fft(fused, monkeypatch):
    shape, inner = (277, 277), (slice(10, 267), slice(10, 267))  # a radius-128 dab's region
    assert not filter_fused.available(GPU, shape, inner)
    monkeypatch.setattr(filter_fused, "filtered", None)  # (a call would fail)
    x = torch.rand(shape)
    got, _ = spectral_filter(
        x.to(GPU), x.to(GPU), None, FilterParams(), filter_context(shape, inner)
    )
    assert got.shape == (257, 257)


def test_a_filter_stroke_through_the_direct_sum_equals_the_fft_s(fused, monkeypatch):
    document = small_document(device=GPU)
    start = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    calls = []
    real = filter_fused.filter_into
    monkeypatch.setattr(filter_fused, "filter_into", lambda *args: calls.append(1) or real(*args))
    stroke = {"radii": (5, 4), "events": 10, "start": (60.0, 40.0), "step": (4.1, 1.3)}
    got = painted_values(document, "filter", {"cutoff": 0.2}, **stroke)
    assert len(calls) >= 10
    monkeypatch.setattr(filter_fused, "available", lambda *args: False)
    want = painted_values(document, "filter", {"cutoff": 0.2}, **stroke)
    change = (want[0] - start[0]).abs()
    assert change.max() > 1e-3  # the stroke filtered
    assert torch.equal(got[1], want[1])  # phases untouched alike
    error = float((got[0] - want[0]).abs().max())
    assert 20 * math.log10(error / float(change.max()) + 1e-300) < -100


@pytest.mark.parametrize(
    ("start", "step"),
    [((60.0, 40.0), (4.1, 1.3)), ((200.0, 6.0), (3.0, -1.1))],
    ids=["inside", "across-the-lowest-bins"],
)
def test_each_dab_blended_into_the_cells_it_holds_equals_the_regions_stacked(
    fused, monkeypatch, start, step
):
    """The one launch a size of region (:class:`FilterInto`: each dab's region filtered where it
    lies in the group's, each cell blended from the dab that holds it last) against the dabs'
    regions stacked by size, filtered, gathered and blended by the fused blend: equal to float
    rounding, boxes of several sizes where the dabs reach past the lowest bin."""
    document = small_document(device=GPU)
    start_values = document.blocks[0].magnitude.clone()
    shapes = []
    real = filter_fused.filter_into
    monkeypatch.setattr(
        filter_fused, "filter_into", lambda *args: shapes.append(args[6]) or real(*args)
    )
    stroke = {"radii": (5, 4), "events": 8, "start": start, "step": step}
    got = painted_values(document, "filter", {"cutoff": 0.15}, **stroke)
    assert len(shapes) >= 8
    if start[1] < 10:  # boxes cut by the grid's edge: sizes of their own, one launch each
        assert len(set(shapes)) >= 3
    monkeypatch.setattr(FilterInto, "takes", staticmethod(lambda *args: False))
    want = painted_values(document, "filter", {"cutoff": 0.15}, **stroke)
    change = float((want[0] - start_values).abs().max())
    assert change > 1e-3
    assert torch.equal(got[1], want[1])
    error = float((got[0] - want[0]).abs().max())
    assert 20 * math.log10(error / change + 1e-300) < -100
    untouched = (want[0] == start_values).all(dim=0)  # cells no dab reached keep their values
    assert untouched.any() and torch.equal(got[0][:, untouched], want[0][:, untouched])


def test_the_launch_reading_the_region_where_it_lies_equals_it_reading_its_copy(fused, monkeypatch):
    """A group's launches read its region's starting values from the stroke's kept tiles (those
    this event just kept from their copies: other dabs' programs and the next size's launch write
    the document's cells under them) and elsewhere the document (:class:`~spectropaint.brushes.
    kernels.originals_fused.Kept`) instead of a gathered copy: the same values bit for bit, along
    a stroke whose later events read tiles that earlier ones kept, one that climbs from past the
    lowest bin (those regions read at the reflections of their cells past it) and one that runs
    off the grid's last frames and highest bins."""
    monkeypatch.setattr(FilterInto, "reads_kept", True)
    document = small_document(device=GPU)
    block = document.blocks[0]
    given, held = [], []

    def recorded(values, *args):
        given.append(values)
        held.append(tiles_held(values))
        return real(values, *args)

    real = FilterInto.apply
    monkeypatch.setattr(FilterInto, "apply", staticmethod(recorded))
    strokes = [
        {"radii": (5, 4), "events": 6, "start": (60.0, 40.0), "step": (4.1, 1.3)},
        {"radii": (5, 4), "events": 4, "start": (220.0, 1.0), "step": (3.7, 2.5)},
        {"radii": (5, 4), "events": 2, "start": (block.n_frames - 6.0, block.n_bins - 6.0),
         "step": (3.0, 3.0)},
    ]  # fmt: skip
    got = [painted_values(document, "filter", {"cutoff": 0.2}, **stroke) for stroke in strokes]
    assert given and all(isinstance(values, Kept) for values in given)
    assert min(held[:3]) > 0  # (each group found tiles kept: its own record's, earlier ones')
    places = [(*values.places[-2:], *values.shape[1:]) for values in given]
    assert any(bin0 < 0 for bin0, *_ in places)  # (past the lowest bin, then the highest and
    assert any(bin0 + rows > block.n_bins and frame0 + columns > block.n_frames  # the last frame)
               for bin0, frame0, rows, columns in places)  # fmt: skip
    monkeypatch.setattr(FilterInto, "reads_kept", False)
    given.clear()
    want = [painted_values(document, "filter", {"cutoff": 0.2}, **stroke) for stroke in strokes]
    assert given and not any(isinstance(values, Kept) for values in given)
    for stroke_got, stroke_want in zip(got, want, strict=True):
        assert float((stroke_want[0] - block.magnitude).abs().max()) > 1e-3  # it filtered
        assert torch.equal(stroke_got, stroke_want)


def test_a_region_farther_past_the_grid_than_its_part_inside_is_deep_is_copied(fused, monkeypatch):
    """On a grid of 9 bins, a dab 12 bins high filtering a period of 20 cells reads a region
    that lies farther past the grid than its part inside it is deep, where one reflection does
    not bring a cell back: its group reads a copy reflected as often as needed, the same values
    as with no region read where it lies."""
    monkeypatch.setattr(FilterInto, "reads_kept", True)
    samples = 0.1 * np.random.default_rng(2).standard_normal((1, 4000))
    document = Document.from_samples(samples, 16000, settings=STFTSettings(n_fft=16, hop=8),
                                     device=GPU)  # fmt: skip
    assert document.blocks[0].n_bins == 9
    given = []
    real = FilterInto.apply
    monkeypatch.setattr(FilterInto, "apply",
                        staticmethod(lambda values, *args: given.append(values) or real(values, *args)))  # fmt: skip
    stroke = {"radii": (6, 12), "events": 3, "start": (100.0, 4.0), "step": (3.0, 0.0)}
    params = {"cutoff": 0.05}
    got = painted_values(document, "filter", params, **stroke)
    assert given and not any(isinstance(values, Kept) for values in given)
    monkeypatch.setattr(FilterInto, "reads_kept", False)
    want = painted_values(document, "filter", params, **stroke)
    assert float((want[0] - document.blocks[0].magnitude).abs().max()) > 1e-4  # it filtered
    assert torch.equal(got, want)
