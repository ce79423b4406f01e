"""Warming up the brushes' GPU kernels before the first stroke: every brush is painted once per
device on a scratch document, a failure is logged and skipped, and the CPU needs only the kernels
Numba compiles (warp's and the clone's); the host's planning loops are compiled first on either."""

import logging

import numpy as np
import pytest
import torch
from exit_probe import printed_before_a_clean_exit

from spectropaint.brushes import mask_compiled, plan_compiled
from spectropaint.brushes import warm_up as warm_up_module
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.kernels import compiled_math, coverage_fused, triton_math, warp_fused
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.brushes.warm_up import warm_up, warm_up_later
from spectropaint.transforms.document import Document


def test_every_brush_is_painted_once_per_device(monkeypatch):
    monkeypatch.setattr(warm_up_module, "_warm", set())
    assert warm_up("cpu") == []  # the CPU loads no kernels lazily: nothing to do
    assert warm_up("cpu", every_device=True) == list(BRUSHES)
    assert warm_up("cpu", every_device=True) == []  # once per device


def test_a_brush_that_blends_into_the_document_itself_is_painted_blended_apart_too(monkeypatch):
    """Its kernels' other path (the fused blend's, the filter's stacked sum), which the NSGT's
    paired blocks take, compiles at the warm-up too, not part way through such a stroke."""
    monkeypatch.setattr(warm_up_module, "_warm", set())
    real, kinds = warm_up_module.StrokeSession, []

    def session(document, kind, *args, **kwargs):
        kinds.append(kind)
        return real(document, kind, *args, **kwargs)

    monkeypatch.setattr(warm_up_module, "StrokeSession", session)
    assert warm_up("cpu", every_device=True) == list(BRUSHES)
    own = [name for name, kind in BRUSHES.items() if kind.blends_into is not None]
    assert set(own) == {"blur", "filter", "pen", "clone"}
    sizes = {name: len(radii) for name, radii in warm_up_module.RADII.items()}
    assert [kind.name for kind in kinds] == [
        n for n in BRUSHES for _ in range((1 + (n in own)) * sizes.get(n, 1))
    ]
    apart = [kind for kind in kinds if kind.blends_into is None]
    assert [kind.name for kind in apart if kind is not BRUSHES[kind.name]] == own


def test_a_brush_that_fails_is_logged_and_the_others_still_warm(monkeypatch, caplog):
    monkeypatch.setattr(warm_up_module, "_warm", set())
    real = warm_up_module.StrokeSession

    def session(document, kind, *args, **kwargs):
        if kind.name == "blur":
            raise RuntimeError("no blur today")
        return real(document, kind, *args, **kwargs)

    monkeypatch.setattr(warm_up_module, "StrokeSession", session)
    with caplog.at_level(logging.ERROR):
        painted = warm_up("cpu", every_device=True)
    assert painted == [name for name in BRUSHES if name != "blur"]
    assert "warming up the blur brush" in caplog.text


def test_a_cpu_document_compiles_only_the_compiled_brushes_on_a_thread_and_is_left_as_it_was(
    monkeypatch,
):
    monkeypatch.setattr(warm_up_module, "_warm", set())
    painted = []
    monkeypatch.setattr(warm_up_module, "warm_up", lambda *a, **k: painted.append((a, k)))
    samples = np.random.default_rng(1).standard_normal((2, 22050)) * 0.1
    document = Document.from_samples(samples, 44100, device="cpu")
    revision = document.revision
    plan_compiled.loops.cache_clear()  # (loops not compiled yet)
    mask_compiled.loops.cache_clear()
    mask_compiled._planned.cache_clear()
    mask_compiled._packed.cache_clear()
    thread = warm_up_later(document)
    thread.join(timeout=60)
    if compiled_math.wanted(document.device):
        assert painted == [((document.device,),
                            {"every_device": True, "brushes": ("clone", "warp")})]  # fmt: skip
        planning = plan_compiled.loops()  # the planning's loops compiled before any stroke
        inner = {"distances", "windows", "own_cells"}  # (compiled into the calls making arrays)
        called = [*plan_compiled.PLAIN_LOOPS.keys() - inner, *plan_compiled.MAKERS]
        assert all(getattr(planning, name).signatures for name in called)
        assert all(loop.signatures for loop in mask_compiled.loops())  # and the weights'
        assert mask_compiled._planned().signatures  # and their call with the planning's
        assert mask_compiled._packed().signatures  # and the distances' packing for a launch
    assert document.revision == revision and not document.is_edited
    painted.clear()
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")  # the brushes' compiled code turned off
    warm_up_later(document).join(timeout=60)
    assert painted == []


