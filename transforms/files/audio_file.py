"""Reading and writing audio files, exactly, and refusing bad files with a specific reason.

Exactness: integer PCM is read as left-justified ``int32`` and scaled by ``2**-31``, and written by
quantising to the subtype's own bit depth and handing libsndfile left-justified ``int32`` that it
only has to shift; so ``write_audio(load_audio(f).samples, same format)`` reproduces the audio data
of ``f`` bit for bit. Float files are read as ``float64`` (exact) and written unchanged.

Bad files: a file that cannot be used is refused with one :class:`AudioFileError` naming the file
and the reason. Before libsndfile sees a file, it must be a regular, non-empty file (so a named pipe
cannot hang us); absurd layouts (no channels, more than :data:`MAX_CHANNELS`, a sample rate of 0,
infinite or NaN) and audio that would not fit in memory are refused before any sample is read.

Damaged files that still hold audio open with what is usable, as libsndfile, Audacity and RX do,
each with a warning in :attr:`AudioData.warnings` (the document shows them): a truncated file (WAV,
RF64 and AIFF chunk headers and Ogg pages are walked, and Ogg page checksums checked, to catch what
libsndfile would hide) opens with what it holds and says how much is missing; NaN, infinite and
absurdly large float samples (beyond :data:`MAX_SAMPLE`) become 0 and are counted; notes a decoder
writes to standard error (libmpg123's) become a warning instead of stray lines.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import soundfile as sf

from spectropaint.transforms.errors import AudioFileError, Cancelled, SettingsError
from spectropaint.transforms.files.atomic_write import atomic_path
from spectropaint.transforms.files.audio_headers import (
    MAX_CHANNELS,
    Refused,
    Truncation,
    check_chunks,
    check_layout,
    check_ogg_pages,
    container_kind,
)
from spectropaint.transforms.files.file_reasons import describe_os_error, file_kind_refusal
from spectropaint.transforms.files.native_stderr import native_stderr
from spectropaint.transforms.files.parallel_read import (
    PiecesFailed,
    can_read_in_pieces,
    default_workers,
    read_in_pieces,
)
from spectropaint.transforms.host_memory import available_memory

_BLOCK_FRAMES = 1 << 15
"""Frames per read or write call. Bounds the temporary memory next to the float64 samples, and keeps
libsndfile's Vorbis encoder alive: one call with a few million frames crashes it (libsndfile 1.2.2)."""

_INTEGER_BITS = {
    "PCM_S8": 8,
    "PCM_U8": 8,
    "PCM_16": 16,
    "PCM_24": 24,
    "PCM_32": 32,
    "ULAW": 16,  # companded codes decode to 16-bit integers, and re-encode to the same codes
    "ALAW": 16,
}
Admit = Callable[["AudioFormat", int], "str | None"]
"""``admit(format, frames)``: None to read the file, or the reason to refuse it."""
_FLOAT_SUBTYPES = frozenset({"FLOAT", "DOUBLE"})
_LOSSY_SUBTYPES = frozenset({"VORBIS", "OPUS", "MPEG_LAYER_I", "MPEG_LAYER_II", "MPEG_LAYER_III"})
_PCM_BY_DEPTH = ("PCM_S8", "PCM_U8", "PCM_16", "PCM_24", "PCM_32")
_SALVAGE_FRAMES = 1024
"""Frames per read after a decoding error, to keep what decodes before the damage."""
MAX_SAMPLE = 1e6
"""The largest float sample magnitude read as audio (+120 dBFS); beyond it (1e300, FLT_MAX) a value
would overflow the float32 analysis to infinity, and is replaced by 0 like a NaN."""


@dataclass(frozen=True)
class AudioFormat:
    """How a file stores its audio.

    Attributes
    ----------
    format : str
        soundfile major format: ``'WAV'``, ``'FLAC'``, ``'OGG'``, ``'AIFF'``, ``'MP3'``, ...
    subtype : str
        soundfile subtype: ``'PCM_16'``, ``'PCM_24'``, ``'FLOAT'``, ``'VORBIS'``, ...
    sample_rate : int
        Frames per second (Hz).
    channels : int
    """

    format: str
    subtype: str
    sample_rate: int
    channels: int


