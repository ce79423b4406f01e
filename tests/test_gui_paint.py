"""The window end to end: drag each brush across the canvas, then undo and redo with the keyboard."""

from __future__ import annotations

import itertools
import math
import threading
import time

import numpy as np
import pytest
import torch
from gui_fixtures import (
    canvas_pixels,
    drag,
    send_mouse,
    tones_window,  # noqa: F401 - the window fixture
    wait_for_fresh_frame,
)
from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QRegion
from PySide6.QtTest import QTest

from spectropaint.app.tools.footprint import outline_polygon
from spectropaint.brushes.registry import BRUSHES

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


def snapshot(document) -> tuple[torch.Tensor, torch.Tensor]:
    block = document.blocks[0]
    return block.magnitude.clone(), block.phase.clone()


def stroke_points(canvas, *, y_fraction: float = 0.45) -> list[tuple[float, float]]:
    """A left-to-right path across the middle of the canvas, with a small rise."""
    width, height = canvas.width(), canvas.height()
    return [(width * (0.35 + 0.3 * k / 8), height * (y_fraction - 0.05 * k / 8)) for k in range(9)]


def expected_box(canvas, points) -> tuple[int, int, int, int]:
    """Cells (bin0, bin1, frame0, frame1) the brush can reach along ``points``, one cell of slack."""
    mapping = canvas.mapping()
    settings = canvas.tool.settings
    where = [mapping.to_document(x, y) for x, y in points]
    frames = [p.frame for p in where]
    bins = [p.bin for p in where]
    return (
        math.floor(min(bins) - settings.radius_bins) - 1,
        math.ceil(max(bins) + settings.radius_bins) + 2,
        math.floor(min(frames) - settings.radius_frames) - 1,
        math.ceil(max(frames) + settings.radius_frames) + 2,
    )


