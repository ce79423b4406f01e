"""The readout's text (no Qt): levels in dB of full scale, silence read as such."""

import math

from spectropaint.app.readout import format_db, level_db, readout_text


def test_levels_are_db_of_the_reference():
    assert level_db(1.0, 1.0) == 0.0
    assert math.isclose(level_db(0.5, 2.0), -12.041199826559248)
    assert level_db(0.0, 1.0) == -math.inf


def test_silence_and_float_rounding_noise_read_as_below_the_floor():
    # the old readout said -298 dB and -654 dB
    assert format_db(-298.0) == "< -150 dB"
    assert format_db(-654.0) == "< -150 dB"
    assert format_db(-math.inf) == "< -150 dB"
    assert format_db(-149.96) == "-150.0 dB"
    assert format_db(-12.34) == " -12.3 dB"


def test_the_line_reads_time_frequency_note_and_each_channel():
    text = readout_text(1.5, 440.0, [-6.02, -700.0], shown=0)
    assert text.split() == [
        "1.500", "s", "440.0", "Hz", "A4", "+0¢", "-6.0", "dB",
        "ch1", "-6.0", "dB", "ch2", "<", "-150", "dB",
    ]  # fmt: skip
    assert "dB" not in readout_text(1.5, 440.0, None)
