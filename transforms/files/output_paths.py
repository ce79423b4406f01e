"""Where an output may be written: never onto a special file, an input, another output, or through
a symbolic link that someone else planted.

SpectroPaint is often run as root, and it resolves links itself (to replace the file a link points
to, keeping the link), so the kernel's own guard (Linux's ``protected_symlinks``, which stops root
from following another user's link in a sticky shared folder) never sees the link. These checks
take its place:

- :func:`resolve_output` resolves the path one component at a time, as ``realpath`` does, but
  follows a link only when the user owns it or the folder holding it belongs to the link's owner
  (the kernel's rule, here applied in every folder); and the file finally named must be a regular
  file or not exist yet: a device (``/dev/null``, ``/dev/full``), a named pipe, a socket or a folder
  is refused.
- :func:`check_outputs` resolves every output of one command and refuses one that is the same file
  (the same inode, or the same new name) as an input or as another output.

A refusal is an :class:`OutputRefused`, an ``OSError`` whose ``strerror`` is the reason, so every
writer that already reports ``OSError`` with ``describe_os_error`` reports it too.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from spectropaint.transforms.files.file_reasons import describe_os_error, file_kind_refusal

MAX_LINKS = 40
"""Links followed while resolving one path before giving up (Linux's own limit)."""


class OutputRefused(OSError):
    """An output path that must not be written; ``strerror`` says why, ``output`` which output of
    :func:`check_outputs` it was (None elsewhere)."""

    def __init__(self, reason: str, *, output: str | None = None, filename: str | None = None):
        super().__init__(None, reason, filename)
        self.output = output


def resolve_output(path: str | os.PathLike) -> Path:
    """The absolute path, free of links, that writing ``path`` would replace.

    Raises
    ------
    OutputRefused
        A link on the way is owned by another user than the folder's owner and this user, or the
        file it names exists and is not a regular file.
    OSError
        A folder on the way cannot be searched, or links loop.
    """
    current = Path(os.getcwd()) if not os.path.isabs(path) else Path("/")
    todo = [part for part in reversed(Path(path).parts) if part != os.sep]
    links = 0
    while todo:
        part = todo.pop()
        if part == "..":
            current = current.parent
            continue
        candidate = current / part
        try:
            info = os.lstat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            current = Path(os.path.normpath(candidate.joinpath(*reversed(todo))))
            break
        if not stat.S_ISLNK(info.st_mode):
            current = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(path))
        _check_link_owner(candidate, info.st_uid, current)
        target = os.readlink(candidate)
        if os.path.isabs(target):
            current = Path("/")
        todo.extend(part for part in reversed(Path(target).parts) if part != os.sep)
    _check_kind(current, path)
    return current


def _check_link_owner(link: Path, owner: int, folder: Path) -> None:
    user = os.geteuid()
    folder_owner = os.stat(folder).st_uid
    if owner not in (user, folder_owner):
        raise OutputRefused(
            f"'{link}' is a symbolic link of user {owner} in a folder of user {folder_owner}; "
            "it is not followed (write to the file it points to by its own name)"
        )


def _check_kind(resolved: Path, given: str | os.PathLike) -> None:
    try:
        mode = os.stat(resolved).st_mode
    except FileNotFoundError:
        return
    refusal = file_kind_refusal(mode)
    if refusal is not None:
        where = "" if resolved == Path(os.path.abspath(given)) else f" ('{resolved}')"
        raise OutputRefused(f"{refusal}{where}; nothing is written there")


def _identity(path: Path) -> tuple:
    """The same key for two names of one file: its inode when it exists, else its real name."""
    try:
        info = os.stat(path)
    except OSError:
        return ("new", os.fspath(path))
    return ("inode", info.st_dev, info.st_ino)


def check_outputs(
    outputs: Mapping[str, str | os.PathLike], inputs: Iterable[str | os.PathLike]
) -> dict[str, Path]:
    """Resolve every output and refuse one that is an input or another output.

    Parameters
    ----------
    outputs : mapping
        What each output is called in messages (``'--wav'``) -> the path given for it.
    inputs : iterable of paths
        Files the command reads (they are never written).

    Returns
    -------
    dict
        The same keys -> the resolved paths.

    Raises
    ------
    OutputRefused
        With ``output`` the refused output's name and ``filename`` its path as given; an
        ``OSError`` on the way (a folder that cannot be searched) becomes one too.
    """
    taken = {_identity(Path(os.path.realpath(path))): f"the input '{path}'" for path in inputs}
    resolved: dict[str, Path] = {}
    for name, path in outputs.items():
        try:
            real = resolve_output(path)
        except OSError as err:
            raise OutputRefused(describe_os_error(err), output=name, filename=path) from None
        key = _identity(real)
        if key in taken:
            reason = f"it is {taken[key]}; nothing is written over it"
            raise OutputRefused(reason, output=name, filename=os.fspath(path))
        taken[key] = f"also the output of {name}"
        resolved[name] = real
    return resolved
