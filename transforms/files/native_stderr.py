"""Catch what C libraries write straight to standard error while they decode a file.

libsndfile hands MP3 (and, when it recognises nothing else, any file) to libmpg123, which writes its
own notes to file descriptor 2 (``Note: Illegal Audio-MPEG-Header 0x00000000 at offset 3998.``):
lines no one asked for, on the command line and in a GUI's terminal. :func:`native_stderr` points
descriptor 2 at a temporary file while its block runs and gives the decoder's lines back, for the
reader to turn into a warning or drop with a refusal.

Descriptor 2 belongs to the whole process, so anything another thread writes to standard error
meanwhile lands there too: lines that do not look like a codec's are written back to the real
standard error when the block ends (late, not lost). One block runs at a time.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator

_CODEC_LINE = re.compile(r"(Note|Warning|Error): |\[src/libmpg123/")
_lock = threading.Lock()


@contextlib.contextmanager
def native_stderr() -> Iterator[list[str]]:
    """Yield a list that receives, when the block ends, the decoder lines written to descriptor 2."""
    lines: list[str] = []
    with _lock, tempfile.TemporaryFile() as capture:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            others = []
            for line in capture.read().decode("utf-8", "replace").splitlines():
                (lines if _CODEC_LINE.match(line) else others).append(line)
            if others:
                os.write(2, ("\n".join(others) + "\n").encode("utf-8", "replace"))
