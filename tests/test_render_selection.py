"""The selection's outline and tint drawn by the renderer, on every frequency axis."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from brush_fixtures import small_document
from test_render_reference import render_offscreen

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.selection_overlay import selection_mask
from spectropaint.gpu.view import Overlays, ViewSettings
from spectropaint.transforms.geometry import unwarp, warp
from spectropaint.transforms.selection import Selection, rasterise
from spectropaint.transforms.shapes import Lasso, Rectangle

pytestmark = pytest.mark.gpu
WIDTH, HEIGHT = 240, 160


@pytest.fixture(scope="module")
def document():
    return small_document(channels=1)


def expected_inside(document, selection, view) -> np.ndarray:
    """Whether each pixel's centre falls in a selected cell (weight >= 0.5), computed in numpy
    from the view's mapping and the selection rasterised on the document's own cells."""
    geometry = BlockGeometry.from_block(document.blocks[0], document.sample_rate)
    t0, t1, low, high = view.visible(geometry)
    x = (np.arange(WIDTH) + 0.5) / WIDTH
    y = (np.arange(HEIGHT) + 0.5) / HEIGHT
    frames = np.floor(t0 + x * (t1 - t0)).astype(int)
    w_low, w_high = warp(low, view.freq_scale), warp(high, view.freq_scale)
    hz = unwarp(w_high - y * (w_high - w_low), view.freq_scale)
    bins = np.floor((hz - geometry.low_edge_hz) / geometry.step_hz).astype(int)
    block = document.blocks[0]
    weights = np.zeros((block.n_bins, block.n_frames))
    mask = rasterise(selection, document, channels=(0,))
    r = mask.region
    weights[r.bin0 : r.bin1, r.frame0 : r.frame1] = mask.weight.numpy()
    inside = np.zeros((HEIGHT, WIDTH), dtype=bool)
    ok = (bins >= 0) & (bins < block.n_bins)
    inside[ok] = weights[bins[ok]][:, frames] >= 0.5
    return inside


@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
@pytest.mark.parametrize(
    "shape",
    [
        Rectangle(0.2, 0.6, 1500.0, 4500.0),
        Lasso(((0.1, 300.0), (0.9, 1000.0), (0.5, 6000.0))),
    ],
)
def test_the_outline_and_tint_follow_the_selection_on_every_axis(document, scale, shape):
    renderer = SpectrogramRenderer(shared_device(), document, reference_magnitude=1.0)
    try:
        plain = ViewSettings(freq_scale=scale)
        selection = Selection.of(shape)
        overlays = Overlays(mask=selection_mask(selection, document))
        before = render_offscreen(renderer, WIDTH, HEIGHT, plain).astype(int)
        after = render_offscreen(
            renderer, WIDTH, HEIGHT, dataclasses.replace(plain, overlays=overlays)
        ).astype(int)
    finally:
        renderer.close()
    inside = expected_inside(document, selection, plain)
    edge = np.zeros_like(inside)
    edge[:, 1:] |= inside[:, 1:] != inside[:, :-1]
    edge[:, :-1] |= inside[:, 1:] != inside[:, :-1]
    edge[1:] |= inside[1:] != inside[:-1]
    edge[:-1] |= inside[1:] != inside[:-1]
    changed = np.abs(after - before).max(axis=-1) > 0
    dashes = np.all((after == 0) | (after == 255), axis=-1) & changed
    # away from the edge (one pixel of slack for rounding): outside untouched, inside tinted
    near = edge.copy()
    near[:, 1:] |= edge[:, :-1]
    near[:, :-1] |= edge[:, 1:]
    near[1:] |= edge[:-1]
    near[:-1] |= edge[1:]
    assert not changed[~inside & ~near].any()
    assert changed[inside & ~near].mean() > 0.95
    # the outline is dashed black and white, all around
    assert dashes[edge].mean() > 0.8 and not dashes[~near].any()
    assert inside.sum() > 200
