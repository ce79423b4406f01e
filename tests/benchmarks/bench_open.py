"""Opening benchmark: read, analyse and draw the first frame of a 24-bit stereo WAV, short and long.

    python tests/benchmarks/bench_open.py [--durations 10 600] [--device cpu|cuda] [--repeat 3]
                                          [--adapter cpu|NAME] [--json out.json]

For each duration of stereo 44.1 kHz 24-bit WAV (a chirp over noise) it times, median of
``--repeat``:

- reading it (``load_audio``) on one thread (the previous reader) and in parallel pieces
  (``parallel_read.default_workers()``: one per core up to 8, none below 4 cores): the samples are
  checked equal;
- ``Document.from_file`` on ``--device`` (reading and the default STFT analysis), on the CPU also
  as before (``torch.stft`` on one thread: the previous analysis) and now (numpy and pocketfft on
  ``fft_ops.cpu_workers`` threads): the coefficients are checked equal to -130 dB;
- the first frame of the whole file at 1920x1080 by a new renderer (the level it samples uploaded);
- open to first frame: all of the above in one go, as the window does (without Qt), before and
  after on the CPU;
- the coarse picture the window shows first (:mod:`~spectropaint.transforms.files.coarse_read`:
  every ``m``-th frame of the same STFT, one 1920-pixel column each, read from the file with a seek
  per window) and its first frame by a new renderer: what the window shows of a long file before
  the open to first frame above ends (a file with fewer than 4 frames a column gets none).

Every GPU time ends with a read-back of one pixel, and CUDA work is synchronised before the clock
stops.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import soundfile as sf
import torch
from bench_render import Target, open_device

from spectropaint.gpu.adapter import describe_adapter, request_adapter
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.transforms import fft_ops
from spectropaint.transforms.document import Document
from spectropaint.transforms.files import audio_file, parallel_read
from spectropaint.transforms.files.audio_file import load_audio
from spectropaint.transforms.files.coarse_read import CoarseDocument, read_coarse
from spectropaint.transforms.stft import STFT

RATE = 44100


def write_wav(path: str, seconds: float) -> None:
    rng = np.random.default_rng(0)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    chirp = 0.3 * np.sin(2 * np.pi * (200 * t + 50 * t**2 / max(1.0, seconds / 60)))
    sf.write(path, np.stack([chirp, chirp]).T + 0.01 * rng.standard_normal((n, 2)), RATE, "PCM_24")


@contextlib.contextmanager
def previous_analysis():
    """The CPU analysis as it was: ``torch.stft`` of each chunk, one chunk at a time."""

    def torch_stft(self: STFT, x: torch.Tensor) -> torch.Tensor:
        x = x.to(torch.float32)
        return torch.stft(
            x, self.n_fft, self.hop, window=self.window, center=False, return_complex=True
        )

    saved = STFT._stft_cpu, fft_ops.cpu_workers
    STFT._stft_cpu, fft_ops.cpu_workers = torch_stft, lambda device: 1
    try:
        yield
    finally:
        STFT._stft_cpu, fft_ops.cpu_workers = saved


def error_db(test: Document, reference: Document) -> float:
    """The coefficients' difference relative to the reference's energy, dB."""
    (a,), (b,) = test.blocks, reference.blocks
    x, y = torch.polar(a.magnitude, a.phase), torch.polar(b.magnitude, b.phase)
    return 10 * math.log10(float((x - y).abs().square().sum() / y.abs().square().sum()))


def timed(function, repeat: int) -> tuple[float, object]:
    """Median wall time in milliseconds, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[10, 600])
    parser.add_argument("--device", default="cpu", help="torch device of the document")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--adapter", help="as SPECTROPAINT_ADAPTER: 'cpu' or part of a name")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    adapter = request_adapter(args.adapter)
    device = open_device(adapter)
    target = Target(device, 1920, 1080)
    cuda = args.device.startswith("cuda")

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def first_frame(document: Document) -> None:
        renderer = SpectrogramRenderer(device, document)
        target.draw(renderer)
        renderer.close()

    def open_to_first_frame(path: str) -> Document:
        document = Document.from_file(path, device=args.device)
        first_frame(document)
        sync()
        return document

    def coarse_first_frame(path: str) -> CoarseDocument | None:
        coarse = read_coarse(path, target.width)
        if coarse is not None:
            first_frame(coarse)
        return coarse

    rows: list[dict] = []
    workers = parallel_read.default_workers()
    with tempfile.TemporaryDirectory() as folder:
        for seconds in args.durations:
            path = os.path.join(folder, f"{seconds:g}s.wav")
            write_wav(path, seconds)

            def row(operation: str, ms: float, seconds=seconds, **extra) -> None:
                rows.append(
                    {"seconds": seconds, "operation": operation, "ms": round(ms, 1), **extra}
                )

            open_to_first_frame(path)  # warm: shaders, kernels, file cache
            audio_file.default_workers = lambda: 1
            serial_ms, serial = timed(lambda p=path: load_audio(p), args.repeat)
            audio_file.default_workers = parallel_read.default_workers
            pieces_ms, pieces = timed(lambda p=path: load_audio(p), args.repeat)
            assert np.array_equal(serial.samples, pieces.samples)
            row("read, 1 thread (before)", serial_ms)
            row("read, parallel pieces (after)", pieces_ms, threads=workers)

            def from_file(p=path) -> Document:
                document = Document.from_file(p, device=args.device)
                sync()
                return document

            before = not cuda and args.device == "cpu"
            if before:
                with previous_analysis():
                    ms, previous = timed(from_file, args.repeat)
                row("Document.from_file, torch.stft (before)", ms)
            ms, document = timed(from_file, args.repeat)
            extra = {"threads": fft_ops.cpu_workers(torch.device(args.device))}
            if before:
                extra["error_db"] = round(error_db(document, previous), 1)
                assert extra["error_db"] < -130
                del previous
            row("Document.from_file (read + analyse)", ms, **extra)
            ms, _ = timed(lambda d=document: first_frame(d), args.repeat)
            row("first frame 1920x1080, new renderer", ms)
            del document
            if before:
                with previous_analysis():
                    ms, _ = timed(lambda p=path: open_to_first_frame(p), args.repeat)
                row("open to first frame (before)", ms)
            ms, _ = timed(lambda p=path: open_to_first_frame(p), args.repeat)
            row("open to first frame", ms)
            ms, coarse = timed(lambda p=path: coarse_first_frame(p), args.repeat)
            if coarse is None:
                row("coarse picture: none (too short)", ms)
            else:
                row("coarse picture to first frame", ms, every=coarse.decimation)
    machine = {
        "adapter": describe_adapter(adapter),
        "torch_device": args.device,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
    }
    print(
        f"# {machine['adapter']}; torch on {args.device}; {machine['cpus']} CPUs; median of {args.repeat}"
    )
    print(f"| {'seconds':>7} | {'operation':<40} | {'ms':>8} | extra")
    print(f"| {'-' * 7} | {'-' * 40} | {'-' * 8} | -----")
    for entry in rows:
        extra = ", ".join(
            f"{k}={v}" for k, v in entry.items() if k not in ("seconds", "operation", "ms")
        )
        print(
            f"| {entry['seconds']:>7g} | {entry['operation']:<40} | {entry['ms']:>8.1f} | {extra}"
        )
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"machine": machine, "rows": rows}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
