"""Rendered pixels against the numpy oracle: colormaps, frequency scales, zoom, levels, phase, overlays.

The documents span several tiles in both directions (the texture limit is shrunk to 32), and the
second channel differs from the first, so a wrong tile, layer, row order or channel shows.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_render_reference import (
    FakeDocument,
    assert_pixels_match,
    oracle_picture,
    render_offscreen,
    sample_magnitudes,
)

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.colormaps import MAGNITUDE_COLORMAPS
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.view import Overlays, Selection, ViewSettings

pytestmark = pytest.mark.gpu

N_CHANNELS, N_BINS, N_FRAMES = 2, 40, 90
TILE = 32


@pytest.fixture(scope="module")
def document():
    rng = np.random.default_rng(1)
    phase = rng.uniform(-np.pi, np.pi, (N_CHANNELS, N_BINS, N_FRAMES))
    return FakeDocument(sample_magnitudes(N_CHANNELS, N_BINS, N_FRAMES), phase)


@pytest.fixture(scope="module")
def renderer(document):
    renderer = SpectrogramRenderer(
        shared_device(), document, max_texture_dim=TILE, reference_magnitude=1.0
    )
    yield renderer
    renderer.close()


def test_the_document_spans_several_tiles_each_way(renderer):
    assert renderer.phase_grid.tile_cols == 3 and renderer.grid.tile_rows == 2
    assert renderer.grid.tile_cols >= 3  # and the reduced levels after level 0
    assert renderer.grid.tile_width == TILE and renderer.grid.tile_height == TILE


@pytest.mark.parametrize("colormap", MAGNITUDE_COLORMAPS)
def test_native_resolution_matches_the_oracle_for_each_colormap(document, renderer, colormap):
    view = ViewSettings(colormap=colormap)
    picture = render_offscreen(renderer, N_FRAMES, N_BINS, view)
    assert_pixels_match(picture, oracle_picture(document, view, N_FRAMES, N_BINS))


@pytest.mark.parametrize(
    ("scale", "freq_range"),
    [("linear", None), ("log", (70.0, 2500.0)), ("mel", None), ("mel", (300.0, 3000.0))],
)
def test_each_frequency_scale_matches_the_oracle(document, renderer, scale, freq_range):
    view = ViewSettings(
        colormap="viridis",
        freq_scale=scale,
        freq_range=freq_range,
        floor_db=-70.0,
        range_db=60.0,
        gamma=0.6,
        channel=1,
    )
    picture = render_offscreen(renderer, 131, 97, view)
    assert_pixels_match(picture, oracle_picture(document, view, 131, 97))


def test_zoom_and_pan_change_only_uniforms(document, renderer):
    render_offscreen(renderer, 64, 48, ViewSettings())
    renderer.stream()  # every level uploaded: from now on a new view needs no upload
    for view in (
        ViewSettings(
            time_range=(10.5, 40.25), freq_range=(500.0, 3100.0)
        ),  # zoomed in: cells > pixels
        ViewSettings(
            time_range=(-20.0, 70.0), colormap="hot", freq_scale="mel"
        ),  # panned off the start
        ViewSettings(time_range=(60.0, 150.0), freq_scale="log", freq_range=(100.0, 6000.0)),
    ):
        picture = render_offscreen(renderer, 64, 48, view)
        assert renderer.stats.frame_bytes == 0 and renderer.stats.frame_writes == 0
        assert_pixels_match(picture, oracle_picture(document, view, 64, 48))


def test_a_zoomed_out_view_samples_max_pooled_levels_so_a_click_stays_visible():
    n_frames = 6000  # levels of 6000, 1500, 375, 94, 24 and 6 columns
    magnitude = np.full((1, 24, n_frames), 1e-3, np.float32)
    magnitude[0, :, 4321] = 1.0  # one loud frame
    document = FakeDocument(magnitude)
    renderer = SpectrogramRenderer(
        shared_device(), document, max_texture_dim=1024, reference_magnitude=1.0
    )
    try:
        assert renderer.grid.level_widths == (6000, 1500, 375, 94, 24, 6)
        for width in (200, 90, 7):  # 30, 67 and 857 frames per pixel: levels 1, 2 and 4
            view = ViewSettings(colormap="grayscale")
            picture = render_offscreen(renderer, width, 24, view)
            assert_pixels_match(picture, oracle_picture(document, view, width, 24))
            click_column = int(4321 / n_frames * width)
            assert (picture[:, click_column] == 255).all(), width
            # A level column may straddle two pixels: the click shows in at most its neighbour too.
            bright = np.flatnonzero((picture > 128).any(axis=(0, 2)))
            assert set(bright) <= {click_column - 1, click_column, click_column + 1}, width
            assert len(bright) <= 2, width
    finally:
        renderer.close()


def test_phase_view_matches_the_oracle(document, renderer):
    view = ViewSettings(mode="phase", channel=1, time_range=(5.0, 80.0))
    picture = render_offscreen(renderer, 75, 80, view)
    assert_pixels_match(picture, oracle_picture(document, view, 75, 80))


def _changed(renderer, overlays: Overlays) -> np.ndarray:
    """Pixels (180 x 80, two per frame) that ``overlays`` change, bool ``[rows, columns]``."""
    plain = render_offscreen(renderer, 180, 80, ViewSettings(time_range=(0.0, 90.0)))
    marked = render_offscreen(
        renderer, 180, 80, ViewSettings(time_range=(0.0, 90.0), overlays=overlays)
    )
    return (marked != plain).any(axis=-1), marked


def test_the_playhead_is_one_white_pixel_column(document, renderer):
    seconds = 30.25 * document.blocks[0].hop / document.sample_rate  # texel position 30.75
    changed, marked = _changed(renderer, Overlays(playhead_seconds=seconds))
    assert np.flatnonzero(changed.any(axis=0)).tolist() == [61]  # pixel 61 covers [30.5, 31)
    assert (marked[:, 61] == 255).all()


def test_the_selection_tints_exactly_its_rectangle(document, renderer):
    block = document.blocks[0]
    step_hz = block.band_hz[1]
    low, high = -step_hz / 2, (N_BINS - 0.5) * step_hz
    frame_seconds = block.hop / document.sample_rate
    changed, _ = _changed(
        renderer,
        Overlays(selection=Selection(20 * frame_seconds, 50 * frame_seconds, 1100.0, 2300.0)),
    )
    row_centres = np.arange(80) + 0.5
    top, bottom = ((1 - (np.array([2300.0, 1100.0]) - low) / (high - low)) * 80).tolist()
    expected_rows = (row_centres >= top) & (row_centres < bottom)
    expected_cols = np.zeros(180, bool)
    expected_cols[41:101] = True  # frames 20.5 .. 50.5 at two pixels per frame
    np.testing.assert_array_equal(changed, expected_rows[:, None] & expected_cols[None, :])


@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
def test_a_time_selection_over_every_bin_tints_its_columns_on_each_axis(document, renderer, scale):
    # A time selection spans every bin's cell, from below 0 Hz (bin 0's lower edge) to the top: on a
    # log axis the low edge has no logarithm, and the selection must still show.
    block = document.blocks[0]
    step_hz = block.band_hz[1]
    frame_seconds = block.hop / document.sample_rate
    selection = Selection(20 * frame_seconds, 50 * frame_seconds, -step_hz / 2, N_BINS * step_hz)
    plain = render_offscreen(
        renderer, 180, 80, ViewSettings(time_range=(0.0, 90.0), freq_scale=scale)
    )
    marked = render_offscreen(
        renderer,
        180,
        80,
        ViewSettings(
            time_range=(0.0, 90.0), freq_scale=scale, overlays=Overlays(selection=selection)
        ),
    )
    changed = (marked != plain).any(axis=-1)
    expected_cols = np.zeros(180, bool)
    expected_cols[41:101] = True
    np.testing.assert_array_equal(changed.any(axis=0), expected_cols)
    assert changed[:, 45:95].all()  # every row inside the columns, edge to edge
