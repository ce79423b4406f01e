"""Each brush kernel against an independent numpy or scipy computation on the same region."""

import dataclasses

import numpy as np
import pytest
import scipy.fft
import scipy.ndimage
import torch

from spectropaint.brushes.kernels.blur import BlurParams, blur, support
from spectropaint.brushes.kernels.clone import CloneParams, clone
from spectropaint.brushes.kernels.context import DabContext, Source
from spectropaint.brushes.kernels.fft import clear_transfers, fast_length, fft_filter, linear_filter
from spectropaint.brushes.kernels.gain import GainParams, gain
from spectropaint.brushes.kernels.pen import PenParams, pen
from spectropaint.brushes.kernels.phase import phase_ramp
from spectropaint.brushes.kernels.spectral_filter import FilterParams, spectral_filter, transfer
from spectropaint.brushes.kernels.warp import WarpParams, warp
from spectropaint.brushes.settings import BrushSettings

HOP, RATE, N_FFT = 64, 16000, 256


def region(shape, seed=0):
    """Random magnitude (with texture at every scale) and phase ``[2, *shape]`` as float32 tensors."""
    rng = np.random.default_rng(seed)
    magnitude = np.abs(rng.standard_normal(shape)) + scipy.ndimage.gaussian_filter(
        rng.random(shape), 3
    )
    phase = rng.uniform(-np.pi, np.pi, shape)
    return torch.tensor(magnitude, dtype=torch.float32), torch.tensor(phase, dtype=torch.float32)


def context(shape, inner, *, bin0=10, frame0=30, radius=(8.0, 8.0), **extra):
    bins = np.arange(bin0, bin0 + shape[-2])
    frames = np.arange(frame0, frame0 + shape[-1])
    return DabContext(
        inner=inner,
        bin_hz=torch.tensor(bins * RATE / N_FFT, dtype=torch.float64),
        frames=torch.tensor(frames),
        hop=HOP,
        sample_rate=RATE,
        radius=radius,
        **extra,
    )


def test_a_context_for_another_box_equals_dataclasses_replace_and_leaves_the_first_alone():
    first = context((20, 30), (slice(2, 18), slice(3, 27)), step=(1.5, -0.5), full_scale=3.0)
    inner = (slice(4, 9), slice(5, 11))
    other = first.with_inner(inner)
    assert other == dataclasses.replace(first, inner=inner) and type(other) is DabContext
    assert first.inner == (slice(2, 18), slice(3, 27)) and other.inner == inner
    with pytest.raises(dataclasses.FrozenInstanceError):
        other.inner = first.inner


def numpy_ramp(bins, frames):
    """``2 pi frac(hop k t / n_fft)`` with exact integer arithmetic (STFT bins at k * sr / n_fft)."""
    cycles = (HOP * np.outer(bins, frames)) % N_FFT
    return 2 * np.pi * cycles / N_FFT


def angle_error(a, b):
    return np.abs(np.angle(np.exp(1j * (np.asarray(a, float) - np.asarray(b, float))))).max()


def test_fast_length_matches_scipy_for_real_transforms():
    assert [fast_length(n) for n in range(1, 2000)] == [
        scipy.fft.next_fast_len(n, real=True) for n in range(1, 2000)
    ]


def test_fast_length_on_a_cuda_device_is_the_next_power_of_two():
    cuda = torch.device("cuda")  # a device object only: no GPU is needed
    lengths = [fast_length(n, cuda) for n in range(1, 5000)]
    assert all(
        n <= found < 2 * n and found & (found - 1) == 0 for n, found in enumerate(lengths, 1)
    )


