"""What a new user sees: the brush outline and clone source drawn over the picture, the colour bar
of the phase view, blank rulers without a document, shortcuts that do what the menu says, and a
status bar that does not go stale."""

from __future__ import annotations

import numpy as np
import pytest
from gui_fixtures import (
    JACK_RATE,
    canvas_pixels,
    jack_server,  # noqa: F401 - fixture
    open_window,
    send_mouse,
    tones_window,  # noqa: F401 - the window fixture
    wait_for_fresh_frame,
    write_test_sound,
)  # noqa: F401
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest

from spectropaint.transforms.regions import Region

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


def hover(qtbot, canvas, x, y) -> None:
    with qtbot.waitSignal(canvas.cursor_moved, timeout=5000):
        send_mouse(canvas, QEvent.Type.MouseMove, x, y)


def changed_box(before: np.ndarray, after: np.ndarray) -> tuple[int, int, int, int]:
    """``(left, top, right, bottom)`` of the pixels that differ."""
    rows, cols = np.nonzero((before != after).any(axis=-1))
    return cols.min(), rows.min(), cols.max(), rows.max()


def test_brackets_resize_the_outline_at_once_without_moving_the_mouse(window, qtbot):
    canvas = window.canvas
    window.palette.select("gain")
    window.view_panel.scale.setCurrentText("linear")
    wait_for_fresh_frame(qtbot, canvas)
    plain = canvas_pixels(canvas)
    x, y = canvas.width() // 2, canvas.height() // 2
    hover(qtbot, canvas, x, y)
    small = changed_box(plain, canvas_pixels(canvas))
    canvas.setFocus()
    for _ in range(3):
        QTest.keyClick(canvas, Qt.Key.Key_BracketRight)
    settings = canvas.tool.settings
    assert settings.radius_frames == pytest.approx(8 * 1.25**3, rel=1e-2)
    large = changed_box(plain, canvas_pixels(canvas))
    # the outline is the dab's ellipse: its width in pixels is its width in frames
    mapping = canvas.mapping()
    frames_per_px = (mapping.visible[1] - mapping.visible[0]) / mapping.width
    assert large[2] - large[0] == pytest.approx(2 * settings.radius_frames / frames_per_px, abs=4)
    assert (large[2] - large[0]) / (small[2] - small[0]) == pytest.approx(1.25**3, rel=0.15)
    centre_x = (large[0] + large[2]) / 2
    assert centre_x == pytest.approx(x, abs=2)  # still where the pointer is


def test_the_clone_source_is_marked_where_ctrl_click_set_it(window, qtbot):
    canvas = window.canvas
    window.palette.select("clone")
    plain = canvas_pixels(canvas)
    x, y = canvas.width() // 4, canvas.height() // 3
    left, ctrl = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier
    send_mouse(
        canvas, QEvent.Type.MouseButtonPress, x, y, button=left, buttons=left, modifiers=ctrl
    )
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, x, y, button=left, modifiers=ctrl)
    qtbot.waitUntil(lambda: canvas.overlay.clone_source is not None)
    canvas.tool.leave()  # no outline: only the mark
    marked = canvas_pixels(canvas)
    left_, top, right, bottom = changed_box(plain, marked)
    assert abs((left_ + right) / 2 - x) <= 2 and abs((top + bottom) / 2 - y) <= 2
    green = marked[top : bottom + 1, left_ : right + 1]
    assert ((green[..., 1] > 180) & (green[..., 0] < 150)).sum() > 20


def test_the_phase_view_has_a_cyclic_colour_bar_in_radians(window, qtbot):
    assert window.color_bar.unit == "dB"
    window.view_panel.mode.setCurrentText("phase")
    bar = window.color_bar
    assert bar.phase and bar.unit == "rad" and bar.colormap == window.canvas.view.phase_colormap
    texts = [text for _, text in bar.labels()]
    assert texts[0] == "−π" and texts[-1] == "π" and "dB" not in texts
    window.view_panel.mode.setCurrentText("magnitude")
    assert bar.unit == "dB" and not bar.phase


