"""The CPU kernels of fft_ops against torch's own operations, in float64 where it matters."""

import numpy as np
import torch

from spectropaint.transforms import fft_ops


def polar_pair(shape=(2, 40, 300), seed=0):
    rng = np.random.default_rng(seed)
    magnitude = torch.from_numpy(rng.random(shape, dtype=np.float32))
    phase = torch.from_numpy(rng.uniform(-np.pi, np.pi, shape).astype(np.float32))
    return magnitude, phase


def test_polar_to_complex_equals_torch_polar_to_float32_rounding_whatever_the_strides():
    magnitude, phase = polar_pair()
    made = fft_ops.polar_to_complex(magnitude, phase)
    assert made.dtype == torch.complex64 and made.shape == magnitude.shape
    assert float((made - torch.polar(magnitude, phase)).abs().max()) < 3e-7
    strided = fft_ops.polar_to_complex(magnitude.transpose(1, 2), phase.transpose(1, 2))
    assert torch.equal(strided, made.transpose(1, 2))


def test_polar_difference_is_the_difference_of_the_two_complex_values():
    magnitude, phase = polar_pair()
    other_magnitude, other_phase = polar_pair(seed=1)
    difference = fft_ops.polar_difference(magnitude, phase, other_magnitude, other_phase)
    exact = torch.polar(magnitude.double(), phase.double()) - torch.polar(
        other_magnitude.double(), other_phase.double()
    )
    assert float((difference.to(torch.complex128) - exact).abs().max()) < 5e-7
    same = fft_ops.polar_difference(magnitude, phase, magnitude, phase)
    assert not same.abs().any()  # a value against itself is 0 exactly


def test_polar_distance_resolves_changes_far_below_the_values():
    """Changes of 1e-6 of the values are measured to a few percent (the complex difference of the
    float32 values would lose them in rounding), and the phase wraps."""
    magnitude, phase = polar_pair()
    values = torch.polar(magnitude.double(), phase.double())
    rng = np.random.default_rng(2)
    step = torch.from_numpy(1e-6 * (rng.standard_normal(magnitude.shape) + 0.5j))
    moved = values * (1 + step)
    moved_magnitude, moved_phase = moved.abs().float(), moved.angle().float()
    exact = (moved_magnitude.double() * torch.exp(1j * moved_phase.double()) - values).abs()
    found = fft_ops.polar_distance(moved_magnitude, moved_phase, magnitude, phase).double()
    assert float((found - exact).abs().max()) < 0.05 * float(exact.max())
    wrapped = fft_ops.polar_distance(magnitude, phase + 2 * np.pi, magnitude, phase)
    assert float(wrapped.max()) < 1e-6
    opposite = fft_ops.polar_distance(magnitude, phase + np.pi, magnitude, phase)
    assert torch.allclose(opposite, 2 * magnitude, rtol=1e-5)
