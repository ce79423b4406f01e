"""Atomic writes: a file is replaced whole or not at all, and failures name the real reason."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest
from bad_audio import DROP_PRIVILEGES, NOBODY, run_python, shared_folder

from spectropaint.transforms.errors import AudioFileError
from spectropaint.transforms.files.atomic_write import PARTIAL, atomic_path
from spectropaint.transforms.files.audio_file import write_audio
from spectropaint.transforms.files.output_paths import OutputRefused


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_success_replaces_the_file_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "out.bin"
    with atomic_path(target) as temporary:
        assert temporary.parent == tmp_path
        assert not target.exists()
        temporary.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_replacing_keeps_the_old_permissions(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    target.chmod(0o640)
    with atomic_path(target) as temporary:
        temporary.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_exception_leaves_the_old_file_untouched(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(KeyError), atomic_path(target) as temporary:
        temporary.write_bytes(b"half of the new")
        raise KeyError("stop")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_symbolic_link_is_kept_and_its_target_replaced(tmp_path):
    real = tmp_path / "real.bin"
    real.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(real)
    with atomic_path(link) as temporary:
        temporary.write_bytes(b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_a_device_is_refused_directly_or_through_a_link_and_stays_a_device(tmp_path, device):
    """As root, a rename over /dev/null would replace the node with a regular file."""
    link = tmp_path / "out.wav"
    link.symlink_to(device)
    for target, where in ((device, ""), (link, f" ('{device}')")):
        with pytest.raises(AudioFileError) as caught:
            write_audio(target, np.zeros((1, 100)), 8000)
        assert caught.value.reason == (
            f"not a regular file (character device){where}; nothing is written there"
        )
        assert stat.S_ISCHR(os.stat(device).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out.wav"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a link to another user needs root")
def test_a_link_another_user_planted_is_not_followed_and_its_target_kept(tmp_path):
    """The rule of Linux's protected_symlinks: a link is followed only when the user or the owner
    of its folder owns it; root's own link in the same folder is followed."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    precious = tmp_path / "precious.bin"
    precious.write_bytes(b"root's")
    planted = shared / "out.bin"
    planted.symlink_to(precious)
    os.lchown(planted, NOBODY, NOBODY)
    with (
        pytest.raises(OutputRefused, match=f"is a symbolic link of user {NOBODY}"),
        atomic_path(planted),
    ):
        pytest.fail("the block must not run")
    assert precious.read_bytes() == b"root's" and planted.is_symlink()
    os.lchown(planted, 0, 0)
    with atomic_path(planted) as temporary:
        temporary.write_bytes(b"new")
    assert precious.read_bytes() == b"new" and planted.is_symlink()


def test_a_name_of_255_bytes_is_written_and_its_temporary_name_shortened(tmp_path):
    target = tmp_path / ("é" * 125 + "x.wav")  # 255 bytes in UTF-8
    assert len(os.fsencode(target.name)) == 255
    seen = []
    with atomic_path(target) as temporary:
        seen.append(temporary.name)
        temporary.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert len(os.fsencode(seen[0])) <= 255 and PARTIAL.fullmatch(seen[0])


def test_missing_folder_is_named(tmp_path):
    target = tmp_path / "nowhere" / "out.wav"
    with pytest.raises(AudioFileError) as caught:
        write_audio(target, np.zeros((1, 100)), 8000)
    assert str(caught.value) == (
        f"cannot write '{target}': folder '{tmp_path / 'nowhere'}' does not exist"
    )


def test_folder_in_the_way(tmp_path):
    (tmp_path / "out.wav").mkdir()
    with pytest.raises(AudioFileError) as caught:
        write_audio(tmp_path / "out.wav", np.zeros((1, 100)), 8000)
    assert "is a folder" in caught.value.reason
    assert [p.name for p in tmp_path.iterdir()] == ["out.wav"]


