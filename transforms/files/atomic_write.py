"""Write a file so that it is either complete or not there at all.

``atomic_path`` hands out a temporary file in the target's folder; only when the caller's block ends
without an exception is it flushed to disk and renamed over the target, so a crash, a full disk or an
error half-way never leaves a damaged file, and an existing file is untouched until the new one is
complete. ``describe_os_error`` turns the ``OSError`` of a failed open, write or rename into a short
reason for an error message.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

_REASONS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "no space left on the disk",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (a file system or process size limit)",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ENAMETOOLONG: "file name too long",
    errno.ELOOP: "too many levels of symbolic links",
    errno.EIO: "input/output error (a failing disk or a disconnected drive?)",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files",
}


def describe_os_error(err: OSError) -> str:
    """A short reason for a failed file operation, e.g. ``'no space left on the disk'``.

    A missing file and a missing folder are told apart by looking at the folder of
    ``err.filename``.
    """
    if err.errno == errno.ENOENT:
        folder = os.path.dirname(os.fspath(err.filename)) if err.filename else ""
        if folder and not os.path.isdir(folder):
            return f"folder '{folder}' does not exist"
        return "no such file"
    return _REASONS.get(err.errno, err.strerror or type(err).__name__)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a new, empty temporary file next to ``path``; put it in place if the block succeeds.

    On success the temporary file is fsynced and renamed over ``path`` (``os.replace``), and the
    folder is fsynced so that the rename survives a power cut. On any exception the temporary file
    is removed, ``path`` is left as it was, and the exception propagates unchanged (callers turn an
    ``OSError`` into their own message with :func:`describe_os_error`).

    A symbolic link at ``path`` is followed: the file it points to is replaced and the link kept.
    The new file gets the permission bits of the file it replaces, or the usual ``0o666`` less the
    umask for a new file.
    """
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.partial")
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode))
    try:
        if mode != 0o666:
            os.chmod(temporary, mode)  # the umask must not narrow an existing file's permissions
        yield temporary
        fd = os.open(temporary, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _fsync_folder(target.parent)


def _fsync_folder(folder: Path) -> None:
    """Flush the folder entry of a rename to disk; some file systems refuse, which is harmless."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
