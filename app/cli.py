"""The ``spectropaint`` command: the window by default, ``render`` for headless processing.

``spectropaint [FILE]`` opens the window; ``spectropaint render IN --wav OUT`` loads, analyses,
applies recorded strokes and operations and an imported image, and exports, printing one line per
file written. ``IN`` may be a picture (PNG, JPEG...): it is then placed on silence as sound. Errors
print one line naming the file and the reason and exit with status 1 (2 for bad arguments,
argparse's habit); warnings about what was opened (a truncated file) print one line each and the
render goes on.

Before any work, ``render`` checks what it will write (``transforms.files.output_paths``: no special
file, no input, no two outputs the same, no link planted by another user), the PNG's size, and
reads the strokes files; and it removes temporary files that killed runs left in the output
folders. SIGTERM (``timeout``, a service manager) stops it like Ctrl+C: unfinished files are removed.
Every line printed has control characters (a newline in a file name) escaped, so it stays one line.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

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
    if width < 1 or height < 1:
        raise argparse.ArgumentTypeError(f"size {text} must be at least 1x1")
    return width, height


def one_line(text: str) -> str:
    """``text`` with control characters escaped (``\\n``), so that a message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _say(text: str, *, error: bool = False) -> None:
    print(one_line(text), file=sys.stderr if error else sys.stdout)


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like ``KeyboardInterrupt``, so atomic writes remove their files."""


def _terminate(signum, frame) -> None:
    raise Terminated(signum)


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
    parser.add_argument(
        "--colormap",
        default="magma",
        help="PNG colormap: magma (default), viridis, inferno, plasma, hot, gray",
    )
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
    _add_analysis_arguments(parser)
    parser.add_argument("--device", help="torch device: cpu, cuda, cuda:1, mps (default: best)")
    return parser


def _add_analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """The transform a sound is analysed and edited in (see :func:`analysis_settings`)."""
    parser.add_argument(
        "--transform",
        choices=("stft", "nsgt"),
        default="stft",
        help="what the sound is analysed and edited in (default stft; nsgt: constant-Q)",
    )
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


def stft_settings(args: argparse.Namespace):
    """The STFT of the command line's ``--n-fft``, ``--hop``, ``--window`` and ``--engine``."""
    from spectropaint.transforms.stft import STFTSettings

    return STFTSettings(n_fft=args.n_fft, hop=args.hop, window=args.window, engine=args.engine)


def analysis_settings(args: argparse.Namespace):
    """The analysis the command line asks for: ``--transform`` with its settings.

    Raises
    ------
    SettingsError
        A setting out of its range, with the reason.
    """
    from spectropaint.transforms.nsgt_design import NSGTSettings

    if args.transform == "nsgt":
        return NSGTSettings(
            scale=args.scale, bins_per_octave=args.bins_per_octave, fmin=args.fmin, fmax=args.fmax
        )
    return stft_settings(args)


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
    _add_analysis_arguments(parser)
    return parser


def render(args: argparse.Namespace) -> int:
    from spectropaint.transforms.document import Document
    from spectropaint.transforms.files.project_file import is_project, load_project, save_project

    outputs = {
        name: path
        for name, path in (("--project", args.project), ("--wav", args.wav), ("--png", args.png))
        if path
    }
    if not outputs:
        _say(
            "spectropaint render: nothing to write: give --wav, --png and/or --project", error=True
        )
        return 2
    _check_outputs(outputs, [args.input, *args.strokes])
    if args.png and args.size:
        _check_png_size(args.png, args.size)
    recorded = _read_strokes(args.strokes)

    strokes: list[dict] = []
    image = args.image
    if is_project(args.input):
        project = load_project(args.input, device=args.device)
        document, strokes = project.document, list(project.strokes)
    elif args.input.lower().endswith(IMAGE_SUFFIXES):
        image, document = args.input, _silence_for_image(args, stft_settings(args))
    else:
        document = Document.from_file(
            args.input, settings=analysis_settings(args), device=args.device
        )
    document.notices.connect(lambda text: _say(f"spectropaint: {text}", error=True))
    from spectropaint.brushes.actions import apply_entries
    from spectropaint.brushes.operations import Clipboard

    clipboard = Clipboard()
    if recorded:
        apply_entries(document, recorded, clipboard=clipboard)
        strokes += [entry.to_dict() for entry in recorded]
    if image:
        action = _image_action(args, image, document)
        apply_entries(document, [action], clipboard=clipboard)
        strokes.append(action.to_dict())
    if args.project:
        _say(save_project(document, args.project, strokes=strokes).message)
    if args.wav:
        _say(document.export(args.wav, subtype=args.subtype).message)
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
        _say(report.message)
    return 0


def _check_outputs(outputs: dict[str, str], inputs: list[str]) -> None:
    """Refuse outputs that must not be written; sweep their folders of killed runs' leftovers."""
    from spectropaint.transforms.errors import SpectroPaintError
    from spectropaint.transforms.files.atomic_write import sweep_stale_partials
    from spectropaint.transforms.files.output_paths import OutputRefused, check_outputs

    try:
        resolved = check_outputs(outputs, inputs)
    except OutputRefused as err:
        raise SpectroPaintError(
            f"cannot write '{err.filename}' ({err.output}): {err.strerror}"
        ) from None
    for folder in {path.parent for path in resolved.values()}:
        sweep_stale_partials(folder)


def _check_png_size(path: str, size: tuple[int, int]) -> None:
    from spectropaint.gpu.errors import ImageFileError
    from spectropaint.gpu.png_export import check_size
    from spectropaint.transforms.errors import SettingsError

    try:
        check_size(*size)
    except SettingsError as err:
        raise ImageFileError(path, str(err)) from None


def _read_strokes(paths: list[str]) -> list:
    """Every stroke and operation of the strokes files, in order (read before any work)."""
    if not paths:
        return []
    from spectropaint.brushes.actions import load_entries

    return [entry for path in paths for entry in load_entries(path)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from spectropaint.transforms.errors import SpectroPaintError

    previous = None
    try:
        if argv[:1] == ["render"]:
            args = render_parser().parse_args(argv[1:])
            if threading.current_thread() is threading.main_thread():
                previous = signal.signal(signal.SIGTERM, _terminate)
            return render(args)
        args = gui_parser().parse_args(argv)
        from spectropaint.app.gui_main import run_gui

        return run_gui(args.file, device=args.device, analysis=analysis_settings(args))
    except SpectroPaintError as exc:
        _say(f"spectropaint: {exc}", error=True)
        return 1
    except MemoryError:
        _say(
            "spectropaint: out of memory (a larger --hop or a shorter file needs less)", error=True
        )
        return 1
    except KeyboardInterrupt:
        return 130
    except Terminated:
        _say("spectropaint: stopped by SIGTERM; unfinished files were removed", error=True)
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
