"""GPU memory of an open document: what the window holds on the GPU, against the 2 GB budget.

    python tests/benchmarks/bench_vram.py [--minutes 10 --minutes 0.1667] [--device cuda]
                                          [--json out.json]

For each length (stereo 44.1 kHz noise with a chirp, default STFT 2048 / 512) it opens the document
on the torch device, makes the renderer's textures (the shown channel's magnitude with its reduced
levels, and the phase texture as the phase view makes it), paints 20 strokes of every brush at
radius 32 with the undo history, undoes and redoes them, resynthesises every edit as playback and
export do, and reports:

- torch's peak allocation over all of it (``torch.cuda.max_memory_allocated``) and what is held
  after it (the document, the samples, caches), and torch's reserve (its caching allocator);
- the textures' bytes (computed from the renderer's tile grids: Vulkan memory that torch does not
  see), and the total against the budget.

On a machine without CUDA it reports the same figures for the CPU from the tensors' sizes (torch
keeps no peak there), so the table is made anyway. The two lengths side by side show what grows with
the file (the document and textures) and what does not (a stroke's working memory).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np
import torch

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.gpu.texture_memory import view_texture_bytes
from spectropaint.transforms.document import Document, edited_runs
from spectropaint.transforms.torch_device import choose_device, describe

RATE = 44100
MIB = 2**20
BUDGET = 2 * 2**30
STROKES_PER_BRUSH = 20


def signal(minutes: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(minutes * 60 * RATE)
    t = np.arange(n) / RATE
    chirp = 0.3 * np.sin(2 * np.pi * (200 * t + 50 * t**2 / max(1.0, minutes)))
    return np.stack([chirp + 0.01 * rng.standard_normal(n), 0.1 * rng.standard_normal(n)])


def tensor_bytes(document: Document) -> int:
    samples = getattr(document, "_samples", None)
    held = sum(b.magnitude.nbytes + b.phase.nbytes for b in document.blocks)
    if samples is not None and samples.device == document.device:
        held += samples.nbytes
    return held


def paint_all(document: Document, history: History) -> int:
    """20 strokes of every brush across the file; the number of strokes."""
    block = document.blocks[0]
    rng = np.random.default_rng(1)
    count = 0
    for brush in BRUSHES:
        params = {"offset_frames": -40} if brush == "clone" else {}
        for _ in range(STROKES_PER_BRUSH):
            x0 = float(rng.uniform(50, block.n_frames - 250))
            y0 = float(rng.uniform(40, block.n_bins - 40))
            stroke = StrokeSession(
                document,
                brush,
                BrushSettings(radius_frames=32, radius_bins=32),
                params=params,
                history=history,
            )
            for step in range(12):
                stroke.add_events((InputEvent(step / 60, x0 + 12 * step, y0 + 2 * step),))
            stroke.end()
            count += 1
    return count


def measure(minutes: float, device: torch.device) -> dict:
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    document = Document.from_samples(signal(minutes), RATE, device=device)
    open_s = time.perf_counter() - start
    block = document.blocks[0]
    textures = view_texture_bytes(block.n_bins, block.n_frames, phase_view=True)
    after_open = torch.cuda.memory_allocated(device) if cuda else tensor_bytes(document)
    history = History(document)
    strokes = paint_all(document, history)
    for _ in range(strokes // 2):
        history.undo()
    for _ in range(strokes // 2):
        history.redo()
    for frame0, frame1 in edited_runs(block.edited_frames):
        document.edited_span(frame0, frame1)
    held = torch.cuda.memory_allocated(device) if cuda else tensor_bytes(document)
    peak = torch.cuda.max_memory_allocated(device) if cuda else max(held, after_open)
    reserved = torch.cuda.max_memory_reserved(device) if cuda else peak
    total = peak + textures
    row = {
        "minutes": minutes,
        "bins": block.n_bins,
        "frames": block.n_frames,
        "open_s": open_s,
        "strokes": strokes,
        "after_open_mib": after_open / MIB,
        "held_mib": held / MIB,
        "peak_mib": peak / MIB,
        "reserved_peak_mib": reserved / MIB,
        "textures_mib": textures / MIB,
        "history_host_mib": history.bytes_used / MIB,
        "total_mib": total / MIB,
        "within_budget": total <= BUDGET,
    }
    del document, history
    if cuda:
        torch.cuda.empty_cache()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, action="append")
    parser.add_argument("--device", default=None)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    device = choose_device(args.device)
    rows = [measure(m, device) for m in (args.minutes or [10.0, 10 / 60])]
    print(
        f"# {describe(device)}; {platform.platform()}; torch {torch.__version__}; "
        f"budget {BUDGET / MIB:.0f} MiB (torch peak + textures)"
    )
    columns = (  # key, heading, format
        ("minutes", "minutes", "{:>9.2f}"),
        ("frames", "frames", "{:>9d}"),
        ("after_open_mib", "open MiB", "{:>9.1f}"),
        ("peak_mib", "peak MiB", "{:>9.1f}"),
        ("reserved_peak_mib", "reserved", "{:>9.1f}"),
        ("textures_mib", "textures", "{:>9.1f}"),
        ("total_mib", "total", "{:>9.1f}"),
        ("history_host_mib", "undo host", "{:>9.1f}"),
        ("within_budget", "<= 2 GB", "{!s:>9}"),
    )
    print(" ".join(f"{heading:>9}" for _, heading, _ in columns))
    for row in rows:
        print(" ".join(fmt.format(row[key]) for key, _, fmt in columns))
    if len(rows) >= 2:
        long, short = rows[0], rows[-1]
        print(
            f"peak of {long['minutes']:g} min / {short['minutes']:g} min: "
            f"{long['peak_mib'] / short['peak_mib']:.1f}x"
        )
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": describe(device), "rows": rows}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
