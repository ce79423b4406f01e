"""Long files: peak memory and time to open, paint and resynthesise a one-hour stereo file.

    python tests/benchmarks/bench_long_file.py [--minutes 60 10] [--channels 2] [--max-gb 20]
                                               [--skip-window] [--json out.json]

For each length (default one hour, then ten minutes, for the ratio) it writes a 44.1 kHz 16-bit
WAV (stereo by default; the demo sound repeated, written in pieces), then measures in fresh
processes, so that each peak is its own:

- ``engine``: ``Document.from_file`` (time, peak); strokes of the gain brush (radius 16) and the blur
  brush (radius 32) through ``StrokeSession.add_events``, one input event at a time with an undo
  history, timed per event; ``edited_span`` over a one-second edit;
- ``window``: a ``MainWindow`` offscreen (lavapipe) opening the file with ``open_path``: the time to
  its ``document_loaded`` signal and to the first spectrogram frame painted, then one gain stroke
  (radius 8) through the canvas, timed per pointer move (``bench_app.paint_latencies``).

Peak memory is the process's ``VmHWM`` (``ru_maxrss`` would count the parent's across ``exec``).
The predicted peak is ``memory_budget``'s estimate. The parent watches every child's resident
memory and kills it above ``--max-gb``, and starts none whose predicted need (plus 2 GB) exceeds the
memory available then, so a run cannot take the machine down.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RATE = 44100
WINDOW_TIMEOUT_S = 1200.0
SPARE_BYTES = int(2e9)
"""A measurement runs only while the memory available exceeds its predicted need by this much."""
DEMO_FRAMES = 690
"""The window paints at the zoom that shows this many frames across (as ``bench_app`` does)."""


# ------------------------------------------------------------------------------------- helpers
def status_bytes(field: str, pid: str = "self") -> int:
    """``VmHWM``, ``VmRSS``... of a process from ``/proc/<pid>/status``, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def gb(n: float) -> float:
    return round(n / 1e9, 2)


def summary(values: list[float]) -> dict:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "max_ms": round(ordered[-1], 2),
    }


def write_file(folder: str, minutes: float, channels: int) -> str:
    """The demo sound repeated for ``minutes``, 44.1 kHz PCM_16, written ten seconds at a time."""
    import numpy as np
    import soundfile

    from spectropaint.transforms.files.demo_sound import demo_samples

    demo = demo_samples(RATE)
    total = int(minutes * 60 * RATE)
    piece = 10 * RATE
    path = os.path.join(folder, f"long-{minutes:g}min.wav")
    with soundfile.SoundFile(path, "w", RATE, channels, "PCM_16") as out:
        for start in range(0, total, piece):
            index = np.arange(start, min(total, start + piece)) % demo.shape[1]
            out.write(demo[np.arange(channels) % demo.shape[0]][:, index].T)
    return path


# --------------------------------------------------------------------------------- the children
def engine_child(path: str) -> dict:
    import numpy as np
    import torch

    from spectropaint.brushes.engine import StrokeSession
    from spectropaint.brushes.history import History
    from spectropaint.brushes.settings import BrushSettings
    from spectropaint.brushes.stroke import InputEvent
    from spectropaint.transforms.document import READ_SHARE, Document
    from spectropaint.transforms.regions import Region

    torch.set_num_threads(os.cpu_count() or 1)
    base = status_bytes("VmHWM")
    progress: list[tuple[float, float]] = []
    start = time.perf_counter()
    document = Document.from_file(
        path, device="cpu", progress=lambda done: progress.append((done, time.perf_counter()))
    )
    open_s = time.perf_counter() - start
    read_s = max(when for done, when in progress if done <= READ_SHARE) - start
    fractions = [done for done, _ in progress]
    opened = status_bytes("VmHWM")
    block = document.blocks[0]
    history = History(document)
    middle = block.n_frames // 2
    strokes = {}
    for brush, radius in (("gain", 16.0), ("blur", 32.0)):
        session = StrokeSession(
            document,
            brush,
            BrushSettings(radius_frames=radius, radius_bins=radius),
            history=history,
        )
        times = []
        for k in range(60):
            event = InputEvent(k / 60, middle + 6.0 * k, 200 + 80 * np.sin(k / 9), 1.0)
            tick = time.perf_counter()
            session.add_events((event,))
            times.append((time.perf_counter() - tick) * 1e3)
        session.end()
        strokes[f"{brush} r{radius:g}"] = summary(times[1:])  # the first builds the stroke's state
    painted = status_bytes("VmHWM")
    second = int(round(RATE / block.hop))
    frame0 = max(0, min(middle + 1000, block.n_frames - second))
    region = Region(0, block.n_bins, frame0, frame0 + second, tuple(range(document.n_channels)))
    magnitude, phase = document.read(region)
    document.write(region, magnitude * 0.5, phase)
    spans = []
    for _ in range(5):
        tick = time.perf_counter()
        document.edited_span(frame0, frame0 + second)
        spans.append((time.perf_counter() - tick) * 1e3)
    return {
        "frames": block.n_frames,
        "open_s": round(open_s, 2),
        "read_s": round(read_s, 2),
        "progress_reports": len(progress),
        "progress_monotonic": fractions == sorted(fractions),
        "baseline_gb": gb(base),
        "peak_after_open_gb": gb(opened),
        "peak_after_paint_gb": gb(painted),
        "peak_gb": gb(status_bytes("VmHWM")),
        "paint_per_event": strokes,
        "edited_span_1s_ms": summary(spans),
    }


