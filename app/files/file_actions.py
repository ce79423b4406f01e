"""Opening audio and exporting, as background jobs of the main window, and the About text.

The file dialogs are Qt's static functions (``QFileDialog.getSaveFileName``...), which tests answer by
replacing them. Work runs on a :class:`~spectropaint.app.files.workers.Job`; errors come back as one dialog
naming the file and the reason. Projects (``.spp``) are opened and saved by :mod:`.project_actions`
through the same :func:`start_job`.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from spectropaint.app.files.coarse_phase import CoarsePhase
from spectropaint.app.files.workers import Job
from spectropaint.transforms import joined_at_exit
from spectropaint.transforms.errors import SettingsError, SpectroPaintError

if TYPE_CHECKING:
    from spectropaint.app.window.main_window import MainWindow

log = logging.getLogger(__name__)
AUDIO_PATTERNS = "*.wav *.flac *.ogg *.oga *.aif *.aiff *.mp3"
OPEN_FILTER = (
    f"Sounds and projects ({AUDIO_PATTERNS} *.spp);;Audio files ({AUDIO_PATTERNS});;"
    "SpectroPaint projects (*.spp);;All files (*)"
)
IMAGE_FILTERS = {"PNG image (*.png)": ".png"}
DEMO_RATE = 44100


class Relay(QObject):
    """Carries a value from a job's thread to the window's (a queued signal)."""

    ready = Signal(object)


def _fail(window: MainWindow, title: str, exc: BaseException) -> None:
    window.after_save = None  # what was to follow a save does not follow a failed one
    text = str(exc) if isinstance(exc, SpectroPaintError) else f"{type(exc).__name__}: {exc}"
    QMessageBox.critical(window, title, text)


def reason_in_status(window: MainWindow, title: str):
    """A job's ``on_failure`` for work on the open document (a change of analysis, a heal): the
    reason a ``SpectroPaintError`` gives (settings, memory) in the status bar, where it does not
    stop the work that follows; anything else in a dialog titled ``title``."""

    def failure(exc: BaseException) -> None:
        if isinstance(exc, SpectroPaintError):
            window.statusBar().showMessage(f"{title}: {exc}")
        else:
            QMessageBox.critical(window, title, f"{type(exc).__name__}: {exc}")

    return failure


def _cancelled(window: MainWindow, title: str) -> None:
    window.after_save = None
    window.statusBar().showMessage(f"{title}: cancelled", 5000)


def start_job(
    window: MainWindow,
    label: str,
    work,
    on_success,
    title: str,
    *,
    on_failure=None,
    on_cancel=None,
) -> Job:
    """Run ``work(progress)`` as the window's job.

    By default a failure shows a dialog titled ``title`` and a cancel says so in the status bar;
    either drops the window's ``after_save`` continuation. Escape and the status line's Cancel
    stop it from the start (:class:`~spectropaint.app.window.job_cancel.JobCancel`).
    """

    def done() -> None:
        if window.job is job:  # a continuation may have started the next job already
            window.job = None

    job = Job(
        window,
        label,
        work,
        on_success=on_success,
        on_failure=on_failure or (lambda exc: _fail(window, title, exc)),
        on_cancel=on_cancel or (lambda: _cancelled(window, title)),
    )
    job.done.connect(done)
    window.job_cancel.watch(job)
    return job.start()


def window_reserve(window: MainWindow):
    """What the window adds to a document it shows, as a ``reserve_bytes`` estimate for ``Document``:
    the view's textures (a lane's per channel when they are stacked; in host memory on a software
    adapter), the playback buffers and the undo history's budget. Reads the GPU adapter, so call it
    on the GUI thread."""
    from functools import partial

    from spectropaint.brushes.history import DEFAULT_BYTE_BUDGET
    from spectropaint.gpu.adapter import shared_device
    from spectropaint.gpu.texture_memory import view_and_playback_bytes

    device = shared_device()
    estimate = partial(
        view_and_playback_bytes,
        max_texture_dim=device.limits["max-texture-dimension-2d"],
        textures_on_host=device.adapter.info.get("adapter_type") == "CPU",
        stacked=window.stacked,
    )
    return lambda *shape: estimate(*shape) + DEFAULT_BYTE_BUDGET


def start_open(window: MainWindow, path: str | None) -> Job:
    """Load and analyse ``path`` (the demo sound when None) in the window's analysis, then show
    it."""
    from spectropaint.transforms.document import Document
    from spectropaint.transforms.stft import STFTSettings

    device, analysis = window.torch_device, window.analysis
    if path is None:

        def work(progress):
            from spectropaint.transforms.files.demo_sound import demo_samples

            return Document.from_samples(
                demo_samples(DEMO_RATE), DEMO_RATE, settings=analysis, device=device
            )

        label = "Making the demo sound..."
    else:
        reserve = window_reserve(window)
        coarse = Relay(window)
        coarse.ready.connect(lambda document: CoarsePhase.begin(window, job, document))
        columns = window.editor.picture_size()[0]

        def work(progress):
            # the coarse picture is read beside the full analysis, and shown only if it comes
            # first (on a GPU the full picture may: it then never waits for the coarse one)
            opened = threading.Lock()
            state = {"opened": False}

            def coarse_picture() -> None:
                from spectropaint.transforms.files.coarse_read import read_coarse

                try:
                    found = read_coarse(path, columns, analysis)
                except Exception:  # a coarse picture must never stop the file from opening
                    log.exception("no coarse picture of %s", path)
                    return
                with opened:  # emitted before the job's result, or not at all
                    if found is not None and not state["opened"]:
                        coarse.ready.emit(found)

            if analysis is None or isinstance(analysis, STFTSettings):  # what it is edited in
                joined_at_exit.start(coarse_picture, name="coarse picture")
            try:
                return Document.from_file(
                    path, settings=analysis, device=device, progress=progress, reserve_bytes=reserve
                )
            finally:
                with opened:
                    state["opened"] = True

        label = f"Opening {os.path.basename(path)}..."

    def success(document) -> None:
        phase = window.coarse_phase
        place = phase.finish() if phase is not None else None
        window.set_document(document, path)
        shown = window.session is not None and window.session.document is document
        if phase is not None:
            phase.put_back(opened=shown)
        if shown and place is not None:
            window.show_place(*place)
        if path is not None:
            window.store.add_recent(path)

    def ended(then):
        def end(*args) -> None:
            phase = window.coarse_phase
            if phase is not None:
                phase.finish()
                phase.put_back(opened=False)
            then(*args)

        return end

    job = start_job(
        window,
        label,
        work,
        success,
        "Cannot open",
        on_failure=ended(lambda exc: _fail(window, "Cannot open", exc)),
        on_cancel=ended(lambda: _cancelled(window, "Cannot open")),
    )
    return job


def _ask_save_path(
    window: MainWindow, title: str, filters: dict[str, str], stem: str
) -> str | None:
    """The path chosen in a save dialog, with the chosen filter's suffix added when missing."""
    default = os.path.join(window.store.last_folder, stem + next(iter(filters.values())))
    path, chosen = QFileDialog.getSaveFileName(window, title, default, ";;".join(filters))
    if not path:
        return None
    if not os.path.splitext(path)[1]:
        path += filters.get(chosen, next(iter(filters.values())))
    return path