def test_rulers_are_blank_without_a_document(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from spectropaint.app.settings_store import SettingsStore
    from spectropaint.app.window.main_window import MainWindow

    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=store)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    for ruler in (window.time_ruler, window.freq_ruler):
        assert ruler.span is None
        image = ruler.grab().toImage()
        colours = {
            image.pixel(x, y) for x in range(0, image.width(), 3) for y in range(image.height())
        }
        assert len(colours) == 1  # nothing drawn: no "0 Hz ... 1 Hz" ticks


def _normal_forms(sequence: QKeySequence) -> set[tuple[int, int]]:
    """A shortcut as the keys a US keyboard sends for it: Shift plus a symbol is also that symbol's
    shifted character (Ctrl+Shift+= is Ctrl++), so the two must not be bound to different actions."""
    shifted = {"=": "+", "-": "_", "[": "{", "]": "}", ";": ":", "'": '"', ",": "<", ".": ">",
               "/": "?", "`": "~", "1": "!", "2": "@", "0": ")", "9": "("}  # fmt: skip
    forms = set()
    for index in range(sequence.count()):
        combination = sequence[index]
        key, mods = combination.key(), combination.keyboardModifiers()
        char = chr(key) if 32 <= key < 127 else ""
        shift = Qt.KeyboardModifier.ShiftModifier
        if char in shifted and mods & shift:
            forms.add((ord(shifted[char]), (mods & ~shift).value))
        elif char in shifted.values():
            forms.add((key, mods.value & ~shift.value))
        else:
            forms.add((key, mods.value))
    return forms


def test_no_two_actions_answer_the_same_keys(window):
    owner: dict[tuple[int, int], str] = {}
    actions = [a for menu in window.menus.values() for a in menu.actions()]
    actions += list(window.palette.actions_by_tool.values())
    for action in actions:
        for sequence in action.shortcuts():
            for form in _normal_forms(sequence):
                other = owner.setdefault(form, action.objectName())
                assert other == action.objectName(), (sequence.toString(), other)


def test_ctrl_shift_equals_zooms_frequency_and_ctrl_equals_time(window, qtbot):
    canvas = window.canvas
    canvas.setFocus()
    control, shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(canvas, Qt.Key.Key_Equal, control | shift)
    assert canvas.view.freq_range is not None and canvas.view.time_range is None
    QTest.keyClick(canvas, Qt.Key.Key_Minus, control | shift)
    assert canvas.view.freq_range is None
    QTest.keyClick(canvas, Qt.Key.Key_Equal, control)
    assert canvas.view.time_range is not None and canvas.view.freq_range is None


def test_status_messages_go_away_by_themselves(window, qtbot, monkeypatch):
    from spectropaint.app.window import status_line

    monkeypatch.setattr(status_line, "MIN_SHOW_MS", 300)
    monkeypatch.setattr(status_line, "MS_PER_CHARACTER", 1)
    window.canvas.message.emit("Stroke cancelled")
    assert window.statusBar().currentMessage() == "Stroke cancelled"
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "", timeout=3000)


def test_the_playback_off_notice_goes_when_a_file_plays(
    qtbot,
    tmp_path,
    monkeypatch,
    jack_server,  # noqa: F811
):
    from spectropaint.app.playback import transport as transport_module

    path = tmp_path / "tones.wav"
    write_test_sound(path, sample_rate=JACK_RATE)
    window = open_window(qtbot, tmp_path, path)
    assert window.statusBar().currentMessage().startswith("Playback is off")
    monkeypatch.setattr(
        transport_module, "find_output_device", lambda *, refresh=False: jack_server
    )
    window.canvas.setFocus()
    QTest.keyClick(window.canvas, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: window.transport.playing, timeout=5000)
    assert "Playback is off" not in window.statusBar().currentMessage()
    window.transport.toggle()


