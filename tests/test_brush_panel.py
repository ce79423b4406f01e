"""The brush panel: sizes in ms and Hz or semitones with sliders, presets, parameters greyed out
when they do not apply, clone offsets that fit the panel."""

import dataclasses

import pytest

from spectropaint.app.panels.brush_panel import BrushPanel
from spectropaint.app.panels.spin_slider import SpinSlider
from spectropaint.app.param_units import SIZE_PRESETS
from spectropaint.brushes.settings import BrushSettings
from spectropaint.gpu.geometry import BlockGeometry

GEOMETRY = BlockGeometry(
    n_frames=2000, n_bins=513, first_hz=0.0, step_hz=22050 / 1024, first_seconds=0.0,
    step_seconds=256 / 22050,
)  # fmt: skip


@pytest.fixture
def panel(qtbot):
    panel = BrushPanel()
    qtbot.addWidget(panel)
    panel.set_geometry(GEOMETRY)
    panel.set_brush("gain", BrushSettings(radius_frames=10, radius_bins=4), {})
    return panel


def editor(panel, name) -> SpinSlider:
    return panel.findChild(SpinSlider, name)


def test_sizes_are_shown_in_milliseconds_and_hz(panel):
    length, height = editor(panel, "brush_radius_frames"), editor(panel, "brush_radius_bins")
    assert length.value() == pytest.approx(2 * 10 * 256 / 22.05, abs=0.05)
    assert height.value() == pytest.approx(2 * 4 * 22050 / 1024, abs=0.05)
    with_signal = []
    panel.changed.connect(lambda: with_signal.append(panel.settings()))
    length.spin.setValue(100.0)  # typing 100 ms
    assert with_signal[-1].radius_frames == pytest.approx(100 / (2 * 256 / 22.05))
    assert with_signal[-1].radius_bins == 4  # the other size untouched


def test_the_slider_beside_a_size_sets_it_on_a_log_scale(panel):
    length = editor(panel, "brush_radius_frames")
    length.slider.setValue(0)
    assert length.value() == pytest.approx(length.spin.minimum())
    length.slider.setValue(500)
    low, high = length.spin.minimum(), length.spin.maximum()
    assert length.value() == pytest.approx((low * high) ** 0.5, rel=1e-2)
    assert panel.settings().radius_frames == pytest.approx(
        length.value() / (2 * 256 / 22.05), rel=1e-3
    )


def test_semitones_are_measured_from_the_pointer(panel):
    panel.height_unit.setCurrentText("semitones")
    panel.set_reference_hz(440.0)
    height = editor(panel, "brush_radius_bins")
    assert panel.shown("radius_bins").unit == "semitones"
    height.spin.setValue(24.0)  # two octaves in all: 440 Hz above the pointer
    assert panel.settings().radius_bins * GEOMETRY.step_hz == pytest.approx(440.0, rel=1e-3)


def test_a_preset_sets_length_and_height(panel):
    name = "Click (short, tall)"
    index = panel.preset.findText(name)
    panel.preset.activated.emit(index)
    ms, hz = SIZE_PRESETS[name]
    settings = panel.settings()
    assert 2 * settings.radius_frames * GEOMETRY.step_seconds * 1000 == pytest.approx(ms)
    assert 2 * settings.radius_bins * GEOMETRY.step_hz == pytest.approx(hz)
    assert panel.preset.currentIndex() == 0  # ready for the next choice


def test_upper_cutoff_is_greyed_out_unless_band_pass(panel):
    panel.set_brush("filter", BrushSettings(), {"mode": "lowpass"})
    upper = panel.findChild(SpinSlider, "param_cutoff_high")
    mode = panel.own_form.itemAt(0, panel.own_form.ItemRole.FieldRole).widget()
    assert not upper.isEnabled()
    mode.setCurrentText("bandpass")
    assert upper.isEnabled() and panel.params()["mode"] == "bandpass"
    mode.setCurrentText("highpass")
    assert not upper.isEnabled()


def test_clone_offsets_in_ms_and_hz_fit_the_panel(panel, qtbot):
    panel.set_brush("clone", BrushSettings(), {"offset_frames": -64, "offset_bins": 3})
    frames = panel.findChild(SpinSlider, "param_offset_frames")
    bins = panel.findChild(SpinSlider, "param_offset_bins")
    assert frames.value() == pytest.approx(-64 * 256 / 22.05, abs=0.05)
    assert bins.value() == pytest.approx(3 * 22050 / 1024, abs=0.05)
    frames.spin.setValue(-500.0)
    assert panel.params()["offset_frames"] == round(-500 / (256 / 22.05))
    # a panel as narrow as its dock's default holds every row without scrolling sideways
    panel.resize(260, 700)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.minimumSizeHint().width() <= 300


def test_a_refused_value_is_shown_in_red_and_not_applied(panel):
    panel.set_brush("clone", BrushSettings(), {"offset_frames": -64, "offset_bins": 0})
    before = dict(panel.params())
    panel.findChild(SpinSlider, "param_offset_frames").spin.setValue(0.0)  # 0 and 0: no source
    assert panel.params() == before
    assert "offset" in panel.error.text()


def test_scale_size_stays_within_the_declared_range(panel):
    for _ in range(100):
        panel.scale_size(1.25)
    settings = panel.settings()
    assert settings.radius_frames == 4096 and settings.radius_bins == 4096
    assert dataclasses.replace(settings) == settings
