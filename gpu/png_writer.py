"""A PNG encoder that takes the picture a band of rows at a time.

Pillow wants the whole image in memory; a native-resolution spectrogram of a long file is tens of
thousands of pixels wide, so the export writes 8-bit RGB rows as they are rendered: each row gets the
"Sub" filter (each byte minus the byte one pixel to its left), the rows go through one zlib stream,
and its output is written as IDAT chunks whenever zlib hands some over.
"""

from __future__ import annotations

import struct
import zlib
from typing import BinaryIO

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SUB_FILTER = 1
_GROUP_BYTES = 1 << 18
"""Rows are filtered and compressed in groups of about this many bytes, to bound memory."""


def _write_chunk(file: BinaryIO, kind: bytes, data: bytes) -> None:
    """Length, type, data and CRC, written in parts so that ``data`` is never copied."""
    file.write(struct.pack(">I", len(data)) + kind)
    file.write(data)
    file.write(struct.pack(">I", zlib.crc32(data, zlib.crc32(kind))))


class PngStreamWriter:
    """Write ``height`` rows of ``width`` RGB pixels to ``file`` in bands, then :meth:`close`.

    Use as a context manager; leaving the block without an exception finishes the file and checks
    that exactly ``height`` rows were written. zlib level 1 is the default: on spectrograms (noise
    floors do not compress much) it made files no larger than level 6 did, in half the time.
    """

    def __init__(self, file: BinaryIO, width: int, height: int, *, compress_level: int = 1):
        if not (1 <= width < 2**31 and 1 <= height < 2**31):
            raise ValueError(f"PNG size {width}x{height} is outside 1 .. 2**31 - 1")
        self.file = file
        self.width = width
        self.height = height
        self.rows_written = 0
        self._zlib = zlib.compressobj(compress_level)
        header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
        file.write(SIGNATURE)
        _write_chunk(file, b"IHDR", header)

    def write_rows(self, rows: np.ndarray) -> None:
        """Append ``rows``: uint8 ``[n, width, 3]``, top row first."""
        if rows.dtype != np.uint8 or rows.shape[1:] != (self.width, 3):
            raise ValueError(
                f"rows must be uint8 [n, {self.width}, 3], not {rows.dtype} {rows.shape}"
            )
        if self.rows_written + len(rows) > self.height:
            raise ValueError(f"more than {self.height} rows written")
        flat = rows.reshape(len(rows), 3 * self.width)
        group = max(1, _GROUP_BYTES // (flat.shape[1] + 1))
        for start in range(0, len(flat), group):
            part = flat[start : start + group]
            filtered = np.empty((len(part), part.shape[1] + 1), dtype=np.uint8)
            filtered[:, 0] = _SUB_FILTER
            filtered[:, 1:4] = part[:, :3]
            np.subtract(
                part[:, 3:], part[:, :-3], out=filtered[:, 4:]
            )  # wraps modulo 256, as PNG wants
            self._emit(self._zlib.compress(filtered))
        self.rows_written += len(rows)

    def _emit(self, data: bytes) -> None:
        if data:
            _write_chunk(self.file, b"IDAT", data)

    def close(self) -> None:
        if self.rows_written != self.height:
            raise ValueError(f"{self.rows_written} rows written, the header says {self.height}")
        self._emit(self._zlib.flush())
        _write_chunk(self.file, b"IEND", b"")

    def __enter__(self) -> PngStreamWriter:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.close()