def test_blur_gives_the_same_result_on_power_of_two_lengths(monkeypatch):
    """On CUDA the blur pads to powers of two (fewer lengths for cuFFT to load): the truncated
    Gaussian lies within the region's margin, so the result does not depend on the length."""
    import spectropaint.brushes.kernels.blur as blur_module

    params, radius = BlurParams(sigma=0.4), (10.0, 9.0)
    margin_b, margin_t = params.margin(
        BrushSettings(radius_frames=radius[0], radius_bins=radius[1])
    )
    box = (2 * int(radius[1]) + 1, 2 * int(radius[0]) + 1)
    shape = (2, box[0] + 2 * margin_b, box[1] + 2 * margin_t)
    magnitude, phase = region(shape, seed=4)
    inner = (slice(margin_b, margin_b + box[0]), slice(margin_t, margin_t + box[1]))

    def blurred():
        return blur(magnitude, phase, torch.ones(box), params, context(shape, inner, radius=radius))

    smooth, _ = blurred()
    monkeypatch.setattr(
        blur_module, "fast_length", lambda n, device=None: fast_length(n, torch.device("cuda"))
    )
    assert all(fast_length(n, torch.device("cuda")) > fast_length(n) for n in shape[1:])
    padded, _ = blurred()
    assert (padded - smooth).abs().max() < 1e-5 * smooth.max()


@pytest.mark.parametrize(
    ("params", "shape"),
    [
        (FilterParams(mode="lowpass", cutoff=0.03), (3, 37, 53)),  # grids 40 x 54: both alias
        (FilterParams(mode="highpass", cutoff=0.2), (2, 64, 17)),
        (FilterParams(mode="bandpass", cutoff=0.05, cutoff_high=0.3), (1, 2, 30, 121)),
    ],
)
def test_the_filter_on_powers_of_two_equals_the_filter_on_its_grid(params, shape):
    """On CUDA the filter brush convolves linearly on powers of two (fewer lengths for cuFFT to
    load) with the taps of its grid's periodic kernel: the same result as the circular filter on
    the grid, whose lengths cuFFT loads one new one at a time."""
    x = torch.tensor(np.random.default_rng(7).random(shape), dtype=torch.float32)
    grid = (fast_length(shape[-2]), fast_length(shape[-1]))
    assert grid[0] < 2 * shape[-2] - 1 and grid[1] < 2 * shape[-1] - 1  # the grid wraps
    clear_transfers()
    circular = fft_filter(x, ("filter", params), lambda n_b, n_t: transfer(params, n_b, n_t))
    linear = linear_filter(x, ("filter", params), lambda n_b, n_t: transfer(params, n_b, n_t), grid)
    assert linear.shape == x.shape
    assert (linear - circular).abs().max() < 1e-5 * circular.abs().max()
    # not the linear filter with the response sampled on a power-of-two grid of its own
    wider = linear_filter(
        x, ("wider", params), lambda n_b, n_t: transfer(params, n_b, n_t), (64, 128)
    )
    assert (wider - circular).abs().max() > 1e-3 * circular.abs().max()


def test_phase_ramp_is_exact_for_ten_minutes_of_frames():
    bins = np.arange(0, 129)
    frames = np.array([0, 1, 7, 999, 51_679, 60_001])
    ramp = phase_ramp(
        torch.tensor(bins * RATE / N_FFT, dtype=torch.float64),
        torch.tensor(frames),
        hop=HOP,
        sample_rate=RATE,
    )
    assert angle_error(ramp.numpy(), numpy_ramp(bins, frames)) < 1e-9


def test_gain_scales_magnitude_by_its_decibels_and_keeps_phase():
    magnitude, phase = region((2, 20, 30))
    inner = (slice(0, 20), slice(0, 30))
    mask = torch.ones(20, 30)
    out_m, out_p = gain(magnitude, phase, mask, GainParams(gain_db=-12.0), context((20, 30), inner))
    np.testing.assert_allclose(out_m.numpy(), magnitude.numpy() * 10 ** (-12 / 20), rtol=1e-6)
    assert torch.equal(out_p, phase)


