"""Soak benchmark (issue 6): 10,000 strokes of mixed brushes, memory against the history's budget.

    python tests/benchmarks/bench_soak.py [--device auto|cpu|cuda] [--strokes 10000] [--every 500]
                                          [--seconds 60] [--budgets-mib 512 32] [--threads 1]
                                          [--cufft-plans N] [--json out.json]

Each budget runs in a fresh process (so one run's heap does not flatter or spoil the next): a
``--seconds`` stereo noise document (44.1 kHz, n_fft 2048, hop 512) takes ``--strokes`` random
strokes of every brush (``random_stroke`` of ``tests/test_long_session.py``: 5 to 10 events each,
radii 2 to 48 cells, random channel, strength and parameters), fed one event at a time as the canvas
does. After one stroke in twenty comes a run of one to three undos, and after half of those as many
redos, so redo steps are made and cleared too.

Every ``--every`` strokes it records the process's resident memory (VmRSS, and the peak VmHWM, from
``/proc/self/status``), the bytes of every live CPU torch tensor (found by the garbage collector:
the document plus the history, no allocator slack), the history's ``bytes_used`` and steps, and the
mean and slowest time per stroke since the last record; on CUDA also ``memory_allocated``,
``max_memory_allocated`` and the number of cuFFT plans torch has cached. The summary compares RSS
growth from stroke 1,000 to the end with the history's growth over the same strokes and with the
budget: a leak shows as growth the history does not explain.

On CUDA, torch caches a cuFFT plan per transform shape, up to 4096 plans per GPU by default, and
blur and filter dabs of random sizes make a new shape almost every stroke: on an H200 (torch 2.11)
that cache held about 420 MiB of host memory once full, growing RSS for the first 5,000 strokes.
A document now caps it at 64 plans (``CUFFT_PLANS``), which did not change the time per stroke;
``--cufft-plans 4096`` brings torch's default back for comparison.

The size of a recorded stroke (a :class:`RecordedStroke` with its events, as a window keeping a list
of them holds) is measured once with tracemalloc, with its JSON size in a strokes file.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import platform
import random
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for test_long_session

import numpy as np  # noqa: E402
import torch  # noqa: E402
from test_long_session import live_tensors, random_stroke, start, storage_bytes  # noqa: E402

from spectropaint.brushes.history import DEFAULT_BYTE_BUDGET, History  # noqa: E402
from spectropaint.brushes.recorded import save_strokes  # noqa: E402
from spectropaint.transforms.document import Document  # noqa: E402
from spectropaint.transforms.stft import STFTSettings  # noqa: E402
from spectropaint.transforms.torch_device import choose_device, describe  # noqa: E402

RATE = 44100
MIB = 2**20
EVENTS = (5, 10)
RADII = (2.0, 48.0)


def status_kib(field: str) -> int:
    """A ``kB`` field of ``/proc/self/status`` (VmRSS, VmHWM)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(device: torch.device) -> dict:
    return {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "device": describe(device),
    }


def record(strokes: int, history: History, device: torch.device, times: list[float]) -> dict:
    """One row of the table: memory now and the time per stroke since the last row."""
    row = {
        "strokes": strokes,
        "rss_mib": status_kib("VmRSS") / 1024,
        "peak_rss_mib": status_kib("VmHWM") / 1024,
        "cpu_tensor_mib": storage_bytes(live_tensors()) / MIB,
        "history_mib": history.bytes_used / MIB,
        "undo_steps": len(history.undo_steps),
        "redo_steps": len(history.redo_steps),
        "ms_per_stroke": 1000 * sum(times) / len(times),
        "slowest_ms": 1000 * max(times),
    }
    if device.type == "cuda":
        row["cuda_allocated_mib"] = torch.cuda.memory_allocated(device) / MIB
        row["cuda_max_allocated_mib"] = torch.cuda.max_memory_allocated(device) / MIB
        row["cufft_plans"] = torch.backends.cuda.cufft_plan_cache[device.index or 0].size
    return row


