"""The brush-settings panel: size presets, the settings every brush has, then the chosen brush's own
parameters.

Both forms are built from the declarations the brushes make (:mod:`spectropaint.brushes.params`):
label, unit, range, step and decimals come from there, converted to the units people use by
:mod:`spectropaint.app.param_units` (the size in milliseconds and Hz or semitones, offsets in
milliseconds and Hz), so a new brush in the registry gets a panel without changes here. Each number
has a spin box and a slider. The brush engine validates every value, and a value it refuses is
shown in red and not applied.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from spectropaint.app.panels.spin_slider import SpinSlider
from spectropaint.app.param_units import (
    DEFAULT_GEOMETRY,
    DEFAULT_REFERENCE_HZ,
    HEIGHT_UNITS,
    SIZE_PRESETS,
    Shown,
    preset_radii,
    shown_as,
)
from spectropaint.brushes.params import Param, declared
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.transforms.errors import SettingsError

SIZE_STEP = 1.25
"""Factor of one press of ``[`` or ``]``."""
COMMON_FIELDS = {name: spec for name, spec in declared(BrushSettings).items() if not spec.optional}
"""The settings with an editor (the channel has a list of its own; the physical radii of strokes
files are not edited here: the panel shows the frames and bins in ms and Hz or semitones)."""
NO_PRESET = "Size preset..."
UNDER_POINTER = "lane"
"""The Channels list's entry for editing the channel under the pointer."""


def _number_editor(spec: Shown) -> SpinSlider:
    editor = SpinSlider()
    editor.configure(
        spec.low, spec.high, step=spec.step, decimals=spec.decimals, log=spec.log, suffix=""
    )
    return editor


def _choice_editor(spec: Param, value: Any) -> QComboBox:
    box = QComboBox()
    box.addItems(list(spec.choices))
    box.setCurrentText(str(value))
    return box


