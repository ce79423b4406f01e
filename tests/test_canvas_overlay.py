"""The canvas overlay's outlines: each footprint's outline in a lane's view is computed once while it
is among the last few asked for (a pointer move asks for the old outline's area, the new one's, and
paints the new one), and never served for another view or footprint."""

import numpy as np

from spectropaint.app.tools.footprint import Footprint, outline_polygon
from spectropaint.app.window import canvas_overlay
from spectropaint.app.window.canvas_overlay import OUTLINES_KEPT, CanvasOverlay
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping

GEOMETRY = BlockGeometry(
    n_frames=400, n_bins=1025, first_hz=0.0, step_hz=21.533, first_seconds=0.0, step_seconds=0.0116
)


def test_an_outline_is_computed_once_per_footprint_and_view_while_kept(monkeypatch):
    computed = []

    def counting(footprint, mapping):
        computed.append((footprint, mapping))
        return outline_polygon(footprint, mapping)

    monkeypatch.setattr(canvas_overlay, "outline_polygon", counting)
    overlay = CanvasOverlay()
    views = [
        ViewMapping(GEOMETRY, ViewSettings(freq_scale="log"), 800, 500),
        ViewMapping(GEOMETRY, ViewSettings(freq_scale="log"), 1200, 500),  # resized
        ViewMapping(GEOMETRY, ViewSettings(freq_scale="mel"), 800, 500),
    ]
    here = Footprint(frame=200.0, bin=300.0, radius_frames=12.0, radius_bins=40.0)
    moved = Footprint(frame=203.5, bin=301.0, radius_frames=12.0, radius_bins=40.0)
    for _ in range(3):
        for view in views:
            for footprint in (here, moved):
                points = overlay.outline(footprint, view)
                assert np.array_equal(points, outline_polygon(footprint, view))
    assert len(computed) == 6

    # a path of more footprints than are kept: the last ones are served, the first computed anew
    path = [Footprint(200.0 + k, 300.0, 12.0, 40.0) for k in range(OUTLINES_KEPT + 2)]
    for footprint in path:
        overlay.outline(footprint, views[0])
    computed.clear()
    for footprint in path[-OUTLINES_KEPT:]:
        assert np.array_equal(
            overlay.outline(footprint, views[0]), outline_polygon(footprint, views[0])
        )
    assert computed == []
    overlay.outline(path[0], views[0])
    assert computed == [(path[0], views[0])]


def test_the_polygon_qt_draws_is_the_outline_and_made_once():
    overlay = CanvasOverlay()
    view = ViewMapping(GEOMETRY, ViewSettings(freq_scale="log"), 800, 500)
    footprint = Footprint(frame=200.0, bin=30.0, radius_frames=12.0, radius_bins=40.0)
    polygon = overlay._polygon(footprint, view)
    drawn = np.array([(point.x(), point.y()) for point in polygon])
    assert np.array_equal(drawn, outline_polygon(footprint, view))
    assert overlay._polygon(footprint, view) is polygon
