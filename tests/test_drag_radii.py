"""Warp and clone strokes at radii 8, 32 and 128 cells, painted in fused groups through the
kernels' kept buffers (:mod:`~spectropaint.brushes.kernels.kept`), against the same strokes painted
another way: dab by dab through the kernel (``fuse=False``), and with every kept buffer forgotten
before the stroke. The radii alternate, so each stroke finds the buffers the previous one left, of
other shapes and of the same ones."""

import numpy as np
import pytest
import torch

from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.kernels import warp_fused
from spectropaint.brushes.kernels.kept import clear_kept_work
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

RATE = 22050
RADII = (8, 32, 128, 8, 32)
PARAMS = {"warp": {"amount": 1.0}, "clone": {"offset_frames": -40, "offset_bins": 3}}


def tonal_document() -> Document:
    """Four seconds of steady tones (which auto phase carries on) in a little noise, stereo."""
    rng = np.random.default_rng(4)
    t = np.arange(4 * RATE) / RATE
    tones = sum(0.05 * np.sin(2 * np.pi * f * t) for f in (220.0, 440.0, 1230.0, 3000.0))
    samples = np.stack([tones + 0.01 * rng.standard_normal(len(t)) for _ in range(2)])
    return Document.from_samples(samples, RATE, settings=STFTSettings(n_fft=1024, hop=256))


def stroke(radius: float) -> list[InputEvent]:
    """A 60 Hz drag across the middle of the grid, about two radii per event (several dabs)."""
    return [
        InputEvent(i / 60, 80.0 + 0.5 * radius * i, 200.0 + 40.0 * np.sin(i / 3), 0.6 + i / 40)
        for i in range(12)
    ]


def paint(document: Document, brush: str, radius: float, *, fuse: bool) -> torch.Tensor:
    settings = BrushSettings(radius_frames=radius, radius_bins=radius, hardness=0.5)
    session = StrokeSession(document, brush, settings, params=PARAMS[brush], fuse=fuse)
    for event in stroke(radius):
        session.add_events([event])
    session.end()
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


@pytest.mark.parametrize("brush", ["warp", "clone"])
def test_strokes_through_kept_buffers_equal_dab_by_dab_and_fresh_buffers(brush, monkeypatch):
    """Warp's planned groups equal its kernel dab by dab bit for bit (auto phase amplifies a
    last-bit difference a thousandfold along a stroke); clone's fused groups equal its dabs one by
    one to float32 rounding (measured: magnitude identical, phase 2.4e-7 rad apart in one or two
    cells of each stroke; asserted 1e-6 where there is energy). A stroke painted after the others, through their kept buffers, equals
    the same stroke painted with every kept buffer forgotten first, bit for bit. (On CUDA, through
    torch: the fused kernel is compared with it in ``test_warp_fused.py``.)"""
    monkeypatch.setenv(warp_fused.FUSED_ENV, "0")
    start = tonal_document()
    before = torch.stack((start.blocks[0].magnitude, start.blocks[0].phase)).clone()
    painted = {}
    for radius in RADII:
        fused = paint(tonal_document(), brush, radius, fuse=True)
        one_by_one = paint(tonal_document(), brush, radius, fuse=False)
        changed = (fused != before).any(dim=(0, 1))
        assert int(changed.sum()) > 20 * radius  # the stroke painted a band of cells
        assert torch.equal(fused[0], one_by_one[0])
        if brush == "warp":
            assert torch.equal(fused, one_by_one)
        else:
            energetic = fused[0] > 1e-3 * float(fused[0].max())
            turn = torch.remainder(fused[1] - one_by_one[1] + np.pi, 2 * np.pi) - np.pi
            assert float(turn[energetic].abs().max()) < 1e-6
        painted.setdefault(radius, []).append(fused)
    for strokes in painted.values():  # the same stroke, with other shapes kept between
        assert all(torch.equal(strokes[0], again) for again in strokes[1:])
    clear_kept_work()
    for radius in (8, 32):
        assert torch.equal(paint(tonal_document(), brush, radius, fuse=True), painted[radius][0])
