"""Recorded stroke files: the format, its errors, the shipped examples, and deterministic replay."""

import importlib.resources
import json
import os
import re
import time

import numpy as np
import pytest

from spectropaint.brushes.recorded import (
    MAX_EVENTS_PER_STROKE,
    MAX_STROKES,
    RecordedStroke,
    apply_strokes,
    load_strokes,
    save_strokes,
)
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError, SpectroPaintError

RATE = 44100
EXAMPLES = importlib.resources.files("spectropaint.resources") / "strokes"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if p.name.endswith(".json"))


def music(seconds=3.0):
    t = np.arange(int(RATE * seconds)) / RATE
    rng = np.random.default_rng(1)
    chord = sum(0.1 * np.sin(2 * np.pi * f * t) for f in (220, 330, 1000, 2500))
    return np.stack([chord + 0.01 * rng.standard_normal(t.size) for _ in range(2)])


@pytest.fixture(scope="module")
def samples():
    return music()


def write_json(path, data):
    path.write_text(json.dumps(data))
    return path


def valid_stroke(**changes):
    return {
        "brush": "gain",
        "params": {"gain_db": -6},
        "events": [[0, 10, 10, 1], [0.1, 20, 12]],
        **changes,
    }


def strokes_file(path, *strokes):
    return write_json(
        path, {"format": "spectropaint-strokes", "version": 1, "strokes": list(strokes)}
    )


def test_the_example_files_are_the_ones_the_readme_names():
    assert {"erase_band.json", "blur_smear.json", "pen_melody.json", "clone_patch.json"} <= set(
        EXAMPLE_NAMES
    )


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_each_example_replays_identically_and_edits_only_near_its_path(name, samples):
    strokes = load_strokes(EXAMPLES / name)
    outputs, grids = [], []
    for _ in range(2):
        document = Document.from_samples(samples, RATE, device="cpu")
        original = document.blocks[0].magnitude.clone()
        apply_strokes(document, load_strokes(EXAMPLES / name))
        outputs.append(document.edited_samples())
        grids.append(document.blocks[0].magnitude.clone())
    assert np.array_equal(outputs[0], outputs[1])
    changed = (grids[0] != original).any(dim=0).numpy()
    assert changed.sum() > 50
    near = np.zeros_like(changed)
    for stroke in strokes:
        s = stroke.settings
        xs = [e.x for e in stroke.events]
        ys = [e.y for e in stroke.events]
        near[
            max(0, int(min(ys) - s.radius_bins)) : int(max(ys) + s.radius_bins) + 2,
            max(0, int(min(xs) - s.radius_frames)) : int(max(xs) + s.radius_frames) + 2,
        ] = True
    assert not (changed & ~near).any()


def test_erase_band_silences_its_band_under_the_path(samples):
    document = Document.from_samples(samples, RATE, device="cpu")
    before = document.blocks[0].magnitude.clone()
    apply_strokes(document, load_strokes(EXAMPLES / "erase_band.json"))
    ratio = (document.blocks[0].magnitude[:, 46, 40:180] / before[:, 46, 40:180]).numpy()
    assert ratio.max() < 10 ** (-100 / 20)


def test_pen_melody_resynthesises_its_notes_in_order(samples):
    document = Document.from_samples(np.zeros_like(samples[:, : RATE * 3]), RATE, device="cpu")
    strokes = load_strokes(EXAMPLES / "pen_melody.json")
    apply_strokes(document, strokes)
    out = document.edited_samples()[0]
    hop = document.blocks[0].hop
    for stroke in strokes:
        frequency = document.blocks[0].band_hz[round(stroke.events[0].y)]
        start, stop = (int(stroke.events[0].x) + 4) * hop, (int(stroke.events[-1].x) - 4) * hop
        spectrum = np.abs(np.fft.rfft(out[start:stop] * np.hanning(stop - start)))
        peak = np.fft.rfftfreq(stop - start, 1 / RATE)[np.argmax(spectrum)]
        assert peak == pytest.approx(frequency, abs=RATE / (stop - start))


def test_save_and_load_round_trip(tmp_path):
    strokes = [
        RecordedStroke(
            "clone",
            BrushSettings(radius_frames=4.5, channel=1),
            brush_kind("clone").params({"offset_frames": -12, "offset_bins": 3}),
            (InputEvent(0.0, 1.5, 2.5, 0.25), InputEvent(0.5, 3.0, 4.0, 1.0)),
        )
    ]
    save_strokes(tmp_path / "s.json", strokes)
    loaded = load_strokes(tmp_path / "s.json")
    assert [(s.brush, s.settings, s.params, s.events) for s in loaded] == [
        (s.brush, s.settings, s.params, s.events) for s in strokes
    ]


