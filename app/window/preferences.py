"""Edit > Preferences: autosave, how the view follows the playhead, the grid, the brush height's
unit and the undo history's memory, kept in the :class:`~spectropaint.app.settings_store.SettingsStore`."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QSpinBox,
    QWidget,
)

from spectropaint.app.settings_store import (
    AUTOSAVE_CHOICES,
    FOLLOW_MODES,
    HEIGHT_UNITS,
    SettingsStore,
)

FOLLOW_NAMES = {"off": "Stay", "page": "Turn pages", "smooth": "Scroll smoothly"}


class PreferencesDialog(QDialog):
    """Shows the stored preferences; :meth:`accept` writes them back (the window then applies
    them)."""

    def __init__(self, store: SettingsStore, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.store = store
        form = QFormLayout(self)
        self.autosave = QComboBox()
        self.autosave.addItems(list(AUTOSAVE_CHOICES))
        seconds = list(AUTOSAVE_CHOICES.values())
        if store.autosave_interval_s in seconds:
            self.autosave.setCurrentIndex(seconds.index(store.autosave_interval_s))
        self.autosave_edits = QSpinBox()
        self.autosave_edits.setRange(0, 10_000)
        self.autosave_edits.setSpecialValueText("Never")
        self.autosave_edits.setValue(store.autosave_strokes)
        self.follow = QComboBox()
        for mode in FOLLOW_MODES:
            self.follow.addItem(FOLLOW_NAMES[mode], mode)
        self.follow.setCurrentIndex(FOLLOW_MODES.index(store.follow_mode))
        self.grid = QCheckBox("Lines at the rulers' labels")
        self.grid.setChecked(store.show_grid)
        self.height_unit = QComboBox()
        self.height_unit.addItems(list(HEIGHT_UNITS))
        self.height_unit.setCurrentText(store.height_unit)
        self.history = QSpinBox()
        self.history.setRange(16, 65_536)
        self.history.setSuffix(" MiB")
        self.history.setValue(store.history_mib)
        self.history.setToolTip("For documents opened from now on")
        for label, widget in (
            ("Autosave every", self.autosave),
            ("Autosave after edits", self.autosave_edits),
            ("While playing, the view", self.follow),
            ("Grid", self.grid),
            ("Brush height in", self.height_unit),
            ("Undo memory", self.history),
        ):
            widget.setObjectName(f"pref_{label.split()[0].lower()}_{label.split()[-1].lower()}")
            form.addRow(label, widget)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def accept(self) -> None:
        store = self.store
        store.autosave_interval_s = AUTOSAVE_CHOICES[self.autosave.currentText()]
        store.autosave_strokes = self.autosave_edits.value()
        store.follow_mode = self.follow.currentData()
        store.show_grid = self.grid.isChecked()
        store.height_unit = self.height_unit.currentText()
        store.history_mib = self.history.value()
        super().accept()
