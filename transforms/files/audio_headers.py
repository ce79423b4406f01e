"""Checks of audio file headers made before libsndfile reads a sample.

libsndfile silently shortens a WAV, RF64 or AIFF file whose data chunk is cut, counts a cut Ogg
file's frames from its last whole page, and decodes an Ogg page whose checksum fails (its audio
altered, or the stream cut short) without a word. These walks find all three and say how: a
:class:`Truncation` lets the reader open what is usable and report what is missing. Headers that
leave nothing usable (a format chunk cut short, no channels, a sample rate of 0, infinite or NaN)
are a :class:`Refused` carrying the reason; the reader adds the file's path.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from dataclasses import dataclass

MAX_CHANNELS = 64
"""The most channels a file may have; more is taken for a damaged header."""
MAX_SAMPLE_RATE = 2**31 - 1
"""The highest sample rate a file may declare (libsndfile's own limit: an int)."""
MAX_CHUNKS = 4096
"""Chunks walked before the audio data; more is taken for a damaged (or hostile) file."""

SIGNATURES = {
    b"RIFF": "WAV",
    b"RF64": "RF64",
    b"FORM": "AIFF",
    b"fLaC": "FLAC",
    b"OggS": "Ogg",
    b"ID3": "MP3",
}
_OGG_HEADER = 27
_BIT_REVERSED = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


class Refused(Exception):
    """A reason to refuse the file being read; the reader adds the path."""


@dataclass(frozen=True)
class Truncation:
    """Why a file holds less audio than it should, and what of it is usable.

    Attributes
    ----------
    reason : str
        E.g. ``'truncated: header declares 176400 bytes of audio data, file holds 1000'``.
    declared_frames : int or None
        Frames the file says it holds, when it says (to tell how much is missing).
    usable_bytes : int or None
        Give the decoder only this many bytes from the start (an Ogg stream up to its first bad
        page); None: the whole file, the decoder stops by itself.
    """

    reason: str
    declared_frames: int | None = None
    usable_bytes: int | None = None


def _pread(fd: int, count: int, offset: int, what: str) -> bytes:
    data = os.pread(fd, count, offset)
    if len(data) < count:
        raise Refused(f"truncated: the file ends inside its {what}")
    return data


def check_chunks(fd: int, size: int, head: bytes) -> Truncation | None:
    """Walk WAV/RF64 (little-endian) or AIFF (big-endian) chunks up to the audio data chunk.

    Checks the layout in the format chunk; a data chunk shorter than it says is a
    :class:`Truncation`.
    """
    riff = head[:4] in (b"RIFF", b"RF64")
    if head[8:12] not in ((b"WAVE",) if riff else (b"AIFF", b"AIFC")):
        return None
    endian = "<" if riff else ">"
    long_data_size = None  # RF64 keeps the real data size in its ds64 chunk
    frame_bytes, declared_frames = 0, None
    offset = 12
    for _ in range(MAX_CHUNKS):
        if offset + 8 > size:
            return None
        chunk_id, chunk_size = struct.unpack(endian + "4sI", os.pread(fd, 8, offset))
        body = offset + 8
        if chunk_id == b"ds64" and chunk_size >= 16:
            (long_data_size,) = struct.unpack("<Q", _pread(fd, 8, body + 8, "ds64 chunk"))
        elif chunk_id in (b"fmt ", b"COMM"):
            if riff:
                layout = _pread(fd, 16, body, "format header")
                _, channels, rate, _, block_align, _ = struct.unpack("<HHIIHH", layout)
                frame_bytes = block_align
            else:
                layout = _pread(fd, 18, body, "format header")
                channels, declared_frames, bits = struct.unpack(">hIh", layout[:8])
                rate = extended_float(layout[8:18])
                frame_bytes = channels * ((bits + 7) // 8) if channels > 0 and bits > 0 else 0
            check_layout(rate, channels)
        elif chunk_id in (b"data", b"SSND"):
            if chunk_size == 0xFFFFFFFF:  # RF64's placeholder, or a stream of unknown length
                if long_data_size is None:
                    return None
                chunk_size = long_data_size
            skip = 0 if riff else 8  # SSND starts with an offset and a block size
            declared, held = chunk_size - skip, size - body - skip
            if declared <= held:
                return None
            if riff and frame_bytes:
                declared_frames = declared // frame_bytes
            return Truncation(
                f"truncated: header declares {declared} bytes of audio data, "
                f"file holds {max(held, 0)}",
                declared_frames,
            )
        offset = body + chunk_size + (chunk_size & 1)
    raise Refused(f"damaged: more than {MAX_CHUNKS} chunks before the audio data")


def extended_float(raw: bytes) -> float:
    """AIFF's 80-bit IEEE extended sample rate (``inf`` or ``nan`` where a double cannot hold it)."""
    sign = -1.0 if raw[0] & 0x80 else 1.0
    exponent = int.from_bytes(raw[:2], "big") & 0x7FFF
    mantissa = int.from_bytes(raw[2:10], "big")
    if exponent == 0x7FFF:
        return sign * math.inf if mantissa & ((1 << 63) - 1) == 0 else math.nan
    if exponent == 0:
        return 0.0
    try:
        return sign * math.ldexp(mantissa, exponent - 16383 - 63)
    except OverflowError:
        return sign * math.inf


def ogg_crc(page: bytes) -> int:
    """The checksum of an Ogg page whose own checksum field is zeroed (CRC-32, polynomial 0x04C11DB7,
    not reflected, initial value 0): zlib's reflected CRC of the bit-reversed bytes, bit-reversed."""
    data = page.translate(_BIT_REVERSED)
    reflected = zlib.crc32(data) ^ zlib.crc32(bytes(len(data)))  # without zlib's pre- and post-xor
    return int(f"{reflected:032b}"[::-1], 2)


def check_ogg_pages(fd: int, size: int) -> Truncation | None:
    """Walk the Ogg pages, checking each one's checksum; the last must end the stream.

    A page cut by the end of the file, a page whose checksum fails, or bytes that are not a page
    followed by more pages, give a :class:`Truncation` whose ``usable_bytes`` stops before it; so
    does a stream without its last page. Bytes after the pages that are not a page (a tag) end the
    walk.
    """
    offset, flags = 0, 0
    while offset < size:
        header = os.pread(fd, _OGG_HEADER, offset)
        if header[:4] != b"OggS"[: len(header)]:
            if _find_page(fd, offset, size) is not None:
                return _damaged(fd, size, offset, f"bytes from {offset} on are not an Ogg page")
            break  # bytes after the last page (a tag): not ours to judge
        end = size + 1  # a cut page header
        if len(header) == _OGG_HEADER:
            end = offset + _OGG_HEADER + header[26] + sum(os.pread(fd, header[26], offset + 27))
        if end > size:
            return Truncation(
                f"truncated: the file ends inside the Ogg page at byte {offset}",
                usable_bytes=offset,
            )
        page = bytearray(os.pread(fd, end - offset, offset))
        stored = int.from_bytes(page[22:26], "little")
        page[22:26] = bytes(4)
        if ogg_crc(bytes(page)) != stored:
            return _damaged(fd, size, offset, f"the Ogg page at byte {offset} fails its checksum")
        flags, offset = header[5], end
    if not flags & 0x04:
        return Truncation("truncated: the Ogg stream stops before its last page")
    return None


def _find_page(fd: int, start: int, size: int) -> int | None:
    """The offset of the next ``OggS`` capture pattern after ``start``, if any."""
    chunk, overlap = 1 << 16, 3
    position = start + 1
    while position < size:
        data = os.pread(fd, chunk + overlap, position)
        found = data.find(b"OggS")
        if found >= 0:
            return position + found
        position += chunk
    return None


def _damaged(fd: int, size: int, offset: int, what: str) -> Truncation:
    """Damage at ``offset``: usable up to there; the stream's length from its last page if intact."""
    return Truncation(
        f"damaged: {what}", declared_frames=_vorbis_length(fd, size), usable_bytes=offset
    )


def _vorbis_length(fd: int, size: int) -> int | None:
    """The frames of a Vorbis stream as its last page states (its granule position), when that page
    is intact; None for other codecs or a damaged end."""
    first = os.pread(fd, _OGG_HEADER + 255 + 7, 0)
    if len(first) < _OGG_HEADER or first[_OGG_HEADER + first[26] :][:7] != b"\x01vorbis":
        return None
    tail_start = max(0, size - (1 << 17))
    tail = os.pread(fd, size - tail_start, tail_start)
    last = tail.rfind(b"OggS")
    if last < 0 or len(tail) - last < _OGG_HEADER:
        return None
    page = bytearray(tail[last:])
    stored = int.from_bytes(page[22:26], "little")
    page[22:26] = bytes(4)
    if ogg_crc(bytes(page)) != stored:
        return None
    granule = int.from_bytes(page[6:14], "little", signed=True)
    return granule if granule > 0 else None


def check_layout(sample_rate: float, channels: int) -> None:
    if not 1 <= sample_rate <= MAX_SAMPLE_RATE:  # also refuses NaN
        raise Refused(f"absurd header: sample rate {sample_rate:g} Hz")
    if not 1 <= channels <= MAX_CHANNELS:
        raise Refused(
            f"absurd header: {channels} channels (SpectroPaint reads 1 to {MAX_CHANNELS})"
        )


def container_kind(head: bytes) -> str | None:
    """Which container the first bytes announce, if any (MPEG audio: a valid frame header)."""
    if len(head) >= 4 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        version, layer = (head[1] >> 3) & 3, (head[1] >> 1) & 3
        bitrate, rate = head[2] >> 4, (head[2] >> 2) & 3
        valid = version != 1 and layer != 0 and bitrate != 15 and rate != 3
        return "MP3" if valid else None
    return next((kind for magic, kind in SIGNATURES.items() if head.startswith(magic)), None)
