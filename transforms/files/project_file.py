"""Project files (``.spp``): the original audio, settings, view, edits and strokes in one zip.

:func:`save_project` writes a project atomically: a temporary file next to the target, renamed over
it only once complete, so a crash or a kill at any moment leaves the old project or the new one.
:func:`load_project` rebuilds the document bit for bit: it re-analyses the stored original audio
(the analysis runs in a fixed chunk grid, so the unedited coefficients come back identical) and
writes the stored edited frames back. The format is documented in the README (Project files).

Nothing in a file is trusted. The manifest is checked against itself (``project_manifest.py``:
block shapes follow from the audio's size and the settings), every member's declared size against
the manifest, and the total against a memory budget, all before anything large is allocated; a member name outside the fixed set is refused, and
no member is ever extracted under its own name. No pickle: JSON and raw ``.npy`` arrays.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import shutil
import stat
import tempfile
import time
import tokenize
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch

from spectropaint.transforms.analysis import make_transform
from spectropaint.transforms.document import Document, edited_runs
from spectropaint.transforms.errors import (
    AudioFileError,
    Cancelled,
    ProjectFileError,
    SettingsError,
)
from spectropaint.transforms.files.atomic_write import atomic_path
from spectropaint.transforms.files.audio_file import (
    MAX_SAMPLE,
    AudioData,
    load_audio,
    write_audio,
)
from spectropaint.transforms.files.file_reasons import describe_os_error
from spectropaint.transforms.files.project_manifest import (
    AUDIO_FLAC,
    AUDIO_NPY,
    COEFFICIENT_DTYPE,
    FLAC_MAX_CHANNELS,
    FLAC_MAX_RATE,
    FLAC_SUBTYPE_BY_BITS,
    MANIFEST,
    MAX_MAGNITUDE,
    MAX_STROKES_BYTES,
    STROKES,
    STROKES_FORMAT,
    STROKES_READABLE,
    STROKES_VERSION,
    Edit,
    Plan,
    Refused,
    build_manifest,
    check_manifest,
    edit_member,
)
from spectropaint.transforms.files.safe_read import InputRefused, parse_json
from spectropaint.transforms.host_memory import available_memory
from spectropaint.transforms.memory_budget import ReserveEstimate, host_need
from spectropaint.transforms.regions import Region
from spectropaint.transforms.torch_device import choose_device
from spectropaint.transforms.transform import Progress

SUFFIX = ".spp"
MAX_MANIFEST_BYTES = 16 * 2**20

_NPY_HEADER_LIMIT = 10_000  # numpy's own default ``max_header_size``
_NPY_HEADER_BYTES = _NPY_HEADER_LIMIT + 16  # with the magic string, version and length
_SOURCE_BITS = {"PCM_S8": 8, "PCM_U8": 8, "PCM_16": 16, "PCM_24": 24, "ULAW": 16, "ALAW": 16}
"""Integer subtypes whose samples FLAC holds exactly (u-law and A-law decode to 16-bit values)."""
_CHUNK = 1 << 20  # samples per read, write or check of audio, bounding temporary memory
_WRITE_PIECE_BYTES = 4 << 20  # bytes handed to the zip member per write
_MEMBER_PIECE = 1 << 16  # bytes inflated at a time from a JSON member
_JSON_LOAD_FACTOR = 8  # parsed JSON takes up to this many times its text in memory


@dataclass(frozen=True)
class ProjectReport:
    """What :func:`save_project` wrote: ``bytes`` on disk, the audio member, counts."""

    path: str
    bytes: int
    audio_member: str
    edited_frames: int
    strokes: int

    @property
    def message(self) -> str:
        """One sentence for a status bar or the command line."""
        return (
            f"saved project '{self.path}' ({self.bytes / 1e6:.1f} MB: {self.edited_frames} edited "
            f"frames, {self.strokes} recorded strokes)"
        )


@dataclass(frozen=True)
class EditedRun:
    """Frames ``[frame0, frame1)`` of block ``block``: ``magnitude`` and ``phase`` ``[C, F, n]``."""

    block: int
    frame0: int
    frame1: int
    magnitude: torch.Tensor
    phase: torch.Tensor


def edited_run_views(document: Document) -> list[EditedRun]:
    """Every run of edited frames of ``document``, as views of its tensors (no copy)."""
    return [
        EditedRun(
            index,
            frame0,
            frame1,
            block.magnitude[:, :, frame0:frame1],
            block.phase[:, :, frame0:frame1],
        )
        for index, block in enumerate(document.blocks)
        for frame0, frame1 in edited_runs(block.edited_frames)
    ]


def copy_edited_runs(document: Document) -> list[EditedRun]:
    """Host copies of every run of edited frames: what :func:`save_project` needs of the document's
    coefficients, taken while its writers are held off; the save itself can then run unlocked (the
    audio and settings are never written after loading)."""

    def host_copy(values: torch.Tensor) -> torch.Tensor:
        return torch.empty(values.shape, dtype=values.dtype).copy_(values)

    return [
        dataclasses.replace(run, magnitude=host_copy(run.magnitude), phase=host_copy(run.phase))
        for run in edited_run_views(document)
    ]


@dataclass
class Project:
    """A loaded project: the document, the view settings and the recorded strokes (plain JSON)."""

    document: Document
    view: dict[str, Any]
    strokes: list[dict[str, Any]]
    path: str
    created_by: str


def is_project(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a project rather than audio: the ``.spp`` suffix or a zip signature.

    No audio format starts with ``PK``, so the answer never depends on the file being valid;
    :func:`load_project` says what is wrong with a damaged one. Never raises.
    """
    if os.fspath(path).lower().endswith(SUFFIX):
        return True
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a named pipe: it could block
            return False
        with open(path, "rb") as handle:
            return handle.read(4) in (b"PK\x03\x04", b"PK\x05\x06")
    except OSError:
        return False


