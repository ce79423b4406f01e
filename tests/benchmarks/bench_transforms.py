"""Transform benchmark: load, forward and inverse per engine, and export after a one-second edit.

    python tests/benchmarks/bench_transforms.py [--durations 10 60 600] [--device cpu|cuda]
                                                [--repeat 3] [--json out.json]

For each duration of stereo 44.1 kHz audio it times: loading a 24-bit WAV; the forward and full
inverse of each engine (torch.stft, nnAudio) and of librosa.stft/istft as the outside reference; and,
for a document with a one-second edit, the resynthesis of that edit (by difference) and the whole
export. The edit's resynthesis should not grow with the file's length; the export's file write does.
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
import soundfile as sf
import torch

from spectropaint.transforms.document import Document
from spectropaint.transforms.files.audio_file import load_audio
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFT, STFTSettings
from spectropaint.transforms.torch_device import choose_device, describe

RATE = 44100


def timed(function, repeat: int) -> float:
    """Median wall time in milliseconds (CUDA synchronised)."""
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
            timed(lambda stft=stft, spec=spec: stft.synthesise(spec, samples.shape[-1]), repeat),
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
        timed(lambda: document.edited_span(frame0, frame1), repeat),
    )
    out = os.path.join(folder, "export.wav")
    row("export with 1 s edit", "torch", timed(lambda: document.export(out), repeat))
    os.remove(path)
    return rows


def machine(device: torch.device) -> dict:
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "device": describe(device),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[10, 60, 600])
    parser.add_argument("--device", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    device = choose_device(args.device)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for seconds in args.durations:
            rows += bench_duration(seconds, device, args.repeat, folder)
    info = machine(device)
    print(f"# transforms, stereo {RATE} Hz, n_fft 2048 hop 512, median of {args.repeat}; {info}")
    durations = args.durations
    keys = sorted(
        {(r["operation"], r["engine"]) for r in rows},
        key=lambda k: [r["operation"] for r in rows].index(k[0]),
    )
    header = f"{'operation':24} {'engine':9}" + "".join(f"{f'{d:g} s (ms)':>14}" for d in durations)
    print(header)
    print("-" * len(header))
    for operation, engine in keys:
        cells = []
        for d in durations:
            match = [
                r["ms"]
                for r in rows
                if (r["operation"], r["engine"], r["seconds"]) == (operation, engine, d)
            ]
            cells.append(f"{match[0]:>14.1f}" if match else f"{'-':>14}")
        print(f"{operation:24} {engine:9}" + "".join(cells))
    by = {(r["operation"], r["engine"], r["seconds"]): r["ms"] for r in rows}
    longest, shortest = max(durations), min(durations)
    print()
    for engine in ("nnaudio", "librosa"):
        for op in ("forward", "inverse (full)"):
            if (op, engine, longest) in by:
                ratio = by[(op, engine, longest)] / by[(op, "torch", longest)]
                print(f"{op} at {longest:g} s: {engine} / torch = {ratio:.1f}x")
    key = ("resynthesise 1 s edit", "torch")
    ratio = by[(*key, longest)] / by[(*key, shortest)]
    print(f"1 s edit resynthesis, {longest:g} s file / {shortest:g} s file = {ratio:.2f}x")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": info, "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
