"""Renderer benchmark: frame times, a dirty upload against a full-tile upload, native PNG export.

    python tests/benchmarks/bench_render.py [--minutes 10] [--repeat 5] [--json out.json]
                                            [--adapter cpu|NAME] [--no-png]

The document is ``--minutes`` of stereo 44.1 kHz audio (a chirp over noise) analysed with the default
STFT (2048 / 512: 1025 bins, 5168 frames a minute). It times:

- the first frame (every cell of both channels and all reduced levels uploaded);
- one frame at 1920x1080 and 3840x2160 for three views (the whole file, which samples reduced levels;
  a 10-second window; the whole file on a log axis), as render alone and as render plus read-back of
  every pixel (what an offscreen or Qt "bitmap" canvas does each frame);
- a 256x256 edit (document write, region event, upload of the box and its reduced levels) against the
  same path for a box the size of one whole texture tile;
- a PNG at native resolution (one pixel per frame and bin) of channel 0.

Every GPU time includes a read-back of one pixel, so the work has finished when the clock stops.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import torch
import wgpu

from spectropaint.gpu.adapter import describe_adapter, request_adapter, request_device
from spectropaint.gpu.png_export import export_png
from spectropaint.gpu.renderer import TARGET_FORMAT, SpectrogramRenderer
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.document import Document
from spectropaint.transforms.regions import Region

RATE = 44100
SIZES = ((1920, 1080), (3840, 2160))


def signal(minutes: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    n = int(minutes * 60 * RATE)
    t = np.arange(n) / RATE
    chirp = 0.3 * np.sin(2 * np.pi * (200 * t + 50 * t**2 / max(1.0, minutes)))
    return np.stack([chirp + 0.01 * rng.standard_normal(n), 0.1 * rng.standard_normal(n)])


class Target:
    """A render target with a 1-pixel read-back as the synchronisation point."""

    def __init__(self, device: wgpu.GPUDevice, width: int, height: int):
        self.device, self.width, self.height = device, width, height
        self.texture = device.create_texture(
            size=(width, height, 1),
            format=TARGET_FORMAT,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
        )
        self.view = self.texture.create_view()

    def read(self, width: int = 1, height: int = 1) -> memoryview:
        return self.device.queue.read_texture(
            {"texture": self.texture}, {"bytes_per_row": 4 * width}, (width, height, 1)
        )

    def draw(self, renderer: SpectrogramRenderer, *, read_all: bool = False) -> None:
        renderer.render(self.view, self.width, self.height)
        if read_all:
            self.read(self.width, self.height)
        else:
            self.read()


def timed(function, repeat: int) -> float:
    """Median wall time in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--adapter", help="as SPECTROPAINT_ADAPTER: 'cpu' or part of a name")
    parser.add_argument("--no-png", action="store_true", help="skip the native PNG export")
    args = parser.parse_args(argv)

    adapter = request_adapter(args.adapter)
    device = request_device(adapter)
    started = time.perf_counter()
    document = Document.from_samples(signal(args.minutes), RATE, device="cpu")
    analyse_s = time.perf_counter() - started
    block = document.blocks[0]
    rows: list[dict] = []

    def row(operation: str, size: str, ms: float, **extra) -> None:
        rows.append({"operation": operation, "size": size, "ms": round(ms, 2), **extra})

    renderer = SpectrogramRenderer(device, document)
    grid = renderer.grid
    small = Target(device, 8, 8)
    start = time.perf_counter()
    small.draw(renderer)
    upload_mb = renderer.stats.frame_bytes / 2**20
    row(
        "first frame: upload everything",
        "8x8",
        (time.perf_counter() - start) * 1e3,
        MiB=round(upload_mb, 1),
    )

    ten_seconds = 10 * RATE / block.hop
    views = {
        "whole file": ViewSettings(),
        "10 s window": ViewSettings(
            time_range=(block.n_frames / 2, block.n_frames / 2 + ten_seconds)
        ),
        "whole file, log axis": ViewSettings(freq_scale="log"),
    }
    for width, height in SIZES:
        target = Target(device, width, height)
        for name, view in views.items():
            renderer.view = view
            target.draw(renderer)  # warm-up
            row(
                f"frame: {name}",
                f"{width}x{height}",
                timed(lambda t=target: t.draw(renderer), args.repeat),
            )
            row(
                f"frame + read-back: {name}",
                f"{width}x{height}",
                timed(lambda t=target: t.draw(renderer, read_all=True), args.repeat),
            )
        target.texture.destroy()
    renderer.view = ViewSettings()

    def edit(bins: int, frames: int, frame0: int) -> None:
        region = Region(0, bins, frame0, frame0 + frames, (0,))
        magnitude, phase = document.read(region)
        document.write(region, magnitude * 0.5, phase)
        renderer.mark_dirty(region)
        small.draw(renderer)

    middle = block.n_frames // 3
    edit(256, 256, middle)
    row(
        "edit 256x256: upload + levels",
        "8x8",
        timed(lambda: edit(256, 256, middle), args.repeat),
        bytes=renderer.stats.frame_bytes,
    )
    tile_bins, tile_frames = grid.tile_height, min(grid.tile_width, block.n_frames)
    edit(tile_bins, tile_frames, 0)
    row(
        f"edit {tile_bins}x{tile_frames} (a whole tile): upload + levels",
        "8x8",
        timed(lambda: edit(tile_bins, tile_frames, 0), args.repeat),
        bytes=renderer.stats.frame_bytes,
    )
    row("no edit: frame only (baseline)", "8x8", timed(lambda: small.draw(renderer), args.repeat))

    if not args.no_png:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "native.png")
            start = time.perf_counter()
            report = export_png(document, path, renderer=renderer)
            row(
                "PNG export, native resolution",
                f"{report.width}x{report.height}",
                (time.perf_counter() - start) * 1e3,
                pieces=report.pieces,
                MiB=round(os.path.getsize(path) / 2**20, 1),
            )
    renderer.close()

    machine = {
        "adapter": describe_adapter(adapter),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "wgpu": wgpu.__version__,
    }
    work = {
        "minutes": args.minutes,
        "channels": block.magnitude.shape[0],
        "bins": block.n_bins,
        "frames": block.n_frames,
        "tile": [grid.tile_width, grid.tile_height],
        "tile_layers": grid.n_layers,
        "levels": list(grid.level_widths),
        "analysis_s": round(analyse_s, 2),
        "repeat": args.repeat,
    }
    print(f"# {machine['adapter']}; {machine['cpus']} CPUs; {machine['platform']}")
    print(
        f"# {work['minutes']} min stereo: {work['bins']} bins x {work['frames']} frames; tiles {work['tile']}"
    )
    print(f"| {'operation':<52} | {'size':>11} | {'ms':>9} | extra")
    print(f"| {'-' * 52} | {'-' * 11} | {'-' * 9} | -----")
    for entry in rows:
        extra = ", ".join(
            f"{k}={v}" for k, v in entry.items() if k not in ("operation", "size", "ms")
        )
        print(f"| {entry['operation']:<52} | {entry['size']:>11} | {entry['ms']:>9.2f} | {extra}")
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"machine": machine, "work": work, "rows": rows}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
