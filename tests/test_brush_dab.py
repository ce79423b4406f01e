"""One dab on a real document: the mask, the blend, the clipping at the grid's edges, bit-exact outside."""

import numpy as np
import pytest
import scipy.ndimage
import torch
from brush_fixtures import RATE, small_document

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings


def grids(document):
    block = document.blocks[0]
    return block.magnitude.clone(), block.phase.clone()


def numpy_mask(shape, x, y, settings, pressure=1.0):
    """The dab's weight on the whole grid, written out independently (raised-cosine falloff)."""
    size = 1 - settings.pressure_size + settings.pressure_size * pressure
    bins, frames = np.mgrid[0 : shape[0], 0 : shape[1]]
    r = np.hypot(
        (frames - x) / (settings.radius_frames * size), (bins - y) / (settings.radius_bins * size)
    )
    h = settings.hardness
    falloff = 0.5 + 0.5 * np.cos(np.pi * np.clip((r - h) / (1 - h), 0, 1)) if h < 1 else 1.0
    weight = settings.strength * (
        1 - settings.pressure_strength + settings.pressure_strength * pressure
    )
    return np.where(r < 1, falloff, 0.0) * weight


SETTINGS = BrushSettings(radius_frames=9.0, radius_bins=6.0, hardness=0.4, strength=0.8)


def one_dab(document, brush, x, y, settings=SETTINGS, params=None, pressure=1.0):
    session = StrokeSession(document, brush, settings, params=params)
    session.add_events([InputEvent(0.0, x, y, pressure)])
    session.end()


@pytest.mark.parametrize("brush", sorted(set(BRUSHES) - {"warp"}))
def test_a_dab_changes_cells_inside_its_ellipse_only_bit_for_bit(brush):
    document = small_document()
    before_m, before_p = grids(document)
    one_dab(
        document, brush, 100.3, 60.7, params={"offset_frames": -50} if brush == "clone" else None
    )
    after_m, after_p = grids(document)
    outside = torch.from_numpy(numpy_mask(before_m.shape[1:], 100.3, 60.7, SETTINGS) == 0)
    assert torch.equal(after_m[:, outside], before_m[:, outside])
    assert torch.equal(after_p[:, outside], before_p[:, outside])
    changed = (after_m != before_m) | (after_p != before_p)
    assert changed[:, ~outside].float().mean() > 0.9


def test_warp_changes_only_cells_inside_its_two_dabs():
    document = small_document()
    before_m, before_p = grids(document)
    settings = BrushSettings(radius_frames=9.0, radius_bins=6.0, hardness=0.4, spacing=0.5)
    session = StrokeSession(document, "warp", settings)
    session.add_events([InputEvent(0.0, 100.0, 60.0), InputEvent(0.1, 104.5, 60.0)])
    after_m, after_p = grids(document)
    shape = before_m.shape[1:]
    outside = (numpy_mask(shape, 100.0, 60.0, settings) == 0) & (
        numpy_mask(shape, 104.5, 60.0, settings) == 0
    )
    outside = torch.from_numpy(outside)
    assert torch.equal(after_m[:, outside], before_m[:, outside])
    assert torch.equal(after_p[:, outside], before_p[:, outside])
    assert (after_m[:, ~outside] - before_m[:, ~outside]).abs().max() > 0.01 * before_m.max()


def test_gain_dab_blends_through_the_mask():
    document = small_document()
    before_m, before_p = grids(document)
    one_dab(document, "gain", 40.5, 30.25, params={"gain_db": -20.0}, pressure=0.7)
    weight = numpy_mask(before_m.shape[1:], 40.5, 30.25, SETTINGS, pressure=0.7)
    expected = before_m.numpy() * (1 + (0.1 - 1) * weight)
    np.testing.assert_allclose(document.blocks[0].magnitude.numpy(), expected, rtol=2e-6)
    assert torch.equal(document.blocks[0].phase, before_p)


