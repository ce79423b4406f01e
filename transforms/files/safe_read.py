"""Bounded, safe reading of the small files a person names: strokes files and project manifests.

:func:`read_small_file` reads only a regular file, of at most ``limit`` bytes: a named pipe, a
device (``/dev/zero``, ``/dev/urandom``), a socket or a folder is refused from its ``stat`` before
it is opened, the opened file is checked again (it could have been swapped in between), and no
more than ``limit + 1`` bytes are ever read, so nothing blocks and nothing reads without end.

:func:`parse_json` parses JSON text within fixed limits, checked on the text before the parser
runs: nesting at most :data:`MAX_DEPTH` deep, numbers of at most :data:`MAX_NUMBER_DIGITS` digits in
a row, exponents that keep a number finite, no ``NaN`` or ``Infinity``. Hostile text thus gives one
:class:`InputRefused` with the reason, never a ``RecursionError``, a ``ValueError`` from Python's
limit on integer digits, or an ``OverflowError`` when a huge integer meets a float.

Every failure is an :class:`InputRefused` carrying only the reason; the caller names the file.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np

from spectropaint.transforms.files.file_reasons import describe_os_error, file_kind_refusal

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted (strokes files and manifests need 5)."""
MAX_NUMBER_DIGITS = 40
"""The most digits in a row in a number (a float64 needs 17 to be exact)."""
MAX_EXPONENT = 308
"""The largest decimal exponent accepted: beyond it a number overflows a float64."""

_PIECE = 1 << 20
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_LONG_DIGITS = re.compile(rb"[0-9]{%d,}" % (MAX_NUMBER_DIGITS + 1))
_LARGE_EXPONENT = re.compile(rb"[eE]\+?0*([1-9][0-9]{2,})")
_NESTING = np.zeros(256, np.int8)
_NESTING[[ord("["), ord("{")]] = 1
_NESTING[[ord("]"), ord("}")]] = -1


class InputRefused(Exception):
    """The reason a named file cannot be read or parsed; the caller adds the file's name."""


def read_small_file(path: str | os.PathLike, *, limit: int) -> bytes:
    """The bytes of the regular file ``path``, refused when it holds more than ``limit``.

    Raises
    ------
    InputRefused
        Not a regular file, larger than ``limit`` bytes, or an OS error (its short reason).
    """
    try:
        refusal = file_kind_refusal(os.stat(path).st_mode)
        if refusal is not None:
            raise InputRefused(refusal)
        # O_NONBLOCK: should a named pipe be put in its place after the stat, open returns at once
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            info = os.fstat(fd)
            refusal = file_kind_refusal(info.st_mode)
            if refusal is not None:
                raise InputRefused(refusal)
            if info.st_size > limit:
                raise InputRefused(_too_large(info.st_size, limit))
            pieces, size = [], 0
            while size <= limit:
                piece = os.read(fd, min(_PIECE, limit + 1 - size))
                if not piece:
                    break
                pieces.append(piece)
                size += len(piece)
        finally:
            os.close(fd)
    except OSError as err:
        raise InputRefused(describe_os_error(err)) from None
    if size > limit:  # it grew while being read
        raise InputRefused(_too_large(size, limit))
    return b"".join(pieces)


def _too_large(size: int, limit: int) -> str:
    return f"too large: {size} bytes, more than the {limit} allowed"


def parse_json(data: bytes) -> Any:
    """Parse UTF-8 JSON ``data`` within the module's limits.

    Raises
    ------
    InputRefused
        Not UTF-8, not JSON, or beyond a limit; the reason says which.
    """
    check_json_limits(data)

    def refuse_constant(constant: str) -> None:
        raise ValueError(f"{constant} is not allowed")

    try:
        return json.loads(data.decode("utf-8"), parse_constant=refuse_constant)
    except UnicodeDecodeError as err:
        raise InputRefused(f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    except (ValueError, RecursionError) as err:
        raise InputRefused(f"not valid JSON ({err})") from None


def check_json_limits(data: bytes) -> None:
    """Refuse JSON text nested deeper than :data:`MAX_DEPTH`, or with a number beyond the limits.

    Strings are taken out first (escapes, then quoted runs, as a JSON reader scans them), so only
    the brackets and numbers of the structure count. On text that is not JSON this may count
    differently from the parser, but only after the point where the parser stops with an error.
    """
    structure = _ESCAPE.sub(b"", data) if b"\\" in data else data
    structure = _STRING.sub(b"", structure)
    digits = _LONG_DIGITS.search(structure)
    if digits:
        run = digits.end() - digits.start()
        raise InputRefused(
            f"a number has {run} digits in a row (at most {MAX_NUMBER_DIGITS} are accepted)"
        )
    for exponent in _LARGE_EXPONENT.finditer(structure):
        if int(exponent.group(1)) > MAX_EXPONENT:
            raise InputRefused(
                f"a number has the exponent {exponent.group(1).decode()}: beyond the range of a "
                "float (1e308)"
            )
    steps = _NESTING[np.frombuffer(structure, np.uint8)]
    steps = steps[steps != 0]
    depth = 0
    for start in range(0, len(steps), 1 << 22):
        levels = np.cumsum(steps[start : start + (1 << 22)], dtype=np.int64) + depth
        if levels.max(initial=0) > MAX_DEPTH:
            raise InputRefused(f"nested more than {MAX_DEPTH} levels deep (the limit)")
        depth = int(levels[-1])
