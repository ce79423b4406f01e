"""The clone's kernels against torch's path (:func:`spectropaint.brushes.kernels.clone.clone`), on
the regions real strokes give them: compiled for the CPU
(:mod:`spectropaint.brushes.kernels.clone_compiled`) and in one GPU launch
(:mod:`spectropaint.brushes.kernels.clone_fused`); in each phase mode, with the source partly past
the grid, with an offset beyond :data:`~spectropaint.brushes.kernels.clone_compiled.WIDE_OFFSET`;
call by call and stroke by stroke.

On a machine without CUDA the Triton kernel runs through Triton's interpreter on CPU tensors (its
documents on the CPU); with CUDA, compiled, on the GPU."""

import contextlib
import dataclasses
import math
import os

import numpy as np
import pytest
import torch
from brush_fixtures import (
    assert_alike_to_rounding,
    blended_apart,
    gathered,
    tiles_held,
    triton_kernel_on,
)

if not torch.cuda.is_available():  # before Triton is imported: its interpreter, on CPU tensors
    os.environ.setdefault("TRITON_INTERPRET", "1")

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import (
    clone,
    clone_compiled,
    clone_fused,
    compiled_math,
    triton_math,
)
from spectropaint.brushes.kernels.clone import CloneInto
from spectropaint.brushes.kernels.context import Source
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

RATE = 22050
SOURCE_READS_KEPT = clone_fused.reads_kept
CPU = torch.device("cpu")
GPU = torch.device("cuda" if torch.cuda.is_available() else "cpu")
"""Where the Triton kernel runs (interpreted on the CPU)."""


@pytest.fixture(scope="module", params=["compiled", "fused"])
def kernel(request):
    """Each kernel, and the device of its documents."""
    return (clone_compiled, CPU) if request.param == "compiled" else (clone_fused, GPU)


@pytest.fixture(scope="module")
def document(kernel) -> Document:
    """Fourteen seconds of steady tones (which auto phase carries on) in a little noise, stereo:
    2 412 frames, so a source 2 200 frames back lies in the grid."""
    rng = np.random.default_rng(6)
    t = np.arange(14 * RATE) / RATE
    tones = sum(0.05 * np.sin(2 * np.pi * f * t) for f in (220.0, 440.0, 1230.0, 3000.0))
    samples = np.stack([tones + 0.01 * rng.standard_normal(len(t)) for _ in range(2)])
    return Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=512, hop=128), device=kernel[1]
    )


@pytest.fixture
def on(kernel, monkeypatch):
    """The kernel on (the fused one alone, and interpreted, on the CPU; the compiled one with no
    Triton kernel, as a CPU runs it); itself. Interpreted, the fused kernel reads gathered copies
    of a stroke's starting values, not the values where they lie: those reads cost the
    interpreter some twenty operations a read where a copy's cost one, and the clone reads some
    thirty a block of columns (:func:`reading_where_they_lie` turns them on)."""
    module, device = kernel
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    fused = module is clone_fused
    with triton_kernel_on(monkeypatch, clone_fused, device) if fused else contextlib.nullcontext():
        if fused and device == CPU:
            monkeypatch.setattr(clone_compiled, "available", lambda device: False)
            reading_where_they_lie(monkeypatch, False)
        if not module.available(device):
            pytest.fail(f"{module.__name__} must be there (pyproject.toml)")
        yield module


def reading_where_they_lie(monkeypatch, on: bool) -> None:
    """The fused kernel reading a group's starting values, and its source's, where they lie
    (:attr:`~spectropaint.brushes.kernels.clone.CloneInto.reads_kept`), or from gathered copies."""
    monkeypatch.setattr(CloneInto, "reads_kept", on)
    monkeypatch.setattr(clone_fused, "reads_kept", SOURCE_READS_KEPT if on else lambda: False)


