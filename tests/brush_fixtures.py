"""The small noise document the brush tests paint on (16 kHz, n_fft 256, hop 64), a stroke's
values on it (:func:`painted_values`), and a Triton kernel turned on for a test: on a machine without CUDA, through Triton's interpreter on CPU tensors
(``TRITON_INTERPRET=1``, set here before Triton is first imported); with CUDA, compiled, on the GPU
(:data:`GPU`)."""

import math
import os
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pytest
import torch

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import originals_fused
from spectropaint.brushes.registry import BRUSHES, BrushKind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

RATE = 16000
GPU = torch.device("cuda" if torch.cuda.is_available() else "cpu")
"""Where the Triton kernels run in the tests (interpreted on the CPU)."""
if not torch.cuda.is_available():  # before Triton is imported: its interpreter, on CPU tensors
    os.environ.setdefault("TRITON_INTERPRET", "1")


def small_document(seconds=1.0, channels=2, seed=0, device="cpu"):
    samples = 0.1 * np.random.default_rng(seed).standard_normal((channels, int(RATE * seconds)))
    return Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=256, hop=64), device=device
    )


def painted_values(
    document, brush: str | BrushKind, params: dict, *, radii=(5, 4), events=12,
    start=(100.0, 30.0), step=(3.3, 0.8),
) -> torch.Tensor:  # fmt: skip
    """The document's values ``[2, C, B, T]`` after a stroke of ``brush`` (a name or a
    :class:`~spectropaint.brushes.registry.BrushKind`; then undone, checked
    to restore them exactly): ``events`` moves 1/60 s apart from ``start`` by ``step`` (frames,
    bins) each, of a brush of ``radii`` (frames, bins), dabs fused a few an event."""
    history = History(document)
    before = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    settings = BrushSettings(radius_frames=radii[0], radius_bins=radii[1], hardness=0.5,
                             spacing=0.25)  # fmt: skip
    stroke = StrokeSession(document, brush, settings, params=params, history=history)
    for i in range(events):
        at = (start[0] + step[0] * i, start[1] + step[1] * i)
        stroke.add_events([InputEvent(i / 60, *at, 0.8)])
    stroke.end()
    values = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    history.undo()
    after = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase])
    assert torch.equal(after, before)
    return values


def unscaled(name: str) -> BrushKind:
    """The brush ``name`` through its kernel, each group's originals read and blended (a scaling
    brush's one launch, :attr:`~spectropaint.brushes.registry.BrushKind.scale`, off)."""
    return replace(BRUSHES[name], scale=None)


def assert_alike_to_rounding(got: torch.Tensor, want: torch.Tensor, before: torch.Tensor) -> None:
    """Two strokes' values ``[2, C, B, T]`` (magnitude, phase) from the values ``before``: the
    stroke changed them, ``got`` lies within -100 dB of the change from ``want`` as complex
    numbers, and the cells ``want`` left as they were are ``got``'s too, exactly."""
    changed = torch.polar(want[0].double(), want[1].double()) - torch.polar(
        before[0].double(), before[1].double()
    )
    error = torch.polar(got[0].double(), got[1].double()) - torch.polar(
        want[0].double(), want[1].double()
    )
    assert changed.abs().max() > 1e-3
    assert 20 * math.log10(error.abs().max() / changed.abs().max() + 1e-300) < -100
    untouched = (want == before).all(dim=0)
    assert untouched.any() and torch.equal(got[:, untouched], want[:, untouched])


def blended_apart(name: str) -> BrushKind:
    """The brush ``name`` with its kernel's result blended into the document by the fused blend's
    own launch (the brush's launches that blend it themselves,
    :attr:`~spectropaint.brushes.registry.BrushKind.blends_into`, off)."""
    return replace(BRUSHES[name], blends_into=None)


def gathered(original) -> torch.Tensor:
    """Starting values ``[2, C, B, T]``: as given, or gathered from where they lie (a
    :class:`~spectropaint.brushes.kernels.originals_fused.Kept`, which the fused kernels read),
    for torch's path to read as tensors."""
    if isinstance(original, torch.Tensor):
        return original
    like = original.document[0]
    out = torch.empty((2, *original.shape), dtype=like.dtype, device=like.device)
    return originals_fused.gather(out, original)


def tiles_held(found) -> int:
    """How many kept tiles the table that ``found`` (a :class:`~spectropaint.brushes.kernels.
    originals_fused.Kept`; anything else holds none) reads them through holds now."""
    if not isinstance(found, originals_fused.Kept):
        return 0
    return int(torch.count_nonzero(found.places[0]))


@contextmanager
def triton_kernel_on(monkeypatch, module, device: torch.device):
    """``module``'s Triton kernel on for ``device`` (interpreted on the CPU: the test module sets
    ``TRITON_INTERPRET=1`` before Triton is imported), compiled afresh, its cache cleared after;
    a kernel that failed to compile (and left its work to torch's path) fails the test."""
    pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")
    from spectropaint.brushes.kernels import compiled_math, triton_math

    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    if device.type == "cpu":
        monkeypatch.setattr(triton_math, "INTERPRETED", True)
    module._kernel.cache_clear()
    try:
        yield
    finally:
        module._kernel.cache_clear()
    assert triton_math.failure() is None  # (else torch's path ran in the kernel's place)


def triton_fixture(module):
    """A fixture turning ``module``'s Triton kernel on for :data:`GPU` (:func:`triton_kernel_on`)."""

    @pytest.fixture
    def fused(monkeypatch):
        with triton_kernel_on(monkeypatch, module, GPU):
            yield

    return fused


class NoCompiler:
    """A kernel whose launches fail as Triton's first does where it finds no C compiler."""

    def __getitem__(self, grid):
        def run(*args, **options):
            raise RuntimeError(
                "Failed to find C compiler. Please specify via CC environment variable."
            )

        return run