class BrushPanel(QWidget):
    """Edits one brush's :class:`BrushSettings` and parameters; ``changed`` after each valid edit."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.brush = ""
        self.geometry: BlockGeometry = DEFAULT_GEOMETRY
        self.reference_hz = DEFAULT_REFERENCE_HZ
        self._settings = BrushSettings()
        self._params: dict[str, Any] = {}
        self._common: dict[str, SpinSlider] = {}
        self._own: dict[str, QWidget] = {}
        self._shown: dict[str, Shown] = {}
        self._labels: dict[str, QLabel] = {}
        layout = QVBoxLayout(self)
        common_box = QGroupBox("Brush")
        self.common_form = QFormLayout(common_box)
        self.common_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.preset = QComboBox()
        self.preset.setObjectName("brush_preset")
        self.preset.addItems([NO_PRESET, *SIZE_PRESETS])
        self.preset.setToolTip("Set the size (length x height) to a common one")
        self.preset.activated.connect(self._preset_chosen)
        self.common_form.addRow("Preset", self.preset)
        self.height_unit = QComboBox()
        self.height_unit.setObjectName("brush_height_unit")
        self.height_unit.addItems(list(HEIGHT_UNITS))
        self.height_unit.setToolTip(
            "Height in Hz, or in semitones above the frequency under the pointer"
        )
        self.height_unit.currentTextChanged.connect(lambda _: self._show_settings())
        for name in COMMON_FIELDS:
            editor = SpinSlider()
            editor.setObjectName(f"brush_{name}")
            editor.valueChanged.connect(lambda value, name=name: self._common_edited(name))
            self._common[name] = editor
            self._labels[name] = QLabel()
            if name == "radius_bins":
                row = QWidget()
                box = QHBoxLayout(row)
                box.setContentsMargins(0, 0, 0, 0)
                box.addWidget(editor, 1)
                box.addWidget(self.height_unit, 0)
                self.common_form.addRow(self._labels[name], row)
            else:
                self.common_form.addRow(self._labels[name], editor)
        self.channel = QComboBox()
        self.channel.setObjectName("brush_channel")
        self.channel.currentIndexChanged.connect(self._channel_edited)
        self.common_form.addRow("Channels", self.channel)
        self.set_channel_count(1)
        self.own_box = QGroupBox("Parameters")
        self.own_form = QFormLayout(self.own_box)
        self.own_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b")
        layout.addWidget(common_box)
        layout.addWidget(self.own_box)
        layout.addWidget(self.error)
        layout.addStretch(1)
        self._show_settings()

    # ------------------------------------------------------------------------------- reading
    def settings(self) -> BrushSettings:
        return self._settings

    def params(self) -> dict[str, Any]:
        return dict(self._params)

    def shown(self, field: str) -> Shown:
        """How setting or parameter ``field`` is shown now (its unit and conversion)."""
        return self._shown[field]

    def set_channel_count(self, count: int) -> None:
        self.channel.blockSignals(True)
        self.channel.clear()
        self.channel.addItem("All (linked)", None)
        if count > 1:
            self.channel.addItem("The one under the pointer", UNDER_POINTER)
        for index in range(count):
            self.channel.addItem(f"Channel {index + 1}", index)
        self.channel.blockSignals(False)

    @property
    def per_lane(self) -> bool:
        """A stroke edits the channel of the lane it starts in (settings name no channel)."""
        return self.channel.currentData() == UNDER_POINTER

    # ------------------------------------------------------------------------------- writing
    def set_geometry(self, geometry: BlockGeometry) -> None:
        """Show sizes and offsets for a document with these axes."""
        self.geometry = geometry
        self._show_settings()
        if self.brush:
            self._build_params()

    def set_reference_hz(self, hz: float) -> None:
        """Where a height in semitones is measured (the pointer's frequency)."""
        if hz > 0 and self.height_unit.currentText() == "semitones":
            self.reference_hz = hz
            self._show_settings()
        elif hz > 0:
            self.reference_hz = hz

    def set_brush(
        self,
        name: str,
        settings: BrushSettings,
        params: dict[str, Any],
        per_lane: bool = False,
    ) -> None:
        """Show brush ``name`` with ``settings`` and its parameters (defaults for those not given);
        ``per_lane``: it edits the channel under the pointer."""
        kind = brush_kind(name)
        self.brush = name
        self._settings = settings
        self._params = dataclasses.asdict(kind.params(params))
        self._show_settings()
        self.channel.blockSignals(True)
        chosen = UNDER_POINTER if per_lane and settings.channel is None else settings.channel
        self.channel.setCurrentIndex(max(0, self.channel.findData(chosen)))
        self.channel.blockSignals(False)
        self._build_params()
        self.own_box.setTitle(f"{name.title()} parameters")
        self.own_box.setVisible(bool(self._own))
        self.error.clear()

    def scale_size(self, factor: float) -> None:
        """Multiply both radii by ``factor`` (``[`` and ``]``), within their declared range."""
        fields = {}
        for name in ("radius_frames", "radius_bins"):
            spec = COMMON_FIELDS[name]
            fields[name] = min(max(getattr(self._settings, name) * factor, spec.low), spec.high)
        self._apply_settings(dataclasses.replace(self._settings, **fields))

    def apply_preset(self, name: str) -> None:
        """Give the brush the size of preset ``name`` (:data:`SIZE_PRESETS`)."""
        limits = (COMMON_FIELDS["radius_frames"], COMMON_FIELDS["radius_bins"])
        frames, bins = preset_radii(name, self.geometry, limits)
        self._apply_settings(
            dataclasses.replace(self._settings, radius_frames=frames, radius_bins=bins)
        )

    # -------------------------------------------------------------------------------- showing
    def _show_settings(self) -> None:
        """Put the settings' values in their editors, in the units shown now."""
        for name, editor in self._common.items():
            spec = shown_as(
                name,
                COMMON_FIELDS[name],
                self.geometry,
                height_unit=self.height_unit.currentText(),
                reference_hz=self.reference_hz,
            )
            self._shown[name] = spec
            editor.blockSignals(True)
            editor.configure(
                spec.low, spec.high, step=spec.step, decimals=spec.decimals, log=spec.log
            )
            editor.setValue(spec.to_shown(getattr(self._settings, name)))
            editor.blockSignals(False)
            self._labels[name].setText(spec.caption if name != "radius_bins" else spec.label)
            editor.setToolTip(COMMON_FIELDS[name].caption)

    def _build_params(self) -> None:
        while self.own_form.rowCount():
            self.own_form.removeRow(0)
        self._own = {}
        specs = declared(brush_kind(self.brush).params_type)
        for field, value in self._params.items():
            spec = specs.get(field) or Param(field.replace("_", " ").capitalize())
            if spec.optional:  # physical offsets of strokes files; the panel shows ms and Hz
                continue
            if spec.choices:
                editor = _choice_editor(spec, value)
                editor.currentTextChanged.connect(lambda _, f=field: self._param_edited(f))
                caption = spec.caption
            elif isinstance(value, str):
                editor = QLineEdit(value)
                editor.editingFinished.connect(lambda f=field: self._param_edited(f))
                caption = spec.caption
            else:
                shown = shown_as(field, spec, self.geometry)
                self._shown[field] = shown
                editor = _number_editor(shown)
                editor.setValue(shown.to_shown(value))
                editor.valueChanged.connect(lambda _, f=field: self._param_edited(f))
                caption = shown.caption
            editor.setObjectName(f"param_{field}")
            self.own_form.addRow(caption, editor)
            self._own[field] = editor
        self._update_enabled(specs)

    def _update_enabled(self, specs: dict[str, Param]) -> None:
        """Grey out parameters that do not matter with the others' values (``used_when``)."""
        for field, editor in self._own.items():
            spec = specs.get(field)
            if spec is None or spec.used_when is None:
                continue
            other, values = spec.used_when
            used = str(self._params.get(other)) in values
            editor.setEnabled(used)
            label = self.own_form.labelForField(editor)
            if label is not None:
                label.setEnabled(used)

    # -------------------------------------------------------------------------------- editing
    def _apply_settings(self, settings: BrushSettings) -> None:
        self._settings = settings
        self._show_settings()
        self.error.clear()
        self.changed.emit()

    def _common_edited(self, name: str) -> None:
        value = self._shown[name].from_shown(self._common[name].value())
        self._try(lambda: dataclasses.replace(self._settings, **{name: value}), None)

    def _channel_edited(self) -> None:
        channel = None if self.per_lane else self.channel.currentData()
        self._try(lambda: dataclasses.replace(self._settings, channel=channel), None)

    def _param_edited(self, field: str) -> None:
        editor = self._own[field]
        if isinstance(editor, QComboBox):
            value: Any = editor.currentText()
        elif isinstance(editor, QLineEdit):
            value = editor.text()
        else:
            value = self._shown[field].from_shown(editor.value())
        self._try(None, {**self._params, field: value})

    def _try(self, make_settings, params: dict[str, Any] | None) -> None:
        """Apply new settings or parameters if the brush accepts them; else say why in red."""
        try:
            settings = make_settings() if make_settings is not None else self._settings
            checked = self._params
            if params is not None:
                checked = dataclasses.asdict(brush_kind(self.brush).params(params))
        except SettingsError as exc:
            self.error.setText(str(exc))
            return
        self.error.clear()
        self._settings, self._params = settings, checked
        if self.brush:
            self._update_enabled(declared(brush_kind(self.brush).params_type))
        self.changed.emit()

    def _preset_chosen(self, index: int) -> None:
        name = self.preset.itemText(index)
        if name in SIZE_PRESETS:
            self.apply_preset(name)
        self.preset.setCurrentIndex(0)