def copied(source, region: tuple[int, int, int]):
    """A source that the fused kernel reads where it lies (:attr:`~spectropaint.brushes.kernels.
    context.Source.kept`) as torch's path takes it, for the ``[C, Bm, Tm]`` region: its values
    ``[C, Bm, Tm + 1]`` gathered in the grid, 0 past it but for the phase of the frame before the
    grid's first, extrapolated from the two after it; where its cells lie in the grid; each row's
    frequency, the nearest row's in the grid past it."""
    channels, n_rows, width = region
    row0, row1, column0, column1 = source.grid or (0, n_rows, 0, width + 1)
    values = torch.zeros((2, channels, n_rows, width + 1), device=source.bin_hz.device)
    if row0 < row1 and column0 < column1:  # (else wholly past the grid)
        values[:, :, row0:row1, column0:column1] = gathered(source.kept.moved(row0, column0))
    if column0 >= 1 and column0 + 1 < width + 1:
        values[1, ..., column0 - 1] = 2 * values[1, ..., column0] - values[1, ..., column0 + 1]
    valid = torch.zeros(values.shape[-2:], dtype=torch.bool, device=values.device)
    valid[row0:row1, column0:column1] = True
    nearest = (torch.arange(n_rows) - row0).clamp(0, max(row1 - row0 - 1, 0))
    return Source(values[0], values[1], None if source.grid is None else valid[:, 1:],
                  source.bin_hz[nearest.to(source.bin_hz.device)])  # fmt: skip


def drag(frame0: float, count: int = 10) -> list[InputEvent]:
    """A 60 Hz drag of several dabs an event, bending in frequency."""
    return [
        InputEvent(i / 60, frame0 + 7.0 * i, 60.0 + 15.0 * math.sin(i / 2), 0.6 + i / 30)
        for i in range(count)
    ]


def paint(document, params, frame0, radius=8, brush="clone", events=10):
    """The document's values after a clone stroke of ``events`` events (then undone)."""
    history = History(document)
    settings = BrushSettings(radius_frames=radius, radius_bins=radius, hardness=0.5)
    stroke = StrokeSession(document, brush, settings, params=params, history=history)
    for event in drag(frame0, events):
        stroke.add_events([event])
    stroke.end()
    values = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    history.undo()
    return values


CASES = [  # (offsets of whole multiples of n_fft / hop carry a bin's centre by whole turns)
    pytest.param({"offset_frames": -41, "offset_bins": 3, "phase": "auto"}, 300, id="auto"),
    pytest.param(
        {"offset_frames": -43, "offset_bins": -2, "phase": "continue"}, 300, id="continue"
    ),
    pytest.param({"offset_frames": 25, "offset_bins": 0, "phase": "shift"}, 300, id="shift"),
    pytest.param({"offset_frames": -61, "offset_bins": 5, "phase": "auto"}, 20, id="past-the-grid"),
    pytest.param({"offset_frames": -2201, "offset_bins": 0, "phase": "auto"}, 2300, id="wide"),
]


@pytest.mark.parametrize(("params", "frame0"), CASES)
def test_each_call_equals_torch_s_clone(document, on, monkeypatch, params, frame0):
    calls = []
    real = on.clone

    def both(magnitude, phase, kernel_params, context):
        result = real(magnitude, phase, kernel_params, context)
        if context.source.kept is not None:  # (torch's path reads the source's values)
            source = copied(context.source, magnitude.shape)
            context = dataclasses.replace(context, source=source)
        with compiled_math.SwitchesHeld({compiled_math.COMPILED_ENV: True}):  # (in a stroke)
            reference = clone.clone(magnitude, phase, None, kernel_params, context)
        calls.append((result, reference, context.source.valid))
        return result

    monkeypatch.setattr(on, "clone", both)
    paint(document, params, frame0, brush=blended_apart("clone"))
    assert len(calls) >= 8
    invalid = 0
    for (magnitude, phase), (want_magnitude, want_phase), valid in calls:
        assert magnitude.shape == want_magnitude.shape and phase.shape == want_phase.shape
        assert torch.equal(magnitude, want_magnitude)  # copied, or the cell's own
        apart = torch.remainder(phase - want_phase + math.pi, 2 * math.pi) - math.pi
        assert apart.abs().max() < 2e-5  # (a half turn may wrap to either end)
        invalid += 0 if valid is None else int((~valid).sum())
    if params["offset_frames"] == -61:
        assert invalid > 0  # the case does reach past the grid