# --- saving ---------------------------------------------------------------------------------------


def save_project(
    document: Document,
    path: str | os.PathLike,
    *,
    view: Mapping[str, Any] | None = None,
    strokes: Iterable[Mapping[str, Any]] | None = None,
    edits: list[EditedRun] | None = None,
    progress: Progress | None = None,
) -> ProjectReport:
    """Write ``document`` with its view settings and recorded strokes to a project file, atomically.

    Parameters
    ----------
    document : Document
    path : str or os.PathLike
        The project file (conventionally ``*.spp``). An existing file is replaced only once the new
        one is complete; temporary files that killed saves left next to it are removed once stale.
    view : mapping, optional
        Plain JSON data (the GUI's zoom, colormap, ...), given back unchanged by :func:`load_project`.
    strokes : iterable of mappings, optional
        Recorded strokes as ``RecordedStroke.to_dict()`` writes them.
    edits : list of EditedRun, optional
        The edited frames to save (:func:`copy_edited_runs`, taken earlier); by default the
        document's own, read as the save goes.
    progress : callable, optional
        Called with the fraction done; returning ``False`` cancels (raises :class:`Cancelled`) and
        leaves any existing file untouched.

    Raises
    ------
    ProjectFileError
        The file system refused, or ``view``/``strokes`` are not plain JSON data.
    """
    name = os.fspath(path)
    view = dict(view or {})
    strokes = list(strokes or ())
    if not all(isinstance(stroke, Mapping) for stroke in strokes):
        raise ProjectFileError(
            name,
            "each recorded stroke must be a JSON object (RecordedStroke.to_dict())",
            action="save",
        )
    try:
        strokes_text = _json_bytes(
            {
                "format": STROKES_FORMAT,
                "version": STROKES_VERSION,
                "strokes": list(map(dict, strokes)),
            },
            "strokes",
        )
        _json_bytes(view, "view settings")
    except Refused as refusal:
        raise ProjectFileError(name, str(refusal), action="save") from None
    audio = document.audio
    storage = _audio_storage(audio)
    runs = edited_run_views(document) if edits is None else edits
    spans = [(run.block, run.frame0, run.frame1) for run in runs]
    manifest = build_manifest(document, storage, spans, view, len(strokes))
    meter = _Meter(
        progress, audio.samples.size + sum(2 * run.magnitude.numel() for run in runs), "saving"
    )
    try:
        with atomic_path(name) as temporary, zipfile.ZipFile(temporary, "w") as archive:
            _write_bytes(archive, MANIFEST, _json_bytes(manifest, "manifest"))
            _write_audio(archive, audio, storage, meter)
            for run in runs:
                shape = (audio.n_channels, 2, *run.magnitude.shape[1:])
                member = edit_member(run.block, run.frame0, run.frame1)
                _write_npy(archive, member, shape, _edit_slabs(run), meter)
            _write_bytes(archive, STROKES, strokes_text)
    except OSError as err:
        raise ProjectFileError(name, describe_os_error(err), action="save") from err
    except AudioFileError as err:
        raise ProjectFileError(
            name, f"cannot encode its audio ({err.reason})", action="save"
        ) from None
    return ProjectReport(
        path=name,
        bytes=os.path.getsize(name),
        audio_member=storage["member"],
        edited_frames=sum(run.frame1 - run.frame0 for run in runs),
        strokes=len(strokes),
    )


