"""Strokes files version 2: physical strokes save and load exactly, version 1 converts to seconds and
Hz with the STFT's geometry, and a stroke recorded on one transform replays on the other."""

import json
from importlib import resources

import numpy as np
import pytest
from test_nsgt_document import RATE, SETTINGS, level_db, tones

from spectropaint.brushes.recorded import (
    RecordedStroke,
    apply_strokes,
    load_strokes,
    physical_stroke,
    save_strokes,
)
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.stft import STFTSettings


def physical_erase() -> RecordedStroke:
    settings = BrushSettings(radius_seconds=0.25, radius_semitones=1.5, hardness=0.8)
    events = [InputEvent(0.01 * i, 4.0 + 0.1 * i, 440.0, 1.0) for i in range(21)]
    return RecordedStroke("erase", settings, brush_kind("erase").params(), events)


def test_a_physical_stroke_saves_as_version_2_and_loads_exactly(tmp_path):
    path = tmp_path / "s.json"
    save_strokes(path, [physical_erase()])
    data = json.loads(path.read_text())
    assert data["version"] == 2
    stroke = data["strokes"][0]
    assert stroke["settings"]["radius_seconds"] == 0.25
    assert stroke["settings"]["radius_semitones"] == 1.5
    assert stroke["events"][1] == [0.01, 4.1, 440.0, 1.0]
    (loaded,) = load_strokes(path)
    assert loaded.settings == physical_erase().settings
    assert loaded.events == physical_erase().events


def test_version_1_files_load_and_refuse_physical_radii(tmp_path):
    example = resources.files("spectropaint.resources").joinpath("strokes/erase_band.json")
    assert json.loads(example.read_text())["version"] == 1
    (stroke,) = load_strokes(example)
    assert stroke.settings.radius_seconds is None
    bad = json.loads(example.read_text())
    bad["strokes"][0]["settings"]["radius_seconds"] = 0.1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(
        SettingsError, match="stroke 1: radii in seconds.* need strokes format version 2"
    ):
        load_strokes(path)


@pytest.mark.parametrize("settings", [STFTSettings(), SETTINGS], ids=["stft", "nsgt"])
def test_one_physical_stroke_erases_the_same_place_on_either_transform(settings):
    document = Document.from_samples(tones(), RATE, settings=settings, device="cpu")
    apply_strokes(document, [physical_erase()])
    out, original = document.edited_samples(), document.audio.samples
    assert level_db(out[0], 440.0, 4.6, 5.4) - level_db(original[0], 440.0, 4.6, 5.4) < -40
    assert abs(level_db(out[0], 110.0, 4.6, 5.4) - level_db(original[0], 110.0, 4.6, 5.4)) < 0.1
    assert abs(level_db(out[0], 440.0, 7.0, 8.0) - level_db(original[0], 440.0, 7.0, 8.0)) < 0.1


def test_a_version_1_stroke_converted_to_seconds_and_hz_replays_alike_on_the_stft():
    """Frames and bins become seconds and Hz with the STFT's hop and bin spacing; replayed, the
    converted stroke's output is the original stroke's to within the rounding of the dab centres."""
    example = resources.files("spectropaint.resources").joinpath("strokes/erase_band.json")
    (stroke,) = load_strokes(example)
    cells = Document.from_samples(tones(), RATE, settings=STFTSettings(), device="cpu")
    converted = physical_stroke(stroke, cells)
    assert converted.settings.radius_seconds == pytest.approx(6 * 512 / RATE)
    assert converted.settings.radius_hz == pytest.approx(5 * RATE / 2048)
    assert converted.events[0].x == pytest.approx(20 * 512 / RATE)
    physical = Document.from_samples(tones(), RATE, settings=STFTSettings(), device="cpu")
    apply_strokes(cells, [stroke])
    apply_strokes(physical, [converted])
    a, b = cells.edited_samples(), physical.edited_samples()
    assert not np.array_equal(a, cells.audio.samples)
    assert np.linalg.norm(a - b) / np.linalg.norm(a - cells.audio.samples) < 1e-3
