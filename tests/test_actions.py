"""Recorded operations: the file format, replay on every run alike, the command line, the session."""

import json

import numpy as np
import pytest
import soundfile as sf
import torch
from brush_fixtures import small_document
from music_fixtures import RATE, music
from test_image_import import text_image

from spectropaint.app.cli import main
from spectropaint.app.files.project_actions import load_with_strokes
from spectropaint.app.session import Change, Session
from spectropaint.brushes.actions import (
    RecordedAction,
    apply_entries,
    entry_from_dict,
    load_entries,
    save_entries,
)
from spectropaint.brushes.recorded import RecordedStroke
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.selection import Selection
from spectropaint.transforms.shapes import Rectangle

ACTIONS = [
    {"select": {"shape": "rectangle", "t0": 1.2, "t1": 1.3, "f0": 0, "f1": 22050}, "apply": "heal"},
    {
        "select": {
            "shape": "harmonic",
            "t0": 0,
            "t1": 2.5,
            "f0": 220,
            "count": 10,
            "width_cents": 50,
        },
        "apply": "gain",
        "params": {"gain_db": -40},
    },
    {
        "select": [
            {"shape": "band", "f0": 2000, "f1": 4000},
            {"shape": "range", "t0": 0.5, "t1": 1.0, "combine": "intersect"},
        ],
        "apply": "copy",
    },
    {"apply": "paste", "params": {"at_seconds": 2.0, "shift_hz": 300}},
    {"select": {"shape": "wand", "t": 1.0, "f": 220, "tolerance_db": 12}, "apply": "erase"},
    {
        "select": {
            "shapes": [{"shape": "lasso", "points": [[0.2, 500], [0.8, 600], [0.5, 3000]]}],
            "feather": [0.01, 50],
        },
        "apply": "fill",
        "params": {"brush": "blur", "brush_params": {"sigma": 0.5}},
    },
    {"apply": "declick"},
    {
        "select": {"shape": "range", "t0": 0, "t1": 2.5},
        "apply": "dehum",
        "params": {"gain_db": -30},
    },
]


def actions_file(path, actions, version=2):
    path.write_text(
        json.dumps({"format": "spectropaint-strokes", "version": version, "actions": actions})
    )
    return path


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def test_a_file_of_operations_replays_identically_on_every_run(tmp_path):
    entries = load_entries(actions_file(tmp_path / "a.json", ACTIONS))
    assert [entry.apply for entry in entries] == [a["apply"] for a in ACTIONS]
    results = []
    for _ in range(2):
        document = Document.from_samples(music(3.0), RATE, device="cpu")
        before = grids(document)
        apply_entries(document, entries)
        results.append(grids(document))
    assert torch.equal(results[0], results[1])
    assert not torch.equal(results[0], before)


def test_strokes_and_operations_save_and_load_in_order(tmp_path):
    params = brush_kind("gain").params({"gain_db": -6.0})
    stroke = RecordedStroke(
        "gain", BrushSettings(radius_frames=3), params, [InputEvent(0, 10, 10, 1)]
    )
    entries = [stroke, *(entry_from_dict(a, origin="test") for a in ACTIONS)]
    save_entries(tmp_path / "s.json", entries)
    loaded = load_entries(tmp_path / "s.json")
    assert [e.to_dict() for e in loaded] == [e.to_dict() for e in entries]
    assert json.loads((tmp_path / "s.json").read_text())["version"] == 2
    first = loaded[1].to_dict()
    assert first == {"select": ACTIONS[0]["select"], "apply": "heal"}  # the issue's own form


def test_version_1_stroke_files_still_load(tmp_path):
    path = tmp_path / "v1.json"
    path.write_text(
        json.dumps(
            {
                "format": "spectropaint-strokes",
                "version": 1,
                "strokes": [{"brush": "gain", "events": [[0, 10, 10, 1]]}],
            }
        )
    )
    (stroke,) = load_entries(path)
    assert isinstance(stroke, RecordedStroke) and stroke.brush == "gain"


