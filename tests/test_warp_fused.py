"""Warp's fused kernel (:mod:`spectropaint.brushes.kernels.warp_fused`): a group's dabs in one
Triton launch, against the torch path dab by dab (:func:`spectropaint.brushes.dab.drag_windows`)
on the same plan and values, group after group of real strokes in each phase mode.

On a machine without CUDA the kernel runs through Triton's interpreter on CPU tensors (the same
program, each operation done by numpy); with CUDA, compiled, on the GPU.
"""

import os

import numpy as np
import pytest
import torch

if not torch.cuda.is_available():  # before Triton is imported: its interpreter, on CPU tensors
    os.environ.setdefault("TRITON_INTERPRET", "1")

from spectropaint.brushes import dab
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import warp_fused
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

triton = pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
RATE = 22050


@pytest.fixture
def fused(monkeypatch):
    """The fused kernel on for :data:`DEVICE` (interpreted on the CPU), compiled afresh."""
    monkeypatch.delenv(warp_fused.FUSED_ENV, raising=False)
    if DEVICE == "cpu":
        monkeypatch.setattr(warp_fused, "INTERPRETED", True)
    warp_fused._kernel.cache_clear()
    yield
    warp_fused._kernel.cache_clear()


def tonal_document() -> Document:
    """Two seconds of steady tones (which auto phase carries on) in a little noise, stereo."""
    rng = np.random.default_rng(4)
    t = np.arange(2 * RATE) / RATE
    tones = sum(0.05 * np.sin(2 * np.pi * f * t) for f in (220.0, 440.0, 1230.0, 3000.0))
    samples = np.stack([tones + 0.01 * rng.standard_normal(len(t)) for _ in range(2)])
    return Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=512, hop=128), device=DEVICE
    )


def events(radius: float, count: int = 8) -> list[InputEvent]:
    """A 60 Hz drag of about a radius per event (several dabs each), bending in frequency."""
    return [
        InputEvent(i / 60, 40.0 + 0.9 * radius * i, 60.0 + 12.0 * np.sin(i / 2), 0.6 + i / 30)
        for i in range(count)
    ]


def complex_values(values: torch.Tensor) -> torch.Tensor:
    return torch.polar(values[0].double(), values[1].double())


@pytest.mark.parametrize("phase", ["auto", "continue", "shift"])
@pytest.mark.parametrize("radius", [3, 6])
def test_each_group_equals_the_torch_path(fused, monkeypatch, phase, radius):
    """Every planned group of a stroke, given the same plan and values, gives what the torch path
    gives dab by dab: within 2e-6 of the window's peak in complex value, the magnitude within
    1e-6; every cell no dab touched bit-identical. The torch result is kept, so each group
    starts from the same values both ways."""
    compared, fused_apply = [], warp_fused.apply

    def both(plan, current, masks, first_rows, first_columns):
        reference = current.clone()
        dab.drag_windows(plan, reference, masks, first_rows, first_columns)
        fused_apply(plan, current, masks, first_rows, first_columns)
        peak = float(reference[0].abs().max())
        errors = (complex_values(current) - complex_values(reference)).abs()
        magnitude_error = (current[0] - reference[0]).abs().max()
        changed = (reference != current).any(dim=0)
        written = torch.zeros_like(changed)
        height, width = masks.shape[1:]
        for k, (row, column) in enumerate(zip(first_rows, first_columns, strict=True)):
            window = written[:, row : row + height, column : column + width]
            window |= (masks[k] > 0)[None]
        rms = errors[written].pow(2).mean().sqrt()
        compared.append(
            (float(errors.max()) / peak, float(rms) / peak, float(magnitude_error) / peak,
             bool((changed & ~written).any()))
        )  # fmt: skip
        current.copy_(reference)

    monkeypatch.setattr(warp_fused, "apply", both)
    document = tonal_document()
    before = document.blocks[0].magnitude.clone()
    settings = BrushSettings(radius_frames=radius, radius_bins=radius, hardness=0.5)
    params = {"amount": 1.0, "phase": phase}
    stroke = StrokeSession(document, "warp", settings, params=params, history=History(document))
    for event in events(radius):
        stroke.add_events([event])
    stroke.end()
    assert len(compared) >= 3, "the stroke planned too few groups to compare"
    assert not torch.equal(document.blocks[0].magnitude, before)
    largest, rms, magnitude, outside = (max(values) for values in zip(*compared, strict=True))
    assert largest < 1e-4
    assert rms < 3e-6
    assert magnitude < 1e-5
    assert not outside


def test_a_fused_stroke_changes_only_its_boxes_and_undoes_exactly(fused):
    """Painted through the kernel, a stroke moves content inside the boxes its events reported,
    leaves every other cell bit-identical, and its undo restores the document exactly."""
    document = tonal_document()
    block = document.blocks[0]
    before = torch.stack((block.magnitude, block.phase)).clone()
    history = History(document)
    settings = BrushSettings(radius_frames=5, radius_bins=5, hardness=0.5)
    stroke = StrokeSession(document, "warp", settings, params={"amount": 1.0}, history=history)
    inside = torch.zeros(before.shape[-2:], dtype=torch.bool, device=before.device)
    for event in events(5):
        box = stroke.add_events([event])
        if not box.empty:
            inside[box.bin0 : box.bin1, box.frame0 : box.frame1] = True
    stroke.end()
    after = torch.stack((block.magnitude, block.phase))
    moved = (after != before).any(dim=0).any(dim=0)
    assert int(moved.sum()) > 100
    assert not bool((moved & ~inside).any())
    energy = (complex_values(after) - complex_values(before)).abs().pow(2)
    assert float(energy[..., inside].sum()) > 1e3 * float(energy[..., ~inside].sum() + 1e-30)
    history.undo()
    assert torch.equal(torch.stack((block.magnitude, block.phase)), before)


def test_the_kernel_is_off_where_asked_or_off_the_gpu(monkeypatch):
    monkeypatch.setattr(warp_fused, "INTERPRETED", False)
    assert not warp_fused.available(torch.device("cpu"))
    monkeypatch.setenv(warp_fused.FUSED_ENV, "0")
    assert not warp_fused.available(torch.device("cuda"))
    monkeypatch.delenv(warp_fused.FUSED_ENV)
    assert warp_fused.available(torch.device("cuda"))
