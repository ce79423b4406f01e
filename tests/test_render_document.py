"""The renderer on a real Document: 0 dBFS is a full-scale sine, and document edits reach the screen."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_render_reference import render_offscreen

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.colormaps import colormap_tables
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.document import Document
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings

pytestmark = pytest.mark.gpu

SAMPLE_RATE, N_FFT, HOP = 8000, 256, 64
BIN = 40  # 1250 Hz, a bin centre


@pytest.fixture
def document():
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    left = np.sin(2 * np.pi * BIN * SAMPLE_RATE / N_FFT * t)  # full scale
    right = 0.5 * left  # -6.02 dBFS
    settings = STFTSettings(n_fft=N_FFT, hop=HOP)
    return Document.from_samples(
        np.stack([left, right]), SAMPLE_RATE, settings=settings, device="cpu"
    )


def test_a_full_scale_sine_is_drawn_at_0_dbfs(document):
    renderer = SpectrogramRenderer(shared_device(), document)
    try:
        n_bins, n_frames = document.blocks[0].n_bins, document.blocks[0].n_frames
        row = n_bins - 1 - BIN  # native resolution, low frequencies at the bottom
        middle = slice(10, n_frames - 10)  # away from the reflected ends
        left = render_offscreen(renderer, n_frames, n_bins, ViewSettings(colormap="grayscale"))
        assert np.abs(left[row, middle].astype(int) - 255).max() <= 1
        right = render_offscreen(
            renderer, n_frames, n_bins, ViewSettings(colormap="grayscale", channel=1)
        )
        expected = round((80 + 20 * np.log10(0.5)) / 80 * 255)  # -6.02 dB of an 80 dB range: 236
        assert np.abs(right[row, middle].astype(int) - expected).max() <= 1
    finally:
        renderer.close()


def test_a_document_write_and_its_event_reach_only_the_region(document):
    renderer = SpectrogramRenderer(shared_device(), document)
    try:
        n_bins, n_frames = document.blocks[0].n_bins, document.blocks[0].n_frames
        before = render_offscreen(renderer, n_frames, n_bins)
        renderer.stream()  # the reduced levels too: the edit below is then all a frame uploads
        region = Region(BIN - 3, BIN + 3, 50, 70, (0,))
        magnitude, phase = document.read(region)
        document.write(region, torch.zeros_like(magnitude), phase)
        renderer.mark_dirty(region)
        after = render_offscreen(renderer, n_frames, n_bins)
        changed = (after != before).any(axis=-1)[::-1]  # bins upwards, as the document counts
        sine = slice(BIN - 1, BIN + 2)  # a Hann window puts a bin-centred sine in three bins
        silence = np.round(colormap_tables()["magma"][0] * 255)
        # within one step of 255 of the colormap's first colour: NVIDIA's Vulkan driver draws
        # magma's (0, 0, 4) as (0, 0, 3), lavapipe exactly
        erased = after[::-1][sine, 50:70].astype(int)
        assert changed[sine, 50:70].all() and np.abs(erased - silence).max() <= 1
        changed[BIN - 3 : BIN + 3, 50:70] = False
        assert not changed.any()
        assert renderer.stats.frame_bytes < 4 * 6 * 20 * 2  # the box and its reduced levels
    finally:
        renderer.close()