def _json_bytes(value: Any, what: str) -> bytes:
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False, indent=1).encode("utf-8")
    except (TypeError, ValueError) as err:
        raise Refused(f"the {what} are not plain JSON data ({err})") from None


def _audio_storage(audio: AudioData) -> dict[str, Any]:
    """How to store the samples exactly and small.

    Integer PCM goes to FLAC at the source's own depth, which ``write_audio`` and ``load_audio``
    round-trip bit for bit (about half the size of the PCM); everything else to a deflated ``.npy``
    of float32 when every sample is a float32 (float sources, lossy decodes), else float64.
    """
    samples = audio.samples
    bits = _SOURCE_BITS.get(audio.format.subtype)
    if (
        bits is not None
        and samples.shape[0] <= FLAC_MAX_CHANNELS
        and audio.sample_rate <= FLAC_MAX_RATE
        and _all_chunks(samples, lambda x: _holds_integers(x, bits))
    ):
        return {"member": AUDIO_FLAC, "subtype": FLAC_SUBTYPE_BY_BITS[bits]}
    exact32 = _all_chunks(samples, lambda x: np.array_equal(x.astype(np.float32), x))
    return {"member": AUDIO_NPY, "dtype": "<f4" if exact32 else "<f8"}


def _all_chunks(samples: np.ndarray, test) -> bool:
    return all(test(samples[:, i : i + _CHUNK]) for i in range(0, samples.shape[1], _CHUNK))


def _holds_integers(x: np.ndarray, bits: int) -> bool:
    """Whether every sample is ``k / 2**(bits-1)`` for a ``bits``-bit signed integer ``k``."""
    full = 2.0 ** (bits - 1)
    scaled = x * full
    return bool(
        np.array_equal(scaled, np.rint(scaled)) and scaled.min() >= -full and scaled.max() < full
    )


class _Meter:
    """Progress over a known amount of work; a callback returning ``False`` cancels."""

    def __init__(self, progress: Progress | None, total: int, what: str):
        self.progress, self.total, self.what, self.done = progress, max(total, 1), what, 0

    def advance(self, amount: int) -> None:
        self.done += amount
        self._report(self.done)

    def part(self, amount: int) -> Progress | None:
        """A callback for a sub-task worth ``amount``; call :meth:`advance` with it afterwards."""
        if self.progress is None:
            return None
        start = self.done
        return lambda fraction: self._report(start + fraction * amount, raising=False)

    def _report(self, done: float, *, raising: bool = True) -> bool:
        if self.progress is None:
            return True
        go_on = self.progress(min(1.0, done / self.total)) is not False
        if not go_on and raising:
            raise Cancelled(f"{self.what} cancelled")
        return go_on


def _zip_info(name: str, compress_type: int, size: int = 0) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.compress_type = compress_type
    info.file_size = size  # known in advance: zipfile decides on ZIP64 from it
    return info