def window_child(path: str) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if "XDG_RUNTIME_DIR" not in os.environ:  # a private runtime folder silences Mesa
        os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="spectropaint-xdg-")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_app import paint_latencies, pump
    from gui_fixtures import NO_OUTPUT
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QMessageBox

    from spectropaint.app.settings_store import SettingsStore
    from spectropaint.app.window.main_window import MainWindow

    failures: list[str] = []  # an error dialog offscreen would wait for a click for ever
    QMessageBox.critical = lambda parent, title, text, *rest: failures.append(f"{title}: {text}")
    app = QApplication(sys.argv[:1])
    base = status_bytes("VmHWM")
    with tempfile.TemporaryDirectory() as folder:
        ini = os.path.join(folder, "bench.ini")
        store = SettingsStore(QSettings(ini, QSettings.Format.IniFormat))
        start = time.perf_counter()
        window = MainWindow(settings=store, output_device=NO_OUTPUT)
        window.resize(1400, 860)
        window.show()
        loaded: list[float] = []
        window.document_loaded.connect(lambda: loaded.append(time.perf_counter()))
        window.open_path(path)
        pump(app, lambda: loaded or failures, timeout=WINDOW_TIMEOUT_S)
        at_load = status_bytes("VmHWM")
        pump(
            app,
            lambda: failures or (window.canvas is not None and window.canvas.frames_presented > 0),
            timeout=WINDOW_TIMEOUT_S,
        )
        if failures:
            return {"error": failures[0], "peak_gb": gb(status_bytes("VmHWM"))}
        first_frame = window.canvas.last_present_time - start
        opened = status_bytes("VmHWM")
        window.canvas.update_view(time_range=(0.0, float(DEMO_FRAMES)))
        paint = paint_latencies(app, window, moves=30, radius=8.0)
        frames = window.session.document.blocks[0].n_frames
        window.session.modified = False
        window.close()
    return {
        "frames": frames,
        "document_loaded_s": round(loaded[0] - start, 2),
        "first_frame_s": round(first_frame, 2),
        "baseline_gb": gb(base),
        "peak_at_document_loaded_gb": gb(at_load),
        "peak_after_first_frame_gb": gb(opened),
        "peak_gb": gb(status_bytes("VmHWM")),
        "paint": paint,
    }