@pytest.mark.parametrize("radius", [(6.0, 10.0), (64.0, 40.0)])
def test_blur_matches_scipy_gaussian_filter(radius):
    params = BlurParams(sigma=0.3)
    margin_b, margin_t = params.margin(
        BrushSettings(radius_frames=radius[0], radius_bins=radius[1])
    )
    assert (margin_b, margin_t) == (support(0.3 * radius[1]), support(0.3 * radius[0]))
    box = (2 * int(radius[1]) + 1, 2 * int(radius[0]) + 1)
    shape = (2, box[0] + 2 * margin_b, box[1] + 2 * margin_t)
    magnitude, phase = region(shape, seed=1)
    inner = (slice(margin_b, margin_b + box[0]), slice(margin_t, margin_t + box[1]))
    out_m, out_p = blur(
        magnitude, phase, torch.ones(box), params, context(shape, inner, radius=radius)
    )
    reference = scipy.ndimage.gaussian_filter(
        magnitude.double().numpy(), sigma=(0, 0.3 * radius[1], 0.3 * radius[0]), truncate=4.0
    )[(slice(None), *inner)]
    assert np.abs(out_m.numpy() - reference).max() < 1e-5 * reference.max()
    assert torch.equal(out_p, phase[(slice(None), *inner)])


def numpy_filter(image, params):
    """The filter computed independently: numpy FFT, the Butterworth response written out."""
    n_b, n_t = (scipy.fft.next_fast_len(n, real=True) for n in image.shape[-2:])
    rho = np.hypot(np.fft.fftfreq(n_b)[:, None], np.fft.rfftfreq(n_t)[None, :])

    def low(c):
        return 1 / (1 + (rho / c) ** 4)

    response = {
        "lowpass": low(params.cutoff),
        "highpass": 1 - low(params.cutoff),
        "bandpass": low(params.cutoff_high) - low(params.cutoff),
    }[params.mode]
    response[0, 0] = 1.0
    out = np.fft.irfft2(np.fft.rfft2(image, s=(n_b, n_t)) * response, s=(n_b, n_t))
    return np.maximum(out[..., : image.shape[-2], : image.shape[-1]], 0)


@pytest.mark.parametrize(
    "params",
    [
        FilterParams("lowpass", cutoff=0.08),
        FilterParams("highpass", cutoff=0.1),
        FilterParams("bandpass", cutoff=0.05, cutoff_high=0.2),
    ],
)
def test_spectral_filter_matches_numpy_fft(params):
    margin_b, margin_t = params.margin(BrushSettings(radius_frames=12, radius_bins=9))
    assert margin_b == min(int(np.ceil(1 / params.cutoff)), 9)
    shape = (2, 19 + 2 * margin_b, 25 + 2 * margin_t)
    magnitude, phase = region(shape, seed=2)
    inner = (slice(margin_b, margin_b + 19), slice(margin_t, margin_t + 25))
    out_m, out_p = spectral_filter(
        magnitude, phase, torch.ones(19, 25), params, context(shape, inner)
    )
    reference = numpy_filter(magnitude.double().numpy(), params)[(slice(None), *inner)]
    assert np.abs(out_m.numpy() - reference).max() < 1e-5 * magnitude.max().item()
    assert torch.equal(out_p, phase[(slice(None), *inner)])


def test_spectral_filter_keeps_the_mean_and_lowpass_smooths():
    magnitude, phase = region((1, 40, 40), seed=3)
    inner = (slice(0, 40), slice(0, 40))
    low, _ = spectral_filter(
        magnitude,
        phase,
        torch.ones(40, 40),
        FilterParams("lowpass", 0.05),
        context((40, 40), inner),
    )
    assert abs(low.mean().item() - magnitude.mean().item()) < 0.05 * magnitude.mean().item()
    assert low.std().item() < 0.5 * magnitude.std().item()


def numpy_advance(phase, bins):
    """Measured advance per frame, unwrapped around the bin centre's; first column repeats."""
    omega = 2 * np.pi * HOP * bins[:, None] / N_FFT
    step = phase[..., 1:] - phase[..., :-1] - omega
    advance = omega + np.angle(np.exp(1j * step))
    return np.concatenate((advance[..., :1], advance), axis=-1)


