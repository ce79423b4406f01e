"""The history panel: each stroke by name and place, a click steps back or forward to it exactly,
A/B switches between a step and the latest state."""

from __future__ import annotations

import pytest
import torch
from gui_fixtures import drag, tones_window  # noqa: F401 - the window fixture

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


def state(window) -> torch.Tensor:
    block = window.session.document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def stroke(qtbot, window, tool: str, y: float) -> None:
    window.palette.select(tool)
    canvas, panel = window.canvas, window.history_panel
    kept = len(window.session.history.undo_steps)
    drag(qtbot, canvas, [(canvas.width() * fx, canvas.height() * y) for fx in (0.3, 0.5, 0.7)])
    # the stroke's change reaches the panel through the window's event loop
    qtbot.waitUntil(lambda: panel.list.count() == kept + 2, timeout=5000)


def texts(panel) -> list[str]:
    return [panel.list.item(i).text() for i in range(panel.list.count())]


def test_each_stroke_is_listed_by_name_and_place(window, qtbot):
    panel = window.history_panel
    assert texts(panel) == ["Opened"]
    stroke(qtbot, window, "erase", 0.4)
    stroke(qtbot, window, "gain", 0.6)
    listed = texts(panel)
    assert listed[0] == "Opened"
    assert listed[1].startswith("1. Erase: ") and listed[2].startswith("2. Gain: ")
    assert " s, " in listed[1] and "Hz" in listed[1]
    assert panel.list.currentRow() == 2


def test_clicking_a_step_goes_back_and_forward_exactly(window, qtbot):
    panel = window.history_panel
    opened = state(window)
    stroke(qtbot, window, "erase", 0.4)
    after_one = state(window)
    stroke(qtbot, window, "gain", 0.6)
    after_two = state(window)
    panel.list.itemClicked.emit(panel.list.item(0))
    assert torch.equal(state(window), opened)
    assert panel.list.item(2).font().italic()  # undone steps are shown as such
    panel.list.itemClicked.emit(panel.list.item(1))
    assert torch.equal(state(window), after_one)
    panel.list.itemClicked.emit(panel.list.item(2))
    assert torch.equal(state(window), after_two)
    assert window.actions_by_name["undo"].isEnabled()


def test_a_b_switches_between_a_step_and_the_latest_state(window, qtbot):
    panel = window.history_panel
    opened = state(window)
    stroke(qtbot, window, "erase", 0.4)
    stroke(qtbot, window, "gain", 0.6)
    latest = state(window)
    panel.list.itemClicked.emit(panel.list.item(0))  # choose B: the sound as opened
    assert torch.equal(state(window), opened)
    for _ in range(2):  # B, A, B, A
        panel.compare.setChecked(True)
        assert torch.equal(state(window), opened)
        panel.compare.setChecked(False)
        assert torch.equal(state(window), latest)
    panel.compare.setChecked(True)
    stroke(qtbot, window, "blur", 0.5)  # a new edit ends the comparison
    assert not panel.compare.isChecked()
    assert texts(panel)[-1].startswith("1. Blur")


def test_undo_waits_for_a_slow_settle_without_blocking_the_window(window, qtbot, monkeypatch):
    """The settle of a stroke across a long file takes tens of seconds and every step waits for
    it: Ctrl+Z returns at once, says what it waits for, and undoes when the settle is done."""
    import threading
    import time

    from spectropaint.app.window.when_idle import WAITING
    from spectropaint.brushes.settle import SettlePlan

    release, real = threading.Event(), SettlePlan.compute
    monkeypatch.setattr(SettlePlan, "compute", lambda plan: (release.wait(30), real(plan))[1])
    from spectropaint.brushes.settings import BrushSettings
    from spectropaint.brushes.stroke import InputEvent

    opened, session = state(window), window.session
    session.begin_stroke("erase", BrushSettings(), {}, InputEvent(0.0, 20.0, 40.0))
    session.paint(InputEvent(0.1, 60.0, 40.0))
    session.end_stroke()
    assert session.settles_pending
    started = time.perf_counter()
    window.actions_by_name["undo"].trigger()
    assert time.perf_counter() - started < 1.0  # the window's thread did not wait
    assert "settle" in window.statusBar().currentMessage()
    assert not torch.equal(state(window), opened)
    release.set()
    qtbot.waitUntil(lambda: torch.equal(state(window), opened), timeout=10000)
    assert window.when_idle.pending == 0
    assert not window.statusBar().currentMessage().startswith(WAITING)  # not left standing