def _write_bytes(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    archive.writestr(_zip_info(name, zipfile.ZIP_DEFLATED, len(data)), data)


def _write_npy(
    archive: zipfile.ZipFile,
    name: str,
    shape: tuple[int, ...],
    slabs: Iterator[np.ndarray],
    meter: _Meter,
    *,
    dtype: str = COEFFICIENT_DTYPE,
    compress_type: int = zipfile.ZIP_DEFLATED,
) -> None:
    """Stream a C-order ``.npy`` of ``shape`` from ``slabs`` (consecutive runs of its elements)."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    data_bytes = math.prod(shape) * np.dtype(dtype).itemsize
    info = _zip_info(name, compress_type, len(header.getvalue()) + data_bytes)
    with archive.open(info, "w") as member:
        member.write(header.getvalue())
        for slab in slabs:
            # a few MiB at a time: zlib gives up the GIL while it compresses, but joining the output
            # of one huge write holds it, and painting on the GUI thread would stall (85 ms measured
            # for 212 MB in tests/benchmarks/bench_autosave.py)
            row_bytes = slab[0].nbytes if slab.ndim > 1 else np.dtype(dtype).itemsize
            step = max(1, _WRITE_PIECE_BYTES // max(1, row_bytes))
            for start in range(0, len(slab), step):
                member.write(np.ascontiguousarray(slab[start : start + step], dtype=dtype))
            meter.advance(slab.size)


def _edit_slabs(run: EditedRun) -> Iterator[np.ndarray]:
    """Magnitude then phase ``[bins, frames]`` of each channel: the ``[C, 2, F, n]`` layout."""
    for channel in range(run.magnitude.shape[0]):
        for values in (run.magnitude, run.phase):
            yield values[channel].to("cpu").numpy()


def _write_audio(archive: zipfile.ZipFile, audio: AudioData, storage: dict, meter: _Meter) -> None:
    """The samples as ``storage`` says: FLAC through ``write_audio`` (a scratch file), or ``.npy``."""
    samples = audio.samples
    if storage["member"] == AUDIO_FLAC:
        with tempfile.TemporaryDirectory(prefix="spectropaint-") as scratch:
            encoded = Path(scratch) / AUDIO_FLAC
            subtype = storage["subtype"]
            write_audio(encoded, samples, audio.sample_rate, format="FLAC", subtype=subtype)
            archive.write(encoded, AUDIO_FLAC, compress_type=zipfile.ZIP_STORED)
        meter.advance(samples.size)
        return
    rows = (
        samples[channel, start : start + _CHUNK]
        for channel in range(samples.shape[0])
        for start in range(0, samples.shape[1], _CHUNK)
    )
    # Stored, not deflated: float samples deflate by 7 to 10 % at about 30 MB/s, so a float64 file
    # of ten minutes would take 11 s instead of one to save.
    _write_npy(
        archive,
        AUDIO_NPY,
        samples.shape,
        rows,
        meter,
        dtype=storage["dtype"],
        compress_type=zipfile.ZIP_STORED,
    )


# --- loading --------------------------------------------------------------------------------------


def load_project(
    path: str | os.PathLike,
    *,
    device: str | torch.device | None = None,
    progress: Progress | None = None,
    max_bytes: int | None = None,
    reserve_bytes: int | ReserveEstimate = 0,
) -> Project:
    """Read a project file and rebuild its document, bit for bit.

    Parameters
    ----------
    path : str or os.PathLike
    device : str or torch.device, optional
        Where the coefficients live (see ``Document``).
    progress : callable, optional
        Called with the fraction done; returning ``False`` cancels (raises :class:`Cancelled`).
    max_bytes : int, optional
        Refuse projects that would need more memory than this, before allocating any of it.
        Default: the memory available now.
    reserve_bytes : int or callable, optional
        Memory the caller will add for this document (the window's view and playback), counted in
        the document's own check (see ``Document``).

    Raises
    ------
    ProjectFileError
        For anything that keeps the file from being read whole and consistent; the message names the
        file and the reason.
    """
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as raw:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise Refused("is a folder, not a file")
            if not stat.S_ISREG(mode):
                raise Refused("not a regular file")
            try:
                archive = zipfile.ZipFile(raw)
            except zipfile.BadZipFile as err:
                raise Refused(f"not a project file: not a zip archive ({err})") from None
            with archive:
                return _load(archive, name, device, progress, max_bytes, reserve_bytes)
    except Refused as refusal:
        raise ProjectFileError(name, str(refusal)) from None
    except (
        zipfile.BadZipFile,
        EOFError,
        zlib.error,
        NotImplementedError,
        UnicodeDecodeError,
    ) as err:
        raise ProjectFileError(name, f"damaged archive ({err or type(err).__name__})") from None
    except MemoryError:
        raise ProjectFileError(name, "too large: not enough memory") from None
    except OSError as err:
        raise ProjectFileError(name, describe_os_error(err)) from err


def _load(
    archive: zipfile.ZipFile,
    path: str,
    device: str | torch.device | None,
    progress: Progress | None,
    max_bytes: int | None,
    reserve_bytes: int | ReserveEstimate,
) -> Project:
    infos = _checked_members(archive)
    if MANIFEST not in infos:
        raise Refused(f"not a project file: no {MANIFEST}")
    _check_declared_size(infos[MANIFEST], MAX_MANIFEST_BYTES, "allowed for it")
    plan = check_manifest(_read_json(archive, infos[MANIFEST]))
    missing = sorted(plan.members - set(infos))
    if missing:
        raise Refused(f"member '{missing[0]}' is missing")
    extra = sorted(set(infos) - plan.members)
    if extra:
        raise Refused(f"unexpected member '{extra[0]}' (the manifest does not list it)")
    _check_declared_sizes(infos, plan)
    _check_memory(plan, infos[STROKES], device, reserve_bytes, max_bytes)

    audio_samples = plan.channels * plan.frames
    analysis_cells = plan.coefficients
    edit_values = sum(math.prod(plan.edit_shape(edit)) for edit in plan.edits)
    meter = _Meter(progress, audio_samples + analysis_cells + edit_values, "opening")
    samples = _read_audio(archive, infos[plan.storage["member"]], plan, max_bytes)
    meter.advance(audio_samples)
    audio = AudioData(samples, plan.audio_format, plan.source_path)
    try:
        document = Document(
            audio,
            settings=plan.settings,
            device=device,
            progress=meter.part(analysis_cells),
            reserve_bytes=reserve_bytes,
        )
    except (AudioFileError, SettingsError) as err:  # about the project, not the audio it names
        raise Refused(getattr(err, "reason", str(err))) from None
    meter.advance(analysis_cells)
    for edit in plan.edits:
        _read_edit(archive, infos[edit.member], plan, edit, document, meter)
    strokes = _read_strokes(archive, infos[STROKES], plan.n_strokes)
    return Project(document, plan.view, strokes, path, plan.created_by)


def _checked_members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """The members by name, once every name is safe and unique and every member plainly stored."""
    infos: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or ":" in name or "\0" in name:
            raise Refused(f"member {name!r} has an unsafe name (absolute, or with '..')")
        if name in infos:
            raise Refused(f"member '{name}' appears twice")
        if info.flag_bits & 0x1:
            raise Refused(f"member '{name}' is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise Refused(f"member '{name}' uses compression method {info.compress_type}")
        infos[name] = info
    return infos


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, inflated a piece at a time: reading stops at the declared size, so a member
    that inflates to more than it declares never takes more memory than that (``ZipFile.read``
    would inflate up to 2 GiB in one call before the CRC check could refuse it)."""
    pieces = []
    with archive.open(info) as stream:
        while piece := stream.read(_MEMBER_PIECE):
            pieces.append(piece)
    return b"".join(pieces)


def _read_json(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    try:
        return parse_json(_read_member(archive, info))
    except InputRefused as refusal:
        raise Refused(f"member '{info.filename}': {refusal}") from None


def _check_declared_size(info: zipfile.ZipInfo, limit: int, why: str) -> None:
    """Refuse a member whose declared uncompressed size exceeds ``limit``: reading never yields
    more than the declared size, so this bounds what inflating it can produce (no zip bombs)."""
    if info.file_size > limit:
        raise Refused(
            f"member '{info.filename}' declares {info.file_size} bytes, more than the {limit} {why}"
        )


def _check_declared_sizes(infos: dict[str, zipfile.ZipInfo], plan: Plan) -> None:
    """Every member's declared size against what the manifest implies, before reading any."""
    _check_declared_size(infos[STROKES], MAX_STROKES_BYTES, "allowed for it")
    storage = plan.storage
    if storage["member"] == AUDIO_FLAC:
        bits = next(b for b, name in FLAC_SUBTYPE_BY_BITS.items() if name == storage["subtype"])
        pcm = plan.channels * plan.frames * (bits // 8)
        limit = pcm + pcm // 16 + 2**20  # FLAC never exceeds verbatim PCM plus its headers
        _check_declared_size(infos[AUDIO_FLAC], limit, f"{storage['subtype']} samples can take")
    else:
        npy_bytes = plan.channels * plan.frames * np.dtype(storage["dtype"]).itemsize
        _check_declared_size(infos[AUDIO_NPY], npy_bytes + _NPY_HEADER_BYTES, "its shape needs")
    for edit in plan.edits:
        npy_bytes = math.prod(plan.edit_shape(edit)) * np.dtype(COEFFICIENT_DTYPE).itemsize
        _check_declared_size(infos[edit.member], npy_bytes + _NPY_HEADER_BYTES, "its shape needs")


def _check_memory(
    plan: Plan,
    strokes: zipfile.ZipInfo,
    device: str | torch.device | None,
    reserve_bytes: int | ReserveEstimate,
    max_bytes: int | None,
) -> None:
    """Refuse a project whose document, edits and strokes would not fit, before inflating any of
    them: the same need a document of its audio would have (:func:`host_need`), plus the largest
    run of edits being read and the parsed strokes."""
    largest_slab = max((2 * math.prod(plan.edit_shape(e)[2:]) for e in plan.edits), default=0)
    rate = plan.audio_format.sample_rate
    need = (
        host_need(
            max(plan.frames, make_transform(plan.settings, rate).min_samples()),
            plan.channels,
            plan.settings,
            device=choose_device(device),
            reserve=reserve_bytes,
            sample_rate=rate,
        )
        .plus("edits", largest_slab * 4)
        .plus("strokes", strokes.file_size * _JSON_LOAD_FACTOR)
    )
    refusal = need.refusal(available_memory() if max_bytes is None else max_bytes)
    if refusal is not None:
        raise Refused(refusal)


def _open_npy(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, shape: tuple[int, ...], dtype: str
) -> IO[bytes]:
    """Open a ``.npy`` member whose header must declare exactly ``shape`` and ``dtype``.

    The header is read with numpy's own pickle-free functions and checked before any data, and the
    declared size must be exactly the header's plus the data's; returns the stream at the data.
    """
    name = info.filename
    data_bytes = math.prod(shape) * np.dtype(dtype).itemsize
    stream = archive.open(info)
    try:
        readers = {
            (1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0,
        }
        try:
            version = np.lib.format.read_magic(stream)
            if version not in readers:
                raise ValueError(f"unsupported .npy version {version}")
            found, fortran, found_dtype = readers[version](
                stream, max_header_size=_NPY_HEADER_LIMIT
            )
        except (ValueError, SyntaxError, tokenize.TokenError) as err:  # numpy parses the header
            raise Refused(f"member '{name}' is not a valid .npy array ({err})") from None
        if found != shape or fortran or found_dtype != np.dtype(dtype):
            raise Refused(
                f"member '{name}' holds {found_dtype} {list(found)}, the manifest declares "
                f"{dtype} {list(shape)}"
            )
        need = stream.tell() + data_bytes
        if info.file_size != need:
            raise Refused(
                f"member '{name}' is {info.file_size} bytes; its header and shape need {need}"
            )
    except BaseException:
        stream.close()
        raise
    return stream


def _read_into(stream: IO[bytes], out: np.ndarray, name: str) -> None:
    view = memoryview(out).cast("B")
    done = 0
    while done < len(view):
        count = stream.readinto(view[done:])
        if not count:
            raise Refused(f"member '{name}' is truncated")
        done += count


def _read_audio(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, plan: Plan, max_bytes: int | None
) -> np.ndarray:
    """The samples ``[C, N]`` float64, exactly as saved."""
    channels, frames = plan.channels, plan.frames
    if plan.storage["member"] == AUDIO_FLAC:
        return _read_flac(archive, info, plan, max_bytes)
    dtype = plan.storage["dtype"]
    samples = np.empty((channels, frames))
    buffer = np.empty(min(frames, _CHUNK), dtype)
    with _open_npy(archive, info, (channels, frames), dtype) as stream:
        for channel in range(channels):
            for start in range(0, frames, _CHUNK):
                chunk = buffer[: min(_CHUNK, frames - start)]
                _read_into(stream, chunk, info.filename)
                bad = ~(np.abs(chunk) <= MAX_SAMPLE)
                if bad.any():
                    seconds = (start + int(np.argmax(bad))) / plan.audio_format.sample_rate
                    raise Refused(
                        f"member '{info.filename}' holds a NaN, infinite or absurd sample (beyond "
                        f"±{MAX_SAMPLE:g}; channel {channel + 1} at {seconds:.3f} s)"
                    )
                samples[channel, start : start + len(chunk)] = chunk
    return samples


def _read_flac(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, plan: Plan, max_bytes: int | None
) -> np.ndarray:
    """Decode the FLAC member through ``load_audio`` (its checks, its exactness) via a temp file."""
    subtype = plan.storage["subtype"]
    with tempfile.TemporaryDirectory(prefix="spectropaint-") as scratch:
        encoded = Path(scratch) / AUDIO_FLAC
        with archive.open(info) as source, open(encoded, "wb") as sink:
            shutil.copyfileobj(source, sink, _CHUNK)
        try:
            audio = load_audio(encoded, max_bytes=max_bytes)
        except AudioFileError as err:
            raise Refused(f"its audio is damaged ({err.reason})") from None
    if audio.warnings:  # a project's own audio is whole, or the project is damaged
        raise Refused(f"its audio is damaged ({audio.warnings[0]})")
    found = (audio.format.format, audio.format.subtype, audio.sample_rate, audio.samples.shape)
    wanted = ("FLAC", subtype, plan.audio_format.sample_rate, (plan.channels, plan.frames))
    if found != wanted:
        raise Refused(f"its audio is {found}, the manifest declares {wanted}")
    return audio.samples


def _read_edit(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    plan: Plan,
    edit: Edit,
    document: Document,
    meter: _Meter,
) -> None:
    """Write one stored run of edited frames back into ``document``, a channel at a time."""
    shape = plan.edit_shape(edit)
    with _open_npy(archive, info, shape, COEFFICIENT_DTYPE) as stream:
        for channel in range(plan.channels):
            values = np.empty((2, *shape[2:]), COEFFICIENT_DTYPE)
            _read_into(stream, values, info.filename)
            if not (np.isfinite(values[1]).all() and (np.abs(values[0]) <= MAX_MAGNITUDE).all()):
                raise Refused(
                    f"member '{info.filename}' holds NaN, infinite or absurd coefficients "
                    f"(magnitudes above {MAX_MAGNITUDE:g}) in channel {channel + 1}"
                )
            region = Region(0, shape[2], edit.frame0, edit.frame1, (channel,), edit.block)
            document.write(region, torch.from_numpy(values[0:1]), torch.from_numpy(values[1:2]))
            meter.advance(values.size)


def _read_strokes(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, count: int
) -> list[dict[str, Any]]:
    data = _read_json(archive, info)
    if (
        not isinstance(data, dict)
        or data.get("format") != STROKES_FORMAT
        or data.get("version") not in STROKES_READABLE
    ):
        raise Refused(f"'{STROKES}' is not a strokes file of version 1 or 2")
    strokes = data.get("strokes")
    if not isinstance(strokes, list) or not all(isinstance(s, dict) for s in strokes):
        raise Refused(f"'{STROKES}' must hold a list of stroke objects")
    if len(strokes) != count:
        raise Refused(f"'{STROKES}' holds {len(strokes)} strokes, the manifest declares {count}")
    return strokes
