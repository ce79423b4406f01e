"""The Selection panel and menu, and File > Import Image: the window's side of selections.

:class:`SelectionController` builds everything at once for a main window (a dock with the
:class:`SelectionPanel`, a Selection menu, File > Import Image...) and, once a document is open
(:meth:`SelectionController.attach`), keeps three things in step with the session's selection:
the canvas's outline (:func:`~spectropaint.gpu.selection_overlay.selection_mask`), the transport's
loop (the selection's time span) and the time-range select tool (a time range dragged with it is a
selection too). Operations run through
:meth:`~spectropaint.app.session.Session.apply_to_selection`, the long ones (heal, de-click) as a
job of the window (:mod:`spectropaint.app.window.operation_jobs`); what goes wrong shows in the
status bar (bad parameters) or a dialog (an unreadable picture).
"""

from __future__ import annotations

import dataclasses
import os

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QMenu,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from spectropaint.app.window.operation_jobs import JOB_OPERATIONS, start
from spectropaint.brushes.actions import RecordedAction
from spectropaint.brushes.heal import MODES as HEAL_MODES
from spectropaint.brushes.image_import import IMAGE_MODES, ImagePlacement
from spectropaint.brushes.operations import FILL_BRUSHES
from spectropaint.gpu.selection_overlay import selection_mask
from spectropaint.transforms.errors import ImageFileError, SettingsError
from spectropaint.transforms.geometry import FREQ_SCALES
from spectropaint.transforms.selection import Selection, rasterise_blocks, selection_audio
from spectropaint.transforms.shapes import Range

IMAGE_FILTER = "Pictures (*.png *.jpg *.jpeg *.bmp *.gif *.tif *.tiff *.webp)"
MENU: tuple[tuple[str, str, str, str], ...] = (
    # command, text, shortcut, tip
    ("select_all", "Select &All", "Ctrl+A", "Select the whole sound"),
    ("select_none", "Select &None", "Ctrl+D", "Select nothing"),
    ("invert", "&Invert", "Ctrl+Shift+I", "Select everything the selection leaves out"),
    ("feather", "&Feather", "", "Soften the selection's edge (the panel's feather)"),
    ("audition", "A&udition", "Ctrl+Shift+P", "Play what the selection holds, alone"),
    ("", "", "", ""),
    ("gain", "&Gain", "", "Raise or lower the selection by the panel's dB"),
    ("erase", "&Erase", "Delete", "Silence the selection"),
    ("heal", "&Heal", "Ctrl+H", "Replace the selection by what surrounds it"),
    ("fill", "F&ill", "", "Apply the panel's brush to the whole selection"),
    ("cut", "Cu&t", "Ctrl+X", "Take the selection out"),
    ("copy", "&Copy", "Ctrl+C", "Take a copy of the selection"),
    ("paste", "&Paste", "Ctrl+V", "Paste at the edit cursor, moved by the panel's shift"),
    ("", "", "", ""),
    ("declick", "De-&click", "", "Find clicks (in the selection's time, or everywhere), heal each"),
    ("dehum", "De-h&um", "", "Find a hum (40-70 Hz) and lower it and its harmonics"),
)


def _spin(value: float, low: float, high: float, step: float, decimals: int, suffix: str):
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setKeyboardTracking(False)
    return box


