"""A SpectroPaint window driven from a child process, for faults a test cannot stage in its own.

A full disk needs a small file system mounted in a private mount namespace (``unshare -rm``), and a
read-only folder needs a user whom permissions stop (root ignores them): neither can happen inside
the pytest process, so the window runs here, offscreen, in a process of its own:

    python tests/fault_driver.py SPEC.json   (what ``drive_window(spec, ...)`` runs)

The spec (see :func:`run`) says which sound to open, whether to edit it, and which steps to take:
open a file, trigger a menu action whose save dialog answers with a given path, or quit with unsaved
edits and choose Save. Every error dialog is recorded instead of shown. The driver prints one JSON
object of what it saw (dialogs per step, checksums of the document and of the files at the targets,
the folder's listing); the parent test makes the assertions. Waits have deadlines: a step that
never ends is reported as unfinished, so a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import errno
import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PRELOAD = (
    "importlib.readers",
    "scipy.fft",
    "spectropaint.brushes.history",
    "spectropaint.gpu.png_export",
    "spectropaint.transforms.document",
    "spectropaint.transforms.files.project_file",
)
"""What the window imports on first use, imported before giving up root: the interpreter's own
files may sit where nobody cannot read them (a pyenv under ``/root``)."""
STEP_TIMEOUT_S = 60.0
FILLER = ".filler"
"""The file that fills a small file system; left out of the folder listing."""


def file_digest(path: str | os.PathLike) -> str | None:
    """sha256 of a file's bytes, or None when there is no readable regular file there."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def fill_file_system(folder: str | os.PathLike) -> int:
    """Write one file into ``folder`` until its file system is full; return the bytes written."""
    chunk = b"\xa5" * 65536
    written = 0
    fd = os.open(Path(folder) / FILLER, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        while True:
            try:
                written += os.write(fd, chunk)
            except OSError as err:
                if err.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    return written
                chunk = chunk[: len(chunk) // 2]  # use up the last partial page as well
    finally:
        os.close(fd)


def document_digest(document) -> str:
    """sha256 over every block's magnitude and phase bits and its edited-frame flags."""
    digest = hashlib.sha256()
    for block in document.blocks:
        for tensor in (block.magnitude, block.phase):
            digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        digest.update(block.edited_frames.tobytes())
    return digest.hexdigest()


def run(spec: dict) -> dict:
    """Run the steps of ``spec``; return what happened.

    Spec keys: ``source`` (audio file opened first), ``settings`` (INI file for the preferences),
    ``drop_privileges`` (continue as user nobody after the imports), ``edit`` (scale a box of
    coefficients, as a stroke would), ``previous`` (path -> text written there before anything
    else, as an earlier save would have), ``fill`` (a folder whose file system is then filled),
    ``targets`` (files whose digests are taken before and after), ``listing`` (a folder listed at
    the end) and ``steps``: a list of ``{"open": path}``, ``{"action": name, "path": path,
    "filter": save-dialog filter}`` or ``{"quit_saving_to": path, "filter": ...}``.
    """
    from PySide6.QtCore import QSettings
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

    from spectropaint.app.playback.engine import OutputDevice
    from spectropaint.app.settings_store import SettingsStore
    from spectropaint.app.window.main_window import MainWindow
    from spectropaint.transforms.regions import Region

    if spec.get("drop_privileges"):
        from bad_audio import DROP_PRIVILEGES

        for name in PRELOAD:
            importlib.import_module(name)
        exec(DROP_PRIVILEGES)
        os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="spectropaint-xdg-")

    escaped: list[str] = []

    def record(kind, value, tb) -> None:
        escaped.append(f"{kind.__name__}: {value}")
        sys.__excepthook__(kind, value, tb)

    sys.excepthook = record
    sys.unraisablehook = lambda raised: escaped.append(
        f"{raised.exc_type.__name__}: {raised.exc_value} ({raised.err_msg or 'unraisable'})"
    )
    app = QApplication.instance() or QApplication([])
    dialogs: list[list[str]] = []
    QMessageBox.critical = lambda parent, title, text, *rest: dialogs.append([title, text])
    answer: dict[str, str] = {}
    QFileDialog.getSaveFileName = lambda *args: (answer["path"], answer["filter"])
    QMessageBox.warning = lambda *args: QMessageBox.StandardButton.Save

    def wait_until(condition) -> bool:
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while not condition():
            if time.monotonic() > deadline:
                return False
            QTest.qWait(10)
        return True

    store = SettingsStore(QSettings(spec["settings"], QSettings.Format.IniFormat))
    window = MainWindow(settings=store, output_device=OutputDevice(None, "", 0, "test"))
    window.resize(900, 600)
    window.show()
    window.open_path(spec["source"])
    if not wait_until(lambda: window.job is None) or window.session.document is None:
        raise RuntimeError(f"the window did not open {spec['source']}: {dialogs} {escaped}")
    document = window.session.document
    if spec.get("edit"):
        region = Region(100, 300, 2, 8, channels=tuple(range(document.n_channels)))
        window.session.apply("quarter", region, lambda magnitude, phase: (magnitude * 0.25, phase))
        window.session.wait_settled()  # the operation as it stays (settled in the background)
    for path, text in spec.get("previous", {}).items():
        Path(path).write_text(text)
    targets = spec.get("targets", [])
    result: dict = {
        "uid": os.geteuid(),
        "document_before": document_digest(document),
        "modified_before": window.session.modified,
        "files_before": {path: file_digest(path) for path in targets},
        "filled": fill_file_system(spec["fill"]) if spec.get("fill") else 0,
        "steps": [],
    }
    for step in spec["steps"]:
        seen = len(dialogs)
        if "open" in step:
            window.open_path(step["open"])
        elif "action" in step:
            answer.update(path=step["path"], filter=step["filter"])
            window.export_dialog = None
            window.actions_by_name[step["action"]].trigger()
            if window.export_dialog is not None:  # an export asks for its options first
                window.export_dialog.accept()
        else:
            answer.update(path=step["quit_saving_to"], filter=step["filter"])
            window.actions_by_name["quit"].trigger()
        finished = wait_until(lambda: window.job is None)
        result["steps"].append(
            {
                "step": step,
                "finished": finished,
                "dialogs": dialogs[seen:],
                "same_document": window.session.document is document,
                "document": document_digest(document),
                "modified": window.session.modified,
                "visible": window.isVisible(),
            }
        )
    result["files_after"] = {path: file_digest(path) for path in targets}
    if spec.get("listing"):
        names = os.listdir(spec["listing"])
        result["listing"] = sorted(name for name in names if name != FILLER)
    result["escaped"] = escaped
    window.session.modified = False  # nothing to ask about on the way out
    window.close()
    app.processEvents()
    return result


def drive_window(spec: dict, *, mount: tuple[str, Path] | None = None) -> dict:
    """Run :func:`run` on ``spec`` in a child process and return what it printed.

    ``mount`` is ``(kind, folder)`` of :func:`bad_audio.run_with_mount`: the child then runs in a
    namespace with that mount. The spec is written next to the settings file.
    """
    from bad_audio import run_with_mount

    spec_path = Path(spec["settings"]).with_suffix(".json")
    spec_path.write_text(json.dumps(spec))
    spec_path.chmod(0o644)
    command = [sys.executable, __file__, str(spec_path)]
    if mount is None:
        child = subprocess.run(
            command, capture_output=True, text=True, timeout=120, cwd="/", check=False
        )
    else:
        child = run_with_mount(*mount, command)
    lines = child.stdout.strip().splitlines()
    assert child.returncode == 0 and lines, f"driver failed ({child.returncode}):\n{child.stderr}"
    return json.loads(lines[-1])


if __name__ == "__main__":
    print(json.dumps(run(json.loads(Path(sys.argv[1]).read_text()))))
