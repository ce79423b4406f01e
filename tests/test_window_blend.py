"""The in-place blend of a dragging brush's dabs (:class:`~spectropaint.brushes.blend.WindowBlend`):
the complex crossfade computed another way, cells of weight 0 and cells outside the window left
bit-identical, a cell's result independent of the window around it, and the stamping blend's bits
where torch's atan2 has no scalar tail."""

import numpy as np
import torch
from test_kernels import region

from spectropaint.brushes.blend import WindowBlend, blend
from spectropaint.brushes.kernels import compiled_math


def inputs(shape, seed):
    """A window ``[2, C, H, W]`` inside larger values, a kernel result on it and a weight that is
    0 on about a third of the cells and 0..1 elsewhere."""
    channels, height, width = shape
    values = torch.stack(region((channels, height + 6, width + 9), seed=seed))
    window = values[:, :, 2 : 2 + height, 5 : 5 + width]
    magnitude, phase = region(shape, seed=seed + 1)
    rng = np.random.default_rng(seed)
    weight = rng.uniform(0, 1, (height, width)) * (rng.random((height, width)) > 0.35)
    return values, window, magnitude, phase, torch.tensor(weight, dtype=torch.float32)


def crossfade(window, magnitude, phase, weight):
    """``old + (new - old) * weight`` of the complex values, in float64."""
    old = window[0].double() * torch.exp(1j * window[1].double())
    new = magnitude.double() * torch.exp(1j * phase.double())
    return old + (new - old) * weight.double()


def test_window_blend_is_the_complex_crossfade_in_place():
    """The window's cells become the crossfade of old and new values (to float32 rounding: 1e-6
    of the magnitudes); cells of weight 0 and every cell outside the window keep their bits."""
    shape = (2, 13, 21)
    values, window, magnitude, phase, weight = inputs(shape, 4)
    before = values.clone()
    expected = crossfade(window, magnitude, phase, weight)
    WindowBlend(shape, device=torch.device("cpu"))(window, magnitude, phase, weight, weight > 0)
    got = window[0].double() * torch.exp(1j * window[1].double())
    scale = float(torch.maximum(window[0], magnitude).max())
    assert float((got - expected).abs().max()) < 1e-6 * scale
    zero = weight == 0
    assert 0 < int(zero.sum()) < zero.numel()
    assert torch.equal(window[:, :, zero], before[:, :, 2:15, 5:26][:, :, zero])
    outside = torch.ones(values.shape[-2:], dtype=torch.bool)
    outside[2:15, 5:26] = False
    assert torch.equal(values[:, :, outside], before[:, :, outside])
    assert float((window[0] - before[0, :, 2:15, 5:26]).abs().max()) > 0.1  # it did blend


def test_a_cell_of_the_window_blend_does_not_depend_on_the_window_around_it():
    """The same cells blended inside a window two columns wider on each side, of weight 0 there,
    get the same bits (a planned warp's windows are larger than the dabs' boxes)."""
    shape = (2, 9, 30)
    _, window, magnitude, phase, weight = inputs(shape, 7)
    narrow = window.clone()
    WindowBlend(shape, device=torch.device("cpu"))(narrow, magnitude, phase, weight, weight > 0)
    wide_shape = (2, 9, 34)
    wide = torch.nn.functional.pad(window, (2, 2), value=0.5)
    wide_weight = torch.nn.functional.pad(weight, (2, 2))
    wide_new = [torch.nn.functional.pad(v, (2, 2), value=0.25) for v in (magnitude, phase)]
    WindowBlend(wide_shape, device=torch.device("cpu"))(
        wide, *wide_new, wide_weight, wide_weight > 0
    )
    assert torch.equal(wide[..., 2:-2], narrow)


def test_window_blend_gives_the_stamping_blends_bits_where_atan2_has_no_tail(monkeypatch):
    """On a window of a whole number of vector blocks (64 cells a plane here), where torch's own
    atan2 computes every cell by the vector routine, the in-place blend equals :func:`blend` in
    torch's operations (the CPU's compiled blend is held to it in ``test_blend_kernels.py``)."""
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    shape = (2, 8, 16)
    _, window, magnitude, phase, weight = inputs(shape, 11)
    expected = blend(window, magnitude, phase, weight, keeps_phase=False)
    got = window.clone()
    WindowBlend(shape, device=torch.device("cpu"))(got, magnitude, phase, weight, weight > 0)
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])
