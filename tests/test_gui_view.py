"""The view: pixel-to-document mapping, zoom and pan by wheel, drag and tools, view controls, rulers,
and pen pressure reaching the brush."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from gui_fixtures import (
    canvas_pixels,
    drag,
    open_window,
    send_mouse,
    wait_for_fresh_frame,
    write_test_sound,
)
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QInputDevice, QMouseEvent, QPointingDevice, QTabletEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from spectropaint.gpu.axis_ticks import freq_ticks, time_ticks
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping
from spectropaint.transforms.geometry import note_of

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]

GEOMETRY = BlockGeometry(
    n_frames=400, n_bins=513, first_hz=0.0, step_hz=21.5, first_seconds=0.0, step_seconds=0.0116
)


# ------------------------------------------------------------------------------ pure mapping
def test_pixel_columns_map_to_frames_as_the_shader_draws_them():
    mapping = ViewMapping(GEOMETRY, ViewSettings(time_range=(100.0, 200.0)), 500, 300)
    # column x covers texels [t0 + x dt, t0 + (x+1) dt); frame i's centre is texel i + 0.5
    assert mapping.to_document(0, 0).frame == pytest.approx(99.5)
    assert mapping.to_document(250, 0).frame == pytest.approx(149.5)
    top, bottom = mapping.to_document(0, 0), mapping.to_document(0, 300)
    assert top.hz == pytest.approx(GEOMETRY.high_edge_hz) and bottom.hz == pytest.approx(
        GEOMETRY.low_edge_hz
    )
    assert bottom.bin == pytest.approx(-0.5) and top.bin == pytest.approx(512.5)


def test_zoom_keeps_the_point_under_the_pointer_and_stays_inside_the_block():
    for scale in ("linear", "log", "mel"):
        mapping = ViewMapping(GEOMETRY, ViewSettings(freq_scale=scale), 800, 400)
        before = mapping.to_document(600, 100)
        zoomed = ViewMapping(
            GEOMETRY, mapping.zoomed(600, 100, time_factor=3, freq_factor=2), 800, 400
        )
        after = zoomed.to_document(600, 100)
        assert after.frame == pytest.approx(before.frame) and after.hz == pytest.approx(before.hz)
        t0, t1, low, high = zoomed.visible
        assert t1 - t0 == pytest.approx(400 / 3)
        out = ViewMapping(
            GEOMETRY, zoomed.zoomed(10, 10, time_factor=0.01, freq_factor=0.01), 800, 400
        )
        assert out.view.time_range is None and out.view.freq_range is None  # clamped to the whole


def test_pan_follows_the_drag_and_stops_at_the_edges():
    mapping = ViewMapping(GEOMETRY, ViewSettings(time_range=(100.0, 200.0)), 500, 300)
    panned = ViewMapping(GEOMETRY, mapping.panned(50, 0), 500, 300)
    assert panned.to_document(300, 10).frame == pytest.approx(mapping.to_document(250, 10).frame)
    far = ViewMapping(GEOMETRY, mapping.panned(10_000, 0), 500, 300)
    assert far.visible[:2] == (0.0, 100.0)


def test_ruler_ticks_land_where_their_values_are():
    ticks = [t for t in time_ticks(1.0, 5.0, 800) if t.major]
    assert [t.value for t in ticks] == [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]
    assert ticks[2].position == pytest.approx(0.25) and ticks[2].label == "2.0 s"
    log_ticks = freq_ticks(20.0, 20000.0, "log", 600)
    hundred = next(t for t in log_ticks if t.value == 100)
    assert (
        hundred.position == pytest.approx(np.log(100 / 20) / np.log(1000))
        and hundred.label == "100 Hz"
    )
    assert note_of(440.0) == ("A4", 0.0) and note_of(261.6256)[0] == "C4"


# ---------------------------------------------------------------------------------- window
@pytest.fixture
def window(qtbot, tmp_path):
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    return open_window(qtbot, tmp_path, path)


def wheel(canvas, x, y, delta, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    event = QWheelEvent(
        QPointF(x, y),
        canvas.mapToGlobal(QPointF(x, y)),
        QPoint(0, 0),
        QPoint(0, delta),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(canvas, event)


def test_ctrl_wheel_zooms_time_about_the_pointer_and_rulers_follow(window, qtbot):
    canvas = window.canvas
    x, y = canvas.width() * 7 // 10, canvas.height() // 2
    before = canvas.mapping().to_document(x, y)
    with qtbot.waitSignal(canvas.view_changed):
        wheel(canvas, x, y, 240, Qt.KeyboardModifier.ControlModifier)
    mapping = canvas.mapping()
    assert mapping.to_document(x, y).frame == pytest.approx(before.frame, abs=1e-6)
    t0, t1, _, _ = mapping.visible
    assert t1 - t0 < canvas.renderer.geometry.n_frames / 1.2
    assert window.time_ruler.span == pytest.approx(mapping.seconds_span)
    window.actions_by_name["fit"].trigger()
    assert canvas.view.time_range is None


def test_middle_drag_and_space_drag_pan_without_playing(window, qtbot):
    canvas = window.canvas
    canvas.zoom(4.0)
    start = canvas.mapping().visible[0]
    middle = Qt.MouseButton.MiddleButton
    send_mouse(canvas, QEvent.Type.MouseButtonPress, 300, 200, button=middle, buttons=middle)
    with qtbot.waitSignal(canvas.view_changed):
        send_mouse(canvas, QEvent.Type.MouseMove, 250, 200, buttons=middle)
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, 250, 200, button=middle)
    qtbot.waitUntil(lambda: not canvas.interacting)
    after_middle = canvas.mapping().visible[0]
    assert after_middle > start  # dragging left shows later times

    canvas.setFocus()
    window.statusBar().clearMessage()
    QTest.keyPress(canvas, Qt.Key.Key_Space)
    drag(qtbot, canvas, [(200, 200), (260, 200)])
    QTest.keyRelease(canvas, Qt.Key.Key_Space)
    assert canvas.mapping().visible[0] < after_middle
    assert (
        window.session.history is not None and not window.session.history.can_undo
    )  # nothing was painted
    assert "Playback" not in window.statusBar().currentMessage()  # and Space did not toggle play


def test_space_is_a_shortcut_and_only_its_hold_is_watched_application_wide(
    window, qtbot, monkeypatch
):
    """No Python runs for the application's other events while Space is up (a filter on every
    event took the interpreter from the painting thread); held, a filter waits for its release."""
    from spectropaint.app.window.space_key import SpaceKey

    canvas, space = window.canvas, window.space_key
    filtered = []
    real = SpaceKey.eventFilter
    monkeypatch.setattr(
        SpaceKey, "eventFilter", lambda self, *args: (filtered.append(1), real(self, *args))[1]
    )
    plays = []
    space.play_pause = lambda: plays.append(1)
    canvas.setFocus()
    send_mouse(canvas, QEvent.Type.MouseMove, 200, 200)
    QApplication.processEvents()
    assert filtered == []
    QTest.keyPress(canvas, Qt.Key.Key_Space)
    assert canvas._space_held
    send_mouse(canvas, QEvent.Type.MouseMove, 210, 200)
    assert filtered  # watching for the release
    QTest.keyRelease(canvas, Qt.Key.Key_Space)
    assert not canvas._space_held and plays == [1]  # a tap
    seen = len(filtered)
    send_mouse(canvas, QEvent.Type.MouseMove, 220, 200)
    QApplication.processEvents()
    assert len(filtered) == seen  # no longer watching


def test_space_held_when_the_window_loses_the_keyboard_ends_without_playing(window):
    canvas, space = window.canvas, window.space_key
    plays = []
    space.play_pause = lambda: plays.append(1)
    canvas.setFocus()
    QTest.keyPress(canvas, Qt.Key.Key_Space)
    assert canvas._space_held
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))  # released elsewhere
    assert not canvas._space_held and plays == []
    QTest.keyClick(canvas, Qt.Key.Key_Space)  # the next tap plays
    assert plays == [1]


def test_space_in_a_text_field_types_a_space_and_does_not_play(window):
    from PySide6.QtWidgets import QLineEdit

    plays = []
    window.space_key.play_pause = lambda: plays.append(1)
    field = QLineEdit(window)
    field.show()
    field.setFocus()
    QTest.keyClick(field, Qt.Key.Key_A)
    QTest.keyClick(field, Qt.Key.Key_Space)
    QTest.keyClick(field, Qt.Key.Key_B)
    assert field.text() == "a b" and plays == [] and not window.canvas._space_held


def test_view_controls_restyle_the_canvas_without_touching_the_document(window, qtbot):
    canvas = window.canvas
    magnitude = window.session.document.blocks[0].magnitude.clone()
    wait_for_fresh_frame(qtbot, canvas)
    before = canvas_pixels(canvas)
    window.view_panel.colormap.setCurrentText("grayscale")
    window.view_panel.range.setValue(40.0)
    wait_for_fresh_frame(qtbot, canvas)
    after = canvas_pixels(canvas)
    assert canvas.view.colormap == "grayscale" and canvas.view.range_db == 40.0
    assert np.abs(after.astype(int) - before).mean() > 5
    assert (
        np.all(after[..., 0] == after[..., 1])
        or np.abs(after[..., 0] - after[..., 2].astype(int)).max() < 3
    )
    assert window.color_bar.range_db == 40.0
    assert (window.session.document.blocks[0].magnitude == magnitude).all()


def test_zoom_tool_click_zooms_in_on_the_clicked_point(window, qtbot):
    canvas = window.canvas
    window.palette.actions_by_tool["zoom"].trigger()
    x, y = canvas.width() // 4, canvas.height() * 3 // 4  # rendercanvas passes whole pixels
    before = canvas.mapping().to_document(x, y)
    left = Qt.MouseButton.LeftButton
    with qtbot.waitSignal(canvas.view_changed):
        send_mouse(canvas, QEvent.Type.MouseButtonPress, x, y, button=left, buttons=left)
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, x, y, button=left)
    after = canvas.mapping()
    assert after.to_document(x, y).frame == pytest.approx(before.frame, abs=1e-6)
    assert after.visible[1] - after.visible[0] == pytest.approx(
        canvas.renderer.geometry.n_frames / 2
    )


def test_pen_pressure_scales_the_stroke(window, qtbot):
    canvas, block = window.canvas, window.session.document.blocks[0]
    gain_db = window.brush_params["gain"]["gain_db"]
    pressure = 0.25
    assert canvas.tool.settings.pressure_strength == 1.0  # weight follows pressure fully
    pen = QPointingDevice(
        "test pen", 7, QInputDevice.DeviceType.Stylus, QPointingDevice.PointerType.Pen,
        QInputDevice.Capability.Position | QInputDevice.Capability.Pressure, 1, 2,
    )  # fmt: skip
    x, y = canvas.width() * 0.5, canvas.height() * 0.5
    centre = canvas.mapping().to_document(x, y)
    frame, bin_ = round(centre.frame), round(centre.bin)
    canvas.tool.settings = dataclasses.replace(canvas.tool.settings, hardness=1.0)
    before = block.magnitude[:, bin_, frame].clone()
    local = QPointF(x, y)
    tablet = QTabletEvent(
        QEvent.Type.TabletPress, pen, local, canvas.mapToGlobal(local), pressure, 0.0, 0.0, 0.0, 0.0, 0.0,
        Qt.KeyboardModifier.NoModifier, Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton,
    )  # fmt: skip
    QApplication.sendEvent(canvas, tablet)
    left = Qt.MouseButton.LeftButton
    for kind, button, buttons in (
        (QEvent.Type.MouseButtonPress, left, left),
        (QEvent.Type.MouseButtonRelease, left, Qt.MouseButton.NoButton),
    ):
        mouse = QMouseEvent(
            kind,
            local,
            canvas.mapToGlobal(local),
            button,
            buttons,
            Qt.KeyboardModifier.NoModifier,
            pen,
        )
        QApplication.sendEvent(canvas, mouse)
        qtbot.waitUntil(lambda kind=kind: canvas.painting == (kind == QEvent.Type.MouseButtonPress))
    ratio = (block.magnitude[:, bin_, frame] / before).numpy()
    expected = 1 + (10 ** (gain_db / 20) - 1) * pressure
    np.testing.assert_allclose(ratio, expected, rtol=1e-4)
