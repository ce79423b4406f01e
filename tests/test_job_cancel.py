"""A long job's progress dialog: its Cancel button and Escape both stop the work."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QPushButton, QWidget

from spectropaint.app.files.workers import Job
from spectropaint.transforms.errors import Cancelled


@pytest.mark.parametrize("how", ["the Cancel button", "Escape before the dialog is active"])
def test_a_job_stops_when_its_dialog_is_cancelled(qtbot, how):
    """Escape reaches the Cancel button's shortcut only in the active window: pressed as the
    dialog appears, it rejects the dialog instead, which used to hide it with the work going on
    (a change of analysis then ended after its cancel, seen as a flaky test)."""
    parent = QWidget()
    qtbot.addWidget(parent)
    release, outcome = threading.Event(), []

    def work(progress):
        while not release.wait(0.01):
            if progress(0.5) is False:
                raise Cancelled("stopped")
        return "done"

    job = Job(
        parent,
        "Working...",
        work,
        on_success=lambda result: outcome.append(result),
        on_failure=lambda error: outcome.append(error),
        on_cancel=lambda: outcome.append("cancelled"),
    ).start()
    job.dialog.show()
    if how == "the Cancel button":
        job.dialog.findChild(QPushButton).click()
    else:
        job.dialog.reject()  # what QDialog does with Escape when no shortcut takes it
    try:
        qtbot.waitUntil(lambda: job.finished, timeout=5000)
    finally:
        release.set()
    assert outcome == ["cancelled"]
