"""Transform benchmark: load, forward and inverse per engine, and export after a one-second edit.

    python tests/benchmarks/bench_transforms.py [--durations 10 60 600] [--device cpu|cuda]
                                                [--repeat 3] [--json out.json] [--no-stft]

For each duration of stereo 44.1 kHz audio it times: loading a 24-bit WAV; the forward and full
inverse of each engine (torch.stft, nnAudio) and of librosa.stft/istft as the outside reference; and,
for a document with a one-second edit, the resynthesis of that edit (by difference) and the whole
export. The edit's resynthesis should not grow with the file's length; the export's file write does.

The NSGT (log scale, 48 bins per octave, 32.7 Hz up): SpectroPaint's torch transform forward (on
the CPU also its CPU time, all threads, which on a shared machine says what free cores would take) and
inverse, its round trip in dB, ``nsgt``'s own numpy forward (the unsliced ``NSGT`` on the whole
signal; ``NSGT_sliced`` too up to 60 s, it is slow), opening a document, a one-second edit's
resynthesis (after one untimed call; timed after every duration's document is open, one call of
each duration per round, so that all see the machine in the same state; on the CPU also its CPU
time; and the length of the samples it reaches), one brush event (an erase dab stroke of 0.1 s by 2
semitones, also on the STFT; their ratio is printed), and the document's memory: stated by the
memory budget before opening, and measured (the ``VmHWM`` of a process that only opens it, minus its
resident memory before). The one-second edit lies in the middle of the slice hop nearest the file's
middle, so that in every file it is painted on one slice of each parity (slices are 12 s, ``N/2`` =
6 s apart; an edit across the boundary of two slices of one parity is on both); ``paint`` settles
it, which re-analyses the slices over those too, so what is resynthesised reaches 30 s, all of a
10 s file. The resynthesis is therefore also given per second of that reach, which is what stays
flat in the file's length; and the lines after the table say why the reach cannot be under 10 s at
48 bins per octave from 32.7 Hz: one coefficient of the lowest band synthesises samples over its
whole slice above -60 dB (the frame's dual atoms there are that long; 1 kHz's reach 2.4 s at -120
dB), and the bench's edit covers every band. A second edit, one second by one octave (6 semitones
either side of 1 kHz, same place), settled too, reaches less than 18 s: it shows the resynthesis of
an edit whose reach fits in the 10 s file (``nsgt resynth. 1 s x 1 octave``). Playback resynthesises
piece by piece (the document's lock held per piece): ``nsgt playback resynth.`` times the 1 s edit's
reach in the pieces the transform cuts it into (one slice each, on the slices' grid) against the
obvious alternative, fixed pieces of 1.5 s, each of which transforms the whole slices it overlaps.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import soundfile as sf
import torch

from spectropaint.brushes.engine import StrokeSession, paint
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms import fft_ops
from spectropaint.transforms.document import Document
from spectropaint.transforms.files.audio_file import load_audio
from spectropaint.transforms.memory_budget import document_bytes
from spectropaint.transforms.nsgt import NSGT as NSGT_torch
from spectropaint.transforms.nsgt_compat import nsgt_modules
from spectropaint.transforms.nsgt_compat import scale as nsgt_scale
from spectropaint.transforms.nsgt_design import NSGTSettings, scale_bands
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFT, STFTSettings
from spectropaint.transforms.torch_device import choose_device, describe
from spectropaint.transforms.transform import RESYNTHESIS_PIECE, cut_on_grid

RATE = 44100


def timed(function, repeat: int, *, warm: bool = False) -> float:
    """Median wall time in milliseconds (CUDA synchronised); ``warm``: after one untimed call (a
    first call plans its FFTs and takes its memory: 1.8 s for a 1 s edit on the H200, then 2 ms)."""
    if warm:
        function()
    times = []
    for _ in range(repeat):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        function()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def cpu_time(function, repeat: int) -> float:
    """Median CPU time of this process (all its threads) in milliseconds: on a machine shared
    with other work, wall time over the threads used is what the same run takes on free cores."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        function()
        times.append((time.process_time() - start) * 1e3)
    return statistics.median(times)


