"""App benchmark: opening (coarse picture, full picture) and painting as a person does, on a short
and a long file, seen whole and zoomed in, with the window's thread watched.

    python tests/benchmarks/bench_app.py [--minutes 10] [--moves 30] [--repeat 3] [--open-only]
                                         [--json out.json]
    DISPLAY=:99 QT_QPA_PLATFORM=xcb python tests/benchmarks/bench_app.py --screenshot shot.png

For a 10-second and a ``--minutes`` stereo 44.1 kHz 24-bit WAV (the demo sound repeated), it
measures:

- **opening**, median of ``--repeat`` opens, each in a new window, from asking to open the file:
  the **coarse picture** on screen (:mod:`spectropaint.transforms.files.coarse_read`, drawn by
  :mod:`spectropaint.app.files.coarse_phase`) and the **full picture** (the first frame of the
  analysed document painted on the widget: reading, analysing and uploading included), and the
  longest the window's thread was busy at a stretch meanwhile; once as the window opens files
  (**progressive**) and once with the coarse picture turned off (**full only**: the previous way,
  where nothing shows until the document does). A file too short for a coarse picture (fewer
  than 4 frames a column) has none: its first picture is the full one.
- then (unless ``--open-only``), seen whole and zoomed to 8 seconds, one gain stroke of
  ``--moves`` pointer moves sent at 60
  per second, as a mouse sends them (not waiting for the window): for each move, the time until a
  painted frame shows its dabs (**paint**: median and p99; **applied**: until its dabs are in the
  document, the painting thread's part, timed on that thread:
  :meth:`~spectropaint.app.paint_queue.PaintQueue.progress`), and until the widget shows the brush
  outline at the new place (**outline**); the longest the window's thread was busy at a stretch while
  the stroke was painted (**busy max**: the longest single ``processEvents`` call; the target is
  under 50 ms); the time after the release until every move is painted (**backlog**) and
  until playback holds the resynthesis (**resynth**). Each view's stroke is painted twice: with the
  window's thread waiting for events as the app's event loop does (``pump`` ``wait``), then, for
  comparison, polling for them as this benchmark did before (``poll``: :class:`Pump`).

The stroke uses the default brush (radius 8 frames and 8 bins): on a ten-minute file seen whole a
move then reaches hundreds of frames. Runs offscreen unless ``QT_QPA_PLATFORM`` says otherwise; on
lavapipe the default run takes about 4 minutes on 2 cores. The canvas presents as the app does
(:func:`~spectropaint.app.window.canvas_widget.present_method`: offscreen by read-back, under X11 to
a wgpu surface; ``SPECTROPAINT_PRESENT=bitmap`` or ``screen`` forces one): the ``present`` column. ``--screenshot`` opens the demo sound,
paints two strokes and saves the window (run it under Xvfb to see what a person sees).
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402 - the start time is taken before the imports
import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for gui_fixtures

import numpy as np  # noqa: E402
import soundfile  # noqa: E402
from gui_fixtures import NO_OUTPUT, send_mouse  # noqa: E402
from PySide6.QtCore import (  # noqa: E402
    QEvent,
    QEventLoop,
    QSettings,
    Qt,
    QTimer,
)
from PySide6.QtWidgets import QApplication  # noqa: E402

from spectropaint.app.gui_main import share_interpreter  # noqa: E402
from spectropaint.app.playback.engine import find_output_device  # noqa: E402

RATE = 44100
ZOOM_FRAMES = 690
"""Frames of 8 seconds (hop 512): the zoomed view."""
MOVE_INTERVAL_S = 1 / 60


class Pump:
    """Runs Qt's event loop as the app's does: waiting for the next event (a posted change from the
    painting thread, a timer, a present), never polling; a 1 ms timer wakes it to look again at
    what it waits for (a time to send the next move, another thread's state). Keeps how long each
    ``processEvents`` call took (**busy**: the window's thread busy without a break, and up to
    the 1 ms it waited for an event).

    Polling instead (``processEvents`` in a loop with 0.2 ms sleeps, as this benchmark did before)
    made each change wait for the next round and took the interpreter from the painting thread
    every round: the ``poll`` rows (:attr:`poll`) measure that way, for comparison."""

    def __init__(self, app: QApplication, *, poll: bool = False):
        self.app = app
        self.poll = poll
        self.busy: list[float] = []
        self._tick = QTimer()
        self._tick.setTimerType(Qt.TimerType.PreciseTimer)
        self._tick.setInterval(1)

    def until(self, condition, timeout: float = 600.0, each=None) -> None:
        deadline = time.perf_counter() + timeout
        wait = QEventLoop.ProcessEventsFlag.WaitForMoreEvents
        flags = QEventLoop.ProcessEventsFlag.AllEvents if self.poll else wait
        self._tick.start()
        try:
            while not condition():
                if time.perf_counter() > deadline:
                    raise TimeoutError("the window did not get there in time")
                started = time.perf_counter()
                self.app.processEvents(flags)
                self.busy.append(time.perf_counter() - started)
                if self.poll:
                    time.sleep(0.0002)
                if each is not None:
                    each()
        finally:
            self._tick.stop()


def make_file(folder: str, seconds: float) -> str:
    from spectropaint.transforms.files.demo_sound import demo_samples

    demo = demo_samples(RATE)
    repeats = int(np.ceil(seconds * RATE / demo.shape[1]))
    samples = np.tile(demo, repeats)[:, : int(seconds * RATE)]
    path = os.path.join(folder, f"bench-{seconds:g}s.wav")
    soundfile.write(path, samples.T, RATE, subtype="PCM_24")
    return path


@contextlib.contextmanager
def coarse_pictures(shown: bool):
    """Opening as the window does (``shown``), or with no coarse picture: the previous way."""
    from spectropaint.transforms.files import coarse_read

    real = coarse_read.read_coarse
    if not shown:
        coarse_read.read_coarse = lambda *args, **kwargs: None
    try:
        yield
    finally:
        coarse_read.read_coarse = real


def open_window(pump: Pump, folder: str, path: str | None, *, output_device=NO_OUTPUT):
    """A shown window on ``path``; returns it with the seconds to the coarse picture (None when
    there was none) and to the full picture (from the moment the file is asked for)."""
    from spectropaint.app.settings_store import SettingsStore
    from spectropaint.app.window.main_window import MainWindow

    store = SettingsStore(QSettings(os.path.join(folder, "bench.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=store, output_device=output_device)
    window.resize(1400, 860)
    window.show()
    pump.until(lambda: window.isVisible())
    for _ in range(10):
        pump.app.processEvents()
    coarse = []

    def watch() -> None:
        phase = window.coarse_phase
        if not coarse and phase is not None and phase.canvas.frames_presented:
            coarse.append(phase.canvas.last_present_time)

    pump.busy.clear()
    start = time.perf_counter()
    window.open_path(path)
    pump.busy.append(time.perf_counter() - start)  # the window's own part of starting to open
    pump.until(lambda: window.canvas is not None and window.canvas.frames_presented > 0, each=watch)
    first = coarse[0] - start if coarse else None
    return window, first, window.canvas.last_present_time - start


def measure_opening(pump: Pump, folder: str, path: str, repeat: int) -> list[dict]:
    """Median seconds to the coarse and the full picture, progressive and full only."""
    rows = []
    for mode, shown in (("progressive", True), ("full only", False)):
        coarse, full, busy = [], [], []
        for _ in range(repeat):
            with coarse_pictures(shown):
                window, first, last = open_window(pump, folder, path)
            busy.append(max(pump.busy))
            coarse.append(first)
            full.append(last)
            window.close()
            pump.app.processEvents()
        rows.append(
            {
                "mode": mode,
                "coarse_picture_s": (
                    None if None in coarse else round(statistics.median(coarse), 2)
                ),
                "coarse_picture_all_s": [None if c is None else round(c, 2) for c in coarse],
                "full_picture_s": round(statistics.median(full), 2),
                "full_picture_all_s": [round(f, 2) for f in full],
                "busy_max_ms": round(max(busy) * 1e3, 1),
            }
        )
    return rows


def summary(values: list[float]) -> dict:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered) * 1e3, 1),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e3, 1),
        "max_ms": round(ordered[-1] * 1e3, 1),
    }


def paint_stroke(pump: Pump, window, *, moves: int) -> dict:
    """One gain stroke of ``moves`` moves at 60 per second across the canvas; see the module."""
    canvas, queue = window.canvas, window.canvas.painter
    window.palette.select("gain")
    width, height = canvas.width(), canvas.height()
    left = Qt.MouseButton.LeftButton
    frames: list[float] = []
    applied: dict[int, float] = {}
    seen_frames = [canvas.frames_presented]

    def watch() -> None:
        if canvas.frames_presented != seen_frames[0]:
            seen_frames[0] = canvas.frames_presented
            frames.append(canvas.last_present_time)
        done, when = queue.progress()
        if done not in applied:
            applied[done] = when

    path = [
        (width * (0.1 + 0.8 * k / moves), height * (0.5 + 0.2 * np.sin(k / 5)))
        for k in range(moves + 1)
    ]
    first_job = queue.applied
    pump.busy.clear()
    send_mouse(canvas, QEvent.Type.MouseButtonPress, *path[0], button=left, buttons=left)
    sent: list[float] = []
    outline: list[float] = []
    started = time.perf_counter()
    for k, (x, y) in enumerate(path[1:]):
        pump.until(lambda k=k: time.perf_counter() >= started + k * MOVE_INTERVAL_S, each=watch)
        paints = canvas.last_paint_time
        sent.append(time.perf_counter())
        send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
        pump.until(lambda p=paints: canvas.last_paint_time != p, each=watch)
        outline.append(canvas.last_paint_time - sent[-1])
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, *path[-1], button=left)
    released = time.perf_counter()
    pump.until(lambda: not queue.busy, each=watch)
    backlog = time.perf_counter() - released
    pump.until(lambda: frames and frames[-1] > applied.get(queue.applied, 0.0), each=watch)
    busy = sorted(pump.busy)
    painted, in_document = [], []
    for k, when in enumerate(sent):
        job = first_job + 2 + k  # the begin, then one job per move
        done = min((t for count, t in applied.items() if count >= job), default=None)
        shown = next((f for f in frames if done is not None and f >= done), None)
        if done is not None:
            in_document.append(done - when)
        if shown is not None:
            painted.append(shown - when)
    window.transport.resynthesizer.wait_idle()
    resynthesis = time.perf_counter() - released
    window.canvas.finish_painting()
    window.session.undo()
    pump.until(lambda: window.transport.resynthesizer.wait_idle(0))
    return {
        "moves": moves,
        "paint": summary(painted),
        "applied": summary(in_document),
        "outline": summary(outline),
        "busy_max_ms": round(busy[-1] * 1e3, 1),
        "busy_p99_ms": round(busy[int(0.99 * (len(busy) - 1))] * 1e3, 1),
        "backlog_s": round(backlog, 2),
        "resynthesis_s": round(resynthesis, 2),
    }


def screenshot(pump: Pump, folder: str, out: str) -> None:
    """The demo sound, both channels stacked, with an erase stroke through the chord in the left
    channel and a blur stroke on both, and the outline under the pointer, saved as PNG."""
    from PIL import Image

    os.environ.setdefault("SPECTROPAINT_PRESENT", "bitmap")  # grab() cannot see a wgpu surface
    window, _, _ = open_window(pump, folder, None, output_device=find_output_device())
    window.resize(1500, 900)
    panel = window.view_panel
    panel.channel.setCurrentIndex(panel.channel.findText("All, stacked"))
    canvas = window.canvas
    left = Qt.MouseButton.LeftButton
    top, bottom = canvas.bands()
    for tool, preset, lane, path in (
        ("erase", "Medium", top, [(0.12 + 0.02 * k, 0.55 - 0.012 * k) for k in range(14)]),
        (
            "blur",
            "Large",
            bottom,
            [(0.45 + 0.025 * k, 0.3 + 0.1 * np.sin(k / 3)) for k in range(14)],
        ),
    ):
        window.palette.select(tool)
        window.brush_panel.apply_preset(preset)
        brush = window.brush_panel
        brush.channel.setCurrentIndex(brush.channel.findText("The one under the pointer"))
        first, rows = lane
        points = [(canvas.width() * fx, first + rows * fy) for fx, fy in path]
        send_mouse(canvas, QEvent.Type.MouseButtonPress, *points[0], button=left, buttons=left)
        pump.until(lambda: canvas.painting)
        for x, y in points[1:]:
            painted = canvas.last_paint_time
            send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
            pump.until(lambda p=painted: canvas.last_paint_time != p)  # each move reached the tool
        send_mouse(canvas, QEvent.Type.MouseButtonRelease, *points[-1], button=left)
        pump.until(lambda: not canvas.painting)
    window.transport.set_cursor(2.1)
    send_mouse(canvas, QEvent.Type.MouseMove, canvas.width() * 0.72, top[0] + top[1] * 0.45)
    count = canvas.frames_presented
    canvas.request_draw()
    pump.until(lambda: canvas.frames_presented > count)
    for _ in range(20):
        pump.app.processEvents()
    raw = os.path.join(folder, "shot.png")
    window.grab().save(raw)
    Image.open(raw).convert("RGB").save(out, optimize=True)
    window.session.modified = False
    window.close()
    print(f"wrote {out} ({os.path.getsize(out) / 1024:.0f} KiB)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3, help="opens of each file and mode")
    parser.add_argument("--open-only", action="store_true", help="measure opening only")
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--screenshot", metavar="PNG")
    args = parser.parse_args()
    share_interpreter()  # as run_gui does
    app = QApplication(sys.argv[:1])
    pump = Pump(app)
    imported = time.perf_counter() - STARTED
    with tempfile.TemporaryDirectory() as folder:
        if args.screenshot:
            screenshot(pump, folder, args.screenshot)
            return 0
        from spectropaint.gpu.adapter import describe_adapter, shared_device
        from spectropaint.transforms.torch_device import choose_device, describe

        warm, _, _ = open_window(
            pump, folder, make_file(folder, 2.0)
        )  # compile shaders, load torch
        for thread in threading.enumerate():  # the brushes' GPU kernels load once per process
            if thread.name == "brush warm-up":
                thread.join()
        warm.close()
        results, openings = [], []
        for label, seconds in (("10 s", 10.0), (f"{args.minutes:g} min", args.minutes * 60)):
            path = make_file(folder, seconds)
            for row in measure_opening(pump, folder, path, args.repeat):
                openings.append({"file": label, **row})
                print(json.dumps(openings[-1]), flush=True)
            if args.open_only:
                continue
            window, coarse, full = open_window(pump, folder, path)
            for view in ("whole", "8 s"):
                if view == "8 s":
                    window.canvas.update_view(time_range=(0.0, float(ZOOM_FRAMES)))
                canvas = window.canvas  # the view drawn whole and its levels in, before a stroke
                shown = canvas.frames_presented
                canvas.request_draw()
                pump.until(
                    lambda c=canvas, n=shown: c.frames_presented > n and not c.lanes.streaming
                )
                for pumping in ("wait", "poll"):
                    pump.poll = pumping == "poll"
                    row = {
                        "file": label,
                        "present": window.canvas.present,
                        "frames": window.session.document.blocks[0].n_frames,
                        "first_picture_s": round(full if coarse is None else coarse, 2),
                        "full_picture_s": round(full, 2),
                        "view": view,
                        "pump": pumping,
                        **paint_stroke(pump, window, moves=args.moves),
                    }
                    results.append(row)
                    print(json.dumps(row), flush=True)
                pump.poll = False
            window.session.modified = False
            window.close()
    report = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch_device": describe(choose_device(None)),
            "gpu_adapter": describe_adapter(shared_device().adapter),
            "qt_platform": app.platformName(),
        },
        "imports_and_qapplication_s": round(imported, 2),
        "opening": openings,
        "results": results,
    }
    machine = report["machine"]
    print(
        f"imports + QApplication: {imported:.2f} s   ({machine['gpu_adapter']}, {machine['cpus']} CPUs)"
    )
    print(f"opening a stereo 44.1 kHz 24-bit WAV, median of {args.repeat} (each run in brackets)")
    print("file | mode | coarse picture s | full picture s | busy max ms")
    for r in openings:
        coarse = "-" if r["coarse_picture_s"] is None else r["coarse_picture_s"]
        print(
            f"{r['file']} | {r['mode']} | {coarse} {r['coarse_picture_all_s']} | "
            f"{r['full_picture_s']} {r['full_picture_all_s']} | {r['busy_max_ms']}"
        )
    header = (
        "file", "present", "view", "pump", "1st pic s", "full s", "applied med", "paint med", "paint p99", "outline med",
        "outline p99", "busy max", "backlog s", "resynth s",
    )  # fmt: skip
    if results:
        print(" | ".join(header))
    for r in results:
        cells = (
            r["file"], r["present"], r["view"], r["pump"], r["first_picture_s"], r["full_picture_s"],
            r["applied"]["median_ms"], r["paint"]["median_ms"], r["paint"]["p99_ms"],
            r["outline"]["median_ms"],
            r["outline"]["p99_ms"], r["busy_max_ms"], r["backlog_s"], r["resynthesis_s"],
        )  # fmt: skip
        print(" | ".join(str(c) for c in cells))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
