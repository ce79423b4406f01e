"""When the device runs out of memory during a dab, an analysis or a resynthesis, the work carries on
on the CPU with one notice, and gives the result the CPU would have given.

On machines without CUDA, ``torch.OutOfMemoryError`` is injected into a kernel, the analysis or the
inverse; the document is on the CPU already, so the retry must give bit-identical results. The CUDA
tests cause real out-of-memory errors by filling the GPU (run them with
``python -m pytest tests/test_cuda_fallback.py`` on a machine with CUDA).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import sys

import numpy as np
import pytest
import torch
from brush_fixtures import RATE, small_document

from spectropaint.brushes.engine import paint
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import warp_compiled
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFT, STFTSettings
from spectropaint.transforms.torch_device import choose_device

SETTINGS = BrushSettings(radius_frames=8, radius_bins=6)
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def line(n: int = 30) -> list[InputEvent]:
    return [
        InputEvent(i / 60, 20 + 140 * i / (n - 1), 30 + 60 * i / (n - 1), 0.7) for i in range(n)
    ]


def grids(document) -> torch.Tensor:
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).cpu()


def fails_once(function, *, on_call: int):
    """``function`` that raises ``torch.OutOfMemoryError`` on its ``on_call``-th call only."""
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(None)
        if len(calls) == on_call:
            raise torch.OutOfMemoryError("CUDA out of memory (injected by the test)")
        return function(*args, **kwargs)

    wrapped.calls = calls
    return wrapped


def heard(document) -> list[str]:
    messages: list[str] = []
    document.notices.connect(messages.append)
    return messages


# --------------------------------------------------------------------------- injected (any machine)
def test_a_stroke_moves_its_state_only_when_the_document_changed_device(monkeypatch):
    """Before each group of dabs the stroke's state follows the document's device, compared with
    what its tensors say; a device named otherwise (``cpu:0``; ``cuda`` for ``cuda:0``) is named as
    they say when chosen. Taken for another, every tile was moved at every group: 128,575 calls in
    one stroke on the H200."""
    assert choose_device("cpu:0") == torch.zeros(1, device="cpu:0").device
    document = small_document(device="cpu:0")
    moved = []
    to = torch.Tensor.to

    def spy(tensor, *args, **kwargs):
        if sys._getframe(1).f_code.co_name == "follow":
            moved.append(args)
        return to(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", spy)
    paint(document, "gain", line(), SETTINGS)
    assert document.blocks[0].edited_frames.any()
    assert moved == []


@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_a_dab_that_runs_out_of_memory_is_applied_again_bit_for_bit(monkeypatch, brush):
    # a dragging brush's plan fails here: torch's plan, not the CPU's compiled kernel
    monkeypatch.setenv(warp_compiled.FUSED_ENV, "0")
    reference = small_document()
    original = grids(reference)
    paint(reference, brush, line(), SETTINGS)

    document = small_document()
    messages = heard(document)
    kind = BRUSHES[brush]
    if kind.plan is not None:  # a dragging brush's groups of several dabs go through its plan
        failing = dataclasses.replace(kind, plan=fails_once(kind.plan, on_call=3))
        calls = failing.plan.calls
    else:
        failing = dataclasses.replace(kind, kernel=fails_once(kind.kernel, on_call=3))
        calls = failing.kernel.calls
    history = History(document)
    paint(document, failing, line(), SETTINGS, history=history)

    assert len(calls) > 3, "the stroke stopped at the failure"
    assert torch.equal(grids(document), grids(reference))
    assert messages == [f"out of memory while painting with {brush}; SpectroPaint tried once more"]
    history.undo()
    assert torch.equal(grids(document), original)


def test_an_analysis_that_runs_out_of_memory_restarts_and_progress_never_goes_back(monkeypatch):
    reference = small_document(seconds=6.0)
    samples = reference.audio.samples
    monkeypatch.setattr(
        STFT, "analyse_frames", fails_once(STFT.analyse_frames, on_call=3)
    )  # after two of the six chunks
    seen: list[float] = []
    document = Document.from_samples(
        samples, RATE, settings=reference.settings, device="cpu", progress=seen.append
    )

    assert torch.equal(grids(document), grids(reference))
    assert document.notices.emitted == [
        "out of memory while analysing the audio; SpectroPaint tried once more"
    ]
    assert seen == sorted(seen) and seen[-1] == 1.0
    assert len(seen) > len(set(seen)), "the restart reported no held value"


def test_a_resynthesis_that_runs_out_of_memory_gives_the_same_samples(monkeypatch):
    document = small_document()
    paint(document, "pen", line(), SETTINGS)
    start, expected = document.edited_span(0, document.blocks[0].n_frames)
    messages = heard(document)
    monkeypatch.setattr(STFT, "synthesise_frames", fails_once(STFT.synthesise_frames, on_call=1))

    again_start, again = document.edited_span(0, document.blocks[0].n_frames)

    assert again_start == start and np.array_equal(again, expected)
    assert messages == ["out of memory while resynthesising; SpectroPaint tried once more"]


def test_a_second_failure_in_a_row_is_raised_not_retried_forever(monkeypatch):
    document = small_document()
    paint(document, "gain", line(), SETTINGS)

    def always(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory (injected by the test)")

    monkeypatch.setattr(STFT, "synthesise_frames", always)
    with pytest.raises(torch.OutOfMemoryError):
        document.edited_span(0, 40)
    assert len(document.notices.emitted) == 1


def test_other_errors_pass_unchanged_and_library_allocation_failures_count(monkeypatch):
    document = small_document()
    paint(document, "gain", line(), SETTINGS)
    start, expected = document.edited_span(0, 40)
    synthesise = STFT.synthesise_frames
    errors = [RuntimeError("shapes do not match"), RuntimeError("cuFFT error: CUFFT_ALLOC_FAILED")]

    def fails_first(*args, **kwargs):
        if errors:
            raise errors.pop(0)
        return synthesise(*args, **kwargs)

    monkeypatch.setattr(STFT, "synthesise_frames", fails_first)
    with pytest.raises(RuntimeError, match="shapes do not match"):
        document.edited_span(0, 40)
    assert document.notices.emitted == []
    again_start, again = document.edited_span(0, 40)
    assert again_start == start and np.array_equal(again, expected)
    assert document.notices.emitted == [
        "out of memory while resynthesising; SpectroPaint tried once more"
    ]


def test_a_listener_connected_late_hears_earlier_notices_once():
    document = small_document()
    document.notices.emit("first")
    messages = heard(document)
    document.notices.emit("second")
    assert messages == ["first", "second"]


# ---------------------------------------------------------------------------------- real CUDA
@contextlib.contextmanager
def full_gpu(leave_bytes: int = 0):
    """Allocate the GPU's memory until less than ``leave_bytes`` plus one small block is left."""
    hoard, size = [], 1 << 30
    leave_bytes = max(leave_bytes, 0)
    torch.cuda.empty_cache()  # earlier tests' cached blocks would count as free but not be taken
    try:
        while size >= 1 << 12:
            free, _ = torch.cuda.mem_get_info()
            if free - size < leave_bytes:
                size //= 2
                continue
            try:
                hoard.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                size //= 2
        yield
    finally:
        hoard.clear()
        torch.cuda.empty_cache()


