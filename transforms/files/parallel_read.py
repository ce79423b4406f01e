"""Reading uncompressed audio in parallel pieces, exactly as one whole read would.

A PCM or float file (WAV, AIFF, W64, RF64, CAF, AU) can be entered at any frame, so a long one is
cut into as many frame ranges as there are cores, and each range is decoded by libsndfile on a
thread of its own (soundfile's calls release the GIL) through its own descriptor of the same open
file (``/proc/self/fd``: the very file already checked, never the path again). Every range is read
block by block through the same conversion as the serial reader, so the samples are the same bit
for bit. Anything unexpected (a header that reads differently, a short or failed read) gives up
with :class:`PiecesFailed`, and the caller reads the file serially instead, with its salvage of
damaged files.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np
import soundfile as sf

from spectropaint.transforms.errors import Cancelled

MIN_FRAMES = 1 << 20
"""Files shorter than this (about 24 s at 44.1 kHz) are read serially: threads would not pay."""
MAX_WORKERS = 8
SEEKABLE_FORMATS = frozenset({"WAV", "WAVEX", "AIFF", "W64", "RF64", "CAF", "AU"})
SEEKABLE_SUBTYPES = frozenset({"PCM_S8", "PCM_U8", "PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE"})
_POLL_SECONDS = 0.05


class PiecesFailed(Exception):
    """The file did not read in pieces; read it serially."""


def can_read_in_pieces(fd: int, audio_file: sf.SoundFile, workers: int) -> bool:
    """Worth it and possible: long, uncompressed, several cores, and ``/proc/self/fd`` reopens."""
    return (
        workers > 1
        and audio_file.frames >= MIN_FRAMES
        and audio_file.format in SEEKABLE_FORMATS
        and audio_file.subtype in SEEKABLE_SUBTYPES
        and os.path.exists(f"/proc/self/fd/{fd}")
    )


def _reopen(fd: int) -> int:
    """A descriptor of its own (own file position) for the file open as ``fd``."""
    try:
        return os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as err:
        raise PiecesFailed(f"cannot open the file again: {err}") from None


MIN_CORES = 4
"""Fewer cores read serially: on a 2-core machine two pieces were no faster than one read (1.0 s
against 1.0 to 2.6 s for ten minutes of 24-bit stereo, under load), on 16 cores 5 times faster."""


def default_workers() -> int:
    """Pieces to read a file in: one per core up to ``MAX_WORKERS``; 1 below ``MIN_CORES``."""
    cores = os.cpu_count() or 1
    return min(MAX_WORKERS, cores) if cores >= MIN_CORES else 1


def read_in_pieces(
    fd: int,
    audio_file: sf.SoundFile,
    convert: Callable[[np.ndarray, np.ndarray], None],
    samples: np.ndarray,
    *,
    block_frames: int,
    buffer_dtype: type,
    workers: int,
    progress: Callable[[float], object] | None = None,
) -> None:
    """Fill ``samples`` ``(channels, frames)`` from the open file ``fd`` in ``workers`` ranges.

    Parameters
    ----------
    fd : int
        The open audio file (not moved: each piece reads through a descriptor of its own).
    audio_file : soundfile.SoundFile
        ``fd`` opened by libsndfile: each piece must see the same format and length.
    convert : callable
        ``convert(block, target)`` stores a block ``[n, channels]`` of ``buffer_dtype`` as
        float64 ``target`` ``[channels, n]`` (the serial reader's conversion).
    block_frames : int
        Frames per read call.
    progress : callable, optional
        Called with the fraction read (from this thread); returning False cancels.

    Raises
    ------
    PiecesFailed
        A piece could not be read as expected; nothing of ``samples`` is to be trusted.
    Cancelled
        ``progress`` returned False.
    """
    frames, channels = audio_file.frames, audio_file.channels
    expected = (audio_file.format, audio_file.subtype, audio_file.samplerate, channels, frames)
    bounds = np.linspace(0, frames, workers + 1).astype(np.int64)
    stop_all = threading.Event()
    done = [0] * workers

    def piece(index: int) -> None:
        start, stop = int(bounds[index]), int(bounds[index + 1])
        handle = _reopen(fd)
        try:
            with sf.SoundFile(handle, closefd=False) as own:
                found = (own.format, own.subtype, own.samplerate, own.channels, own.frames)
                if found != expected:
                    raise PiecesFailed(f"the header read as {found}, not {expected}")
                own.seek(start)
                buffer = np.empty((min(block_frames, stop - start), channels), buffer_dtype)
                position = start
                while position < stop and not stop_all.is_set():
                    block = own.read(out=buffer[: min(block_frames, stop - position)])
                    if len(block) == 0:
                        raise PiecesFailed(f"frames {position} .. {stop} did not read")
                    convert(block, samples[:, position : position + len(block)])
                    position += len(block)
                    done[index] = position - start
        except sf.LibsndfileError as err:
            raise PiecesFailed(str(err)) from None
        finally:
            os.close(handle)

    with ThreadPoolExecutor(workers, thread_name_prefix="audio read") as pool:
        futures = [pool.submit(piece, index) for index in range(workers)]
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, _POLL_SECONDS, return_when=FIRST_EXCEPTION)
                for future in finished:
                    future.result()  # raises the piece's failure at once
                if progress is not None and progress(sum(done) / frames) is False:
                    raise Cancelled("opening cancelled")
        except BaseException:
            stop_all.set()
            raise
