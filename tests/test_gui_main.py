"""run_gui: refuses a Qt binding that would crash, otherwise opens the window and returns on close."""

from __future__ import annotations

import sys

import PySide6
import pytest
from gui_fixtures import NO_OUTPUT, user_settings_in  # noqa: F401 - fixture
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from spectropaint.app import gui_main
from spectropaint.app.files.recovery import RECOVERY_ENV
from spectropaint.app.window import main_window
from spectropaint.transforms.errors import SpectroPaintError

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


def test_the_reference_probe_flags_pyside_6_12_0_on_python_3_11_only():
    # PySide6 6.12.0 drops a reference to None in every void call on Python 3.11 (6.11.3 does not;
    # from 3.12 on None is immortal). The probe measures it; this is the one known broken pairing.
    broken = PySide6.__version__ == "6.12.0" and sys.version_info < (3, 12)
    problem = gui_main.qt_reference_problem()
    assert (problem is not None) == broken
    if broken:
        assert "PySide6 6.12.0" in problem and "Python 3.11" in problem


def test_run_gui_refuses_a_binding_that_would_crash(monkeypatch):
    monkeypatch.setattr(gui_main, "qt_reference_problem", lambda: "PySide6 x loses references")
    with pytest.raises(SpectroPaintError, match="loses references"):
        gui_main.run_gui(None)


def test_run_gui_shows_the_demo_sound_and_returns_when_closed(
    qtbot,
    monkeypatch,
    user_settings_in,  # noqa: F811
):
    monkeypatch.setenv(RECOVERY_ENV, str(user_settings_in / "recovery"))
    monkeypatch.setattr(gui_main, "qt_reference_problem", lambda: None)
    monkeypatch.setattr(main_window, "find_output_device", lambda **kwargs: NO_OUTPUT)
    seen = {}
    earlier = set(QApplication.topLevelWidgets())  # windows other tests left behind

    def close_when_shown() -> None:
        windows = [
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, main_window.MainWindow) and w not in earlier
        ]
        window = next((w for w in windows if w.isVisible()), None)
        if window is None or window.canvas is None or window.canvas.frames_presented == 0:
            QTimer.singleShot(50, close_when_shown)
            return
        seen.update(
            path=window.session.path,
            channels=window.session.document.n_channels,
            title=window.windowTitle(),
        )
        window.close()

    QTimer.singleShot(50, close_when_shown)
    assert gui_main.run_gui(None) == 0
    assert seen == {"path": None, "channels": 2, "title": "Demo sound[*] — SpectroPaint"}
    assert list(user_settings_in.rglob("*.conf"))  # preferences were saved in the user's settings
