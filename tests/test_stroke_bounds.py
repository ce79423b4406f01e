"""Strokes that would explode: positions far outside the document, paths needing millions of dabs,
dabs whose region would not fit in memory. Each stays bounded, paints nothing outside the document,
and says what it did."""

import math

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from test_tools import Host, pointer

import spectropaint.brushes.dab as dab_module
from spectropaint.app.session import Session
from spectropaint.app.tools.registry import make_tools
from spectropaint.brushes.engine import paint
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import (
    MAX_DABS_PER_EVENT,
    MAX_DABS_PER_STROKE,
    DabSpacer,
    InputEvent,
)
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError

TEN_MINUTES = (51_680, 1025)
"""(frames, bins) of ten minutes at 44.1 kHz, n_fft 2048, hop 512."""


def spacer(radius=0.5, spacing=0.02, extent=TEN_MINUTES, **kwargs):
    """A spacer on a grid of ``extent`` = (frames, bins) cells."""
    bounds = (0.0, extent[0] - 1.0, 0.0, extent[1] - 1.0)
    return DabSpacer(
        radius_frames=radius, radius_bins=radius, spacing=spacing, bounds=bounds, **kwargs
    )


def inside(dabs, extent=TEN_MINUTES, radius=0.5):
    return all(
        -radius <= d.x <= extent[0] - 1 + radius and -radius <= d.y <= extent[1] - 1 + radius
        for d in dabs
    )


@pytest.mark.parametrize(
    "far", [(1e308, -1e308), (1e12, 500.0), (-1e300, 1e300)], ids=["1e308", "1e12", "corner"]
)
def test_far_positions_are_clipped_to_the_document(far):
    """The step from 1e308 to -1e308 overflows a float; clipping works on halves, so it does not."""
    events = [InputEvent(0.0, 100.0, 500.0), InputEvent(1.0, *far), InputEvent(2.0, 200.0, 500.0)]
    line = spacer(radius=4.0, spacing=0.25)
    dabs = line.feed(events)
    assert 0 < len(dabs) <= 1 + 2 * MAX_DABS_PER_EVENT
    assert inside(dabs, radius=4.0)
    assert all(math.isfinite(v) for d in dabs for v in (d.t, d.x, d.y, d.step_x, d.step_y))


def test_a_stroke_leaving_the_document_dabs_nothing_outside_and_dabs_where_it_comes_back():
    line = spacer(radius=2.0, spacing=0.5, extent=(100, 50))
    dabs = line.feed([InputEvent(0.0, 90.0, 10.0), InputEvent(1.0, 150.0, 10.0)])
    assert [d.x for d in dabs] == pytest.approx(list(np.arange(90.0, 101.0 + 1e-9, 1.0)))
    dabs = line.feed([InputEvent(2.0, 150.0, 20.0), InputEvent(3.0, 50.0, 20.0)])
    assert dabs[0].x == pytest.approx(101.0)  # the point of entry: the grid widened by the radius
    assert inside(dabs, (100, 50), 2.0) and dabs[-1].x == pytest.approx(50.0)


def test_a_first_event_outside_the_document_does_not_dab():
    assert len(spacer(extent=(100, 50)).feed([InputEvent(0.0, -10.0, 10.0)])) == 0


def test_a_diagonal_across_ten_minutes_at_the_smallest_radius_is_bounded_and_even():
    """Two events from corner to corner: 5 million dabs at spacing 0.02; MAX_DABS_PER_EVENT of them."""
    line = spacer()
    dabs = line.feed([InputEvent(0.0, 0.0, 0.0), InputEvent(1.0, TEN_MINUTES[0] - 1, 1024.0)])
    assert len(dabs) == 1 + MAX_DABS_PER_EVENT and line.thinned == 1
    steps = np.diff([d.x for d in dabs])
    np.testing.assert_allclose(steps, (TEN_MINUTES[0] - 1) / MAX_DABS_PER_EVENT)
    assert dabs[-1].x == TEN_MINUTES[0] - 1


def test_a_stroke_stops_dabbing_at_its_limit_and_says_so():
    line = spacer(radius=1.0, spacing=1.0, max_dabs=50)
    dabs = []
    for i in range(200):
        dabs += line.feed([InputEvent(i / 60, 10.0 + i, 100.0)])
    assert len(dabs) == 50 and line.limited
    assert spacer().max_dabs == MAX_DABS_PER_STROKE


