"""Renderer benchmark: first frame, frame times, box uploads against full uploads, native PNG export.

    python tests/benchmarks/bench_render.py [--minutes 10] [--repeat 5] [--json out.json]
                                            [--adapter cpu|NAME] [--device cpu|cuda] [--no-png]

The document is ``--minutes`` of stereo 44.1 kHz audio (a chirp over noise) analysed with the default
STFT (2048 / 512: 1025 bins, 5168 frames a minute) on ``--device`` (where its tensors live). It times:

- the first frame of the whole file at 1920x1080: only the level it samples uploaded (the rest
  streamed afterwards: the time to stream all of it is a row too), against a new renderer that
  uploads every cell of every level before its first frame (the previous behaviour);
- one frame at 1920x1080 and 3840x2160 for three views (the whole file, which samples reduced levels;
  a 10-second window; the whole file on a log axis), drawn by a render pass and by a compute pass
  (wall time, and the GPU time of the pass alone from timestamp queries where the adapter has
  them), and render plus read-back of every pixel (what an offscreen or Qt "bitmap" canvas does
  each frame) by the pass the device prefers;
- a 256x256 edit: the box and its reduced levels uploaded (its frame, which writes the box at the
  level the view reads, plus the step between frames that writes it at the others; the frame's
  part alone; the upload alone, as the host's time in ``prepare`` and that step, whose texture
  writes the next submit carries out, median and spread of 300 samples, each followed by a
  submit as its frame's would be; and with the document's read and write), against the same edit
  followed by a full re-upload, and a box the size
  of one whole texture tile;
- a PNG at native resolution (one pixel per frame and bin) of channel 0, compressed on every core,
  against one compressing thread (the previous writer).

Every wall time includes a read-back of one pixel, so the work has finished when the clock stops.
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

from spectropaint.gpu import png_writer
from spectropaint.gpu.adapter import describe_adapter, request_adapter
from spectropaint.gpu.frame_pass import picture_texture, use_compute
from spectropaint.gpu.png_export import export_png
from spectropaint.gpu.renderer import TARGET_FORMAT, SpectrogramRenderer
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.document import Document
from spectropaint.transforms.regions import Region

RATE = 44100
SIZES = ((1920, 1080), (3840, 2160))
UPLOAD_SAMPLES = 300
"""Samples of the upload-only row (its median and 10th and 90th percentiles are printed)."""


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
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT
            | wgpu.TextureUsage.COPY_SRC
            | wgpu.TextureUsage.COPY_DST,
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


def open_device(adapter: wgpu.GPUAdapter) -> wgpu.GPUDevice:
    """The app's limits, and timestamp queries where the adapter has them."""
    limits = {
        key: adapter.limits[key] for key in ("max-texture-dimension-2d", "max-texture-array-layers")
    }
    features = [f for f in ("timestamp-query",) if f in adapter.features]
    return adapter.request_device_sync(required_limits=limits, required_features=features)


