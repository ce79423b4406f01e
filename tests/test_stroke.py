"""Dab spacing along strokes: even spacing, leftover carried between events, interpolation, merging."""

import math

import numpy as np
import pytest

from spectropaint.brushes.stroke import DabSpacer, InputEvent
from spectropaint.transforms.errors import SettingsError


def positions(dabs):
    return np.array([(d.x, d.y) for d in dabs])


def polyline(corners, rate_hz, speed):
    """Events along straight segments between ``corners`` (t, x, y, pressure), sampled at ``rate_hz``.

    ``speed`` is in cells per second; corners are always events. Returns the events and the indices
    of the corner events.
    """
    events, corner_index = [InputEvent(0.0, *corners[0])], [0]
    t = 0.0
    for (x0, y0, p0), (x1, y1, p1) in zip(corners, corners[1:], strict=False):
        length = math.hypot(x1 - x0, y1 - y0)
        n = max(1, round(length / speed * rate_hz))
        for i in range(1, n + 1):
            f = i / n
            events.append(
                InputEvent(
                    t + f * length / speed,
                    x0 + f * (x1 - x0),
                    y0 + f * (y1 - y0),
                    p0 + f * (p1 - p0),
                )
            )
        t += length / speed
        corner_index.append(len(events) - 1)
    return events, corner_index


def test_a_straight_stroke_gets_a_dab_every_spacing_radii_from_its_start():
    spacer = DabSpacer(radius_frames=10.0, radius_bins=4.0, spacing=0.25)
    dabs = spacer.feed([InputEvent(0.0, 100.0, 50.0), InputEvent(1.0, 130.0, 50.0)])
    np.testing.assert_allclose(positions(dabs)[:, 0], 100 + 2.5 * np.arange(13))
    assert all(d.y == 50.0 for d in dabs)


def test_distance_uses_each_axis_radius():
    spacer = DabSpacer(radius_frames=10.0, radius_bins=4.0, spacing=0.5)
    dabs = spacer.feed([InputEvent(0.0, 0.0, 0.0), InputEvent(1.0, 0.0, 8.0)])
    np.testing.assert_allclose(positions(dabs)[:, 1], [0, 2, 4, 6, 8])


def test_leftover_distance_carries_across_short_events():
    spacer = DabSpacer(radius_frames=4.0, radius_bins=4.0, spacing=0.5)
    dabs = []
    for i in range(41):
        dabs += spacer.feed([InputEvent(i / 60, 0.3 * i, 0.0)])
    np.testing.assert_allclose(positions(dabs)[:, 0], 2.0 * np.arange(7), atol=1e-9)


def test_time_and_pressure_are_interpolated_per_dab_and_steps_recorded():
    spacer = DabSpacer(radius_frames=2.0, radius_bins=2.0, spacing=0.5)
    dabs = spacer.feed([InputEvent(1.0, 0.0, 0.0, 0.2), InputEvent(2.0, 4.0, 0.0, 0.6)])
    np.testing.assert_allclose([d.t for d in dabs], [1.0, 1.25, 1.5, 1.75, 2.0])
    np.testing.assert_allclose([d.pressure for d in dabs], [0.2, 0.3, 0.4, 0.5, 0.6])
    assert (dabs[0].step_x, dabs[0].step_y) == (0.0, 0.0)
    np.testing.assert_allclose([d.step_x for d in dabs[1:]], [1.0] * 4)


def test_a_stationary_pointer_dabs_once():
    spacer = DabSpacer(radius_frames=2.0, radius_bins=2.0, spacing=0.25)
    assert len(spacer.feed([InputEvent(i / 60, 5.0, 5.0, 0.1 * i) for i in range(10)])) == 1


def test_merged_events_give_the_same_dabs_as_the_unmerged_path():
    corners = [(10.0, 20.0, 0.3), (70.0, 35.0, 1.0), (90.0, 5.0, 0.5)]
    fine, corner_index = polyline(corners, rate_hz=240, speed=300)
    merged = fine[::4]
    merged = sorted({*merged, *(fine[i] for i in corner_index)}, key=lambda e: e.t)
    assert len(merged) < len(fine) / 3

    def dabs(events):
        return DabSpacer(radius_frames=6.0, radius_bins=3.0, spacing=0.3).feed(events)

    a, b = dabs(fine), dabs(merged)
    assert len(a) == len(b) > 20
    for left, right in zip(a, b, strict=True):
        np.testing.assert_allclose(
            [left.t, left.x, left.y, left.pressure, left.step_x, left.step_y],
            [right.t, right.x, right.y, right.pressure, right.step_x, right.step_y],
            atol=1e-9,
        )


def test_feeding_events_one_by_one_or_together_gives_identical_dabs():
    events, _ = polyline([(0.0, 0.0, 1.0), (50.0, 50.0, 0.4)], rate_hz=60, speed=200)
    together = DabSpacer(radius_frames=5.0, radius_bins=5.0, spacing=0.2).feed(events)
    spacer = DabSpacer(radius_frames=5.0, radius_bins=5.0, spacing=0.2)
    one_by_one = [dab for event in events for dab in spacer.feed([event])]
    assert list(together) == one_by_one


@pytest.mark.parametrize(
    "values, message",
    [((0.0, float("nan"), 1.0), "x must be a finite number"), ((0.0, 1.0, 1.0, 1.5), "pressure")],
)
def test_bad_events_are_refused(values, message):
    with pytest.raises(SettingsError, match=message):
        InputEvent(*values)
