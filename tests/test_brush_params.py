"""Brush parameters are declared once (label, unit, range) and both checks and the panel use it."""

import dataclasses

import pytest

from spectropaint.brushes.params import check_params, declared
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.transforms.errors import SettingsError


@pytest.mark.parametrize("name", sorted(BRUSHES))
def test_every_parameter_of_every_brush_is_declared_and_its_default_is_allowed(name):
    kind = BRUSHES[name]
    fields = [field.name for field in dataclasses.fields(kind.params_type)]
    specs = declared(kind.params_type)
    assert list(specs) == fields
    defaults = kind.params()
    check_params(defaults)
    for field, spec in specs.items():
        assert spec.label
        if getattr(defaults, field) is None:
            assert spec.optional
        elif spec.choices:
            assert getattr(defaults, field) in spec.choices
        else:
            assert spec.low <= getattr(defaults, field) <= spec.high


@pytest.mark.parametrize("name", sorted(BRUSHES))
def test_values_past_a_declared_range_are_refused_naming_the_field(name):
    kind = BRUSHES[name]
    for field, spec in declared(kind.params_type).items():
        bad = "nonsense" if spec.choices else spec.high + (1 if spec.integer else 0.5)
        if not spec.choices and spec.high == float("inf"):
            continue
        with pytest.raises(SettingsError, match=field):
            kind.params({field: bad})


def test_common_settings_are_declared_with_units():
    specs = declared(BrushSettings)
    assert specs["radius_frames"].caption == "Width (frames)"
    assert specs["spacing"].caption == "Spacing (radii)"
    assert BrushSettings(channel=None).channel is None
    with pytest.raises(SettingsError, match="hardness must be from 0 to 1, not 2"):
        BrushSettings(hardness=2)
    with pytest.raises(SettingsError, match="channel must be an integer"):
        BrushSettings(channel=0.5)


def test_the_panel_is_built_from_the_declarations(qtbot):
    from PySide6.QtWidgets import QLabel

    from spectropaint.app.panels.brush_panel import BrushPanel
    from spectropaint.app.param_units import DEFAULT_GEOMETRY

    panel = BrushPanel()
    qtbot.addWidget(panel)
    for name, kind in BRUSHES.items():
        panel.set_brush(name, BrushSettings(), {})
        for field, spec in declared(kind.params_type).items():
            editor = panel.findChild(editor_type(spec), f"param_{field}")
            if spec.optional:  # the physical offsets of strokes files have no editor
                assert editor is None
                continue
            assert editor is not None, (name, field)
            label = panel.own_form.labelForField(editor)
            assert isinstance(label, QLabel)
            if spec.choices:
                assert label.text() == spec.caption
                continue
            shown = panel.shown(field)
            assert label.text() == shown.caption
            if spec.unit in ("frames", "bins"):  # offsets: ms and Hz, within the document
                assert shown.unit == {"frames": "ms", "bins": "Hz"}[spec.unit]
                cell = (
                    DEFAULT_GEOMETRY.step_seconds * 1000
                    if spec.unit == "frames"
                    else DEFAULT_GEOMETRY.step_hz
                )
                assert shown.to_shown(spec.low if spec.low > -1e5 else -3) == pytest.approx(
                    cell * (spec.low if spec.low > -1e5 else -3)
                )
            else:  # the declared range itself, not a copy of it
                assert (editor.spin.minimum(), editor.spin.maximum()) == (spec.low, spec.high)
                assert editor.spin.decimals() == spec.decimals


def editor_type(spec):
    from PySide6.QtWidgets import QComboBox

    from spectropaint.app.panels.spin_slider import SpinSlider

    return QComboBox if spec.choices else SpinSlider
