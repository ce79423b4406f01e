"""The ``spectropaint`` command: the window by default, ``render`` for headless processing.

``spectropaint [FILE]`` opens the window; ``spectropaint render IN --wav OUT`` loads, analyses,
applies recorded strokes, and exports, printing one line per file written. Errors print one line
naming the file and the reason and exit with status 1 (2 for bad arguments, argparse's habit).
"""

from __future__ import annotations

import argparse
import sys

from spectropaint.transforms.geometry import FREQ_SCALES

AUDIO_SUBTYPES = ("PCM_16", "PCM_24", "PCM_32", "FLOAT")


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1920x1080, not {text!r}") from None
    if not (1 <= width <= 65536 and 1 <= height <= 65536):
        raise argparse.ArgumentTypeError(f"size {text} is outside 1x1 .. 65536x65536")
    return width, height


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
        help="recorded strokes to apply (repeatable, applied in order)",
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
    parser.add_argument("--transform", choices=("stft", "nsgt"), default="stft")
    parser.add_argument("--n-fft", type=int, default=2048, help="STFT size")
    parser.add_argument("--hop", type=int, default=512, help="STFT hop")
    parser.add_argument("--window", default="hann", help="STFT window")
    parser.add_argument("--engine", default="torch", help="STFT engine: torch or nnaudio")
    parser.add_argument("--scale", choices=("log", "mel", "bark"), default="log", help="NSGT")
    parser.add_argument("--bins-per-octave", type=int, default=48, help="NSGT, 12 to 96")
    parser.add_argument("--fmin", type=float, default=32.70, metavar="HZ", help="NSGT")
    parser.add_argument(
        "--fmax", type=float, metavar="HZ", help="NSGT (default: as high as the rate allows)"
    )
    parser.add_argument("--device", help="torch device: cpu, cuda, cuda:1, mps (default: best)")
    return parser


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
    from spectropaint.transforms.nsgt_design import NSGTSettings
    from spectropaint.transforms.stft import STFTSettings

    if not (args.wav or args.png or args.project):
        print(
            "spectropaint render: nothing to write: give --wav, --png and/or --project",
            file=sys.stderr,
        )
        return 2
    strokes: list[dict] = []
    if is_project(args.input):
        project = load_project(args.input, device=args.device)
        document, strokes = project.document, list(project.strokes)
    else:
        if args.transform == "nsgt":
            settings = NSGTSettings(
                scale=args.scale,
                bins_per_octave=args.bins_per_octave,
                fmin=args.fmin,
                fmax=args.fmax,
            )
        else:
            settings = STFTSettings(
                n_fft=args.n_fft, hop=args.hop, window=args.window, engine=args.engine
            )
        document = Document.from_file(args.input, settings=settings, device=args.device)
    document.notices.connect(lambda text: print(f"spectropaint: {text}", file=sys.stderr))
    if args.strokes:
        from spectropaint.brushes.recorded import apply_strokes, load_strokes

        for path in args.strokes:
            recorded = load_strokes(path)
            apply_strokes(document, recorded)
            strokes += [stroke.to_dict() for stroke in recorded]
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
