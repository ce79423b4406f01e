"""Whole-view benchmark: the time per pointer move of a stroke across a long file seen whole.

    python tests/benchmarks/bench_whole_view.py [--device auto|cpu|cuda] [--minutes 10]
                                                [--moves 30] [--brushes gain,erase,blur,warp]
                                                [--json out.json]

On a ``--minutes`` stereo 44.1 kHz document (n_fft 2048, hop 512) seen whole, a screen pixel spans
about 50 frames: one pointer move of a stroke across it (here 2.7 % of the frames, as bench_app's
moves at 60 per second) reaches hundreds of frames, and the default brush (radius 8 frames and 8
bins, spacing a quarter radius) stamps some 700 dabs. Each move is applied as the window's painting
thread applies it (:class:`spectropaint.app.paint_queue.BatchPace`: steps of at most 128 dabs in
batches sized by the stroke's pace, one ``add_events`` call per batch) and timed alone (CUDA
synchronised): the median, p99 and largest per move, and the thread's CPU time per move (wall time
on a shared machine counts other processes' work too). Before the first stroke every brush's kernels are
loaded as the window loads them (:func:`~spectropaint.brushes.warm_up.warm_up`: on a GPU, Triton
compiles them), so that no timed move waits for a compile. The alternative, in the same run: the first
``--compare`` moves again with every dab applied alone (``StrokeSession(fuse=False)``), the
``1by1`` column. Then the stroke's end as the session ends it (on a GPU the newest step's tiles
stay there), an undo and a redo of its ``atoms`` tiles, its move to the host (what the next
stroke's end spends on it), and an undo from the host (the alternative: as every undo was), each
timed.

Target (issue 14 item 7): under 5 ms per move for gain and erase on a 2-core CPU at one torch thread,
so that painting keeps up with a pointer sending 60 moves a second.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch
from bench_brushes import timed

from spectropaint.app.paint_queue import BatchPace, dabs_between
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.brushes.warm_up import warm_up
from spectropaint.transforms.document import Document
from spectropaint.transforms.torch_device import choose_device, describe

RATE = 44100
BRUSHES = {"gain": {"gain_db": -12.0}, "erase": {}, "blur": {"sigma": 0.25}, "warp": {}}
HEADER = (
    f"{'minutes':>7} {'frames':>7} {'brush':>6} {'dabs/move':>9} {'median':>8} {'p99':>8} "
    f"{'max':>8} {'cpu med':>8} {'1by1':>8} {'fused':>6} {'atoms':>6} {'end':>7} {'undo':>7} "
    f"{'redo':>7} {'to host':>7} {'undo(host)':>10}"
)


def moves(n_frames: int, count: int) -> list[InputEvent]:
    """``count`` moves across 80 % of the frames, wandering in pitch (as prof_wide's)."""
    return [
        InputEvent(k / 60, n_frames * (0.1 + 0.8 * k / count), 300 + 100 * np.sin(k / 5))
        for k in range(count + 1)
    ]


def stroke(
    document, brush: str, points, *, fuse: bool, ends: dict | None = None
) -> tuple[list[float], list[float]]:
    """Wall and thread-CPU milliseconds of each move after the first point; the stroke is undone.

    ``ends`` (when given) gets the milliseconds of the stroke's end as the session ends it (its
    undo step kept, the tiles left where they are: on a GPU the newest step stays there), of an
    undo and of a redo, of the step's move to the host (what the next stroke's end spends on it,
    outside the session's lock), of an undo from the host (the alternative), and the count of
    the step's atoms (tiles)."""
    settings = BrushSettings()
    history = History(document)
    session = StrokeSession(
        document, brush, settings, params=BRUSHES[brush], history=history, fuse=fuse
    )
    session.add_events([points[0]])
    pace = BatchPace()
    wall, cpu = [], []
    for last, move in zip(points, points[1:], strict=False):
        if document.device.type == "cuda":
            torch.cuda.synchronize(document.device)
        start, start_cpu = time.perf_counter(), time.thread_time()
        pace.apply(session.add_events, last, [move], settings)
        if document.device.type == "cuda":
            torch.cuda.synchronize(document.device)
        wall.append(1e3 * (time.perf_counter() - start))
        cpu.append(1e3 * (time.thread_time() - start_cpu))
    if ends is None:
        session.end()
        history.undo()
        return wall, cpu
    device = document.device
    ends["end_ms"] = timed(lambda: (session.end(to_host=False), history.steps_to_host()), device)
    ends["undo_ms"] = timed(history.undo, device)
    ends["redo_ms"] = timed(history.redo, device)
    step = history.undo_steps[-1]
    ends["to_host_ms"] = timed(step.values_to_host, device)
    ends["undo_host_ms"] = timed(history.undo, device)
    ends["atoms"] = len(step.atoms)
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1 ...")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--compare", type=int, default=4, help="moves timed dab by dab too")
    parser.add_argument("--brushes", default=",".join(BRUSHES), help="comma-separated")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: torch's)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    if args.compare < 1:  # (the benchmark measures the alternative in the same run)
        parser.error(
            "--compare must be at least 1: the moves applied dab by dab are the comparison"
        )
    if args.threads:
        torch.set_num_threads(args.threads)
    device = choose_device(None if args.device == "auto" else args.device)
    print(
        f"device {describe(device)}, torch {torch.__version__}, {os.cpu_count()} CPUs, "
        f"{torch.get_num_threads()} torch threads; times in ms per pointer move",
        flush=True,
    )
    samples = 0.1 * np.random.default_rng(0).standard_normal((2, int(args.minutes * 60 * RATE)))
    document = Document.from_samples(samples, RATE, device=device)
    n_frames = document.blocks[0].n_frames
    points = moves(n_frames, args.moves)
    dabs = dabs_between(points[0], points[1], BrushSettings())
    # the brushes' kernels loaded (compiled) as the window does before the first stroke
    warmed = time.perf_counter()
    warm_up(device)
    warm = [InputEvent(p.t, p.x, p.y + 300) for p in points[:4]]
    stroke(document, "gain", warm, fuse=True)  # the first stroke's allocations, not timed
    print(f"warm-up {time.perf_counter() - warmed:.1f} s (not timed below)", flush=True)
    print(HEADER, flush=True)
    rows = []
    for brush in args.brushes.split(","):
        ends = {}
        wall, cpu = stroke(document, brush, points, fuse=True, ends=ends)
        alone, _ = stroke(document, brush, points[: args.compare + 1], fuse=False)
        ordered = sorted(wall)
        row = {
            "minutes": args.minutes,
            "frames": n_frames,
            "brush": brush,
            "dabs_per_move": round(dabs),
            "median_ms": round(statistics.median(wall), 2),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2),
            "max_ms": round(ordered[-1], 2),
            "cpu_median_ms": round(statistics.median(cpu), 2),
            "one_by_one_median_ms": round(statistics.median(alone), 2),
        }
        row["fused_speedup"] = round(row["one_by_one_median_ms"] / row["median_ms"], 1)
        row.update({key: round(value, 2) for key, value in ends.items()})
        rows.append(row)
        print(
            f"{args.minutes:>7g} {n_frames:>7} {brush:>6} {row['dabs_per_move']:>9} "
            f"{row['median_ms']:>8.2f} {row['p99_ms']:>8.2f} {row['max_ms']:>8.2f} "
            f"{row['cpu_median_ms']:>8.2f} {row['one_by_one_median_ms']:>8.2f} "
            f"{row['fused_speedup']:>5.1f}x {row['atoms']:>6} {row['end_ms']:>7.1f} "
            f"{row['undo_ms']:>7.1f} {row['redo_ms']:>7.1f} {row['to_host_ms']:>7.1f} "
            f"{row['undo_host_ms']:>10.1f}",
            flush=True,
        )
    result = {
        "machine": {
            "device": describe(device),
            "torch": torch.__version__,
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(),
        },
        "moves": args.moves,
        "rows": rows,
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