def _stem(window: MainWindow) -> str:
    path = window.session.path
    base = os.path.splitext(os.path.basename(path))[0] if path else "demo"
    return f"{base}-edited"


def export_audio(window: MainWindow) -> None:
    """Ask for the options (:class:`~.export_dialogs.AudioExportDialog`), then where, then write
    the edited sound; the job starts once both are answered (``window.job``).

    Exporting renders the document; it does not save it, so the window stays modified until the
    project is saved.
    """
    from spectropaint.app.files.audio_export import export_audio as write
    from spectropaint.app.files.export_dialogs import AudioExportDialog

    dialog = AudioExportDialog(window.session.document, window)

    def chosen() -> None:
        options = dialog.options()
        name = f"{options.format} (*{options.suffix})"
        path = _ask_save_path(window, "Export Audio", {name: options.suffix}, _stem(window))
        if path is not None:
            _start_export(
                window,
                path,
                lambda document: lambda progress: write(document, path, options, progress=progress),
                "audio",
            )

    _open_dialog(window, dialog, chosen)


def _open_dialog(window: MainWindow, dialog, chosen) -> None:
    """Show an options ``dialog`` window-modally (no nested event loop); ``chosen`` on OK."""
    dialog.accepted.connect(chosen)
    dialog.finished.connect(dialog.deleteLater)
    window.export_dialog = dialog
    dialog.open()