@pytest.mark.parametrize("mode", ["continue", "shift"])
def test_warp_matches_a_numpy_bilinear_sampling_of_carried_phasors(mode):
    shape = (2, 31, 37)
    magnitude, phase = region(shape, seed=4)
    margin_b, margin_t = 4, 5
    inner = (slice(margin_b, shape[1] - margin_b), slice(margin_t, shape[2] - margin_t))
    box = (shape[1] - 2 * margin_b, shape[2] - 2 * margin_t)
    mask = torch.tensor(np.random.default_rng(5).uniform(0, 1, box), dtype=torch.float32)
    step = (2.5, -1.75)
    params = WarpParams(amount=1.2, phase=mode)
    original = torch.stack((magnitude, phase))
    out_m, out_p = warp(
        magnitude, phase, mask, params, context(shape, inner, step=step, original=original)
    )

    bins, frames = np.arange(10, 10 + shape[1]), np.arange(30, 30 + shape[2])
    mag, ph = magnitude.double().numpy(), phase.double().numpy()
    advance = numpy_advance(ph, bins)
    weight = mask.double().numpy()
    ref_m = np.zeros((2, *box))
    ref_z = np.zeros((2, *box), complex)
    for i in range(box[0]):
        for j in range(box[1]):
            b, t = margin_b + i, margin_t + j
            sb = b - params.amount * step[1] * weight[i, j]
            st = t - params.amount * step[0] * weight[i, j]
            b0, t0 = int(np.floor(sb)), int(np.floor(st))
            for nb, nt in [(b0, t0), (b0, t0 + 1), (b0 + 1, t0), (b0 + 1, t0 + 1)]:
                w = (1 - abs(sb - nb)) * (1 - abs(st - nt))
                if mode == "continue":
                    carried = advance[:, nb, nt] * (t - nt)
                else:
                    carried = 2 * np.pi * HOP * bins[nb] / N_FFT * (st - nt)
                shift = 2 * np.pi * ((HOP * (bins[b] - bins[nb]) * frames[t]) % N_FFT) / N_FFT
                ref_m[:, i, j] += w * mag[:, nb, nt]
                ref_z[:, i, j] += w * np.exp(1j * (ph[:, nb, nt] + carried + shift))
    assert np.abs(out_m.numpy() - ref_m).max() < 1e-5
    assert angle_error(out_p.numpy(), np.angle(ref_z)) < 1e-4


@pytest.mark.parametrize("mode", ["continue", "shift"])
def test_warp_without_motion_leaves_values_in_place(mode):
    shape = (1, 12, 14)
    magnitude, phase = region(shape, seed=6)
    inner = (slice(2, 10), slice(2, 12))
    ctx = context(shape, inner, original=torch.stack((magnitude, phase)))
    out_m, out_p = warp(magnitude, phase, torch.ones(8, 10), WarpParams(phase=mode), ctx)
    np.testing.assert_allclose(out_m.numpy(), magnitude[:, 2:10, 2:12].numpy(), rtol=1e-6)
    assert angle_error(out_p.numpy(), phase[:, 2:10, 2:12].numpy()) < 1e-6


