"""Warp's and auto phase's work in buffers made once and reused (:class:`~spectropaint.brushes.
kernels.phase.Continuation`, the per-thread buffers of :class:`~spectropaint.brushes.kernels.warp.
WarpPlan`): each result against the formula computed afresh, whatever was computed before it, on
however wide a window, and on several threads at once."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from test_kernels import context, region

from spectropaint.brushes.kernels.phase import (
    ALIGNMENT,
    CONTEXT_FRAMES,
    MARGIN,
    Continuation,
    continuation,
)
from spectropaint.brushes.kernels.warp import WarpParams, warp


def numpy_continuation(magnitude, phase, moved, carried, shifted):
    """The alignment of the destination with each moved phase, summed over ``CONTEXT_FRAMES``
    frames either side (fewer at the ends), in float64."""
    magnitude, phase, moved, carried, shifted = (
        np.asarray(v, float) for v in (magnitude, phase, moved, carried, shifted)
    )
    weight = magnitude * moved
    n = weight.shape[-1]

    def along_time(values):
        out = np.zeros_like(values)
        for t in range(n):
            out[..., t] = values[..., max(0, t - CONTEXT_FRAMES) : t + CONTEXT_FRAMES + 1].sum(-1)
        return out

    total = np.maximum(along_time(weight), 1e-30)
    along = along_time(weight * np.cos(phase - carried)) / total
    against = along_time(weight * np.cos(phase - shifted)) / total
    low, high = ALIGNMENT
    return np.clip((along - low) / (high - low), 0, 1) * np.clip((along - against) / MARGIN, 0, 1)


def random_continuation_inputs(shape, seed):
    magnitude, phase = region(shape, seed=seed)
    moved, carried = region(shape, seed=seed + 1)
    # a shifted phase near the carried one where a partial would continue, elsewhere anything
    rng = np.random.default_rng(seed)
    near = torch.tensor(rng.random(shape) < 0.5)
    shifted = torch.where(near, carried + 0.05, torch.tensor(rng.uniform(-3, 3, shape)).float())
    return magnitude, phase, moved, carried, shifted


def test_continuation_in_its_buffers_follows_the_formula_call_after_call():
    """One :class:`Continuation` called on three different inputs gives each the float64 formula's
    values (to float32 rounding) and the same bits as :func:`continuation` computed afresh: its
    buffers keep nothing of the previous call."""
    shape = (2, 9, 23)
    reused = Continuation(shape, device=torch.device("cpu"))
    sure_counts = []
    for seed in (3, 11, 19):
        inputs = random_continuation_inputs(shape, seed)
        got = reused(*inputs[:3], torch.stack(inputs[3:]))
        fresh = continuation(*inputs)
        assert torch.equal(got, fresh)
        np.testing.assert_allclose(got.numpy(), numpy_continuation(*inputs), atol=2e-5)
        sure_counts.append(int((got > 0.5).sum()))
    assert min(sure_counts) > 0 and max(sure_counts) < np.prod(shape)  # both outcomes occur


def test_continuation_of_a_cell_does_not_depend_on_the_window_around_it():
    """The same cells inside a window three frames wider on each side, whose extra cells hold no
    magnitude (a planned warp dab's window past its box), get the same bits."""
    shape = (2, 7, 15)
    inputs = random_continuation_inputs(shape, 5)
    narrow = continuation(*inputs)
    wide_inputs = [torch.nn.functional.pad(v, (3, 3), value=0.7) for v in inputs]
    wide_inputs[0][..., :3] = 0.0  # magnitude: none outside the box
    wide_inputs[0][..., -3:] = 0.0
    wide = continuation(*wide_inputs)
    assert torch.equal(wide[..., 3:-3], narrow)


def warp_inputs(seed):
    shape = (2, 19, 23)
    magnitude, phase = region(shape, seed=seed)
    inner = (slice(3, 16), slice(4, 19))
    mask = torch.tensor(np.random.default_rng(seed).uniform(0, 1, (13, 15)), dtype=torch.float32)
    step = (2.0 + seed / 7, -1.25)
    ctx = context(shape, inner, step=step, original=torch.stack((magnitude, phase)))
    return magnitude, phase, mask, WarpParams(amount=1.1, phase="auto"), ctx


def test_a_warp_result_survives_the_next_dab_on_a_window_of_its_shape():
    """Dabs of one window shape share their buffers: a result taken before the next dab holds its
    values after it, and equals the same dab computed again after others."""
    first = warp(*warp_inputs(1))
    kept = [v.clone() for v in first]
    second = warp(*warp_inputs(2))
    for got, before in zip(first, kept, strict=True):
        assert torch.equal(got, before)
    again = warp(*warp_inputs(1))
    assert all(torch.equal(a, b) for a, b in zip(again, kept, strict=True))
    assert not torch.equal(second[0], kept[0])


def test_warp_on_two_threads_at_once_equals_warp_on_one():
    """Each thread keeps buffers of its own: dabs of one window shape on two threads at once give
    what they give one after another."""
    seeds = list(range(1, 13))
    alone = [warp(*warp_inputs(seed)) for seed in seeds]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda seed: warp(*warp_inputs(seed)), seeds * 4))
    for index, result in enumerate(together):
        expected = alone[index % len(seeds)]
        assert all(torch.equal(a, b) for a, b in zip(result, expected, strict=True))
