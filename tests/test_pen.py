"""The pitched pen: a partial that follows the pointer, measured on the exported audio."""

import numpy as np
import pytest
from fidelity_probes import RATE, envelope_and_frequency, heard, shown

from spectropaint.brushes.engine import paint
from spectropaint.brushes.pen_partial import monotone_runs
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document

HOP, BIN_HZ = 512, RATE / 2048
LINE = BrushSettings(radius_frames=4, radius_bins=1, hardness=1.0)


def silence(seconds=2.0, channels=1):
    return Document.from_samples(np.zeros((channels, int(RATE * seconds))), RATE, device="cpu")


def path(x0, x1, y0, y1, n=30):
    return [
        InputEvent(i / 60, x0 + (x1 - x0) * i / (n - 1), y0 + (y1 - y0) * i / (n - 1))
        for i in range(n)
    ]


def pen(document, events, settings=LINE, **params):
    paint(document, "pen", events, settings, params={"level_db": -20.0, **params})
    return document.edited_samples()


@pytest.mark.parametrize("y", [46.0, 46.5, 46.25])
def test_a_line_is_one_tone_at_level_db_wherever_it_lies_between_bins(y):
    out = pen(silence(), path(20, 80, y, y))[0]
    envelope, frequency = envelope_and_frequency(out)
    core = slice(30 * HOP, 70 * HOP)
    assert 20 * np.log10(envelope[core].mean()) == pytest.approx(-20.0, abs=0.5)
    modulation = (envelope[core].max() - envelope[core].min()) / (2 * envelope[core].mean())
    assert modulation < 0.01
    assert np.median(frequency[core]) == pytest.approx(y * BIN_HZ, rel=1e-4)


def test_a_glide_follows_the_drawn_line_smoothly():
    out = pen(silence(3.0), path(20, 120, 40.0, 80.0, n=60))[0]
    envelope, frequency = envelope_and_frequency(out)
    middle = slice(25 * HOP, 115 * HOP)
    samples = (np.arange(frequency.size) + 0.5) / HOP
    drawn = np.interp(samples, [20, 120], [40 * BIN_HZ, 80 * BIN_HZ])
    error = (frequency[middle] - drawn[middle]) / drawn[middle]
    assert np.sqrt(np.mean(error**2)) < 0.005
    assert envelope[middle].min() > 0.99 * envelope[middle].mean()


def test_the_ends_fade_without_clicks():
    settings = BrushSettings(radius_frames=4, radius_bins=1, hardness=0.5)
    out = pen(silence(), path(20, 60, 46.0, 46.0), settings)[0]
    envelope, _ = envelope_and_frequency(out)
    start, stop = 16 * HOP, 64 * HOP  # radius_frames beyond the first and last events
    # before and after: nothing but the float32 rounding of the settled coefficients (-80 dB)
    assert np.abs(out[: start - 2]).max() < 1e-5 and np.abs(out[stop + 2 :]).max() < 1e-5
    rise = envelope[start : start + 2 * HOP]
    assert (np.diff(rise) > -1e-6).all()  # rises monotonically over (1 - hardness) * radius
    # no click: above 3 kHz the onset holds less than -80 dB of the tone's energy
    onset = out[start - 256 : start + 2 * HOP + 256]
    spectrum = np.abs(np.fft.rfft(onset * np.hanning(onset.size))) ** 2
    high = np.fft.rfftfreq(onset.size, 1 / RATE) > 3000
    assert 10 * np.log10(spectrum[high].sum() / spectrum.sum()) < -80


def test_harmonics_roll_off_by_the_chosen_decibels_per_octave():
    out = pen(silence(), path(20, 80, 20.0, 20.0), harmonics=4, rolloff_db=6.0)[0]
    segment = out[30 * HOP : 70 * HOP]
    spectrum = np.abs(np.fft.rfft(segment * np.hanning(segment.size)))
    frequencies = np.fft.rfftfreq(segment.size, 1 / RATE)
    levels = [
        20 * np.log10(spectrum[np.argmin(np.abs(frequencies - k * 20 * BIN_HZ))])
        for k in (1, 2, 3, 4)
    ]
    for k, level in zip((2, 3, 4), levels[1:], strict=True):
        assert level - levels[0] == pytest.approx(-6.0 * np.log2(k), abs=0.5)


def test_a_wide_brush_paints_a_band_of_noise_at_level_db():
    settings = BrushSettings(radius_frames=4, radius_bins=10, hardness=0.6)
    document = silence(3.0)
    paint(document, "pen", path(20, 110, 200.0, 200.0, n=40), settings, params={"level_db": -30})
    magnitude = np.abs(heard(document)[0][:, 30:100])
    full_scale = 2048 / 4  # a Hann window's sum over 2: a full-scale sinusoid's peak bin
    band = 20 * np.log10(np.sqrt(np.mean(magnitude[195:206] ** 2)) / full_scale)
    assert band == pytest.approx(-30.0, abs=1.5)
    assert 20 * np.log10(np.sqrt(np.mean(magnitude[216:] ** 2)) / full_scale) < -80
    # noise, not a tone: no bin of the band stands out, and it changes from frame to frame
    across = np.sqrt(np.mean(magnitude[195:206] ** 2, axis=1))
    assert across.max() / across.min() < 1.5
    assert np.std(magnitude[200]) > 0.2 * np.mean(magnitude[200])


def test_the_pen_replays_to_the_same_sound_and_shows_what_is_heard():
    settings = BrushSettings(radius_frames=4, radius_bins=8, hardness=0.5)
    outputs = []
    for _ in range(2):
        document = silence(channels=2)
        paint(document, "pen", path(20, 70, 100.0, 130.0), settings, params={"harmonics": 3})
        outputs.append(document.edited_samples())
        error = np.abs(shown(document) - heard(document)).max()
        assert error < 1e-5 * np.abs(heard(document)).max()
    assert np.array_equal(outputs[0], outputs[1])
    assert np.array_equal(outputs[0][0], outputs[0][1])  # linked channels get the same partial


def test_a_path_that_turns_back_in_time_is_cut_into_runs_that_each_move_one_way():
    positions = np.array([1.0, 2.0, 3.0, 3.0, 2.5, 1.0, 1.0, 4.0])
    runs = monotone_runs(positions)
    # each turning point ends one run and starts the next; a step that stays joins its run
    assert [run.tolist() for run in runs] == [[0, 1, 2, 3], [6, 5, 4, 3], [6, 7]]
    assert [positions[run].tolist() for run in runs] == [
        [1.0, 2.0, 3.0, 3.0],
        [1.0, 1.0, 2.5, 3.0],
        [1.0, 4.0],
    ]


def test_a_pen_stroke_in_seconds_and_hz_draws_the_same_tone():
    settings = BrushSettings(radius_seconds=0.05, radius_hz=20.0, hardness=1.0)
    events = [InputEvent(i / 60, 0.5 + i / 29, 1000.0) for i in range(30)]  # 0.5 s to 1.5 s
    out = pen(silence(), events, settings)[0]
    envelope, frequency = envelope_and_frequency(out)
    core = slice(int(0.6 * RATE), int(1.4 * RATE))
    assert 20 * np.log10(envelope[core].mean()) == pytest.approx(-20.0, abs=0.5)
    assert np.median(frequency[core]) == pytest.approx(1000.0, rel=1e-4)
    assert np.abs(out[: int(0.44 * RATE)]).max() < 1e-5  # it starts radius_seconds before 0.5 s