@pytest.mark.parametrize("brush", list(BRUSHES))
def test_each_brush_changes_the_document_inside_its_stroke_only(window, qtbot, brush):
    canvas, document = window.canvas, window.session.document
    window.palette.actions_by_tool[brush].trigger()
    assert canvas.tool.name == brush and window.brush_panel.brush == brush
    points = stroke_points(canvas)
    if brush == "clone":  # Ctrl+click sets the source first, as a person would
        ctrl, left = Qt.KeyboardModifier.ControlModifier, Qt.MouseButton.LeftButton
        x, y = canvas.width() * 0.1, canvas.height() * 0.3
        with qtbot.waitSignal(canvas.message):
            send_mouse(
                canvas,
                QEvent.Type.MouseButtonPress,
                x,
                y,
                button=left,
                buttons=left,
                modifiers=ctrl,
            )
        send_mouse(canvas, QEvent.Type.MouseButtonRelease, x, y, button=left, modifiers=ctrl)
        assert canvas.tool.clone_source is not None
    magnitude, phase = snapshot(document)
    wait_for_fresh_frame(qtbot, canvas)
    pixels = canvas_pixels(canvas)

    drag(qtbot, canvas, points)

    assert window.session.history.can_undo and window.session.modified
    after_magnitude, after_phase = snapshot(document)
    change = (
        (torch.polar(after_magnitude, after_phase) - torch.polar(magnitude, phase))
        .abs()
        .amax(dim=0)
        .numpy()
    )
    assert (change > 0).sum() > 20, "the stroke changed (almost) nothing"
    bin0, bin1, frame0, frame1 = expected_box(canvas, points)
    # the stroke's settle re-analyses the frames that read the samples its frames reach: beyond
    # them nothing changes; within them, further than the window's main lobe from the brush's
    # box, only the leakage of what changed
    reach = math.ceil(document.settings.n_fft / document.settings.hop) - 1
    frames = slice(max(0, frame0 - reach), frame1 + reach)
    outside = change.copy()
    outside[:, frames] = 0
    assert not outside.any(), f"cells outside the stroke changed: {np.argwhere(outside)[:5]}"
    near = np.zeros(change.shape, dtype=bool)
    near[max(0, bin0 - 2) : bin1 + 2, frames] = True
    assert (change[~near] ** 2).sum() < 1e-3 * (change[near] ** 2).sum()

    wait_for_fresh_frame(qtbot, canvas)
    now = canvas_pixels(canvas)
    xs = [int(x) for x, _ in points]
    ys = [int(y) for _, y in points]
    under_stroke = np.abs(now.astype(int) - pixels)[
        min(ys) - 3 : max(ys) + 4, min(xs) : max(xs) + 1
    ]
    assert under_stroke.max() > 10, "the pixels under the stroke did not change"
    top_rows = np.abs(now.astype(int) - pixels)[: canvas.height() // 10]
    assert top_rows.max() == 0, "pixels far from the stroke changed"


def key(qtbot, widget, sequence: str) -> None:
    """Type a shortcut such as 'Ctrl+Shift+Z' into the focused widget."""
    QTest.keySequence(widget, sequence)
    qtbot.wait(10)


def test_undo_and_redo_shortcuts_restore_the_document_exactly(window, qtbot):
    canvas, document = window.canvas, window.session.document
    original = snapshot(document)
    drag(qtbot, canvas, stroke_points(canvas))
    painted = snapshot(document)
    drag(qtbot, canvas, stroke_points(canvas, y_fraction=0.7))
    twice = snapshot(document)
    assert not torch.equal(painted[0], original[0]) and not torch.equal(twice[0], painted[0])

    canvas.setFocus()
    key(qtbot, canvas, "Ctrl+Z")
    assert all(torch.equal(a, b) for a, b in zip(snapshot(document), painted, strict=True))
    key(qtbot, canvas, "Ctrl+Z")
    assert all(torch.equal(a, b) for a, b in zip(snapshot(document), original, strict=True))
    assert not window.actions_by_name["undo"].isEnabled()
    key(qtbot, canvas, "Ctrl+Shift+Z")
    assert all(torch.equal(a, b) for a, b in zip(snapshot(document), painted, strict=True))
    key(qtbot, canvas, "Ctrl+Y")
    assert all(torch.equal(a, b) for a, b in zip(snapshot(document), twice, strict=True))
    assert not window.actions_by_name["redo"].isEnabled()


def test_bracket_keys_change_the_brush_size(window, qtbot):
    canvas = window.canvas
    canvas.setFocus()
    before = canvas.tool.settings.radius_frames, canvas.tool.settings.radius_bins
    key(qtbot, canvas, "]")
    bigger = canvas.tool.settings.radius_frames, canvas.tool.settings.radius_bins
    assert bigger == pytest.approx((before[0] * 1.25, before[1] * 1.25), rel=1e-3)
    key(qtbot, canvas, "[")
    key(qtbot, canvas, "[")
    smaller = canvas.tool.settings.radius_frames, canvas.tool.settings.radius_bins
    assert smaller == pytest.approx((before[0] / 1.25, before[1] / 1.25), rel=1e-2)


@pytest.mark.parametrize("scale", ["linear", "log"])
def test_frames_that_redraw_only_what_a_stroke_changed_equal_a_full_redraw(window, qtbot, scale):
    canvas = window.canvas
    window.view_panel.scale.setCurrentText(scale)
    canvas.zoom(1.5)
    wait_for_fresh_frame(qtbot, canvas)
    canvas.tool.leave()
    partial_before = canvas.partial_frames
    for tool, y in (("erase", 0.3), ("gain", 0.6), ("blur", 0.45)):
        window.palette.select(tool)
        drag(qtbot, canvas, stroke_points(canvas, y_fraction=y))
    canvas.tool.leave()
    qtbot.waitUntil(lambda: canvas._damage == [], timeout=5000)  # every change drawn
    qtbot.wait(300)  # and presented
    # each stroke drew only what it changed (its moves may be painted in one batch, one frame)
    assert canvas.partial_frames >= partial_before + 3
    partial = canvas_pixels(canvas)
    canvas.set_view(canvas.view)  # everything again
    wait_for_fresh_frame(qtbot, canvas)
    np.testing.assert_array_equal(canvas_pixels(canvas), partial)


def test_each_pointer_move_reaches_the_brush_as_it_comes(window, qtbot):
    """Moves are handed to the painting queue when Qt delivers them, not at rendercanvas's next
    look (which merged the moves between looks into one)."""
    canvas = window.canvas
    window.palette.select("gain")
    queued = []
    original = canvas.painter.paint
    canvas.painter.paint = lambda event: (queued.append(event), original(event))[1]
    left = Qt.MouseButton.LeftButton
    points = stroke_points(canvas)
    send_mouse(canvas, QEvent.Type.MouseButtonPress, *points[0], button=left, buttons=left)
    assert canvas.painter.painting  # the press began the stroke without the event loop running
    for x, y in points[1:]:
        send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, *points[-1], button=left)
    assert not canvas.painter.painting
    assert len(queued) == len(points) - 1  # none merged
    mapping = canvas.mapping()
    for (x, y), event in zip(points[1:], queued, strict=True):
        where, beside = mapping.to_document(x, y), mapping.to_document(x + 1, y + 1)
        assert abs(event.x - where.frame) <= abs(beside.frame - where.frame)  # within a pixel
        assert abs(event.y - where.bin) <= abs(beside.bin - where.bin)
    qtbot.waitUntil(lambda: not canvas.interacting, timeout=5000)


