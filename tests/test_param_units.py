"""Brush parameters shown in the units people use (no Qt): sizes in ms and Hz or semitones, offsets
in ms and Hz, converted exactly to and from frames and bins."""

import math

import pytest

from spectropaint.app.param_units import SIZE_PRESETS, preset_radii, shown_as
from spectropaint.brushes.kernels.clone import CloneParams
from spectropaint.brushes.params import declared
from spectropaint.brushes.settings import BrushSettings
from spectropaint.gpu.geometry import BlockGeometry

GEOMETRY = BlockGeometry(
    n_frames=5000, n_bins=1025, first_hz=0.0, step_hz=44100 / 2048, first_seconds=0.0,
    step_seconds=512 / 44100,
)  # fmt: skip
SETTINGS = declared(BrushSettings)


def test_a_radius_in_frames_is_shown_as_the_full_length_in_milliseconds():
    length = shown_as("radius_frames", SETTINGS["radius_frames"], GEOMETRY)
    assert length.caption == "Length (ms)"
    assert length.to_shown(8.0) == pytest.approx(2 * 8 * 512 / 44100 * 1000)  # 185.8 ms
    assert length.from_shown(length.to_shown(8.0)) == pytest.approx(8.0)
    assert length.low == pytest.approx(SETTINGS["radius_frames"].low * 2 * 512 / 44.1)
    assert length.high == pytest.approx(SETTINGS["radius_frames"].high * 2 * 512 / 44.1)


def test_a_radius_in_bins_is_shown_as_the_full_height_in_hz_or_semitones():
    height = shown_as("radius_bins", SETTINGS["radius_bins"], GEOMETRY)
    assert height.caption == "Height (Hz)" and height.to_shown(8) == pytest.approx(
        16 * 44100 / 2048
    )
    # the declared range, capped at the document's bins
    assert height.high == pytest.approx(1025 * 2 * 44100 / 2048)
    st = shown_as(
        "radius_bins", SETTINGS["radius_bins"], GEOMETRY, height_unit="semitones", reference_hz=440
    )
    # half the height above 440 Hz is 24 log2(1 + r step / 440) semitones in all
    radius = 5.0
    expected = 24 * math.log2(1 + radius * GEOMETRY.step_hz / 440)
    assert st.to_shown(radius) == pytest.approx(expected)
    assert st.from_shown(expected) == pytest.approx(radius)
    assert st.from_shown(24.0) * GEOMETRY.step_hz == pytest.approx(440.0)  # an octave up: +440 Hz


def test_clone_offsets_are_milliseconds_and_hz_within_the_document():
    specs = declared(CloneParams)
    frames = shown_as("offset_frames", specs["offset_frames"], GEOMETRY)
    bins = shown_as("offset_bins", specs["offset_bins"], GEOMETRY)
    assert (frames.unit, bins.unit) == ("ms", "Hz")
    assert frames.to_shown(-64) == pytest.approx(-64 * 512 / 44.1)
    assert frames.from_shown(-743.0) == round(-743.0 / (512 / 44.1))  # whole frames
    assert isinstance(frames.from_shown(-743.0), int)
    # not +-10 million frames: the document's length (the declared range is wider)
    assert frames.high == pytest.approx(5000 * 512 / 44.1)
    assert bins.low == pytest.approx(-1025 * 44100 / 2048)


def test_plain_parameters_are_shown_as_declared():
    hardness = shown_as("hardness", SETTINGS["hardness"], GEOMETRY)
    spec = SETTINGS["hardness"]
    assert (hardness.low, hardness.high, hardness.step, hardness.decimals) == (
        spec.low, spec.high, spec.step, spec.decimals,
    )  # fmt: skip
    assert hardness.to_shown(0.3) == 0.3 and hardness.caption == spec.caption


def test_presets_are_lengths_and_heights():
    limits = (SETTINGS["radius_frames"], SETTINGS["radius_bins"])
    for name, (ms, hz) in SIZE_PRESETS.items():
        frames, bins = preset_radii(name, GEOMETRY, limits)
        assert 2 * frames * GEOMETRY.step_seconds * 1000 == pytest.approx(ms)
        assert 2 * bins * GEOMETRY.step_hz == pytest.approx(hz)
