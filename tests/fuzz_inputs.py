"""Fuzzing of what SpectroPaint reads: WAV, FLAC, AIFF, RF64, project and strokes files.

    python tests/fuzz_inputs.py [--cases 5000] [--seed 0] [--kinds wav,flac,aiff,rf64,project,strokes]
                                [--room-mib 1536] [--json out.json]

Valid files of each kind are made first (small: a quarter second at 8 kHz); every case takes one
and damages it one way: random bytes overwritten (anywhere, or in the first 64 bytes where the
headers are), a run of zeros, a truncation, or a header field set to an extreme (0, 1, the largest
and smallest values of its width, NaN and infinity for the floats of AIFF and of JSON, numbers of
hundreds of digits, deep nesting). Then it is opened as the program opens it: a sound through
``Document.from_file`` (read, then analysed), a project through ``load_project``, a strokes file
through ``load_strokes`` and replayed on a small document.

Every outcome must be one of three: a clean open (the document's samples and coefficients finite),
an open with warnings (the same, plus what was wrong), or a clean refusal (a ``SpectroPaintError``
naming the file). Anything else, another exception or a case running past its deadline, is a
failure, printed with its kind and case number so that ``--seed`` and ``--cases`` replay it.
Cases run under an address-space limit (``RLIMIT_AS``: ``--room-mib`` beyond what the libraries
map), so a case that slips past the memory checks fails instead of swapping. What C libraries
write to standard error is checked too: nothing may appear there.

``tests/test_fuzz_inputs.py`` runs a fixed budget of cases in CI; run this script for longer.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import resource
import signal
import struct
import sys
import tempfile
import time
import traceback
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import soundfile as sf

RATE = 8000
KINDS = ("wav", "flac", "aiff", "rf64", "project", "strokes")
SUFFIXES = {
    "wav": ".wav",
    "flac": ".flac",
    "aiff": ".aiff",
    "rf64": ".wav",
    "project": ".spp",
    "strokes": ".json",
}
DEADLINE_SECONDS = 30
EXTREMES = (0, 1, 2, 0x7F, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)
JSON_EXTREMES = (
    0,
    -1,
    2**63,
    -(2**63),
    1e308,
    -1e308,
    5e-324,
    "NaN",
    "Infinity",
    "9" * 400,
    "[" * 200 + "]" * 200,
    '"x"',
    "null",
    "true",
    "[]",
    "{}",
)


class Hang(Exception):
    """A case ran past its deadline."""


def _alarm(signum, frame):
    raise Hang()


def _settings():
    from spectropaint.transforms.stft import STFTSettings

    return STFTSettings(n_fft=256, hop=64)


# --- valid seeds ---------------------------------------------------------------------------------


def make_seeds(folder: Path) -> dict[str, bytes]:
    """The bytes of one valid file of each kind."""
    from spectropaint.transforms.document import Document
    from spectropaint.transforms.files.project_file import save_project
    from spectropaint.transforms.regions import Region

    rng = np.random.default_rng(1)
    samples = 0.3 * rng.standard_normal((RATE // 4, 2))
    seeds = {}
    for kind, file_format, subtype in (
        ("wav", "WAV", "PCM_16"),
        ("flac", "FLAC", "PCM_16"),
        ("aiff", "AIFF", "PCM_24"),
        ("rf64", "RF64", "FLOAT"),
    ):
        buffer = io.BytesIO()
        sf.write(buffer, samples, RATE, format=file_format, subtype=subtype)
        seeds[kind] = buffer.getvalue()
    document = Document.from_samples(
        np.rint(samples.T * 2**15) / 2**15, RATE, settings=_settings(), subtype="PCM_16"
    )
    region = Region(0, 129, 5, 9, (0, 1))
    magnitude, phase = document.read(region)
    document.write(region, magnitude * 0.5, phase)
    strokes = [
        {
            "brush": "gain",
            "settings": {"radius_frames": 3, "radius_bins": 4, "spacing": 0.3},
            "params": {"gain_db": -12},
            "events": [[0.0, 4.0, 10.0, 1.0], [0.1, 20.0, 30.0, 0.5], [0.2, 25.0, 12.0]],
        },
        {"brush": "blur", "settings": {"hardness": 0.2}, "events": [[0.0, 8.0, 60.0]]},
    ]
    save_project(document, folder / "seed.spp", view={"zoom": 1}, strokes=strokes)
    seeds["project"] = (folder / "seed.spp").read_bytes()
    seeds["strokes"] = json.dumps(
        {"format": "spectropaint-strokes", "version": 1, "strokes": strokes}
    ).encode()
    return seeds


# --- mutations -------------------------------------------------------------------------------------


def _field_offsets(kind: str, data: bytes) -> list[tuple[int, int, str]]:
    """(offset, width, byte order) of header fields worth setting to extremes."""
    if kind in ("wav", "rf64"):
        fmt = data.find(b"fmt ") + 8
        fields = [(4, 4, "<"), (fmt, 2, "<"), (fmt + 2, 2, "<"), (fmt + 4, 4, "<")]
        fields += [(fmt + 8, 4, "<"), (fmt + 12, 2, "<"), (fmt + 14, 2, "<")]
        fields += [(data.find(b"data") + 4, 4, "<")]
        if kind == "rf64":
            ds64 = data.find(b"ds64") + 8
            fields += [(ds64, 8, "<"), (ds64 + 8, 8, "<"), (ds64 + 16, 8, "<")]
        return fields
    if kind == "aiff":
        comm = data.find(b"COMM") + 8
        ssnd = data.find(b"SSND") + 4
        return [
            (4, 4, ">"),
            (comm, 2, ">"),
            (comm + 2, 4, ">"),
            (comm + 6, 2, ">"),
            (comm + 8, 2, ">"),
            (comm + 10, 8, ">"),
            (ssnd, 4, ">"),
            (ssnd + 4, 4, ">"),
        ]
    if kind == "flac":  # STREAMINFO: block sizes, frame sizes, rate/channels/bits/total, MD5
        return [
            (8, 2, ">"),
            (10, 2, ">"),
            (12, 3, ">"),
            (15, 3, ">"),
            (18, 4, ">"),
            (22, 4, ">"),
            (26, 8, ">"),
        ]
    return []


def _mutate_bytes(kind: str, data: bytes, rng: random.Random) -> tuple[bytes, str]:
    data = bytearray(data)
    how = rng.choice(("bytes", "header_bytes", "zeros", "truncate", "field", "field", "float80"))
    if how == "truncate":
        keep = rng.randrange(len(data))
        return bytes(data[:keep]), f"truncated to {keep} bytes"
    if how in ("bytes", "header_bytes"):
        top = min(64, len(data)) if how == "header_bytes" else len(data)
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(top)] = rng.randrange(256)
        return bytes(data), how
    if how == "zeros":
        start, length = rng.randrange(len(data)), rng.randint(1, 256)
        data[start : start + length] = bytes(len(data[start : start + length]))
        return bytes(data), f"zeros at {start}"
    if how == "float80" and kind == "aiff":
        rate = data.find(b"COMM") + 8 + 8
        data[rate : rate + 10] = rng.choice(
            (
                b"\x7f\xff" + bytes(8),
                b"\x7f\xff\xc0" + bytes(7),
                b"\x7f\xfe\x80" + bytes(7),
                b"\xff\xff" + bytes(8),
                bytes(10),
                b"\x00\x01\x80" + bytes(7),
            )
        )
        return bytes(data), "AIFF rate extreme"
    fields = _field_offsets(kind, bytes(data))
    if not fields:
        return _mutate_bytes(kind, bytes(data), rng)
    offset, width, order = rng.choice(fields)
    value = rng.choice(EXTREMES) & ((1 << (8 * width)) - 1)
    data[offset : offset + width] = value.to_bytes(width, "little" if order == "<" else "big")
    return bytes(data), f"field at {offset} = {value:#x}"


def _json_paths(value, path=()):
    """Every path to a value inside nested JSON data."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_paths(item, (*path, index))


