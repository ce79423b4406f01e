"""How the canvas presents: to a wgpu surface where the platform gives one, else (the offscreen
platform of the tests, a failing surface) by read-back; the marks drawn over the picture either way;
columns not uploaded yet streamed in between frames."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import rendercanvas.qt
import soundfile
import wgpu
from gui_fixtures import canvas_pixels, open_window, send_mouse, wait_for_fresh_frame
from PySide6.QtCore import QEvent, Qt
from rendercanvas.contexts.wgpucontext import WgpuContextToScreen
from rendercanvas.qt import QRenderWidget
from test_gui_channels import stack, write
from test_render_reference import assert_pixels_match

from spectropaint.app.window import canvas_widget
from spectropaint.app.window.canvas_overlay import NAME_RGB
from spectropaint.app.window.canvas_widget import present_method
from spectropaint.gpu.screen_frame import ScreenFrame, surface_format

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture(autouse=True)
def no_earlier_failure(monkeypatch):
    monkeypatch.setattr(canvas_widget, "_surface_failure", [])
    monkeypatch.delenv(canvas_widget.PRESENT_ENV, raising=False)


@pytest.fixture
def window(qtbot, tmp_path):
    write(tmp_path / "stereo.wav", 2)
    return open_window(qtbot, tmp_path, tmp_path / "stereo.wav")


def test_the_present_method_follows_the_platform_and_the_environment(monkeypatch):
    assert [present_method(p) for p in ("xcb", "windows", "cocoa")] == ["screen"] * 3
    assert [present_method(p) for p in ("offscreen", "wayland", "minimal")] == ["bitmap"] * 3
    assert present_method("xcb", "CPU") == "bitmap"  # lavapipe: read-back is the cheaper there
    assert present_method("xcb", "IntegratedGPU") == "screen"
    monkeypatch.setenv(canvas_widget.PRESENT_ENV, "bitmap")
    assert present_method("xcb") == "bitmap"
    monkeypatch.setenv(canvas_widget.PRESENT_ENV, "screen")
    assert present_method("offscreen") == "screen"
    assert present_method("xcb", "CPU") == "screen"
    monkeypatch.delenv(canvas_widget.PRESENT_ENV)
    canvas_widget._surface_failure.append("it failed before")
    assert present_method("xcb") == "bitmap"  # a surface failed in this process: no second try


def test_offscreen_the_canvas_presents_by_read_back(window):
    canvas = window.canvas
    assert canvas.present == "bitmap" and not canvas._present_to_screen
    assert canvas.frames_presented > 0


class FailingSurface:
    """A wgpu canvas context whose surface configures but gives no texture (a lost surface)."""

    def __init__(self):
        self.configured = None

    def set_physical_size(self, width, height):
        pass

    def get_preferred_format(self, adapter):
        return "bgra8unorm-srgb"

    def configure(self, **config):
        self.configured = config

    def unconfigure(self):
        self.configured = None

    def get_current_texture(self):
        raise RuntimeError("the surface is lost")


def pretend_a_surface(monkeypatch, *, fails_at: str) -> list[FailingSurface]:
    """Make the next canvases ask for a surface under the offscreen platform and get one that
    fails when configured (``fails_at='configure'``) or when asked for a texture."""
    surfaces = []

    def create(self):
        if fails_at == "configure":
            raise RuntimeError("no surface for this window")
        surfaces.append(FailingSurface())
        self._wgpu_context = surfaces[-1]

    monkeypatch.setenv(canvas_widget.PRESENT_ENV, "screen")
    monkeypatch.setattr(QRenderWidget, "_get_surface_ids", lambda self: {"window": 1})
    # the offscreen platform sends no paint events to a widget that paints on screen itself
    monkeypatch.setattr(rendercanvas.qt, "WA_PaintOnScreen", Qt.WidgetAttribute.WA_OpaquePaintEvent)
    monkeypatch.setattr(WgpuContextToScreen, "_create_wgpu_py_context", create)
    return surfaces


@pytest.mark.parametrize("fails_at", ["configure", "texture"])
def test_a_failing_surface_falls_back_to_read_back_and_says_so_once(
    qtbot, tmp_path, monkeypatch, caplog, fails_at
):
    surfaces = pretend_a_surface(monkeypatch, fails_at=fails_at)
    write(tmp_path / "stereo.wav", 2)
    with caplog.at_level(logging.WARNING, logger=canvas_widget.__name__):
        window = open_window(qtbot, tmp_path, tmp_path / "stereo.wav")
        canvas = window.canvas
        assert canvas.present == "bitmap" and not canvas._present_to_screen
        assert len(surfaces) == (1 if fails_at == "texture" else 0)  # it was tried
        wait_for_fresh_frame(qtbot, canvas)
        pixels = canvas_pixels(canvas)
        assert pixels.reshape(-1, 3).max(axis=0).max() > 100  # a spectrogram, not black
        window.view_panel.channel.setCurrentIndex(1)  # another view: still drawn
        wait_for_fresh_frame(qtbot, canvas)
    messages = [r.getMessage() for r in caplog.records if "presents by read-back" in r.getMessage()]
    assert len(messages) == 1
    assert ("could not be configured" if fails_at == "configure" else "the surface is lost") in (
        messages[0]
    )


def composed_picture(canvas, frame: ScreenFrame, size) -> np.ndarray:
    device = canvas.renderer.device
    target = device.create_texture(
        size=(*size, 1),
        format="rgba8unorm",
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    try:
        frame.compose(target.create_view())
        data = device.queue.read_texture(
            {"texture": target}, {"bytes_per_row": 4 * size[0]}, (*size, 1)
        )
    finally:
        target.destroy()
    return np.frombuffer(data, np.uint8).reshape(size[1], size[0], 4)[:, :, :3].copy()


def test_marks_composed_over_a_surface_frame_look_as_painted_over_the_read_back(window, qtbot):
    stack(window, qtbot)  # the lanes' names L and R in their corners
    canvas = window.canvas
    canvas.set_grid(True)
    wait_for_fresh_frame(qtbot, canvas)
    read_back = canvas_pixels(canvas)  # the picture with the marks painted by QPainter over it
    size = (canvas.width(), canvas.height())
    frame = ScreenFrame(canvas.renderer.device, surface_format("rgba8unorm-srgb"))
    try:
        canvas.lanes.render(frame.picture(size), *size)
        image = canvas.marks_image(size)
        frame.write_marks(image.constBits(), image.bytesPerLine(), (0, 0, *size))
        composed = composed_picture(canvas, frame, size)
    finally:
        frame.release()
    name_colour = (NAME_RGB.red(), NAME_RGB.green(), NAME_RGB.blue())
    for first, _ in canvas.bands():  # each lane's name is there
        corner = composed[first : first + 26, :40]
        assert (corner == name_colour).all(axis=-1).any()
    assert_pixels_match(composed, read_back, tolerance=2)  # premultiplied 8-bit marks: rounding


def test_moving_the_outline_uploads_only_the_box_of_the_marks_that_changed(window, qtbot):
    canvas = window.canvas
    size = (canvas.width(), canvas.height())
    device = canvas.renderer.device
    frames = [ScreenFrame(device, "rgba8unorm") for _ in range(2)]
    try:
        for frame in frames:
            canvas.lanes.render(frame.picture(size), *size)
        send_mouse(canvas, QEvent.Type.MouseMove, 100, 80)  # the brush outline under the pointer
        qtbot.waitUntil(lambda: canvas.overlay.footprint is not None)
        canvas._upload_marks(size, frames[0])
        assert canvas.marks_bytes == 4 * size[0] * size[1]  # a new picture: all of the marks
        footprint = canvas.overlay.footprint
        send_mouse(canvas, QEvent.Type.MouseMove, 130, 90)
        qtbot.waitUntil(lambda: canvas.overlay.footprint != footprint)
        canvas._upload_marks(size, frames[0])
        assert 0 < canvas.marks_bytes < 0.05 * 4 * size[0] * size[1]  # the two outlines' box
        canvas._marks_size = None  # the second frame gets all of the marks as they are now
        canvas._upload_marks(size, frames[1])
        moved, whole = (composed_picture(canvas, frame, size) for frame in frames)
        assert np.array_equal(moved, whole)
        assert (moved != composed_picture_without_marks(canvas, size)).any()
    finally:
        for frame in frames:
            frame.release()


def composed_picture_without_marks(canvas, size) -> np.ndarray:
    frame = ScreenFrame(canvas.renderer.device, "rgba8unorm")
    try:
        canvas.lanes.render(frame.picture(size), *size)
        return composed_picture(canvas, frame, size)
    finally:
        frame.release()


def test_columns_not_uploaded_yet_stream_in_between_frames(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(canvas_widget, "STREAM_PAUSE_MS", 50)  # slow enough to see it under way
    seconds, rate = 120.0, 22050  # its first frame samples a reduced level: level 0 is left over
    t = np.arange(int(seconds * rate)) / rate
    soundfile.write(tmp_path / "long.wav", 0.3 * np.sin(2 * np.pi * 440 * t), rate)
    window = open_window(qtbot, tmp_path, tmp_path / "long.wav")
    canvas = window.canvas
    renderer = canvas.renderer
    assert canvas.lanes.streaming
    frames = canvas.frames_presented
    qtbot.waitUntil(lambda: not canvas.lanes.streaming, timeout=20000)
    assert renderer.stats.total_bytes == 4 * renderer.geometry.n_bins * sum(
        renderer.grid.level_widths
    )
    assert canvas.frames_presented == frames  # streamed with no frame drawn
