"""The main window: lays out the canvas with rulers and colour bar, tools, brush and view panels,
menus and status bar, and dispatches to the open :class:`~spectropaint.app.session.Session`.

A document is opened on a worker thread (:mod:`spectropaint.app.files.workers`); when it arrives
the window makes a session of it, a canvas that draws it, and a
:class:`~spectropaint.app.playback.transport.Transport` that plays it. Edits go through the session,
whose one change event reaches the canvas, playback, autosave and the window's title (through a
:class:`~.session_bridge.SessionBridge`, on the GUI thread). Who listens to what is in
:mod:`.window_listeners`; each brush's choices in :mod:`.brush_choices`; which actions are enabled
in :mod:`.action_states`; preferences and the File submenus in :mod:`.window_preferences`; the space
bar in :mod:`.space_key`. The menus' handlers live in :mod:`.commands`, opening audio and exporting
in :mod:`spectropaint.app.files.file_actions`, projects in
:mod:`spectropaint.app.files.project_actions`.

The document is the project: ``session.modified`` says it holds edits no project file has, and only
saving the project clears it (an audio export is a rendering of it, not a save).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Iterable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QMessageBox

from spectropaint.app.files import file_actions, project_actions
from spectropaint.app.files.autosave import Autosave
from spectropaint.app.navigation import view_at_seconds
from spectropaint.app.panels.brush_panel import BrushPanel
from spectropaint.app.panels.history_panel import HistoryPanel
from spectropaint.app.panels.reference_view import ReferenceView
from spectropaint.app.panels.selection_panel import SelectionController
from spectropaint.app.panels.tool_palette import ToolPalette
from spectropaint.app.panels.view_panel import ViewPanel
from spectropaint.app.playback.engine import OutputDevice, find_output_device
from spectropaint.app.playback.transport import Transport
from spectropaint.app.session import Session
from spectropaint.app.settings_store import SettingsStore
from spectropaint.app.tools.registry import VIEW_TOOLS
from spectropaint.app.window import action_states, analysis_jobs, window_preferences
from spectropaint.app.window.actions import build_menus
from spectropaint.app.window.brush_choices import BrushChoices
from spectropaint.app.window.canvas_widget import SpectrogramCanvas
from spectropaint.app.window.commands import Commands
from spectropaint.app.window.docks import add_dock, panels_menu
from spectropaint.app.window.editor_area import EditorArea
from spectropaint.app.window.job_cancel import JobCancel
from spectropaint.app.window.session_bridge import SessionBridge
from spectropaint.app.window.space_key import SpaceKey
from spectropaint.app.window.status_line import StatusLine
from spectropaint.app.window.transport_bar import TransportBar
from spectropaint.app.window.transport_view import TransportView
from spectropaint.app.window.when_idle import WhenIdle
from spectropaint.app.window.window_listeners import PLAYBACK_OFF, WindowListeners
from spectropaint.brushes.recorded import RecordedStroke
from spectropaint.brushes.registry import BRUSHES
from spectropaint.gpu.errors import GPUUnavailableError
from spectropaint.gpu.view import Overlays, ViewSettings, view_from_values, view_values
from spectropaint.transforms.analysis import AnalysisSettings
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.files.project_file import is_project


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
    analysis : STFTSettings or NSGTSettings, optional
        What sounds (and the demo sound) are analysed in when opened: the command line's choice;
        the STFT's defaults when None. View > Analysis... changes a document's afterwards.
    """

    document_loaded = Signal()

    def __init__(
        self,
        *,
        settings: SettingsStore | None = None,
        torch_device: str | None = None,
        output_device: OutputDevice | None = None,
        recovery_folder: str | None = None,
        analysis: AnalysisSettings | None = None,
    ):
        super().__init__()
        self.setStatusBar(StatusLine(self))
        self.store = settings or SettingsStore()
        self.torch_device = torch_device
        self.analysis = analysis
        self.output_device = output_device if output_device is not None else find_output_device()
        self.session: Session | None = None
        self.bridge: SessionBridge | None = None
        self.canvas: SpectrogramCanvas | None = None
        self.transport: Transport | None = None
        self.transport_view: TransportView | None = None
        self.job = None
        self.replacing = None
        """The job changing the analysis (or undoing or redoing that), while it runs."""
        self._recovering = False
        """A job reverses a step whose document the GPU could not show."""
        self._close_after_job = False
        """A close came while a job ran: the window closes once the job has ended."""
        self._refused: weakref.ref | None = None
        """The last document the GPU could not show (weakly: it is not kept for this)."""
        self.coarse_phase = None
        """The coarse picture of a sound being opened, while it is shown
        (:class:`~spectropaint.app.files.coarse_phase.CoarsePhase`)."""
        self.preferences_dialog = None
        self.export_dialog = None
        self.shortcut_sheet = None
        self.after_save = None
        """What to do once the save that an 'unsaved edits' question asked for succeeds."""
        self.listeners = WindowListeners(self)
        self.job_cancel = JobCancel(
            self, lambda: self.canvas is not None and self.canvas.cancel_drag()
        )
        self.when_idle = WhenIdle(
            self._busy, self.statusBar(), self, hurry=lambda: self.session.hurry_settles()
        )
        self.setWindowTitle("SpectroPaint")
        self.setAcceptDrops(True)
        self.resize(1280, 800)
        self.commands = Commands(self)
        self.actions_by_name, self.menus = build_menus(self, self.commands)
        self.recent_menu = window_preferences.build_recent_menu(self)
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
            window_preferences.build_autosave_menu(self)
        self._build_editor()
        self._build_panels()
        self.readout = QLabel()
        self.readout.setObjectName("readout")
        self.readout.setTextFormat(Qt.TextFormat.PlainText)
        self.statusBar().addPermanentWidget(self.readout)
        window_preferences.load_preferences(self)
        self.set_document_actions(False)
        self.store.restore_window(self)
        self.space_key = SpaceKey(self, lambda: self.canvas, self.commands.on_play_pause)

    # ------------------------------------------------------------------------------- building
    def _build_editor(self) -> None:
        self.editor = EditorArea()
        self.time_ruler, self.freq_ruler = self.editor.time_ruler, self.editor.freq_ruler
        self.color_bar, self.overview = self.editor.color_bar, self.editor.overview
        self.time_ruler.pressed.connect(self.listeners.set_cursor)
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
        self.brushes = BrushChoices(self.brush_panel)
        self.brush_settings, self.brush_params = self.brushes.settings, self.brushes.params
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

    def apply_preferences(self) -> None:
        """Take the stored preferences (after the Preferences dialog)."""
        window_preferences.apply_preferences(self)

    def save_preferences(self) -> None:
        window_preferences.save_preferences(self)

    def current_tool(self) -> str:
        """The name of the tool chosen in the palette."""
        return self.palette.group.checkedAction().objectName().removeprefix("tool_")

    # ------------------------------------------------------------------------------- documents
    def open_path(self, path: str | None) -> None:
        """Open ``path`` (a sound or a project; the demo sound when None) on a worker thread,
        asking about unsaved edits first."""
        if self.coarse_phase is not None:
            self.coarse_phase.refuse("Opening another file")
            return
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
        view = self.fresh_view(document.n_channels)
        stacked = self.stacked
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

    @property
    def shown_view(self) -> ViewSettings:
        """The canvas's view; with no document, the one the preferences and view panel made."""
        return self.canvas.view if self.canvas is not None else self.initial_view

    def fresh_view(self, n_channels: int | None = None) -> ViewSettings:
        """The view a new document starts with: the look shown (the canvas's, else the one the
        preferences and the view panel made), showing all of it with no marks over it, and a
        channel of ``n_channels`` (when given)."""
        base = self.shown_view
        channel = base.channel if n_channels is None else min(base.channel, n_channels - 1)
        return dataclasses.replace(
            base, time_range=None, freq_range=None, overlays=Overlays(), channel=channel
        )

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
        self.transport = Transport(session, self.output_device, self)
        self.listeners.listen(self.bridge, canvas, self.transport)
        self.brushes.attach(canvas, document.n_channels)
        self._choose_tool(self.current_tool())
        self.view_panel.set_values(view, document.n_channels, canvas.stacked)
        self.reference_view.set_document(document, view.channel)
        self.brushes.show_document(canvas)
        self.transport.set_looping(self.actions_by_name["loop"].isChecked())
        self.transport.set_bypass(self.actions_by_name["bypass"].isChecked())
        self.overview.set_summary(None, document.n_samples / document.sample_rate)
        self.listeners.waveform_changed()  # made before the listeners were connected (short sounds)
        self.editor.set_canvas(canvas)
        self.transport_view = TransportView(
            self.transport, canvas, self.time_ruler, self.transport_bar, self.store.follow_mode
        )
        self.history_panel.set_session(
            session,
            self.when_idle.run,
            lambda session, position: analysis_jobs.go_to(self, session, position),
        )
        self.set_document_actions(True)
        self.listeners.update_title()
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

    def document_replaced(self) -> None:
        """The session holds another document (its analysis changed, or that was undone or
        redone): show it in new views, at the same place in time and frequency (nothing when
        they show it already, or while a job replaces it: its end shows what it made).

        When the GPU cannot show it, the step just taken is reversed (a job: redo after an undo,
        undo after a change or a redo), back to the document the views show; once only: a document
        refused is not tried again, and one the reversal makes that is refused too stays unshown.
        """
        session = self.session
        if (
            session is None
            or self.canvas is None
            or self.replacing is not None
            or self.canvas.lanes.document is session.document
            or (self._refused is not None and self._refused() is session.document)
        ):
            return
        document, shown = session.document, self.canvas.view
        seconds = self.canvas.mapping().seconds_span  # the view's frames are the old analysis's
        view = dataclasses.replace(
            shown, time_range=None, channel=min(shown.channel, document.n_channels - 1)
        )
        if self._show_session(session, view, self.stacked):
            if shown.time_range is not None:
                self.show_place(seconds, shown.freq_range)
            return
        self._refused = weakref.ref(document)
        if self._recovering:
            return
        self._recovering = True
        reverse = "redo" if session.document_step == "undo" else "undo"
        job = analysis_jobs.step(self, reverse, cancellable=False)
        job.done.connect(self._recovered)  # however it ends: the next refusal is reversed too

    def _recovered(self) -> None:
        self._recovering = False

    def show_place(self, seconds: tuple[float, float], freq_range) -> None:
        """Show in the canvas the ``seconds`` at its edges and the ``freq_range`` (Hz, None for
        all) on whatever analysis it shows (a coarse picture's place, the place before a change
        of analysis)."""
        mapping = self.canvas.mapping()
        mapping = dataclasses.replace(
            mapping, view=dataclasses.replace(mapping.view, freq_range=freq_range)
        )
        self.canvas.set_view(view_at_seconds(mapping, *seconds))

    def _busy(self) -> str:
        """What must end before an undo, a save, an export or an operation runs: the change of
        analysis under way, a job reading the document, pointer events still being painted or
        finished edits settling; '' when nothing."""
        if self.session is None:
            return ""
        if self.replacing is not None or self.session.replacing:
            return "the analysis to change"
        if self.job is not None and not self.job.finished:
            return f"{self.job.label[:1].lower()}{self.job.label[1:].removesuffix('...')} to end"
        if self.canvas.painter.busy:
            return "the strokes to be painted"
        return "the last edit to settle" if self.session.settles_pending else ""

    def set_aside(self) -> tuple[Session, ViewSettings, bool] | None:
        """Close the open document's views but not its session, which :meth:`bring_back` shows
        again: the window has no document meanwhile (a sound being opened shows its coarse
        picture). Returns the session, its view and whether it was stacked; None without one."""
        if self.session is None:
            return None
        kept = (self.session, self.canvas.view, self.stacked)
        self.initial_view = self.fresh_view()
        self.store.stacked = self.canvas.lanes.stacked  # what the next document shows
        self.when_idle.clear()
        self._close_views()
        self.history_panel.set_session(None)
        self.session = None
        self.set_document_actions(False)
        self.listeners.update_title()
        return kept

    def bring_back(self, kept: tuple[Session, ViewSettings, bool]) -> None:
        """Show again a session :meth:`set_aside` kept (opening another sound failed), as the
        same session: autosave keeps its copy of it."""
        self.session = kept[0]
        if not self._show_session(*kept):
            self.session = None

    def close_document(self) -> None:
        self.when_idle.clear()
        if self.canvas is not None:  # a stroke still being painted ends, and queues its settle,
            self.canvas.finish_painting()  # before the session stops its settle thread
        if self.session is not None:
            self.session.close()
        self._close_views()
        self.history_panel.set_session(None)
        self.session = None

    def _close_views(self) -> None:
        """Close what shows and plays the session's document (the session stays)."""
        self.selection_ui.detach()
        self.brushes.detach()
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
        values = view_values(self.shown_view)
        return {**values, "stacked": self.stacked}

    def set_document_actions(self, enabled: bool) -> None:
        """Enable the actions that need a document (see :mod:`.action_states`)."""
        session = self.session
        action_states.set_document_actions(
            self.actions_by_name,
            enabled,
            self.transport,
            session.history if session is not None else None,
        )

    # -------------------------------------------------------------------------------- panels
    def _choose_tool(self, name: str) -> None:
        if self.canvas is not None:
            self.canvas.set_tool(name)
        if name in BRUSHES:
            self.brushes.refresh(name)

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

    # -------------------------------------------------------------------------- drag and drop
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt's name
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.open_path(files[0])

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

    def _closed_job_ended(self) -> None:
        """The job a close cancelled has ended: close now, once its own endings have run (they
        clear ``job``)."""
        self._close_after_job = False
        QTimer.singleShot(0, self.close)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.job is not None and not self.job.finished:
            # the work is cancelled first (it may hold the document); the window closes once it
            # has ended, as the user asked
            if not self._close_after_job:
                self._close_after_job = True
                self.job.done.connect(self._closed_job_ended)
                self.statusBar().showMessage(
                    f"{self.job.label.removesuffix('...')}: cancelling, then closing"
                )
            self.job.cancel()
            event.ignore()
            return
        if self.after_save is not None and self.when_idle.pending:
            event.ignore()  # the save the close question asked for waits to start; it goes on
            return
        if not self._may_discard_edits(then=self.close):
            event.ignore()
            return
        self.save_preferences()
        QApplication.instance().removeEventFilter(self.space_key)
        if self.autosave is not None:
            self.autosave.close()
        self.close_document()
        event.accept()
