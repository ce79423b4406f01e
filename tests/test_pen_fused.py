"""The pen's kernel in one GPU launch (:mod:`spectropaint.brushes.kernels.pen_fused`) against its
torch path (:func:`spectropaint.brushes.kernels.pen.pen`), on the regions real strokes give it: a
line (the window's main lobe) and a wider band, dabs alone and several an event (each cell's
centre that of the dab that painted it last); call by call and stroke by stroke. The NSGT keeps
the torch path.

On a machine without CUDA the Triton kernel runs through Triton's interpreter on CPU tensors; with
CUDA, compiled, on the GPU."""

import math

import numpy as np
import pytest
import torch
from brush_fixtures import (
    GPU,
    assert_alike_to_rounding,
    blended_apart,
    tiles_held,
    triton_fixture,
)

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import compiled_math, pen, pen_fused, triton_math
from spectropaint.brushes.kernels.context import DabContext
from spectropaint.brushes.kernels.pen import PenInto
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

RATE = 22050


@pytest.fixture(scope="module")
def document() -> Document:
    """Four seconds of two tones in a little noise, stereo: 1 400 frames, where phase ramps have
    grown over many turns, and bins 44.1 Hz apart, a step float32 does not hold exactly."""
    rng = np.random.default_rng(8)
    t = np.arange(4 * RATE) / RATE
    tones = sum(0.05 * np.sin(2 * np.pi * f * t) for f in (330.0, 2470.0))
    samples = np.stack([tones + 0.01 * rng.standard_normal(len(t)) for _ in range(2)])
    return Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=500, hop=64), device=GPU
    )


fused = triton_fixture(pen_fused)


def paint(document, radius_bins: float, *, spacing: float, frame0: float = 1200.0, brush="pen"):
    """The document's values after a pen stroke (then undone): a 60 Hz drag rising in
    frequency, ``spacing`` radii between dabs."""
    history = History(document)
    settings = BrushSettings(
        radius_frames=6, radius_bins=radius_bins, hardness=0.4, spacing=spacing
    )
    stroke = StrokeSession(document, brush, settings, params={"level_db": -20.0},
                           history=history)  # fmt: skip
    for i in range(10):
        stroke.add_events([InputEvent(i / 60, frame0 + 9.0 * i, 40.3 + 1.7 * i, 0.7)])
    stroke.end()
    values = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    history.undo()
    return values


CASES = [
    pytest.param(1.5, 0.25, id="line-fused"),  # a main lobe, several dabs an event
    pytest.param(1.5, 4.0, id="line-alone"),  # one dab an event or none: its centre, one number
    pytest.param(7.0, 0.25, id="band-fused"),  # the band's profile
]


@pytest.mark.parametrize(("radius_bins", "spacing"), CASES)
def test_each_call_equals_torch_s_pen(document, fused, monkeypatch, radius_bins, spacing):
    calls = []
    real = pen_fused.pen

    def both(magnitude, phase, params, context: DabContext):
        result = real(magnitude, phase, params, context)
        with compiled_math.SwitchesHeld({compiled_math.COMPILED_ENV: True}):  # (in a stroke)
            reference = pen.pen(magnitude, phase, None, params, context)
        calls.append((result, reference, isinstance(context.centre[1], torch.Tensor)))
        return result

    monkeypatch.setattr(pen_fused, "pen", both)
    paint(document, radius_bins, spacing=spacing, brush=blended_apart("pen"))
    assert len(calls) >= 5
    assert any(cells for *_, cells in calls) == (spacing < 1)  # per cell where dabs were fused
    for (magnitude, phase), (want_magnitude, want_phase), _ in calls:
        assert magnitude.shape == want_magnitude.shape and phase.shape == want_phase.shape
        # cells no dab's box holds have no centre (NaN in both; the blend keeps their values)
        owned = want_magnitude.isfinite()
        assert torch.equal(magnitude.isfinite(), owned) and owned.any()
        error = (magnitude - want_magnitude)[owned].abs().max()
        assert error <= 2e-6 * want_magnitude[owned].abs().max()
        apart = torch.remainder(phase - want_phase + math.pi, 2 * math.pi) - math.pi
        assert apart[owned].abs().max() < 2e-5  # (a half turn may wrap to either end)


