"""First-dab benchmark: a brush's first event at each new size, on a device already warmed up.

    python tests/benchmarks/bench_first_dab.py [--device cuda] [--radii 5 7 9 ...] [--json out.json]

A GPU loads the code of each FFT length at its first use (cuFFT: 30 to 170 ms a length on the H200),
and a brush whose region size changes with its radius (each new size in the toolbar, each band
group of an NSGT document) meets new lengths. After :func:`~spectropaint.brushes.warm_up.warm_up`
(what the window runs when a document's first frame shows), this paints, for each radius in turn, a
stroke of 8 events of each brush on a 20 s stereo STFT document and times its first event and the
median of its others (synchronised). The filter brush is measured twice, in the same run: as it
applies its response now (a linear convolution on powers of two, which the warm-up loaded) and as
it did (a circular convolution on its grid of ``2^a 3^b 5^c`` lengths: the alternative), each on
radii the other did not see. The table gives the first events' median and worst, and the later
events' median.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np
import torch
from bench_brushes import timed

import spectropaint.brushes.kernels.fft as fft_module
import spectropaint.brushes.kernels.spectral_filter as filter_module
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.brushes.warm_up import warm_up
from spectropaint.transforms.document import Document
from spectropaint.transforms.torch_device import choose_device, describe

RATE = 44100
BRUSHES = {"filter": {"mode": "lowpass", "cutoff": 0.08}, "blur": {}, "gain": {}}


def stroke_times(document, brush: str, params: dict, radius: int) -> list[float]:
    """Milliseconds of each of the 8 events of a stroke across the middle of the document (the
    radius and the events in cells: frames and bins)."""
    settings = BrushSettings(radius_frames=radius, radius_bins=radius)
    session = StrokeSession(document, brush, settings, params=params)
    middle = document.blocks[0].n_frames // 2
    times = []
    for index in range(8):
        event = InputEvent(index / 60, middle + 4.0 * index, 300.0 + 2.0 * index)
        times.append(timed(lambda event=event: session.add_events([event]), document.device))
    session.abort()
    return times


def circular_filter(x, key, response):
    """The filter as it was on every device: circularly on its grid's lengths."""
    shape = x.shape[-2:]
    grid = (fft_module.fast_length(shape[0]), fft_module.fast_length(shape[1]))
    transfer = response(*grid).to(x.device, torch.float32)
    out = torch.fft.irfft2(torch.fft.rfft2(x, s=grid) * transfer, s=grid)
    return out[..., : shape[0], : shape[1]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument(
        "--radii", type=int, nargs="+", default=[5, 6, 7, 9, 11, 13, 15, 17, 19, 22, 26, 30]
    )
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    device = choose_device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)  # as bench_brushes: a dab's small operations, on a shared machine
    rng = np.random.default_rng(0)
    samples = 0.1 * rng.standard_normal((2, 20 * RATE))
    document = Document.from_samples(samples, RATE, device=device)
    start = time.perf_counter()
    warm_up(device)
    warmed = time.perf_counter() - start
    rows = []
    half = args.radii[0::2], args.radii[1::2]
    runs = [(brush, params, "", args.radii) for brush, params in BRUSHES.items()]
    runs[0] = ("filter", BRUSHES["filter"], "powers of two", half[0])
    runs.insert(1, ("filter", BRUSHES["filter"], "grid (before)", half[1]))
    original = filter_module.fft_filter
    for brush, params, how, radii in runs:
        filter_module.fft_filter = circular_filter if how == "grid (before)" else original
        firsts, later = [], []
        for radius in radii:
            times = stroke_times(document, brush, params, radius)
            firsts.append(times[0])
            later += times[1:]
        rows.append(
            {
                "brush": brush,
                "how": how,
                "radii": len(radii),
                "first_median_ms": round(statistics.median(firsts), 2),
                "first_worst_ms": round(max(firsts), 2),
                "later_median_ms": round(statistics.median(later), 2),
            }
        )
    filter_module.fft_filter = original
    print(
        f"# first event per new radius after warm-up ({warmed:.2f} s), 20 s stereo STFT "
        f"document; {describe(device)}; {platform.processor() or platform.machine()}"
    )
    print(f"{'brush':8} {'how':14} {'radii':>5} {'first med':>10} {'first max':>10} {'later':>8}")
    for row in rows:
        print(
            f"{row['brush']:8} {row['how']:14} {row['radii']:5d} {row['first_median_ms']:10.2f} "
            f"{row['first_worst_ms']:10.2f} {row['later_median_ms']:8.2f}"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"device": describe(device), "warm_up_s": warmed, "rows": rows}, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
