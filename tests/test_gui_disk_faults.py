"""Saving from the window onto a full disk or into a folder it may not write.

Each case runs the window in a child process (``fault_driver``): a full disk is a 1 MiB tmpfs in a
private mount namespace, filled up after an earlier save's file was put there; a read-only folder is
one owned by root, written by a process that continues as user nobody. The document holds an edit,
then every save action aims at a file that already exists, and finally Quit is answered with Save.
Each attempt must end in one dialog naming the file and the reason, with the earlier file's bytes,
the folder's contents and the edited document exactly as they were, and the window still open.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from bad_audio import shared_folder
from fault_driver import drive_window
from gui_fixtures import write_test_sound

from spectropaint.app.files.project_actions import PROJECT_FILTER
from spectropaint.transforms.files.file_reasons import describe_os_error

pytestmark = [pytest.mark.gpu]

SAVES = (
    ("export_audio", "take.wav", "WAV (*.wav)", "Cannot export audio"),
    ("export_image", "picture.png", "PNG image (*.png)", "Cannot export image"),
    ("save_project_as", "song.spp", PROJECT_FILTER, "Cannot save project"),
    ("save_project", "song.spp", PROJECT_FILTER, "Cannot save project"),  # asks: no file yet
)
"""Menu action, file name, the save dialog's filter, and the title of its error dialog."""


def _spec(source: Path, home: Path, folder: Path) -> dict:
    return {
        "source": str(source),
        "settings": str(home / "settings.ini"),
        "edit": True,
        "targets": sorted({str(folder / name) for _, name, _, _ in SAVES}),
        "listing": str(folder),
        "steps": [
            *(
                {"action": action, "path": str(folder / name), "filter": kind}
                for action, name, kind, _ in SAVES
            ),
            {"quit_saving_to": str(folder / "song.spp"), "filter": PROJECT_FILTER},
        ],
    }


def _check_refusals(outcome: dict, folder: Path, reason: str) -> None:
    assert outcome["escaped"] == [] and outcome["modified_before"]
    expected = [(folder / name, title) for _, name, _, title in SAVES]
    expected.append((folder / "song.spp", "Cannot save project"))  # Quit, saving first
    for step, (target, title) in zip(outcome["steps"], expected, strict=True):
        assert step["finished"] and len(step["dialogs"]) == 1, step
        shown_title, text = step["dialogs"][0]
        assert shown_title == title and f"'{target}'" in text and reason in text, text
        assert step["same_document"] and step["document"] == outcome["document_before"]
        assert step["modified"] and step["visible"]
    assert None not in outcome["files_before"].values()
    assert outcome["files_after"] == outcome["files_before"]
    assert outcome["listing"] == sorted({name for _, name, _, _ in SAVES})


def test_full_disk_refuses_each_save_and_keeps_files_and_document(tmp_path):
    source = tmp_path / "source.wav"
    write_test_sound(source, seconds=1.0, sample_rate=8000)
    disk = tmp_path / "disk"
    disk.mkdir()
    spec = _spec(source, tmp_path, disk)
    spec["previous"] = {path: f"an earlier save of {path}\n" * 40 for path in spec["targets"]}
    spec["fill"] = str(disk)
    outcome = drive_window(spec, mount=("small", disk))
    assert outcome["filled"] > 0
    _check_refusals(outcome, disk, describe_os_error(OSError(errno.ENOSPC, "")))


def test_read_only_folder_refuses_each_save_and_keeps_files_and_document():
    """The previous files are writable by anyone (mode 666): only the folder stops a safe save."""
    with shared_folder() as folder:
        source = folder / "source.wav"
        write_test_sound(source, seconds=1.0, sample_rate=8000)
        source.chmod(0o644)
        home, locked = folder / "home", folder / "locked"
        home.mkdir()
        home.chmod(0o777)
        locked.mkdir()
        spec = _spec(source, home, locked)
        spec["drop_privileges"] = True
        for path in spec["targets"]:
            Path(path).write_text(f"an earlier save of {path}\n")
            Path(path).chmod(0o666)
        locked.chmod(0o755)
        outcome = drive_window(spec)
        assert outcome["uid"] != 0
        _check_refusals(outcome, locked, describe_os_error(OSError(errno.EACCES, "")))
        for path in spec["targets"]:
            assert Path(path).read_text() == f"an earlier save of {path}\n"
