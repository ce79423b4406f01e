"""Autosave benchmark: the lock hold, memory and write time of a recovery copy, and whether its
write starves painting.

    python tests/benchmarks/bench_autosave.py [--seconds 600 | --quick] [--repeat 3]
                                              [--device cpu] [--no-prefault] [--json out.json]

A ``--seconds`` (default 600; ``--quick``: 60) stereo 44.1 kHz document of noise, written to a
temporary WAV as FLOAT (a project stores the audio as a float32 ``.npy``) and as PCM_16 (stored as
FLAC) and opened with ``Document.from_file`` (n_fft 2048, hop 512). Each is measured with two sets
of edits: 20 strokes (20 regions 40 frames wide, all bins, both channels, spread evenly) and then
every frame edited. The session's lock is replaced by one that records how long each hold lasts. After opening, the memory the run will need is touched once and freed (``prefault``:
on a virtual machine that backs memory on first touch, that first touch would land in whichever
measurement gets there first).

Per source and edits:

- ``lock ms``: how long ``Session.snapshot`` holds the session's lock (median of ``--repeat``);
- ``snap MiB``: VmRSS growth from one snapshot (median; earlier snapshots are kept alive meanwhile,
  so no measurement reuses another's freed memory), and ``tensors`` the bytes of its copies;
- ``write s``, ``MB``: ``Snapshot.write`` of the last snapshot on a worker thread (as the autosave
  runs it) and the size of the ``.spp``; ``+MiB``: the highest VmRSS during the write over the level
  before it (the snapshots still alive);
- painting: meanwhile the main thread keeps reading and writing back a 128 x 128 region of both
  channels under the lock, as a brush does; ``worst ms`` is the longest time between the ends of
  two such steps during the write (the writer starving it through the GIL shows here), ``idle ms``
  the same over one second with no write, ``p99 ms`` and ``med ms`` the 99th percentile and the
  median step during the write. The loop writes back what it read and its region's edited flags
  are restored after, so it changes nothing;
- ``sync s``: the alternative, ``save_project`` of the document while holding the lock (how long
  painting would be blocked), and its ratio to the snapshot's lock hold.

Prints the machine and the work, a table, then JSON.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import soundfile
import torch
from bench_soak import machine, status_kib

from spectropaint.app.session import Session
from spectropaint.gpu.view import ViewSettings, view_values
from spectropaint.transforms.document import Document
from spectropaint.transforms.files.project_file import save_project
from spectropaint.transforms.regions import Region
from spectropaint.transforms.torch_device import choose_device

RATE = 44100
MIB = 2**20
SUBTYPES = ("FLOAT", "PCM_16")
STROKES = 20
STROKE_FRAMES = 40
PAINT_SIZE = 128
IDLE_S = 1.0
RSS_EVERY_S = 0.05
EDIT_CHUNK = 4096
"""Frames per ``doc.write`` when editing every frame (bounds the temporary copies)."""


class TimedLock:
    """A ``threading.Lock`` that records how long its last hold lasted (``held_s``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since = 0.0
        self.held_s = 0.0

    def __enter__(self) -> TimedLock:
        self._lock.acquire()
        self._since = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.held_s = time.perf_counter() - self._since
        self._lock.release()


def rss_mib() -> float:
    return status_kib("VmRSS") / 1024


def noise_wav(folder: str, seconds: float, subtype: str, seed: int) -> str:
    """A stereo noise WAV of ``subtype`` (at -20 dBFS RMS)."""
    path = os.path.join(folder, f"noise-{subtype}.wav")
    samples = 0.1 * np.random.default_rng(seed).standard_normal((int(seconds * RATE), 2))
    soundfile.write(path, samples.clip(-1, 1), RATE, subtype=subtype)
    return path


def prefault(nbytes: int) -> dict:
    """Touch ``nbytes`` of fresh memory once and free it; the time it took.

    In a virtual machine whose host backs guest memory only when first touched (as on the
    machine this was written on: about 0.45 GB/s), the first use of every page is slow, and
    whichever measurement first reaches new pages pays for it (a 12 MiB snapshot took 300 ms
    instead of 2 ms). Touching the benchmark's memory up front makes the rows comparable.
    """
    start = time.perf_counter()
    np.ones(nbytes, dtype=np.uint8)
    return {"gib": nbytes / 2**30, "s": time.perf_counter() - start}


def scale(document: Document, frame0: int, frame1: int) -> None:
    """Halve the magnitude of frames ``[frame0, frame1)``, all bins, both channels."""
    region = Region(0, document.blocks[0].n_bins, frame0, frame1, (0, 1))
    magnitude, phase = document.read(region)
    document.write(region, magnitude * 0.5, phase)


def edit_strokes(document: Document) -> None:
    n_frames = document.blocks[0].n_frames
    for index in range(STROKES):
        frame0 = index * n_frames // STROKES
        scale(document, frame0, frame0 + STROKE_FRAMES)


def edit_all(document: Document) -> None:
    n_frames = document.blocks[0].n_frames
    for frame0 in range(0, n_frames, EDIT_CHUNK):
        scale(document, frame0, min(frame0 + EDIT_CHUNK, n_frames))


def paint_loop(session, until) -> dict:
    """Read and write back a ``PAINT_SIZE`` square under the lock until ``until()``: the step
    times, and the highest VmRSS seen (sampled every ``RSS_EVERY_S``)."""
    document = session.document
    block = document.blocks[0]
    frame0 = block.n_frames // 3
    region = Region(100, 100 + PAINT_SIZE, frame0, frame0 + PAINT_SIZE, (0, 1))
    flags = block.edited_frames[region.frame0 : region.frame1].copy()
    sync = document.device.type == "cuda"
    steps = []
    peak = rss_mib()
    last = sampled = time.perf_counter()
    while not until():
        with session.lock:
            magnitude, phase = document.read(region)
            document.write(region, magnitude, phase)
            if sync:
                torch.cuda.synchronize(document.device)
        now = time.perf_counter()
        steps.append(now - last)
        last = now
        if now - sampled >= RSS_EVERY_S:
            peak, sampled = max(peak, rss_mib()), now
    block.edited_frames[region.frame0 : region.frame1] = flags
    return {
        "steps": len(steps),
        "worst_ms": 1000 * max(steps, default=0.0),
        "median_ms": 1000 * statistics.median(steps) if steps else 0.0,
        "p99_ms": 1000 * statistics.quantiles(steps, n=100)[98] if len(steps) > 1 else 0.0,
        "peak_rss_mib": max(peak, rss_mib()),
    }


def background_write(session, snapshot, path: str) -> tuple[dict, dict]:
    """``Snapshot.write`` on a thread while :func:`paint_loop` runs: the write and the painting."""
    result: dict = {}
    done = threading.Event()

    def write() -> None:
        start = time.perf_counter()
        try:
            result["report"] = snapshot.write(path)
        except BaseException as exc:  # given to the main thread, which raises it
            result["error"] = exc
        result["write_s"] = time.perf_counter() - start
        done.set()

    thread = threading.Thread(target=write, name="autosave")
    thread.start()
    painting = paint_loop(session, done.is_set)
    thread.join()
    if "error" in result:
        raise result["error"]
    return result, painting


def measure(session, edits: str, repeat: int, folder: str) -> dict:
    """One row: snapshots, the background write with painting, and the synchronous save."""
    document = session.document
    block = document.blocks[0]
    session.generation += 1
    idle_start = time.perf_counter()
    idle = paint_loop(session, lambda: time.perf_counter() - idle_start >= IDLE_S)
    gc.collect()
    snapshots, holds, grown = [], [], []
    for _ in range(repeat):  # each kept alive while the next is measured
        before = rss_mib()
        snapshots.append(session.snapshot(view_values(ViewSettings())))
        holds.append(session.lock.held_s)
        grown.append(rss_mib() - before)
    snapshot = snapshots[-1]
    tensor_bytes = sum(run.magnitude.nbytes + run.phase.nbytes for run in snapshot.edits)
    before_write = rss_mib()
    written, painting = background_write(session, snapshot, os.path.join(folder, "autosave.spp"))
    del snapshots, snapshot
    gc.collect()
    sync_path = os.path.join(folder, "sync.spp")
    with session.lock:
        save_project(
            document,
            sync_path,
            view=view_values(ViewSettings()),
            strokes=session.strokes.to_dicts(),
        )
    sync_s = session.lock.held_s
    lock_s = statistics.median(holds)
    return {
        "source": document.audio.format.subtype,
        "edits": edits,
        "edited_frames": int(block.edited_frames.sum()),
        "lock_ms": 1000 * lock_s,
        "lock_ms_all": [1000 * hold for hold in holds],
        "snapshot_rss_mib": statistics.median(grown),
        "snapshot_rss_mib_all": grown,
        "snapshot_tensor_mib": tensor_bytes / MIB,
        "write_s": written["write_s"],
        "write_extra_rss_mib": painting["peak_rss_mib"] - before_write,
        "file_mb": written["report"].bytes / 1e6,
        "audio_member": written["report"].audio_member,
        "paint_idle_worst_ms": idle["worst_ms"],
        "paint_idle_median_ms": idle["median_ms"],
        "paint_worst_ms": painting["worst_ms"],
        "paint_median_ms": painting["median_ms"],
        "paint_p99_ms": painting["p99_ms"],
        "paint_steps": painting["steps"],
        "sync_lock_s": sync_s,
        "sync_file_mb": os.path.getsize(sync_path) / 1e6,
        "sync_over_snapshot": sync_s / lock_s,
    }


def bench_source(args: argparse.Namespace, subtype: str, device, folder: str) -> tuple[dict, list]:
    """Open a noise document of ``subtype``; rows for 20 strokes, then every frame edited."""
    wav = noise_wav(folder, args.seconds, subtype, args.seed)
    start = time.perf_counter()
    document = Document.from_file(wav, device=device)
    open_s = time.perf_counter() - start
    block = document.blocks[0]
    coefficient_bytes = block.magnitude.nbytes + block.phase.nbytes
    # the snapshots, the write's full-shaped blocks and a full save's slabs, with room to spare
    warm = prefault((args.repeat + 3) * coefficient_bytes) if args.prefault else None
    session = Session(document)
    session.lock = TimedLock()
    edit_strokes(document)
    rows = [measure(session, f"{STROKES} strokes", args.repeat, folder)]
    edit_all(document)
    rows.append(measure(session, "every frame", args.repeat, folder))
    shape = {
        "bins": block.n_bins,
        "frames": block.n_frames,
        "coefficient_mib": coefficient_bytes / MIB,
        "open_s": open_s,
        "prefault": warm,
    }
    os.remove(wav)
    return shape, rows


def print_table(rows: list[dict]) -> None:
    print(
        f"{'source':>6} {'edits':>11} {'frames':>6} {'lock ms':>8} {'snap MiB':>8} {'tensors':>7} "
        f"{'write s':>7} {'+MiB':>6} {'MB':>6} {'idle ms':>7} {'worst ms':>8} {'p99 ms':>6} "
        f"{'med ms':>6} {'sync s':>7} {'sync/lock':>9}"
    )
    for r in rows:
        print(
            f"{r['source']:>6} {r['edits']:>11} {r['edited_frames']:>6} {r['lock_ms']:>8.1f} "
            f"{r['snapshot_rss_mib']:>8.1f} {r['snapshot_tensor_mib']:>7.1f} "
            f"{r['write_s']:>7.2f} {r['write_extra_rss_mib']:>6.0f} {r['file_mb']:>6.1f} "
            f"{r['paint_idle_worst_ms']:>7.2f} {r['paint_worst_ms']:>8.2f} "
            f"{r['paint_p99_ms']:>6.2f} {r['paint_median_ms']:>6.2f} {r['sync_lock_s']:>7.2f} "
            f"{r['sync_over_snapshot']:>8.0f}x"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--quick", action="store_true", help="a 60 s document")
    parser.add_argument("--repeat", type=int, default=3, help="snapshots per row (the median)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-prefault",
        dest="prefault",
        action="store_false",
        help="do not touch the memory the run needs before measuring (see prefault())",
    )
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds = 60.0
    device = choose_device(args.device)
    began = time.perf_counter()
    rows, shapes = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for subtype in SUBTYPES:
            shapes[subtype], source_rows = bench_source(args, subtype, device, folder)
            rows += source_rows
            gc.collect()
    shape = shapes[SUBTYPES[0]]
    report = {
        "machine": machine(device),
        "work": {
            "seconds": args.seconds,
            "channels": 2,
            "sample_rate": RATE,
            "bins": shape["bins"],
            "frames": shape["frames"],
            "coefficient_mib": shape["coefficient_mib"],
            "open_s": {subtype: s["open_s"] for subtype, s in shapes.items()},
            "prefault": {subtype: s["prefault"] for subtype, s in shapes.items()},
            "strokes": {"count": STROKES, "frames": STROKE_FRAMES, "bins": "all", "channels": 2},
            "paint_region": [PAINT_SIZE, PAINT_SIZE],
            "repeat": args.repeat,
        },
        "wall_s": time.perf_counter() - began,
        "rows": rows,
    }
    m = report["machine"]
    print(
        f"# {m['cpu']}, {m['cpu_count']} CPUs, {m['torch_threads']} torch threads, device "
        f"{m['device']}, torch {m['torch']}"
    )
    print(
        f"# {args.seconds:g} s stereo {RATE} Hz document ({shape['bins']} bins x "
        f"{shape['frames']} frames, {shape['coefficient_mib']:.0f} MiB of coefficients); "
        f"{STROKES} strokes = {STROKES} x {STROKE_FRAMES} frames, all bins; "
        f"painting: {PAINT_SIZE}x{PAINT_SIZE} read+write per step; {report['wall_s']:.0f} s in all"
    )
    for subtype, s in shapes.items():
        if s["prefault"]:
            print(
                f"# {subtype}: opened in {s['open_s']:.1f} s; prefaulted "
                f"{s['prefault']['gib']:.1f} GiB in {s['prefault']['s']:.1f} s"
            )
    print_table(rows)
    print(
        "lock ms: Session.snapshot's hold (median); snap MiB: its VmRSS growth; tensors: its copies; "
        "+MiB: VmRSS peak during the write;\nidle/worst ms: longest painting step with no write / "
        "during it; p99/med ms: percentiles during it;\nsync s: save_project under the lock; "
        "sync/lock: its ratio to lock ms"
    )
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
