"""NSGT documents on screen and in PNGs: pixels against a numpy oracle of shaders/bands.wgsl, dirty
uploads of a stroke, and two tones a semitone apart at 55 Hz drawn as two rows."""

from __future__ import annotations

import numpy as np
import pytest
from test_render_reference import (
    _colours,
    _levels,
    _taps,
    _unwarp,
    _warp,
    assert_pixels_match,
    render_offscreen,
)

from spectropaint.brushes.engine import paint
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.bands_renderer import BandsRenderer, band_edges
from spectropaint.gpu.geometry import reference_geometry
from spectropaint.gpu.png_export import export_png
from spectropaint.gpu.renderer_choice import renderer_for
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.document import Document
from spectropaint.transforms.nsgt_design import NSGTSettings

pytestmark = pytest.mark.gpu

RATE = 8000
LEVEL_FACTOR = 4


def music(seconds: float, rate: int = RATE) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    rng = np.random.default_rng(4)
    left = 0.3 * np.sin(2 * np.pi * 440 * t * (1 + 0.1 * t)) + 0.01 * rng.standard_normal(t.size)
    left[int(1.5 * rate)] += 0.9  # a click
    right = 0.2 * np.sin(2 * np.pi * 220 * t) + 0.02 * rng.standard_normal(t.size)
    return np.stack([left, right])


@pytest.fixture(scope="module")
def document():
    settings = NSGTSettings(bins_per_octave=12, fmin=50.0)
    return Document.from_samples(music(3.0), RATE, settings=settings, device="cpu")


def pair_sum(document, group: int, channel: int) -> np.ndarray:
    """``even + odd`` on the even block's frames (complex128), from the coefficients."""
    even, odd = document.blocks[2 * group], document.blocks[2 * group + 1]
    lag = document.transform.slice_length // 2 // even.hop

    def coefficients(block):
        magnitude = block.magnitude[channel].double().numpy()
        return magnitude * np.exp(1j * block.phase[channel].double().numpy())

    total = coefficients(even)
    total[:, lag:] += coefficients(odd)[:, : total.shape[1] - lag]
    return total


def pair_magnitude(document, group: int, channel: int) -> np.ndarray:
    """``|even + odd|`` on the even block's frames, computed here from the coefficients."""
    return np.abs(pair_sum(document, group, channel))


