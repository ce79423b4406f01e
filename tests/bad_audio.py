"""A corpus of bad audio files, generated at test time (the repository holds no binaries).

``make_bad_files(folder)`` writes every case into ``folder`` and returns, per case, the path and a
piece of the reason ``load_audio`` must give. The expected reasons come from what each file was
built to contain (declared sizes, where the NaN was put), not from the loader. Tests of the
command line and the GUI reuse the same corpus.

``make_damaged_files(folder)`` writes damaged files that must open with what they hold and a warning
(truncated, an Ogg page failing its checksum, NaN or overflowing samples), with the audio expected.

``make_bad_projects(folder)`` does the same for project files (garbage, special files, zip bombs).

A file that is unreadable because of its permissions cannot be part of that corpus: root reads it
anyway. ``make_unreadable_file`` builds one, ``shared_folder`` gives a folder another user can
enter, and a ``run_python`` child that runs ``DROP_PRIVILEGES`` is a user the file denies.
``run_with_mount`` runs a command with a small file system, or a read-only one, mounted on a folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

NOBODY = 65534


def wav_bytes(
    data: bytes = b"",
    *,
    sample_rate: int = 44100,
    channels: int = 2,
    bits: int = 16,
    format_tag: int = 1,
    declared_data_bytes: int | None = None,
) -> bytes:
    """A canonical 44-byte-header WAV file around ``data``, with any header fields, even absurd."""
    block_align = channels * bits // 8
    fmt = struct.pack(
        "<HHIIHH",
        format_tag,
        channels,
        sample_rate,
        (sample_rate * block_align) & 0xFFFFFFFF,
        block_align & 0xFFFF,
        bits,
    )
    declared = len(data) if declared_data_bytes is None else declared_data_bytes
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", declared) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def _cut(path: Path, keep: int) -> Path:
    with open(path, "r+b") as file:
        file.truncate(keep)
    return path


def _noise(frames: int, channels: int, seed: int) -> np.ndarray:
    """(frames, channels) of quiet noise, as soundfile wants it."""
    return 0.25 * np.random.default_rng(seed).standard_normal((frames, channels))


def _flac_claiming_most_frames(path: Path) -> Path:
    """A small 8-channel FLAC file whose header claims 2**36 - 1 frames, the most it can state."""
    sf.write(path, _noise(1000, 8, 7), 8000, format="FLAC", subtype="PCM_16")
    content = bytearray(path.read_bytes())
    # 'fLaC', a 4-byte block header, then STREAMINFO, whose bytes 10..17 end in 36 bits of frames
    fields = int.from_bytes(content[18:26], "big") | (2**36 - 1)
    content[18:26] = fields.to_bytes(8, "big")
    return _write(path, bytes(content))


def _rf64_with_cut_ds64(path: Path) -> Path:
    """An RF64 file that ends 8 bytes into its ds64 chunk (which needs 28)."""
    sf.write(path, _noise(100, 1, 9), 8000, format="RF64", subtype="PCM_16")
    content = path.read_bytes()
    return _write(path, content[: content.find(b"ds64") + 16])


def _aiff_with_rate(path: Path, rate_bytes: bytes) -> Path:
    """A valid AIFF whose 80-bit sample rate field holds ``rate_bytes``."""
    sf.write(path, _noise(100, 1, 10), 8000, format="AIFF", subtype="PCM_16")
    content = bytearray(path.read_bytes())
    rate = content.find(b"COMM") + 8 + 8  # after the chunk header: channels, frames, bits
    content[rate : rate + 10] = rate_bytes
    return _write(path, bytes(content))


def make_bad_files(folder: str | os.PathLike) -> dict[str, tuple[Path, str]]:
    """Write one file per kind of input that must be refused into ``folder`` (created if missing).

    Returns
    -------
    dict
        name -> (path, a substring the reason of ``AudioFileError`` must contain).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cases: dict[str, tuple[Path, str]] = {}

    cases["empty"] = (_write(folder / "empty.wav", b""), "empty file (0 bytes)")
    cases["text_named_wav"] = (
        _write(folder / "notes.wav", b"This is not audio, only words.\n" * 4),
        "not a recognised audio file (starts with b'This is not",
    )
    noise = b"\x00" + np.random.default_rng(0).bytes(4095)  # a leading 0 can start no container
    cases["random_bytes_flac"] = (
        _write(folder / "noise.flac", noise),
        "not a recognised audio file (starts with b'\\x00",
    )
    # an MPEG frame sync and a valid first header (MPEG-1 layer III, 128 kbit/s, 44.1 kHz), then noise
    mpeg = b"\xff\xfb\x90\x00" + np.random.default_rng(1).bytes(4092)
    cases["random_bytes_after_mpeg_sync"] = (
        _write(folder / "noise.mp3", mpeg),
        "damaged MP3 file (",
    )
    (folder / "folder.wav").mkdir()
    cases["folder"] = (folder / "folder.wav", "is a folder")
    cases["missing"] = (folder / "missing.wav", "no such file")
    cases["missing_folder"] = (
        folder / "nowhere" / "missing.wav",
        f"folder '{folder / 'nowhere'}' does not exist",
    )
    os.mkfifo(folder / "pipe.wav")
    cases["named_pipe"] = (folder / "pipe.wav", "not a regular file (named pipe)")
    cases["device"] = (Path("/dev/zero"), "not a regular file (character device)")

    cases["no_audio"] = (_write(folder / "silent.wav", wav_bytes(b"")), "contains no audio")
    cases["sample_rate_zero"] = (
        _write(folder / "rate0.wav", wav_bytes(b"\0" * 400, sample_rate=0)),
        "sample rate 0 Hz",
    )
    cases["zero_channels"] = (
        _write(folder / "ch0.wav", wav_bytes(b"\0" * 400, channels=0)),
        "absurd header: 0 channels",
    )
    cases["channels_65535"] = (
        _write(folder / "ch65535.wav", wav_bytes(b"\0" * 400, channels=65535)),
        "absurd header: 65535 channels",
    )
    cases["unknown_encoding"] = (
        _write(folder / "bits0.wav", wav_bytes(b"\0" * 400, bits=0)),
        "damaged WAV file",
    )
    cases["rf64_ds64_cut"] = (
        _rf64_with_cut_ds64(folder / "ds64.wav"),
        "truncated: the file ends inside its ds64 chunk",
    )
    # exponent 0x7FFE: 2**16383, far beyond a double; then the NaN pattern (exponent all ones)
    cases["aiff_rate_overflows"] = (
        _aiff_with_rate(folder / "rate_huge.aiff", b"\x7f\xfe" + b"\x80" + bytes(7)),
        "absurd header: sample rate inf Hz",
    )
    cases["aiff_rate_nan"] = (
        _aiff_with_rate(folder / "rate_nan.aiff", b"\x7f\xff" + b"\xc0" + bytes(7)),
        "absurd header: sample rate nan Hz",
    )
    # (2**36 - 1) frames x 8 channels x 8 bytes of float64 = 4.398e12 bytes
    cases["too_large"] = (
        _flac_claiming_most_frames(folder / "huge.flac"),
        "too large: would need 4.4 TB",
    )
    return cases


