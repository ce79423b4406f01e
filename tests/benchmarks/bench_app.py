"""App benchmark: launch to the first drawn frame, and pointer-move latency while painting.

    python tests/benchmarks/bench_app.py [--minutes 10] [--moves 60] [--json out.json]
    DISPLAY=:99 QT_QPA_PLATFORM=xcb python tests/benchmarks/bench_app.py --screenshot shot.png

For a stereo 44.1 kHz file of ``--minutes`` (the demo sound repeated) and for the 8-second demo, it
times: creating the window until the first spectrogram frame is painted on the widget (reading,
analysing and uploading included); then, zoomed so that both show 8 seconds across the canvas,
painting with the gain brush at two sizes: each pointer move
from the moment Qt delivers it to the moment its frame is painted (``end to end``, which includes
waiting for rendercanvas's next frame tick at 60 Hz) and from the moment the canvas starts handling
it (``work``: the stroke's dabs, the texture upload, the render and the read-back), and the time from
the stroke's end until playback holds its resynthesis. ``--screenshot``
opens the demo sound, paints two strokes and saves the window (run it under Xvfb to see what a
person sees). Runs offscreen unless ``QT_QPA_PLATFORM`` says otherwise.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402 - the start time is taken before the imports
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for gui_fixtures

import numpy as np  # noqa: E402
import soundfile  # noqa: E402
from gui_fixtures import NO_OUTPUT, send_mouse  # noqa: E402
from PySide6.QtCore import QEvent, QEventLoop, QSettings, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from spectropaint.app.playback.engine import find_output_device  # noqa: E402

RATE = 44100
DEMO_FRAMES = 690
"""Frames of the 8-second demo: both files are painted at the zoom that shows this many frames."""


def pump(app: QApplication, condition, timeout: float = 120.0) -> None:
    """Run Qt's events until ``condition()``; sleeps 0.2 ms between rounds so as not to take a core
    from lavapipe's rendering threads (an event loop waiting in ``exec()`` does not spin either)."""
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the window did not get there in time")
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents)
        time.sleep(0.0002)


def make_file(folder: str, minutes: float) -> str:
    from spectropaint.transforms.files.demo_sound import demo_samples

    demo = demo_samples(RATE)
    repeats = int(np.ceil(minutes * 60 * RATE / demo.shape[1]))
    samples = np.tile(demo, repeats)[:, : int(minutes * 60 * RATE)]
    path = os.path.join(folder, f"bench-{minutes:g}min.wav")
    soundfile.write(path, samples.T, RATE, subtype="FLOAT")
    return path


def open_window(app: QApplication, folder: str, path: str | None, *, output_device=NO_OUTPUT):
    """A window on ``path``; returns it and the seconds from its creation to its first frame."""
    from spectropaint.app.settings_store import SettingsStore
    from spectropaint.app.window.main_window import MainWindow

    store = SettingsStore(QSettings(os.path.join(folder, "bench.ini"), QSettings.Format.IniFormat))
    start = time.perf_counter()
    window = MainWindow(settings=store, output_device=output_device)
    window.resize(1400, 860)
    window.show()
    window.open_path(path)
    pump(app, lambda: window.canvas is not None and window.canvas.frames_presented > 0)
    return window, window.canvas.last_present_time - start


def set_radius(window, radius: float) -> None:
    """Both radii of the current brush, in cells (the panel shows them in ms and Hz)."""
    panel = window.brush_panel
    panel.scale_size(radius / panel.settings().radius_frames)


def paint_latencies(app, window, *, moves: int, radius: float) -> dict:
    """Milliseconds per pointer move of one stroke with the gain brush of ``radius`` cells, and from
    the stroke's end until playback holds its resynthesis."""
    canvas = window.canvas
    window.palette.select("gain")
    set_radius(window, radius)
    started: list[float] = []
    canvas.cursor_moved.connect(lambda point: started.append(time.perf_counter()))
    width, height = canvas.width(), canvas.height()
    left = Qt.MouseButton.LeftButton
    send_mouse(
        canvas, QEvent.Type.MouseButtonPress, width * 0.1, height * 0.5, button=left, buttons=left
    )
    pump(app, lambda: canvas.painting)
    end_to_end, work = [], []
    for k in range(moves):
        x = width * (0.1 + 0.8 * (k + 1) / moves)
        y = height * (0.5 + 0.2 * np.sin(k / 5))
        count, sent = canvas.frames_presented, time.perf_counter()
        send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
        pump(app, lambda count=count: canvas.frames_presented > count and started)
        end_to_end.append((canvas.last_present_time - sent) * 1e3)
        work.append((canvas.last_present_time - started[-1]) * 1e3)
        started.clear()
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, x, y, button=left)
    pump(app, lambda: not canvas.painting)
    released = time.perf_counter()
    window.transport.resynthesizer.wait_idle()
    resynthesis_ms = (time.perf_counter() - released) * 1e3
    with window.session.lock:
        window.session.history.undo()

    def summary(values: list[float]) -> dict:
        ordered = sorted(values)
        return {
            "median_ms": round(statistics.median(ordered), 2),
            "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
            "max_ms": round(ordered[-1], 2),
        }

    return {
        "radius_cells": radius,
        "moves": moves,
        "end_to_end": summary(end_to_end),
        "work": summary(work),
        "resynthesis_after_stroke_ms": round(resynthesis_ms, 1),
    }