@pytest.mark.parametrize("x, y", [(120.0, 64.0), (1.5, 2.0), (249.0, 127.5)])
def test_blur_dab_matches_scipy_on_the_grid_reflected_not_wrapped_at_edges(x, y):
    document = small_document()
    before_m, _ = grids(document)
    one_dab(document, "blur", x, y, params={"sigma": 0.4})
    blurred = scipy.ndimage.gaussian_filter(
        before_m.double().numpy(), sigma=(0, 0.4 * 6.0, 0.4 * 9.0), mode="reflect", truncate=4.0
    )
    weight = numpy_mask(before_m.shape[1:], x, y, SETTINGS)
    expected = before_m.numpy() + (blurred - before_m.numpy()) * weight
    error = np.abs(document.blocks[0].magnitude.numpy() - expected).max()
    assert error < 1e-5 * before_m.max().item()


def test_dab_outside_the_grid_changes_nothing():
    document = small_document()
    before_m, before_p = grids(document)
    one_dab(document, "erase", -50.0, 60.0)
    one_dab(document, "erase", 100.0, 500.0)
    assert torch.equal(document.blocks[0].magnitude, before_m)
    assert torch.equal(document.blocks[0].phase, before_p)


def test_pressure_scales_size_and_weight():
    document = small_document()
    before_m, _ = grids(document)
    settings = BrushSettings(radius_frames=12.0, radius_bins=12.0, hardness=0.5, pressure_size=1.0)
    one_dab(document, "erase", 100.0, 60.0, settings=settings, pressure=0.5)
    changed = (document.blocks[0].magnitude != before_m)[0].numpy()
    bins, frames = np.nonzero(changed)
    assert frames.max() - frames.min() <= 11 and bins.max() - bins.min() <= 11
    weight = numpy_mask(before_m.shape[1:], 100.0, 60.0, settings, pressure=0.5)
    assert weight.max() == pytest.approx(0.5)
    np.testing.assert_allclose(
        document.blocks[0].magnitude[0].numpy(),
        before_m[0].numpy() * (1 + (10 ** (-150 / 20) - 1) * weight),
        rtol=2e-6,
    )


def test_blur_wider_than_the_grid_reflects_repeatedly_like_scipy():
    samples = 0.1 * np.random.default_rng(3).standard_normal((1, 4000))
    document = Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=64, hop=16), device="cpu"
    )
    before_m, _ = grids(document)
    settings = BrushSettings(radius_frames=20.0, radius_bins=20.0, hardness=0.5)
    assert before_m.shape[1] == 33  # the blur's support (160 bins) is several grids high
    one_dab(document, "blur", 100.0, 16.0, settings=settings, params={"sigma": 2.0})
    blurred = scipy.ndimage.gaussian_filter(
        before_m.double().numpy(), sigma=(0, 40.0, 40.0), mode="reflect", truncate=4.0
    )
    weight = numpy_mask(before_m.shape[1:], 100.0, 16.0, settings)
    expected = before_m.numpy() + (blurred - before_m.numpy()) * weight
    error = np.abs(document.blocks[0].magnitude.numpy() - expected).max()
    assert error < 1e-5 * before_m.max().item()


@pytest.mark.parametrize(
    ("first", "stop"),
    [(2, 9), (0, 20), (-3, 5), (15, 24), (-25, 3)],  # inside, whole, past edges
)
def test_a_regions_indices_are_a_view_inside_the_grid_and_reflected_past_it(first, stop):
    """:func:`dab._axes`' indices (and :func:`dab._bins_hz`' frequencies) against the arange,
    reflection and gather they replace; inside the grid a view of indices made once (no launch
    on a GPU), and a slice of the stroke's frequencies (no gather)."""
    from types import SimpleNamespace

    from spectropaint.brushes import dab
    from spectropaint.brushes.kernels.phase import kept_indices
    from spectropaint.transforms.regions import Region

    cpu = torch.device("cpu")
    block = SimpleNamespace(n_bins=20, n_frames=20)
    region = Region(first, stop, first, stop, (0,), 0)
    bins, frames = dab._axes(region, block, cpu)
    expected = torch.arange(first, stop)
    if first < 0 or stop > 20:
        expected = dab.reflect_index(expected, 20)
    assert torch.equal(bins, expected) and torch.equal(frames, expected)
    stroke = SimpleNamespace(band_hz=torch.linspace(0.0, 11025.0, 20, dtype=torch.float64))
    hz = dab._bins_hz(stroke, region, bins, 20)
    assert torch.equal(hz, stroke.band_hz[expected])
    inside = first >= 0 and stop <= 20
    assert (bins._base is kept_indices(20, cpu)) == inside  # a view of the indices made once
    assert (hz._base is stroke.band_hz) == inside
