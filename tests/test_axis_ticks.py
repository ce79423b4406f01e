"""Ruler ticks and labels (no Qt): round steps in one format per axis, minor ticks, frequency labels
where each axis has room, and labels kept inside the ruler."""

import numpy as np
import pytest

from spectropaint.gpu.axis_ticks import (
    format_hz,
    format_seconds,
    freq_ticks,
    label_left,
    level_ticks,
    time_ticks,
)
from spectropaint.transforms.geometry import warp


def labels(ticks):
    return [t.label for t in ticks if t.major]


def test_a_ten_minute_axis_reads_as_a_clock_in_whole_minutes():
    ticks = time_ticks(0.0, 600.0, 1000)
    assert labels(ticks) == [f"{m}:00" for m in range(0, 11)]
    minor = [t.value for t in ticks if not t.major]
    assert minor[:4] == [15.0, 30.0, 45.0, 75.0]  # quarter minutes between


def test_an_axis_over_a_minute_uses_the_clock_for_every_label():
    # the old ruler read "0 s, 50 s, 1:40": seconds and a clock on one axis
    texts = labels(time_ticks(0.0, 130.0, 600))
    assert texts == ["0:00", "0:30", "1:00", "1:30", "2:00"]
    assert all(":" in text for text in texts)


def test_short_axes_use_seconds_with_the_steps_decimals():
    assert labels(time_ticks(1.0, 2.0, 800))[:3] == ["1.0 s", "1.1 s", "1.2 s"]
    assert format_seconds(3725.5, 0.5, clock=True) == "1:02:05.5"
    assert format_seconds(65.0, 5.0, clock=True) == "1:05"


def test_time_ticks_sit_at_their_values_and_never_crowd():
    for start, stop, width in ((0.0, 8.0, 900), (12.3, 47.9, 500), (0.0, 3600.0, 1400)):
        ticks = time_ticks(start, stop, width)
        for tick in ticks:
            assert tick.position == pytest.approx((tick.value - start) / (stop - start))
        major_px = np.diff([t.position * width for t in ticks if t.major])
        assert major_px.min() >= 72 - 1e-6
        minor_px = np.diff([t.position * width for t in ticks])
        assert minor_px.min() >= 6 - 1e-6


@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
def test_frequency_labels_are_round_apart_and_where_their_values_are(scale):
    low, high = (20.0 if scale == "log" else -10.8), 22050.0
    ticks = freq_ticks(low, high, scale, 600)
    majors = [t for t in ticks if t.major]
    w_low, w_high = warp(low, scale), warp(high, scale)
    for tick in ticks:
        assert tick.position == pytest.approx((warp(tick.value, scale) - w_low) / (w_high - w_low))
    rows = np.sort([t.position * 600 for t in majors])
    assert np.diff(rows).min() >= 30 - 1e-6
    assert len(majors) >= 6
    for tick in majors:  # round numbers: two significant digits at most
        assert tick.value == 0 or float(f"{tick.value:.2g}") == tick.value


def test_a_mel_axis_starts_at_0_hz_not_1_hz():
    majors = labels(freq_ticks(-10.8, 11025.0, "mel", 600))
    assert majors[0] == "0 Hz" and "1 Hz" not in majors and "1 kHz" in majors


def test_log_axes_have_minor_ticks_between_decades():
    ticks = freq_ticks(20.0, 20000.0, "log", 600)
    minor = [t.value for t in ticks if not t.major]
    assert {60.0, 70.0, 80.0, 600.0, 700.0} <= set(minor)


def test_the_last_label_is_drawn_left_of_its_tick_when_it_would_be_cut():
    assert label_left(100, 40, 1000) == 103
    assert label_left(990, 40, 1000) == 990 - 3 - 40


@pytest.mark.parametrize("scale", ["log", "mel"])
@pytest.mark.parametrize("low, high", [(430.0, 470.0), (1000.0, 1100.0), (300.0, 310.0)])
def test_a_frequency_axis_zoomed_in_still_labels_frequencies(scale, low, high):
    """Zoomed in on a log or mel axis between round frequencies, the ruler named none (430 to
    470 Hz drew no label at all): it labels finer round values, as far apart as the linear axis'."""
    ticks = freq_ticks(low, high, scale, 600)
    majors = [t for t in ticks if t.major]
    assert len(majors) >= 3
    rows = np.sort([t.position * 600 for t in majors])
    assert np.diff(rows).min() >= 30 - 1e-6
    for tick in majors:  # labels are the values, written plainly
        assert float(tick.label.split()[0]) * (1000 if "kHz" in tick.label else 1) == (
            pytest.approx(tick.value)
        )


def test_a_moderately_zoomed_log_axis_labels_the_hundreds_it_has_room_for():
    labels = [t.label for t in freq_ticks(280.0, 1500.0, "log", 640) if t.major]
    assert {"300 Hz", "400 Hz", "500 Hz", "700 Hz", "1 kHz"} <= set(labels)


@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
def test_a_deeply_zoomed_ruler_never_repeats_a_label(scale):
    """``:g`` kept six significant digits: at 1705 Hz ticks a hundredth of a Hz apart all read
    '1.70501 kHz'. Labels are now the values to a millionth of a Hz."""
    majors = [t for t in freq_ticks(1705.0, 1705.05, scale, 600) if t.major]
    assert len(majors) >= 3
    assert len({t.label for t in majors}) == len(majors)
    for tick in majors:
        assert float(tick.label.split()[0]) * 1000 == pytest.approx(tick.value, abs=1e-6)
    assert format_hz(1705.008, short=True) == "1.705008k" and format_hz(250.0) == "250 Hz"


def test_level_labels_are_round_and_exact():
    # adding the step again and again (as the dB ruler did) read '-5.55112e-17' where 0 dB belonged
    ticks = level_ticks(-1.0, 1.4, 300, 40)
    assert [t.label for t in ticks] == ["-1", "-0.8", "-0.6", "-0.4", "-0.2", "0", "0.2", "0.4"]
    for tick in ticks:
        assert tick.position == pytest.approx((tick.value + 1.0) / 1.4)
    assert np.diff([t.position * 300 for t in ticks]).min() >= 40 - 1e-6
