"""Starting the window: ``run_gui(path)`` is what ``spectropaint [FILE]`` calls.

The window autosaves to the recovery folder (:func:`~.recovery.recovery_folder`); before it opens
``path`` it offers to restore what sessions that were killed or crashed autosaved (:mod:`.recovery`).
"""

from __future__ import annotations

import sys

from spectropaint.transforms.errors import SpectroPaintError

QT_PROBE_CALLS = 64
THREAD_SWITCH_S = 0.0005
"""How long a Python thread may hold the interpreter while another waits for it (Python's default
is 5 ms): strokes are painted, settled and played on threads of their own, and a pointer move
handed to the painting thread waited up to that long while the window's thread drew."""


def share_interpreter() -> None:
    """Set the process's thread switch interval for the window (:data:`THREAD_SWITCH_S`)."""
    sys.setswitchinterval(THREAD_SWITCH_S)


def qt_reference_problem() -> str | None:
    """Why the installed PySide6 cannot run the app, or None when it can.

    PySide6 6.12.0 on Python 3.11 returns ``None`` from every void method without a reference (and
    ``True`` from ``Signal.emit``), so the interpreter aborts ("none_dealloc") after a few thousand
    Qt calls: about a minute of use. Measured, not looked up by version: a few calls of a void
    method must leave the count of ``None`` where it was (it is immortal from Python 3.12 on).
    """
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(QT_PROBE_CALLS):
        probe.setObjectName("probe")
    if sys.getrefcount(None) > before - QT_PROBE_CALLS // 2:
        return None
    return (
        f"PySide6 {pyside_version} loses references to None on Python "
        f"{sys.version_info.major}.{sys.version_info.minor} and would crash within minutes; "
        "install another version (pip install 'PySide6-Essentials<6.12') or use Python 3.12 or later"
    )


def run_gui(path: str | None, *, device: str | None = None, analysis=None) -> int:
    """Open the main window on ``path`` (the built-in demo sound when None) and run until it closes.

    When earlier sessions left autosaves behind, a dialog first offers to restore them; restoring
    opens the recovered document instead of ``path``.

    Parameters
    ----------
    path : str or None
        A sound or a project (``.spp``) to open; errors opening it are shown in a dialog, and the
        window stays.
    device : str, optional
        The torch device (``cpu``, ``cuda``, ``cuda:1``, ``mps``); checked before the window opens,
        so a device that is not there is a :class:`SettingsError` the command line reports.
    analysis : STFTSettings or NSGTSettings, optional
        What sounds are analysed in when opened (the STFT's defaults when None); a project keeps
        its own.

    Returns
    -------
    int
        The Qt event loop's exit status.

    Raises
    ------
    SpectroPaintError
        The Qt binding is one that would crash (:func:`qt_reference_problem`), or there is no usable
        GPU adapter (:class:`~spectropaint.gpu.errors.GPUUnavailableError`, also shown in a dialog).
    """
    from PySide6.QtWidgets import QApplication, QMessageBox

    from spectropaint.app.files.recovery import (
        offer_recovery,
        recovery_folder,
        sweep_save_folders,
    )
    from spectropaint.app.settings_store import APPLICATION, ORGANIZATION
    from spectropaint.app.window.main_window import MainWindow
    from spectropaint.gpu.adapter import check_adapter
    from spectropaint.gpu.errors import GPUUnavailableError
    from spectropaint.transforms.torch_device import choose_device

    problem = qt_reference_problem()
    if problem is not None:
        raise SpectroPaintError(problem)
    choose_device(device)
    share_interpreter()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    try:
        check_adapter()
    except GPUUnavailableError as exc:
        QMessageBox.critical(None, "SpectroPaint cannot draw", f"No usable GPU adapter:\n\n{exc}")
        raise  # the command line prints it too and exits with status 1
    folder = recovery_folder()
    window = MainWindow(torch_device=device, recovery_folder=folder, analysis=analysis)
    sweep_save_folders(window.store, folder)
    window.show()
    offer_recovery(window, folder, otherwise=lambda: window.open_path(path))
    return app.exec()
