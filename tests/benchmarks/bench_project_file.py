"""Project file benchmark: save and load times and sizes, unedited and with a tenth of frames edited.

    python tests/benchmarks/bench_project_file.py [--durations 10 60 600] [--json out.json]

Stereo 44.1 kHz audio (the demo sound repeated) as 16-bit PCM, which a project stores as FLAC, and as
float64 (not float32-exact), stored as a ``.npy``. Edited: a one-second run of all bins
every ten seconds. Prints a table, then JSON with the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
import zipfile

import numpy as np
import torch

from spectropaint.transforms.document import Document
from spectropaint.transforms.files.audio_file import AudioData, AudioFormat
from spectropaint.transforms.files.demo_sound import demo_samples
from spectropaint.transforms.files.project_file import load_project, save_project
from spectropaint.transforms.regions import Region

RATE = 44100


def source(seconds: float, subtype: str) -> AudioData:
    demo = demo_samples(RATE)
    n = int(seconds * RATE)
    samples = np.tile(demo, (1, -(-n // demo.shape[1])))[:, :n]
    # 16-bit values go to FLAC; values off the float32 grid to a float64 .npy
    samples = np.rint(samples * 2**15) / 2**15 if subtype == "PCM_16" else samples + 1e-12
    return AudioData(samples, AudioFormat("WAV", subtype, RATE, 2))


def edit_tenth(document: Document) -> None:
    block = document.blocks[0]
    run = RATE // block.hop
    for frame0 in range(0, block.n_frames - run, 10 * run):
        region = Region(0, block.n_bins, frame0, frame0 + run, (0, 1))
        magnitude, phase = document.read(region)
        document.write(region, magnitude * 0.5, phase)


def bench(seconds: float, subtype: str, edited: bool, folder: str) -> dict:
    document = Document(source(seconds, subtype), device="cpu")
    if edited:
        edit_tenth(document)
    path = os.path.join(folder, "bench.spp")
    start = time.perf_counter()
    save_project(document, path)
    save_s = time.perf_counter() - start
    start = time.perf_counter()
    load_project(path, device="cpu")
    load_s = time.perf_counter() - start
    with zipfile.ZipFile(path) as archive:
        audio = next(i for i in archive.infolist() if i.filename.startswith("audio."))
    return {
        "seconds": seconds,
        "source": subtype,
        "edited_frames": int(document.blocks[0].edited_frames.sum()),
        "save_s": round(save_s, 3),
        "load_s": round(load_s, 3),
        "file_mb": round(os.path.getsize(path) / 1e6, 2),
        "audio_member": audio.filename,
        "audio_ratio": round(audio.compress_size / audio.file_size, 3)
        if audio.filename.endswith(".npy")
        else round(audio.compress_size / (document.audio.samples.size * 2), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[10, 60, 600])
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for seconds in args.durations:
            for subtype in ("PCM_16", "DOUBLE"):
                for edited in (False, True):
                    rows.append(bench(seconds, subtype, edited, folder))
    print(f"{'s':>5} {'source':>7} {'edited':>7} {'save s':>7} {'load s':>7} {'MB':>8}  audio")
    for r in rows:
        print(
            f"{r['seconds']:>5g} {r['source']:>7} {r['edited_frames']:>7} {r['save_s']:>7.3f} "
            f"{r['load_s']:>7.3f} {r['file_mb']:>8.2f}  {r['audio_member']} x{r['audio_ratio']}"
        )
    print("audio ratio: FLAC bytes / 16-bit PCM bytes, or stored / raw .npy bytes")
    result = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
        },
        "rows": rows,
    }
    print(json.dumps(result))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1)


if __name__ == "__main__":
    main()
