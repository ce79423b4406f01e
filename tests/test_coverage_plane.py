"""A stroke's coverage kept on the host (:class:`~spectropaint.brushes.coverage_plane.
CoveragePlane`): the largest weight per cell, made as the first dab raises it, dropped as the
stroke ends; a stroke painted with it equals the stroke painted with its coverage in tiles."""

import numpy as np
import pytest
import torch
from brush_fixtures import painted_values, small_document

from spectropaint.brushes import dab
from spectropaint.brushes.coverage_plane import CoveragePlane
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.regions import Region


def test_the_plane_keeps_the_largest_weight_of_each_cell():
    plane = CoveragePlane(40, 300)
    assert plane.array is None  # nothing made before a dab raises it
    first = np.full((4, 5), 0.5, np.float32)
    first[0, 0] = 0.9
    raised = plane.raise_to(first, Region(10, 14, 200, 205))
    assert np.array_equal(raised, first)
    lower = np.full((4, 5), 0.25, np.float32)
    lower[3, 4] = 0.75
    again = plane.raise_to(lower, Region(10, 14, 200, 205))
    expected = np.maximum(first, lower)
    assert np.array_equal(again, expected)
    raised[:] = 7.0  # a copy: the plane keeps its own
    assert np.array_equal(plane.array[10:14, 200:205], expected)
    plane.array[10:14, 200:205] = 0.0
    assert not plane.array.any()  # no cell outside the boxes was written
    assert plane.array.shape == (40, 300) and plane.array.dtype == np.float32
    plane.release()
    assert plane.array is None


@pytest.mark.parametrize("brush, params", [("gain", {"gain_db": -12.0}), ("blur", {"sigma": 0.4})])
def test_a_stroke_with_its_coverage_on_the_host_equals_it_kept_in_tiles(monkeypatch, brush, params):
    """The host's coverage (the blend weights computed there) against the coverage kept in tiles
    of tensors and raised by torch's operations (the device's way), on the same stroke."""
    raised = []
    real_plane, real_tiles = CoveragePlane.raise_to, dab._raise_coverage
    monkeypatch.setattr(CoveragePlane, "raise_to",
                        lambda *a: raised.append("plane") or real_plane(*a))  # fmt: skip
    monkeypatch.setattr(dab, "_raise_coverage", lambda *a: raised.append("tiles") or real_tiles(*a))
    on_host = painted_values(small_document(), brush, params, events=30, step=(9.0, 0.8))
    assert set(raised) == {"plane"}
    raised.clear()
    monkeypatch.setattr(dab, "_coverage_on_host", lambda state, stroke: False)
    in_tiles = painted_values(small_document(), brush, params, events=30, step=(9.0, 0.8))
    assert set(raised) == {"tiles"}
    changed = (on_host != painted_values(small_document(), brush, params, events=0)).any()
    assert changed  # the stroke painted something
    torch.testing.assert_close(on_host, in_tiles, rtol=1e-5, atol=1e-6)


def test_a_finished_stroke_gives_its_coverage_back():
    document = small_document()
    history = History(document)
    settings = BrushSettings(radius_frames=5, radius_bins=4, hardness=0.5, spacing=0.25)
    stroke = StrokeSession(document, "gain", settings, params={"gain_db": -6.0}, history=history)
    for i in range(6):
        stroke.add_events([InputEvent(i / 60, 100.0 + 4 * i, 30.0, 1.0)])
    plane = stroke.state.blocks[0].plane
    assert plane.array is not None and plane.array.max() > 0.5
    stroke.end()
    assert plane.array is None