@pytest.mark.parametrize(
    "action, message",
    [
        ({"apply": "polish"}, "action 1: unknown operation 'polish'"),
        ({"apply": "heal"}, "action 1: heal needs a selection"),
        (
            {
                "select": {"shape": "band", "f0": 1, "f1": 2},
                "apply": "gain",
                "params": {"gain_db": 99},
            },
            "action 1: gain_db must be from -150 to 48, not 99",
        ),
        (
            {"select": {"shape": "blob"}, "apply": "erase"},
            "action 1: unknown selection shape 'blob'",
        ),
        ({"apply": "erase", "colour": "red"}, "action 1: unknown operation key 'colour'"),
        (
            {"apply": "image", "params": {"path": "x.png", "placement": {"t0": 2, "t1": 1}}},
            "t0 < t1",
        ),
    ],
)
def test_bad_operations_name_the_file_the_entry_and_the_reason(tmp_path, action, message):
    with pytest.raises(SettingsError, match=message) as error:
        load_entries(actions_file(tmp_path / "bad.json", [action]))
    assert "bad.json" in str(error.value)


def test_render_applies_operations_and_an_image_and_saves_them_in_the_project(tmp_path):
    source = tmp_path / "in.wav"
    sf.write(source, music(3.0), RATE, subtype="FLOAT")
    actions = actions_file(tmp_path / "ops.json", ACTIONS[:2])
    text_image(tmp_path / "text.png")
    out, project = tmp_path / "out.wav", tmp_path / "out.spp"
    args = ["render", str(source), "--strokes", str(actions), "--image", str(tmp_path / "text.png")]
    args += ["--at", "0.5,2.5,3000,9000", "--image-mode", "replace", "--wav", str(out)]
    assert main([*args, "--project", str(project)]) == 0
    written, _ = sf.read(out)
    original, _ = sf.read(source)
    changed = np.abs(written - original) > 1e-6
    assert changed.any() and not changed[int(2.6 * RATE) :].any()  # nothing after the edits
    project_document, entries = load_with_strokes(str(project), device="cpu")
    assert [e.apply for e in entries] == ["heal", "gain", "image"]
    again = tmp_path / "again.wav"
    assert (
        main(["render", str(source), "--strokes", str(actions), *args[4:10], "--wav", str(again)])
        == 0
    )
    assert np.array_equal(sf.read(again)[0], written)


def test_a_picture_opens_as_sound_on_the_command_line(tmp_path, capsys):
    text_image(tmp_path / "text.png")
    out = tmp_path / "text.wav"
    assert main(["render", str(tmp_path / "text.png"), "--wav", str(out)]) == 0
    samples, rate = sf.read(out)
    assert rate == 44100 and abs(len(samples) / rate - (400 / 100 + 0.25)) < 0.01
    assert np.sqrt(np.mean(samples**2)) > 1e-3
    assert main(["render", str(tmp_path / "none.png"), "--wav", str(out)]) == 1
    assert "none.png" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["render", str(tmp_path / "text.png"), "--at", "1,0,5,6", "--wav", str(out)])


def heard_changes(session):
    changes: list[Change] = []
    session.changed.connect(changes.append)
    return changes


def test_the_session_selects_operates_records_and_undoes_as_one_step():
    document = small_document()
    session = Session(document)
    changes = heard_changes(session)
    before = grids(document)
    session.set_selection(Selection.of(Rectangle(0.3, 0.5, 1000.0, 3000.0)))
    assert [(c.kind, c.region.empty, c.completes_edit) for c in changes] == [
        ("selection", True, False)
    ]
    assert not session.modified and session.generation == 0
    region = session.apply_to_selection("gain", {"gain_db": -12.0})
    assert changes[-1].kind == "operation" and changes[-1].region == region
    assert session.modified and session.generation == 1
    assert [entry.to_dict()["apply"] for entry in session.strokes.done] == ["gain"]
    session.apply_to_selection("copy")
    session.apply_to_selection("paste", {"at_seconds": 0.7})
    assert [entry.apply for entry in session.strokes.done] == ["gain", "copy", "paste"]
    session.undo()
    session.undo()  # takes back the gain and the copy made after it
    assert torch.equal(grids(document), before) and session.strokes.done == []
    session.redo()
    assert [entry.apply for entry in session.strokes.done] == ["gain", "copy"]
    snapshot = session.snapshot({})
    assert [entry["apply"] for entry in snapshot.strokes] == ["gain", "copy"]


def test_the_session_refuses_an_operation_that_needs_a_selection_without_one():
    session = Session(small_document())
    with pytest.raises(SettingsError, match="heal needs a selection"):
        session.apply_to_selection("heal")
    assert session.strokes.done == [] and not session.modified


def test_a_recorded_action_needs_its_selection():
    with pytest.raises(SettingsError, match="erase needs a selection"):
        RecordedAction("erase", {})