@pytest.mark.parametrize("mode", ["continue", "shift"])
def test_clone_copies_the_source_and_rebases_its_phase_where_the_source_exists(mode):
    shape = (2, 9, 11)
    magnitude, phase = region(shape, seed=7)
    src_m, src_p = region((2, 9, 12), seed=8)
    valid = np.ones(shape[1:], bool)
    valid[:, :3] = False
    params = CloneParams(offset_frames=-40, offset_bins=6, phase=mode)
    src_bins, dest_bins, dest_frames = np.arange(16, 25), np.arange(10, 19), np.arange(30, 41)
    source = Source(
        src_m,
        src_p,
        torch.tensor(valid),
        torch.tensor(src_bins * RATE / N_FFT, dtype=torch.float64),
    )
    inner = (slice(0, 9), slice(0, 11))
    out_m, out_p = clone(
        magnitude, phase, torch.ones(9, 11), params, context(shape, inner, source=source)
    )
    shift = (HOP * np.outer(dest_bins - src_bins, dest_frames)) % N_FFT * 2 * np.pi / N_FFT
    expected_p = src_p.double().numpy()[..., 1:] + shift
    if mode == "continue":
        expected_p += numpy_advance(src_p.double().numpy(), src_bins)[..., 1:] * 40
    np.testing.assert_array_equal(out_m.numpy()[:, valid], src_m.numpy()[..., 1:][:, valid])
    assert angle_error(out_p.numpy()[:, valid], expected_p[:, valid]) < 1e-4
    invalid = torch.tensor(~valid)
    assert torch.equal(out_m[:, invalid], magnitude[:, invalid])
    assert torch.equal(out_p[:, invalid], phase[:, invalid])


@pytest.mark.parametrize("centre", [12.0, 12.5, 13.3])
def test_pen_adds_the_stft_of_a_partial_at_the_dabs_fractional_bin(centre):
    """The preview equals a Hann STFT of a cosine at that frequency, where its main lobe is."""
    shape = (1, 9, 12)
    magnitude = torch.zeros(shape)
    phase = torch.zeros(shape)
    params = PenParams(level_db=-20.0)
    inner = (slice(0, 9), slice(0, 12))
    ctx = context(
        shape,
        inner,
        bin0=9,
        radius=(4.0, 1.5),
        full_scale=N_FFT / 4,  # a Hann window's sum over 2
        bins=torch.arange(9, 18),
        centre=(35.0, centre),
    )
    out_m, out_p = pen(magnitude, phase, torch.ones(9, 12), params, ctx)
    # the partial itself, analysed by torch.stft (frames centred on t * hop)
    frequency = centre * RATE / N_FFT
    n = np.arange(60 * HOP)
    signal = torch.tensor(0.1 * np.cos(2 * np.pi * frequency * n / RATE))
    window = torch.hann_window(N_FFT, periodic=True, dtype=torch.float64)
    reference = torch.stft(signal, N_FFT, HOP, window=window, center=True, return_complex=True)
    expected = reference[9:18, 30:42].numpy()
    lobe = np.abs(np.arange(9, 18) - centre) < 1.9
    np.testing.assert_allclose(out_m.numpy()[0][lobe], np.abs(expected)[lobe], rtol=2e-3, atol=1e-3)
    loud = lobe[:, None] & (np.abs(expected) > 0.05 * np.abs(expected).max())
    assert angle_error(out_p.numpy()[0][loud], np.angle(expected)[loud]) < 2e-3
    assert (out_m.numpy()[0][~lobe] == 0).all()


def test_atan2_gives_each_element_the_same_bits_whatever_the_size_and_threads():
    """:func:`~spectropaint.brushes.kernels.phase.atan2` against every element computed in a
    tensor of a whole number of vector blocks on one thread (no element left to torch's scalar
    tail): equal bit for bit for a large tensor on one and two threads and for short pieces of it,
    where torch's own ``atan2`` computes the last elements (and, on several threads, those ending
    each thread's part) by another routine."""
    from spectropaint.brushes.kernels.phase import ATAN2_BLOCK, atan2

    generator = torch.Generator().manual_seed(7)
    n = 100_003
    y, x = torch.randn(2, n, generator=generator)
    pad = -n % ATAN2_BLOCK
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        padded = torch.nn.functional.pad(torch.stack((y, x)), (0, pad))
        reference = torch.atan2(padded[0], padded[1])[:n]
        for count in (1, 2):
            torch.set_num_threads(count)
            assert torch.equal(atan2(y, x), reference)
            for length in (13, 64, 1000, 1013):
                assert torch.equal(atan2(y[:length], x[:length]), reference[:length])
            assert torch.equal(atan2(y.view(1, n), x), reference.view(1, n))  # broadcast
    finally:
        torch.set_num_threads(threads)
