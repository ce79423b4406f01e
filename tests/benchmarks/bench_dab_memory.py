"""Dab memory benchmark: the peak host memory of one large dab of each brush, per region cell.

    python tests/benchmarks/bench_dab_memory.py [--json out.json]

Each brush runs in a fresh process (so the peak, ``ru_maxrss``, is its own) on a mono two-minute
8 kHz document analysed with n_fft 2048 and hop 128 (7501 frames x 1025 bins), one dab of a large
radius in the middle. The region is the dab's box (at most the grid) plus the kernel's margin on
each side, as ``spectropaint.brushes.dab.largest_region`` computes it; the table gives the peak
growth in bytes per region cell, which ``WORK_BYTES_PER_CELL`` must exceed for the refusal of
too-large strokes to come before a ``MemoryError``, and the time of the dab.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

CASES = [
    ("blur", 512, 128, {"sigma": 2.0}),
    ("blur", 1024, 512, {"sigma": 1.0}),
    ("gain", 2048, 512, {}),
    ("filter", 1024, 512, {}),
    ("warp", 1024, 512, {}),
    ("clone", 1024, 512, {"offset_frames": -2000, "offset_bins": 0}),
    ("pen", 1024, 512, {}),
]

ONE_DAB = """
import json, resource, sys, time
import numpy as np, torch
from spectropaint.brushes.dab import largest_region
from spectropaint.brushes.engine import paint
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

brush, radius_frames, radius_bins, params = json.loads(sys.argv[1])
torch.set_num_threads(1)
rate = 8000
samples = 0.1 * np.random.default_rng(0).standard_normal((1, rate * 120))
document = Document.from_samples(samples, rate, settings=STFTSettings(n_fft=2048, hop=128), device="cpu")
block = document.blocks[0]
settings = BrushSettings(radius_frames=radius_frames, radius_bins=radius_bins)
margin = brush_kind(brush).params(params).margin(settings)
bins, frames = largest_region(settings, margin, block.n_bins, block.n_frames)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
started = time.perf_counter()
paint(document, brush, [InputEvent(0.0, block.n_frames / 2, block.n_bins / 2)], settings, params=params)
seconds = time.perf_counter() - started
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
print(json.dumps({"brush": brush, "radius": [radius_frames, radius_bins], "region": [frames, bins],
                  "peak_bytes": grown, "bytes_per_cell": grown / (frames * bins), "seconds": seconds}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    rows = []
    for case in CASES:
        child = subprocess.run(
            [sys.executable, "-c", ONE_DAB, json.dumps(case)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(
        f"{'brush':8} {'radius':>11} {'region (frames x bins)':>24} {'peak MB':>8} {'B/cell':>7} {'s':>6}"
    )
    for row in rows:
        radius = "x".join(f"{r:g}" for r in row["radius"])
        region = "x".join(str(n) for n in row["region"])
        print(
            f"{row['brush']:8} {radius:>11} {region:>24} {row['peak_bytes'] / 1e6:8.1f} "
            f"{row['bytes_per_cell']:7.1f} {row['seconds']:6.2f}"
        )
    print(f"largest: {max(row['bytes_per_cell'] for row in rows):.1f} bytes per cell")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
