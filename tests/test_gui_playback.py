"""Playback from the window through a real PortAudio stream on JACK's dummy backend."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from gui_fixtures import JACK_RATE, drag, jack_server, open_window  # noqa: F401 - fixture
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def window(qtbot, tmp_path, jack_server):  # noqa: F811
    rng = np.random.default_rng(3)
    t = np.arange(int(0.6 * JACK_RATE)) / JACK_RATE
    samples = np.stack([0.3 * np.sin(2 * np.pi * 660 * t), 0.05 * rng.standard_normal(t.size)])
    path = tmp_path / "short.wav"
    soundfile.write(path, samples.T, JACK_RATE, subtype="FLOAT")
    window = open_window(qtbot, tmp_path, path, output_device=jack_server)
    yield window
    window.close_document()  # the stream must close before the JACK server stops


def record(engine) -> list:
    """Tap every block the engine's callback hands to PortAudio (set before the stream opens)."""
    delivered, fill = [], engine._fill

    def tapped(outdata, frames, time_info, status):
        fill(outdata, frames, time_info, status)
        delivered.append(outdata.copy())

    engine._fill = tapped
    return delivered


def played(qtbot, delivered: list, count: int) -> np.ndarray:
    """The blocks the tap kept, once they hold ``count`` samples: the callback's last block moves
    the position to the end, which the transport may report before the tap keeps that block."""
    qtbot.waitUntil(lambda: sum(len(block) for block in delivered) >= count, timeout=5000)
    return np.concatenate(delivered)


def play_to_the_end(qtbot, window) -> None:
    window.canvas.setFocus()
    QTest.keyClick(window.canvas, Qt.Key.Key_Space)  # Play
    qtbot.waitUntil(lambda: window.transport.playing, timeout=5000)
    qtbot.waitUntil(lambda: not window.transport.playing, timeout=10000)


def test_after_a_stroke_playback_delivers_the_edited_signal(window, qtbot):
    transport = window.transport
    assert transport.available, transport.reason
    canvas = window.canvas
    width, height = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(width * f, height * 0.5) for f in (0.2, 0.4, 0.6)])
    assert transport.resynthesizer.wait_idle(10) and transport.resynthesizer.error is None
    delivered = record(transport.engine)

    play_to_the_end(qtbot, window)

    edited = window.session.document.edited_samples().T
    original = window.session.document.audio.samples.T
    n = len(edited)
    heard = played(qtbot, delivered, n)
    assert np.abs(edited - original).max() > 1e-3  # the stroke is audible
    np.testing.assert_allclose(heard[:n], edited, atol=1e-6)
    np.testing.assert_array_equal(heard[n:], 0)
    assert transport.playhead_seconds == pytest.approx(n / JACK_RATE)


def test_bypass_plays_the_original(window, qtbot):
    canvas = window.canvas
    drag(qtbot, canvas, [(canvas.width() * f, canvas.height() * 0.5) for f in (0.3, 0.5)])
    assert window.transport.resynthesizer.wait_idle(10)
    window.actions_by_name["bypass"].trigger()
    delivered = record(window.transport.engine)
    play_to_the_end(qtbot, window)
    original = window.session.document.audio.samples.T.astype(np.float32)
    np.testing.assert_array_equal(
        played(qtbot, delivered, len(original))[: len(original)], original
    )


def test_loop_repeats_the_selected_time_range(window, qtbot):
    canvas, transport = window.canvas, window.transport
    window.palette.actions_by_tool["select"].trigger()
    width, height = canvas.width(), canvas.height()
    with qtbot.waitSignal(canvas.selection_changed):
        drag(qtbot, canvas, [(width * 0.3, height * 0.5), (width * 0.45, height * 0.5)])
    start, stop = (round(s * JACK_RATE) for s in transport.selection)
    assert 0 < start < stop
    window.actions_by_name["loop"].trigger()
    assert transport.engine.loop == (start, stop)
    delivered = record(transport.engine)
    window.canvas.setFocus()
    QTest.keyClick(window.canvas, Qt.Key.Key_Space)  # Play: starts at the loop's start
    qtbot.waitUntil(
        lambda: sum(len(block) for block in delivered) > 3 * (stop - start), timeout=10000
    )
    QTest.keyClick(window.canvas, Qt.Key.Key_Space)  # Pause
    assert not transport.playing
    played = np.concatenate(delivered)[: 3 * (stop - start)]
    loop = window.session.document.edited_samples().T[start:stop].astype(np.float32)
    np.testing.assert_array_equal(played, np.concatenate([loop] * 3))


