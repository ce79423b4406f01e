"""The compute pass draws the same pixels as the render pass, whole frames and scissored lanes."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest
from brush_fixtures import small_document
from rendercanvas.offscreen import OffscreenRenderCanvas
from test_render_reference import FakeDocument, oracle_picture, render_offscreen, sample_magnitudes

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.canvas import attach_canvas
from spectropaint.gpu.frame_pass import picture_texture
from spectropaint.gpu.lanes import LaneRenderer
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.selection_overlay import selection_mask
from spectropaint.gpu.view import Overlays, ViewSettings
from spectropaint.gpu.view import Selection as TimeSelection
from spectropaint.transforms.regions import Region
from spectropaint.transforms.selection import Selection
from spectropaint.transforms.shapes import Rectangle

pytestmark = pytest.mark.gpu


def counting_dispatches(renderer) -> list:
    """Count ``renderer.dispatch`` calls (the compute pass was used)."""
    calls = []
    real = renderer.dispatch

    def dispatch(*args):
        calls.append(args[2])
        real(*args)

    renderer.dispatch = dispatch
    return calls


def both_passes(renderer, width, height, view) -> tuple[np.ndarray, np.ndarray]:
    renderer.compute = False
    rendered = render_offscreen(renderer, width, height, view)
    renderer.compute = True
    computed = render_offscreen(renderer, width, height, view)
    return rendered, computed


@pytest.mark.parametrize(
    "view",
    [
        ViewSettings(colormap="inferno"),
        ViewSettings(time_range=(30.5, 70.25), freq_scale="log", freq_range=(100.0, 3000.0)),
        ViewSettings(mode="phase", freq_scale="mel"),
        ViewSettings(time_range=(-20.0, 700.0), colormap="hot"),
    ],
)
def test_compute_and_render_passes_draw_the_same_pixels(view):
    document = FakeDocument(sample_magnitudes(1, 48, 600, seed=4))
    renderer = SpectrogramRenderer(
        shared_device(), document, max_texture_dim=256, reference_magnitude=1.0
    )
    try:
        calls = counting_dispatches(renderer)
        rendered, computed = both_passes(renderer, 150, 70, view)
        assert calls == [(0, 0, 150, 70)]
        assert np.array_equal(rendered, computed)
        if view.mode == "magnitude":
            assert not np.array_equal(computed, 0)
            oracle = oracle_picture(document, view, 150, 70)
            assert np.abs(computed.astype(int) - oracle).max() <= 1
    finally:
        renderer.close()


def test_overlays_are_drawn_the_same_by_the_compute_pass():
    document = small_document(channels=1)
    renderer = SpectrogramRenderer(shared_device(), document, reference_magnitude=1.0)
    try:
        selection = Selection.of(Rectangle(0.2, 0.6, 1500.0, 4500.0))
        geometry = renderer.geometry
        overlays = Overlays(
            playhead_seconds=0.3,
            selection=TimeSelection(0.1, 0.4, geometry.low_edge_hz, geometry.high_edge_hz),
            mask=selection_mask(selection, document),
        )
        plain = ViewSettings(freq_scale="log")
        view = dataclasses.replace(plain, overlays=overlays)
        rendered, computed = both_passes(renderer, 200, 120, view)
        assert np.array_equal(rendered, computed)
        assert not np.array_equal(computed, render_offscreen(renderer, 200, 120, plain))
    finally:
        renderer.close()


def test_scissored_lanes_by_compute_pass_keep_the_rest_of_the_frame():
    document = FakeDocument(sample_magnitudes(2, 40, 500, seed=9))
    pictures = {}
    for compute in (False, True):
        lanes = LaneRenderer(shared_device(), document, ViewSettings(), stacked=True)
        for renderer in lanes.renderers:
            renderer.compute = compute
        calls = counting_dispatches(lanes.renderers[1])
        canvas = OffscreenRenderCanvas(size=(120, 90), pixel_ratio=1)
        scissor = [None]
        attach_canvas(lanes, canvas, damage=lambda size, scissor=scissor: scissor[0])
        whole = np.asarray(canvas.draw())[..., :3].copy()
        document.blocks[0].magnitude[:, :, :] *= 0.25  # every pixel would change
        lanes.mark_dirty(Region(0, 40, 0, 500, (0, 1)))
        scissor[0] = (10, 50, 30, 20)  # in the lower lane only
        partial = np.asarray(canvas.draw())[..., :3].copy()
        document.blocks[0].magnitude[:, :, :] *= 4.0
        canvas.close()
        lanes.close()
        assert calls == ([(0, 46, 120, 44), (10, 50, 30, 20)] if compute else [])
        pictures[compute] = whole, partial
    assert np.array_equal(pictures[False][0], pictures[True][0])
    assert np.array_equal(pictures[False][1], pictures[True][1])
    whole, partial = pictures[True]
    changed = (whole != partial).any(axis=-1)
    assert not changed[:50].any() and not changed[70:].any()
    assert not changed[:, :10].any() and not changed[:, 40:].any()
    assert changed[50:70, 10:40].mean() > 0.9


def test_each_thread_draws_into_a_picture_of_its_own():
    device = shared_device()
    mine = picture_texture(device, (64, 32))
    assert picture_texture(device, (64, 32)) is mine  # kept while the size stays
    found = []
    worker = threading.Thread(target=lambda: found.append(picture_texture(device, (16, 16))))
    worker.start()
    worker.join()
    assert found[0] is not mine and tuple(found[0].size[:2]) == (16, 16)
    assert picture_texture(device, (64, 32)) is mine  # the other size did not replace it