@dataclass
class AudioData:
    """Samples and the format they came from.

    Attributes
    ----------
    samples : np.ndarray [shape=(channels, frames), dtype=float64]
        Full scale is ±1.
    format : AudioFormat
    path : str or None
        The file they were read from, if any.
    warnings : tuple of str
        What was wrong with the file and what was done about it (a truncated file opened with what
        it holds, NaN samples replaced by 0), one sentence each; the document shows them.
    """

    samples: np.ndarray
    format: AudioFormat
    path: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def n_channels(self) -> int:
        return self.samples.shape[0]

    @property
    def n_frames(self) -> int:
        return self.samples.shape[1]

    @property
    def sample_rate(self) -> int:
        return self.format.sample_rate

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.n_frames / self.sample_rate


@dataclass(frozen=True)
class ExportReport:
    """What :func:`write_audio` wrote.

    ``peak`` is the largest absolute sample value before any clipping (1.0 is full scale).
    Integer and lossy subtypes clip at full scale and count the clipped samples; ``FLOAT`` and
    ``DOUBLE`` keep values above full scale, so ``clipped_samples`` is 0 and only ``peak`` tells.
    """

    path: str
    format: str
    subtype: str
    frames: int
    channels: int
    sample_rate: int
    clipped_samples: int
    peak: float

    @property
    def message(self) -> str:
        """One sentence for a status bar or the command line."""
        text = (
            f"wrote '{self.path}' ({self.format} {self.subtype}, {self.channels} ch, "
            f"{self.sample_rate} Hz, {self.frames / self.sample_rate:.2f} s)"
        )
        if self.clipped_samples:
            noun = "sample" if self.clipped_samples == 1 else "samples"
            return f"{text}; {self.clipped_samples} {noun} clipped (peak {_dbfs(self.peak)})"
        if self.peak > 1.0:
            return f"{text}; peak {_dbfs(self.peak)}, above full scale (kept, not clipped)"
        return text


def load_audio(
    path: str | os.PathLike,
    *,
    max_bytes: int | None = None,
    admit: Admit | None = None,
    progress: Callable[[float], object] | None = None,
) -> AudioData:
    """Read an audio file into float64 samples, exactly.

    Parameters
    ----------
    path : str or os.PathLike
    max_bytes : int, optional
        Refuse files whose samples would take more memory than this, before reading any.
        Default: the memory available now (:func:`available_memory`).
    admit : callable, optional
        ``admit(format, frames)`` is called once the header is read, before any sample is
        allocated, and decides instead of ``max_bytes``: a returned reason refuses the file.
    progress : callable, optional
        Called with the fraction of frames read; returning ``False`` cancels (:class:`Cancelled`).

    Returns
    -------
    AudioData
        ``samples`` has shape ``(channels, frames)``; integer PCM arrives as ``k * 2**-31``.

    Raises
    ------
    AudioFileError
        For anything that leaves no usable audio; the message names the file and the reason. What
        is usable of a damaged file is returned with ``warnings`` instead.
    """
    try:
        fd = _open_regular_file(path)
        try:
            return _read(
                fd, os.fstat(fd).st_size, path, admit or _sample_budget(max_bytes), progress
            )
        finally:
            os.close(fd)
    except Refused as refusal:
        raise AudioFileError(path, str(refusal)) from None
    except MemoryError:
        raise AudioFileError(path, "too large: not enough memory for its samples") from None
    except OSError as err:
        raise AudioFileError(path, describe_os_error(err)) from err