@pytest.mark.parametrize(("params", "frame0"), CASES)
def test_a_stroke_equals_torch_s_to_float_rounding(document, on, monkeypatch, params, frame0):
    # (interpreted, each of the fused kernel's events costs a second or more: six of them, whose
    # groups the test above compares call by call)
    events = 6 if on is clone_fused and GPU.type == "cpu" else 10
    got = paint(document, params, frame0, events=events)
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    want = paint(document, params, frame0, events=events)
    changed = torch.polar(want[0].double(), want[1].double()) - torch.polar(
        document.blocks[0].magnitude.double(), document.blocks[0].phase.double()
    )
    error = torch.polar(got[0].double(), got[1].double()) - torch.polar(
        want[0].double(), want[1].double()
    )
    assert changed.abs().max() > 1e-3  # the stroke did change the document
    assert 20 * math.log10(error.abs().max() / changed.abs().max() + 1e-300) < -100


def test_the_compiled_kernel_is_for_the_cpu_and_turned_off_by_its_variable(monkeypatch):
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    assert clone_compiled.available(CPU)
    assert not clone_compiled.available(torch.device("meta"))
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    assert not clone_compiled.available(CPU)


def test_the_fused_kernel_is_for_cuda_and_turned_off_by_the_compiled_switch(monkeypatch):
    pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")
    monkeypatch.setattr(triton_math, "INTERPRETED", False)
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    assert not clone_fused.available(CPU)
    assert clone_fused.available(torch.device("cuda"))
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    assert not clone_fused.available(torch.device("cuda"))


def test_the_clone_blended_into_the_document_by_its_launch_equals_the_blend_s(
    document, on, monkeypatch
):
    """The clone's launch crossfading its result into the document
    (:data:`~spectropaint.brushes.kernels.clone.CloneInto`, where Triton's kernel runs) against
    its result blended apart: equal to float rounding; cells neither changed keep their values.
    The CPU's compiled kernel blends apart either way."""
    params, frame0 = CASES[3].values  # auto, its source partly past the grid
    into = []
    real = CloneInto.kernel
    monkeypatch.setattr(
        CloneInto, "kernel", lambda *args, **kw: into.append(kw["into"]) or real(*args, **kw)
    )
    got = paint(document, params, frame0)
    taken = len(into)
    assert taken >= 8 if on is clone_fused else taken == 0
    want = paint(document, params, frame0, brush=blended_apart("clone"))
    assert len(into) == taken  # (that stroke blended apart)
    before = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase])
    assert_alike_to_rounding(got, want, before)


@pytest.mark.parametrize("kernel", ["fused"], indirect=True)
@pytest.mark.parametrize(
    ("params", "frame0", "events"),
    [(*CASES[0].values, 6), (CASES[3].values[0], 60, 6)],  # (the second's source enters the grid)
)
def test_the_clone_reading_its_values_where_they_lie_equals_it_reading_their_copies(
    document, on, monkeypatch, params, frame0, events
):
    """A group's fused launch reads its region's starting values, and once the kernel has run
    its source's, from the stroke's kept tiles and elsewhere the document
    (:class:`~spectropaint.brushes.kernels.originals_fused.Kept`), instead of gathered copies: the
    stroke's result is the same bit for bit, its source in the grid or partly past it (read in
    the grid alone)."""
    reading_where_they_lie(monkeypatch, True)
    kept, sources, held, past = [], [], [], []

    def recorded(magnitude, phase, params, context, **kw):
        kept.append(kw.get("kept"))
        sources.append(context.source.kept)
        past.append(context.source.kept is not None and context.source.grid is not None)
        held.append(tiles_held(kw.get("kept")))
        return real(magnitude, phase, params, context, **kw)

    real = CloneInto.kernel
    monkeypatch.setattr(CloneInto, "kernel", recorded)
    got = paint(document, params, frame0, events=events)
    assert len(kept) >= 6 and max(held) > 0
    assert any(found is not None for found in sources)
    if frame0 < 100:  # (the source partly past the grid's start: read in the grid there too)
        assert any(past)
    reading_where_they_lie(monkeypatch, False)
    kept.clear()
    sources.clear()
    want = paint(document, params, frame0, events=events)
    assert kept and set(kept) == {None} and set(sources) == {None}  # (the gathered copies)
    assert torch.equal(got, want)
