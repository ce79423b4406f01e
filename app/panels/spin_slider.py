"""A spin box with a slider beside it, for one number: type an exact value or drag a rough one.

Sizes slide on a logarithmic scale (a brush from 10 ms to 10 s needs the fine end as much as the
coarse one); other numbers slide linearly. Only the spin box's value is the truth: the slider maps
its position to it.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QSizePolicy, QSlider, QWidget

SLIDER_STEPS = 1000


class SpinSlider(QWidget):
    """``valueChanged(float)`` when the person changes the value (never for :meth:`setValue`
    inside :meth:`blockSignals`)."""

    valueChanged = Signal(float)  # noqa: N815 - Qt's naming, like QDoubleSpinBox's

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.spin = QDoubleSpinBox()
        self.spin.setKeyboardTracking(False)
        self.spin.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setMinimumWidth(60)
        self.log = False
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.spin, 0)
        layout.addWidget(self.slider, 1)
        self.spin.valueChanged.connect(self._spin_changed)
        self.slider.valueChanged.connect(self._slider_moved)

    def configure(
        self, low: float, high: float, *, step: float, decimals: int, log: bool, suffix: str = ""
    ) -> None:
        """Range, step and decimals of the spin box; ``log`` for a logarithmic slider."""
        blocked = self.spin.blockSignals(True)
        self.spin.setDecimals(decimals)
        self.spin.setRange(low, high)
        self.spin.setSingleStep(step)
        self.spin.setSuffix(f" {suffix}" if suffix else "")
        self.spin.blockSignals(blocked)
        self.log = log and low > 0
        self._place_slider()

    def value(self) -> float:
        return self.spin.value()

    def setValue(self, value: float) -> None:  # noqa: N802 - Qt's naming
        self.spin.setValue(value)
        self._place_slider()

    def _fraction(self, value: float) -> float:
        low, high = self.spin.minimum(), self.spin.maximum()
        if high <= low:
            return 0.0
        if self.log:
            return math.log(value / low) / math.log(high / low)
        return (value - low) / (high - low)

    def _value_at(self, fraction: float) -> float:
        low, high = self.spin.minimum(), self.spin.maximum()
        if self.log:
            return low * (high / low) ** fraction
        return low + fraction * (high - low)

    def _place_slider(self) -> None:
        blocked = self.slider.blockSignals(True)
        self.slider.setValue(round(self._fraction(self.spin.value()) * SLIDER_STEPS))
        self.slider.blockSignals(blocked)

    def _spin_changed(self, value: float) -> None:
        self._place_slider()
        if not self.signalsBlocked():
            self.valueChanged.emit(value)

    def _slider_moved(self, position: int) -> None:
        self.spin.setValue(self._value_at(position / SLIDER_STEPS))  # emits through the spin box