@dataclass(frozen=True)
class Damaged:
    """A damaged file that opens with what it holds, and what that must be.

    ``warning`` is a piece of the one warning loading must give. ``expected`` is the audio the
    usable part must equal exactly ``[C, N]``; for a lossy file, where only the length is known, it
    is None and ``frames`` gives the length (None: any length from 1 to ``total``).
    """

    path: Path
    warning: str
    expected: np.ndarray | None = None
    frames: int | None = None
    total: int | None = None


def _pcm16(frames: int, channels: int, seed: int) -> np.ndarray:
    """Random 16-bit PCM as the file stores it, ``(frames, channels)`` int16."""
    rng = np.random.default_rng(seed)
    return rng.integers(-(2**15), 2**15, (frames, channels)).astype(np.int16)


def _as_read(pcm: np.ndarray) -> np.ndarray:
    """What ``load_audio`` gives for 16-bit PCM: ``[C, N]`` float64, ``k / 2**15``."""
    return pcm.T / 2.0**15


def _ogg_pages(content: bytes) -> list[int]:
    """Offsets of the Ogg pages, walked by their own lengths."""
    offsets, offset = [], 0
    while offset < len(content):
        offsets.append(offset)
        segments = content[offset + 26]
        offset += 27 + segments + sum(content[offset + 27 : offset + 27 + segments])
    return offsets


