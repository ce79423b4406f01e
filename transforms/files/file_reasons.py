"""Short reasons for what went wrong with a file, for messages that name the file and say why.

``describe_os_error`` turns the ``OSError`` of a failed open, write or rename into a phrase such as
``'no space left on the disk'``; ``file_kind_refusal`` says why a path that is not a regular file
(a named pipe, a device, a folder) cannot be read or written as one.
"""

from __future__ import annotations

import errno
import os
import stat

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
_KINDS = (
    (stat.S_ISDIR, "is a folder, not a file"),
    (stat.S_ISFIFO, "not a regular file (named pipe)"),
    (stat.S_ISCHR, "not a regular file (character device)"),
    (stat.S_ISBLK, "not a regular file (block device)"),
    (stat.S_ISSOCK, "not a regular file (socket)"),
)


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


def file_kind_refusal(mode: int) -> str | None:
    """Why a file of ``st_mode`` ``mode`` cannot be used as a regular file; None when it is one."""
    if stat.S_ISREG(mode):
        return None
    return next((reason for test, reason in _KINDS if test(mode)), "not a regular file")
