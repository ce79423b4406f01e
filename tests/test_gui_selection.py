"""The window's selections end to end: tools on the canvas, the outline, the Selection menu, undo,
the time-range tool, and File > Import Image."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gui_fixtures import canvas_pixels, drag, open_window, wait_for_fresh_frame, write_test_sound
from PySide6.QtWidgets import QMessageBox
from test_image_import import text_image

from spectropaint.brushes.image_import import ImagePlacement
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.selection import rasterise
from spectropaint.transforms.shapes import Range, Rectangle

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def window(qtbot, tmp_path):
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    return open_window(qtbot, tmp_path, path)


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def choose(window, tool):
    window.palette.actions_by_tool[tool].trigger()
    assert window.canvas.tool.name == tool


def test_a_rectangle_drawn_on_the_canvas_is_outlined_healed_and_undone(qtbot, window):
    canvas, session = window.canvas, window.session
    choose(window, "select_rect")
    before_pixels = canvas_pixels(canvas)
    w, h = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(0.3 * w, 0.3 * h), (0.5 * w, 0.5 * h), (0.6 * w, 0.7 * h)])
    qtbot.waitUntil(lambda: canvas.view.overlays.mask is not None, timeout=5000)
    (term,) = session.selection.terms
    assert isinstance(term.shape, Rectangle)
    wait_for_fresh_frame(qtbot, canvas)
    after_pixels = canvas_pixels(canvas)
    changed = np.any(after_pixels != before_pixels, axis=-1)
    rows, columns = np.nonzero(changed)
    assert 0.25 * w < columns.min() < 0.35 * w and 0.55 * w < columns.max() < 0.65 * w
    assert window.transport.selection == pytest.approx((term.shape.t0, term.shape.t1))
    before = grids(session.document)
    window.selection_ui.panel.heal_mode.setCurrentText("replace")
    window.selection_ui.actions["heal"].trigger()  # a job: on a worker thread
    qtbot.waitUntil(lambda: window.job is None, timeout=10000)
    assert not torch.equal(grids(session.document), before)
    assert session.strokes.done[-1].apply == "heal"
    window.actions_by_name["undo"].trigger()  # once the heal has settled (the window never waits)
    qtbot.waitUntil(lambda: window.when_idle.pending == 0, timeout=10000)
    assert torch.equal(grids(session.document), before)
    window.selection_ui.actions["select_none"].trigger()
    assert session.selection.empty and canvas.view.overlays.mask is None


def test_a_rectangle_on_an_nsgt_document_is_outlined_where_it_was_drawn(qtbot, tmp_path):
    """The NSGT's canvas draws on the default STFT's frames and bins: its selection is sampled
    there (finer than those bins, where its bands are), not on its own first block."""
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    window = open_window(
        qtbot, tmp_path, path, analysis=NSGTSettings(bins_per_octave=24, fmin=55.0)
    )
    canvas = window.canvas
    choose(window, "select_rect")
    before_pixels = canvas_pixels(canvas)
    w, h = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(0.3 * w, 0.1 * h), (0.5 * w, 0.2 * h), (0.6 * w, 0.3 * h)])
    qtbot.waitUntil(lambda: canvas.view.overlays.mask is not None, timeout=5000)
    (term,) = window.session.selection.terms
    wait_for_fresh_frame(qtbot, canvas)
    changed = np.any(canvas_pixels(canvas) != before_pixels, axis=-1)
    rows, columns = np.nonzero(changed)
    assert 0.27 * w < columns.min() < 0.33 * w and 0.57 * w < columns.max() < 0.63 * w
    lane = window.canvas.lane_mapping(0)
    top, bottom = lane.y_of_hz(term.shape.f1), lane.y_of_hz(term.shape.f0)
    first = rows[rows < window.canvas.bands()[0][1]]  # in the first lane
    assert abs(first.min() - top) < 3 and abs(first.max() - bottom) < 3


def test_the_menu_gain_uses_the_panel_and_a_refusal_goes_to_the_status_bar(qtbot, window):
    session = window.session
    window.selection_ui.actions["heal"].trigger()  # nothing selected
    qtbot.waitUntil(lambda: "needs a selection" in window.statusBar().currentMessage())
    window.selection_ui.actions["select_all"].trigger()
    window.selection_ui.panel.gain_db.setValue(-20.0)
    before = grids(session.document)
    window.selection_ui.actions["gain"].trigger()
    after = grids(session.document)
    assert torch.allclose(after[0], before[0] * 0.1, rtol=1e-5, atol=1e-9)
    assert torch.equal(after[1], before[1])


def test_the_time_range_tool_selects_for_operations_and_for_the_loop(qtbot, window):
    canvas, session = window.canvas, window.session
    choose(window, "select")
    w, h = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(0.2 * w, 0.5 * h), (0.4 * w, 0.5 * h)])
    (term,) = session.selection.terms
    assert isinstance(term.shape, Range)
    assert canvas.view.overlays.selection is None and canvas.view.overlays.mask is not None
    assert window.transport.selection == pytest.approx((term.shape.t0, term.shape.t1))


def test_import_image_places_a_picture_as_one_undo_step(tmp_path, window, qtbot, monkeypatch):
    warnings = []
    monkeypatch.setattr(
        QMessageBox, "warning", lambda parent, title, text: warnings.append((title, text))
    )
    session = window.session
    text_image(tmp_path / "text.png")
    before = grids(session.document)
    placement = ImagePlacement(0.3, 1.5, 2000.0, 6000.0, mode="replace")
    window.selection_ui.import_image(str(tmp_path / "text.png"), placement)
    after = grids(session.document)
    assert not torch.equal(before, after)
    assert session.strokes.done[-1].apply == "image"
    window.actions_by_name["undo"].trigger()  # once the import has settled
    qtbot.waitUntil(lambda: window.when_idle.pending == 0, timeout=10000)
    assert torch.equal(grids(session.document), before)
    window.selection_ui.import_image(str(tmp_path / "missing.png"), placement)
    assert torch.equal(grids(session.document), before)
    assert warnings and "missing.png" in warnings[0][1] and "no such file" in warnings[0][1]


def test_the_harmonic_tool_and_the_panel_options_reach_the_tools(qtbot, window):
    panel, canvas = window.selection_ui.panel, window.canvas
    panel.count.setValue(6)
    panel.tolerance.setValue(20.0)
    assert canvas.tools["harmonic"].count == 6 and canvas.tools["wand"].tolerance_db == 20.0
    session = window.session
    session.set_selection(None)
    mask = rasterise(session.selection, session.document) if not session.selection.empty else None
    assert mask is None