def screenshot(app, folder: str, out: str) -> None:
    """The demo sound with an erase stroke through the chord and a blur stroke, saved as PNG."""
    from PIL import Image

    window, _ = open_window(app, folder, None, output_device=find_output_device())
    canvas = window.canvas
    left = Qt.MouseButton.LeftButton
    for tool, radius, path in (
        ("erase", 10.0, [(0.12 + 0.02 * k, 0.52 - 0.012 * k) for k in range(14)]),
        ("blur", 12.0, [(0.45 + 0.025 * k, 0.3 + 0.1 * np.sin(k / 3)) for k in range(14)]),
    ):
        window.palette.select(tool)
        set_radius(window, radius)
        points = [(canvas.width() * fx, canvas.height() * fy) for fx, fy in path]
        send_mouse(canvas, QEvent.Type.MouseButtonPress, *points[0], button=left, buttons=left)
        for x, y in points[1:]:
            count = canvas.frames_presented
            send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
            pump(app, lambda count=count: canvas.frames_presented > count)
        send_mouse(canvas, QEvent.Type.MouseButtonRelease, *points[-1], button=left)
        pump(app, lambda: not canvas.painting)
    send_mouse(canvas, QEvent.Type.MouseMove, canvas.width() * 0.7, canvas.height() * 0.6)
    count = canvas.frames_presented
    pump(app, lambda: canvas.frames_presented > count)
    for _ in range(20):
        app.processEvents()
    raw = os.path.join(folder, "shot.png")
    window.grab().save(raw)
    Image.open(raw).convert("RGB").save(out, optimize=True)
    window.session.modified = False
    window.close()
    print(f"wrote {out} ({os.path.getsize(out) / 1024:.0f} KiB)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--screenshot", metavar="PNG")
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    imported = time.perf_counter() - STARTED
    with tempfile.TemporaryDirectory() as folder:
        if args.screenshot:
            screenshot(app, folder, args.screenshot)
            return 0
        from spectropaint.gpu.adapter import describe_adapter, shared_device
        from spectropaint.transforms.torch_device import choose_device, describe

        results = []
        for label, path in (
            ("demo 8 s", None),
            (f"{args.minutes:g} min", make_file(folder, args.minutes)),
        ):
            window, first_frame = open_window(app, folder, path)
            window.canvas.update_view(
                time_range=(0.0, float(DEMO_FRAMES))
            )  # the same zoom for both
            row = {
                "file": label,
                "frames": window.session.document.blocks[0].n_frames,
                "first_frame_s": round(first_frame, 2),
            }
            paint_latencies(
                app, window, moves=5, radius=8.0
            )  # warm-up (first-stroke costs), undone
            row["paint"] = [
                paint_latencies(app, window, moves=args.moves, radius=r) for r in (8.0, 32.0)
            ]
            window.session.modified = False
            window.close()
            results.append(row)
    report = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch_device": describe(choose_device(None)),
            "gpu_adapter": describe_adapter(shared_device().adapter),
            "qt_platform": app.platformName(),
        },
        "imports_and_qapplication_s": round(imported, 2),
        "results": results,
    }
    print(
        f"imports + QApplication: {imported:.2f} s   ({report['machine']['gpu_adapter']}, {report['machine']['cpus']} CPUs)"
    )
    print(
        f"{'file':>10} {'frames':>7} {'1st frame s':>11} {'radius':>6} {'e2e median':>10} {'e2e p90':>8} {'work median':>11} {'work p90':>8} {'work max':>8}"
    )
    for row in results:
        for paint in row["paint"]:
            e2e, work = paint["end_to_end"], paint["work"]
            print(
                f"{row['file']:>10} {row['frames']:>7} {row['first_frame_s']:>11.2f} {paint['radius_cells']:>6g} "
                f"{e2e['median_ms']:>10.1f} {e2e['p90_ms']:>8.1f} {work['median_ms']:>11.1f} {work['p90_ms']:>8.1f} {work['max_ms']:>8.1f} {paint['resynthesis_after_stroke_ms']:>10.1f}"
            )
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