def write_audio(
    path: str | os.PathLike,
    samples: np.ndarray,
    sample_rate: int,
    *,
    format: str = "WAV",
    subtype: str = "PCM_16",
    progress: Callable[[float], object] | None = None,
) -> ExportReport:
    """Write samples to an audio file, atomically (a failed write leaves any old file untouched).

    Parameters
    ----------
    path : str or os.PathLike
    samples : np.ndarray [shape=(channels, frames)]
        Full scale is ±1. Must be finite.
    sample_rate : int
        Hz.
    format, subtype : str
        soundfile major format and subtype, e.g. ``'FLAC'``, ``'PCM_24'``.
    progress : callable, optional
        Called with the fraction written; returning ``False`` cancels (:class:`Cancelled`), and
        the old file, if any, stays as it was.

    Returns
    -------
    ExportReport

    Raises
    ------
    SettingsError
        Bad shape, sample rate, or a format/subtype pair libsndfile cannot write.
    AudioFileError
        Non-finite samples, no frames, or the file system refused (read-only, full, missing folder).
    """
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 2 or not 1 <= samples.shape[0] <= MAX_CHANNELS:
        raise SettingsError(
            f"samples must have shape (channels, frames) with 1 to {MAX_CHANNELS} channels, "
            f"got {samples.shape}"
        )
    if int(sample_rate) != sample_rate or sample_rate <= 0:
        raise SettingsError(f"sample rate must be a positive whole number of Hz, got {sample_rate}")
    if not sf.check_format(format, subtype):
        raise SettingsError(f"{format} files cannot hold {subtype} samples")
    channels, frames = samples.shape
    if frames == 0:
        raise AudioFileError(path, "no audio to write (0 frames)", action="write")
    non_finite = _non_finite_reason(samples, sample_rate)
    if non_finite:
        raise AudioFileError(path, non_finite, action="write")

    try:
        with atomic_path(path) as temporary, open(temporary, "wb") as raw:
            sink = _ErrorKeepingWriter(raw)
            try:
                clipped, peak = _encode(sink, samples, int(sample_rate), format, subtype, progress)
            finally:
                if sink.error is not None:  # the real cause of what libsndfile saw as a short write
                    raise sink.error
    except OSError as err:
        raise AudioFileError(path, describe_os_error(err), action="write") from err
    except sf.LibsndfileError as err:
        reason = (
            f"libsndfile cannot encode {channels} ch at {int(sample_rate)} Hz as {format} {subtype}"
            f" ({_libsndfile_reason(err)})"
        )
        raise AudioFileError(path, reason, action="write") from err
    return ExportReport(
        path=os.fspath(path),
        format=format,
        subtype=subtype,
        frames=frames,
        channels=channels,
        sample_rate=int(sample_rate),
        clipped_samples=clipped,
        peak=peak,
    )


def default_export_subtype(source: AudioFormat, target_format: str) -> str:
    """The subtype to export in ``target_format`` that loses the least of ``source``.

    The source's own subtype when the target holds it (so an unedited file exports bit-identical);
    otherwise the next integer depth that still holds every source value (``PCM_U8`` to ``PCM_S8``
    for FLAC), then ``PCM_24`` (FLAC has no float), ``FLOAT``, ``PCM_16``. A lossy source exported to
    a lossless format gets ``FLOAT`` (WAV, AIFF) or ``PCM_24`` (FLAC), not a lossy re-encoding;
    a target that only holds lossy data gets its default codec.
    """
    if target_format not in sf.available_formats():
        raise SettingsError(f"unknown audio format {target_format!r}")
    fallback = sf.default_subtype(target_format)
    source_bits = _INTEGER_BITS.get(source.subtype, math.inf)
    wider = [name for name in _PCM_BY_DEPTH if _INTEGER_BITS[name] >= source_bits]
    candidates = [source.subtype, *wider, "PCM_24", "FLOAT", "PCM_16"]
    if source.subtype in _LOSSY_SUBTYPES and fallback not in _LOSSY_SUBTYPES:
        candidates = ["FLOAT", "PCM_24", "PCM_16"]
    for subtype in candidates:
        if sf.check_format(target_format, subtype):
            return subtype
    return fallback


# --- reading -------------------------------------------------------------------------------------


def _open_regular_file(path: str | os.PathLike) -> int:
    """Open for reading only a non-empty regular file; never block (a FIFO is refused by stat)."""
    info = os.stat(path)
    refusal = file_kind_refusal(info.st_mode)
    if refusal is not None:
        raise Refused(refusal)
    if info.st_size == 0:
        raise Refused("empty file (0 bytes)")
    # O_NONBLOCK: should the path become a FIFO after the stat, open and read still return at once.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
    refusal = file_kind_refusal(os.fstat(fd).st_mode)
    if refusal is not None:
        os.close(fd)
        raise Refused(refusal)
    return fd


