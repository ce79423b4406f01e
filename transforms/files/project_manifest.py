"""The manifest of a project file: written from a document, and checked when read.

``manifest.json`` says what a project holds (audio format and storage, transform settings, block
shapes, the runs of edited frames and their members, the view, the strokes member). Reading one,
:func:`check_manifest` checks every field and their consistency (block shapes must follow from the
audio's size and the settings; edits must lie inside their block, in order, with the shapes and
member names they imply) and returns a :class:`Plan`: what to allocate and read. Nothing large is
allocated before this has passed. The format is documented in the README (Project files).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spectropaint import __version__
from spectropaint.transforms.analysis import AnalysisSettings, make_transform, settings_from_dict
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.files.audio_file import AudioFormat
from spectropaint.transforms.files.audio_headers import MAX_CHANNELS

if TYPE_CHECKING:
    from spectropaint.transforms.document import Document

FORMAT = "spectropaint-project"
VERSION = 1
MANIFEST, STROKES, AUDIO_FLAC, AUDIO_NPY = (
    "manifest.json",
    "strokes.json",
    "audio.flac",
    "audio.npy",
)
STROKES_FORMAT, STROKES_VERSION = "spectropaint-strokes", 2
STROKES_READABLE = (1, 2)
"""The strokes-file format of ``brushes/recorded.py``: ``strokes.json`` is a valid strokes file
(written as version 2; version 1, of projects made before, still loads)."""
MAX_STROKES_BYTES = 256 * 2**20
"""The largest strokes file (and ``strokes.json`` member) read."""
COEFFICIENT_DTYPE = "<f4"
MAX_MAGNITUDE = 1e20
"""The largest stored edit magnitude read: far above any sound (a full-scale sine is about n_fft/4,
a sample at the ±1e6 that audio may hold reaches 1e10), far below where float32 resynthesis and the
brushes' kernels would overflow to infinity (3.4e38)."""
AUDIO_DTYPES = ("<f4", "<f8")
FLAC_SUBTYPE_BY_BITS = {8: "PCM_S8", 16: "PCM_16", 24: "PCM_24"}
FLAC_MAX_CHANNELS, FLAC_MAX_RATE = 8, 655_350


class Refused(Exception):
    """A reason to refuse a project file; the caller turns it into ``ProjectFileError``."""


def edit_member(block: int, frame0: int, frame1: int) -> str:
    return f"edits/block{block}/frames_{frame0}_{frame1}.npy"


def build_manifest(
    document: Document,
    storage: dict[str, Any],
    edits: list[tuple[int, int, int]],
    view: dict[str, Any],
    n_strokes: int,
) -> dict[str, Any]:
    """The manifest of ``document`` saved with audio ``storage``, ``edits`` as (block, frame0, frame1)."""
    audio = document.audio
    channels, frames = audio.samples.shape
    return {
        "format": FORMAT,
        "version": VERSION,
        "created_by": f"spectropaint {__version__}",
        "audio": {
            "format": audio.format.format,
            "subtype": audio.format.subtype,
            "sample_rate": int(audio.sample_rate),
            "channels": channels,
            "frames": frames,
            "source_path": audio.path,
            "storage": storage,
        },
        "transform": {"name": document.transform.name, "settings": document.settings.to_dict()},
        "blocks": [
            {"bins": block.n_bins, "frames": block.n_frames, "hop": block.hop}
            for block in document.blocks
        ],
        "edits": [
            {
                "block": index,
                "frame0": frame0,
                "frame1": frame1,
                "member": edit_member(index, frame0, frame1),
                "dtype": COEFFICIENT_DTYPE,
                "shape": [channels, 2, document.blocks[index].n_bins, frame1 - frame0],
            }
            for index, frame0, frame1 in edits
        ],
        "strokes": {"member": STROKES, "count": n_strokes},
        "view": view,
    }


@dataclass(frozen=True)
class Edit:
    """Frames ``[frame0, frame1)`` of ``block`` were edited; their values are in :attr:`member`."""

    block: int
    frame0: int
    frame1: int

    @property
    def member(self) -> str:
        return edit_member(self.block, self.frame0, self.frame1)


@dataclass(frozen=True)
class Plan:
    """A manifest that passed every check: what to allocate and read."""

    audio_format: AudioFormat
    frames: int
    source_path: str | None
    storage: dict[str, Any]
    settings: AnalysisSettings
    blocks: tuple[tuple[int, int], ...]
    """(bins, frames) of each block."""
    edits: tuple[Edit, ...]
    n_strokes: int
    view: dict[str, Any]
    created_by: str

    @property
    def channels(self) -> int:
        return self.audio_format.channels

    @property
    def coefficients(self) -> int:
        """Coefficient cells of all channels and blocks."""
        return self.channels * sum(bins * frames for bins, frames in self.blocks)

    def edit_shape(self, edit: Edit) -> tuple[int, int, int, int]:
        return (self.channels, 2, self.blocks[edit.block][0], edit.frame1 - edit.frame0)

    @property
    def members(self) -> set[str]:
        return {MANIFEST, STROKES, self.storage["member"], *(edit.member for edit in self.edits)}


