"""``spectropaint render`` writing where it cannot: a full disk, a folder it may not write, a file
system mounted read-only. Exit status 1, one line on stderr naming the file and the reason, no
traceback, and the files an earlier run left there untouched, byte for byte. Also the inputs that
the bad-audio corpus of ``test_cli.py`` leaves out: damaged projects, a file the user may not read.

Each fault is staged for a child process: a private mount namespace holds the full disk (a 1 MiB
tmpfs, filled up) and the read-only file system (a read-only bind mount); the folder owned by root
needs a user that permissions stop, so that child continues as nobody. The child runs the command's
``main`` once per command line, as ``python -m spectropaint`` would, with its output captured.
"""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

from bad_audio import (
    make_bad_projects,
    make_unreadable_file,
    run_python,
    run_with_mount,
    shared_folder,
)
from gui_fixtures import write_test_sound

from spectropaint.app.cli import main
from spectropaint.transforms.files.file_reasons import describe_os_error

OUTPUTS = {"--project": "song.spp", "--wav": "take.wav", "--png": "picture.png"}
COMMANDS = (("--wav", "--png", "--project"), ("--wav",), ("--png",), ("--project",))
"""Every output at once (the first one written is refused, the others never written), then each."""
TESTS = str(Path(__file__).parent)

_RUN_COMMANDS = """
import contextlib, importlib, io, json, os, sys, tempfile, traceback
sys.path.insert(0, sys.argv[1])
from bad_audio import DROP_PRIVILEGES
from fault_driver import PRELOAD, file_digest, fill_file_system
from spectropaint.app.cli import main
spec = json.loads(sys.argv[2])
if spec.get("drop_privileges"):
    for name in PRELOAD:
        importlib.import_module(name)
    exec(DROP_PRIVILEGES)
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp()
folder = spec["folder"]
for path, text in spec.get("previous", {}).items():
    with open(path, "w") as file:
        file.write(text)
filled = fill_file_system(folder) if spec.get("fill") else 0
def state():
    names = sorted(name for name in os.listdir(folder) if name != ".filler")
    return {name: file_digest(os.path.join(folder, name)) for name in names}
before, runs = state(), []
for argv in spec["commands"]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except BaseException:
            traceback.print_exc()
            code = None
    runs.append([code, out.getvalue(), err.getvalue()])
print(json.dumps({"filled": filled, "before": before, "after": state(), "runs": runs}))
"""
"""The child: writes the earlier files and fills the disk when asked (a tmpfs exists only inside
its namespace), gives up root when asked, runs each command line, and reports the folder's files
(name -> sha256) before and after."""


def _run_commands(spec: dict, *, mount: tuple[str, Path] | None = None) -> dict:
    code = [_RUN_COMMANDS, TESTS, json.dumps(spec)]
    if mount is None:
        child = run_python(*code)
    else:
        child = run_with_mount(*mount, [sys.executable, "-c", *code])
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout.strip().splitlines()[-1])


def _argv(source: Path, folder: Path, options: tuple[str, ...]) -> list[str]:
    return ["render", str(source), *(x for o in options for x in (o, str(folder / OUTPUTS[o])))]


def _previous(name: str) -> str:
    return f"what an earlier run wrote to {name}\n" * 20


def _check_refusals(outcome: dict, folder: Path, errno_code: int) -> None:
    reason = describe_os_error(OSError(errno_code, ""))
    for options, (code, stdout, stderr) in zip(COMMANDS, outcome["runs"], strict=True):
        lines = stderr.strip().splitlines()
        assert code == 1 and stdout == "" and len(lines) == 1, (options, code, stderr)
        named = [o for o in options if f"'{folder / OUTPUTS[o]}'" in lines[0]]
        assert len(named) == 1 and reason in lines[0], (options, lines[0])
    assert outcome["after"] == outcome["before"]
    assert sorted(outcome["before"]) == sorted(OUTPUTS.values())
    assert None not in outcome["before"].values()


def _source(folder: Path) -> Path:
    path = folder / "in.wav"
    write_test_sound(path, seconds=1.0, sample_rate=8000)
    path.chmod(0o644)
    return path


def test_full_disk(tmp_path):
    source, disk = _source(tmp_path), tmp_path / "disk"
    disk.mkdir()
    spec = {
        "folder": str(disk),
        "previous": {str(disk / name): _previous(name) for name in OUTPUTS.values()},
        "fill": True,
        "commands": [_argv(source, disk, options) for options in COMMANDS],
    }
    outcome = _run_commands(spec, mount=("small", disk))
    assert outcome["filled"] > 0
    _check_refusals(outcome, disk, errno.ENOSPC)


def test_read_only_file_system(tmp_path):
    source, folder = _source(tmp_path), tmp_path / "mounted"
    folder.mkdir()
    for name in OUTPUTS.values():
        (folder / name).write_text(_previous(name))
    spec = {
        "folder": str(folder),
        "commands": [_argv(source, folder, options) for options in COMMANDS],
    }
    _check_refusals(_run_commands(spec, mount=("read_only", folder)), folder, errno.EROFS)
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        name: _previous(name) for name in OUTPUTS.values()
    }


def test_folder_the_user_may_not_write():
    with shared_folder() as shared:
        source, locked = _source(shared), shared / "locked"
        locked.mkdir()
        for name in OUTPUTS.values():
            (locked / name).write_text(_previous(name))
            (locked / name).chmod(0o666)  # writable in place: only the folder stops a safe write
        locked.chmod(0o755)
        spec = {
            "folder": str(locked),
            "drop_privileges": True,
            "commands": [_argv(source, locked, options) for options in COMMANDS],
        }
        _check_refusals(_run_commands(spec), locked, errno.EACCES)
        assert {p.name: p.read_text() for p in locked.iterdir()} == {
            name: _previous(name) for name in OUTPUTS.values()
        }


def test_file_the_user_may_not_read():
    with shared_folder() as folder:
        locked, reason = make_unreadable_file(folder)
        out = folder / "out"
        out.mkdir()
        out.chmod(0o777)
        spec = {
            "folder": str(out),
            "drop_privileges": True,
            "commands": [["render", str(locked), "--wav", str(out / "take.wav")]],
        }
        outcome = _run_commands(spec)
    ((code, stdout, stderr),) = outcome["runs"]
    lines = stderr.strip().splitlines()
    assert code == 1 and stdout == "" and len(lines) == 1, stderr
    assert f"'{locked}'" in lines[0] and reason in lines[0]
    assert outcome["after"] == {}


def test_damaged_projects_exit_1_with_the_reason(tmp_path, capsys):
    out = tmp_path / "out.wav"
    for name, (path, reason) in make_bad_projects(tmp_path / "bad").items():
        assert main(["render", str(path), "--wav", str(out)]) == 1, name
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and f"'{path}'" in lines[0] and reason in lines[0], (name, lines)
    assert not out.exists()
