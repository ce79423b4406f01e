"""Pointer tools without Qt: synthetic pointers through a stand-in host."""

import dataclasses

import torch
from brush_fixtures import small_document

from spectropaint.app.session import Session
from spectropaint.app.tools.base import LEFT, MIDDLE, RIGHT, Pointer
from spectropaint.app.tools.registry import TOOL_NAMES, make_tools
from spectropaint.app.tools.selection_tools import SELECTION_TOOLS
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping


class Host:
    """What a canvas gives its tools, recorded."""

    def __init__(self, document, width=400, height=200):
        self.geometry = BlockGeometry.from_block(document.blocks[0], document.sample_rate)
        self.view = ViewSettings()
        self.size = (width, height)
        self.selection = "unset"
        self.outline = None
        self.clone_source = None
        self.clicked: list[float] = []
        self.messages: list[str] = []

    def mapping(self):
        return ViewMapping(self.geometry, self.view, *self.size)

    def set_view(self, view):
        self.view = view

    def set_selection(self, span):
        self.selection = span

    def set_outline(self, outline):
        self.outline = outline

    def set_clone_source(self, cell):
        self.clone_source = cell

    def time_clicked(self, seconds):
        self.clicked.append(seconds)

    def show_message(self, text):
        self.messages.append(text)


def pointer(host, x, y, button=LEFT, modifiers=(), time=0.0):
    return Pointer(x, y, host.mapping().to_document(x, y), button, frozenset(modifiers), time, 1.0)


def setup():
    document = small_document()
    session = Session(document)
    host = Host(document)
    return document, session, host, make_tools(host, session)


def test_every_brush_and_view_tool_has_an_object():
    _, _, _, tools = setup()
    assert set(tools) == set(TOOL_NAMES) == {*BRUSHES, "select", "pan", "zoom", *SELECTION_TOOLS}


def test_a_brush_drag_is_one_stroke_where_the_pointer_went():
    document, session, host, tools = setup()
    brush = tools["erase"]
    brush.settings = BrushSettings(radius_frames=3, radius_bins=3)
    before = document.blocks[0].magnitude.clone()
    assert brush.press(pointer(host, 100, 100))
    for x in (120, 140, 160):
        brush.drag(pointer(host, x, 100, time=x / 1000))
    brush.release(pointer(host, 160, 100))
    assert not session.painting and len(session.strokes.done) == 1
    changed = (document.blocks[0].magnitude != before).any(dim=0)
    bins, frames = torch.nonzero(changed, as_tuple=True)
    start, stop = host.mapping().to_document(100, 100), host.mapping().to_document(160, 100)
    assert start.frame - 4 <= frames.min() and frames.max() <= stop.frame + 4
    assert abs(bins.float().mean() - start.bin) < 1.0
    assert host.outline is not None and abs(host.outline.frame - stop.frame) < 1e-9
    assert (host.outline.radius_frames, host.outline.radius_bins) == (3, 3)


def test_escape_cancels_a_stroke_and_says_so():
    document, session, host, tools = setup()
    before = document.blocks[0].magnitude.clone()
    brush = tools["blur"]
    brush.press(pointer(host, 100, 100))
    brush.drag(pointer(host, 200, 120))
    assert brush.cancel()
    assert torch.equal(document.blocks[0].magnitude, before)
    assert host.messages[-1] == "Stroke cancelled" and not session.painting
    assert not brush.cancel()  # nothing left to cancel


def test_ctrl_click_sets_the_clone_source_and_the_next_stroke_copies_from_it():
    _, session, host, tools = setup()
    clone = tools["clone"]
    assert not clone.press(pointer(host, 50, 80, modifiers=("Control",)))
    assert clone.clone_source is not None and host.messages[-1].startswith("Clone source set at")
    source = clone.clone_source
    assert host.clone_source == source  # marked where it was set
    assert clone.press(pointer(host, 250, 120))
    clone.drag(pointer(host, 270, 110))
    used_offset = (
        round(source[0] - host.mapping().to_document(250, 120).frame),
        round(source[1] - host.mapping().to_document(250, 120).bin),
    )
    now = host.mapping().to_document(270, 110)
    # while copying, the mark follows the pointer at the stroke's offset
    assert host.clone_source == (now.frame + used_offset[0], now.bin + used_offset[1])
    clone.release(pointer(host, 270, 110))
    assert host.clone_source == source  # the next stroke copies from the source again
    used = session.strokes.done[-1].params
    assert (used.offset_frames, used.offset_bins) == used_offset
    clone.deactivate()
    assert host.clone_source is None


def test_a_brush_ignores_the_right_button():
    _, session, host, tools = setup()
    assert not tools["gain"].press(pointer(host, 50, 50, button=RIGHT))
    assert not session.painting


def test_pan_moves_the_view_with_the_pointer_and_escape_puts_it_back():
    _, _, host, tools = setup()
    host.view = host.mapping().zoomed(200, 100, time_factor=4.0, freq_factor=1.0)
    start = host.mapping().visible
    pan = tools["pan"]
    assert pan.press(pointer(host, 200, 100, button=MIDDLE))
    pan.drag(pointer(host, 100, 100))
    t0, t1, _, _ = host.mapping().visible
    frames_per_pixel = (start[1] - start[0]) / 400
    assert abs((t0 - start[0]) - 100 * frames_per_pixel) < 1e-6  # content follows the pointer
    assert pan.cancel()
    assert host.mapping().visible == start


def test_zoom_click_doubles_and_right_click_halves_about_the_point():
    _, _, host, tools = setup()
    zoom = tools["zoom"]
    before = host.mapping()
    point = before.to_document(100, 50)
    zoom.press(pointer(host, 100, 50))
    after = host.mapping()
    t0, t1, *_ = before.visible
    u0, u1, *_ = after.visible
    assert abs((u1 - u0) - (t1 - t0) / 2) < 1e-6
    assert abs(after.to_document(100, 50).seconds - point.seconds) < 1e-6  # the point stays put
    zoom.press(pointer(host, 100, 50, button=RIGHT))
    v0, v1, *_ = host.mapping().visible
    assert abs((v1 - v0) - (t1 - t0)) < 1e-6


def test_select_drags_a_time_range_and_a_click_sets_the_cursor():
    _, _, host, tools = setup()
    select = tools["select"]
    assert select.press(pointer(host, 100, 50))
    select.drag(pointer(host, 300, 60))
    select.release(pointer(host, 300, 60))
    a, b = host.selection
    mapping = host.mapping()
    assert (a, b) == (mapping.to_document(100, 50).seconds, mapping.to_document(300, 60).seconds)
    select.press(pointer(host, 200, 50))
    select.release(pointer(host, 201, 50))
    assert host.selection is None
    assert host.clicked == [mapping.to_document(201, 50).seconds]


def test_a_view_change_keeps_the_overlays():
    _, _, host, tools = setup()
    host.view = dataclasses.replace(
        host.view, overlays=dataclasses.replace(host.view.overlays, playhead_seconds=0.25)
    )
    pan = tools["pan"]
    pan.press(pointer(host, 10, 10))
    pan.drag(pointer(host, 30, 10))
    assert host.view.overlays.playhead_seconds == 0.25
