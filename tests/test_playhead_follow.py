"""Following the playhead (no Qt)."""

import pytest

from spectropaint.app.playhead_follow import follow
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping

GEOMETRY = BlockGeometry(
    n_frames=1000, n_bins=100, first_hz=0.0, step_hz=10.0, first_seconds=0.0, step_seconds=0.01
)


def at(start: float, stop: float) -> ViewMapping:
    return ViewMapping(GEOMETRY, ViewSettings(time_range=(start, stop)), 500, 200)


def texel_seconds(texel: float) -> float:
    return float(GEOMETRY.seconds_at(texel))


def test_stay_never_moves():
    assert follow(at(0, 100), texel_seconds(500), "off") is None


def test_pages_turn_when_the_playhead_reaches_the_edge():
    assert follow(at(0, 100), texel_seconds(50), "page") is None
    view = follow(at(0, 100), texel_seconds(99), "page")
    assert view.time_range == pytest.approx((97.0, 197.0))  # the playhead near the left edge
    jumped = follow(at(0, 100), texel_seconds(430), "page")  # a seek far away
    assert jumped.time_range[0] <= 430 < jumped.time_range[1]


def test_smooth_scrolling_keeps_the_playhead_in_the_middle_until_the_end():
    view = follow(at(0, 100), texel_seconds(300), "smooth")
    assert view.time_range == pytest.approx((250.0, 350.0))
    end = follow(at(850, 950), texel_seconds(990), "smooth")
    assert end.time_range == pytest.approx((900.0, 1000.0))  # stops at the sound's end
    assert follow(at(250, 350), texel_seconds(300), "smooth") is None  # already there