def _mutate_json(text: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A value somewhere replaced by an extreme (as raw JSON text), or the text itself damaged."""
    if rng.random() < 0.25:
        return _mutate_bytes("json", text, rng)
    data = json.loads(text)
    paths = list(_json_paths(data))[1:]
    target = rng.choice(paths)
    marker = "\x00MARK\x00"
    parent = data
    for key in target[:-1]:
        parent = parent[key]
    parent[target[-1]] = marker
    extreme = rng.choice(JSON_EXTREMES)
    raw = extreme if isinstance(extreme, str) else json.dumps(extreme)
    return json.dumps(data).replace(json.dumps(marker), raw).encode(), f"{target} = {raw[:20]}"


def _mutate_project(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """The zip's bytes damaged, or one member: the manifest's JSON, the strokes, or array bytes."""
    if rng.random() < 0.3:
        return _mutate_bytes("project", data, rng)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    name = rng.choice(sorted(members))
    if name.endswith(".json"):
        members[name], how = _mutate_json(members[name], rng)
    elif name.endswith(".npy") and rng.random() < 0.5:  # a float32 set to an extreme
        content = bytearray(members[name])
        header = content.find(b"\n") + 1
        position = header + 4 * rng.randrange((len(content) - header) // 4)
        value = rng.choice((math.nan, math.inf, -math.inf, 3e38, 1e30, -1.0))
        content[position : position + 4] = struct.pack("<f", value)
        members[name], how = bytes(content), f"{value} at {position}"
    else:
        members[name], how = _mutate_bytes("member", members[name], rng)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for member, content in members.items():
            kind = zipfile.ZIP_STORED if member.startswith("audio") else zipfile.ZIP_DEFLATED
            archive.writestr(member, content, compress_type=kind)
    return out.getvalue(), f"{name}: {how}"


def mutate(kind: str, seed: bytes, rng: random.Random) -> tuple[bytes, str]:
    if kind == "project":
        return _mutate_project(seed, rng)
    if kind == "strokes":
        return _mutate_json(seed, rng)
    return _mutate_bytes(kind, seed, rng)


# --- opening -----------------------------------------------------------------------------------------


def open_as_the_program_does(kind: str, path: Path, canvas) -> list[str]:
    """Open ``path``; the warnings given. Raises what the program would raise."""
    from spectropaint.brushes.recorded import apply_strokes, load_strokes
    from spectropaint.transforms.document import Document
    from spectropaint.transforms.files.project_file import load_project

    if kind == "strokes":
        apply_strokes(canvas, load_strokes(path))
        document = canvas
    elif kind == "project":
        document = load_project(path, device="cpu").document
    else:
        document = Document.from_file(path, settings=_settings(), device="cpu")
    assert np.isfinite(document.audio.samples).all(), "samples not finite"
    for block in document.blocks:
        assert block.magnitude.isfinite().all() and block.phase.isfinite().all(), "coefficients"
    return list(document.notices.emitted)


def run(cases: int, seed: int, kinds: tuple[str, ...], room: int) -> dict:
    """Run ``cases`` mutations (spread over ``kinds``) in this process; the summary."""
    from spectropaint.transforms.document import Document
    from spectropaint.transforms.errors import SpectroPaintError
    from spectropaint.transforms.host_memory import _status_bytes

    folder = Path(tempfile.mkdtemp(prefix="spectropaint-fuzz-"))
    seeds = make_seeds(folder)
    canvas_samples = 0.1 * np.random.default_rng(2).standard_normal((2, RATE // 2))
    resource.setrlimit(resource.RLIMIT_AS, (_status_bytes("VmSize:") + room,) * 2)
    signal.signal(signal.SIGALRM, _alarm)
    outcomes, failures = Counter(), []
    started = time.monotonic()
    for number in range(cases):
        kind = kinds[number % len(kinds)]
        rng = random.Random(f"{seed}-{number}")
        data, how = mutate(kind, seeds[kind], rng)
        path = folder / f"case{number}{SUFFIXES[kind]}"
        path.write_bytes(data)
        canvas = Document.from_samples(canvas_samples, RATE, settings=_settings(), device="cpu")
        signal.alarm(DEADLINE_SECONDS)
        try:
            warnings = open_as_the_program_does(kind, path, canvas)
            outcomes[f"{kind}: opened with warnings" if warnings else f"{kind}: opened"] += 1
        except SpectroPaintError as err:
            if os.fspath(path) not in str(err):
                failures.append((number, kind, how, f"refusal does not name the file: {err}"))
            outcomes[f"{kind}: refused"] += 1
        except Hang:
            failures.append((number, kind, how, f"hang: over {DEADLINE_SECONDS} s"))
        except BaseException:
            failures.append((number, kind, how, traceback.format_exc(limit=6)))
        finally:
            signal.alarm(0)
            path.unlink()
    return {
        "cases": cases,
        "seed": seed,
        "seconds": time.monotonic() - started,
        "outcomes": dict(sorted(outcomes.items())),
        "failures": failures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--room-mib", type=int, default=1536)
    parser.add_argument("--json", help="write the summary here (the CI test reads it)")
    args = parser.parse_args()
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp())
    kinds = tuple(args.kinds.split(","))
    summary = run(args.cases, args.seed, kinds, args.room_mib * 2**20)
    for outcome, count in summary["outcomes"].items():
        print(f"{outcome:32} {count:6}")
    print(
        f"{summary['cases']} cases in {summary['seconds']:.1f} s, {len(summary['failures'])} failures"
    )
    for number, kind, how, what in summary["failures"]:
        print(f"\n--- case {number} ({kind}, {how}):\n{what}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(summary, out)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    sys.exit(1 if summary["failures"] else 0)


if __name__ == "__main__":
    main()