def make_damaged_files(folder: str | os.PathLike) -> dict[str, Damaged]:
    """Write damaged files that must open with what is usable, and a warning, into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cases: dict[str, Damaged] = {}

    # one second of 44.1 kHz stereo 16-bit declared (176400 bytes), 1000 bytes (250 frames) present
    pcm = _pcm16(250, 2, 11)
    cases["truncated_wav"] = Damaged(
        _write(folder / "cut.wav", wav_bytes(pcm.tobytes(), declared_data_bytes=176400)),
        "truncated: header declares 176400 bytes of audio data, file holds 1000; opened the 0.006 s "
        "it holds, 0.994 s missing",
        _as_read(pcm),
    )
    # 22050 frames x 2 channels x 2 bytes = 88200 bytes of data declared; cut to half the file
    pcm = _pcm16(22050, 2, 1)
    aiff = folder / "cut.aiff"
    sf.write(aiff, pcm, 22050, format="AIFF", subtype="PCM_16")
    data = aiff.read_bytes().find(b"SSND") + 16  # chunk header, offset, block size
    keep = aiff.stat().st_size // 2
    cases["truncated_aiff"] = Damaged(
        _cut(aiff, keep),
        f"truncated: header declares 88200 bytes of audio data, file holds {keep - data}",
        _as_read(pcm[: (keep - data) // 4]),
    )
    # 4000 frames x 2 bytes = 8000 bytes declared in the ds64 chunk; cut 3000 of them
    pcm = _pcm16(4000, 1, 8)
    rf64 = folder / "cut_rf64.wav"
    sf.write(rf64, pcm, 8000, format="RF64", subtype="PCM_16")
    cases["truncated_rf64"] = Damaged(
        _cut(rf64, rf64.stat().st_size - 3000),
        "truncated: header declares 8000 bytes of audio data, file holds 5000; opened the 0.312 s "
        "it holds, 0.188 s missing",
        _as_read(pcm[:2500]),
    )
    pcm = _pcm16(44100, 2, 2)
    flac = folder / "cut.flac"
    sf.write(flac, pcm, 44100, format="FLAC", subtype="PCM_16")
    cases["truncated_flac"] = Damaged(
        _cut(flac, flac.stat().st_size // 2),
        "truncated or damaged: decoding stopped after",
        _as_read(pcm),  # the usable part is a prefix of this
        total=44100,
    )

    ogg = folder / "cut.ogg"
    sf.write(ogg, _noise(44100, 2, 3), 44100, format="OGG", subtype="VORBIS")
    content = ogg.read_bytes()
    cut = len(content) // 2 + 1
    cases["truncated_ogg"] = Damaged(
        _cut(ogg, cut),
        f"truncated: the file ends inside the Ogg page at byte {content.rfind(b'OggS', 0, cut)}",
        total=44100,
    )
    ogg_pages = folder / "no_last_page.ogg"
    sf.write(ogg_pages, _noise(44100, 2, 4), 44100, format="OGG", subtype="VORBIS")
    last_page = ogg_pages.read_bytes().rfind(b"OggS")
    cases["ogg_without_last_page"] = Damaged(
        _cut(ogg_pages, last_page),
        "truncated: the Ogg stream stops before its last page",
        total=44100,
    )
    # three seconds, with damage in a page half-way: its checksum fails, or 64 bytes are zeroed
    # where a page starts; the length of the rest comes from the stream's last page
    for name, zeroed in (("ogg_bad_checksum", False), ("ogg_zeroed_bytes", True)):
        path = folder / f"{name}.ogg"
        sf.write(path, _noise(3 * 44100, 2, 12), 44100, format="OGG", subtype="VORBIS")
        clean = sf.read(path, always_2d=True)[0].T  # what the pages before the damage decode to
        content = bytearray(path.read_bytes())
        page = _ogg_pages(bytes(content))[len(_ogg_pages(bytes(content))) // 2]
        if zeroed:
            content[page : page + 64] = bytes(64)
            warning = f"damaged: bytes from {page} on are not an Ogg page"
        else:
            content[page + 200] ^= 0xFF
            warning = f"damaged: the Ogg page at byte {page} fails its checksum"
        cases[name] = Damaged(_write(path, bytes(content)), warning, clean, total=3 * 44100)

    # 8 kHz stereo float: NaN in channel 2 at frame 2000 (0.250 s), +inf in channel 1 later
    samples = _noise(8000, 2, 5).astype(np.float32).astype(np.float64)
    samples[2000, 1] = np.nan
    samples[6000, 0] = np.inf
    path = folder / "nan.wav"
    sf.write(path, samples, 8000, format="WAV", subtype="FLOAT")
    cases["nan_in_float"] = Damaged(
        path,
        "2 samples were NaN, infinite or beyond ±1e+06 (the first at 0.250 s, channel 2); "
        "replaced by silence",
        np.nan_to_num(samples.T, nan=0.0, posinf=0.0),
    )
    # finite values whose analysis would overflow: 1e300 in a double file, FLT_MAX in a float one
    for name, subtype, value in (
        ("double_1e300", "DOUBLE", 1e300),
        ("float_at_flt_max", "FLOAT", float(np.finfo(np.float32).max)),
    ):
        samples = _noise(8000, 1, 13).astype(np.float32).astype(np.float64)
        samples[4000:4003, 0] = (value, -value, value)
        path = folder / f"{name}.wav"
        sf.write(path, samples, 8000, format="WAV", subtype=subtype)
        clean = samples.T.copy()
        clean[0, 4000:4003] = 0.0
        cases[name] = Damaged(
            path,
            "3 samples were NaN, infinite or beyond ±1e+06 (the first at 0.500 s, channel 1)",
            clean,
        )
    return cases


def make_bad_projects(folder: str | os.PathLike) -> dict[str, tuple[Path, str]]:
    """Write project files (``.spp``) that must be refused into ``folder``; returns as
    :func:`make_bad_files` does.

    Garbage, an empty file, a folder and a named pipe under the project suffix, and two small zip
    bombs: a manifest of 17 MiB of spaces deflated to 17 kB, once with its true size in the headers
    and once with both headers claiming 100 bytes (reading stops at 100 bytes, whose CRC is wrong).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cases: dict[str, tuple[Path, str]] = {
        "garbage_project": (
            _write(folder / "x.spp", b"SpectroPaint? no: garbage bytes\n" * 8),
            "not a project file: not a zip archive",
        ),
        "empty_project": (_write(folder / "empty.spp", b""), "not a project file"),
    }
    (folder / "folder.spp").mkdir()
    cases["folder_project"] = (folder / "folder.spp", "is a folder, not a file")
    os.mkfifo(folder / "pipe.spp")
    cases["named_pipe_project"] = (folder / "pipe.spp", "not a regular file")
    spaces = 17 * 2**20
    cases["zip_bomb_project"] = (
        write_zip_bomb(folder / "bomb.spp", inflated=spaces),
        f"member 'manifest.json' declares {spaces} bytes",
    )
    cases["lying_zip_bomb_project"] = (
        write_zip_bomb(folder / "liar.spp", inflated=spaces, declared=100),
        "damaged archive (Bad CRC-32 for file 'manifest.json')",
    )
    return cases