def _sample_budget(max_bytes: int | None) -> Admit:
    """Refuse audio whose float64 samples exceed ``max_bytes`` (default: the memory available)."""

    def admit(audio_format: AudioFormat, frames: int) -> str | None:
        need = frames * audio_format.channels * 8
        budget = available_memory() if max_bytes is None else max_bytes
        return (
            too_large(format_bytes(need), budget) if budget is not None and need > budget else None
        )

    return admit


class _Prefix:
    """The first ``size`` bytes of the file ``fd``, as a file object for libsndfile's virtual I/O."""

    def __init__(self, fd: int, size: int):
        self.fd, self.size, self.position = fd, size, 0

    def read(self, count: int = -1) -> bytes:
        count = self.size - self.position if count < 0 else min(count, self.size - self.position)
        data = os.pread(self.fd, max(count, 0), self.position)
        self.position += len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self.position, os.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def tell(self) -> int:
        return self.position


def _read(
    fd: int,
    size: int,
    path: str | os.PathLike,
    admit: Admit,
    progress: Callable[[float], object] | None,
) -> AudioData:
    head = os.pread(fd, 16, 0)
    truncation = None
    if head[:4] in (b"RIFF", b"RF64", b"FORM"):
        truncation = check_chunks(fd, size, head)
    elif head[:4] == b"OggS":
        truncation = check_ogg_pages(fd, size)
    usable = truncation.usable_bytes if truncation is not None else None
    source = fd if usable is None else _Prefix(fd, usable)
    with native_stderr() as decoder_notes:
        audio_format, samples, stop = _decode(source, head, admit, progress)
    warnings = []
    if stop is not None:  # decoding ended early: as good as a cut file
        truncation = stop
    if truncation is not None:
        warnings.append(_truncation_warning(truncation, samples.shape[1], audio_format))
    if audio_format.subtype not in _INTEGER_BITS:  # integers are always within range
        replaced = _replace_unusable(samples, audio_format.sample_rate)
        if replaced:
            warnings.append(replaced)
    if decoder_notes:
        more = f" (and {len(decoder_notes) - 1} more notes)" if len(decoder_notes) > 1 else ""
        note = decoder_notes[0].removeprefix("Note: ").rstrip(".")
        warnings.append(f"the decoder reported damage: {note}{more}")
    return AudioData(samples, audio_format, os.fspath(path), tuple(warnings))


def _decode(
    source, head: bytes, admit: Admit, progress: Callable[[float], object] | None
) -> tuple[AudioFormat, np.ndarray, Truncation | None]:
    """Open ``source`` with libsndfile and read every frame it gives; the format, the samples, and
    a :class:`Truncation` when decoding stopped before the frames the file declares."""
    try:
        audio_file = sf.SoundFile(source, closefd=False)
    except sf.LibsndfileError as err:
        kind = container_kind(head)
        if kind is None:
            raise Refused(f"not a recognised audio file (starts with {head!r})") from None
        raise Refused(f"damaged {kind} file ({_libsndfile_reason(err)})") from None
    with audio_file:
        check_layout(audio_file.samplerate, audio_file.channels)
        frames, channels = audio_file.frames, audio_file.channels
        if frames == 0:
            raise Refused("contains no audio (0 frames)")
        audio_format = AudioFormat(
            audio_file.format, audio_file.subtype, audio_file.samplerate, channels
        )
        refusal = admit(audio_format, frames)
        if refusal is not None:
            raise Refused(refusal)
        samples, stop = _read_samples(
            audio_file, progress, fd=source if isinstance(source, int) else None
        )
    return audio_format, samples, stop


def _store_integers(block: np.ndarray, target: np.ndarray) -> None:
    """int32 ``[n, channels]`` as float64 ``[channels, n]``: ``k * 2**-31``, exact."""
    np.multiply(block.T, 2.0**-31, out=target)


def _store_floats(block: np.ndarray, target: np.ndarray) -> None:
    target[...] = block.T


