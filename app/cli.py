"""The ``spectropaint`` command: the window by default, ``render`` for headless processing.

``spectropaint [FILE]`` opens the window; ``spectropaint render IN --wav OUT`` loads, analyses,
applies recorded strokes and operations and an imported image, and exports, printing one line per
file written. ``IN`` may be a picture (PNG, JPEG...): it is then placed on silence as sound. Errors
print one line naming the file and the reason and exit with status 1 (2 for bad arguments,
argparse's habit).
"""

from __future__ import annotations

import argparse
import os
import sys

from spectropaint.transforms.geometry import FREQ_SCALES

AUDIO_SUBTYPES = ("PCM_16", "PCM_24", "PCM_32", "FLOAT")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
PIXELS_PER_SECOND = 100
"""A picture opened as sound without ``--at`` lasts its width over this."""


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1920x1080, not {text!r}") from None
    if not (1 <= width <= 65536 and 1 <= height <= 65536):
        raise argparse.ArgumentTypeError(f"size {text} is outside 1x1 .. 65536x65536")
    return width, height


def _rectangle(text: str) -> tuple[float, float, float, float]:
    try:
        t0, t1, f0, f1 = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--at must be t0,t1,f0,f1 (seconds and Hz), not {text!r}"
        ) from None
    if not (0 <= t0 < t1 and 0 <= f0 < f1):
        raise argparse.ArgumentTypeError(f"--at needs 0 <= t0 < t1 and 0 <= f0 < f1, not {text}")
    return t0, t1, f0, f1


def render_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spectropaint render",
        description="Load an audio file, apply recorded strokes, and export audio and/or an image.",
    )
    parser.add_argument("input", help="audio file (WAV, FLAC, OGG, AIFF, MP3) or project (.spp)")
    parser.add_argument("--wav", metavar="OUT", help="write the edited audio (.wav or .flac)")
    parser.add_argument(
        "--subtype", choices=AUDIO_SUBTYPES, help="sample format of --wav (default: the source's)"
    )
    parser.add_argument(
        "--strokes",
        metavar="JSON",
        action="append",
        default=[],
        help="recorded strokes and operations to apply (repeatable, applied in order)",
    )
    parser.add_argument("--image", metavar="IMG", help="import a picture (PNG, JPEG...) as sound")
    parser.add_argument(
        "--at",
        type=_rectangle,
        metavar="T0,T1,F0,F1",
        help="where the picture goes: seconds and Hz (default: from 0 s, 100 pixels a second, "
        "100 Hz to 8 kHz)",
    )
    parser.add_argument(
        "--image-top",
        type=float,
        default=-50.0,
        metavar="DB",
        help="level of white per cell (-50 dB)",
    )
    parser.add_argument(
        "--image-range",
        type=float,
        default=60.0,
        metavar="DB",
        help="dB from white to the darkest grey (60); black is silence",
    )
    parser.add_argument("--image-mode", choices=("add", "replace"), default="add")
    parser.add_argument(
        "--image-scale",
        choices=FREQ_SCALES,
        default="linear",
        help="the frequency axis the picture's rows are spread along",
    )
    parser.add_argument(
        "--rate", type=int, default=44100, help="sample rate of a picture opened as sound"
    )
    parser.add_argument(
        "--project", metavar="OUT", help="save a project (.spp): audio, edits, strokes"
    )
    parser.add_argument("--png", metavar="OUT", help="write the spectrogram as PNG")
    parser.add_argument(
        "--size", type=_size, metavar="WxH", help="PNG size (default: one pixel per frame and bin)"
    )
    parser.add_argument("--colormap", default="magma", help="PNG colormap (default magma)")
    parser.add_argument(
        "--range",
        dest="range_db",
        type=float,
        default=80.0,
        metavar="DB",
        help="PNG dynamic range in dB (default 80)",
    )
    parser.add_argument("--freq-scale", choices=FREQ_SCALES, default="linear")
    parser.add_argument("--axes", action="store_true", help="draw time/frequency axes and a dB bar")
    parser.add_argument("--n-fft", type=int, default=2048)
    parser.add_argument("--hop", type=int, default=512)
    parser.add_argument("--window", default="hann")
    parser.add_argument("--engine", default="torch", help="STFT engine: torch or nnaudio")
    parser.add_argument("--device", help="torch device: cpu, cuda, cuda:1, mps (default: best)")
    return parser