def soak(args: argparse.Namespace, budget: int) -> dict:
    """Run one session in this process; its rows."""
    device = choose_device(args.device)
    rng = random.Random(args.seed)
    samples = 0.1 * np.random.default_rng(args.seed).standard_normal((2, int(args.seconds * RATE)))
    document = Document.from_samples(samples, RATE, settings=STFTSettings(), device=device)
    if device.type == "cuda" and args.cufft_plans is not None:  # after the document set its own
        torch.backends.cuda.cufft_plan_cache[device.index or 0].max_size = args.cufft_plans
    block = document.blocks[0]
    history = History(document, byte_budget=budget)
    rows = [record(0, history, device, [0.0])]
    times: list[float] = []
    undos = redos = 0
    began = time.perf_counter()
    for count in range(1, args.strokes + 1):
        stroke = random_stroke(rng, block.n_bins, block.n_frames, events=EVENTS, radii=RADII)
        tic = time.perf_counter()
        start(document, stroke, history).end()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - tic)
        if rng.random() < 0.05:
            back = rng.randint(1, 3)
            undos += sum(history.undo() is not None for _ in range(back))
            if rng.random() < 0.5:
                redos += sum(history.redo() is not None for _ in range(back))
        if count % args.every == 0 or count == args.strokes:
            rows.append(record(count, history, device, times))
            times = []
    return {
        "budget_mib": budget / MIB,
        "cufft_plan_cache_max": args.cufft_plans,
        "document": {
            "seconds": args.seconds,
            "channels": 2,
            "bins": block.n_bins,
            "frames": block.n_frames,
            "coefficient_mib": 2 * block.magnitude.nbytes / MIB,
        },
        "undos": undos,
        "redos": redos,
        "wall_s": time.perf_counter() - began,
        "rows": rows,
    }