def test_play_selection_plays_it_once_and_stops_at_its_end(window, qtbot):
    canvas, transport = window.canvas, window.transport
    window.palette.actions_by_tool["select"].trigger()
    width, height = canvas.width(), canvas.height()
    drag(qtbot, canvas, [(width * 0.2, height * 0.5), (width * 0.5, height * 0.5)])
    start, stop = (round(s * JACK_RATE) for s in transport.selection)
    delivered = record(transport.engine)
    window.actions_by_name["play_selection"].trigger()
    qtbot.waitUntil(lambda: transport.playing, timeout=5000)
    qtbot.waitUntil(lambda: not transport.playing, timeout=10000)
    assert transport.engine.position == stop
    heard = played(qtbot, delivered, stop - start)
    edited = window.session.document.edited_samples().T.astype(np.float32)
    np.testing.assert_array_equal(heard[: stop - start], edited[start:stop])
    np.testing.assert_array_equal(heard[stop - start :], 0)


def test_the_counter_and_meters_follow_playback_and_stop_goes_back(window, qtbot):
    transport, bar = window.transport, window.transport_bar
    transport.set_cursor(0.1)
    window.actions_by_name["play_from_cursor"].trigger()
    qtbot.waitUntil(lambda: transport.playhead_seconds > 0.3, timeout=5000)
    text = bar.clock.text()
    shown_seconds = float(text.split()[0].split(":")[-1])
    shown_samples = int("".join(text.split()[1:-1]).replace("\u2009", ""))
    assert abs(shown_samples / JACK_RATE - shown_seconds) < 1e-3  # both say the same time
    assert shown_seconds > 0.1
    # a 660 Hz sine at 0.3 on the left: peak -10.5 dB; noise at 0.05 on the right: RMS -26 dB
    meter = bar.meter.ballistics
    qtbot.waitUntil(lambda: meter.peak[0] > -12, timeout=3000)
    assert meter.peak[0] == pytest.approx(20 * np.log10(0.3), abs=1.0)
    assert meter.rms[1] == pytest.approx(20 * np.log10(0.05), abs=3.0)
    window.actions_by_name["stop"].trigger()
    assert not transport.playing
    assert transport.playhead_seconds == pytest.approx(0.1, abs=1 / JACK_RATE)
    assert (meter.peak == -90).all()  # meters fall silent with the sound


def test_dragging_on_the_time_ruler_scrubs(window, qtbot):
    from gui_fixtures import send_mouse
    from PySide6.QtCore import QEvent

    ruler, transport = window.time_ruler, window.transport
    left = Qt.MouseButton.LeftButton
    width = ruler.width()
    send_mouse(ruler, QEvent.Type.MouseButtonPress, width * 0.2, 10, button=left, buttons=left)
    send_mouse(ruler, QEvent.Type.MouseMove, width * 0.5, 10, buttons=left)
    assert transport.playing and transport.scrubbing  # heard from under the pointer
    at = ruler.seconds_at(width * 0.5)
    assert transport.playhead_seconds == pytest.approx(at, abs=0.05)
    send_mouse(ruler, QEvent.Type.MouseMove, width * 0.7, 10, buttons=left)
    send_mouse(ruler, QEvent.Type.MouseButtonRelease, width * 0.7, 10, button=left)
    assert not transport.playing and not transport.scrubbing
    assert transport.cursor_seconds == pytest.approx(ruler.seconds_at(width * 0.7))