@pytest.mark.parametrize(("radius_bins", "spacing"), CASES)
def test_a_stroke_equals_torch_s_to_float_rounding(
    document, fused, monkeypatch, radius_bins, spacing
):
    got = paint(document, radius_bins, spacing=spacing)
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    want = paint(document, radius_bins, spacing=spacing)
    before = torch.polar(document.blocks[0].magnitude.double(), document.blocks[0].phase.double())
    changed = torch.polar(want[0].double(), want[1].double()) - before
    error = torch.polar(got[0].double(), got[1].double()) - torch.polar(
        want[0].double(), want[1].double()
    )
    assert changed.abs().max() > 1e-3  # the stroke did change the document
    assert 20 * math.log10(error.abs().max() / changed.abs().max() + 1e-300) < -100


@pytest.mark.parametrize(("radius_bins", "spacing"), CASES)
def test_the_pen_blended_into_the_document_by_its_launch_equals_the_blend_s(
    document, fused, monkeypatch, radius_bins, spacing
):
    """The pen's launch crossfading its result into the document's cells its dabs hold
    (:data:`~spectropaint.brushes.kernels.pen.PenInto`) against its result blended by the fused
    blend's own launch: equal to float rounding; cells neither changed keep their values."""
    into = []
    real = PenInto.kernel
    monkeypatch.setattr(
        PenInto, "kernel", lambda *args, **kw: into.append(kw["into"]) or real(*args, **kw)
    )
    got = paint(document, radius_bins, spacing=spacing)
    assert len(into) >= 5
    assert any(owner is not None for _, owner, _ in into) == (spacing < 1)  # several dabs a group
    taken = len(into)
    want = paint(document, radius_bins, spacing=spacing, brush=blended_apart("pen"))
    assert len(into) == taken  # (that stroke blended apart)
    before = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase])
    assert_alike_to_rounding(got, want, before)


@pytest.mark.parametrize(("radius_bins", "spacing"), CASES)
def test_the_pen_reading_its_starting_values_where_they_lie_equals_it_reading_their_copy(
    document, fused, monkeypatch, radius_bins, spacing
):
    """A group's pen reads its box's starting values in its own launch, from the stroke's kept
    tiles and elsewhere the document (:class:`~spectropaint.brushes.kernels.originals_fused.
    Kept`), instead of a gathered copy of the box: the stroke's result is the same bit for bit.
    Later events read tiles earlier ones kept, each group the tiles its own record just kept (from
    their copies)."""
    kept, held = [], []

    def recorded(*args, **kw):
        kept.append(kw.get("kept"))
        held.append(tiles_held(kw.get("kept")))
        return real(*args, **kw)

    real = PenInto.kernel
    monkeypatch.setattr(PenInto, "kernel", recorded)
    got = paint(document, radius_bins, spacing=spacing)
    assert len(kept) >= 5 and None not in kept  # every group read them where they lie
    assert min(held) > 0  # (each group found tiles kept: its own record's, earlier ones')
    monkeypatch.setattr(PenInto, "reads_kept", False)
    kept.clear()
    want = paint(document, radius_bins, spacing=spacing)
    assert kept and set(kept) == {None}  # (that stroke read the gathered copies)
    assert torch.equal(got, want)


def test_it_is_for_cuda_on_an_stft_and_turned_off_by_the_compiled_switch(monkeypatch):
    pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")
    monkeypatch.setattr(triton_math, "INTERPRETED", False)
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    stft = DabContext(inner=(slice(0, 1), slice(0, 1)), bin_hz=torch.zeros(1),
                      frames=torch.zeros(1), hop=64, sample_rate=RATE, radius=(1.0, 1.0),
                      bins=torch.zeros(1), band_step_hz=43.0)  # fmt: skip
    cuda = torch.device("cuda")
    assert pen_fused.available(cuda, stft)
    assert not pen_fused.available(torch.device("cpu"), stft)
    uneven = DabContext(**{**stft.__dict__, "band_step_hz": None})
    assert not pen_fused.available(cuda, uneven)
    shared = DabContext(**{**stft.__dict__, "frame_weight": torch.ones(1)})
    assert not pen_fused.available(cuda, shared)  # the NSGT's bands
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    assert not pen_fused.available(cuda, stft)
