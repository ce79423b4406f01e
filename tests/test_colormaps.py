"""Colour tables against reference values: matplotlib's published tables and the formulas of the
piecewise-linear maps, plus the interpolating lookup the shader and the colour bar share."""

from __future__ import annotations

import numpy as np
import pytest

from spectropaint.gpu.colormaps import (
    CYCLIC_COLORMAPS,
    MAGNITUDE_COLORMAPS,
    colormap_index,
    colormap_tables,
    lookup,
)
from spectropaint.transforms.errors import SettingsError

# Entries 0, 64, 128, 200 and 255 of matplotlib's 256-entry tables (matplotlib 3.11,
# ``matplotlib.colormaps[name].resampled(256)(index)``), six decimals.
MATPLOTLIB = {
    "viridis": [
        (0.267004, 0.004874, 0.329415),
        (0.229739, 0.322361, 0.545706),
        (0.127568, 0.566949, 0.550556),
        (0.440137, 0.811138, 0.340967),
        (0.993248, 0.906157, 0.143936),
    ],
    "magma": [
        (0.001462, 0.000466, 0.013866),
        (0.316654, 0.07169, 0.48538),
        (0.716387, 0.214982, 0.47529),
        (0.992785, 0.594891, 0.410283),
        (0.987053, 0.991438, 0.749504),
    ],
    "inferno": [
        (0.001462, 0.000466, 0.013866),
        (0.3415, 0.062325, 0.429425),
        (0.735683, 0.215906, 0.330245),
        (0.985952, 0.61575, 0.025592),
        (0.988362, 0.998364, 0.644924),
    ],
    "plasma": [
        (0.050383, 0.029803, 0.527975),
        (0.494877, 0.01199, 0.657865),
        (0.798216, 0.280197, 0.469538),
        (0.984199, 0.629718, 0.224595),
        (0.940015, 0.975158, 0.131326),
    ],
    "twilight": [
        (0.88575, 0.850009, 0.887974),
        (0.383122, 0.457063, 0.729846),
        (0.187745, 0.077252, 0.213874),
        (0.738791, 0.420537, 0.349133),
        (0.885712, 0.850022, 0.885725),
    ],
}
INDICES = [0, 64, 128, 200, 255]


def test_every_table_has_256_rgb_entries_in_the_unit_range():
    tables = colormap_tables()
    assert list(tables) == list(MAGNITUDE_COLORMAPS + CYCLIC_COLORMAPS)
    assert {"viridis", "magma", "inferno", "plasma", "hot", "grayscale"} <= set(MAGNITUDE_COLORMAPS)
    for table in tables.values():
        assert table.shape == (256, 3) and table.dtype == np.float32
        assert table.min() >= 0 and table.max() <= 1


@pytest.mark.parametrize("name", sorted(MATPLOTLIB))
def test_tabulated_maps_match_matplotlib(name):
    table = colormap_tables()[name]
    np.testing.assert_allclose(table[INDICES], MATPLOTLIB[name], atol=2e-5)


def _piecewise(x: np.ndarray, points: list[tuple[float, float]]) -> np.ndarray:
    return np.interp(x, [p for p, _ in points], [v for _, v in points])


def test_hot_follows_its_segments_black_red_yellow_white():
    # matplotlib's "hot" (from MATLAB): red ramps from 0.0416 to 1 by x = 0.365079, green from 0 to 1
    # over 0.365079 .. 0.746032, blue from 0 to 1 over 0.746032 .. 1.
    x = np.linspace(0, 1, 256)
    expected = np.stack(
        [
            _piecewise(x, [(0, 0.0416), (0.365079, 1), (1, 1)]),
            _piecewise(x, [(0, 0), (0.365079, 0), (0.746032, 1), (1, 1)]),
            _piecewise(x, [(0, 0), (0.746032, 0), (1, 1)]),
        ],
        axis=-1,
    )
    np.testing.assert_allclose(colormap_tables()["hot"], expected, atol=2e-5)


def test_grayscale_is_the_identity():
    ramp = np.linspace(0, 1, 256)
    np.testing.assert_allclose(colormap_tables()["grayscale"], np.stack([ramp] * 3, -1), atol=2e-5)


def test_perceptual_maps_get_brighter_from_start_to_end():
    for name in ("viridis", "magma", "inferno", "plasma", "grayscale"):
        luma = colormap_tables()[name] @ np.array([0.2126, 0.7152, 0.0722])
        assert np.all(np.diff(luma) > -1e-3), name


def test_the_phase_map_is_cyclic():
    table = colormap_tables()["twilight"]
    assert np.abs(table[0] - table[-1]).max() < 0.01


def test_lookup_interpolates_between_entries_and_clips():
    table = colormap_tables()["viridis"].astype(np.float64)
    np.testing.assert_allclose(lookup("viridis", np.array([0.0, 1.0])), table[[0, 255]], atol=1e-7)
    np.testing.assert_allclose(
        lookup("viridis", 100.5 / 255), (table[100] + table[101]) / 2, atol=1e-7
    )
    np.testing.assert_allclose(lookup("viridis", np.array([-3.0, 7.0])), table[[0, 255]], atol=1e-7)


def test_unknown_names_are_settings_errors_that_list_the_choices():
    with pytest.raises(SettingsError, match="unknown colormap 'jet'; use one of magma, viridis"):
        colormap_index("jet")
    with pytest.raises(SettingsError, match="cyclic colormap 'magma'"):
        colormap_index("magma", cyclic=True)