def test_recorded_events_are_packed_and_read_back_exactly():
    rng = np.random.default_rng(5)
    values = np.column_stack([rng.uniform(0.0, 1000.0, (500, 3)), rng.uniform(0.0, 1.0, 500)])
    events = [InputEvent(*row) for row in values.tolist()]
    stroke = RecordedStroke("gain", BrushSettings(), brush_kind("gain").params({}), events)
    assert stroke.events.array.nbytes == 32 * len(events)  # instead of ~200 bytes of objects each
    assert list(stroke.events) == events and stroke.events[-1] == events[-1]
    assert stroke.events == tuple(events) and len(stroke.events) == 500
    again = RecordedStroke("gain", BrushSettings(), brush_kind("gain").params({}), stroke.events)
    assert again == stroke and again.to_dict()["events"] == [
        [e.t, e.x, e.y, e.pressure] for e in events
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"format": "other"}', "not a strokes file"),
        ('{"format": "spectropaint-strokes", "version": 7, "strokes": []}', "version 7 is not 1"),
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
        ('{"format": ' + "9" * 5001 + "}", "a number has 5001 digits in a row"),
        ('{"format": ' + "9" * 401 + "}", "a number has 401 digits in a row"),
        ('{"format": 1e400}', "the exponent 400: beyond the range of a float"),
        ('{"format": NaN}', "NaN is not allowed"),
        (b"\xff\xfe garbage", "not UTF-8 text"),
    ],
)
def test_unreadable_files_name_the_file_and_reason(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(SettingsError, match=message) as caught:
        load_strokes(path)
    assert f"'{path}'" in str(caught.value)


def test_a_digit_run_inside_a_string_is_not_a_number(tmp_path):
    stroke = valid_stroke()
    stroke["brush"] = "gain" + "7" * 100  # refused as a brush, not as a number
    path = strokes_file(tmp_path / "s.json", stroke)
    with pytest.raises(SettingsError, match="unknown brush"):
        load_strokes(path)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda folder: "/dev/zero", "not a regular file (character device)"),
        (lambda folder: "/dev/urandom", "not a regular file (character device)"),
        (
            lambda folder: os.mkfifo(folder / "fifo.json") or folder / "fifo.json",
            "not a regular file (named pipe)",
        ),
        (lambda folder: folder, "is a folder"),
    ],
    ids=["zero", "urandom", "fifo", "folder"],
)
def test_special_files_are_refused_at_once(tmp_path, make, message):
    """No read that never ends (/dev/zero) or never starts (a FIFO with no writer)."""
    path = make(tmp_path)
    started = time.monotonic()
    with pytest.raises(
        SpectroPaintError, match=re.escape(f"cannot open strokes file '{path}': {message}")
    ):
        load_strokes(path)
    assert time.monotonic() - started < 5  # no read: a FIFO's would wait for ever


def test_absurd_counts_are_refused_by_the_documented_limits(tmp_path):
    events = [[i / 60, 10.0, 10.0] for i in range(MAX_EVENTS_PER_STROKE + 1)]
    path = strokes_file(tmp_path / "s.json", valid_stroke(), valid_stroke(events=events))
    with pytest.raises(SettingsError, match=f"stroke 2: {MAX_EVENTS_PER_STROKE + 1} events, more"):
        load_strokes(path)
    path = strokes_file(tmp_path / "many.json", *[valid_stroke()] * (MAX_STROKES + 1))
    with pytest.raises(SettingsError, match=f"{MAX_STROKES + 1} strokes, more than the"):
        load_strokes(path)


@pytest.mark.parametrize(
    "stroke, message",
    [
        (valid_stroke(brush="smudge"), "unknown brush 'smudge'"),
        (valid_stroke(settings={"hardness": 3}), "hardness must be from 0 to 1"),
        (valid_stroke(settings={"size": 3}), "unknown brush setting 'size'"),
        (valid_stroke(params={"gain_db": 100}), "gain_db must be from -150 to 48"),
        (valid_stroke(events=[[0, 1]]), "an event must be"),
        (valid_stroke(events=[[0, 1, 2, 1.5]]), "pressure must be from 0 to 1"),
        (valid_stroke(events=[]), "non-empty list"),
        (valid_stroke(colour="red"), "unknown stroke key 'colour'"),
    ],
)
def test_bad_strokes_name_the_file_the_stroke_and_the_value(tmp_path, stroke, message):
    path = strokes_file(tmp_path / "s.json", valid_stroke(), stroke)
    with pytest.raises(SettingsError, match=message) as caught:
        load_strokes(path)
    assert f"'{path}', stroke 2" in str(caught.value)


def test_a_missing_file_is_a_project_error_naming_it(tmp_path):
    with pytest.raises(SpectroPaintError, match="cannot open strokes file .*missing.json"):
        load_strokes(tmp_path / "missing.json")


def test_a_stroke_for_a_channel_the_document_lacks_names_the_file(tmp_path, samples):
    path = strokes_file(tmp_path / "s.json", valid_stroke(settings={"channel": 3}))
    document = Document.from_samples(samples[:, :RATE], RATE, device="cpu")
    with pytest.raises(SettingsError, match=r"stroke 1: channel must be below 2") as caught:
        apply_strokes(document, load_strokes(path))
    assert str(path) in str(caught.value)