def traced_bytes(make) -> tuple[object, int]:
    """``make()`` and the bytes of Python memory it left allocated (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    made = make()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return made, held


def recorded_size(args: argparse.Namespace, count: int = 2000) -> dict:
    """Bytes a list of ``count`` recorded strokes holds in memory and takes in a strokes file."""
    rng = random.Random(args.seed)
    strokes, held = traced_bytes(
        lambda: [random_stroke(rng, 1025, 5000, events=EVENTS, radii=RADII) for _ in range(count)]
    )
    events = [event for stroke in strokes for event in stroke.events]
    _, event_bytes = traced_bytes(lambda: [dataclasses.replace(event) for event in events])
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_soak_{os.getpid()}.json"
    save_strokes(path, strokes)
    file_bytes = path.stat().st_size
    path.unlink()
    return {
        "strokes": count,
        "events_per_stroke": len(events) / count,
        "bytes_per_stroke": held / count,
        "bytes_per_event": event_bytes / len(events),
        "file_bytes_per_stroke": file_bytes / count,
    }


def print_run(run: dict) -> None:
    rows = run["rows"]
    cuda = "cuda_allocated_mib" in rows[0]
    head = (
        f"{'strokes':>7} {'RSS MiB':>8} {'peak':>8} {'tensors':>8} {'history':>8} {'undo':>5} "
        f"{'redo':>4} {'ms/stroke':>9} {'slowest':>8}"
        + (f" {'cuda':>8} {'cuda max':>8} {'cuFFT plans':>11}" if cuda else "")
    )
    print(head)
    for row in rows:
        line = (
            f"{row['strokes']:>7} {row['rss_mib']:>8.1f} {row['peak_rss_mib']:>8.1f} "
            f"{row['cpu_tensor_mib']:>8.1f} {row['history_mib']:>8.1f} {row['undo_steps']:>5} "
            f"{row['redo_steps']:>4} {row['ms_per_stroke']:>9.1f} {row['slowest_ms']:>8.1f}"
        )
        if cuda:
            line += (
                f" {row['cuda_allocated_mib']:>8.1f} {row['cuda_max_allocated_mib']:>8.1f}"
                f" {row['cufft_plans']:>11}"
            )
        print(line)


def summary(run: dict, *, from_strokes: int = 1000) -> dict:
    """RSS and history growth from ``from_strokes`` (or the first row after it) to the end, and RSS
    growth from the first row where the history is 95 % full (the steady state) to the end."""
    rows = run["rows"]
    first = next((row for row in rows if row["strokes"] >= from_strokes), rows[0])
    full = next((row for row in rows if row["history_mib"] >= 0.95 * run["budget_mib"]), None)
    last = rows[-1]
    rss = last["rss_mib"] - first["rss_mib"]
    history = last["history_mib"] - first["history_mib"]
    return {
        "from_strokes": first["strokes"],
        "to_strokes": last["strokes"],
        "rss_growth_mib": rss,
        "history_growth_mib": history,
        "unexplained_growth_mib": rss - history,
        "budget_mib": run["budget_mib"],
        "full_from_strokes": full and full["strokes"],
        "rss_growth_when_full_mib": full and last["rss_mib"] - full["rss_mib"],
        "peak_rss_mib": last["peak_rss_mib"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--strokes", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--budgets-mib", type=float, nargs="+", default=[DEFAULT_BYTE_BUDGET / MIB, 32.0]
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads; 0: torch's choice")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument(
        "--cufft-plans", type=int, help="cap torch's cuFFT plan cache (CUDA; default 4096 plans)"
    )
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.child is not None:  # one session; its result as JSON on stdout
        print(json.dumps(soak(args, int(args.child * MIB))))
        return 0
    device = choose_device(args.device)
    runs = []
    for budget in args.budgets_mib:
        child = [sys.executable, __file__, *(argv or sys.argv[1:]), "--child", str(budget)]
        done = subprocess.run(child, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    report = {
        "machine": machine(device),
        "work": {
            "strokes": args.strokes,
            "events_per_stroke": list(EVENTS),
            "radii_cells": list(RADII),
            "document": runs[0]["document"],
        },
        "recorded_stroke": recorded_size(args),
        "runs": runs,
        "summaries": [summary(run) for run in runs],
    }
    m = report["machine"]
    doc = runs[0]["document"]
    print(
        f"# {m['cpu']}, {m['cpu_count']} CPUs, {m['torch_threads']} torch threads, device "
        f"{m['device']}, torch {m['torch']}"
    )
    print(
        f"# {args.strokes} strokes of {EVENTS[0]}-{EVENTS[1]} events on a {doc['seconds']:g} s "
        f"stereo document ({doc['bins']} x {doc['frames']}, {doc['coefficient_mib']:.0f} MiB "
        "of coefficients)"
    )
    for run, brief in zip(runs, report["summaries"], strict=True):
        print(
            f"\n## budget {run['budget_mib']:g} MiB: {run['wall_s']:.0f} s, "
            f"{run['undos']} undos, {run['redos']} redos"
        )
        print_run(run)
        print(
            f"RSS growth strokes {brief['from_strokes']}..{brief['to_strokes']}: "
            f"{brief['rss_growth_mib']:.1f} MiB; history growth {brief['history_growth_mib']:.1f} "
            f"MiB; unexplained {brief['unexplained_growth_mib']:.1f} MiB "
            f"(budget {brief['budget_mib']:g} MiB)"
        )
        if brief["full_from_strokes"] is not None:
            print(
                f"history full from stroke {brief['full_from_strokes']}: RSS grew "
                f"{brief['rss_growth_when_full_mib']:.1f} MiB from there to the end"
            )
    size = report["recorded_stroke"]
    print(
        f"\nrecorded stroke: {size['bytes_per_stroke']:.0f} B in memory "
        f"({size['events_per_stroke']:.1f} events, {size['bytes_per_event']:.0f} B per event), "
        f"{size['file_bytes_per_stroke']:.0f} B in a strokes file"
    )
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
