"""Scroll bars, zoom sliders and the overview's waveform, as numbers (no Qt)."""

import numpy as np
import pytest

from spectropaint.app.navigation import (
    FREQ_STEPS,
    STEPS_PER_TEXEL,
    freq_scroll,
    time_scroll,
    view_at_freq_scroll,
    view_at_time_scroll,
    view_at_zoom,
    zoom_fraction,
)
from spectropaint.app.waveform_summary import BLOCK, WaveformSummary
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping

GEOMETRY = BlockGeometry(
    n_frames=1000, n_bins=513, first_hz=0.0, step_hz=21.5, first_seconds=0.0, step_seconds=0.01
)


def mapping(**view) -> ViewMapping:
    return ViewMapping(GEOMETRY, ViewSettings(**view), 800, 400)


def test_the_time_scroll_bar_is_the_left_edge_among_all_frames():
    state = time_scroll(mapping(time_range=(250.0, 350.0)))
    assert state.page == 100 * STEPS_PER_TEXEL
    assert state.value == 250 * STEPS_PER_TEXEL and state.maximum == 900 * STEPS_PER_TEXEL
    moved = view_at_time_scroll(mapping(time_range=(250.0, 350.0)), 600 * STEPS_PER_TEXEL)
    assert moved.time_range == pytest.approx((600.0, 700.0))
    assert time_scroll(mapping()).maximum == 0  # everything shown: nothing to scroll


def test_the_frequency_scroll_bar_reads_top_down():
    top = mapping(freq_range=(8000.0, GEOMETRY.high_edge_hz))
    assert freq_scroll(top).value == 0
    low = view_at_freq_scroll(top, freq_scroll(top).maximum)
    one_step = (GEOMETRY.high_edge_hz - GEOMETRY.low_edge_hz) / FREQ_STEPS
    assert low.freq_range[0] == pytest.approx(GEOMETRY.low_edge_hz, abs=one_step)
    assert low.freq_range[1] - low.freq_range[0] == pytest.approx(
        GEOMETRY.high_edge_hz - 8000.0, rel=1e-3
    )
    assert freq_scroll(top).maximum + freq_scroll(top).page == FREQ_STEPS


@pytest.mark.parametrize("axis", ["time", "freq"])
@pytest.mark.parametrize("scale", ["linear", "log"])
def test_zoom_sliders_go_from_everything_to_the_closest_view_and_back(axis, scale):
    whole = mapping(freq_scale=scale)
    assert zoom_fraction(whole, axis) == 0.0
    for fraction in (0.25, 0.5, 1.0):
        view = view_at_zoom(whole, axis, fraction)
        assert zoom_fraction(ViewMapping(GEOMETRY, view, 800, 400), axis) == pytest.approx(
            fraction, abs=1e-6
        )
    half = view_at_zoom(whole, "time", 0.5)
    assert half.time_range[1] - half.time_range[0] == pytest.approx(np.sqrt(1000 * 8))


def test_the_waveform_summary_keeps_block_extremes_and_updates_edits():
    rng = np.random.default_rng(3)
    samples = rng.uniform(-0.5, 0.5, (10 * BLOCK + 17, 2)).astype(np.float32)
    summary = WaveformSummary(samples)
    assert summary.low.shape == (2, 11)
    np.testing.assert_array_equal(summary.high[0, 3], samples[3 * BLOCK : 4 * BLOCK, 0].max())
    np.testing.assert_array_equal(summary.low[1, 10], samples[10 * BLOCK :, 1].min())
    low, high = summary.columns(4)
    assert low.shape == (2, 4)
    # column 0 of 4 over 11 blocks holds blocks 0 and 1
    np.testing.assert_array_equal(high[:, 0], samples[: 2 * BLOCK].max(axis=0))
    np.testing.assert_array_equal(low[:, 3], samples[8 * BLOCK :].min(axis=0))
    samples[5 * BLOCK + 7, 0] = 0.9
    summary.update(samples, 5 * BLOCK + 7, 5 * BLOCK + 8)
    assert summary.high[0, 5] == pytest.approx(0.9)
    assert summary.columns(1)[1][0, 0] == pytest.approx(0.9)


def test_the_overview_lights_each_channels_band_between_its_extremes():
    from spectropaint.app.window.overview import BACKGROUND, waveform_pixels

    low = np.array([[-1.0, 0.0, -0.5], [0.0, 0.0, 0.0]])
    high = np.array([[1.0, 0.0, 0.5], [0.0, 0.0, 0.0]])
    pixels = waveform_pixels(low, high, 40)
    lit = (pixels != BACKGROUND.getRgb()[:3]).any(axis=-1)
    assert lit[:20, 0].sum() >= 19  # full scale: the whole top band
    assert lit[:20, 1].sum() <= 2 and lit[9:11, 1].any()  # silence: a line in the middle
    assert 9 <= lit[:20, 2].sum() <= 12  # half scale: half the band
    assert lit[20:, :].sum() <= 6 and not lit[20:25].any()  # the second channel is silent


def test_the_waveform_summary_is_every_block_s_extremes_however_it_is_reduced(monkeypatch):
    """Blocks reduced a few at a time (a long sound's), and an update across those runs."""
    from spectropaint.app import waveform_summary

    monkeypatch.setattr(waveform_summary, "BLOCKS_AT_ONCE", 3)
    samples = np.random.default_rng(4).uniform(-1, 1, (17 * BLOCK + 40, 3)).astype(np.float32)
    summary = WaveformSummary(samples)
    blocks = [samples[k * BLOCK : (k + 1) * BLOCK] for k in range(18)]
    np.testing.assert_array_equal(summary.low, np.stack([b.min(axis=0) for b in blocks], axis=1))
    np.testing.assert_array_equal(summary.high, np.stack([b.max(axis=0) for b in blocks], axis=1))
    samples[2 * BLOCK : 11 * BLOCK + 5] *= 0.5
    summary.update(samples, 2 * BLOCK + 1, 11 * BLOCK + 5)
    blocks = [samples[k * BLOCK : (k + 1) * BLOCK] for k in range(18)]
    np.testing.assert_array_equal(summary.high, np.stack([b.max(axis=0) for b in blocks], axis=1))