_WRITE_EACH = f"""
import json, sys
import numpy as np
from spectropaint.transforms.files.audio_file import write_audio
from spectropaint.transforms.files.output_paths import OutputRefused
from spectropaint.transforms.errors import AudioFileError
{DROP_PRIVILEGES}
results = {{}}
for path in sys.argv[1:]:
    try:
        results[path] = write_audio(path, np.zeros((1, 800)), 8000).message
    except AudioFileError as err:
        results[path] = str(err)
print(json.dumps(results))
"""


def test_read_only_folder_is_refused_and_its_file_kept():
    """As a user the permissions apply to: root would write into a read-only folder anyway.

    The same child writes into a writable twin folder, so the refusal comes from the folder's
    permissions. The old file could be overwritten in place (mode 666), but not atomically.
    """
    with shared_folder() as folder:
        read_only, writable = folder / "read_only", folder / "writable"
        read_only.mkdir()
        writable.mkdir()
        old = read_only / "take.wav"
        old.write_bytes(b"old take")
        old.chmod(0o666)
        read_only.chmod(0o555)
        writable.chmod(0o777)
        child = run_python(_WRITE_EACH, str(old), str(writable / "take.wav"))
        assert child.returncode == 0, child.stderr
        results = json.loads(child.stdout)
        assert results[str(old)] == f"cannot write '{old}': permission denied"
        assert results[str(writable / "take.wav")].startswith("wrote ")
        assert old.read_bytes() == b"old take"
        assert sorted(p.name for p in read_only.iterdir()) == ["take.wav"]


_WRITE_TOO_MUCH = """
import json, pathlib, resource, signal, sys
import numpy as np
from spectropaint.transforms.files.audio_file import write_audio
from spectropaint.transforms.files.output_paths import OutputRefused
from spectropaint.transforms.errors import AudioFileError
folder = pathlib.Path(sys.argv[1])
target = folder / "take.wav"
old = b"old take" * 100
target.write_bytes(old)
if sys.argv[2] == "size-limit":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, resource.RLIM_INFINITY))
try:
    message = write_audio(target, np.zeros((2, 44100)), 44100).message  # 176 kB
except AudioFileError as err:
    message = str(err)
print(json.dumps({
    "message": message,
    "old_intact": target.read_bytes() == old,
    "files": sorted(p.name for p in folder.iterdir()),
}))
"""


def _check_refused_write(child, folder, reason):
    assert child.returncode == 0, child.stderr
    assert "Traceback" not in child.stderr and "Exception ignored" not in child.stderr, child.stderr
    outcome = json.loads(child.stdout)
    assert outcome == {
        "message": f"cannot write '{folder / 'take.wav'}': {reason}",
        "old_intact": True,
        "files": ["take.wav"],
    }


def test_file_size_limit_is_reported_and_the_old_file_kept(tmp_path):
    """A process file-size limit makes the write fail half-way with EFBIG; libsndfile only sees a
    short write, so this checks that the real error reaches the message."""
    child = run_python(_WRITE_TOO_MUCH, str(tmp_path), "size-limit")
    _check_refused_write(child, tmp_path, "file too large (a file system or process size limit)")


def test_full_disk_is_reported_and_the_old_file_kept(tmp_path):
    """A 64 kB tmpfs, mounted in a private user and mount namespace (no root needed)."""
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux's unshare to mount a small file system")
    mount_then_run = 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 77; shift; exec "$@"'
    child = subprocess.run(
        ["unshare", "-rm", "sh", "-c", mount_then_run, "sh", str(tmp_path)]
        + [sys.executable, "-c", _WRITE_TOO_MUCH, str(tmp_path), "full-disk"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if child.returncode == 77 or child.stderr.startswith("unshare:"):
        pytest.skip(f"cannot mount a tmpfs in a user namespace here: {child.stderr.strip()}")
    _check_refused_write(child, tmp_path, "no space left on the disk")