def _read_samples(
    audio_file: sf.SoundFile, progress: Callable[[float], object] | None, *, fd: int | None = None
) -> tuple[np.ndarray, Truncation | None]:
    """All frames as float64 ``(channels, frames)``: integer PCM through int32, exactly.

    A long uncompressed file open as ``fd`` is read in parallel pieces
    (:mod:`~spectropaint.transforms.files.parallel_read`), to the same bits. When decoding fails or
    ends before the declared frames, the frames decoded so far and the :class:`Truncation` that
    says so; no frame at all is refused.
    """
    frames, channels = audio_file.frames, audio_file.channels
    integer = audio_file.subtype in _INTEGER_BITS
    store = _store_integers if integer else _store_floats
    dtype = np.int32 if integer else np.float64
    samples = np.empty((channels, frames))
    workers = default_workers()
    if fd is not None and can_read_in_pieces(fd, audio_file, workers):
        try:
            read_in_pieces(
                fd,
                audio_file,
                store,
                samples,
                block_frames=_BLOCK_FRAMES,
                buffer_dtype=dtype,
                workers=workers,
                progress=progress,
            )
            return samples, None
        except PiecesFailed:
            audio_file.seek(0)  # read it serially instead, salvaging what decodes
    buffer = np.empty((min(_BLOCK_FRAMES, frames), channels), dtype)
    done, step, failure = 0, _BLOCK_FRAMES, None
    while done < frames:
        try:
            block = audio_file.read(out=buffer[: min(step, frames - done)])
        except sf.LibsndfileError as err:
            failure = failure or f" ({_libsndfile_reason(err)})"
            if step == _SALVAGE_FRAMES:
                break
            try:  # back to the last whole block, then in small pieces up to the damage
                audio_file.seek(done)
            except sf.LibsndfileError:
                break
            step = _SALVAGE_FRAMES
            continue
        if len(block) == 0:
            break
        store(block, samples[:, done : done + len(block)])
        done += len(block)
        if progress is not None and progress(done / frames) is False:
            raise Cancelled("opening cancelled")
    if done == frames:
        return samples, None
    reason = f"truncated or damaged: decoding stopped after {done} of {frames} frames"
    if done == 0:
        raise Refused(reason + (failure or ""))
    return samples[:, :done].copy(), Truncation(reason + (failure or ""), frames)


def _truncation_warning(truncation: Truncation, held: int, audio_format: AudioFormat) -> str:
    """``'<reason>; opened the 0.250 s it holds, 0.750 s missing'``."""
    rate = audio_format.sample_rate
    text = f"{truncation.reason}; opened the {held / rate:.3f} s it holds"
    declared = truncation.declared_frames
    if declared is not None and declared > held:
        return f"{text}, {(declared - held) / rate:.3f} s missing"
    return f"{text}; the rest is missing"


def _replace_unusable(samples: np.ndarray, sample_rate: int) -> str | None:
    """Set NaN, infinite and beyond-:data:`MAX_SAMPLE` values of ``samples`` to 0, a block at a
    time; what was replaced, or None."""
    count, first = 0, None
    for start in range(0, samples.shape[1], _BLOCK_FRAMES):
        block = samples[:, start : start + _BLOCK_FRAMES]
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(block) <= MAX_SAMPLE)
        found = int(np.count_nonzero(bad))
        if not found:
            continue
        if first is None:
            frame = int(np.argmax(bad.any(axis=0)))
            first = (start + frame, int(np.argmax(bad[:, frame])))
        block[bad] = 0.0
        count += found
    if not count:
        return None
    verb = "sample was" if count == 1 else "samples were"
    return (
        f"{count} {verb} NaN, infinite or beyond ±{MAX_SAMPLE:g} (the first at "
        f"{first[0] / sample_rate:.3f} s, channel {first[1] + 1}); replaced by silence"
    )


_MISLEADING = {
    # what libsndfile says of bytes it cannot decode once it has handed them to libmpg123
    "File does not exist or is not a regular file (possibly a pipe?)": "no audio could be decoded",
}


