"""Write a file so that it is either complete or not there at all.

``atomic_path`` hands out a temporary file in the target's folder; only when the caller's block ends
without an exception is it flushed to disk and renamed over the target, so a crash, a full disk or an
error half-way never leaves a damaged file, and an existing file is untouched until the new one is
complete. The target is checked first (:mod:`.output_paths`): a special file, or a link planted by
another user, is refused.

A killed process leaves its temporary file, ``.NAME.<12 hex digits>.partial``, behind;
:func:`sweep_stale_partials` removes those of a folder once untouched for
:data:`STALE_PARTIAL_SECONDS`, and never one a live write holds (each holds an exclusive ``flock``
on its temporary file until it is renamed or removed). Every write sweeps its own folder first.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from spectropaint.transforms.files.output_paths import resolve_output

try:
    import fcntl
except ImportError:  # Windows: no flock; the age rule alone keeps live writes safe
    fcntl = None

STALE_PARTIAL_SECONDS = 600
"""A temporary file untouched for this long belongs to no live write, and is removed."""
PARTIAL = re.compile(r"\..+\.[0-9a-f]{12}\.partial", re.DOTALL)
"""The names ``atomic_path`` gives its temporary files."""
_SUFFIX_CHARS = len(".") + len(".") + 12 + len(".partial")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a new, empty temporary file next to ``path``; put it in place if the block succeeds.

    On success the temporary file is fsynced and renamed over ``path`` (``os.replace``), and the
    folder is fsynced so that the rename survives a power cut. On any exception (also
    ``KeyboardInterrupt`` and ``SystemExit``) the temporary file is removed, ``path`` is left as it
    was, and the exception propagates unchanged (callers turn an ``OSError`` into their own message
    with ``describe_os_error``; a refused target is an ``OutputRefused``, one of them).

    A symbolic link at ``path`` is followed when :func:`~.output_paths.resolve_output` allows it:
    the file it points to is replaced and the link kept. The new file gets the permission bits of
    the file it replaces, or the usual ``0o666`` less the umask for a new file. The temporary
    file's name is shortened when the target's name leaves no room for its 22 extra characters.
    """
    target = resolve_output(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666
    sweep_stale_partials(target.parent)
    temporary = target.with_name(_partial_name(target))
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if mode != 0o666:
            os.chmod(temporary, mode)  # the umask must not narrow an existing file's permissions
        yield temporary
        os.fsync(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    finally:
        os.close(fd)
    _fsync_folder(target.parent)


def _partial_name(target: Path) -> str:
    """``.NAME.<12 hex digits>.partial``, with NAME cut so the whole fits the folder's limit."""
    try:
        limit = os.pathconf(target.parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    name = target.name
    while len(os.fsencode(name)) + _SUFFIX_CHARS > limit:
        name = name[:-1]
    return f".{name}.{secrets.token_hex(6)}.partial"


def sweep_stale_partials(folder: str | os.PathLike) -> list[str]:
    """Remove this user's temporary files in ``folder`` that killed writes left; their names.

    Only names ``atomic_path`` gives, regular files owned by the user running this, untouched for
    :data:`STALE_PARTIAL_SECONDS`, and not locked by a live write. Errors are ignored: sweeping is
    housekeeping, never a reason for a save to fail.
    """
    removed: list[str] = []
    cutoff = time.time() - STALE_PARTIAL_SECONDS
    user = os.geteuid() if hasattr(os, "geteuid") else None
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not PARTIAL.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if (
                    stat.S_ISREG(info.st_mode)
                    and info.st_mtime < cutoff
                    and user in (None, info.st_uid)
                    and _unlink_unless_locked(entry.path)
                ):
                    removed.append(entry.name)
    return removed


def _unlink_unless_locked(path: str) -> bool:
    fd = os.open(
        path,
        os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC,
    )
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # a live write holds it
        os.unlink(path)
        return True
    finally:
        os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """Flush the folder entry of a rename to disk; some file systems refuse, which is harmless."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
