"""A numpy oracle of the spectrogram shader, a stand-in document, and tests of the oracle itself.

The oracle recomputes every pixel from the document's magnitudes in float64 with its own warps,
its own max-pooled levels and its own footprint rule (the rule shaders/spectrogram.wgsl documents),
then looks the colour up in the colour tables (checked against matplotlib in test_colormaps.py).
The other render tests import it from here (pytest puts this folder on ``sys.path``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from rendercanvas.offscreen import OffscreenRenderCanvas

from spectropaint.gpu.canvas import attach_canvas
from spectropaint.gpu.colormaps import colormap_tables
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.events import Event
from spectropaint.transforms.regions import Region

LEVEL_FACTOR = 4
MIN_LEVEL_WIDTH = 16
MAX_TAPS = 16
EDGE_EPS = 1e-3


# ------------------------------------------------------------------------------------ document
class FakeBlock:
    def __init__(
        self, magnitude: np.ndarray, phase: np.ndarray, sample_rate: int, n_fft: int, hop: int
    ):
        self.magnitude = torch.from_numpy(np.ascontiguousarray(magnitude, dtype=np.float32))
        self.phase = torch.from_numpy(np.ascontiguousarray(phase, dtype=np.float32))
        self.band_hz = np.arange(magnitude.shape[1]) * sample_rate / n_fft
        self.hop = hop
        self.frame_seconds = np.arange(magnitude.shape[2]) * hop / sample_rate


class FakeDocument:
    """The renderer's document protocol over given magnitudes ``[C, F, T]`` (no audio)."""

    def __init__(
        self, magnitude: np.ndarray, phase: np.ndarray | None = None, *, sample_rate=8000, hop=64
    ):
        n_fft = 2 * (magnitude.shape[1] - 1)
        if phase is None:
            phase = np.zeros_like(magnitude)
        self.blocks = [FakeBlock(magnitude, phase, sample_rate, n_fft, hop)]
        self.sample_rate = sample_rate
        self.changed: Event[Region] = Event()
        """What a session would emit; tests connect renderers' ``mark_dirty``."""

    def write(self, region: Region, magnitude: np.ndarray) -> None:
        """Store magnitudes ``[len(channels), bins, frames]`` in ``region`` and emit the event."""
        block = self.blocks[0]
        for index, channel in enumerate(region.channels):
            block.magnitude[channel, region.bin0 : region.bin1, region.frame0 : region.frame1] = (
                torch.from_numpy(np.asarray(magnitude[index], dtype=np.float32))
            )
        self.changed.emit(region)


