"""Channels stacked in lanes (L above R, up to 8), each drawn as it is alone, each editable or all
linked."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
import torch
from gui_fixtures import canvas_pixels, drag, open_window, wait_for_fresh_frame
from test_render_reference import assert_pixels_match, render_offscreen

from spectropaint.gpu.lanes import GAP_PX, MAX_LANES, lane_at, lane_bands
from spectropaint.gpu.renderer import SpectrogramRenderer

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]
RATE = 22050


def write(path, channels: int, seconds: float = 1.5) -> None:
    t = np.arange(int(seconds * RATE)) / RATE
    tones = [0.3 * np.sin(2 * np.pi * 300 * (c + 1) * t) for c in range(channels)]
    soundfile.write(path, np.stack(tones).T, RATE, subtype="FLOAT")


def stack(window, qtbot) -> None:
    panel = window.view_panel
    panel.channel.setCurrentIndex(panel.channel.findText("All, stacked"))
    assert window.canvas.stacked
    wait_for_fresh_frame(qtbot, window.canvas)


@pytest.fixture
def window(qtbot, tmp_path):
    write(tmp_path / "stereo.wav", 2)
    return open_window(qtbot, tmp_path, tmp_path / "stereo.wav")


def test_bands_split_the_height_between_gaps():
    assert lane_bands(1, 500) == [(0, 500)]
    bands = lane_bands(3, 400)
    assert sum(rows for _, rows in bands) == 400 - 2 * GAP_PX
    assert [first for first, _ in bands] == [0, bands[0][1] + GAP_PX, 400 - bands[2][1]]
    assert lane_at(bands[1][0], bands) == 1 and lane_at(bands[0][1] + 1, bands) is None


def test_each_lane_shows_its_channel_as_it_is_drawn_alone(window, qtbot):
    stack(window, qtbot)
    canvas = window.canvas
    canvas.tool.leave()
    wait_for_fresh_frame(qtbot, canvas)
    pixels = canvas_pixels(canvas)
    document = window.session.document
    for channel, (first, rows) in enumerate(canvas.bands()):
        alone = SpectrogramRenderer(canvas.renderer.device, document)
        try:
            view = canvas.lanes.renderers[channel].view
            expected = render_offscreen(alone, canvas.width(), rows, view)
        finally:
            alone.close()
        assert view.channel == channel
        lane = pixels[first : first + rows].copy()
        name = lane[:26, :40]  # the lane's name, drawn in its corner
        assert ((name == (240, 170, 80)).all(axis=-1)).any()
        lane[:26, :40] = expected[:26, :40]
        assert_pixels_match(lane, expected)
    gap = pixels[canvas.bands()[0][1] : canvas.bands()[1][0]]
    assert (gap == 0).all()  # black between the lanes


def paint_in_lane(qtbot, window, lane: int) -> None:
    canvas = window.canvas
    first, rows = canvas.bands()[lane]
    y = first + rows * 0.5
    drag(qtbot, canvas, [(canvas.width() * fx, y) for fx in (0.3, 0.45, 0.6)])


def changed_channels(document, before) -> list[int]:
    after = document.blocks[0].magnitude
    return [c for c in range(after.shape[0]) if not torch.equal(after[c], before[c])]


def test_a_brush_set_to_the_channel_under_the_pointer_edits_only_that_lane(window, qtbot):
    stack(window, qtbot)
    document = window.session.document
    brush = window.brush_panel
    brush.channel.setCurrentIndex(brush.channel.findText("The one under the pointer"))
    assert window.canvas.tool.per_lane
    before = document.blocks[0].magnitude.clone()
    paint_in_lane(qtbot, window, 1)
    assert changed_channels(document, before) == [1]
    before = document.blocks[0].magnitude.clone()
    paint_in_lane(qtbot, window, 0)
    assert changed_channels(document, before) == [0]


def test_a_linked_brush_edits_every_channel_and_outlines_in_every_lane(window, qtbot):
    stack(window, qtbot)
    canvas, document = window.canvas, window.session.document
    before = document.blocks[0].magnitude.clone()
    paint_in_lane(qtbot, window, 1)
    assert changed_channels(document, before) == [0, 1]
    assert canvas.tool.settings.channel is None and canvas.overlay.footprint.channel is None


def test_partial_redraws_of_lanes_equal_a_full_redraw(window, qtbot):
    stack(window, qtbot)
    canvas = window.canvas
    brush = window.brush_panel
    brush.channel.setCurrentIndex(brush.channel.findText("The one under the pointer"))
    canvas.tool.leave()
    partial_before = canvas.partial_frames
    paint_in_lane(qtbot, window, 1)
    paint_in_lane(qtbot, window, 0)
    canvas.tool.leave()
    qtbot.waitUntil(lambda: canvas._damage == [], timeout=5000)
    qtbot.wait(300)
    assert canvas.partial_frames > partial_before
    partial = canvas_pixels(canvas)
    canvas.set_view(canvas.view)
    wait_for_fresh_frame(qtbot, canvas)
    np.testing.assert_array_equal(canvas_pixels(canvas), partial)


@pytest.mark.parametrize(("channels", "lanes"), [(4, 4), (10, MAX_LANES)])
def test_up_to_eight_channels_get_a_lane_each(qtbot, tmp_path, channels, lanes):
    write(tmp_path / "many.wav", channels, seconds=0.5)
    window = open_window(qtbot, tmp_path, tmp_path / "many.wav")
    stack(window, qtbot)
    canvas = window.canvas
    assert canvas.lanes.channels == list(range(lanes))
    pixels = canvas_pixels(canvas)
    for channel, (first, rows) in enumerate(canvas.bands()):
        # each lane's brightest row is its own tone: 300 Hz times (channel + 1), higher lane by lane
        lane = pixels[first : first + rows].astype(int).sum(axis=(1, 2))
        mapping = canvas.lane_mapping(channel)
        expected = float(mapping.y_of_hz(300.0 * (channel + 1)))
        assert abs(int(lane.argmax()) + 0.5 - expected) <= 3, channel
    assert window.view_values()["stacked"] is True
    window.view_panel.channel.setCurrentIndex(window.view_panel.channel.findText("Channel 3"))
    assert not canvas.stacked and canvas.lanes.channels == [2]


def test_an_nsgt_document_stacks_its_channels_too(window, qtbot):
    from test_gui_analysis import choose

    choose(window, qtbot, 1, scale="log", bins_per_octave=24, fmin=55.0)
    stack(window, qtbot)
    canvas = window.canvas
    assert type(canvas.renderer).__name__ == "BandsRenderer"
    canvas.tool.leave()
    wait_for_fresh_frame(qtbot, canvas)
    pixels = canvas_pixels(canvas)
    for channel, (first, rows) in enumerate(canvas.bands()):
        lane = pixels[first : first + rows, 40:].astype(int).sum(axis=(1, 2))
        expected = float(canvas.lane_mapping(channel).y_of_hz(300.0 * (channel + 1)))
        assert abs(int(lane.argmax()) + 0.5 - expected) <= 4, channel


def test_a_change_queued_before_the_document_closed_is_ignored(window, qtbot):
    """A settle finishing on its thread as the document closes reaches a closed canvas: nothing
    is uploaded and nothing raises (it raised a KeyError in the lanes before)."""
    from spectropaint.app.session import Change
    from spectropaint.transforms.regions import Region

    canvas = window.canvas
    window.close_document()
    canvas.show_change(Change(Region(0, 10, 0, 10, (0, 1)), "settle", 2))
    assert canvas.lanes.closed