def test_signal(seconds: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    tone = 0.3 * np.sin(2 * np.pi * 440 * t)
    return np.stack(
        [tone + 0.01 * rng.standard_normal(n), 0.3 * rng.standard_normal(n).clip(-3, 3) / 3]
    )


def bench_duration(seconds: float, device: torch.device, repeat: int, folder: str) -> list[dict]:
    samples = test_signal(seconds)
    path = os.path.join(folder, f"bench_{int(seconds)}s.wav")
    sf.write(path, samples.T, RATE, subtype="PCM_24")
    rows = []

    def row(operation, engine, ms):
        rows.append(
            {"seconds": seconds, "operation": operation, "engine": engine, "ms": round(ms, 2)}
        )

    row("load 24-bit WAV", "soundfile", timed(lambda: load_audio(path), repeat))
    signal = torch.from_numpy(samples).to(device)
    for engine in ("torch", "nnaudio"):
        stft = STFT(STFTSettings(engine=engine), device=device)
        spec = stft.analyse(signal)
        row("forward", engine, timed(lambda stft=stft: stft.analyse(signal), repeat))
        row(
            "inverse (full)",
            engine,
            timed(
                lambda stft=stft, spec=spec: stft.synthesise(spec, samples.shape[-1]),
                repeat,
                warm=True,
            ),
        )
        del spec
    try:
        import librosa
    except ImportError:
        librosa = None
    if librosa is not None:
        spec = librosa.stft(samples, n_fft=2048, hop_length=512)
        row(
            "forward",
            "librosa",
            timed(lambda: librosa.stft(samples, n_fft=2048, hop_length=512), repeat),
        )
        row(
            "inverse (full)",
            "librosa",
            timed(lambda: librosa.istft(spec, hop_length=512, length=samples.shape[-1]), repeat),
        )
        del spec

    document = Document.from_file(path, device=device)
    frame0 = document.blocks[0].n_frames // 2
    frame1 = frame0 + RATE // 512  # one second of frames
    region = Region(0, 1025, frame0, frame1, (0, 1))
    magnitude, phase = document.read(region)
    document.write(region, magnitude * 0.5, phase)
    row(
        "resynthesise 1 s edit",
        "torch",
        timed(lambda: document.edited_span(frame0, frame1), repeat, warm=True),
    )
    out = os.path.join(folder, "export.wav")
    row("export with 1 s edit", "torch", timed(lambda: document.export(out), repeat))
    os.remove(path)
    return rows


NSGT = NSGTSettings(scale="log", bins_per_octave=48, fmin=32.70)


def brush_event_ms(document, repeat: int) -> float:
    """One input event of an erase stroke, 0.1 s by 2 semitones, at 440 Hz mid-file (its dabs,
    region events included), median over ``repeat`` strokes."""
    settings = BrushSettings(radius_seconds=0.05, radius_semitones=1.0)
    middle = document.n_samples / document.sample_rate / 2

    def stroke():
        session = StrokeSession(document, "erase", settings)
        session.add_events([InputEvent(0.0, middle, 440.0)])
        start = time.perf_counter()
        session.add_events([InputEvent(0.016, middle + 0.02, 445.0)])
        sync(document.device)
        elapsed = time.perf_counter() - start
        session.abort()
        return elapsed

    return statistics.median(stroke() for _ in range(repeat)) * 1e3


def edited_slices(document) -> int:
    """Slices (of either parity) holding an edited frame: what a resynthesis of every edit
    transforms, an ``N``-point FFT each, however much of them lies in the file."""
    length = document.transform.slice_length
    found = set()
    for index, block in enumerate(document.blocks):
        frames = np.flatnonzero(block.edited_frames)
        found.update((index % 2, int(r)) for r in np.unique(frames // (length // block.hop)))
    return len(found)


def atom_reach(transform: NSGT_torch, hz: float, floor_db: float) -> float:
    """Seconds over which one coefficient of the band nearest ``hz``, in the middle of a slice,
    synthesises samples above ``floor_db`` of their peak: the least that an edit of that band
    reaches (the slice holds it all, so it is at most a slice)."""
    design = transform.design
    band = int(np.argmin(abs(design.band_hz[1:-1] - hz))) + 1  # not the DC or Nyquist band
    group = next(g for g, info in enumerate(design.groups) if band < info.bands.stop)
    info = design.groups[group]
    coefficients = torch.zeros((1, info.n_bands, 1), dtype=torch.complex64)
    coefficients[0, band - info.bands.start, 0] = 1.0
    middle = info.m + info.m // 2  # the middle of the block's second slice
    n_samples = 4 * design.slice_length
    _, samples = transform.synthesise_frames(coefficients, 2 * group, middle, n_samples)
    envelope = samples[0].abs().double().cpu().numpy()
    above = np.flatnonzero(envelope > envelope.max() * 10 ** (floor_db / 20))
    return (above[-1] - above[0] + 1) / RATE


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def measured_peak_bytes(path: str, device: torch.device) -> int:
    """``VmHWM`` of a process that opens ``path`` as an NSGT document, minus its memory before."""
    code = (
        "import torch, sys\n"
        "from spectropaint.transforms.document import Document\n"
        "from spectropaint.transforms.nsgt_design import NSGTSettings\n"
        "def status(key):\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith(key): return int(line.split()[1]) * 1024\n"
        "before = status('VmRSS')\n"
        f"Document.from_file(sys.argv[1], settings=NSGTSettings(**{NSGT.to_dict()!r}), "
        f"device={str(device)!r})\n"
        "print(status('VmHWM') - before)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, path], capture_output=True, text=True, check=True
    )
    return int(result.stdout.split()[-1])


def bench_nsgt(
    seconds: float, device: torch.device, repeat: int, folder: str, alternated: dict
) -> list[dict]:
    """The NSGT rows of one duration; the resynthesis of its edits is put in ``alternated``
    (keyed by operation and duration, its document kept) for :func:`time_alternated`."""
    samples = test_signal(seconds)
    path = os.path.join(folder, f"nsgt_{int(seconds)}s.wav")
    sf.write(path, samples.T, RATE, subtype="PCM_24")
    rows = []

    def row(operation, engine, value, unit="ms"):
        rows.append(
            {"seconds": seconds, "operation": operation, "engine": engine, unit: round(value, 2)}
        )

    transform = NSGT_torch(NSGT, RATE, device=device)
    signal = torch.from_numpy(samples).to(device)
    blocks = transform.analyse(signal)
    row("nsgt forward", "torch", timed(lambda: transform.analyse(signal), repeat))
    if device.type == "cpu":  # what the work costs, apart from other processes on the cores
        row("nsgt forward CPU time", "torch", cpu_time(lambda: transform.analyse(signal), repeat))
    back = transform.synthesise(blocks, samples.shape[-1])
    row(
        "nsgt inverse (full)",
        "torch",
        timed(lambda blocks=blocks: transform.synthesise(blocks, samples.shape[-1]), repeat),
    )
    error = back.double().cpu().numpy() - samples
    row(
        "nsgt round trip",
        "torch",
        20 * np.log10(np.linalg.norm(samples) / np.linalg.norm(error)),
        "db",
    )
    del blocks, back
    modules = nsgt_modules()
    frequencies, _ = scale_bands(NSGT, RATE)
    scale = nsgt_scale("log", frequencies[0], frequencies[-1], len(frequencies))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = modules.nsgt.NSGT(scale, RATE, samples.shape[-1], real=True)
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        [whole.forward(channel) for channel in samples]
        row("nsgt forward", "nsgt-numpy", (time.perf_counter() - wall_start) * 1e3)
        if device.type == "cpu":
            row("nsgt forward CPU time", "nsgt-numpy", (time.process_time() - cpu_start) * 1e3)
        del whole
        if seconds <= 60:
            design = transform.design
            sliced = modules.nsgt.NSGT_sliced(
                scale, design.slice_length, design.transition, RATE, real=True, min_win=4
            )
            row(
                "nsgt forward (sliced)",
                "nsgt-numpy",
                timed(lambda: [list(sliced.forward((channel,))) for channel in samples], 1),
            )
    document = Document.from_file(path, settings=NSGT, device=device)
    row(
        "nsgt open document",
        "torch",
        timed(lambda: Document.from_file(path, settings=NSGT, device=device), 1),
    )
    hop = transform.design.slice_hop / RATE  # in the middle of a hop: one slice of each parity
    at = (math.floor(document.n_samples / RATE / 2 / hop) + 0.5) * hop
    octave = Document.from_file(path, settings=NSGT, device=device)
    paint(
        octave,
        "gain",
        [InputEvent(0.0, at, 1000.0)],
        BrushSettings(radius_seconds=0.5, radius_semitones=6.0),
    )
    octave_spans = octave.edited_sample_spans()
    alternated[("nsgt resynth. 1 s x 1 octave", seconds)] = lambda d=octave: [
        d.edited_between(a, b) for a, b in octave_spans
    ]
    row("nsgt 1 octave's reach", "samples", sum(b - a for a, b in octave_spans) / RATE, "s")
    settings = BrushSettings(radius_seconds=0.5, radius_semitones=120.0)
    paint(document, "gain", [InputEvent(0.0, at, 1000.0)], settings)
    spans = document.edited_sample_spans()

    def resynthesise(d=document):
        return [d.edited_between(a, b) for a, b in spans]

    alternated[("nsgt resynthesise 1 s edit", seconds)] = resynthesise
    for engine, cut in (
        ("slice grid", document.transform.resynthesis_pieces),
        ("fixed 1.5 s", lambda a, b: cut_on_grid(a, b, RESYNTHESIS_PIECE, origin=a)),
    ):
        pieces = [piece for a, b in spans for piece in cut(a, b)]
        row(
            "nsgt playback resynth.",
            engine,
            timed(lambda d=document, p=pieces: [d.edited_between(a, b) for a, b in p], repeat),
        )
        row("nsgt playback pieces", engine, len(pieces), "n")
    if device.type == "cpu":
        row("nsgt resynthesise CPU time", "torch", cpu_time(resynthesise, repeat))
    reach = sum(b - a for a, b in spans) / RATE
    row("nsgt edit's reach", "samples", reach, "s")
    slices = edited_slices(document)
    row("nsgt edit's slices", "count", slices, "n")
    painted = Document.from_file(
        path, settings=NSGT, device=device
    )  # the edit above stays as it is
    row("nsgt brush event", "torch", brush_event_ms(painted, repeat))
    del painted
    stft = Document.from_file(path, device=device)
    row("stft brush event", "torch", brush_event_ms(stft, repeat))
    del stft
    channels, n = samples.shape
    stated = document_bytes(n, channels, NSGT, sample_rate=RATE).total
    row("nsgt memory stated", "budget", stated / 1e6, "mb")
    row("nsgt memory measured", "VmHWM", measured_peak_bytes(path, device) / 1e6, "mb")
    os.remove(path)
    return rows


def time_alternated(alternated: dict, repeat: int) -> list[dict]:
    """Median times of the calls in ``alternated`` (after one untimed call each), taken in turn,
    one call of each per round: the files of every duration see the machine in the same state.
    Also each resynthesis per second of its reach and per slice it transforms."""
    for function in alternated.values():
        function()
    times: dict = {key: [] for key in alternated}
    for _ in range(repeat):
        for key, function in alternated.items():
            times[key].append(timed(function, 1))
    return [
        {"seconds": seconds, "operation": operation, "engine": "torch", "ms": round(median, 2)}
        for (operation, seconds), median in (
            (key, statistics.median(values)) for key, values in times.items()
        )
    ]


def per_reach_rows(rows: list[dict]) -> list[dict]:
    """The resynthesis of the full-band edit (and its CPU time) per second of its reach and per
    slice, from the rows of each duration."""
    out = []
    by = {(r["operation"], r["seconds"]): r for r in rows}
    costs = {"": "nsgt resynthesise 1 s edit", "CPU ": "nsgt resynthesise CPU time"}
    for seconds in sorted({r["seconds"] for r in rows}):
        reach = by.get(("nsgt edit's reach", seconds))
        slices = by.get(("nsgt edit's slices", seconds))
        for what, operation in costs.items():
            cost = by.get((operation, seconds))
            if reach and slices and cost:
                for name, engine, per in (
                    ("s", "of reach", reach["s"]),
                    ("slice", "torch", slices["n"]),
                ):
                    out.append(
                        {
                            "seconds": seconds,
                            "operation": f"nsgt resynth. {what}per {name}",
                            "engine": engine,
                            "ms": round(cost["ms"] / per, 2),
                        }
                    )
    return out


def machine(device: torch.device) -> dict:
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "device": describe(device),
    }


def value(row: dict) -> tuple[float, str]:
    for unit in ("ms", "db", "mb", "s", "n"):
        if unit in row:
            return row[unit], unit
    raise KeyError(row)


def print_table(rows: list[dict], durations: list[float]) -> None:
    keys = sorted(
        {(r["operation"], r["engine"]) for r in rows},
        key=lambda k: [r["operation"] for r in rows].index(k[0]),
    )
    header = f"{'operation':28} {'engine':11} {'unit':4}" + "".join(
        f"{f'{d:g} s':>12}" for d in durations
    )
    print(header)
    print("-" * len(header))
    for operation, engine in keys:
        cells, unit = [], ""
        for d in durations:
            match = [
                r
                for r in rows
                if (r["operation"], r["engine"], r["seconds"]) == (operation, engine, d)
            ]
            if match:
                number, unit = value(match[0])
                cells.append(f"{number:>12.1f}")
            else:
                cells.append(f"{'-':>12}")
        print(f"{operation:28} {engine:11} {unit:4}" + "".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[10, 60, 600])
    parser.add_argument("--device", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--no-stft", action="store_true", help="the NSGT rows only")
    args = parser.parse_args(argv)
    device = choose_device(args.device)
    rows = []
    alternated: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        for seconds in args.durations:
            if not args.no_stft:
                rows += bench_duration(seconds, device, args.repeat, folder)
            rows += bench_nsgt(seconds, device, args.repeat, folder, alternated)
    rows += time_alternated(alternated, args.repeat)
    alternated.clear()
    rows += per_reach_rows(rows)
    info = machine(device)
    print(
        f"# transforms, stereo {RATE} Hz, STFT n_fft 2048 hop 512, {NSGT.describe()}, "
        f"median of {args.repeat}; {info}"
    )
    durations = args.durations
    print_table(rows, durations)
    by = {(r["operation"], r["engine"], r["seconds"]): value(r)[0] for r in rows}
    longest = max(durations)
    print()
    for engine in ("nnaudio", "librosa"):
        for op in ("forward", "inverse (full)"):
            if (op, engine, longest) in by:
                ratio = by[(op, engine, longest)] / by[(op, "torch", longest)]
                print(f"{op} at {longest:g} s: {engine} / torch = {ratio:.1f}x")
    ratio = by[("nsgt forward", "nsgt-numpy", longest)] / by[("nsgt forward", "torch", longest)]
    print(f"nsgt forward at {longest:g} s: nsgt numpy / SpectroPaint torch = {ratio:.1f}x")
    if ("nsgt forward CPU time", "torch", longest) in by:
        threads = fft_ops.cpu_workers(device)
        ours = by[("nsgt forward CPU time", "torch", longest)]
        theirs = by[("nsgt forward CPU time", "nsgt-numpy", longest)]
        print(
            f"nsgt forward at {longest:g} s, CPU time: nsgt numpy / SpectroPaint torch = "
            f"{theirs / ours:.1f}x; ours {ours:.0f} ms on {threads} threads (on {threads} free "
            f"cores about {ours / threads:.0f} ms of wall time); load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end"
        )
    for key in (
        ("resynthesise 1 s edit", "torch"),
        ("nsgt resynthesise 1 s edit", "torch"),
        ("nsgt resynth. 1 s x 1 octave", "torch"),
        ("nsgt resynthesise CPU time", "torch"),
        ("nsgt resynth. per s", "of reach"),
        ("nsgt resynth. CPU per s", "of reach"),
        ("nsgt resynth. per slice", "torch"),
        ("nsgt resynth. CPU per slice", "torch"),
    ):
        for other in sorted(durations)[:-1]:
            if (*key, longest) in by and (*key, other) in by:
                ratio = by[(*key, longest)] / by[(*key, other)]
                print(f"{' '.join(key)}, {longest:g} s file / {other:g} s file = {ratio:.2f}x")
    for seconds in durations:
        fixed, grid = (
            by[("nsgt playback resynth.", engine, seconds)]
            for engine in ("fixed 1.5 s", "slice grid")
        )
        print(
            f"nsgt playback resynthesis of the 1 s edit at {seconds:g} s, fixed 1.5 s pieces / "
            f"pieces on the slice grid = {fixed / grid:.2f}x"
        )
    for seconds in durations:
        nsgt, stft = (by[(f"{name} brush event", "torch", seconds)] for name in ("nsgt", "stft"))
        print(f"brush event at {seconds:g} s: nsgt / stft = {nsgt / stft:.2f}x")
    transform = NSGT_torch(NSGT, RATE)
    slice_seconds = transform.design.slice_length / RATE
    lowest = transform.design.band_hz[1]
    print(
        f"nsgt slices: {slice_seconds:.2f} s every {slice_seconds / 2:.2f} s (the lowest band's "
        f"window spans 8 bins of a slice). The 1 s edit lies in one slice of each parity: "
        f"{1.5 * slice_seconds:.1f} s to resynthesise; its settle re-analyses the slices over those "
        f"samples, whose frames change too: {2.5 * slice_seconds:.1f} s, all of a shorter file."
    )
    for hz in (lowest, 1000.0):
        reaches = ", ".join(
            f"{atom_reach(transform, hz, db):.2f} s above {db} dB" for db in (-20, -60, -120)
        )
        print(f"one coefficient at {hz:.1f} Hz synthesises samples over {reaches} of its peak")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": info, "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
