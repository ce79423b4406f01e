"""The brush-settings panel: the settings every brush has, then the chosen brush's own parameters.

Both forms are built from the declarations the brushes make (:mod:`spectropaint.brushes.params`):
label, unit, range, step and decimals come from there, so a new brush in the registry gets a panel
without changes here. The brush engine validates every value, and a value it refuses is shown in
red and not applied.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from spectropaint.brushes.params import Param, declared
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.transforms.errors import SettingsError

SIZE_STEP = 1.25
"""Factor of one press of ``[`` or ``]``."""
SPIN_LIMIT = 2**31 - 1
"""What a QSpinBox can hold."""


def _editor(value: Any, spec: Param | None) -> QWidget:
    if spec is not None and spec.choices:
        box = QComboBox()
        box.addItems(list(spec.choices))
        box.setCurrentText(str(value))
        return box
    if isinstance(value, str):
        return QLineEdit(value)
    spec = spec or Param("", low=-1e6, high=1e6, decimals=3)
    if spec.integer or (isinstance(value, int) and not isinstance(value, bool)):
        box = QSpinBox()
        box.setRange(int(max(spec.low, -SPIN_LIMIT)), int(min(spec.high, SPIN_LIMIT)))
    else:
        box = QDoubleSpinBox()
        box.setDecimals(spec.decimals)
        box.setRange(spec.low, spec.high)
    box.setSingleStep(spec.step)
    box.setValue(value)
    box.setKeyboardTracking(False)
    return box


def _value(editor: QWidget) -> Any:
    if isinstance(editor, QComboBox):
        return editor.currentText()
    return editor.text() if isinstance(editor, QLineEdit) else editor.value()


def _connect(editor: QWidget, slot) -> None:
    if isinstance(editor, QComboBox):
        editor.currentTextChanged.connect(slot)
    elif isinstance(editor, QLineEdit):
        editor.editingFinished.connect(slot)
    else:
        editor.valueChanged.connect(slot)


COMMON_FIELDS = {name: spec for name, spec in declared(BrushSettings).items() if name != "channel"}
"""The settings with a spin box (the channel has a list of its own)."""


class BrushPanel(QWidget):
    """Edits one brush's :class:`BrushSettings` and parameters; ``changed`` after each valid edit."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.brush = ""
        self._settings = BrushSettings()
        self._params: dict[str, Any] = {}
        self._common: dict[str, QWidget] = {}
        self._own: dict[str, QWidget] = {}
        layout = QVBoxLayout(self)
        common_box = QGroupBox("Brush")
        common = QFormLayout(common_box)
        for name, spec in COMMON_FIELDS.items():
            editor = _editor(getattr(self._settings, name), spec)
            editor.setObjectName(f"brush_{name}")
            _connect(editor, self._edited)
            common.addRow(spec.caption, editor)
            self._common[name] = editor
        self.channel = QComboBox()
        self.channel.setObjectName("brush_channel")
        self.channel.currentIndexChanged.connect(self._edited)
        common.addRow("Channels", self.channel)
        self.set_channel_count(1)
        self.own_box = QGroupBox("Parameters")
        self.own_form = QFormLayout(self.own_box)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b")
        layout.addWidget(common_box)
        layout.addWidget(self.own_box)
        layout.addWidget(self.error)
        layout.addStretch(1)

    # ------------------------------------------------------------------------------- reading
    def settings(self) -> BrushSettings:
        return self._settings

    def params(self) -> dict[str, Any]:
        return dict(self._params)

    def set_channel_count(self, count: int) -> None:
        self.channel.blockSignals(True)
        self.channel.clear()
        self.channel.addItem("All (linked)", None)
        for index in range(count):
            self.channel.addItem(f"Channel {index + 1}", index)
        self.channel.blockSignals(False)

    # ------------------------------------------------------------------------------- writing
    def set_brush(self, name: str, settings: BrushSettings, params: dict[str, Any]) -> None:
        """Show brush ``name`` with ``settings`` and its parameters (defaults for those not given)."""
        kind = brush_kind(name)
        self.brush = name
        self._settings = settings
        self._params = dataclasses.asdict(kind.params(params))
        for field, editor in self._common.items():
            editor.blockSignals(True)
            editor.setValue(getattr(settings, field))
            editor.blockSignals(False)
        self.channel.blockSignals(True)
        index = self.channel.findData(settings.channel)
        self.channel.setCurrentIndex(max(0, index))
        self.channel.blockSignals(False)
        while self.own_form.rowCount():
            self.own_form.removeRow(0)
        self._own = {}
        specs = declared(kind.params_type)
        for field, value in self._params.items():
            spec = specs.get(field)
            editor = _editor(value, spec)
            editor.setObjectName(f"param_{field}")
            _connect(editor, self._edited)
            caption = spec.caption if spec else field.replace("_", " ").capitalize()
            self.own_form.addRow(caption, editor)
            self._own[field] = editor
        self.own_box.setTitle(f"{name.title()} parameters")
        self.own_box.setVisible(bool(self._own))
        self.error.clear()

    def scale_size(self, factor: float) -> None:
        """Multiply both radii by ``factor`` (``[`` and ``]``), within the spin boxes' range."""
        for field in ("radius_frames", "radius_bins"):
            editor = self._common[field]
            editor.setValue(editor.value() * factor)

    def _edited(self, *args) -> None:
        values = {field: _value(editor) for field, editor in self._common.items()}
        values["channel"] = self.channel.currentData()
        params = {field: _value(editor) for field, editor in self._own.items()}
        try:
            settings = BrushSettings(**values)
            checked = dataclasses.asdict(brush_kind(self.brush).params(params))
        except SettingsError as exc:
            self.error.setText(str(exc))
            return
        self.error.clear()
        self._settings, self._params = settings, checked
        self.changed.emit()
