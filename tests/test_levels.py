"""Meter levels, their ballistics and the time counter (no Qt)."""

import numpy as np
import pytest

from spectropaint.app.playback.levels import (
    FALL_DB_PER_S,
    FLOOR_DB,
    PEAK_HOLD_S,
    Ballistics,
    clock_text,
    db_fraction,
    measure,
    samples_text,
)


def test_peak_and_rms_of_a_sine_before_the_playhead():
    rate = 8000
    t = np.arange(rate) / rate
    left = 0.5 * np.sin(2 * np.pi * 400 * t)
    samples = np.stack([left, np.zeros_like(t)], axis=1)
    peak, rms = measure(samples, 4000, rate)
    assert peak[0] == pytest.approx(20 * np.log10(0.5), abs=0.01)
    assert rms[0] == pytest.approx(20 * np.log10(0.5 / np.sqrt(2)), abs=0.01)
    assert peak[1] == rms[1] == FLOOR_DB  # silence reads as the meter's floor
    # only what was played: a loud burst after the playhead does not show yet
    samples[4000:4100, 1] = 1.0
    assert measure(samples, 4000, rate)[0][1] == FLOOR_DB
    assert measure(samples, 4100, rate)[0][1] == pytest.approx(0.0)


def test_at_the_start_the_meter_reads_its_floor():
    peak, rms = measure(np.ones((100, 2)), 0, 8000)
    assert (peak == FLOOR_DB).all() and (rms == FLOOR_DB).all()


def test_the_peak_holds_then_falls():
    meter = Ballistics(1)
    meter.update(np.array([-6.0]), np.array([-9.0]), 0.03)
    meter.update(np.array([-40.0]), np.array([-43.0]), PEAK_HOLD_S - 0.1)
    assert meter.peak[0] == -6.0 and meter.rms[0] == -43.0  # held
    meter.update(np.array([-40.0]), np.array([-43.0]), 0.5)
    assert meter.peak[0] == pytest.approx(-6.0 - FALL_DB_PER_S * 0.5)
    meter.update(np.array([-3.0]), np.array([-6.0]), 0.03)
    assert meter.peak[0] == -3.0  # a louder peak replaces it at once


def test_counter_text():
    assert clock_text(83.4567) == "0:01:23.457"
    assert clock_text(3725.0) == "1:02:05.000"
    assert samples_text(3662400) == "3\u2009662\u2009400 smp"
    assert db_fraction(0.0) == 1.0 and db_fraction(FLOOR_DB) == 0.0 and db_fraction(-45.0) == 0.5