def test_frames_are_looked_for_faster_only_while_a_stroke_goes_on(window, qtbot):
    from spectropaint.app.window.canvas_widget import INTERACTING_FPS, MAX_FPS

    canvas = window.canvas
    window.palette.select("gain")
    scheduler_fps = lambda: canvas._BaseRenderCanvas__scheduler._max_fps  # noqa: E731
    assert scheduler_fps() == MAX_FPS
    left = Qt.MouseButton.LeftButton
    points = stroke_points(canvas)
    send_mouse(canvas, QEvent.Type.MouseButtonPress, *points[0], button=left, buttons=left)
    assert scheduler_fps() == INTERACTING_FPS > MAX_FPS
    for x, y in points[1:]:
        send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, *points[-1], button=left)
    qtbot.waitUntil(lambda: not canvas.interacting, timeout=5000)
    wait_for_fresh_frame(qtbot, canvas)
    assert scheduler_fps() == MAX_FPS


def _pressed_gain_stroke(window, qtbot) -> tuple[float, float]:
    """A gain stroke begun at the canvas's middle left, its first dab painted and shown."""
    canvas = window.canvas
    window.palette.select("gain")
    x, y = canvas.width() * 0.3, canvas.height() * 0.5
    left = Qt.MouseButton.LeftButton
    send_mouse(canvas, QEvent.Type.MouseButtonPress, x, y, button=left, buttons=left)
    qtbot.waitUntil(lambda: not canvas.painter.busy, timeout=5000)
    wait_for_fresh_frame(qtbot, canvas)
    return x, y


def _record_paints(canvas) -> list:
    painted = []
    original = canvas.paintEvent
    canvas.paintEvent = lambda event: (painted.append(event.region()), original(event))[1]
    return painted


def test_a_strokes_move_is_painted_once_by_the_frame_that_shows_its_dabs(window, qtbot):
    """By read-back, while a stroke paints, a move's outline waits for the frame that shows the
    move's dabs, which paints it too (where it was and where it is). Painted alone first, it took
    the window's thread 1.3 ms on the H200's host while the dabs waited for it."""
    canvas, document = window.canvas, window.session.document
    if canvas.present != "bitmap":
        pytest.skip("a surface composes its marks on the GPU")
    x, y = _pressed_gain_stroke(window, qtbot)
    canvas._marks_timer.setInterval(60_000)  # only the frame may paint the outline here
    before, magnitude = canvas._outline_area(), snapshot(document)[0]
    shown_before, painted = canvas._last_image, []
    original = canvas.paintEvent
    canvas.paintEvent = lambda event: (
        painted.append((event.region(), canvas._last_image)),
        original(event),
    )[1]
    send_mouse(canvas, QEvent.Type.MouseMove, x + 40, y, buttons=Qt.MouseButton.LeftButton)
    after = canvas._outline_area()
    qtbot.waitUntil(lambda: not canvas.painter.busy, timeout=5000)
    qtbot.waitUntil(lambda: bool(painted), timeout=10000)
    assert before != after and canvas._marks_due.isEmpty()
    assert all(image is not shown_before for _, image in painted)  # no paint of the old picture
    region = painted[0][0]
    assert (before.isEmpty() or region.contains(before)) and region.contains(after)
    changed = (document.blocks[0].magnitude != magnitude.to(document.device)).sum().item()
    assert changed > 0  # the move's dabs, shown by that frame
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, x + 40, y, button=Qt.MouseButton.LeftButton)