def group_bands(document):
    """Each group's number, even block and band edges (at the geometric means of neighbouring
    centres, in the order of the groups)."""
    centres = np.concatenate([block.band_hz for block in document.blocks[::2]])
    edges = band_edges(centres, RATE / 2)
    first = 0
    for group in range(len(document.blocks) // 2):
        block = document.blocks[2 * group]
        yield group, block, edges[first : first + block.n_bins + 1]
        first += block.n_bins


def oracle_bands(document, view: ViewSettings, width: int, height: int) -> np.ndarray:
    """What fs_bands should draw: per pixel, the largest pair magnitude of every group whose bands
    (between edges at the geometric means of neighbouring centres) and frames (each group's own
    time rate, in its reduced level about a pixel wide) the pixel covers."""
    geometry = reference_geometry(document)
    t0, t1, low, high = view.visible(geometry)
    w_lo, w_hi = _warp(low, view.freq_scale), _warp(high, view.freq_scale)
    up = height - np.arange(height)
    hz_a = _unwarp(w_lo + (up - 1) * (w_hi - w_lo) / height, view.freq_scale)
    hz_b = _unwarp(w_lo + up * (w_hi - w_lo) / height, view.freq_scale)
    texel_a = t0 + np.arange(width) * (t1 - t0) / width
    texel_b = t0 + (np.arange(width) + 1) * (t1 - t0) / width
    magnitude = np.full((height, width), -1.0)
    for group, block, mine in group_bands(document):
        n_bins = block.n_bins
        seconds_a = (texel_a - 0.5) * geometry.step_seconds
        seconds_b = (texel_b - 0.5) * geometry.step_seconds
        step = block.hop / RATE
        frame_a = (seconds_a - block.frame_seconds[0]) / step + 0.5
        frame_b = (seconds_b - block.frame_seconds[0]) / step + 0.5
        levels = _levels(pair_magnitude(document, group, view.channel))
        for x in range(width):
            level = 0
            while level + 1 < len(levels) and frame_b[x] - frame_a[x] >= LEVEL_FACTOR ** (
                level + 1
            ):
                level += 1
            scale = LEVEL_FACTOR**level
            columns = list(_taps(frame_a[x] / scale, frame_b[x] / scale, levels[level].shape[1]))
            if not columns:
                continue
            column_max = levels[level][:, columns].max(axis=1)
            for y in range(height):
                if hz_b[y] <= mine[0] or hz_a[y] >= mine[-1]:
                    continue
                ba = np.interp(hz_a[y], mine, np.arange(n_bins + 1))
                bb = np.interp(hz_b[y], mine, np.arange(n_bins + 1))
                rows = list(_taps(ba, bb, n_bins))
                if rows:
                    magnitude[y, x] = max(magnitude[y, x], column_max[rows].max())
    db = 20 * np.log10(np.maximum(magnitude, 1e-30))
    values = np.clip((db - view.resolved_floor_db) / view.range_db, 0.0, 1.0)
    values = np.where(values > 0, values**view.gamma, 0.0)
    rgb = _colours(view.colormap, values)
    return np.where((magnitude >= 0)[..., None], rgb, 0).astype(np.uint8)


def oracle_phase(document, view: ViewSettings, width: int, height: int):
    """What fs_bands draws in the phase view, and where the phase is defined: per pixel, the
    angle of the pair's sum at the band (between edges at the geometric means of neighbouring
    centres) and frame (each group's own rate) under the pixel's centre, through the cyclic colour
    map; ``defined`` is False where that sum is 100 dB below the loudest (its angle is noise)."""
    geometry = reference_geometry(document)
    t0, t1, low, high = view.visible(geometry)
    w_lo, w_hi = _warp(low, view.freq_scale), _warp(high, view.freq_scale)
    up = height - np.arange(height)
    hz = _unwarp(w_lo + (up - 0.5) * (w_hi - w_lo) / height, view.freq_scale)
    seconds = (t0 + (np.arange(width) + 0.5) * (t1 - t0) / width - 0.5) * geometry.step_seconds
    angle = np.zeros((height, width))
    inside = np.zeros((height, width), dtype=bool)
    defined = np.ones((height, width), dtype=bool)
    loudest = max(
        np.abs(pair_sum(document, g, view.channel)).max() for g in range(len(document.blocks) // 2)
    )
    for group, block, mine in group_bands(document):
        n_bins = block.n_bins
        total = pair_sum(document, group, view.channel)
        frames = np.floor((seconds - block.frame_seconds[0]) * RATE / block.hop + 0.5).astype(int)
        rows = (hz >= mine[0]) & (hz < mine[-1])
        bins = np.minimum(np.searchsorted(mine, hz, side="right") - 1, n_bins - 1)
        columns = (frames >= 0) & (frames < total.shape[1])
        cells = total[np.clip(bins, 0, n_bins - 1)][:, np.clip(frames, 0, total.shape[1] - 1)]
        here = rows[:, None] & columns[None, :]
        angle = np.where(here, np.angle(cells), angle)
        inside |= here
        defined &= ~(rows[:, None] & (np.abs(cells) < 1e-5 * loudest))
    rgb = _colours(view.phase_colormap, np.mod(angle / (2 * np.pi) + 0.5, 1.0))
    return np.where(inside[..., None], rgb, 0).astype(np.uint8), defined


@pytest.fixture(scope="module")
def renderer(document):
    renderer = renderer_for(shared_device(), document, max_texture_dim=64)
    assert isinstance(renderer, BandsRenderer)
    yield renderer
    renderer.close()


@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
def test_pixels_match_the_oracle_on_every_frequency_scale(renderer, document, scale):
    view = ViewSettings(freq_scale=scale, channel=0)
    picture = render_offscreen(renderer, 120, 90, view)
    assert_pixels_match(picture, oracle_bands(document, view, 120, 90))
    assert (picture.max(axis=-1) > 40).mean() > 0.3  # it drew the spectrogram, not a blank


def test_zoomed_in_the_other_channel_matches_the_oracle(renderer, document):
    geometry = reference_geometry(document)
    view = ViewSettings(
        freq_scale="log",
        channel=1,
        time_range=(0.3 * geometry.n_frames, 0.6 * geometry.n_frames),
        freq_range=(150.0, 1200.0),
    )
    picture = render_offscreen(renderer, 100, 80, view)
    assert_pixels_match(picture, oracle_bands(document, view, 100, 80))


@pytest.mark.parametrize("scale", ["linear", "log"])
def test_the_phase_view_matches_the_angle_of_the_pair_sum_through_the_cyclic_map(
    renderer, document, scale
):
    geometry = reference_geometry(document)
    view = ViewSettings(
        freq_scale=scale,
        channel=0,
        mode="phase",
        time_range=(0.2 * geometry.n_frames, 0.5 * geometry.n_frames),
    )
    picture = render_offscreen(renderer, 96, 80, view)
    expected, defined = oracle_phase(document, view, 96, 80)
    assert defined.mean() > 0.9
    assert_pixels_match(
        np.where(defined[..., None], picture, 0), np.where(defined[..., None], expected, 0)
    )
    magnitude = render_offscreen(
        renderer, 96, 80, ViewSettings(freq_scale=scale, channel=0, time_range=view.time_range)
    )
    assert (np.abs(picture.astype(int) - magnitude).max(-1) > 30).mean() > 0.5  # not the magnitude
    hues = np.unique(picture.reshape(-1, 3), axis=0)
    assert len(hues) > 200  # phases all round the circle, not one colour


def test_a_stroke_uploads_only_what_it_reached_and_draws_as_the_oracle_says():
    document = Document.from_samples(
        music(3.0), RATE, settings=NSGTSettings(bins_per_octave=12, fmin=50.0), device="cpu"
    )
    renderer = BandsRenderer(shared_device(), document, max_texture_dim=64)
    view = ViewSettings(freq_scale="log", channel=0)
    render_offscreen(renderer, 100, 80, view)
    full = renderer.stats.total_bytes
    settings = BrushSettings(radius_seconds=0.15, radius_semitones=2.0, hardness=1.0)
    changed = paint(
        document, "erase", [InputEvent(0.0, 1.0, 440.0), InputEvent(0.1, 1.4, 440.0)], settings
    )
    renderer.mark_dirty(changed)  # what the session tells the canvas
    picture = render_offscreen(renderer, 100, 80, view)
    assert 0 < renderer.stats.frame_bytes < full / 5
    assert_pixels_match(picture, oracle_bands(document, view, 100, 80))
    renderer.close()


def test_a_stroke_shown_in_the_phase_view_uploads_its_phase_and_draws_as_the_oracle_says():
    document = Document.from_samples(
        music(3.0), RATE, settings=NSGTSettings(bins_per_octave=12, fmin=50.0), device="cpu"
    )
    renderer = BandsRenderer(shared_device(), document, max_texture_dim=64)
    view = ViewSettings(freq_scale="log", channel=0, mode="phase")
    before = render_offscreen(renderer, 100, 80, view)
    settings = BrushSettings(radius_seconds=0.15, radius_semitones=2.0, hardness=1.0)
    changed = paint(
        document, "warp", [InputEvent(0.0, 1.0, 440.0), InputEvent(0.1, 1.4, 520.0)], settings
    )
    renderer.mark_dirty(changed)
    picture = render_offscreen(renderer, 100, 80, view)
    expected, defined = oracle_phase(document, view, 100, 80)
    assert_pixels_match(
        np.where(defined[..., None], picture, 0), np.where(defined[..., None], expected, 0)
    )
    assert (np.abs(picture.astype(int) - before).max(-1) > 8).any()  # the stroke shows
    renderer.close()


def test_two_tones_a_semitone_apart_at_55_hz_are_two_rows_in_the_png(tmp_path):
    from PIL import Image

    rate = 22050
    t = np.arange(12 * rate) / rate
    signal = 0.3 * np.sin(2 * np.pi * 55.0 * t) + 0.3 * np.sin(2 * np.pi * 58.27 * t)
    document = Document.from_samples(
        signal, rate, settings=NSGTSettings(bins_per_octave=48), device="cpu"
    )
    path = tmp_path / "tones.png"
    export_png(
        document,
        path,
        size=(64, 600),
        colormap="grayscale",
        range_db=80,
        freq_scale="log",
    )
    column = np.asarray(Image.open(path).convert("L"), dtype=float)[:, 20:44].mean(axis=1)
    db = column / 255 * 80 - 80 - 20 * np.log10(0.3)  # re each tone's amplitude
    low, high = 20 * np.log10(55.0), 20 * np.log10(58.27)
    top, bottom = np.log(rate / 2), np.log(20.0)
    rows = [int((top - np.log(hz)) / (top - bottom) * 600) for hz in (55.0, 58.27)]
    lo_row, hi_row = max(rows), min(rows)  # low frequencies lower down
    assert low < high
    peak_low = db[lo_row - 2 : lo_row + 3].max()
    peak_high = db[hi_row - 2 : hi_row + 3].max()
    dip = db[hi_row : lo_row + 1].min()
    assert peak_low > -3 and peak_high > -3
    assert peak_low - dip >= 20 and peak_high - dip >= 20
