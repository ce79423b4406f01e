"""Hostile inputs and output paths for ``spectropaint render``: every failure an outside audit found
(issue 16), made here by the test itself.

Each case is a command line and what must come of it: exit status 1 and one line on stderr naming
the file and the reason, or, for a damaged file that still holds audio, exit status 0 and a warning
line naming the file; never a traceback, never a line a C library wrote by itself, no file changed
that was not named as an output, nothing left half-written.

All cases run in one child interpreter (as the command would), one ``main(argv)`` after another,
under an address-space limit (``RLIMIT_AS``: 1.5 GiB beyond what the libraries map, the memory
bound; the program must check its budget against it) and with a deadline per case that only a hang reaches. Standard output and error are
captured at the file descriptors, so what libraries write there is seen too. The program runs as
root here, as the audit ran it; other users' files are made with ``os.lchown``.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from bad_audio import (
    NOBODY,
    make_bad_files,
    make_damaged_files,
    wav_bytes,
    write_silence_project,
    write_zip_bomb,
)

from spectropaint.brushes.recorded import MAX_EVENTS_PER_STROKE
from spectropaint.brushes.stroke import MAX_DABS_PER_EVENT
from spectropaint.transforms.document import Document
from spectropaint.transforms.files.atomic_write import STALE_PARTIAL_SECONDS
from spectropaint.transforms.files.project_file import save_project
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings

pytestmark = [
    pytest.mark.gpu,  # one case writes a PNG
    pytest.mark.skipif(os.geteuid() != 0, reason="lchown of another user's link needs root"),
]

ROOM = 3 * 2**29
"""Address space the child may add to what torch, wgpu and its adapter map (about 2 GiB here):
its RLIMIT_AS is set to that plus 1.5 GiB once they are loaded."""
DEADLINE_SECONDS = 60
"""Per case; only a hang reaches it (the audit's hangs never returned)."""

_CHILD = """
import io, json, os, resource, signal, sys, tempfile, time, traceback
room, cases = int(sys.argv[1]), json.loads(sys.argv[2])
os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp()
from spectropaint.app.cli import main
import spectropaint.transforms.files.project_file, spectropaint.brushes.recorded
from spectropaint.gpu.adapter import shared_device
from spectropaint.transforms.host_memory import _status_bytes
shared_device()  # torch, wgpu and the adapter's own mappings come first; the limit is on the work
resource.setrlimit(resource.RLIMIT_AS, (_status_bytes("VmSize:") + room,) * 2)

class Hang(Exception):
    pass

def alarm(signum, frame):
    raise Hang()

signal.signal(signal.SIGALRM, alarm)
results = {}
for name, argv in cases.items():
    files = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
    saved = [os.dup(1), os.dup(2)]
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(files[0].fileno(), 1); os.dup2(files[1].fileno(), 2)
    started = time.monotonic()
    signal.alarm(int(sys.argv[3]))
    try:
        code = main(argv)
    except Hang:
        code = "hang"
    except BaseException:
        traceback.print_exc()
        code = "raised"
    finally:
        signal.alarm(0)
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(saved[0], 1); os.dup2(saved[1], 2)
    out, err = (f.seek(0) or f.read().decode("utf-8", "replace") for f in files)
    results[name] = {"code": code, "stdout": out, "stderr": err,
                     "seconds": time.monotonic() - started}
print(json.dumps(results))
"""


@dataclasses.dataclass
class Case:
    """A command line and what must come of it.

    ``line`` is a piece of the one stderr line (exit 1) or of the warning line (exit 0).
    ``untouched``: files whose kind and bytes must not change. ``absent``: must not exist after.
    ``written``: outputs that must exist after.
    """

    argv: list[str]
    code: int
    line: str
    untouched: tuple[Path, ...] = ()
    absent: tuple[Path, ...] = ()
    written: tuple[Path, ...] = ()


def _state(path: Path) -> tuple:
    """Kind and content of a file, without following a final link."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ("missing",)
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path), info.st_uid)
    if stat.S_ISREG(info.st_mode):
        return ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return ("special", stat.S_IFMT(info.st_mode), info.st_rdev)


def _strokes(path: Path, *strokes: dict) -> Path:
    path.write_text(
        json.dumps({"format": "spectropaint-strokes", "version": 1, "strokes": strokes})
    )
    return path


def _render(source: Path, *options: str | Path) -> list[str]:
    return ["render", str(source), *map(str, options)]


def _project_with_edit(path: Path, value: float) -> Path:
    """A small project whose stored edit holds ``value`` in one magnitude."""
    rate = 8000
    samples = np.rint(0.2 * np.random.default_rng(3).standard_normal((1, rate)) * 2**15) / 2**15
    document = Document.from_samples(samples, rate, settings=STFTSettings(n_fft=256, hop=64))
    region = Region(0, 129, 10, 20, (0,))
    magnitude, phase = document.read(region)
    magnitude[0, 5, 5] = value
    document.write(region, magnitude, phase)
    save_project(document, path)
    return path


def _sparse_wav(path: Path, data_bytes: int) -> Path:
    """A 16-bit stereo WAV declaring ``data_bytes`` of audio, all of it a hole on disk."""
    path.write_bytes(wav_bytes(b"", declared_data_bytes=data_bytes))
    with open(path, "r+b") as file:
        file.truncate(44 + data_bytes)
    return path


def make_cases(folder: Path) -> dict[str, Case]:  # noqa: PLR0915 (one table)
    out = folder / "out"
    out.mkdir()
    rng = np.random.default_rng(16)
    source = folder / "in.wav"
    sf.write(source, 0.2 * rng.standard_normal((8000, 2)), 8000, subtype="PCM_16")
    ten_minutes = folder / "ten_minutes.wav"  # at 8 kHz: 9376 frames, the bins of any rate
    sf.write(ten_minutes, np.zeros(600 * 8000, np.int16), 8000, subtype="PCM_16")
    bad, damaged = make_bad_files(folder / "bad"), make_damaged_files(folder / "damaged")
    cases: dict[str, Case] = {}

    def refused_output(option: str, target: Path, reason: str, *untouched: Path) -> Case:
        return Case(
            _render(source, option, target),
            1,
            f"cannot write '{target}' ({option}): {reason}",
            untouched=(source, target, *untouched),
        )

    # --- existing files replaced through output paths
    cases["wav_onto_dev_null"] = refused_output(
        "--wav", Path("/dev/null"), "not a regular file (character device)"
    )
    cases["png_onto_dev_full"] = refused_output(
        "--png", Path("/dev/full"), "not a regular file (character device)"
    )
    cases["project_onto_dev_null"] = refused_output(
        "--project", Path("/dev/null"), "not a regular file (character device)"
    )
    (out / "full.wav").symlink_to("/dev/full")
    cases["wav_through_a_link_to_dev_full"] = refused_output(
        "--wav", out / "full.wav", "not a regular file (character device) ('/dev/full')"
    )
    elsewhere = folder / "root_only"
    elsewhere.mkdir(mode=0o700)
    precious = elsewhere / "precious.wav"
    precious.write_bytes(b"a file only root may write\n")
    sticky = folder / "shared"
    sticky.mkdir()
    sticky.chmod(0o1777)
    planted = sticky / "take.wav"
    planted.symlink_to(precious)
    os.lchown(planted, NOBODY, NOBODY)
    cases["another_users_link_in_a_sticky_folder"] = refused_output(
        "--wav",
        planted,
        f"'{planted}' is a symbolic link of user {NOBODY} in a folder of user 0; it is not followed",
        precious,
    )
    own_target = elsewhere / "mine.wav"
    (sticky / "mine.wav").symlink_to(own_target)
    cases["own_link_in_a_sticky_folder_is_followed"] = Case(
        _render(source, "--wav", sticky / "mine.wav"), 0, "", written=(own_target,)
    )
    cases["png_over_the_input"] = refused_output(
        "--png", source, f"it is the input '{source}'; nothing is written over it"
    )
    cases["project_over_the_input"] = refused_output(
        "--project", source, f"it is the input '{source}'; nothing is written over it"
    )
    os.link(source, folder / "hard_link.wav")
    cases["wav_over_a_hard_link_to_the_input"] = refused_output(
        "--wav", folder / "hard_link.wav", f"it is the input '{source}'"
    )
    same = out / "same.wav"
    cases["two_outputs_the_same"] = Case(
        _render(source, "--wav", same, "--png", same),
        1,
        f"cannot write '{same}' (--png): it is also the output of --wav",
        untouched=(source,),
        absent=(same,),
    )

    # --- damaged data: opened with what is usable and a warning, or refused
    for name in ("ogg_bad_checksum", "ogg_zeroed_bytes", "double_1e300", "float_at_flt_max"):
        wav = out / f"{name}.wav"
        cases[name] = Case(
            _render(damaged[name].path, "--wav", wav),
            0,
            f"spectropaint: '{damaged[name].path}': {damaged[name].warning}",
            written=(wav,),
        )
    for name, value in (("nan", float("nan")), ("3e38", 3e38)):
        project = _project_with_edit(folder / f"edit_{name}.spp", value)
        cases[f"project_edit_{name}"] = Case(
            _render(project, "--wav", out / "edit.wav"),
            1,
            f"cannot open project '{project}': member 'edits/block0/frames_10_20.npy' holds NaN, "
            "infinite or absurd coefficients",
            absent=(out / "edit.wav",),
        )

    # --- zip bombs
    # more than the child's room: ZipFile.read would inflate up to 2 GiB at once
    bomb = write_zip_bomb(folder / "bomb.spp", inflated=2**31 - 2**20, declared=300)
    cases["manifest_inflating_2_gib_declaring_300_bytes"] = Case(
        _render(bomb, "--wav", out / "bomb.wav"),
        1,
        f"cannot open project '{bomb}': damaged archive (Bad CRC-32 for file 'manifest.json')",
    )
    settings = STFTSettings(n_fft=2048, hop=512)
    silence = write_silence_project(folder / "silence.spp", seconds=1800, settings=settings)
    cases["project_of_silence_needing_gigabytes"] = Case(
        _render(silence, "--wav", out / "silence.wav"),
        1,
        f"cannot open project '{silence}': too large: would need",
        absent=(out / "silence.wav",),
    )

    # --- messages
    for name in ("random_bytes_flac", "random_bytes_after_mpeg_sync"):
        path, reason = bad[name]
        cases[name] = Case(_render(path, "--wav", out / "x.wav"), 1, f"'{path}': {reason}")
    newline = folder / "two\nlines.wav"
    newline.write_bytes(b"not audio at all")
    cases["newline_in_a_file_name"] = Case(
        _render(newline, "--wav", out / "x.wav"), 1, f"'{folder}/two\\nlines.wav': not a recognised"
    )
    long_name = out / ("n" * 246 + ".wav")
    cases["a_250_character_name"] = Case(
        _render(source, "--wav", long_name), 0, "", written=(long_name,)
    )
    gray = out / "gray.png"
    cases["colormap_gray"] = Case(
        _render(source, "--png", gray, "--colormap", "gray"), 0, "", written=(gray,)
    )

    # --- audio headers that raised
    for name in ("rf64_ds64_cut", "aiff_rate_overflows", "aiff_rate_nan"):
        path, reason = bad[name]
        cases[name] = Case(_render(path, "--wav", out / "x.wav"), 1, f"'{path}': {reason}")

    # --- JSON that raised, and reads without end
    for name, text in (
        ("nested_100000_deep", "[" * 100_000 + "]" * 100_000),
        ("integer_of_5001_digits", '{"format": ' + "9" * 5001 + "}"),
        (
            "integer_of_401_digits",
            '{"format": "spectropaint-strokes", "version": 1, "strokes": '
            '[{"brush": "gain", "events": [[0, ' + "9" * 401 + ", 1]]}]}",
        ),
    ):
        strokes = folder / f"{name}.json"
        strokes.write_text(text)
        cases[name] = Case(
            _render(source, "--wav", out / "x.wav", "--strokes", strokes),
            1,
            f"cannot read strokes file '{strokes}'",
            absent=(out / "x.wav",),
        )
    os.mkfifo(folder / "fifo.json")
    for name, path, kind in (
        ("strokes_from_dev_zero", "/dev/zero", "character device"),
        ("strokes_from_dev_urandom", "/dev/urandom", "character device"),
        ("strokes_from_a_fifo_without_writer", folder / "fifo.json", "named pipe"),
    ):
        cases[name] = Case(
            _render(source, "--wav", out / "x.wav", "--strokes", path),
            1,
            f"cannot open strokes file '{path}': not a regular file ({kind})",
            absent=(out / "x.wav",),
        )

    # --- memory checked against the process's limit, not only the machine's free memory
    sparse = _sparse_wav(folder / "sparse.wav", 400 * 10**6)  # 100 M frames: 1.6 GB of samples
    cases["sparse_wav_beyond_the_address_space_limit"] = Case(
        _render(sparse, "--wav", out / "sparse_out.wav"),
        1,
        f"cannot open '{sparse}': too large: would need",
        absent=(out / "sparse_out.wav",),
    )

    # --- strokes that explode
    def stroke(events, brush="gain", **settings):
        return {"brush": brush, "settings": settings, "events": events}

    for name, events in (
        ("events_at_1e308_then_minus_1e308", [[0, 5, 500], [0.1, 1e308, 500], [0.2, -1e308, 500]]),
        ("second_event_at_frame_1e12", [[0, 5, 500], [0.1, 1e12, 500]]),
    ):
        strokes = _strokes(folder / f"{name}.json", stroke(events))
        cases[name] = Case(
            _render(source, "--wav", out / f"{name}.wav", "--strokes", strokes),
            0,
            "",
            written=(out / f"{name}.wav",),
        )
    diagonal = stroke(
        [[0, 0, 0], [0.1, 9375, 1024]], radius_frames=0.5, radius_bins=0.5, spacing=0.02
    )
    strokes = _strokes(folder / "diagonal.json", diagonal)
    cases["radius_half_spacing_002_across_ten_minutes"] = Case(
        _render(ten_minutes, "--wav", out / "diagonal.wav", "--strokes", strokes),
        0,
        f"a pointer move would have needed more than {MAX_DABS_PER_EVENT} dabs",
        written=(out / "diagonal.wav",),
    )
    strokes = _strokes(
        folder / "huge_blur.json",
        stroke([[0, 5000, 500]], "blur", radius_frames=4096, radius_bins=4096),
    )
    cases["blur_of_radius_4096_on_ten_minutes"] = Case(
        _render(ten_minutes, "--wav", out / "blur.wav", "--strokes", strokes),
        1,
        "a blur dab of 4096 x 4096 cells reads 16385 frames x 9217 bins with its margin",
        absent=(out / "blur.wav",),
    )
    events = [[i / 60, 10 + i * 1e-3, 100] for i in range(MAX_EVENTS_PER_STROKE * 10)]
    strokes = _strokes(folder / "million.json", stroke(events))
    cases["a_stroke_of_a_million_events"] = Case(
        _render(source, "--wav", out / "million.wav", "--strokes", strokes),
        1,
        f"stroke 1: {MAX_EVENTS_PER_STROKE * 10} events, more than the {MAX_EVENTS_PER_STROKE}",
        absent=(out / "million.wav",),
    )

    # --- outputs sized by the user
    cases["png_of_65536_by_65536"] = Case(
        _render(source, "--png", out / "huge.png", "--size", "65536x65536"),
        1,
        f"cannot write '{out / 'huge.png'}': PNG size 65536x65536 is 4295 million pixels, more "
        "than the 1074 million allowed",
        absent=(out / "huge.png",),
    )
    return cases


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    cases = make_cases(folder)
    assert list(cases) == CASE_NAMES
    watched = {p for case in cases.values() for p in (*case.untouched, *case.absent)}
    before = {path: _state(path) for path in watched}
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(ROOM),
            json.dumps({name: case.argv for name, case in cases.items()}),
            str(DEADLINE_SECONDS),
        ],
        capture_output=True,
        text=True,
        timeout=30 * 60,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    results = json.loads(child.stdout.strip().splitlines()[-1])
    for name, result in results.items():  # shown with pytest -s: what each case took
        print(f"{name:48} exit {result['code']}  {result['seconds']:6.2f} s")
    leftovers = sorted(p.name for p in (folder / "out").iterdir() if p.name.endswith(".partial"))
    return cases, results, before, leftovers


CASE_NAMES = [
    "wav_onto_dev_null",
    "png_onto_dev_full",
    "project_onto_dev_null",
    "wav_through_a_link_to_dev_full",
    "another_users_link_in_a_sticky_folder",
    "own_link_in_a_sticky_folder_is_followed",
    "png_over_the_input",
    "project_over_the_input",
    "wav_over_a_hard_link_to_the_input",
    "two_outputs_the_same",
    "ogg_bad_checksum",
    "ogg_zeroed_bytes",
    "double_1e300",
    "float_at_flt_max",
    "project_edit_nan",
    "project_edit_3e38",
    "manifest_inflating_2_gib_declaring_300_bytes",
    "project_of_silence_needing_gigabytes",
    "random_bytes_flac",
    "random_bytes_after_mpeg_sync",
    "newline_in_a_file_name",
    "a_250_character_name",
    "colormap_gray",
    "rf64_ds64_cut",
    "aiff_rate_overflows",
    "aiff_rate_nan",
    "nested_100000_deep",
    "integer_of_5001_digits",
    "integer_of_401_digits",
    "strokes_from_dev_zero",
    "strokes_from_dev_urandom",
    "strokes_from_a_fifo_without_writer",
    "sparse_wav_beyond_the_address_space_limit",
    "events_at_1e308_then_minus_1e308",
    "second_event_at_frame_1e12",
    "radius_half_spacing_002_across_ten_minutes",
    "blur_of_radius_4096_on_ten_minutes",
    "a_stroke_of_a_million_events",
    "png_of_65536_by_65536",
]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_hostile_case(outcomes, name):
    cases, results, before, _ = outcomes
    case, result = cases[name], results[name]
    lines = result["stderr"].splitlines()
    assert result["code"] == case.code, (result["code"], result["stderr"][-2000:])
    assert "Traceback" not in result["stderr"]
    if case.code == 1:
        assert len(lines) == 1 and case.line in lines[0], lines
        assert result["stdout"] == ""
    else:
        assert all(line.startswith("spectropaint: ") for line in lines), lines
        assert case.line in result["stderr"], lines
    for path in case.untouched:
        assert _state(path) == before[path], path
    for path in case.absent:
        assert not os.path.lexists(path), path
    for path in case.written:
        assert path.is_file() and path.stat().st_size > 0, path


def test_no_case_left_a_temporary_file(outcomes):
    assert outcomes[3] == []


def test_an_interrupted_export_leaves_nothing(tmp_path):
    """SIGTERM in the middle of a large PNG export: the temporary file is removed, exit 128 + 15."""
    source = tmp_path / "in.wav"
    sf.write(source, np.zeros((8000, 1)), 8000, subtype="PCM_16")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "spectropaint",
            "render",
            str(source),
            "--png",
            str(out / "big.png"),
            "--size",
            "16384x16384",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    while not any(p.name.endswith(".partial") for p in out.iterdir()):
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 128 + signal.SIGTERM, stderr
    assert stderr.strip().splitlines() == [
        "spectropaint: stopped by SIGTERM; unfinished files were removed"
    ]
    assert list(out.iterdir()) == []


def test_start_up_sweeps_stale_temporary_files_but_no_live_or_fresh_one(tmp_path):
    """Killed saves leave ``.NAME.<hex>.partial``; a render sweeps its output folders as it starts,
    even when it then fails: the stale ones of this user, not a fresh one nor one a live save
    holds locked."""
    out = tmp_path / "out"
    out.mkdir()
    old = time.time() - 2 * STALE_PARTIAL_SECONDS
    names = {
        "stale": ".take.wav.0123456789ab.partial",
        "stale_other_name": ".song.spp.00000000000a.partial",
        "fresh": ".take.wav.ba9876543210.partial",
        "live": ".take.wav.aaaaaaaaaaaa.partial",
        "not_ours": ".take.wav.partial",
        "other_user": ".x.png.bbbbbbbbbbbb.partial",
    }
    for key, name in names.items():
        (out / name).write_bytes(b"half a file")
        if key != "fresh":
            os.utime(out / name, (old, old))
    os.chown(out / names["other_user"], NOBODY, NOBODY)
    with open(out / names["live"], "rb") as live:
        fcntl.flock(live, fcntl.LOCK_EX)
        child = subprocess.run(
            [
                sys.executable,
                "-m",
                "spectropaint",
                "render",
                str(tmp_path / "missing.wav"),
                "--wav",
                str(out / "take.wav"),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)},
            check=False,
        )
    assert child.returncode == 1 and "no such file" in child.stderr
    left = {p.name for p in out.iterdir()}
    assert left == {names[k] for k in ("fresh", "live", "not_ours", "other_user")}
