"""Opening a long sound shows a coarse picture first, on the true axes, then the full one: every
``m``-th frame of the document's own STFT read straight from the file
(:mod:`spectropaint.transforms.files.coarse_read`), shown while the analysis goes on
(:mod:`spectropaint.app.files.coarse_phase`)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import soundfile
import torch
from gui_fixtures import canvas_pixels, open_window, send_mouse, write_test_sound
from PySide6.QtCore import QEvent, Qt

from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import AudioFileError
from spectropaint.transforms.files import coarse_read
from spectropaint.transforms.files.coarse_read import read_coarse
from spectropaint.transforms.geometry import unwarp, warp

RATE = 16000
TONE_HZ = 1000.0
ONSET_S = 5.0
gpu = pytest.mark.gpu
quiet_rendercanvas = pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas")


def tone_from(path, *, seconds: float = 60.0, rate: int = RATE) -> None:
    """Stereo: silence, then from :data:`ONSET_S` a 1 kHz tone (quiet noise throughout)."""
    rng = np.random.default_rng(3)
    t = np.arange(int(seconds * rate)) / rate
    tone = np.where(t >= ONSET_S, 0.5 * np.sin(2 * np.pi * TONE_HZ * t), 0.0)
    left = tone + 1e-4 * rng.standard_normal(t.size)
    soundfile.write(path, np.stack([left, left]).T, rate, subtype="PCM_24")


def error_db(test: torch.Tensor, reference: torch.Tensor) -> float:
    ratio = float((test - reference).square().sum() / reference.square().sum())
    return 10 * np.log10(max(ratio, 1e-30))


def test_the_coarse_document_is_every_mth_frame_of_the_full_analysis(tmp_path):
    path = tmp_path / "tone.wav"
    tone_from(path, seconds=30.0)
    coarse = read_coarse(str(path), 200)
    full = Document.from_file(path)
    m = coarse.decimation
    assert m == (full.blocks[0].n_frames - 1) // 200 and m >= coarse_read.MIN_DECIMATION
    (block,) = coarse.blocks
    assert block.hop == m * full.blocks[0].hop
    np.testing.assert_allclose(block.frame_seconds, full.blocks[0].frame_seconds[::m])
    np.testing.assert_array_equal(block.band_hz, full.blocks[0].band_hz)
    # the ends reflected as the STFT reflects them: the first and last kept frames too
    assert error_db(block.magnitude, full.blocks[0].magnitude[:, :, ::m]) < -120
    assert coarse.full_scale == pytest.approx(full.full_scale, rel=1e-6)
    assert coarse.n_samples == full.n_samples and coarse.sample_rate == RATE


def test_sounds_that_cannot_be_read_that_way_get_no_coarse_picture(tmp_path):
    (tmp_path / "junk.wav").write_bytes(b"not audio at all" * 100)
    assert read_coarse(str(tmp_path / "junk.wav"), 64) is None
    assert read_coarse(str(tmp_path / "missing.wav"), 64) is None
    os.mkfifo(tmp_path / "pipe.wav")
    assert read_coarse(str(tmp_path / "pipe.wav"), 64) is None  # without blocking
    tone_from(tmp_path / "short.wav", seconds=6.0)  # 188 frames: fewer than 4 per column
    assert read_coarse(str(tmp_path / "short.wav"), 64) is None
    assert read_coarse(str(tmp_path / "short.wav"), 16) is not None


def test_reads_that_would_hold_the_full_analysis_up_are_given_up(tmp_path, monkeypatch):
    tone_from(tmp_path / "tone.wav", seconds=30.0)
    assert read_coarse(str(tmp_path / "tone.wav"), 200) is not None
    monkeypatch.setattr(coarse_read, "MAX_READ_S", 1e-6)  # as if each seek took seconds
    assert read_coarse(str(tmp_path / "tone.wav"), 200) is None


def test_nan_in_a_float_file_reads_as_silence(tmp_path):
    samples = np.zeros((2, 30 * RATE))
    samples[0, 5000] = np.nan
    samples[1, 9000] = 1e300
    soundfile.write(tmp_path / "nan.wav", samples.T, RATE, subtype="DOUBLE")
    coarse = read_coarse(str(tmp_path / "nan.wav"), 64)
    assert torch.isfinite(coarse.blocks[0].magnitude).all()


# --- in the window -------------------------------------------------------------------------------


class HeldAnalysis:
    """``Document.from_file`` waits for :meth:`release` (then reads, or raises ``failure``)."""

    def __init__(self, monkeypatch, failure: Exception | None = None):
        self.gate = threading.Event()
        self.failure = failure
        real = Document.from_file.__func__

        def held(cls, path, **options):
            if not self.gate.wait(60):
                raise TimeoutError("the test never released the analysis")
            if self.failure is not None:
                raise self.failure
            return real(cls, path, **options)

        monkeypatch.setattr(Document, "from_file", classmethod(held))

    def release(self) -> None:
        self.gate.set()


def wait_for_coarse(qtbot, window):
    qtbot.waitUntil(
        lambda: window.coarse_phase is not None and window.coarse_phase.canvas.frames_presented,
        timeout=30_000,
    )
    return window.coarse_phase


@pytest.fixture
def decimation_2(monkeypatch):
    """A coarse picture for sounds of two frames a column or more (short test files)."""
    monkeypatch.setattr(coarse_read, "MIN_DECIMATION", 2)


def freq_at_row(window, row: float) -> float:
    """What the frequency ruler reads at canvas row ``row``."""
    ruler = window.freq_ruler
    low, high = (float(warp(hz, ruler.scale)) for hz in ruler.span)
    height = window.editor.canvas.height()
    return float(unwarp(high - (row + 0.5) / height * (high - low), ruler.scale))


def coarse_shown(qtbot, tmp_path, monkeypatch):
    """A window on the demo sound opening :func:`tone_from`'s minute, its analysis held, once the
    coarse picture is on screen: the window, the :class:`HeldAnalysis` and the coarse phase."""
    path = tmp_path / "tone.wav"
    tone_from(path)
    held = HeldAnalysis(monkeypatch)
    window = open_window(qtbot, tmp_path, None)
    window.open_path(str(path))
    return window, held, wait_for_coarse(qtbot, window)


@gpu
@quiet_rendercanvas
def test_the_coarse_picture_comes_first_on_the_rulers_true_axes(
    qtbot, tmp_path, monkeypatch, decimation_2
):
    window, held, phase = coarse_shown(qtbot, tmp_path, monkeypatch)
    demo = phase.kept[0]
    canvas = phase.canvas
    assert window.session is None and window.canvas is None and window.editor.canvas is canvas
    pixels = canvas_pixels(canvas).astype(float).sum(axis=2)  # [rows, columns]
    height, width = pixels.shape
    # the tone's row: where the ruler reads 1 kHz
    late = pixels[:, int(0.6 * width) :]
    row = int(late.mean(axis=1).argmax())
    assert freq_at_row(window, row) == pytest.approx(TONE_HZ, rel=0.04)
    # its onset: where the time ruler reads 5 s
    along = pixels[row]
    onset = int(np.argmax(along > 0.5 * along[int(0.6 * width) :].mean()))
    assert window.time_ruler.seconds_at(onset + 0.5) == pytest.approx(ONSET_S, abs=0.15)
    assert window.time_ruler.span[1] == pytest.approx(60.0, abs=0.2)
    # the window says so, and nothing edits, plays or saves meanwhile
    label = window.statusBar().findChild(type(phase.label), "analysing")
    assert label.text().startswith("Analysing tone.wav… ") and label.text().endswith(" %")
    for name in ("save_project", "export_audio", "play_pause", "undo", "analysis"):
        assert not window.actions_by_name[name].isEnabled(), name
    held.release()
    qtbot.waitUntil(lambda: window.canvas is not None and window.canvas.frames_presented > 0)
    assert window.coarse_phase is None and window.editor.canvas is window.canvas
    assert window.statusBar().findChild(type(phase.label), "analysing") is None
    assert window.session is not demo and window.session.path == phase.document.path
    assert window.actions_by_name["save_project"].isEnabled()


@gpu
@quiet_rendercanvas
def test_the_full_picture_after_the_coarse_one_is_the_picture_opened_without_it(
    qtbot, tmp_path, monkeypatch, decimation_2
):
    path = tmp_path / "tone.wav"
    tone_from(path)
    shown = []
    real_begin = coarse_read.read_coarse

    def recording(*args, **kwargs):
        found = real_begin(*args, **kwargs)
        shown.append(found)
        return found

    monkeypatch.setattr(coarse_read, "read_coarse", recording)
    (tmp_path / "a").mkdir()
    progressive = open_window(qtbot, tmp_path / "a", path)
    assert shown and shown[0] is not None  # it went through a coarse picture
    monkeypatch.setattr(coarse_read, "read_coarse", lambda *args, **kwargs: None)
    (tmp_path / "b").mkdir()
    plain = open_window(qtbot, tmp_path / "b", path)
    assert progressive.canvas.size() == plain.canvas.size()
    np.testing.assert_array_equal(canvas_pixels(progressive.canvas), canvas_pixels(plain.canvas))
    assert progressive.canvas.view == plain.canvas.view


@gpu
@quiet_rendercanvas
def test_a_zoom_on_the_coarse_picture_is_kept_by_the_full_one(
    qtbot, tmp_path, monkeypatch, decimation_2
):
    window, held, phase = coarse_shown(qtbot, tmp_path, monkeypatch)
    canvas = phase.canvas
    mapping = canvas.mapping()
    start, stop = (float(t) for t in mapping.geometry.frame_position([20.0, 30.0]))
    canvas.set_view(mapping.with_time(start, stop))
    assert window.time_ruler.span == pytest.approx((20.0, 30.0), abs=1e-6)
    held.release()
    qtbot.waitUntil(lambda: window.canvas is not None and window.canvas.frames_presented > 0)
    assert window.canvas.mapping().seconds_span == pytest.approx((20.0, 30.0), abs=1e-6)
    assert window.time_ruler.span == pytest.approx((20.0, 30.0), abs=1e-6)


def paint_on(qtbot, canvas) -> None:
    left = Qt.MouseButton.LeftButton
    y = canvas.height() / 2
    send_mouse(canvas, QEvent.Type.MouseButtonPress, 100, y, button=left, buttons=left)
    for x in range(110, 400, 10):
        send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, 400, y, button=left)
    qtbot.wait(50)


def window_with_a_stroke(qtbot, tmp_path):
    """A window on a short sound with one settled stroke: the window, the sound's path and the
    edited magnitudes."""
    short = tmp_path / "short.wav"
    write_test_sound(short)
    window = open_window(qtbot, tmp_path, short)
    paint_on(qtbot, window.canvas)
    window.canvas.finish_painting()
    session = window.session
    qtbot.waitUntil(lambda: session.history.can_undo)
    session.wait_settled()
    return window, short, session.document.blocks[0].magnitude.clone()


@gpu
@quiet_rendercanvas
def test_painting_on_the_coarse_picture_is_refused_and_nothing_is_lost(
    qtbot, tmp_path, monkeypatch, decimation_2
):
    window, short, edited = window_with_a_stroke(qtbot, tmp_path)
    first = window.session
    path = tmp_path / "tone.wav"
    tone_from(path)
    held = HeldAnalysis(monkeypatch, failure=None)
    monkeypatch.setattr(window, "_may_discard_edits", lambda then: True)  # "Discard"
    window.open_path(str(path))
    phase = wait_for_coarse(qtbot, window)
    paint_on(qtbot, phase.canvas)
    message = window.statusBar().currentMessage()
    assert message.startswith("Editing waits until tone.wav is analysed"), message
    window.open_path(str(short))  # another open meanwhile is refused too
    assert window.statusBar().currentMessage().startswith("Opening another file waits")
    held.release()
    qtbot.waitUntil(lambda: window.canvas is not None and window.canvas.frames_presented > 0)
    session = window.session
    assert session.path == str(path)
    assert not session.history.can_undo and not session.modified and not session.strokes.done
    assert not session.document.is_edited
    # the document set aside was not touched by the refused stroke either
    assert torch.equal(first.document.blocks[0].magnitude, edited)


@gpu
@quiet_rendercanvas
@pytest.mark.parametrize("how", ["fails", "does not fit", "escape", "cancel button"])
def test_a_sound_that_fails_or_is_cancelled_midway_keeps_the_open_document(
    qtbot, tmp_path, monkeypatch, decimation_2, how
):
    window, _, edited = window_with_a_stroke(qtbot, tmp_path)
    session = window.session
    view = window.canvas.view
    path = tmp_path / "tone.wav"
    tone_from(path)
    failure = (
        AudioFileError(str(path), "truncated: the data ends at 30 s") if how == "fails" else None
    )
    held = HeldAnalysis(monkeypatch, failure=failure)
    if how == "does not fit":  # refused from the header, once the coarse picture is shown
        monkeypatch.setattr("spectropaint.transforms.document.available_memory", lambda: 10 * 2**20)
    monkeypatch.setattr(window, "_may_discard_edits", lambda then: True)
    dialogs = []
    monkeypatch.setattr(
        "spectropaint.app.files.file_actions.QMessageBox.critical",
        lambda parent, title, text: dialogs.append((title, text)),
    )
    window.open_path(str(path))
    phase = wait_for_coarse(qtbot, window)
    if how == "escape":
        window.activateWindow()
        qtbot.keyClick(phase.canvas, Qt.Key.Key_Escape)
    elif how == "cancel button":
        phase.cancel_button.click()
    held.release()
    qtbot.waitUntil(lambda: window.canvas is not None and window.canvas.frames_presented > 0)
    assert window.coarse_phase is None and window.job is None
    assert window.session is session and session.modified and session.history.can_undo
    assert torch.equal(session.document.blocks[0].magnitude, edited)
    shown = window.canvas.view
    assert (shown.time_range, shown.freq_range, shown.colormap) == (
        view.time_range,
        view.freq_range,
        view.colormap,
    )
    assert window.editor.canvas is window.canvas
    assert window.actions_by_name["save_project"].isEnabled()
    if how == "fails":
        assert dialogs == [("Cannot open", str(failure))]
    elif how == "does not fit":
        ((title, text),) = dialogs
        assert title == "Cannot open" and text.startswith(f"cannot open '{path}': too large")
    else:
        assert not dialogs
        assert window.statusBar().currentMessage() == "Cannot open: cancelled"


@gpu
@quiet_rendercanvas
def test_a_full_picture_ready_before_the_coarse_one_is_shown_without_it(
    qtbot, tmp_path, monkeypatch, decimation_2
):
    """The coarse picture is read beside the analysis: where the analysis wins (a GPU's), the
    window shows the full picture at once and the late coarse one never appears."""
    from spectropaint.app.files.coarse_phase import CoarsePhase

    path = tmp_path / "tone.wav"
    tone_from(path, seconds=20.0)
    gate, finished = threading.Event(), threading.Event()
    real = coarse_read.read_coarse

    def late(*args, **kwargs):
        gate.wait(60)
        try:
            return real(*args, **kwargs)
        finally:
            finished.set()

    begun = []
    monkeypatch.setattr(coarse_read, "read_coarse", late)
    monkeypatch.setattr(CoarsePhase, "begin", classmethod(lambda cls, *a: begun.append(a)))
    window = open_window(qtbot, tmp_path, path)  # returns once the full document is shown
    assert window.session.document.n_samples == 20 * RATE
    gate.set()
    assert finished.wait(30)
    qtbot.wait(200)  # a late coarse picture would be delivered now
    assert not begun and window.coarse_phase is None
