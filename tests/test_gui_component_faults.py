"""Failing components reach the person: no GPU adapter at start, a GPU error while drawing, a
notice from the document (a switch to the CPU) sent from another thread. The document stays."""

from __future__ import annotations

import threading

import pytest
import torch
import wgpu
from gui_fixtures import NO_OUTPUT, open_window, write_test_sound
from PySide6.QtWidgets import QMessageBox

from spectropaint.app import gui_main
from spectropaint.app.window import main_window
from spectropaint.gpu import adapter
from spectropaint.gpu.errors import GPUFailedError, GPUUnavailableError

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def criticals(monkeypatch) -> list[tuple[str, str]]:
    shown: list[tuple[str, str]] = []

    def record(parent, title, text, *args):
        shown.append((title, text))
        return QMessageBox.StandardButton.Ok

    monkeypatch.setattr(QMessageBox, "critical", record)
    return shown


def test_no_gpu_adapter_at_start_is_a_dialog_and_an_error_before_any_window(monkeypatch, criticals):
    def no_adapter() -> str:
        raise GPUUnavailableError(adapter.NO_ADAPTER_HINT)

    monkeypatch.setattr(gui_main, "qt_reference_problem", lambda: None)
    monkeypatch.setattr(adapter, "check_adapter", no_adapter)
    made = []
    monkeypatch.setattr(main_window, "MainWindow", lambda *a, **k: made.append(1))
    with pytest.raises(GPUUnavailableError, match="no wgpu adapter found"):
        gui_main.run_gui(None)
    assert made == []
    assert len(criticals) == 1
    title, text = criticals[0]
    assert title == "SpectroPaint cannot draw" and "mesa-vulkan-drivers" in text


def test_a_gpu_error_while_drawing_is_one_dialog_and_the_document_stays(
    qtbot, tmp_path, monkeypatch, criticals
):
    path = tmp_path / "tones.wav"
    write_test_sound(path, seconds=1.0)
    window = open_window(qtbot, tmp_path, path, output_device=NO_OUTPUT)
    document, magnitude = (
        window.session.document,
        window.session.document.blocks[0].magnitude.clone(),
    )
    failure = GPUFailedError(
        "drawing the spectrogram",
        wgpu.GPUValidationError("In wgpuQueueSubmit: Parent device is lost"),
    )

    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(window.canvas.lanes, "render", fail)
    for _ in range(3):  # the same failure on every frame is reported once
        window.canvas.request_draw()
        qtbot.wait(100)
    qtbot.waitUntil(lambda: len(criticals) == 1)
    qtbot.wait(200)
    assert criticals == [criticals[0]]
    title, text = criticals[0]
    assert title == "Cannot draw" and "while drawing the spectrogram" in text
    assert "Parent device is lost" in text and "SPECTROPAINT_ADAPTER=cpu" in text
    assert str(failure) in window.statusBar().currentMessage()
    assert window.session.document is document and torch.equal(
        document.blocks[0].magnitude, magnitude
    )
    monkeypatch.undo()


def test_a_document_notice_from_another_thread_reaches_the_status_bar(qtbot, tmp_path):
    path = tmp_path / "tones.wav"
    write_test_sound(path, seconds=1.0)
    window = open_window(qtbot, tmp_path, path, output_device=NO_OUTPUT)
    text = "CUDA ran out of memory while painting with blur; SpectroPaint continues on the CPU"
    worker = threading.Thread(target=window.session.document.notices.emit, args=(text,))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == text)