def _field(values: Any, key: str, kind: type, where: str) -> Any:
    """``values[key]`` if it is a ``kind``; ``where`` is the dotted path of ``values`` for messages."""
    name = f"{where}.{key}" if where else key
    if not isinstance(values, dict) or key not in values:
        raise Refused(f"manifest field {name} is missing")
    value = values[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Refused(f"manifest field {name} has the wrong type ({value!r})")
    return value


def _count(values: Any, key: str, where: str, lo: int, hi: int) -> int:
    value = _field(values, key, int, where)
    if not lo <= value <= hi:
        raise Refused(f"manifest field {where}.{key} = {value} is outside {lo}..{hi}")
    return value


def check_manifest(manifest: Any) -> Plan:
    """Check every field of the manifest and its consistency; nothing is allocated here."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise Refused(f'not a project file (its manifest lacks "format": "{FORMAT}")')
    version = manifest.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise Refused(
            f"made by a newer SpectroPaint (project format version {version}; this one reads "
            f"version {VERSION})"
        )
    if version != VERSION:
        raise Refused(f"unknown project format version {version!r}")

    audio = _field(manifest, "audio", dict, "")
    channels = _count(audio, "channels", "audio", 1, MAX_CHANNELS)
    frames = _count(audio, "frames", "audio", 1, 2**48)
    audio_format = AudioFormat(
        _field(audio, "format", str, "audio"),
        _field(audio, "subtype", str, "audio"),
        _count(audio, "sample_rate", "audio", 1, 2**31 - 1),
        channels,
    )
    source_path = audio.get("source_path")
    if source_path is not None and not isinstance(source_path, str):
        raise Refused(f"manifest: audio.source_path has the wrong type ({source_path!r})")
    storage = _storage(_field(audio, "storage", dict, "audio"), channels, audio_format)

    transform = _field(manifest, "transform", dict, "")
    try:
        settings = settings_from_dict(
            _field(transform, "name", str, "transform"),
            _field(transform, "settings", dict, "transform"),
        )
        analysis = make_transform(settings, audio_format.sample_rate)
    except (TypeError, SettingsError) as err:
        raise Refused(f"manifest: bad transform settings ({err})") from None
    # audio shorter than one window is analysed padded to it, as the document does
    layouts = analysis.layout(max(frames, analysis.min_samples()), audio_format.sample_rate)
    blocks = _field(manifest, "blocks", list, "")
    declared = [
        (
            _field(block, "bins", int, "blocks[]"),
            _field(block, "frames", int, "blocks[]"),
            _field(block, "hop", int, "blocks[]"),
        )
        for block in blocks
    ]
    expected = [(layout.n_bins, layout.n_frames, layout.hop) for layout in layouts]
    if declared != expected:
        raise Refused(
            f"manifest: blocks (bins, frames, hop) {declared} do not match the {expected} that "
            f"{frames} frames analysed with {settings.to_dict()} give"
        )

    edits = _edits(_field(manifest, "edits", list, ""), channels, expected)
    strokes = _field(manifest, "strokes", dict, "")
    if _field(strokes, "member", str, "strokes") != STROKES:
        raise Refused(f"manifest: strokes.member must be '{STROKES}'")
    return Plan(
        audio_format=audio_format,
        frames=frames,
        source_path=source_path,
        storage=storage,
        settings=settings,
        blocks=tuple((bins, frames) for bins, frames, _ in expected),
        edits=edits,
        n_strokes=_count(strokes, "count", "strokes", 0, 2**31),
        view=_field(manifest, "view", dict, ""),
        created_by=str(manifest.get("created_by", "unknown")),
    )


def _storage(storage: dict, channels: int, audio_format: AudioFormat) -> dict[str, Any]:
    member = _field(storage, "member", str, "audio.storage")
    if member == AUDIO_FLAC:
        subtype = _field(storage, "subtype", str, "audio.storage")
        if subtype not in FLAC_SUBTYPE_BY_BITS.values():
            raise Refused(f"manifest: FLAC audio cannot be {subtype!r}")
        if channels > FLAC_MAX_CHANNELS or audio_format.sample_rate > FLAC_MAX_RATE:
            raise Refused("manifest: FLAC audio cannot have that many channels or that rate")
        return {"member": member, "subtype": subtype}
    if member == AUDIO_NPY:
        dtype = _field(storage, "dtype", str, "audio.storage")
        if dtype not in AUDIO_DTYPES:
            raise Refused(f"manifest: audio dtype {dtype!r} is not one of {AUDIO_DTYPES}")
        return {"member": member, "dtype": dtype}
    raise Refused(f"manifest: unknown audio member {member!r}")


def _edits(entries: list, channels: int, blocks: list[tuple[int, int, int]]) -> tuple[Edit, ...]:
    """Edited frame runs: inside their block, in order, not overlapping, members named as they must."""
    edits: list[Edit] = []
    for entry in entries:
        block = _count(entry, "block", "edits[]", 0, len(blocks) - 1)
        bins, n_frames, _ = blocks[block]
        frame0 = _count(entry, "frame0", "edits[]", 0, n_frames - 1)
        frame1 = _count(entry, "frame1", "edits[]", frame0 + 1, n_frames)
        edit = Edit(block, frame0, frame1)
        if edits and (edits[-1].block, edits[-1].frame1) > (block, frame0):
            raise Refused(f"manifest: edited frames {frame0}..{frame1} overlap or are out of order")
        if _field(entry, "member", str, "edits[]") != edit.member:
            raise Refused(f"manifest: edit member {entry['member']!r} should be '{edit.member}'")
        if _field(entry, "dtype", str, "edits[]") != COEFFICIENT_DTYPE:
            raise Refused(f"manifest: edit dtype {entry['dtype']!r} is not {COEFFICIENT_DTYPE}")
        shape = [channels, 2, bins, frame1 - frame0]
        if _field(entry, "shape", list, "edits[]") != shape:
            raise Refused(f"manifest: edit '{edit.member}' has shape {entry['shape']}, not {shape}")
        edits.append(edit)
    return tuple(edits)
