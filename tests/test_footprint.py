"""The brush outline is the dab's true footprint: an ellipse in frames and bins, cut where the bins
end, mapped through the view's warp (no Qt)."""

import numpy as np
import pytest

from spectropaint.app.tools.footprint import THINNINGS, Footprint, outline_polygon
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping

GEOMETRY = BlockGeometry(
    n_frames=400, n_bins=1025, first_hz=0.0, step_hz=21.533, first_seconds=0.0, step_seconds=0.0116
)


def mapping(scale: str, **view) -> ViewMapping:
    return ViewMapping(GEOMETRY, ViewSettings(freq_scale=scale, **view), 800, 500)


def cells_of(points: np.ndarray, where: ViewMapping) -> np.ndarray:
    """Pixels back to (frame, bin) through the inverse mapping the pointer uses."""
    found = [where.to_document(x, y) for x, y in points]
    return np.array([(p.frame, p.bin) for p in found])


@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
def test_every_outline_point_is_on_the_ellipse_in_cells(scale):
    where = mapping(scale)
    footprint = Footprint(frame=200.0, bin=300.0, radius_frames=12.0, radius_bins=40.0)
    points = outline_polygon(footprint, where)
    cells = cells_of(points, where)
    distance = np.hypot((cells[:, 0] - 200) / 12, (cells[:, 1] - 300) / 40)
    np.testing.assert_allclose(distance, 1.0, atol=1e-6)


def test_on_a_log_axis_the_outline_is_taller_below_the_centre_than_above():
    # bins are evenly spaced in Hz: on a log axis the lower half spans more rows than the upper
    where = mapping("log")
    footprint = Footprint(frame=200.0, bin=20.0, radius_frames=10.0, radius_bins=10.0)
    points = outline_polygon(footprint, where)
    centre_y = float(where.y_of_hz(20 * GEOMETRY.step_hz))
    above, below = centre_y - points[:, 1].min(), points[:, 1].max() - centre_y
    assert below / above == pytest.approx(np.log(20 / 10) / np.log(30 / 20), rel=1e-6)
    assert np.isfinite(points).all()


def test_a_brush_larger_than_the_bins_below_it_stops_at_the_lowest_bin():
    # linear axis: the ellipse would reach 30 bins below bin 0; the outline stops at bin 0's edge
    where = mapping("linear")
    footprint = Footprint(frame=200.0, bin=10.0, radius_frames=10.0, radius_bins=40.0)
    cells = cells_of(outline_polygon(footprint, where), where)
    assert cells[:, 1].min() == pytest.approx(-0.5, abs=1e-6)
    assert cells[:, 1].max() == pytest.approx(50.0, abs=1e-3)
    bottom_row = float(where.y_of_hz(GEOMETRY.low_edge_hz))
    assert outline_polygon(footprint, where)[:, 1].max() == pytest.approx(bottom_row, abs=1e-6)


def test_on_a_log_axis_a_large_low_brush_is_cut_below_the_view_without_reaching_0_hz():
    where = mapping("log")
    footprint = Footprint(frame=200.0, bin=5.0, radius_frames=10.0, radius_bins=60.0)
    points = outline_polygon(footprint, where)
    assert np.isfinite(points).all()
    assert points[:, 1].max() > where.height  # below the bottom edge...
    cells = cells_of(points, where)
    assert (cells[:, 1] * GEOMETRY.step_hz > 0).all()  # ...but never at or below 0 Hz


def test_a_footprint_with_no_bins_under_it_has_no_outline():
    where = mapping("linear")
    assert len(outline_polygon(Footprint(10.0, -100.0, 5.0, 5.0), where)) == 0


def test_uneven_bands_map_through_their_own_frequencies():
    # a constant-Q band table: the outline's top and bottom are the band frequencies at bin +- r
    band = 55.0 * 2 ** (np.arange(1025) / 48)
    band = band[band < GEOMETRY.high_edge_hz]
    where = mapping("log")
    footprint = Footprint(frame=200.0, bin=100.0, radius_frames=8.0, radius_bins=12.0)
    points = outline_polygon(footprint, where, band_hz=band)
    top, bottom = points[:, 1].min(), points[:, 1].max()
    assert top == pytest.approx(float(where.y_of_hz(band[112])), abs=0.05)
    assert bottom == pytest.approx(float(where.y_of_hz(band[88])), abs=0.05)


def mean_gap(points: np.ndarray) -> float:
    return float(np.hypot(*(np.roll(points, -1, axis=0) - points).T).mean())


@pytest.mark.parametrize(
    ("radius_frames", "radius_bins", "kept"),
    [
        (0.1, 6.0, 12),  # a sliver (a long file seen whole): every 8th point
        (2.0, 8.0, 16),  # every 6th
        (4.0, 8.0, 24),  # every 4th
        (6.0, 8.0, 32),  # every 3rd
        (60.0, 200.0, 96),  # large: every point
    ],
)
def test_a_small_outline_keeps_every_kth_point_at_most_two_pixels_apart(
    radius_frames, radius_bins, kept
):
    where = mapping("linear")  # 2 pixels a frame, about 0.5 a bin
    footprint = Footprint(200.0, 300.0, radius_frames, radius_bins)
    thinned = outline_polygon(footprint, where)
    every = outline_polygon(footprint, where, step_px=None)
    assert len(every) == 96 and len(thinned) == kept
    np.testing.assert_array_equal(thinned, every[:: 96 // kept])
    assert mean_gap(thinned) <= 2.0 or kept == 96
    coarser = [k for k in THINNINGS if k > 96 // kept]
    if coarser:  # the next thinning would have left them further apart than that
        assert mean_gap(every[:: min(coarser)]) > 2.0
    # the leftmost, rightmost, top and bottom points stay: the outline's box is the same
    np.testing.assert_allclose(np.ptp(thinned, axis=0), np.ptp(every, axis=0), rtol=1e-12)


def test_a_cut_outline_keeps_every_point():
    where = mapping("linear")
    footprint = Footprint(frame=200.0, bin=1.0, radius_frames=0.5, radius_bins=6.0)  # below bin 0
    thinned = outline_polygon(footprint, where)
    np.testing.assert_array_equal(thinned, outline_polygon(footprint, where, step_px=None))
    assert len(thinned) > 50