class SelectionPanel(QWidget):
    """Options of the selection tools, the feather, and the operations' parameters and buttons
    (each button runs the Selection menu's command of the same name)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        tools = QGroupBox("Tools")
        form = QFormLayout(tools)
        self.tolerance = _spin(12.0, 0.0, 120.0, 1.0, 1, " dB")
        self.count = QSpinBox()
        self.count.setRange(1, 64)
        self.count.setValue(10)
        self.width_cents = _spin(50.0, 1.0, 1200.0, 5.0, 0, " cents")
        self.radius_seconds = _spin(0.05, 0.001, 10.0, 0.01, 3, " s")
        self.radius_hz = _spin(300.0, 1.0, 20000.0, 50.0, 0, " Hz")
        self.hardness = _spin(0.5, 0.0, 1.0, 0.1, 2, "")
        form.addRow("Wand tolerance", self.tolerance)
        form.addRow("Harmonics", self.count)
        form.addRow("Harmonic width", self.width_cents)
        form.addRow("Brush width", self.radius_seconds)
        form.addRow("Brush height", self.radius_hz)
        form.addRow("Brush hardness", self.hardness)
        edge = QGroupBox("Feather")
        form = QFormLayout(edge)
        self.feather_seconds = _spin(0.01, 0.0, 10.0, 0.005, 3, " s")
        self.feather_hz = _spin(50.0, 0.0, 20000.0, 10.0, 0, " Hz")
        form.addRow("Time", self.feather_seconds)
        form.addRow("Frequency", self.feather_hz)
        operations = QGroupBox("Operations")
        form = QFormLayout(operations)
        self.gain_db = _spin(-12.0, -150.0, 48.0, 1.0, 1, " dB")
        self.heal_mode = QComboBox()
        self.heal_mode.addItems(list(HEAL_MODES))
        self.fill_brush = QComboBox()
        self.fill_brush.addItems(list(FILL_BRUSHES))
        self.fill_brush.setCurrentText("blur")
        self.shift_hz = _spin(0.0, -20000.0, 20000.0, 10.0, 1, " Hz")
        form.addRow("Gain", self.gain_db)
        form.addRow("Heal mode", self.heal_mode)
        form.addRow("Fill with", self.fill_brush)
        form.addRow("Paste shift", self.shift_hz)
        buttons = QWidget()
        grid = QGridLayout(buttons)
        grid.setContentsMargins(0, 0, 0, 0)
        self.buttons: dict[str, QPushButton] = {}
        commands = [entry for entry in MENU if entry[0]]
        for index, (command, text, _, tip) in enumerate(commands):
            button = QPushButton(text.replace("&", ""))
            button.setObjectName(f"selection_{command}")
            button.setToolTip(tip)
            grid.addWidget(button, index // 3, index % 3)
            self.buttons[command] = button
        for group in (tools, edge, operations):
            layout.addWidget(group)
        layout.addWidget(buttons)
        layout.addStretch(1)


class ImagePlacementDialog(QDialog):
    """Where a picture goes and how loud: :class:`ImagePlacement`'s fields."""

    def __init__(self, placement: ImagePlacement, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Import Image")
        form = QFormLayout(self)
        self.t0 = _spin(placement.t0, 0.0, 1e6, 0.1, 3, " s")
        self.t1 = _spin(placement.t1, 0.0, 1e6, 0.1, 3, " s")
        self.f0 = _spin(placement.f0, 0.0, 1e6, 10.0, 1, " Hz")
        self.f1 = _spin(placement.f1, 0.0, 1e6, 10.0, 1, " Hz")
        self.top_db = _spin(placement.top_db, -120.0, 6.0, 1.0, 1, " dB")
        self.range_db = _spin(placement.range_db, 1.0, 150.0, 1.0, 1, " dB")
        self.mode = QComboBox()
        self.mode.addItems(list(IMAGE_MODES))
        self.mode.setCurrentText(placement.mode)
        self.scale = QComboBox()
        self.scale.addItems(list(FREQ_SCALES))
        self.scale.setCurrentText(placement.freq_scale)
        for label, widget in (
            ("Start", self.t0),
            ("End", self.t1),
            ("Low", self.f0),
            ("High", self.f1),
            ("White", self.top_db),
            ("Range", self.range_db),
            ("Mode", self.mode),
            ("Rows along", self.scale),
        ):
            form.addRow(label, widget)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def placement(self) -> ImagePlacement:
        return ImagePlacement(
            self.t0.value(),
            self.t1.value(),
            self.f0.value(),
            self.f1.value(),
            self.top_db.value(),
            self.range_db.value(),
            self.mode.currentText(),
            self.scale.currentText(),
        )


class SelectionController(QObject):
    """The selection's panel, menu and import action for ``window`` (a ``MainWindow``)."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.session = self.canvas = self.transport = None
        self.audition_engine = None
        self._syncing = False
        self.panel = SelectionPanel()
        """Docked by the window with its other panels."""
        self.menu = QMenu("&Selection", window)
        window.menuBar().insertMenu(window.menus["&Help"].menuAction(), self.menu)
        self.actions: dict[str, QAction] = {}
        for command, text, shortcut, tip in MENU:
            if not command:
                self.menu.addSeparator()
                continue
            action = self.menu.addAction(text)
            action.setObjectName(f"selection_{command}")
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
            action.setStatusTip(tip)
            action.triggered.connect(lambda checked=False, c=command: self.command(c))
            self.panel.buttons[command].clicked.connect(action.trigger)
            self.actions[command] = action
        self.import_action = QAction("Import &Image...", window)
        self.import_action.setObjectName("import_image")
        self.import_action.setStatusTip("Place a picture (PNG, JPEG...) on the sound as sound")
        self.import_action.triggered.connect(lambda: self.import_image())
        window.menus["&File"].insertAction(
            window.actions_by_name["export_audio"], self.import_action
        )
        for box in (
            self.panel.tolerance,
            self.panel.count,
            self.panel.width_cents,
            self.panel.radius_seconds,
            self.panel.radius_hz,
            self.panel.hardness,
        ):
            box.valueChanged.connect(self._tool_options)
        self.set_enabled(False)

    # ------------------------------------------------------------------------------ wiring
    def attach(self, session, canvas, transport, bridge) -> None:
        """Follow a newly opened document (after its bridge is made, before it starts)."""
        self.detach()
        self.session, self.canvas, self.transport = session, canvas, transport
        bridge.changed.connect(self._changed)
        canvas.selection_changed.connect(self._time_range)
        self._tool_options()
        self.set_enabled(True)

    def detach(self) -> None:
        """The document is closing."""
        self._stop_audition()
        self.session = self.canvas = self.transport = None
        self.set_enabled(False)

    def set_enabled(self, enabled: bool) -> None:
        for action in (*self.actions.values(), self.import_action):
            action.setEnabled(enabled)
        for button in self.panel.buttons.values():
            button.setEnabled(enabled)

    def _tool_options(self) -> None:
        if self.canvas is None:
            return
        tools, panel = self.canvas.tools, self.panel
        tools["wand"].tolerance_db = panel.tolerance.value()
        tools["harmonic"].count = panel.count.value()
        tools["harmonic"].width_cents = panel.width_cents.value()
        brush = tools["select_brush"]
        brush.radius_seconds = panel.radius_seconds.value()
        brush.radius_hz = panel.radius_hz.value()
        brush.hardness = panel.hardness.value()

    def _changed(self, change) -> None:
        """Draw the selection's outline and loop its time span."""
        if change.kind != "selection" or self.session is None:
            return
        selection = self.session.selection
        self.canvas.set_overlays(
            mask=selection_mask(selection, self.session.document), selection=None
        )
        self.transport.set_selection(self._time_span(selection))

    def _time_span(self, selection: Selection) -> tuple[float, float] | None:
        if selection.empty:
            return None
        t0, t1, _, _ = selection.bounds()
        return max(0.0, t0), min(self._duration(), t1)

    def _duration(self) -> float:
        document = self.session.document
        return document.n_samples / document.sample_rate

    def _time_range(self, span) -> None:
        """The time-range tool selected ``span`` (or nothing)."""
        if self.session is not None and not self._syncing:
            self._syncing = True
            try:
                self.session.set_selection(Selection.of(Range(*span)) if span else None)
            finally:
                self._syncing = False

    def _message(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 5000)

    # ----------------------------------------------------------------------------- commands
    def command(self, name: str) -> None:
        """Run the Selection menu's command ``name``."""
        if self.session is None:
            return
        selection, panel = self.session.selection, self.panel
        if name == "select_all":
            self.session.set_selection(Selection.of(Range(0.0, self._duration())))
        elif name == "select_none":
            self.session.set_selection(None)
        elif name == "invert":
            self.session.set_selection(
                selection.invert()
                if not selection.empty
                else Selection.of(Range(0.0, self._duration()))
            )
        elif name == "feather":
            feathered = selection.feathered(panel.feather_seconds.value(), panel.feather_hz.value())
            self.session.set_selection(feathered)
        elif name == "audition":
            self.audition()
        else:
            self.run(name, self.params(name))

    def params(self, name: str) -> dict:
        """The panel's parameters for operation ``name``."""
        panel = self.panel
        if name == "gain":
            return {"gain_db": panel.gain_db.value()}
        if name == "heal":
            return {"mode": panel.heal_mode.currentText()}
        if name == "fill":
            brush = panel.fill_brush.currentText()
            return {
                "brush": brush,
                "brush_params": dict(self.window.brush_params.get(brush, {})),
                "settings": self.window.brush_settings[brush].to_dict(),
            }
        if name == "paste":
            return {"at_seconds": self.transport.cursor_seconds, "shift_hz": panel.shift_hz.value()}
        return {}

    def run(self, name: str, params: dict | None = None) -> None:
        """Operation ``name`` on the selection, as one undo step, once the window is idle (the
        strokes painted and settled: :class:`~spectropaint.app.window.when_idle.WhenIdle`); a
        refusal goes to the status bar."""
        session = self.session
        self.window.when_idle.run(lambda: self._apply(session, name, params), name)

    def _apply(self, session, name: str, params: dict | None) -> None:
        if session is not self.session:
            return
        if name in JOB_OPERATIONS:  # seconds of work: on a worker thread, with Cancel
            start(self.window, session, name, params or {}, lambda region: self._done(name, region))
            return
        try:
            region = session.apply_to_selection(name, params or {})
        except SettingsError as exc:
            self._message(str(exc))
            return
        self._done(name, region)

    def _done(self, name: str, region) -> None:
        if name == "copy":
            self._message("Copied the selection")
        elif region is None:
            self._message(f"{name.title()}: nothing changed")

    # ------------------------------------------------------------------------------ audition
    def audition(self) -> None:
        """Play what the selection holds, alone (everything else silent)."""
        from spectropaint.app.playback.engine import PlaybackEngine

        session = self.session
        if session.selection.empty:
            self._message("Select something to audition first")
            return
        with session.lock:
            masks = rasterise_blocks(session.selection, session.document)
            if not masks:
                return
            _, samples = selection_audio(session.document, masks)
        self._stop_audition()
        if self.transport.playing:
            self.transport.toggle()
        engine = PlaybackEngine(
            samples, session.document.sample_rate, device=self.window.output_device
        )
        try:
            engine.play(from_sample=0)
        except RuntimeError as exc:
            self._message(f"Cannot audition: {exc}")
            return
        self.audition_engine = engine

    def _stop_audition(self) -> None:
        if self.audition_engine is not None:
            self.audition_engine.close()
            self.audition_engine = None

    # ----------------------------------------------------------------------------- pictures
    def default_placement(self) -> ImagePlacement:
        """The selection's box, else the visible part of the sound."""
        if not self.session.selection.empty:
            t0, t1, f0, f1 = self.session.selection.bounds()
        else:
            mapping = self.canvas.mapping()
            (t0, t1), (_, _, f0, f1) = mapping.seconds_span, mapping.visible
        top = self.session.document.sample_rate / 2
        t0, t1 = max(0.0, t0), min(self._duration(), t1)
        f0, f1 = max(20.0, f0), min(top, f1)
        return ImagePlacement(t0, max(t1, t0 + 0.1), f0, max(f1, f0 + 10.0))

    def import_image(
        self, path: str | None = None, placement: ImagePlacement | None = None
    ) -> None:
        """File > Import Image: ask for a picture and where it goes (when not given), then place
        it as one undo step."""
        if self.session is None:
            return
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self.window, "Import Image", self.window.store.last_folder, IMAGE_FILTER
            )
            if not path:
                return
        if placement is None:
            try:
                dialog = ImagePlacementDialog(self.default_placement(), self.window)
                if dialog.exec() != QDialog.DialogCode.Accepted:
                    return
                placement = dialog.placement()
            except SettingsError as exc:
                self._message(str(exc))
                return
        values = dataclasses.asdict(placement)
        action = RecordedAction("image", {"path": os.path.abspath(path), "placement": values})
        session = self.session

        def place() -> None:
            if session is not self.session:
                return
            try:
                session.apply_action(action)
            except ImageFileError as exc:
                QMessageBox.warning(self.window, "Cannot import", str(exc))
            except SettingsError as exc:
                self._message(str(exc))

        self.window.when_idle.run(place, "importing the picture")
