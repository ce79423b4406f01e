"""The main window: lays out the canvas with rulers and colour bar, tools, brush and view panels,
menus and status bar, and wires them to the open :class:`~spectropaint.app.session.Session`.

A document is opened on a worker thread (:mod:`spectropaint.app.files.workers`); when it arrives
the window makes a session of it, a canvas that draws it, and a
:class:`~spectropaint.app.playback.transport.Transport` that plays it. Edits go through the session,
whose one change event reaches the canvas, playback, autosave and the window's title (through a
:class:`~.session_bridge.SessionBridge`, on the GUI thread). The menus' handlers live in
:mod:`.commands`, opening audio and exporting in :mod:`spectropaint.app.files.file_actions`,
projects in :mod:`spectropaint.app.files.project_actions`.

The document is the project: ``session.modified`` says it holds edits no project file has, and only
saving the project clears it (an audio export is a rendering of it, not a save).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QTextEdit,
)

from spectropaint.app.files import file_actions, project_actions
from spectropaint.app.files.autosave import Autosave
from spectropaint.app.panels.brush_panel import BrushPanel
from spectropaint.app.panels.history_panel import HistoryPanel
from spectropaint.app.panels.reference_view import ReferenceView
from spectropaint.app.panels.selection_panel import SelectionController
from spectropaint.app.panels.tool_palette import ToolPalette
from spectropaint.app.panels.view_panel import ViewPanel
from spectropaint.app.playback.engine import OutputDevice, find_output_device
from spectropaint.app.playback.transport import Transport
from spectropaint.app.readout import level_db, readout_text
from spectropaint.app.session import Change, Session
from spectropaint.app.settings_store import AUTOSAVE_CHOICES, SettingsStore
from spectropaint.app.tools.registry import VIEW_TOOLS
from spectropaint.app.window.actions import build_menus
from spectropaint.app.window.canvas_widget import SpectrogramCanvas
from spectropaint.app.window.commands import Commands
from spectropaint.app.window.docks import add_dock, panels_menu
from spectropaint.app.window.editor_area import EditorArea
from spectropaint.app.window.session_bridge import SessionBridge
from spectropaint.app.window.status_line import StatusLine
from spectropaint.app.window.transport_bar import TransportBar
from spectropaint.app.window.transport_view import TransportView
from spectropaint.brushes.recorded import RecordedStroke
from spectropaint.brushes.registry import BRUSHES, brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.gpu.errors import GPUUnavailableError
from spectropaint.gpu.view import STORED_FIELDS, ViewSettings, view_from_values, view_values
from spectropaint.gpu.view_mapping import Point
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.files.project_file import is_project

TEXT_INPUTS = (QLineEdit, QTextEdit, QPlainTextEdit)
PLAYBACK_OFF = "Playback is off"
PLAYHEAD_ACTIONS = (
    "play_pause",
    "play_from_cursor",
    "play_selection",
    "stop",
    "rewind",
    "go_to_end",
)
"""Enabled without an output device: Play looks for one again; the playhead moves regardless."""
PLAYBACK_ACTIONS = (*PLAYHEAD_ACTIONS, "loop", "bypass")
DEFAULT_TOOL = "gain"
DEFAULT_VIEW = ViewSettings(freq_scale="log")


class MainWindow(QMainWindow):
    """SpectroPaint's window.

    Parameters
    ----------
    settings : SettingsStore, optional
        Preferences (the user's by default; tests pass a store on a temporary INI file).
    torch_device : str, optional
        Where documents compute (``choose_device`` semantics).
    output_device : OutputDevice, optional
        Where playback goes; by default PortAudio's default output (or none, with a reason).
    recovery_folder : str, optional
        Where autosaves go (``autosave.recovery_folder()`` for the app); None: no autosave.
    """

    document_loaded = Signal()

    def __init__(
        self,
        *,
        settings: SettingsStore | None = None,
        torch_device: str | None = None,
        output_device: OutputDevice | None = None,
        recovery_folder: str | None = None,
    ):
        super().__init__()
        self.setStatusBar(StatusLine(self))
        self.store = settings or SettingsStore()
        self.torch_device = torch_device
        self.output_device = output_device if output_device is not None else find_output_device()
        self.session: Session | None = None
        self.bridge: SessionBridge | None = None
        self.canvas: SpectrogramCanvas | None = None
        self.transport: Transport | None = None
        self.transport_view: TransportView | None = None
        self.job = None
        self.preferences_dialog = None
        self.export_dialog = None
        self.shortcut_sheet = None
        self.after_save = None
        """What to do once the save that an 'unsaved edits' question asked for succeeds."""
        self.brush_settings: dict[str, BrushSettings] = {}
        self.brush_params: dict[str, dict] = {}
        self.brush_lanes: dict[str, bool] = {}
        """Brushes that edit the channel under the pointer (when no channel is chosen)."""
        self.setWindowTitle("SpectroPaint")
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self.commands = Commands(self)
        self.actions_by_name, self.menus = build_menus(self, self.commands)
        self.recent_menu = QMenu("Open &Recent", self)
        self.menus["&File"].insertMenu(self.actions_by_name["save_project"], self.recent_menu)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.autosave = None
        if recovery_folder is not None:
            self.autosave = Autosave(
                self,
                lambda: self.session,
                self.view_values,
                recovery_folder,
                interval_s=self.store.autosave_interval_s,
                every=self.store.autosave_strokes,
            )
            self.autosave.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
            self._build_autosave_menu()
        self._build_editor()
        self._build_panels()
        self._build_status()
        self._load_preferences()
        self.set_document_actions(False)
        self.store.restore_window(self)
        QApplication.instance().installEventFilter(self)

    # ------------------------------------------------------------------------------- building
    def _build_editor(self) -> None:
        self.editor = EditorArea()
        self.time_ruler, self.freq_ruler = self.editor.time_ruler, self.editor.freq_ruler
        self.color_bar, self.overview = self.editor.color_bar, self.editor.overview
        self.time_ruler.pressed.connect(self._set_cursor)
        self.setCentralWidget(self.editor)

    def _build_panels(self) -> None:
        self.palette = ToolPalette(self)
        self.addToolBar(Qt.ToolBarArea.LeftToolBarArea, self.palette)
        self.palette.tool_chosen.connect(self._choose_tool)
        tools_menu = self.menus["&Tools"]
        for name, action in self.palette.actions_by_tool.items():
            if name == next(iter(VIEW_TOOLS)):
                tools_menu.addSeparator()
            tools_menu.addAction(action)
        self.transport_bar = TransportBar(self.actions_by_name, self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.transport_bar)
        self.brush_panel = BrushPanel()
        self.brush_panel.height_unit.setCurrentText(self.store.height_unit)
        self.brush_panel.changed.connect(self._brush_edited)
        self.view_panel = ViewPanel()
        self.view_panel.changed.connect(self._view_edited)
        self.history_panel = HistoryPanel()
        self.reference_view = ReferenceView()
        self.selection_ui = SelectionController(self)
        self.docks = {
            title: add_dock(self, title, widget)
            for title, widget in (
                ("Brush", self.brush_panel),
                ("View", self.view_panel),
                ("Selection", self.selection_ui.panel),
                ("History", self.history_panel),
                ("Reference", self.reference_view),
            )
        }
        for title in ("Selection", "History", "Reference"):  # one tabbed group under the brush
            self.tabifyDockWidget(self.docks["View"], self.docks[title])
        self.docks["View"].raise_()
        self.panels_menu = panels_menu(
            self.menus["&View"], list(self.docks.values()), [self.palette, self.transport_bar]
        )

    def _build_autosave_menu(self) -> None:
        menu = QMenu("&Autosave Every", self)
        entries = self.menus["&File"].actions()
        separator = entries[entries.index(self.actions_by_name["export_audio"]) - 1]
        self.menus["&File"].insertMenu(separator, menu)
        group = QActionGroup(menu)
        self.autosave_group = group
        for text, seconds in AUTOSAVE_CHOICES.items():
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(seconds == self.store.autosave_interval_s)
            action.triggered.connect(lambda checked=False, s=seconds: self._set_autosave(s))
            group.addAction(action)
        self.autosave_menu = menu

    def _set_autosave(self, seconds: float) -> None:
        self.store.autosave_interval_s = seconds
        self.autosave.set_interval(seconds)

    def apply_preferences(self) -> None:
        """Take the stored preferences (after the Preferences dialog): autosave, playhead
        following, grid, brush height unit. The undo memory applies to documents opened later."""
        store = self.store
        if self.autosave is not None:
            self.autosave.set_interval(store.autosave_interval_s)
            self.autosave.every = store.autosave_strokes
            for action in self.autosave_group.actions():
                action.setChecked(AUTOSAVE_CHOICES[action.text()] == store.autosave_interval_s)
        self.actions_by_name[f"follow_{store.follow_mode}"].setChecked(True)
        self.actions_by_name["show_grid"].setChecked(store.show_grid)
        self.brush_panel.height_unit.setCurrentText(store.height_unit)

    def _build_status(self) -> None:
        self.readout = QLabel()
        self.readout.setObjectName("readout")
        self.readout.setTextFormat(Qt.TextFormat.PlainText)
        self.statusBar().addPermanentWidget(self.readout)

    def _load_preferences(self) -> None:
        for name, kind in BRUSHES.items():
            stored = self.store.brush(name)
            try:
                settings = BrushSettings.from_dict(stored.get("common", {}))
                params = dataclasses.asdict(kind.params(stored.get("params", {})))
            except SettingsError:
                settings, params = BrushSettings(), dataclasses.asdict(kind.params())
            self.brush_settings[name], self.brush_params[name] = settings, params
            self.brush_lanes[name] = stored.get("lane") is True
        stored_view = {k: v for k, v in self.store.view().items() if k in STORED_FIELDS}
        try:
            self.initial_view = dataclasses.replace(DEFAULT_VIEW, **stored_view)
        except (SettingsError, TypeError):
            self.initial_view = DEFAULT_VIEW
        self.view_panel.set_values(self.initial_view, 1)
        self.editor.show_view_look(self.initial_view)
        tool = self.store.tool
        self.palette.select(tool if tool in self.palette.actions_by_tool else DEFAULT_TOOL)
        self.actions_by_name[f"follow_{self.store.follow_mode}"].setChecked(True)
        self.actions_by_name["show_grid"].setChecked(self.store.show_grid)

    def save_preferences(self) -> None:
        view = self.canvas.view if self.canvas is not None else self.initial_view
        self.store.set_view({field: getattr(view, field) for field in STORED_FIELDS})
        for name in BRUSHES:
            self.store.set_brush(
                name,
                {
                    "common": self.brush_settings[name].to_dict(),
                    "params": self.brush_params[name],
                    "lane": self.brush_lanes[name],
                },
            )
        self.store.tool = self.palette.group.checkedAction().objectName().removeprefix("tool_")
        self.store.height_unit = self.brush_panel.height_unit.currentText()
        self.store.save_window(self)
        self.store.sync()

    # ------------------------------------------------------------------------------- documents
    def open_path(self, path: str | None) -> None:
        """Open ``path`` (a sound or a project; the demo sound when None) on a worker thread,
        asking about unsaved edits first."""
        if not self._may_discard_edits(then=lambda: self.open_path(path)):
            return
        if path is not None and is_project(path):
            self.job = project_actions.start_open(self, path)
        else:
            self.job = file_actions.start_open(self, path)

    def set_document(
        self,
        document,
        path: str | None,
        *,
        project_path: str | None = None,
        stored_view: dict | None = None,
        strokes: Iterable[RecordedStroke] = (),
        recovered: bool = False,
    ) -> None:
        """Show ``document`` in a new session (replacing the current one) and get playback ready.

        A project's ``stored_view`` values and recorded ``strokes`` come with it; a ``recovered``
        document is one no file holds yet, so it starts modified.
        """
        base = self.canvas.view if self.canvas is not None else self.initial_view
        view = dataclasses.replace(
            base,
            time_range=None,
            freq_range=None,
            channel=min(base.channel, document.n_channels - 1),
        )
        stacked = self.stacked if self.canvas is not None else self.store.stacked
        if stored_view is not None:
            view = view_from_values(view, stored_view, document.n_channels)
            stacked = stored_view.get("stacked", stacked) is True
        session = Session(
            document,
            path=path,
            project_path=project_path,
            strokes=strokes,
            recovered=recovered,
            history_budget=self.store.history_mib * 2**20,
        )
        self._show_session(session, view, stacked)

    def _show_session(self, session: Session, view, stacked: bool) -> bool:
        """Show ``session``'s document in new views (canvas, playback, panels); a new session
        replaces the current one, the current one gets views of its new document. False, with
        a message, when the GPU cannot show it (the current views stay)."""
        from spectropaint.gpu.adapter import shared_device

        document = session.document
        try:  # before closing the current document, which stays if the GPU cannot show this one
            canvas = SpectrogramCanvas(session, device=shared_device(), view=view, stacked=stacked)
        except GPUUnavailableError as exc:
            name = session.name if session.path or session.project_path else "the demo sound"
            QMessageBox.critical(self, "Cannot show", f"cannot show {name}: {exc}")
            return False
        same = session is self.session
        if same:
            self._close_views()
        else:
            self.close_document()
        self.session, self.canvas = session, canvas
        self.bridge = SessionBridge(session, self)
        canvas.setObjectName("canvas")
        canvas.set_grid(self.actions_by_name["show_grid"].isChecked())
        canvas.cursor_moved.connect(self._show_readout)
        canvas.time_clicked_at.connect(self._set_cursor)
        canvas.selection_changed.connect(self._selection_changed)
        canvas.message.connect(self.statusBar().showMessage)
        canvas.gpu_failed.connect(self._gpu_failed, Qt.ConnectionType.QueuedConnection)
        self.bridge.changed.connect(canvas.show_change)
        self.bridge.changed.connect(self._session_changed)
        self.bridge.changed.connect(self.history_panel.session_changed)
        self.bridge.notice.connect(self.statusBar().showMessage)
        for name in BRUSHES:
            self._apply_brush(name)
        self._choose_tool(self.palette.group.checkedAction().objectName().removeprefix("tool_"))
        self.view_panel.set_values(view, document.n_channels, canvas.stacked)
        self.reference_view.set_document(document, view.channel)
        self.brush_panel.set_channel_count(document.n_channels)
        self.brush_panel.set_geometry(canvas.renderer.geometry)
        self._refresh_brush_panel()
        self.transport = Transport(session, self.output_device, self)
        self.transport.state_changed.connect(self._transport_state)
        self.transport.failed.connect(self._playback_failed)
        self.transport.set_looping(self.actions_by_name["loop"].isChecked())
        self.transport.set_bypass(self.actions_by_name["bypass"].isChecked())
        self.transport.waveform_changed.connect(self._waveform_changed)
        self.editor.set_canvas(canvas)
        self.transport_view = TransportView(
            self.transport, canvas, self.time_ruler, self.transport_bar, self.store.follow_mode
        )
        self.history_panel.set_session(session, canvas.finish_painting)
        self.set_document_actions(True)
        self._update_title()
        canvas.setFocus()
        if not self.transport.available:
            self.statusBar().showMessage(f"{PLAYBACK_OFF}: {self.transport.reason}")
        if self.autosave is not None:
            self.bridge.changed.connect(self.autosave.session_changed)
            if not same:
                self.autosave.document_changed()
        self.selection_ui.attach(session, canvas, self.transport, self.bridge)
        self.bridge.start()
        self.document_loaded.emit()
        return True

    def _document_replaced(self) -> None:
        """The session holds another document (its analysis changed, or that was undone or
        redone): show it in new views, at the same place in time and frequency."""
        if self.session is None or self.canvas is None:
            return
        document = self.session.document
        view = dataclasses.replace(
            self.canvas.view, channel=min(self.canvas.view.channel, document.n_channels - 1)
        )
        if not self._show_session(self.session, view, self.stacked):
            self.session.undo()  # back to the document the views show

    def close_document(self) -> None:
        if self.session is not None:
            self.session.close()
        self._close_views()
        self.history_panel.set_session(None)
        self.session = None

    def _close_views(self) -> None:
        """Close what shows and plays the session's document (the session stays)."""
        self.selection_ui.detach()
        if self.bridge is not None:
            self.bridge.close()
            self.bridge.deleteLater()
            self.bridge = None
        if self.transport is not None:
            self.transport_view.close()
            self.transport_view = None
            self.transport.close()
            self.transport = None
        if self.canvas is not None:
            self.editor.clear_canvas()
            self.canvas.close_renderer()
            self.canvas.close()
            self.canvas.deleteLater()
            self.canvas = None

    @property
    def stacked(self) -> bool:
        """Every channel is shown in a lane of its own."""
        return self.canvas.stacked if self.canvas is not None else self.store.stacked

    def view_values(self) -> dict:
        """The view as a project keeps it (with whether channels are stacked)."""
        values = view_values(self.canvas.view if self.canvas is not None else self.initial_view)
        return {**values, "stacked": self.stacked}

    def _update_title(self) -> None:
        session = self.session
        name = session.name if session is not None else "SpectroPaint"
        note = " (recovered)" if session is not None and session.recovered else ""
        self.setWindowTitle(f"{name}{note}[*] — SpectroPaint")
        self.setWindowModified(session is not None and session.modified)

    def set_document_actions(self, enabled: bool) -> None:
        for name in (
            "save_project",
            "save_project_as",
            "export_audio",
            "export_image",
            "zoom_in",
            "zoom_out",
            "zoom_in_freq",
            "zoom_out_freq",
            "fit",
            "analysis",
            "clear_selection",
            "brush_smaller",
            "brush_bigger",
        ):
            self.actions_by_name[name].setEnabled(enabled)
        playable = enabled and self.transport is not None
        transport = playable and self.transport.available
        reason = "" if transport or not enabled else f" (off: {self.transport.reason})"
        for name in PLAYBACK_ACTIONS:
            action = self.actions_by_name[name]
            # Play stays enabled without a device: pressing it looks for one again; the playhead
            # moves without one too
            action.setEnabled(playable if name in PLAYHEAD_ACTIONS else transport)
            action.setToolTip(action.statusTip() + reason)
        self._update_undo_actions()

    def _update_undo_actions(self) -> None:
        history = self.session.history if self.session is not None else None
        self.actions_by_name["undo"].setEnabled(history is not None and history.can_undo)
        self.actions_by_name["redo"].setEnabled(history is not None and history.can_redo)

    def _session_changed(self, change: Change) -> None:
        """The title's modified mark and Undo/Redo follow the session; another document gets new
        views (once every listener has heard the change)."""
        if change.kind == "document":
            QTimer.singleShot(0, self._document_replaced)
        if change.completes_edit or change.kind == "saved":
            self._update_title()
            self._update_undo_actions()

    def _waveform_changed(self) -> None:
        """Playback's waveform was made, or edits reached it: the overview shows it."""
        if self.transport is not None and self.transport.waveform is not None:
            document = self.session.document
            self.overview.set_summary(
                self.transport.waveform, document.n_samples / document.sample_rate
            )

    # -------------------------------------------------------------------------------- panels
    def _choose_tool(self, name: str) -> None:
        if self.canvas is not None:
            self.canvas.set_tool(name)
        if name in BRUSHES:
            self._refresh_brush_panel(name)

    def _refresh_brush_panel(self, name: str | None = None) -> None:
        name = name or self.brush_panel.brush or DEFAULT_TOOL
        brush_kind(name)
        settings = self.brush_settings[name]
        if (
            self.session is not None
            and settings.channel is not None
            and settings.channel >= self.session.document.n_channels
        ):
            settings = self.brush_settings[name] = dataclasses.replace(settings, channel=None)
        self.brush_panel.set_brush(name, settings, self.brush_params[name], self.brush_lanes[name])
        self._apply_brush(name)

    def _brush_edited(self) -> None:
        name = self.brush_panel.brush
        self.brush_settings[name] = self.brush_panel.settings()
        self.brush_params[name] = self.brush_panel.params()
        self.brush_lanes[name] = self.brush_panel.per_lane
        self._apply_brush(name)

    def _apply_brush(self, name: str) -> None:
        """Give brush ``name``'s tool the settings and parameters its next stroke uses."""
        if self.canvas is not None:
            tool = self.canvas.brush_tool(name)
            tool.settings, tool.params = self.brush_settings[name], dict(self.brush_params[name])
            tool.per_lane = self.brush_lanes[name]
            tool.show_outline()

    def _view_edited(self, fields: dict) -> None:
        fields = dict(fields)
        stacked = fields.pop("stacked")
        if self.canvas is None:
            self.initial_view = dataclasses.replace(self.initial_view, **fields)
            self.editor.show_view_look(self.initial_view)
            return
        if fields["freq_scale"] != self.canvas.view.freq_scale:
            fields = dict(fields, freq_range=None)
        try:
            self.canvas.update_view(**fields)
            if stacked != self.canvas.stacked:
                self.canvas.set_stacked(stacked)
                self.store.stacked = stacked
        except (SettingsError, GPUUnavailableError) as exc:
            self.statusBar().showMessage(str(exc))
            self.view_panel.set_values(
                self.canvas.view, self.session.document.n_channels, self.canvas.stacked
            )

    def _show_readout(self, point: Point | None) -> None:
        if point is None or self.session is None:
            self.readout.clear()
            return
        self.brush_panel.set_reference_hz(point.hz)
        document = self.session.document
        values = document.magnitude_at(point.seconds, point.hz)
        levels = None
        if values is not None:
            levels = [level_db(float(value), document.full_scale) for value in values]
        self.readout.setText(
            readout_text(point.seconds, point.hz, levels, self.canvas.view.channel)
        )

    def _set_cursor(self, seconds: float) -> None:
        if self.transport is not None:
            self.transport.set_cursor(seconds)
            self.statusBar().showMessage(f"Cursor at {seconds:.3f} s", 3000)

    def _selection_changed(self, span) -> None:
        if self.transport is not None:
            self.transport.set_selection(span)

    def _playback_failed(self, message: str) -> None:
        """The output device went away while playing: say so; the document and editing go on."""
        self.statusBar().showMessage(message)
        self.set_document_actions(True)
        QMessageBox.warning(
            self,
            "Playback stopped",
            f"{message}.\n\nYour edits are kept and you can go on editing. "
            "Press Play to look for an output device again.",
        )

    def _gpu_failed(self, message: str) -> None:
        """Drawing failed on the GPU: the document is intact; say what happened and what to do."""
        self.statusBar().showMessage(message)
        QMessageBox.critical(
            self,
            "Cannot draw",
            f"{message}\n\nYour edits are kept: save the project (Ctrl+S) before restarting.",
        )

    def _transport_state(self) -> None:
        playing = self.transport is not None and self.transport.playing
        if playing:
            self.statusBar().withdraw(PLAYBACK_OFF)
        self.actions_by_name["play_pause"].setText(("&Pause" if playing else "&Play") + "\tSpace")
        self.set_document_actions(self.session is not None)

    # --------------------------------------------------------------------------------- keys
    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        """Space: play/pause on a tap, pan the canvas while held and dragged."""
        kind = event.type()
        if (
            kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease)
            or event.key() != Qt.Key.Key_Space
        ):
            return False
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier or self.canvas is None:
            return False
        focus = QApplication.focusWidget()
        if (
            isinstance(focus, TEXT_INPUTS)
            or watched is not (focus or self)
            or not self.isActiveWindow()
        ):
            return False
        if event.isAutoRepeat():
            return True
        if kind == QEvent.Type.KeyPress:
            self.canvas.space_pressed()
        elif self.canvas.space_released():
            self.commands.on_play_pause()
        return True

    # -------------------------------------------------------------------------- drag and drop
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt's name
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.open_path(files[0])

    # --------------------------------------------------------------------------------- menus
    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self.store.recent_files():
            action = QAction(os.path.basename(path), self.recent_menu)
            action.setToolTip(path)
            action.triggered.connect(lambda checked=False, path=path: self.open_path(path))
            self.recent_menu.addAction(action)
        self.recent_menu.addSeparator()
        demo = self.recent_menu.addAction("Demo Sound")
        demo.triggered.connect(lambda: self.open_path(None))

    # ---------------------------------------------------------------------------------- close
    def _may_discard_edits(self, *, then) -> bool:
        """True when there are no unsaved edits or the person discards them.

        Choosing Save starts saving the project (asking where if it has no file yet) and returns
        False; ``then`` runs when the save succeeded. Cancel, a cancelled dialog or a failed save
        leave everything as it was.
        """
        if self.session is None or not self.session.modified:
            return True
        answer = QMessageBox.warning(
            self,
            "Unsaved edits",
            f"Save the changes to {self.session.name} as a project?\n\n"
            "Discard loses every edit since the last save (an exported sound is not a project).",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            self.after_save = then
            self.commands.on_save_project()
            return False
        return answer == QMessageBox.StandardButton.Discard

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.job is not None and not self.job.finished:
            self.job.cancel()
            event.ignore()
            return
        if not self._may_discard_edits(then=self.close):
            event.ignore()
            return
        self.save_preferences()
        QApplication.instance().removeEventFilter(self)
        if self.autosave is not None:
            self.autosave.close()
        self.close_document()
        event.accept()
