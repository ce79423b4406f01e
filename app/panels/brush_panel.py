"""The brush-settings panel: the settings every brush has, then the chosen brush's own parameters.

The form for a brush's parameters is built from its parameter dataclass (``BrushKind.params_type``),
so a new brush in the registry gets a panel without changes here. The ranges below only bound the
spin boxes; the brush engine validates every value, and a value it refuses is shown in red and not
applied.
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

from spectropaint.brushes.kernels.clone import MAX_OFFSET
from spectropaint.brushes.kernels.gain import ERASE_DB
from spectropaint.brushes.kernels.phase import PHASE_MODES
from spectropaint.brushes.kernels.spectral_filter import MODES
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.transforms.errors import SettingsError

SIZE_STEP = 1.25
"""Factor of one press of ``[`` or ``]``."""

# field: (label, minimum, maximum, step, decimals)
COMMON_FIELDS: dict[str, tuple[str, float, float, float, int]] = {
    "radius_frames": ("Width (frames)", 0.5, 4096, 1.0, 1),
    "radius_bins": ("Height (bins)", 0.5, 4096, 1.0, 1),
    "hardness": ("Hardness", 0.0, 1.0, 0.05, 2),
    "strength": ("Strength", 0.0, 1.0, 0.05, 2),
    "spacing": ("Spacing (radii)", 0.02, 4.0, 0.05, 2),
    "pressure_size": ("Pressure → size", 0.0, 1.0, 0.1, 2),
    "pressure_strength": ("Pressure → strength", 0.0, 1.0, 0.1, 2),
}
PARAM_FIELDS: dict[str, tuple[str, float, float, float, int]] = {
    "gain_db": ("Gain (dB)", ERASE_DB, 48.0, 1.0, 1),
    "level_db": ("Level (dB)", -120.0, 6.0, 1.0, 1),
    "harmonics": ("Harmonics", 1, 64, 1, 0),
    "rolloff_db": ("Roll-off (dB/octave)", 0.0, 60.0, 1.0, 1),
    "sigma": ("Blur (radii)", 0.01, 2.0, 0.05, 2),
    "amount": ("Amount", 0.0, 2.0, 0.1, 2),
    "cutoff": ("Cutoff (cycles/cell)", 0.005, 0.5, 0.005, 3),
    "cutoff_high": ("Upper cutoff", 0.005, 0.5, 0.005, 3),
    "offset_frames": ("Source offset (frames)", -MAX_OFFSET, MAX_OFFSET, 1, 0),
    "offset_bins": ("Source offset (bins)", -MAX_OFFSET, MAX_OFFSET, 1, 0),
}
CHOICES: dict[str, tuple[str, ...]] = {"mode": MODES, "phase": PHASE_MODES}
"""Text parameters with a fixed set of values; any other text parameter gets a line edit."""


def _editor(value: Any, spec: tuple[str, float, float, float, int] | None, choices=None) -> QWidget:
    if choices is not None:
        box = QComboBox()
        box.addItems(list(choices))
        box.setCurrentText(str(value))
        return box
    if isinstance(value, str):
        return QLineEdit(value)
    label, low, high, step, decimals = spec or ("", -1e6, 1e6, 1.0, 3)
    if isinstance(value, int) and not isinstance(value, bool):
        box = QSpinBox()
        box.setRange(int(max(low, -(2**31) + 1)), int(min(high, 2**31 - 1)))
    else:
        box = QDoubleSpinBox()
        box.setDecimals(decimals)
        box.setRange(low, high)
    box.setSingleStep(step)
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
            common.addRow(spec[0], editor)
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
        for field, value in self._params.items():
            spec = PARAM_FIELDS.get(field)
            editor = _editor(value, spec, CHOICES.get(field))
            editor.setObjectName(f"param_{field}")
            _connect(editor, self._edited)
            self.own_form.addRow(spec[0] if spec else field.replace("_", " ").capitalize(), editor)
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
