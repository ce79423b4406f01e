"""Helpers for the GUI and playback tests: a JACK dummy audio server (fixture), a small test sound,
a window opened on a file, Qt mouse events, and reading the canvas's pixels.

``tests/`` has no ``__init__.py``, so pytest puts it on ``sys.path``: import with
``from gui_fixtures import jack_server, open_window``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import numpy as np
import pytest
import soundfile

from spectropaint.app.playback.engine import OutputDevice, find_output_device

JACK_RATE = 44100
JACK_START_TIMEOUT_S = 10.0


@pytest.fixture
def jack_server(monkeypatch, tmp_path) -> OutputDevice:
    """A JACK server on the ``dummy`` backend (real-time pace, no hardware), private to this test.

    The server gets a unique name (``JACK_DEFAULT_SERVER``) so parallel runs cannot meet, and
    PortAudio is re-initialised to see it. Yields the output device PortAudio reports for it. At the
    end PortAudio is re-initialised without it, then the server is stopped (by its pid).
    """
    if shutil.which("jackd") is None:
        pytest.fail("jackd is not installed (apt-get install jackd2): the playback tests need it")
    name = f"spectropaint-test-{os.getpid()}"
    monkeypatch.setenv("JACK_DEFAULT_SERVER", name)
    monkeypatch.setenv("JACK_NO_START_SERVER", "1")
    log = open(tmp_path / "jackd.log", "w")  # noqa: SIM115 - closed at teardown
    server = subprocess.Popen(
        ["jackd", "--no-realtime", "-n", name, "-d", "dummy", "-r", str(JACK_RATE), "-p", "256"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + JACK_START_TIMEOUT_S
        device = find_output_device(refresh=True)
        while not device.available and time.monotonic() < deadline:
            if server.poll() is not None:
                break
            time.sleep(0.05)
            device = find_output_device(refresh=True)
        if not device.available:
            log.flush()
            pytest.fail(
                f"JACK dummy server did not come up in {JACK_START_TIMEOUT_S} s: {device.reason}\n"
                + (tmp_path / "jackd.log").read_text()
            )
        yield device
    finally:
        # PortAudio must let go of the server before it dies: libjack aborts the process otherwise.
        monkeypatch.undo()
        find_output_device(refresh=True)
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def write_test_sound(path, *, seconds: float = 2.0, sample_rate: int = 22050) -> np.ndarray:
    """Write a small stereo WAV (two tones and quiet noise) and return its samples ``[2, N]``."""
    rng = np.random.default_rng(5)
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    left = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.01 * rng.standard_normal(t.size)
    right = 0.3 * np.sin(2 * np.pi * 1320 * t) + 0.01 * rng.standard_normal(t.size)
    samples = np.stack([left, right])
    soundfile.write(path, samples.T, sample_rate, subtype="FLOAT")
    return samples


@pytest.fixture
def user_settings_in(tmp_path):
    """Point the default (user) QSettings at ``tmp_path`` for the test, and back afterwards."""
    from PySide6.QtCore import QSettings, QStandardPaths

    native, scope = QSettings.Format.NativeFormat, QSettings.Scope.UserScope
    QSettings.setPath(native, scope, str(tmp_path))
    yield tmp_path
    config = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)
    QSettings.setPath(native, scope, config)


NO_OUTPUT = OutputDevice(None, "", 0, "no audio output device (test)")
FIRST_FRAME_TIMEOUT_MS = 60_000


def open_window(
    qtbot,
    tmp_path,
    path,
    *,
    output_device: OutputDevice = NO_OUTPUT,
    recovery_folder=None,
    analysis=None,
):
    """A shown MainWindow with its own settings file, ``path`` open and drawn once.

    With ``recovery_folder`` the window autosaves there (no autosave otherwise); ``analysis`` is
    what it opens sounds in (as the command line's ``--transform`` and its settings).
    """
    from PySide6.QtCore import QSettings

    from spectropaint.app.settings_store import SettingsStore
    from spectropaint.app.window.main_window import MainWindow

    store = SettingsStore(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(
        settings=store,
        output_device=output_device,
        recovery_folder=None if recovery_folder is None else str(recovery_folder),
        analysis=analysis,
    )
    qtbot.addWidget(window, before_close_func=_forget_edits)
    window.resize(1100, 700)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    window.open_path(None if path is None else str(path))
    qtbot.waitUntil(
        lambda: window.canvas is not None and window.canvas.frames_presented > 0,
        timeout=FIRST_FRAME_TIMEOUT_MS,
    )
    window.activateWindow()  # again: the progress dialog of a slow open may have taken it
    qtbot.waitUntil(window.isActiveWindow)  # shortcuts only reach an active window
    return window


@pytest.fixture(name="window")
def tones_window(qtbot, tmp_path):
    """The ``window`` fixture of the modules that import this: a window on
    :func:`write_test_sound`'s two seconds of stereo tones."""
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    return open_window(qtbot, tmp_path, path)


def _forget_edits(window) -> None:
    if window.session is not None:
        window.session.modified = False


def canvas_pixels(canvas) -> np.ndarray:
    """What the canvas shows: ``[H, W, 3]`` uint8 (through ``QWidget.grab``, as a screenshot would)."""
    from PySide6.QtGui import QImage

    image = canvas.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    width, height = image.width(), image.height()
    rows = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * height)
    return (
        rows.reshape(height, image.bytesPerLine())[:, : 3 * width].reshape(height, width, 3).copy()
    )


def send_mouse(
    canvas, kind, x: float, y: float, *, button=None, buttons=None, modifiers=None
) -> None:
    """Deliver one mouse event to the canvas as Qt would (press, move or release)."""
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    button = Qt.MouseButton.NoButton if button is None else button
    buttons = Qt.MouseButton.NoButton if buttons is None else buttons
    modifiers = Qt.KeyboardModifier.NoModifier if modifiers is None else modifiers
    local = QPointF(x, y)
    event = QMouseEvent(kind, local, canvas.mapToGlobal(local), button, buttons, modifiers)
    QApplication.sendEvent(canvas, event)


def drag(qtbot, canvas, points, *, modifiers=None) -> None:
    """Press the left button at ``points[0]``, move through the rest, release at the last one.

    Each move reaches the tool as it is sent (the canvas hands pointer events on at once); the
    wait on ``cursor_moved`` checks that it did.
    """
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtWidgets import QApplication

    left = Qt.MouseButton.LeftButton
    send_mouse(
        canvas,
        QEvent.Type.MouseButtonPress,
        *points[0],
        button=left,
        buttons=left,
        modifiers=modifiers,
    )
    for x, y in points[1:]:
        with qtbot.waitSignal(canvas.cursor_moved, timeout=5000):
            send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left, modifiers=modifiers)
    send_mouse(
        canvas, QEvent.Type.MouseButtonRelease, *points[-1], button=left, modifiers=modifiers
    )
    qtbot.waitUntil(lambda: not canvas.interacting, timeout=5000)
    QApplication.processEvents()  # the stroke's changes, painted on their own thread, arrive
    assert canvas.session.wait_settled(60)  # and its settle, computed on the session's thread
    QApplication.processEvents()


def wait_for_fresh_frame(qtbot, canvas) -> None:
    """Ask for a frame now and wait until it is painted on the widget."""
    count = canvas.frames_presented
    canvas.request_draw()
    qtbot.waitUntil(lambda: canvas.frames_presented > count, timeout=10000)