def _start_export(window: MainWindow, path: str, work_on, what: str) -> None:
    """Write ``path`` as ``window.job``, with no strokes meanwhile (the document is being read),
    once the window is idle (the strokes the pointer made painted and settled: what is written is
    what is heard; :class:`~spectropaint.app.window.when_idle.WhenIdle`, so the window's thread
    never waits for that).

    ``work_on(document)`` is called then, on the window's thread, with the document to export
    (which a change of analysis queued before may have replaced since the options were chosen),
    and returns the job's ``work(progress)``; a ``SpectroPaintError`` it raises is shown as the
    reason nothing was written."""
    session, name = window.session, os.path.basename(path)
    title = f"Cannot export {what}"

    def start() -> None:
        if window.session is not session:
            return
        try:
            work = work_on(session.document)
        except SpectroPaintError as exc:
            _fail(window, title, exc)
            return
        window.canvas.setEnabled(False)

        def success(report) -> None:
            window.store.last_folder = os.path.dirname(path)
            window.statusBar().showMessage(report.message, 10000)

        job = start_job(window, f"Exporting {name}...", work, success, title)
        job.done.connect(lambda: window.canvas is not None and window.canvas.setEnabled(True))
        window.job = job

    window.when_idle.run(start, f"exporting {name}")


def export_image(window: MainWindow) -> None:
    """Ask for the options (:class:`~.export_dialogs.ImageExportDialog`: part, size, colours,
    axes; the view's at first), then where, then write the PNG."""
    from spectropaint.app.files.export_dialogs import ImageExportDialog

    canvas = window.canvas
    size = (canvas.width(), canvas.height())
    dialog = ImageExportDialog(canvas.view, canvas.renderer.geometry, size, window)

    def chosen() -> None:
        options = dialog.options()
        path = _ask_save_path(window, "Export Image", IMAGE_FILTERS, _stem(window))
        if path is not None:
            _start_export(
                window, path, lambda document: _image_work(window, document, options, path), "image"
            )

    _open_dialog(window, dialog, chosen)


def _image_work(window: MainWindow, document, options, path: str):
    """``work(progress)`` writing ``options`` (:class:`~.export_dialogs.ImageExportOptions`) of
    ``document`` to ``path``: its seconds as frames of the analysis the window shows now."""
    from spectropaint.gpu.png_export import export_png

    canvas = window.canvas
    if canvas is None or canvas.lanes.document is not document:
        raise SettingsError("the window does not show the document to draw (the GPU refused it)")
    geometry = canvas.renderer.geometry
    view = options.view_on(geometry, document.n_samples / document.sample_rate)
    size = options.size_on(view, geometry)

    def work(progress):
        return export_png(
            document,
            path,
            size=size,
            colormap=view.colormap,
            range_db=view.range_db,
            floor_db=view.floor_db,
            gamma=view.gamma,
            freq_scale=view.freq_scale,
            channel=view.channel,
            time_range=view.time_range,
            freq_range=view.freq_range,
            axes=options.axes,
            progress=progress,
        )

    return work


def about_text(window: MainWindow) -> str:
    from spectropaint.app.window.about import about_html
    from spectropaint.gpu.adapter import describe_adapter, shared_device
    from spectropaint.transforms.torch_device import choose_device, describe

    device = (
        window.session.document.device
        if window.session is not None
        else choose_device(window.torch_device)
    )
    transport = window.transport
    if transport is not None and transport.available:
        audio = transport.engine.device.name
    else:
        audio = (
            f"none ({transport.reason})"
            if transport is not None
            else window.output_device.name or "none"
        )
    return about_html(
        torch_device=describe(device),
        gpu_adapter=describe_adapter(shared_device().adapter),
        audio_output=audio,
    )