def write_zip_bomb(path: Path, *, inflated: int, declared: int | None = None) -> Path:
    """A zip whose ``manifest.json`` inflates to ``inflated`` spaces (deflated about 230 to 1, at the
    fastest level), written a piece at a time; both its headers claim ``declared`` bytes when given."""
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as bomb,
        bomb.open("manifest.json", "w") as member,
    ):
        for start in range(0, inflated, 2**24):
            member.write(b" " * min(2**24, inflated - start))
    if declared is not None:
        # the uncompressed size sits at byte 22 of the local header and byte 24 of the central one
        content = bytearray(path.read_bytes())
        struct.pack_into("<I", content, 22, declared)
        struct.pack_into("<I", content, content.rfind(b"PK\x01\x02") + 24, declared)
        path.write_bytes(bytes(content))
    return path


def write_silence_project(path: Path, *, seconds: int, settings, rate: int = 44100) -> Path:
    """A consistent project of ``seconds`` of stereo float silence analysed with ``settings``
    (STFTSettings), deflated at the fastest level: a few MB at most, gigabytes once opened."""
    frames = seconds * rate
    manifest = {
        "format": "spectropaint-project",
        "version": 1,
        "audio": {
            "format": "WAV",
            "subtype": "FLOAT",
            "sample_rate": rate,
            "channels": 2,
            "frames": frames,
            "storage": {"member": "audio.npy", "dtype": "<f4"},
        },
        "transform": {"name": "stft", "settings": settings.to_dict()},
        "blocks": [
            {
                "bins": settings.n_fft // 2 + 1,
                "frames": 1 + frames // settings.hop,
                "hop": settings.hop,
            }
        ],
        "edits": [],
        "strokes": {"member": "strokes.json", "count": 0},
        "view": {},
    }
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (2, frames)}
    )
    strokes = {"format": "spectropaint-strokes", "version": 1, "strokes": []}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        archive.writestr("strokes.json", json.dumps(strokes))
        with archive.open("audio.npy", "w", force_zip64=True) as member:
            member.write(header.getvalue())
            for start in range(0, 8 * frames, 2**24):
                member.write(bytes(min(2**24, 8 * frames - start)))
    return path