# ------------------------------------------------------------------------------------ the parent
def run_child(kind: str, path: str, max_bytes: int) -> dict:
    """Run one measurement in a fresh process; kill it if its resident memory passes ``max_bytes``."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    child = subprocess.Popen(
        [sys.executable, __file__, "--child", kind, path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    watched = {"peak": 0, "killed": False}

    def watch() -> None:
        while child.poll() is None:
            try:
                rss = status_bytes("VmRSS", str(child.pid))
            except (OSError, KeyError):
                break
            watched["peak"] = max(watched["peak"], rss)
            if rss > max_bytes:
                watched["killed"] = True
                child.kill()
                break
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out, err = child.communicate()
    watcher.join()
    if watched["killed"]:
        return {"error": f"killed at {gb(watched['peak'])} GB resident (limit {gb(max_bytes)} GB)"}
    if child.returncode != 0:
        return {
            "error": err.strip().splitlines()[-1] if err.strip() else f"exit {child.returncode}"
        }
    return json.loads(out.strip().splitlines()[-1])


def predicted(path: str) -> dict:
    """``memory_budget``'s estimates for the file: the document alone, and with the window's reserve."""
    import soundfile

    from spectropaint.gpu.adapter import shared_device
    from spectropaint.gpu.texture_memory import view_and_playback_bytes
    from spectropaint.transforms.memory_budget import document_bytes
    from spectropaint.transforms.stft import STFT, STFTSettings

    info = soundfile.info(path)
    settings = STFTSettings()
    layout = STFT(settings).layout(info.frames, RATE)[0]
    document = document_bytes(info.frames, info.channels, settings)
    window = view_and_playback_bytes(
        info.frames,
        info.channels,
        layout.n_bins,
        layout.n_frames,
        max_texture_dim=shared_device().limits["max-texture-dimension-2d"],
        phase_view=False,
    )
    return {
        "document": document.describe(),
        "document_gb": gb(document.total),
        "window_gb": gb(document.total + window),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, nargs="+", default=[60.0, 10.0])
    parser.add_argument("--channels", type=int, default=2)
    parser.add_argument("--max-gb", type=float, default=20.0)
    parser.add_argument("--skip-window", action="store_true")
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, path = args.child
        result = engine_child(path) if kind == "engine" else window_child(path)
        print(json.dumps(result))
        return 0

    from spectropaint.gpu.adapter import describe_adapter, shared_device
    from spectropaint.transforms.host_memory import available_memory

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for minutes in args.minutes:
            tick = time.perf_counter()
            path = write_file(folder, minutes, args.channels)
            row = {
                "minutes": minutes,
                "channels": args.channels,
                "file_mb": round(os.path.getsize(path) / 1e6, 1),
                "write_s": round(time.perf_counter() - tick, 1),
                "predicted": predicted(path),
            }
            max_bytes = int(args.max_gb * 1e9)
            for kind in ("engine", "window")[: 1 if args.skip_window else 2]:
                need = row["predicted"][f"{kind if kind == 'window' else 'document'}_gb"] * 1e9
                available = available_memory() or 0
                if need + SPARE_BYTES > available:  # other work on the machine has the memory now
                    row[kind] = {
                        "error": f"not run: predicted {gb(need)} GB + {gb(SPARE_BYTES)} GB spare, "
                        f"{gb(available)} GB available"
                    }
                else:
                    row[kind] = run_child(kind, path, max_bytes)
            os.unlink(path)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    report = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "memory_gb": gb(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")),
            "gpu_adapter": describe_adapter(shared_device().adapter),
        },
        "results": rows,
    }
    print_table(rows)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


def print_table(rows: list[dict]) -> None:
    def cell(row: dict, part: str, *keys: str) -> str:
        value = row.get(part, {})
        if "error" in value:
            return "error"
        for key in keys:
            value = value.get(key, {}) if isinstance(value, dict) else {}
        return "-" if value in ({}, None) else str(value)

    lines = [
        ("file", lambda r: f"{r['minutes']:g} min {r['channels']} ch ({r['file_mb']:.0f} MB)"),
        ("predicted document GB", lambda r: str(r["predicted"]["document_gb"])),
        ("engine: open s", lambda r: cell(r, "engine", "open_s")),
        ("engine: of which reading s", lambda r: cell(r, "engine", "read_s")),
        ("engine: peak after open GB", lambda r: cell(r, "engine", "peak_after_open_gb")),
        ("engine: baseline GB", lambda r: cell(r, "engine", "baseline_gb")),
        ("gain r16 per event ms (med/p90)", lambda r: per_event(r, "gain r16")),
        ("blur r32 per event ms (med/p90)", lambda r: per_event(r, "blur r32")),
        (
            "edited_span 1 s ms (median)",
            lambda r: cell(r, "engine", "edited_span_1s_ms", "median_ms"),
        ),
        ("engine: peak GB", lambda r: cell(r, "engine", "peak_gb")),
        ("predicted window GB", lambda r: str(r["predicted"]["window_gb"])),
        ("window: document loaded s", lambda r: cell(r, "window", "document_loaded_s")),
        (
            "window: peak at document loaded GB",
            lambda r: cell(r, "window", "peak_at_document_loaded_gb"),
        ),
        ("window: first frame s", lambda r: cell(r, "window", "first_frame_s")),
        (
            "window: peak after first frame GB",
            lambda r: cell(r, "window", "peak_after_first_frame_gb"),
        ),
        ("window: move work ms (med/p90)", lambda r: window_moves(r)),
        ("window: peak GB", lambda r: cell(r, "window", "peak_gb")),
    ]
    width = max(len(name) for name, _ in lines)
    print(f"{'':<{width}}  " + "  ".join(f"{'':>20}" for _ in rows) + f"  {'ratio 1st/2nd':>14}")
    for name, value in lines:
        cells = [value(row) for row in rows]
        print(f"{name:<{width}}  " + "  ".join(f"{c:>20}" for c in cells) + f"  {ratio(cells):>14}")
    for row in rows:
        for part in ("engine", "window"):
            if "error" in row.get(part, {}):
                print(f"{row['minutes']:g} min {part}: {row[part]['error']}")


def ratio(cells: list[str]) -> str:
    """First over second of two numeric cells (the first number of ``a / b`` cells)."""
    try:
        first, second = (float(c.split("/")[0].split("min")[0]) for c in cells[:2])
    except (ValueError, IndexError):
        return ""
    return f"{first / second:.2f}" if second else ""


def per_event(row: dict, stroke: str) -> str:
    found = row.get("engine", {}).get("paint_per_event", {}).get(stroke)
    return "-" if not found else f"{found['median_ms']:.1f} / {found['p90_ms']:.1f}"


def window_moves(row: dict) -> str:
    work = row.get("window", {}).get("paint", {}).get("work")
    return "-" if not work else f"{work['median_ms']:.1f} / {work['p90_ms']:.1f}"


if __name__ == "__main__":
    sys.exit(main())
