"""Selection tools without Qt: synthetic pointers through the stand-in host of test_tools."""

import numpy as np
from brush_fixtures import small_document
from music_fixtures import RATE, harmonic_tone
from test_tools import Host, pointer

from spectropaint.app.session import Session
from spectropaint.app.tools.registry import make_tools
from spectropaint.app.tools.selection_tools import combine_mode
from spectropaint.transforms.document import Document
from spectropaint.transforms.selection import rasterise
from spectropaint.transforms.shapes import Band, Harmonic, Lasso, Painted, Rectangle, Wand


def setup(document=None):
    document = document or small_document()
    session = Session(document)
    host = Host(document)
    changes = []
    session.changed.connect(changes.append)
    return session, host, make_tools(host, session), changes


def drag(tool, host, *points, modifiers=()):
    assert tool.press(pointer(host, *points[0], modifiers=modifiers))
    for point in points[1:]:
        tool.drag(pointer(host, *point, modifiers=modifiers))
    tool.release(pointer(host, *points[-1], modifiers=modifiers))


def test_modifier_keys_choose_how_a_shape_combines():
    assert combine_mode(frozenset()) == "replace"
    assert combine_mode(frozenset({"Shift"})) == "add"
    assert combine_mode(frozenset({"Alt"})) == "subtract"
    assert combine_mode(frozenset({"Shift", "Alt"})) == "intersect"


def test_a_rectangle_drag_selects_the_seconds_and_hz_under_the_pointer():
    session, host, tools, changes = setup()
    drag(tools["select_rect"], host, (100, 50), (200, 80), (300, 150))
    (term,) = session.selection.terms
    a, b = host.mapping().to_document(100, 50), host.mapping().to_document(300, 150)
    assert term.shape == Rectangle(a.seconds, b.seconds, b.hz, a.hz)
    assert [c.kind for c in changes] == ["selection"] * 3  # one per pointer event
    assert all(c.region.empty for c in changes) and not session.modified


def test_shift_adds_alt_subtracts_and_escape_restores():
    session, host, tools, _ = setup()
    rect = tools["select_rect"]
    drag(rect, host, (50, 50), (150, 150))
    drag(rect, host, (250, 50), (350, 150), modifiers=("Shift",))
    assert [t.mode for t in session.selection.terms] == ["add", "add"]
    drag(tools["select_band"], host, (10, 90), (10, 110), modifiers=("Alt",))
    assert session.selection.terms[-1].mode == "subtract"
    assert isinstance(session.selection.terms[-1].shape, Band)
    before = session.selection
    rect.press(pointer(host, 10, 10))
    rect.drag(pointer(host, 390, 190))
    assert session.selection != before
    assert rect.cancel() and session.selection == before


def test_a_click_clears_the_selection():
    session, host, tools, _ = setup()
    drag(tools["select_rect"], host, (50, 50), (150, 150))
    drag(tools["select_rect"], host, (70, 70), (71, 70))
    assert session.selection.empty


def test_the_lasso_follows_the_pointer_and_closes():
    session, host, tools, _ = setup()
    path = [(100, 40), (300, 60), (250, 160), (120, 150)]
    drag(tools["lasso"], host, *path)
    (term,) = session.selection.terms
    assert isinstance(term.shape, Lasso) and len(term.shape.points) == 4
    mask = rasterise(session.selection, session.document)
    centre = host.mapping().to_document(190, 100)
    r = mask.region
    assert r.frame0 <= centre.frame <= r.frame1 and r.bin0 <= centre.bin <= r.bin1


def test_the_selection_brush_paints_soft_dabs_along_the_drag():
    session, host, tools, _ = setup()
    brush = tools["select_brush"]
    brush.radius_seconds, brush.radius_hz = 0.02, 400.0
    drag(brush, host, *[(100 + 10 * i, 100) for i in range(11)])
    (term,) = session.selection.terms
    assert isinstance(term.shape, Painted) and len(term.shape.dabs) > 5
    weight = rasterise(session.selection, session.document).weight
    assert 0 < float(weight[weight > 0].min()) < 0.5 and float(weight.max()) == 1.0
    step_hz = host.mapping().geometry.step_hz
    assert host.outline is not None and abs(host.outline.radius_bins * step_hz - 400.0) < 1e-6


def test_the_wand_selects_a_standing_out_tone_and_says_when_nothing_stands_out():
    t = np.arange(RATE) / RATE
    tone = 0.1 * np.sin(2 * np.pi * 3000 * t) + 0.001 * np.random.default_rng(0).standard_normal(
        RATE
    )
    session, host, tools, _ = setup(Document.from_samples(tone, RATE, device="cpu"))
    mapping = host.mapping()
    y = next(y for y in range(200) if abs(mapping.to_document(200, y).hz - 3000) < 60)
    drag(tools["wand"], host, (200, y))
    (term,) = session.selection.terms
    assert isinstance(term.shape, Wand) and term.shape.raster.values.any()
    quiet = next(y for y in range(200) if abs(mapping.to_document(200, y).hz - 15000) < 120)
    drag(tools["wand"], host, (200, quiet))
    assert session.selection.terms == (term,)  # unchanged
    assert "stands" in host.messages[-1]


def test_a_click_on_a_fundamental_selects_its_harmonics_over_the_visible_span():
    t = np.arange(2 * RATE) / RATE
    voice = 0.05 * harmonic_tone(t, 220.0, harmonics=10, vibrato_cents=30.0)
    session, host, tools, _ = setup(Document.from_samples(voice, RATE, device="cpu"))
    mapping = host.mapping()
    y = next(y for y in range(199, 0, -1) if mapping.to_document(200, y).hz >= 215)
    drag(tools["harmonic"], host, (200, y))
    (term,) = session.selection.terms
    assert isinstance(term.shape, Harmonic) and term.shape.track
    track = np.array(term.shape.track)
    assert np.all(np.abs(1200 * np.log2(track[:, 1] / 220.0)) < 50)  # the vibrato is 30
    assert (term.shape.t0, term.shape.t1) == (0.0, 2.0) or term.shape.t1 - term.shape.t0 > 1.9