def test_the_readout_calls_digital_silence_silence(qtbot, tmp_path):
    import soundfile

    path = tmp_path / "half-silent.wav"
    rate = 22050
    t = np.arange(rate) / rate
    samples = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), np.zeros_like(t)])
    soundfile.write(path, samples.T, rate, subtype="FLOAT")
    window = open_window(qtbot, tmp_path, path)
    canvas = window.canvas
    hover(qtbot, canvas, canvas.width() // 2, canvas.height() // 4)
    text = window.readout.text()
    assert "ch2 < -150 dB" in text
    levels = [float(word) for word in text.split() if word.lstrip("-").replace(".", "").isdigit()]
    assert min(levels) >= -150  # no -300 or -650 anywhere


def test_the_readout_follows_an_edit_under_a_still_pointer(window, qtbot):
    """Undo, redo or an operation change the level under the pointer: the readout says so without
    the mouse moving (it showed the level before the edit)."""
    canvas, session = window.canvas, window.session
    window.palette.select("select")
    hover(qtbot, canvas, canvas.width() // 2, canvas.height() // 2)
    before = window.readout.text()
    assert "dB" in before and "< -150 dB" not in before
    document = session.document
    block = document.blocks[0]
    everything = Region(0, block.n_bins, 0, block.n_frames, tuple(range(document.n_channels)))
    session.apply("silence", everything, lambda m, p: (m * 0.0, p))
    qtbot.waitUntil(lambda: "< -150 dB" in window.readout.text(), timeout=5000)
    session.undo()
    qtbot.waitUntil(lambda: window.readout.text() == before, timeout=5000)


class SlowRead:
    """A level on its way from the GPU that arrives when the test says."""

    def __init__(self, values):
        self.arrived = False
        self._values = values

    def ready(self) -> bool:
        return self.arrived

    def values(self):
        assert self.arrived, "the window waited for a level that had not arrived"
        return self._values


def test_the_readout_shows_a_point_once_its_level_arrives_without_waiting_for_it(
    window, qtbot, monkeypatch
):
    """On a GPU the level under the pointer comes behind the stroke's kernels: the window does
    not wait for it, and shows the point, level and all, once it arrives."""
    canvas, document = window.canvas, window.session.document
    hover(qtbot, canvas, canvas.width() // 3, canvas.height() // 2)
    before = window.readout.text()
    reads = []

    def later(seconds, hz):
        reads.append(SlowRead(np.array([document.full_scale * 0.5] * document.n_channels)))
        return reads[-1]

    monkeypatch.setattr(document, "magnitude_at", later)
    hover(qtbot, canvas, canvas.width() // 2, canvas.height() // 3)
    hover(qtbot, canvas, canvas.width() // 2 + 20, canvas.height() // 3)
    qtbot.wait(20)
    assert window.readout.text() == before  # the window's thread went on meanwhile
    reads[0].arrived = True  # the first point's level: no longer shown, never read
    qtbot.wait(20)
    assert window.readout.text() == before
    reads[1].arrived = True
    qtbot.waitUntil(lambda: window.readout.text() != before, timeout=5000)
    assert "-6.0 dB" in window.readout.text()
    assert window.readout.text().split()[0] != before.split()[0]  # the new point's time


def test_a_zoom_under_a_still_pointer_moves_the_readout_and_the_outline_with_it(window, qtbot):
    """Ctrl+= zooms about the view's centre: what lies under a pointer that does not move changes,
    and the readout and brush outline say what lies there now, not what did."""
    canvas = window.canvas
    x, y = canvas.width() * 0.25, canvas.height() * 0.25
    hover(qtbot, canvas, x, y)
    before = window.readout.text()
    footprint = canvas.overlay.footprint
    with qtbot.waitSignal(canvas.cursor_moved, timeout=5000):
        window.actions_by_name["zoom_in"].trigger()
    point = canvas.mapping().to_document(x, y)
    (seconds, _, hz, _), was = window.readout.text().split()[:4], before.split()[0]
    assert float(seconds) == pytest.approx(point.seconds, abs=2e-3)
    assert float(hz) == pytest.approx(point.hz, rel=1e-3)
    assert abs(float(seconds) - float(was)) > 0.1  # a quarter in, the zoom moved it
    assert canvas.overlay.footprint.frame == pytest.approx(point.frame, abs=0.1)
    assert canvas.overlay.footprint.frame != pytest.approx(footprint.frame)
