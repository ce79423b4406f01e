"""Checks of audio file headers made before libsndfile reads a sample.

libsndfile silently shortens a WAV, RF64 or AIFF file whose data chunk is cut, and counts a cut Ogg
file's frames from its last whole page; these walks catch both, and refuse absurd layouts (no
channels, a sample rate of 0) before anything is allocated. Each failure is a :class:`Refused`
carrying the reason; the reader adds the file's path.
"""

from __future__ import annotations

import math
import os
import struct

MAX_CHANNELS = 64
"""The most channels a file may have; more is taken for a damaged header."""

SIGNATURES = {
    b"RIFF": "WAV",
    b"RF64": "RF64",
    b"FORM": "AIFF",
    b"fLaC": "FLAC",
    b"OggS": "Ogg",
    b"ID3": "MP3",
}


class Refused(Exception):
    """A reason to refuse the file being read; the reader adds the path."""


def check_chunks(fd: int, size: int, head: bytes) -> None:
    """Walk WAV/RF64 (little-endian) or AIFF (big-endian) chunks up to the audio data chunk.

    Checks the layout in the format chunk and that the data chunk is as long as it says.
    """
    riff = head[:4] in (b"RIFF", b"RF64")
    if head[8:12] not in ((b"WAVE",) if riff else (b"AIFF", b"AIFC")):
        return
    endian = "<" if riff else ">"
    long_data_size = None  # RF64 keeps the real data size in its ds64 chunk
    offset = 12
    while offset + 8 <= size:
        chunk_id, chunk_size = struct.unpack(endian + "4sI", os.pread(fd, 8, offset))
        body = offset + 8
        if chunk_id == b"ds64" and chunk_size >= 16:
            (long_data_size,) = struct.unpack("<Q", os.pread(fd, 8, body + 8))
        elif chunk_id in (b"fmt ", b"COMM"):
            layout = os.pread(fd, 18, body)
            if len(layout) < (8 if riff else 18):
                raise Refused("truncated: the file ends inside its format header")
            if riff:
                _, channels, rate = struct.unpack("<HHI", layout[:8])
            else:
                channels = struct.unpack(">h", layout[:2])[0]
                rate = _extended_float(layout[8:18])
            check_layout(rate, channels)
        elif chunk_id in (b"data", b"SSND"):
            if chunk_size == 0xFFFFFFFF:  # RF64's placeholder, or a stream of unknown length
                if long_data_size is None:
                    return
                chunk_size = long_data_size
            skip = 0 if riff else 8  # SSND starts with an offset and a block size
            declared, held = chunk_size - skip, size - body - skip
            if declared > held:
                raise Refused(
                    f"truncated: header declares {declared} bytes of audio data, "
                    f"file holds {max(held, 0)}"
                )
            return
        offset = body + chunk_size + (chunk_size & 1)


def _extended_float(raw: bytes) -> float:
    """AIFF's 80-bit IEEE extended sample rate."""
    exponent = int.from_bytes(raw[:2], "big") & 0x7FFF
    mantissa = int.from_bytes(raw[2:10], "big")
    return math.ldexp(mantissa, exponent - 16383 - 63) if exponent else 0.0


def check_ogg_pages(fd: int, size: int) -> None:
    """Walk the Ogg pages: the last one must be complete and end the stream.

    libsndfile counts the frames of a cut Ogg file from its last whole page, so a cut file would
    otherwise look complete. Bytes after the pages that are not a page (a tag) end the walk.
    """
    offset, flags = 0, 0
    while offset < size:
        header = os.pread(fd, 27, offset)
        if header[:4] != b"OggS"[: len(header)]:
            return  # bytes after the last page (a tag): not ours to judge
        end = size + 1  # a cut page header
        if len(header) == 27:
            end = offset + 27 + header[26] + sum(os.pread(fd, header[26], offset + 27))
        if end > size:
            raise Refused(f"truncated: the file ends inside the Ogg page at byte {offset}")
        flags, offset = header[5], end
    if not flags & 0x04:
        raise Refused("truncated: the Ogg stream stops before its last page")


def check_layout(sample_rate: float, channels: int) -> None:
    if sample_rate <= 0:
        raise Refused(f"absurd header: sample rate {sample_rate:g} Hz")
    if not 1 <= channels <= MAX_CHANNELS:
        raise Refused(
            f"absurd header: {channels} channels (SpectroPaint reads 1 to {MAX_CHANNELS})"
        )


def container_kind(head: bytes) -> str | None:
    """Which container the first bytes announce, if any (MPEG audio: a frame sync)."""
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        return "MP3"
    return next((kind for magic, kind in SIGNATURES.items() if head.startswith(magic)), None)
