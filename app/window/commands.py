"""What each menu action does: ``on_<name>`` for every row of :data:`.actions.ACTIONS`.

:func:`~spectropaint.app.window.actions.build_menus` connects the actions to an instance of
:class:`Commands`; each handler works on the main window's current document, canvas and transport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QMessageBox

from spectropaint.app.files import file_actions, project_actions
from spectropaint.app.panels.analysis_dialog import change_analysis
from spectropaint.app.panels.brush_panel import SIZE_STEP
from spectropaint.app.window import analysis_jobs

if TYPE_CHECKING:
    from spectropaint.app.window.main_window import MainWindow


class Commands:
    """The menu handlers of one main window."""

    def __init__(self, window: MainWindow):
        self.window = window

    def on_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open", self.window.store.last_folder, file_actions.OPEN_FILTER
        )
        if path:
            self.window.open_path(path)

    def on_save_project(self) -> None:
        project_actions.save(self.window, ask=False)  # the job starts once the window is idle

    def on_save_project_as(self) -> None:
        project_actions.save(self.window, ask=True)

    def on_export_audio(self) -> None:
        file_actions.export_audio(self.window)  # the job starts when its dialogs are answered

    def on_export_image(self) -> None:
        file_actions.export_image(self.window)

    def on_quit(self) -> None:
        self.window.close()

    def on_undo(self) -> None:
        """Undo once painting and settling are done (:mod:`.when_idle`: the window never waits);
        the undo of a change of analysis is a job (:mod:`.analysis_jobs`)."""
        if self.window.session is not None:
            self.window.when_idle.run(lambda: analysis_jobs.step(self.window, "undo"), "undo")

    def on_redo(self) -> None:
        if self.window.session is not None:
            self.window.when_idle.run(lambda: analysis_jobs.step(self.window, "redo"), "redo")

    def on_preferences(self) -> None:
        from spectropaint.app.window.preferences import PreferencesDialog

        dialog = PreferencesDialog(self.window.store, self.window)
        dialog.accepted.connect(self.window.apply_preferences)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()  # window-modal, without a nested event loop
        self.window.preferences_dialog = dialog

    def on_show_grid(self, checked: bool) -> None:
        self.window.store.show_grid = checked
        if self.window.canvas is not None:
            self.window.canvas.set_grid(checked)

    def _follow(self, mode: str, checked: bool) -> None:
        if checked:
            self.window.store.follow_mode = mode
            if self.window.transport_view is not None:
                self.window.transport_view.follow_mode = mode

    def on_follow_off(self, checked: bool) -> None:
        self._follow("off", checked)

    def on_follow_page(self, checked: bool) -> None:
        self._follow("page", checked)

    def on_follow_smooth(self, checked: bool) -> None:
        self._follow("smooth", checked)

    def on_zoom_in(self) -> None:
        self.window.canvas.zoom(2.0)

    def on_zoom_out(self) -> None:
        self.window.canvas.zoom(0.5)

    def on_zoom_in_freq(self) -> None:
        self.window.canvas.zoom(2.0, time=False, freq=True)

    def on_zoom_out_freq(self) -> None:
        self.window.canvas.zoom(0.5, time=False, freq=True)

    def on_fit(self) -> None:
        self.window.canvas.fit()

    def on_analysis(self) -> None:
        """The Analysis dialog; its OK changes the analysis as a job once the window is idle."""
        window = self.window

        def chosen(settings) -> None:
            window.when_idle.run(
                lambda: analysis_jobs.change(window, settings), "the change of analysis"
            )

        window.analysis_dialog = change_analysis(window, chosen)

    def _transport_call(self, method) -> None:
        if self.window.transport is None:
            return
        try:
            method()  # Play looks for an output device again when playback is off
        except RuntimeError as exc:
            self.window.statusBar().showMessage(str(exc))
        self.window.set_document_actions(True)

    def on_play_pause(self) -> None:
        self._transport_call(lambda: self.window.transport.toggle())

    def on_play_from_cursor(self) -> None:
        self._transport_call(lambda: self.window.transport.play_from_cursor())

    def on_play_selection(self) -> None:
        self._transport_call(lambda: self.window.transport.play_selection())

    def on_stop(self) -> None:
        self._transport_call(lambda: self.window.transport.stop())

    def on_rewind(self) -> None:
        self._transport_call(lambda: self.window.transport.rewind())

    def on_go_to_end(self) -> None:
        self._transport_call(lambda: self.window.transport.go_to_end())

    def on_loop(self, checked: bool) -> None:
        if self.window.transport is not None:
            self.window.transport.set_looping(checked)

    def on_bypass(self, checked: bool) -> None:
        if self.window.transport is not None:
            self.window.transport.set_bypass(checked)
            self.window.statusBar().showMessage(
                "Playing the original (B)" if checked else "Playing the edit (A)", 3000
            )

    def on_brush_smaller(self) -> None:
        self.window.brush_panel.scale_size(1 / SIZE_STEP)

    def on_brush_bigger(self) -> None:
        self.window.brush_panel.scale_size(SIZE_STEP)

    def on_shortcuts(self) -> None:
        from spectropaint.app.window.shortcut_sheet import ShortcutSheet

        sheet = ShortcutSheet(self.window.menus, self.window)
        sheet.finished.connect(sheet.deleteLater)
        sheet.show()
        self.window.shortcut_sheet = sheet

    def on_about(self) -> None:
        QMessageBox.about(self.window, "About SpectroPaint", file_actions.about_text(self.window))