class GPUClock:
    """GPU time of one frame's pass (render or compute), from timestamp queries (None without)."""

    def __init__(self, device: wgpu.GPUDevice):
        self.device = device
        self.enabled = "timestamp-query" in device.features
        if self.enabled:
            self.queries = device.create_query_set(type="timestamp", count=2)
            self.resolved = device.create_buffer(
                size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
            )

    def frame_ms(self, renderer: SpectrogramRenderer, target: Target) -> float | None:
        if not self.enabled:
            return None
        size = (0, 0, target.width, target.height)
        renderer.prepare(target.width, target.height)
        stamps = {
            "query_set": self.queries,
            "beginning_of_pass_write_index": 0,
            "end_of_pass_write_index": 1,
        }
        encoder = self.device.create_command_encoder()
        if renderer.compute:
            compute_pass = encoder.begin_compute_pass(timestamp_writes=stamps)
            renderer.dispatch(compute_pass, picture_texture(self.device, size[2:]), size)
            compute_pass.end()
        else:
            render_pass = encoder.begin_render_pass(
                color_attachments=[{"view": target.view, "load_op": "clear", "store_op": "store"}],
                timestamp_writes=stamps,
            )
            renderer.encode(render_pass)
            render_pass.end()
        encoder.resolve_query_set(self.queries, 0, 2, self.resolved, 0)
        self.device.queue.submit([encoder.finish()])
        start, stop = np.frombuffer(self.device.queue.read_buffer(self.resolved), np.uint64)
        return (int(stop) - int(start)) / 1e6  # wgpu gives nanoseconds


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
    parser.add_argument("--device", default="cpu", help="torch device of the document")
    args = parser.parse_args(argv)

    adapter = request_adapter(args.adapter)
    device = open_device(adapter)
    clock = GPUClock(device)
    started = time.perf_counter()
    document = Document.from_samples(signal(args.minutes), RATE, device=args.device)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    analyse_s = time.perf_counter() - started
    block = document.blocks[0]
    rows: list[dict] = []

    def row(operation: str, size: str, ms: float | None, **extra) -> None:
        if ms is not None:
            rows.append({"operation": operation, "size": size, "ms": round(ms, 3), **extra})

    hd = Target(device, *SIZES[0])
    full = SpectrogramRenderer(device, document)
    start = time.perf_counter()
    full.stream()  # the previous first frame: every cell of every level uploaded first
    hd.draw(full)
    row(
        "first frame, everything uploaded first (before)",
        "1920x1080",
        (time.perf_counter() - start) * 1e3,
        MiB=round(full.stats.total_bytes / 2**20, 1),
    )
    full.close()
    renderer = SpectrogramRenderer(device, document)
    grid = renderer.grid
    start = time.perf_counter()
    hd.draw(renderer)
    row(
        "first frame, the level it samples only (after)",
        "1920x1080",
        (time.perf_counter() - start) * 1e3,
        MiB=round(renderer.stats.frame_bytes / 2**20, 1),
        level=renderer.view_level(renderer.view, SIZES[0][0]),
    )
    start = time.perf_counter()
    frames = 0
    while renderer.streaming:
        hd.draw(renderer)
        frames += 1
    row(
        "  then streaming the rest, frame by frame",
        "1920x1080",
        (time.perf_counter() - start) * 1e3,
        frames=frames,
        MiB=round(renderer.stats.total_bytes / 2**20, 1),
    )
    hd.texture.destroy()
    small = Target(device, 8, 8)

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
            for compute in (False, True):
                renderer.compute = compute
                kind = "compute pass" if compute else "render pass"
                target.draw(renderer)  # warm-up
                row(
                    f"frame ({kind}): {name}",
                    f"{width}x{height}",
                    timed(lambda t=target: t.draw(renderer), args.repeat),
                )
                gpu_times = [clock.frame_ms(renderer, target) for _ in range(args.repeat)]
                if None not in gpu_times:
                    row(
                        f"  GPU time of the pass ({kind})",
                        f"{width}x{height}",
                        statistics.median(gpu_times),
                    )
            renderer.compute = use_compute(device)
            row(
                f"frame + read-back: {name}",
                f"{width}x{height}",
                timed(lambda t=target: t.draw(renderer, read_all=True), args.repeat),
            )
        target.texture.destroy()
    renderer.view = ViewSettings()

    uploaded = {"bytes": 0, "writes": 0}

    def edit(
        bins: int,
        frames: int,
        frame0: int,
        *,
        write: bool = True,
        whole: bool = False,
        levels: bool = True,
    ):
        """An edit, its frame (the box at the level the view reads) and, with ``levels``, the
        step between frames that writes the box at every other level."""
        region = Region(0, bins, frame0, frame0 + frames, (0,))
        if write:
            magnitude, phase = document.read(region)
            document.write(region, magnitude * 0.5, phase)
        renderer.mark_dirty(region)
        if whole:  # the alternative: upload everything again
            renderer.mark_dirty(Region(0, block.n_bins, 0, block.n_frames, (0,)))
        small.draw(renderer)
        uploaded.update(bytes=renderer.stats.frame_bytes, writes=renderer.stats.frame_writes)
        if levels:
            renderer.stream(0)
            uploaded["bytes"] += renderer.stats.frame_bytes
            uploaded["writes"] += renderer.stats.frame_writes

    middle = block.n_frames // 3
    edit(256, 256, middle)
    row(
        "edit 256x256: box + levels upload and frame",
        "8x8",
        timed(lambda: edit(256, 256, middle, write=False), args.repeat),
        **uploaded,
    )
    row(
        "  of which the frame (its level only)",
        "8x8",
        timed(lambda: edit(256, 256, middle, write=False, levels=False), args.repeat),
        **uploaded,
        level=renderer.view_level(renderer.view, 8),
    )
    renderer.stream(0)
    box = Region(0, 256, middle, middle + 256, (0,))

    def upload_only() -> None:
        renderer.mark_dirty(box)
        renderer.prepare(8, 8)
        uploaded.update(bytes=renderer.stats.frame_bytes, writes=renderer.stats.frame_writes)
        renderer.stream(0)
        uploaded["bytes"] += renderer.stats.frame_bytes
        uploaded["writes"] += renderer.stats.frame_writes

    # many samples, each followed (outside the clock) by a submit and a one-pixel read, as the
    # frame that draws the box would (the median of a handful in a row, with no submit between
    # them, was 0.80 and 1.24 ms in two runs of the same tree on the H200)
    host_times = []
    for _ in range(max(UPLOAD_SAMPLES, args.repeat)):
        start = time.perf_counter()
        upload_only()
        host_times.append((time.perf_counter() - start) * 1e3)
        device.queue.submit([])
        small.read()
    row(
        "edit 256x256: box + levels upload only (host time)",
        "-",
        statistics.median(host_times),
        **uploaded,
        p10=round(float(np.percentile(host_times, 10)), 3),
        p90=round(float(np.percentile(host_times, 90)), 3),
        samples=len(host_times),
    )
    row(
        "edit 256x256: document write, box upload, frame",
        "8x8",
        timed(lambda: edit(256, 256, middle), args.repeat),
        **uploaded,
    )
    row(
        "edit 256x256: full re-upload instead (alternative)",
        "8x8",
        timed(lambda: edit(256, 256, middle, whole=True), args.repeat),
        **uploaded,
    )
    tile_bins, tile_frames = grid.tile_height, min(grid.tile_width, block.n_frames)
    edit(tile_bins, tile_frames, 0)
    row(
        f"edit {tile_bins}x{tile_frames} (a whole tile): upload + levels",
        "8x8",
        timed(lambda: edit(tile_bins, tile_frames, 0), args.repeat),
        **uploaded,
    )
    row("no edit: frame only (baseline)", "8x8", timed(lambda: small.draw(renderer), args.repeat))

    if not args.no_png:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "native.png")
            threads = png_writer.MAX_WORKERS
            for label, workers in (("1 thread (before)", 1), ("every core (after)", threads)):
                png_writer.MAX_WORKERS = workers
                start = time.perf_counter()
                report = export_png(document, path, renderer=renderer)
                row(
                    f"PNG export, native resolution, {label}",
                    f"{report.width}x{report.height}",
                    (time.perf_counter() - start) * 1e3,
                    pieces=report.pieces,
                    threads=min(workers, os.cpu_count() or 1),
                    MiB=round(os.path.getsize(path) / 2**20, 1),
                )
            png_writer.MAX_WORKERS = threads
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
        "torch_device": args.device,
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
        print(f"| {entry['operation']:<52} | {entry['size']:>11} | {entry['ms']:>9.3f} | {extra}")
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"machine": machine, "work": work, "rows": rows}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
