"""View controls: colormap, dB floor and range, gamma, frequency scale, channels and mode shown.

Every control but one maps to one :class:`~spectropaint.gpu.view.ViewSettings` field; the panel
emits the fields it holds, and the canvas only rewrites its uniforms (nothing is uploaded). The
Channels list also offers "All, stacked" (a lane per channel, L above R): that is the ``stacked``
entry of what it emits.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QWidget

from spectropaint.gpu.colormaps import MAGNITUDE_COLORMAPS
from spectropaint.gpu.view import MODES, ViewSettings
from spectropaint.transforms.geometry import FREQ_SCALES

STACKED = "All, stacked"
AUTO_FLOOR = -241.0
"""The floor spin box's minimum, shown as "Auto" (``floor_db=None``: minus the range)."""


class ViewPanel(QWidget):
    """Emits ``changed(fields)`` with every field it holds whenever one of them changes."""

    changed = Signal(dict)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._kept_channel = 0
        form = QFormLayout(self)
        self.colormap = QComboBox()
        self.colormap.addItems(list(MAGNITUDE_COLORMAPS))
        self.floor = QDoubleSpinBox()
        self.floor.setRange(AUTO_FLOOR, 60.0)
        self.floor.setSpecialValueText("Auto")
        self.floor.setSuffix(" dB")
        self.range = QDoubleSpinBox()
        self.range.setRange(1.0, 240.0)
        self.range.setSuffix(" dB")
        self.gamma = QDoubleSpinBox()
        self.gamma.setRange(0.1, 5.0)
        self.gamma.setSingleStep(0.1)
        self.scale = QComboBox()
        self.scale.addItems(list(FREQ_SCALES))
        self.channel = QComboBox()
        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        rows = (
            ("Colormap", self.colormap, "Colours from quiet to loud"),
            ("Floor", self.floor, "Level drawn with the first colour (Auto: minus the range)"),
            ("Range", self.range, "dB from the floor to the top colour"),
            ("Gamma", self.gamma, "Below 1 brightens quiet parts, above 1 darkens them"),
            ("Frequency", self.scale, "Frequency axis: linear, logarithmic (notes) or mel"),
            ("Channel", self.channel, "Every channel in a lane of its own, or one channel"),
            ("Show", self.mode, "Magnitude, or phase with a cyclic colormap"),
        )
        for label, widget, tip in rows:
            widget.setObjectName(f"view_{label.lower()}")
            widget.setToolTip(tip)
            form.addRow(label, widget)
            signal = (
                widget.valueChanged
                if isinstance(widget, QDoubleSpinBox)
                else widget.currentIndexChanged
            )
            signal.connect(self._emit)
        for box in (self.floor, self.range, self.gamma):
            box.setKeyboardTracking(False)

    def set_values(self, view: ViewSettings, n_channels: int, stacked: bool = False) -> None:
        """Show ``view``'s fields (and whether channels are ``stacked``) without emitting."""
        widgets = (
            self.colormap,
            self.floor,
            self.range,
            self.gamma,
            self.scale,
            self.channel,
            self.mode,
        )
        for widget in widgets:
            widget.blockSignals(True)
        self.colormap.setCurrentText(view.colormap)
        self.floor.setValue(AUTO_FLOOR if view.floor_db is None else view.floor_db)
        self.range.setValue(view.range_db)
        self.gamma.setValue(view.gamma)
        self.scale.setCurrentText(view.freq_scale)
        self.channel.clear()
        self._kept_channel = min(view.channel, n_channels - 1)
        if n_channels > 1:
            self.channel.addItem(STACKED, -1)
        for index in range(n_channels):
            self.channel.addItem(f"Channel {index + 1}", index)
        shown = -1 if stacked and n_channels > 1 else min(view.channel, n_channels - 1)
        self.channel.setCurrentIndex(max(0, self.channel.findData(shown)))
        self.mode.setCurrentText(view.mode)
        for widget in widgets:
            widget.blockSignals(False)

    def values(self) -> dict[str, Any]:
        """The view's fields, and ``stacked``: every channel in a lane of its own."""
        floor = self.floor.value()
        chosen = self.channel.currentData()
        stacked = chosen == -1
        if not stacked:  # stacked, the channel stays what it was: shown again when unstacked
            self._kept_channel = max(0, chosen or 0)
        return {
            "colormap": self.colormap.currentText(),
            "floor_db": None if floor <= AUTO_FLOOR else floor,
            "range_db": self.range.value(),
            "gamma": self.gamma.value(),
            "freq_scale": self.scale.currentText(),
            "channel": self._kept_channel,
            "mode": self.mode.currentText(),
            "stacked": stacked,
        }

    def _emit(self, *args) -> None:
        self.changed.emit(self.values())