def test_a_warm_up_running_as_the_interpreter_exits_ends_at_its_next_step_and_exit_is_clean():
    """A window closed in its first seconds left the warm-up painting on its daemon thread: the
    interpreter's exit tore torch down under it and the process aborted ("terminate called
    without an active exception", status 134). Here its first step stays inside torch's calls
    for a second while the main thread ends: the exit waits for that step, and runs no other."""
    script = """
        import threading, time
        import numpy as np, torch
        from spectropaint.brushes import mask_compiled, plan_compiled, warm_up
        from spectropaint.transforms.document import Document
        inside = threading.Event()

        def in_torch():  # (each call releases the GIL, as a stroke's do)
            inside.set()
            values, end = torch.arange(1 << 16), time.monotonic() + 1.0
            while time.monotonic() < end:
                torch.remainder(values, 7)
            print("step ended", flush=True)

        plan_compiled.compile_loops = in_torch
        mask_compiled.compile_loops = lambda: print("next step ran", flush=True)
        warm_up.warm_up_later(Document.from_samples(np.zeros((1, 4410)), 44100, device="cpu"))
        inside.wait()
        print("main thread ends", flush=True)
        """
    assert printed_before_a_clean_exit(script) == ["main thread ends", "step ended"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_after_the_warm_up_no_warp_stroke_meets_a_kernel_variant_not_launched_yet(monkeypatch):
    """Warp's launch has a program for windows of each size (:data:`~spectropaint.brushes.
    kernels.warp_fused.PROGRAMS`), each compiled apart: the warm-up paints each, so that strokes
    of small and large brushes alike find their variant launched (compiled) already."""
    monkeypatch.setattr(warm_up_module, "_warm", set())
    assert warm_up("cuda", brushes=("warp",)) == ["warp"]

    def variants() -> set:
        return set(triton_math._compiled[id(warp_fused._kernel())][1])

    warmed = variants()
    assert {dict(key[1:])["BLOCK"] for key in warmed} == {block for _, block, _ in
                                                          warp_fused.PROGRAMS}  # fmt: skip
    samples = np.random.default_rng(2).standard_normal((2, 88200)) * 0.1
    document = Document.from_samples(samples, 44100, device="cuda")
    for radius in (3.0, 8.0, 12.0, 16.0, 32.0, 48.0):
        stroke = StrokeSession(document, "warp", BrushSettings(radius_frames=radius,
                                                               radius_bins=radius))  # fmt: skip
        for i in range(4):
            stroke.add_events([InputEvent(i / 60, 60.0 + 3 * radius * i, 300.0, 0.8)])
        stroke.abort()
    assert variants() == warmed


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_warm_up_launches_the_coverage_s_raise_that_wide_stamping_strokes_take(monkeypatch):
    """The launch that raises a wide stamping stroke's coverage (:mod:`~spectropaint.brushes.
    kernels.coverage_fused`) is compiled by the warm-up, not part way through such a stroke."""
    monkeypatch.setattr(warm_up_module, "_warm", set())
    coverage_fused._kernel.cache_clear()
    assert not triton_math.launched(coverage_fused._kernel())
    assert warm_up("cuda", brushes=("gain",)) == ["gain"]
    assert triton_math.launched(coverage_fused._kernel())


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas")
def test_the_window_starts_the_warm_up_once_its_first_frame_shows(qtbot, tmp_path, monkeypatch):
    from gui_fixtures import open_window, write_test_sound

    from spectropaint.app.window import canvas_widget

    started = []
    monkeypatch.setattr(canvas_widget, "warm_up_later", started.append)
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    window = open_window(qtbot, tmp_path, path)
    assert started == [window.session.document]  # at the first frame, with what it shows
    canvas, shown = window.canvas, window.canvas.frames_presented
    canvas.request_draw()
    qtbot.waitUntil(lambda: canvas.frames_presented > shown)
    assert started == [window.session.document]  # and never again