def _image_size(path: str) -> tuple[int, int]:
    from spectropaint.transforms.files.image_file import load_image

    height, width = load_image(path).shape
    return width, height


def _placement(args: argparse.Namespace, path: str, nyquist: float) -> dict:
    if args.at is not None:
        t0, t1, f0, f1 = args.at
    else:
        width, _ = _image_size(path)
        t0, t1, f0, f1 = 0.0, width / PIXELS_PER_SECOND, 100.0, min(8000.0, 0.9 * nyquist)
    return {
        "t0": t0,
        "t1": t1,
        "f0": f0,
        "f1": f1,
        "top_db": args.image_top,
        "range_db": args.image_range,
        "mode": args.image_mode,
        "freq_scale": args.image_scale,
    }


def _silence_for_image(args: argparse.Namespace, settings):
    """Silence long enough for the picture (a quarter second after it), at ``--rate``."""
    import numpy as np

    from spectropaint.transforms.document import Document

    end = _placement(args, args.input, args.rate / 2)["t1"]
    samples = np.zeros(max(settings.min_samples(), int((end + 0.25) * args.rate)))
    return Document.from_samples(samples, args.rate, settings=settings, device=args.device)


def _image_action(args: argparse.Namespace, path: str, document):
    from spectropaint.brushes.actions import RecordedAction

    placement = _placement(args, path, document.sample_rate / 2)
    return RecordedAction("image", {"path": os.path.abspath(path), "placement": placement})


def gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spectropaint",
        description="Paint on sound. 'spectropaint render --help' for headless use.",
    )
    parser.add_argument(
        "file", nargs="?", help="sound or project (.spp) to open (default: the demo sound)"
    )
    parser.add_argument("--device", help="torch device: cpu, cuda, cuda:1, mps (default: best)")
    return parser


def render(args: argparse.Namespace) -> int:
    from spectropaint.transforms.document import Document
    from spectropaint.transforms.files.project_file import is_project, load_project, save_project
    from spectropaint.transforms.stft import STFTSettings

    if not (args.wav or args.png or args.project):
        print(
            "spectropaint render: nothing to write: give --wav, --png and/or --project",
            file=sys.stderr,
        )
        return 2
    strokes: list[dict] = []
    settings = STFTSettings(n_fft=args.n_fft, hop=args.hop, window=args.window, engine=args.engine)
    image = args.image
    if is_project(args.input):
        project = load_project(args.input, device=args.device)
        document, strokes = project.document, list(project.strokes)
    elif args.input.lower().endswith(IMAGE_SUFFIXES):
        image, document = args.input, _silence_for_image(args, settings)
    else:
        document = Document.from_file(args.input, settings=settings, device=args.device)
    document.notices.connect(lambda text: print(f"spectropaint: {text}", file=sys.stderr))
    from spectropaint.brushes.actions import apply_entries, load_entries
    from spectropaint.brushes.operations import Clipboard

    clipboard = Clipboard()
    for path in args.strokes:
        recorded = load_entries(path)
        apply_entries(document, recorded, clipboard=clipboard)
        strokes += [entry.to_dict() for entry in recorded]
    if image:
        action = _image_action(args, image, document)
        apply_entries(document, [action], clipboard=clipboard)
        strokes.append(action.to_dict())
    if args.project:
        print(save_project(document, args.project, strokes=strokes).message)
    if args.wav:
        report = document.export(args.wav, subtype=args.subtype)
        print(report.message)
    if args.png:
        from spectropaint.gpu.png_export import export_png

        report = export_png(
            document,
            args.png,
            size=args.size,
            colormap=args.colormap,
            range_db=args.range_db,
            freq_scale=args.freq_scale,
            axes=args.axes,
        )
        print(report.message)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from spectropaint.transforms.errors import SpectroPaintError

    try:
        if argv[:1] == ["render"]:
            return render(render_parser().parse_args(argv[1:]))
        args = gui_parser().parse_args(argv)
        from spectropaint.app.gui_main import run_gui

        return run_gui(args.file, device=args.device)
    except SpectroPaintError as exc:
        print(f"spectropaint: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