def make_unreadable_file(folder: str | os.PathLike) -> tuple[Path, str]:
    """A valid WAV file with permissions 000, and the reason loading it must give."""
    path = Path(folder) / "locked.wav"
    sf.write(path, _noise(800, 1, 6), 8000, format="WAV", subtype="PCM_16")
    path.chmod(0)
    return path, "permission denied"


@contextlib.contextmanager
def shared_folder() -> Iterator[Path]:
    """A new folder that every user may enter (pytest's ``tmp_path`` is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="spectropaint-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        for sub in (folder, *folder.rglob("*")):
            if sub.is_dir() and not sub.is_symlink():
                sub.chmod(0o755)  # so that a test's read-only folders can be removed
        shutil.rmtree(folder)


DROP_PRIVILEGES = f"""
import os
if os.geteuid() == 0:  # root ignores permission bits: continue as nobody
    os.setgroups([])
    os.setgid({NOBODY})
    os.setuid({NOBODY})
"""
"""Code for a ``run_python`` child to run after its imports, before touching the files under test.

The interpreter and the standard library may sit where nobody cannot read them (a pyenv under
``/root``), so the child starts as root, imports what it needs, and only then gives up root.
"""


def run_python(code: str, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter of this environment; ``args`` become ``sys.argv[1:]``.

    ``kwargs`` go to ``subprocess.run``. The child starts in ``/``, a folder every user may read.
    """
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env=env,
        check=False,
        **kwargs,
    )


MOUNTS = {
    "small": 'mount -t tmpfs -o size=1m tmpfs "$1"',
    "read_only": 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"',
}
"""How ``run_with_mount`` mounts its folder: a new 1 MiB tmpfs over it, or itself read-only."""


def run_with_mount(
    kind: str, folder: str | os.PathLike, command: list[str], *, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run ``command`` with ``folder`` mounted as ``MOUNTS[kind]`` says, in a private user and mount
    namespace (``unshare -rm``: no root needed, and nothing outside sees the mount).

    A small tmpfs disappears with the command, so the command must check its own results. Skips the
    calling test only where the machine allows no such namespace or mount.
    """
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux's unshare to mount a file system")
    script = f'{MOUNTS[kind]} || exit 77; shift; exec "$@"'
    child = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", os.fspath(folder), *command],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if child.returncode == 77 or child.stderr.startswith("unshare:"):
        pytest.skip(f"cannot mount in a user namespace here: {child.stderr.strip()}")
    return child