def _libsndfile_reason(err: sf.LibsndfileError) -> str:
    reason = err.error_string.removeprefix("Error : ").rstrip(".")
    return _MISLEADING.get(reason, reason)


# --- writing -------------------------------------------------------------------------------------


class _ErrorKeepingWriter:
    """A file for libsndfile's virtual I/O that keeps the OSError of a failed write.

    libsndfile turns a failed write (or seek) into a short count and forgets errno; this keeps the
    original error (disk full, file too large) so the message can say what happened.
    """

    def __init__(self, raw) -> None:
        self._raw = raw
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        if self.error is not None:
            return 0
        try:
            return self._raw.write(data)
        except OSError as err:
            self.error = err
            return 0

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        # a seek flushes the buffer, so a full disk shows up here too; raising inside libsndfile's
        # callback would only print a traceback, so the error is kept and -1 tells libsndfile
        try:
            return self._raw.seek(offset, whence)
        except OSError as err:
            self.error = self.error or err
            return -1

    def tell(self) -> int:
        try:
            return self._raw.tell()
        except OSError as err:
            self.error = self.error or err
            return -1


def _encode(
    sink: _ErrorKeepingWriter,
    samples: np.ndarray,
    sample_rate: int,
    format: str,
    subtype: str,
    progress: Callable[[float], object] | None,
) -> tuple[int, float]:
    """Write ``samples`` (channels, frames) block by block; return (clipped samples, peak)."""
    clipped, peak = 0, 0.0
    with sf.SoundFile(sink, "w", sample_rate, len(samples), subtype, format=format) as out:
        for start in range(0, samples.shape[1], _BLOCK_FRAMES):
            block = samples[:, start : start + _BLOCK_FRAMES].T
            peak = max(peak, float(np.max(np.abs(block))))
            values, block_clipped = _to_file_values(block, subtype)
            clipped += block_clipped
            out.write(values)
            done = min(samples.shape[1], start + _BLOCK_FRAMES) / samples.shape[1]
            if progress is not None and progress(done) is False:
                raise Cancelled("export cancelled")
    return clipped, peak


def _to_file_values(block: np.ndarray, subtype: str) -> tuple[np.ndarray, int]:
    """What to hand libsndfile for ``block`` (frames, channels), and how many samples clipped.

    Integer subtypes of b bits: ``round(x * 2**(b-1))`` clipped to the b-bit range, left-justified
    in int32 so libsndfile's shift to b bits is exact. Float subtypes: unchanged. Lossy and other
    codecs: clipped to ±1.
    """
    bits = _INTEGER_BITS.get(subtype)
    if bits is not None:
        full = 2.0 ** (bits - 1)
        values = np.rint(block * full)
        clipped = np.count_nonzero(values < -full) + np.count_nonzero(values > full - 1)
        np.clip(values, -full, full - 1, out=values)
        values *= 2.0 ** (32 - bits)
        return values.astype(np.int32), int(clipped)
    if subtype in _FLOAT_SUBTYPES:
        return block, 0
    return np.clip(block, -1.0, 1.0), int(np.count_nonzero(np.abs(block) > 1.0))


# --- shared --------------------------------------------------------------------------------------


def _non_finite_reason(samples: np.ndarray, sample_rate: int) -> str | None:
    """Why ``samples`` (channels, frames) cannot be used, if some are NaN or infinite."""
    bad = ~np.isfinite(samples)
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    frame = int(np.argmax(bad.any(axis=0)))
    channel = int(np.argmax(bad[:, frame]))
    verb = "sample is" if count == 1 else "samples are"
    return (
        f"{count} {verb} NaN or infinite (the first at {frame / sample_rate:.3f} s, "
        f"channel {channel + 1})"
    )


def too_large(need: str, budget: int) -> str:
    """The reason given for audio that would not fit: ``need`` is already formatted."""
    return f"too large: would need {need}, {format_bytes(budget)} available"


def format_bytes(n: int) -> str:
    """Decimal units, one decimal: ``'705.6 kB'``, ``'5.1 GB'``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _dbfs(peak: float) -> str:
    return f"{20 * math.log10(peak):+.1f} dBFS" if peak > 0 else "silent"