def sample_magnitudes(n_channels: int, n_bins: int, n_frames: int, *, seed: int = 0) -> np.ndarray:
    """Magnitudes ``[C, F, T]`` (reference 1 = 0 dB): a noise floor near -55 dB with sharp detail, a
    rising ridge at 0 dB, a steady tone at -20 dB and a one-frame click at -10 dB."""
    rng = np.random.default_rng(seed)
    db = rng.normal(-55.0, 8.0, (n_channels, n_bins, n_frames))
    bins = np.arange(n_bins)[:, None]
    frames = np.arange(n_frames)[None, :]
    ridge = (0.15 + 0.7 * frames / max(1, n_frames - 1)) * (n_bins - 1)
    db = np.maximum(db, -((bins - ridge) ** 2) / 2.0)
    db[:, int(0.8 * n_bins), :] = np.maximum(db[:, int(0.8 * n_bins), :], -20.0)
    db[:, :, n_frames // 2] = np.maximum(db[:, :, n_frames // 2], -10.0)
    for channel in range(1, n_channels):
        db[channel] = db[channel, ::-1]  # other channels differ visibly
    return (10.0 ** (db / 20.0)).astype(np.float32)


# -------------------------------------------------------------------------------------- oracle
def _warp(hz, scale):
    hz = np.asarray(hz, np.float64)
    if scale == "log":
        return np.log(hz)
    return 2595.0 * np.log10(1.0 + hz / 700.0) if scale == "mel" else hz


def _unwarp(w, scale):
    w = np.asarray(w, np.float64)
    if scale == "log":
        return np.exp(w)
    return 700.0 * (10.0 ** (w / 2595.0) - 1.0) if scale == "mel" else w


def _levels(cells: np.ndarray) -> list[np.ndarray]:
    """Level 0 and the max-pooled reduced levels of ``[F, T]``."""
    levels = [cells]
    n_frames = cells.shape[1]
    while levels[-1].shape[1] > MIN_LEVEL_WIDTH:
        scale = LEVEL_FACTOR ** len(levels)
        columns = math.ceil(n_frames / scale)
        padded = np.zeros((cells.shape[0], columns * scale), cells.dtype)
        padded[:, :n_frames] = cells
        levels.append(padded.reshape(cells.shape[0], columns, scale).max(axis=-1))
    return levels


def _taps(a: float, b: float, count: int) -> range:
    if b - a < 1.0:
        first = last = math.floor(0.5 * (a + b))
    else:
        first, last = math.floor(a + EDGE_EPS), math.ceil(b - EDGE_EPS) - 1
    first, last = max(first, 0), min(last, count - 1)
    return range(first, last + 1, max(1, math.ceil((last - first + 1) / MAX_TAPS)))


def _axes(document, view: ViewSettings, width: int, height: int):
    block = document.blocks[0]
    n_bins, n_frames = block.magnitude.shape[1:]
    step_hz = block.band_hz[1] - block.band_hz[0]
    low_edge = block.band_hz[0] - step_hz / 2
    t0, t1 = view.time_range or (0.0, float(n_frames))
    low, high = view.freq_range or (low_edge, low_edge + n_bins * step_hz)
    dt = (t1 - t0) / width
    w_lo, w_hi = _warp(low, view.freq_scale), _warp(high, view.freq_scale)
    up = height - np.arange(height)  # rows from the bottom to each pixel row's top edge
    cells = [
        (_unwarp(w_lo + (up - 1) * (w_hi - w_lo) / height, view.freq_scale) - low_edge) / step_hz,
        (_unwarp(w_lo + up * (w_hi - w_lo) / height, view.freq_scale) - low_edge) / step_hz,
    ]
    columns = [t0 + np.arange(width) * dt, t0 + (np.arange(width) + 1) * dt]
    return columns, cells, dt


def _colours(name: str, values: np.ndarray) -> np.ndarray:
    table = colormap_tables()[name].astype(np.float64)
    position = np.clip(values, 0, 1) * 255
    index = np.minimum(np.floor(position).astype(int), 254)
    fraction = (position - index)[..., None]
    rgb = table[index] * (1 - fraction) + table[index + 1] * fraction
    return np.round(rgb * 255).astype(np.uint8)


def oracle_picture(
    document, view: ViewSettings, width: int, height: int, *, reference: float = 1.0
) -> np.ndarray:
    """What the shader should draw for ``view`` at ``width`` x ``height``: uint8 ``[H, W, 3]``."""
    block = document.blocks[0]
    n_bins, n_frames = block.magnitude.shape[1:]
    (ta, tb), (ca, cb), dt = _axes(document, view, width, height)
    if view.mode == "phase":
        phase = block.phase[view.channel].double().numpy()
        cols = np.floor(0.5 * (ta + tb)).astype(int)
        bins = np.floor(0.5 * (ca + cb)).astype(int)
        inside = ((bins >= 0) & (bins < n_bins))[:, None] & ((cols >= 0) & (cols < n_frames))[
            None, :
        ]
        values = phase[np.clip(bins, 0, n_bins - 1)][:, np.clip(cols, 0, n_frames - 1)]
        rgb = _colours(view.phase_colormap, np.mod(values / (2 * np.pi) + 0.5, 1.0))
        return np.where(inside[..., None], rgb, 0).astype(np.uint8)
    levels = _levels(block.magnitude[view.channel].double().numpy())
    level = 0
    while level + 1 < len(levels) and dt >= LEVEL_FACTOR ** (level + 1):
        level += 1
    scale = LEVEL_FACTOR**level
    column_max = np.full((n_bins, width), -1.0)
    for x in range(width):
        taps = _taps(ta[x] / scale, tb[x] / scale, levels[level].shape[1])
        if len(taps):
            column_max[:, x] = levels[level][:, list(taps)].max(axis=1)
    magnitude = np.full((height, width), -1.0)
    for y in range(height):
        taps = _taps(ca[y], cb[y], n_bins)
        if len(taps):
            magnitude[y] = column_max[list(taps)].max(axis=0)
    floor = view.resolved_floor_db
    db = 20 * np.log10(np.maximum(magnitude, 1e-30) / reference)
    values = np.clip((db - floor) / view.range_db, 0.0, 1.0)
    values = np.where(values > 0, values**view.gamma, 0.0)
    rgb = _colours(view.colormap, values)
    return np.where((magnitude >= 0)[..., None], rgb, 0).astype(np.uint8)


# ------------------------------------------------------------------------------------- helpers
def render_offscreen(
    renderer, width: int, height: int, view: ViewSettings | None = None
) -> np.ndarray:
    """Draw ``renderer`` on an offscreen rendercanvas; uint8 RGB ``[height, width, 3]``."""
    if view is not None:
        renderer.view = view
    canvas = OffscreenRenderCanvas(size=(width, height), pixel_ratio=1)
    attach_canvas(renderer, canvas)
    pixels = np.asarray(canvas.draw())
    canvas.close()
    assert pixels.shape == (height, width, 4)
    return pixels[:, :, :3]


def assert_pixels_match(actual: np.ndarray, expected: np.ndarray, *, tolerance: int = 1) -> None:
    """Every channel of every pixel within ``tolerance`` 8-bit steps; names the worst pixel."""
    assert actual.shape == expected.shape
    difference = np.abs(actual.astype(int) - expected.astype(int)).max(axis=-1)
    if difference.max() > tolerance:
        y, x = np.unravel_index(np.argmax(difference), difference.shape)
        bad = int((difference > tolerance).sum())
        raise AssertionError(
            f"{bad} of {difference.size} pixels differ by more than {tolerance}; worst at "
            f"(row {y}, column {x}): {actual[y, x].tolist()} != {expected[y, x].tolist()}"
        )


# ------------------------------------------------------------------------ tests of the oracle
def test_oracle_draws_a_full_scale_cell_in_the_top_colour_and_silence_in_the_first():
    magnitude = np.array([[[1.0, 1e-6], [10 ** (-40 / 20), 0.0]]], np.float32)  # bins x frames
    document = FakeDocument(magnitude)
    picture = oracle_picture(document, ViewSettings(colormap="grayscale"), 2, 2)
    # Row 0 is the top of the picture: bin 1. Column 0 is frame 0.
    assert picture[1, 0].tolist() == [255, 255, 255]  # 0 dB
    assert picture[0, 1].tolist() == [0, 0, 0]  # silence
    assert picture[1, 1].tolist() == [0, 0, 0]  # -120 dB is below the -80 dB floor
    assert picture[0, 0].tolist() == [128, 128, 128]  # -40 dB is half way: 127.5 rounds up


def test_oracle_max_pools_a_one_frame_click_when_zoomed_out():
    magnitude = np.full((1, 4, 4000), 1e-4, np.float32)
    magnitude[0, :, 1234] = 1.0
    picture = oracle_picture(FakeDocument(magnitude), ViewSettings(colormap="grayscale"), 40, 4)
    column = 1234 * 40 // 4000
    assert (picture[:, column] == 255).all()
    assert (picture[:, column + 1] < 100).all()


def test_oracle_puts_low_frequencies_at_the_bottom_on_every_scale():
    magnitude = np.full((1, 33, 8), 1e-6, np.float32)
    magnitude[0, 2] = 1.0  # 250 Hz at 8 kHz / 64
    for scale in ("linear", "log", "mel"):
        view = ViewSettings(colormap="grayscale", freq_scale=scale, freq_range=(100.0, 4000.0))
        picture = oracle_picture(FakeDocument(magnitude), view, 8, 50)
        bright_rows = np.flatnonzero(picture[:, 0, 0] == 255)
        assert bright_rows.min() > 25, scale  # in the lower half
        expected_row = (
            1 - (_warp(250, scale) - _warp(100, scale)) / (_warp(4000, scale) - _warp(100, scale))
        ) * 50
        assert bright_rows.min() <= expected_row <= bright_rows.max() + 1, scale


@pytest.mark.parametrize("scale", ["log", "mel"])
def test_oracle_warps_invert(scale):
    hz = np.array([20.0, 440.0, 15000.0])
    np.testing.assert_allclose(_unwarp(_warp(hz, scale), scale), hz, rtol=1e-12)
