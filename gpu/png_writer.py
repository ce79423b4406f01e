"""A PNG encoder that takes the picture a band of rows at a time and compresses on every core.

Pillow wants the whole image in memory; a native-resolution spectrogram of a long file is tens of
thousands of pixels wide, so the export writes 8-bit RGB rows as they are rendered. Each row gets the
"Sub" filter (each byte minus the byte one pixel to its left). Groups of rows are filtered and
deflated on a thread pool (numpy and zlib release the GIL), each group as raw deflate ending in a
sync flush, so the groups join into one valid zlib stream, as pigz does: a zlib header, the groups
in order, an empty final block and the Adler-32 of all the filtered bytes (combined from the
groups'). Each group goes out as an IDAT chunk as soon as it and those before it are done.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SUB_FILTER = 1
_GROUP_BYTES = 1 << 20
"""Rows are filtered and compressed in groups of about this many bytes (one task each)."""
_ADLER_BASE = 65521
MAX_WORKERS = 16


def _write_chunk(file: BinaryIO, kind: bytes, data: bytes) -> None:
    """Length, type, data and CRC, written in parts so that ``data`` is never copied."""
    file.write(struct.pack(">I", len(data)) + kind)
    file.write(data)
    file.write(struct.pack(">I", zlib.crc32(data, zlib.crc32(kind))))


def adler32_combine(first: int, second: int, second_length: int) -> int:
    """The Adler-32 of two byte strings joined, from each one's and the second's length (zlib's
    ``adler32_combine``, which Python's zlib module does not offer)."""
    rem = second_length % _ADLER_BASE
    sum1 = first & 0xFFFF
    sum2 = (rem * sum1) % _ADLER_BASE
    sum1 += (second & 0xFFFF) + _ADLER_BASE - 1
    sum2 += ((first >> 16) & 0xFFFF) + ((second >> 16) & 0xFFFF) + _ADLER_BASE - rem
    sum1 %= _ADLER_BASE
    sum2 %= _ADLER_BASE
    return sum1 | (sum2 << 16)


def _filter_and_deflate(part: np.ndarray, level: int) -> tuple[bytes, int, int]:
    """Rows ``[n, width, 3 or 4]`` (a 4th channel is left out) with the Sub filter, raw-deflated up
    to a sync flush; the compressed bytes, the Adler-32 of the filtered bytes and their count."""
    rows, width = part.shape[:2]
    rgb = part[..., :3]
    filtered = np.empty((rows, 3 * width + 1), dtype=np.uint8)
    filtered[:, 0] = _SUB_FILTER
    filtered[:, 1:4] = rgb[:, 0]
    differences = filtered[:, 4:].reshape(rows, width - 1, 3)  # a view: rows keep their filter byte
    np.subtract(rgb[:, 1:], rgb[:, :-1], out=differences)  # wraps modulo 256, as PNG wants
    deflate = zlib.compressobj(level, zlib.DEFLATED, -15)
    data = deflate.compress(filtered) + deflate.flush(zlib.Z_SYNC_FLUSH)
    return data, zlib.adler32(filtered), filtered.size


class PngStreamWriter:
    """Write ``height`` rows of ``width`` RGB pixels to ``file`` in bands, then :meth:`close`.

    Use as a context manager; leaving the block without an exception finishes the file and checks
    that exactly ``height`` rows were written. zlib level 1 is the default: on spectrograms (noise
    floors do not compress much) it made files no larger than level 6 did, in half the time.

    ``workers`` threads compress (default: the cores, at most ``MAX_WORKERS``); at most twice as
    many groups are in flight, each of ``memory_budget / (4 * workers)`` bytes when a budget is
    given. :meth:`write_rows` returns before its rows are compressed, and they are read from where they
    are, not copied: the caller may reuse the array of one call only after the next call (or
    :meth:`close`), which first waits for the previous rows (hand over two bands in turn).
    """

    def __init__(
        self,
        file: BinaryIO,
        width: int,
        height: int,
        *,
        compress_level: int = 1,
        workers: int | None = None,
        memory_budget: int | None = None,
    ):
        if not (1 <= width < 2**31 and 1 <= height < 2**31):
            raise ValueError(f"PNG size {width}x{height} is outside 1 .. 2**31 - 1")
        self.file = file
        self.width = width
        self.height = height
        self.rows_written = 0
        self.compress_level = compress_level
        self._workers = workers or min(MAX_WORKERS, os.cpu_count() or 1)
        self._group_bytes = _GROUP_BYTES
        if memory_budget is not None:  # the groups in flight hold no more than the budget
            self._group_bytes = max(1, min(_GROUP_BYTES, memory_budget // (4 * self._workers)))
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="png")
        self._pending: deque[Future] = deque()
        self._previous_call = 0
        """Futures (the oldest pending ones) still reading the rows of the previous call."""
        self._adler = 1
        header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
        file.write(SIGNATURE)
        _write_chunk(file, b"IHDR", header)
        self._emit(b"\x78\x01")  # zlib header: deflate, 32 KiB window, fastest

    def write_rows(self, rows: np.ndarray) -> None:
        """Append ``rows``: uint8 ``[n, width, 3]``, top row first (``[n, width, 4]`` too: the
        fourth channel, a read-back's alpha, is left out)."""
        if rows.dtype != np.uint8 or rows.shape[1:] not in ((self.width, 3), (self.width, 4)):
            raise ValueError(
                f"rows must be uint8 [n, {self.width}, 3] or [n, {self.width}, 4], "
                f"not {rows.dtype} {list(rows.shape)}"
            )
        if self.rows_written + len(rows) > self.height:
            raise ValueError(f"more than {self.height} rows written")
        group = max(1, self._group_bytes // (3 * self.width + 1))
        for start in range(0, len(rows), group):
            part = rows[start : start + group]
            self._pending.append(self._pool.submit(_filter_and_deflate, part, self.compress_level))
            self._drain(len(self._pending) - 2 * self._workers)  # bounded work in flight
        self._drain(self._previous_call)  # the previous call's rows are free when this returns
        self._previous_call = len(self._pending)
        self.rows_written += len(rows)

    def _drain(self, count: int) -> None:
        """Write out the ``count`` oldest groups (waiting for them), in order."""
        for _ in range(max(0, count)):
            data, adler, length = self._pending.popleft().result()
            self._adler = adler32_combine(self._adler, adler, length)
            self._emit(data)
            self._previous_call = max(0, self._previous_call - 1)

    def _emit(self, data: bytes) -> None:
        if data:
            _write_chunk(self.file, b"IDAT", data)

    def close(self) -> None:
        try:
            if self.rows_written != self.height:
                raise ValueError(f"{self.rows_written} rows written, the header says {self.height}")
            self._drain(len(self._pending))
            final = zlib.compressobj(self.compress_level, zlib.DEFLATED, -15).flush()
            self._emit(final + struct.pack(">I", self._adler))
            _write_chunk(self.file, b"IEND", b"")
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True)

    def __enter__(self) -> PngStreamWriter:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.close()
        else:
            self._shutdown()
