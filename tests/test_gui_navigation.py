"""Getting around a sound: the overview, scroll bars, zoom sliders, and the view following the
playhead."""

from __future__ import annotations

import pytest
from gui_fixtures import drag, open_window, send_mouse, write_test_sound
from PySide6.QtCore import QEvent, Qt

from spectropaint.app.navigation import STEPS_PER_TEXEL

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def window(qtbot, tmp_path):
    path = tmp_path / "tones.wav"
    write_test_sound(path, seconds=4.0)
    return open_window(qtbot, tmp_path, path)


def visible_seconds(window) -> tuple[float, float]:
    return window.canvas.mapping().seconds_span


def test_dragging_the_overview_range_moves_the_view(window, qtbot):
    canvas, overview = window.canvas, window.overview
    canvas.zoom(4.0)  # a quarter of the sound, in the middle
    start, stop = visible_seconds(window)
    assert overview.visible == pytest.approx((start, stop))
    left = Qt.MouseButton.LeftButton
    x = overview._x((start + stop) / 2)
    send_mouse(overview, QEvent.Type.MouseButtonPress, x, 20, button=left, buttons=left)
    send_mouse(overview, QEvent.Type.MouseMove, x - overview.width() * 0.25, 20, buttons=left)
    send_mouse(overview, QEvent.Type.MouseButtonRelease, x, 20, button=left)
    moved = visible_seconds(window)
    assert moved[0] == pytest.approx(start - 1.0, abs=0.02)  # a quarter of 4 s to the left
    assert moved[1] - moved[0] == pytest.approx(stop - start, abs=0.02)


def test_dragging_an_edge_of_the_overview_range_resizes_it(window, qtbot):
    canvas, overview = window.canvas, window.overview
    canvas.zoom(4.0)
    start, stop = visible_seconds(window)
    left = Qt.MouseButton.LeftButton
    x = overview._x(stop)
    send_mouse(overview, QEvent.Type.MouseButtonPress, x, 20, button=left, buttons=left)
    send_mouse(overview, QEvent.Type.MouseMove, x + overview.width() * 0.25, 20, buttons=left)
    send_mouse(overview, QEvent.Type.MouseButtonRelease, x, 20, button=left)
    after = visible_seconds(window)
    assert after[0] == pytest.approx(start, abs=0.02)
    assert after[1] == pytest.approx(stop + 1.0, abs=0.02)


def assert_a_click_outside_the_range_centres_it_there(window) -> None:
    """On a 4 s sound zoomed to a quarter, a click at 90 % of the overview centres the range
    there (as far as the sound's end allows)."""
    window.canvas.zoom(4.0)
    overview = window.overview
    left = Qt.MouseButton.LeftButton
    x = overview.width() * 0.9
    send_mouse(overview, QEvent.Type.MouseButtonPress, x, 20, button=left, buttons=left)
    send_mouse(overview, QEvent.Type.MouseButtonRelease, x, 20, button=left)
    start, stop = visible_seconds(window)
    assert (start + stop) / 2 == pytest.approx(min(3.6, 4.0 - (stop - start) / 2), abs=0.02)


def test_a_click_outside_the_range_centres_it_there(window):
    assert_a_click_outside_the_range_centres_it_there(window)


def test_scroll_bars_and_zoom_sliders_move_the_view_and_follow_it(window, qtbot):
    canvas, editor = window.canvas, window.editor
    assert not editor.time_scroll.maximum()  # everything shown
    editor.time_zoom.setValue(500)
    t0, t1, _, _ = canvas.mapping().visible
    n_frames = canvas.renderer.geometry.n_frames
    assert t1 - t0 == pytest.approx((n_frames * 8) ** 0.5, rel=0.02)  # halfway on a log scale
    assert editor.time_scroll.maximum() > 0
    editor.time_scroll.setValue(0)
    assert canvas.mapping().visible[0] == pytest.approx(0.0)
    editor.time_scroll.setValue(editor.time_scroll.maximum())
    assert canvas.mapping().visible[1] == pytest.approx(n_frames, abs=1 / STEPS_PER_TEXEL)
    editor.freq_zoom.setValue(1000)
    _, _, low, high = canvas.mapping().visible
    assert high / low < 1.02  # the closest frequency zoom on the log axis
    canvas.fit()  # and back: the widgets follow the view
    assert editor.time_zoom.value() == 0 and editor.freq_zoom.value() == 0
    assert editor.time_scroll.maximum() == 0


def test_the_overview_shows_edits(window, qtbot):
    canvas = window.canvas
    qtbot.waitUntil(lambda: window.transport.waveform is not None, timeout=10000)
    summary = window.transport.waveform
    qtbot.waitUntil(lambda: window.overview.summary is summary, timeout=10000)
    window.palette.select("erase")
    window.brush_panel.apply_preset("Large")
    before = summary.high.copy()
    width, height = canvas.width(), canvas.height()
    for fy in (0.3, 0.45, 0.6, 0.75, 0.9):  # erase the tones along the middle of the sound
        drag(qtbot, canvas, [(width * fx, height * fy) for fx in (0.4, 0.5, 0.6)])
    qtbot.waitUntil(lambda: (summary.high != before).any(), timeout=10000)
    middle = slice(summary.high.shape[1] * 45 // 100, summary.high.shape[1] * 55 // 100)
    assert summary.high[:, middle].max() < 0.5 * before[:, middle].max()


def test_the_view_turns_pages_with_the_playhead(window):
    canvas, view = window.canvas, window.transport_view
    canvas.zoom(4.0)
    start, stop = visible_seconds(window)
    view.follow_mode = "page"
    window.transport.engine._playing = True  # as while playing (no device here)
    try:
        view.show_playhead(stop + 0.01)
    finally:
        window.transport.engine._playing = False
    after = visible_seconds(window)
    assert after[0] < stop + 0.01 < after[1] and after[0] > start


def test_the_overview_moves_the_view_before_its_waveform_is_made(qtbot, tmp_path, monkeypatch):
    """The waveform is made on a thread of its own; the range is there (and can be dragged) from
    the moment the sound is shown."""
    import threading

    from spectropaint.app.playback import transport as transport_module

    gate = threading.Event()
    real = transport_module.WaveformSummary
    monkeypatch.setattr(transport_module, "WaveformSummary", lambda s: gate.wait(30) and real(s))
    path = tmp_path / "tones.wav"
    write_test_sound(path, seconds=4.0)
    window = open_window(qtbot, tmp_path, path)
    try:
        assert window.transport.waveform is None
        assert_a_click_outside_the_range_centres_it_there(window)
    finally:
        gate.set()


def test_a_waveform_made_before_the_window_listens_still_reaches_the_overview(
    qtbot, tmp_path, monkeypatch
):
    """A short sound's waveform can be made (and its signal sent) before the window connects to
    the transport: the overview shows it all the same."""
    import time

    from spectropaint.app.window import window_listeners

    real = window_listeners.WindowListeners.listen

    def late(self, bridge, canvas, transport):
        deadline = time.monotonic() + 10
        while transport.waveform is None and time.monotonic() < deadline:
            time.sleep(0.005)  # the waveform thread finishes (and signals) first
        return real(self, bridge, canvas, transport)

    monkeypatch.setattr(window_listeners.WindowListeners, "listen", late)
    path = tmp_path / "tones.wav"
    write_test_sound(path, seconds=4.0)
    window = open_window(qtbot, tmp_path, path)
    assert window.transport.waveform is not None
    qtbot.waitUntil(lambda: window.overview.summary is window.transport.waveform, timeout=5000)