def test_a_strokes_changes_are_on_the_widget_once_the_window_has_taken_them(window, qtbot):
    """By read-back from a GPU, while a stroke goes on, the window draws the changes queued
    together in one frame, reads it back and paints it as soon as it has taken them (on the H200
    a painted move waited about 1 ms for rendercanvas's next look and 2 ms for Qt's paint event);
    outside a drag, and on a CPU rasteriser (whose frames the window's thread would wait for), it
    asks rendercanvas for a frame."""
    from PySide6.QtWidgets import QApplication

    canvas, session = window.canvas, window.session
    if canvas.present != "bitmap":
        pytest.skip("a surface keeps Qt's paint events")
    x, y = _pressed_gain_stroke(window, qtbot)
    changes = []
    session.changed.connect(changes.append, replay=False)
    send_mouse(canvas, QEvent.Type.MouseMove, x + 40, y, buttons=Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not canvas.painter.busy, timeout=5000)
    (change,) = [c for c in changes if c.kind == "paint"]
    wait_for_fresh_frame(qtbot, canvas)
    assert canvas._draw_now() == (canvas.lanes.device.adapter.info["adapter_type"] != "CPU")
    canvas._cpu_rasteriser = False  # (as on a GPU; CI's is lavapipe)
    painted = _record_paints(canvas)
    shown, draws = canvas.frames_presented, canvas._draws
    painting = threading.Thread(target=lambda: [session.changed.emit(change) for _ in range(2)])
    painting.start()  # two changes queued together, as the painting thread queues them
    painting.join()
    assert canvas.frames_presented == shown  # when the window's thread has taken them
    QApplication.processEvents()
    assert canvas._draws == draws + 1  # taken: both drawn in one frame, at once
    # then painted as the read-back arrives (within that call on an idle machine; a busy one,
    # another test in the next process, may take another turn of the event loop)
    qtbot.waitUntil(lambda: canvas.frames_presented == shown + 1, timeout=5000)
    assert canvas._draws == draws + 1
    x0, y0, x1, y1 = canvas._damage_rects(change.region)[0]
    box = QRegion(QRect(QPoint(math.ceil(x0), math.ceil(y0)), QPoint(int(x1) - 1, int(y1) - 1)))
    assert painted and not box.isEmpty() and box.subtracted(painted[-1]).isEmpty()
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, x + 40, y, button=Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not canvas.interacting, timeout=5000)
    wait_for_fresh_frame(qtbot, canvas)
    shown = canvas.frames_presented
    canvas.show_change(change)
    assert not canvas._changes_due  # asked of rendercanvas instead
    qtbot.waitUntil(lambda: canvas.frames_presented > shown, timeout=5000)


def test_a_strokes_move_that_stamps_no_dab_still_moves_the_outline(window, qtbot):
    """A move shorter than the brush's spacing makes no frame: its outline is painted alone, by
    the timer, where it now is."""
    canvas, document = window.canvas, window.session.document
    if canvas.present != "bitmap":
        pytest.skip("a surface composes its marks on the GPU")
    x, y = _pressed_gain_stroke(window, qtbot)
    mapping = canvas.mapping()
    step = 0.3 * canvas.tool.settings.spacing * canvas.tool.settings.radius_frames
    dx = step * (mapping.width / mapping.to_document(mapping.width, y).frame)  # pixels
    magnitude, painted = snapshot(document)[0], _record_paints(canvas)
    send_mouse(
        canvas, QEvent.Type.MouseMove, x + max(dx, 2.0), y, buttons=Qt.MouseButton.LeftButton
    )
    after = canvas._outline_area()
    qtbot.waitUntil(lambda: any(region.contains(after) for region in painted), timeout=5000)
    assert canvas._marks_due.isEmpty() or any(r.contains(canvas._marks_due) for r in painted)
    qtbot.waitUntil(lambda: not canvas.painter.busy, timeout=5000)
    assert torch.equal(document.blocks[0].magnitude, magnitude.to(document.device))  # no dab
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, x, y, button=Qt.MouseButton.LeftButton)


def test_closing_right_after_a_release_ends_the_stroke_before_the_session_closes(
    window, qtbot, monkeypatch
):
    """The painting thread may still be ending a stroke (and starting its settle) when the window
    closes the document: the session closes after it, so no settle thread is left behind (nor
    joined before it started)."""
    from spectropaint.app.session import Session

    session, canvas = window.session, window.canvas
    assert session.settling
    end_stroke, settlers = Session.end_stroke, []

    def slow_end(self):
        time.sleep(0.3)
        region = end_stroke(self)
        settlers.append(self._settler)  # the settle thread this stroke's end started
        return region

    monkeypatch.setattr(Session, "end_stroke", slow_end)
    window.palette.select("gain")
    left = Qt.MouseButton.LeftButton
    points = stroke_points(canvas)
    send_mouse(canvas, QEvent.Type.MouseButtonPress, *points[0], button=left, buttons=left)
    for x, y in points[1:]:
        send_mouse(canvas, QEvent.Type.MouseMove, x, y, buttons=left)
    send_mouse(canvas, QEvent.Type.MouseButtonRelease, *points[-1], button=left)
    assert canvas.painter.busy  # still ending the stroke
    window.close_document()
    assert len(session.history.undo_steps) == 1  # the stroke ended, then the session closed
    assert session._settler is None
    assert len(settlers) == 1 and settlers[0] is not None and not settlers[0].is_alive()