def cuda_document(seconds: float = 20.0) -> Document:
    samples = 0.1 * np.random.default_rng(1).standard_normal((2, int(22050 * seconds)))
    return Document.from_samples(samples, 22050, settings=STFTSettings(), device="cuda")


def close_to(a: torch.Tensor, b: torch.Tensor) -> bool:
    magnitude = (a[0] - b[0]).abs().max() <= 1e-4 * b[0].abs().max()
    loud = b[0] > 1e-3 * b[0].max()
    phase = torch.remainder(a[1] - b[1] + np.pi, 2 * np.pi) - np.pi
    return bool(magnitude) and bool(phase[loud].abs().max() < 1e-3)


@needs_cuda
def test_real_oom_while_painting_moves_the_document_to_the_cpu():
    document = cuda_document()
    original = grids(document)
    reference = cuda_document()
    settings = BrushSettings(radius_frames=96, radius_bins=96)
    paint(reference, "blur", line(), settings)
    messages = heard(document)
    history = History(document)
    with full_gpu():
        paint(document, "blur", line(), settings, history=history)
    assert document.device.type == "cpu" and document.blocks[0].magnitude.device.type == "cpu"
    assert messages == [
        "CUDA ran out of memory while painting with blur; SpectroPaint continues on the CPU (slower)"
    ]
    assert close_to(grids(document), grids(reference))
    history.undo()
    assert torch.equal(grids(document), original)


@needs_cuda
def test_real_oom_while_resynthesising_moves_the_document_to_the_cpu():
    document = cuda_document()
    block = document.blocks[0]
    everything = Region(0, block.n_bins, 0, block.n_frames, (0, 1))
    magnitude, phase = document.read(everything)
    document.write(everything, magnitude * 0.5, phase)
    start, expected = document.edited_span(0, block.n_frames)
    with full_gpu():
        again_start, again = document.edited_span(0, block.n_frames)
    assert document.device.type == "cpu"
    assert document.notices.emitted[-1].startswith("CUDA ran out of memory while resynthesising")
    assert again_start == start
    assert np.abs(again - expected).max() < 1e-5  # CUDA's and the CPU's FFTs round differently


@needs_cuda
def test_a_document_too_big_for_the_free_gpu_memory_opens_on_the_cpu():
    samples = 0.1 * np.random.default_rng(2).standard_normal((2, 22050 * 30))
    with full_gpu(leave_bytes=16 << 20):
        document = Document.from_samples(samples, 22050, device="cuda")
    assert document.device.type == "cpu"
    assert "SpectroPaint works on the CPU" in document.notices.emitted[0]
    reference = Document.from_samples(samples, 22050, device="cpu")
    assert torch.equal(grids(document), grids(reference))


@needs_cuda
def test_real_oom_while_analysing_restarts_on_the_cpu():
    samples = 0.1 * np.random.default_rng(3).standard_normal((2, 22050 * 60))
    gc.collect()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_reserved()
    total = torch.cuda.get_device_properties(0).total_memory
    # room for the samples and half the coefficients: the free-memory check (which does not know
    # this cap) passes, and the allocator fails once the analysis has begun
    cap = base + samples.size * 4 + 1025 * (1 + samples.shape[1] // 512) * 2 * 4
    torch.cuda.set_per_process_memory_fraction(cap / total)
    try:
        document = Document.from_samples(samples, 22050, device="cuda")
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()
    assert document.device.type == "cpu"
    assert document.notices.emitted == [
        "CUDA ran out of memory while analysing the audio; SpectroPaint continues on the CPU (slower)"
    ]
    reference = Document.from_samples(samples, 22050, device="cpu")
    assert torch.equal(grids(document), grids(reference))