def test_painting_far_outside_changes_only_cells_inside_and_tells_the_document():
    document = small_document(seconds=0.5)
    before = document.blocks[0].magnitude.clone()
    events = [
        InputEvent(0.0, 20.0, 40.0),
        InputEvent(0.1, 1e308, 40.0),
        InputEvent(0.2, -1e308, 40.0),
        InputEvent(0.3, 30.0, 40.0),
    ]
    settings = BrushSettings(radius_frames=0.5, radius_bins=0.5, spacing=0.02)
    paint(document, "erase", events, settings, settle=False)  # the dabs alone, before any settle
    changed = (document.blocks[0].magnitude != before).any(dim=0)
    bins = torch.nonzero(changed, as_tuple=True)[0]
    assert changed.any() and bins.min() >= 40 and bins.max() <= 40  # the row the stroke ran along
    assert any("spaced wider" in notice for notice in document.notices.emitted)


def test_a_pointer_stroke_across_ten_minutes_in_the_window_is_bounded(monkeypatch):
    """The same bounds hold for the brush tool: one move across a ten-minute grid at the smallest
    radius stamps at most MAX_DABS_PER_EVENT dabs, and the status bar's notice says so."""
    document = Document.from_samples(np.zeros((1, 8000 * 600)), 8000, device="cpu", subtype="FLOAT")
    stamped = []
    feed = DabSpacer.feed

    def counting_feed(self, events):
        dabs = feed(self, events)
        stamped.extend(dabs)
        return dabs

    monkeypatch.setattr(DabSpacer, "feed", counting_feed)
    session = Session(document)
    host = Host(document, width=1920, height=1000)
    brush = make_tools(host, session)["gain"]
    brush.settings = BrushSettings(radius_frames=0.5, radius_bins=0.5, spacing=0.02)
    notices = []
    document.notices.connect(notices.append)
    assert brush.press(pointer(host, 0, 999))
    brush.drag(pointer(host, 1919, 0, time=0.016))
    brush.release(pointer(host, 1919, 0))
    assert 1 < len(stamped) <= 1 + MAX_DABS_PER_EVENT
    assert any("spaced wider" in notice for notice in notices)


def test_a_dab_region_too_large_for_memory_is_refused_with_the_numbers(monkeypatch):
    document = small_document(seconds=0.5)
    before = document.blocks[0].magnitude.clone()
    monkeypatch.setattr(dab_module, "available_memory", lambda: 4 * 10**9)
    settings = BrushSettings(radius_frames=4096, radius_bins=4096)
    with pytest.raises(SettingsError) as caught:
        paint(document, "blur", [InputEvent(0.0, 10.0, 10.0)], settings, params={"sigma": 2.0})
    block = document.blocks[0]
    margin = int(4.0 * 2.0 * 4096 + 0.5)  # the Gaussian's support: 4 standard deviations
    frames, bins = block.n_frames + 2 * margin, block.n_bins + 2 * margin
    message = str(caught.value)
    assert f"a blur dab of 4096 x 4096 cells reads {frames} frames x {bins} bins" in message
    assert "4.0 GB is available" in message and "smaller radius or sigma" in message
    assert torch.equal(document.blocks[0].magnitude, before)


def test_a_stroke_in_seconds_and_semitones_is_clipped_to_the_document_too():
    """Physical strokes are clipped in their own plane (seconds, and semitones from Hz)."""
    document = small_document(seconds=0.5)
    before = document.blocks[0].magnitude.clone()
    settings = BrushSettings(radius_seconds=0.01, radius_semitones=1.0, spacing=0.02)
    events = [
        InputEvent(0.0, 0.2, 1000.0),
        InputEvent(0.1, 1e308, 1e308),
        InputEvent(0.2, -1e308, 1000.0),
        InputEvent(0.3, 0.25, 1000.0),
    ]
    paint(document, "erase", events, settings)
    changed = (document.blocks[0].magnitude != before).any(dim=0)
    assert changed.any() and torch.isfinite(document.blocks[0].magnitude).all()
    assert any("spaced wider" in notice for notice in document.notices.emitted)