def test_a_strokes_frames_repaint_only_the_pixels_their_images_changed(window, qtbot):
    """By read-back, each presented image is painted over the part of the widget where it differs
    from the one before (its frame's scissor) and the marks, not over the whole widget."""
    canvas = window.canvas
    if canvas.present != "bitmap":
        pytest.skip("a surface presents the frame itself")
    canvas.tool.leave()
    wait_for_fresh_frame(qtbot, canvas)
    shown = []
    original = canvas.paintEvent

    def paint(event):
        shown.append((event.region(), np.array(canvas._last_image[1], copy=True)))
        original(event)

    canvas.paintEvent = paint
    window.palette.select("erase")
    drag(qtbot, canvas, stroke_points(canvas, y_fraction=0.3))
    canvas.tool.leave()
    qtbot.waitUntil(lambda: canvas._damage == [], timeout=5000)
    qtbot.wait(300)
    partial = 0
    for (_, before), (region, image) in itertools.pairwise(shown):
        painted = np.zeros(image.shape[:2], dtype=bool)
        for r in region:
            painted[r.top() : r.bottom() + 1, r.left() : r.right() + 1] = True
        changed = (image != before).any(axis=-1)
        assert not (changed & ~painted).any()  # every pixel the image changed is repainted
        partial += changed.any() and painted.mean() < 0.5
    assert partial >= 1  # the erase stroke's frames, each over its own box


def test_moving_the_outline_repaints_only_where_it_was_and_where_it_is(window, qtbot):
    """By read-back, an outline move repaints the old and the new outline's area, not the widget
    (on a 3165 x 1933 canvas under Xvfb: 2.3 ms a move against 8.1 ms for the whole widget)."""
    canvas = window.canvas
    if canvas.present != "bitmap":
        pytest.skip("a surface composes its marks on the GPU")
    window.palette.select("gain")
    width, height = canvas.width(), canvas.height()
    send_mouse(canvas, QEvent.Type.MouseMove, width * 0.3, height * 0.5)
    wait_for_fresh_frame(qtbot, canvas)
    before = canvas._outline_area()
    painted = []
    original = canvas.paintEvent
    canvas.paintEvent = lambda event: (painted.append(event.region()), original(event))[1]
    send_mouse(canvas, QEvent.Type.MouseMove, width * 0.35, height * 0.45)
    after = canvas._outline_area()
    qtbot.waitUntil(lambda: bool(painted), timeout=5000)
    region = painted[0]
    assert not before.isEmpty() and not after.isEmpty() and before != after
    assert region.contains(before) and region.contains(after)
    covered = sum(r.width() * r.height() for r in region)
    assert covered <= before.united(after).width() * before.united(after).height()
    assert covered < 0.2 * width * height
    # every point of the outline drawn in lane 0, where the lane shows it, is inside the area
    first, rows = canvas.bands()[0]
    points = outline_polygon(canvas.overlay.footprint, canvas.lane_mapping(0))
    points = points[(points[:, 1] >= 0) & (points[:, 1] <= rows)]
    assert len(points)
    assert (points[:, 0] >= after.left()).all() and (points[:, 0] <= after.right() + 1).all()
    assert (points[:, 1] + first >= after.top()).all()
    assert (points[:, 1] + first <= after.bottom() + 1).all()
    # the area where the outline is now is kept: the next move computes only the new one's, and
    # another view computes it again
    calls = []
    bounds = canvas.overlay.outline_bounds
    canvas.overlay.outline_bounds = lambda *args: (calls.append(args), bounds(*args))[1]
    send_mouse(canvas, QEvent.Type.MouseMove, width * 0.4, height * 0.45)
    lanes = len(canvas.bands())
    assert len(calls) == lanes
    moved = canvas._outline_area()
    assert canvas._outline_area() == moved and len(calls) == lanes
    canvas.zoom(1.5)
    assert canvas._outline_area() != moved and len(calls) >= 2 * lanes
