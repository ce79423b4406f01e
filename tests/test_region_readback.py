"""Presenting by read-back of only what was drawn: the presented image equals the whole texture read
back another way, after frames that drew boxes, a frame that was cancelled, and a new size."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import wgpu
from rendercanvas.offscreen import OffscreenRenderCanvas

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.region_readback import ROW_ALIGNMENT, RegionReadBack

pytestmark = pytest.mark.gpu


class BoxPainter:
    """Draws the frames of an offscreen canvas: each writes random pixels into the boxes asked for
    (None: all of it) and says so to the context; a frame may be cancelled after it wrote."""

    def __init__(self, size=(70, 50)):
        self.device = shared_device()
        self.canvas = OffscreenRenderCanvas(size=size, pixel_ratio=1)
        self.context = self.canvas.get_context(RegionReadBack)
        self.context.configure(
            device=self.device,
            format="rgba8unorm",
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_DST,
        )
        self.boxes: list = [None]
        self.cancel = False
        self.rng = np.random.default_rng(4)
        self.canvas.request_draw(self.draw)

    def draw(self) -> None:
        texture = self.context.get_current_texture()
        width, height = texture.size[0], texture.size[1]
        for box in self.boxes:
            x, y, w, h = (0, 0, width, height) if box is None else box
            if not w * h:
                self.context.drawn(box)
                continue
            pixels = self.rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
            self.device.queue.write_texture(
                {"texture": texture, "origin": (x, y, 0)},
                pixels,
                {"bytes_per_row": 4 * w, "rows_per_image": h},
                (w, h, 1),
            )
            self.context.drawn(box)
        if self.cancel:
            raise wgpu.DrawCancelled("a failed frame")

    def frame(self, *boxes) -> np.ndarray:
        self.boxes = list(boxes)
        return np.asarray(self.canvas.draw())

    def texture_pixels(self) -> np.ndarray:
        """The whole texture, read back with the queue's own call."""
        texture = self.context.get_current_texture()
        width, height = texture.size[0], texture.size[1]
        data = self.device.queue.read_texture(
            {"texture": texture},
            {"bytes_per_row": 4 * width, "rows_per_image": height},
            (width, height, 1),
        )
        return np.frombuffer(data, np.uint8).reshape(height, width, 4)


def test_only_the_boxes_drawn_are_read_back_and_the_image_is_the_whole_texture():
    painter = BoxPainter()
    first = painter.frame(None).copy()
    assert painter.context.bytes_read >= 70 * 50 * 4
    np.testing.assert_array_equal(first, painter.texture_pixels())
    # two boxes in one frame: their joint box is read back, nothing else
    shown = painter.frame((5, 7, 10, 4), (30, 20, 8, 9))
    np.testing.assert_array_equal(shown, painter.texture_pixels())
    assert painter.context.bytes_read == ROW_ALIGNMENT * (29 - 7)  # 33 x 22 pixels, rows of 256
    assert not np.array_equal(shown, first)
    outside = np.ones(first.shape[:2], bool)
    outside[7:29, 5:38] = False
    np.testing.assert_array_equal(shown[outside], first[outside])
    painter.canvas.close()


def test_a_cancelled_frame_s_box_is_read_back_with_the_next_one():
    painter = BoxPainter()
    painter.frame(None)
    painter.cancel = True
    painter.frame((60, 40, 10, 10))  # written, never presented
    painter.cancel = False
    shown = painter.frame((0, 0, 3, 3))
    np.testing.assert_array_equal(shown, painter.texture_pixels())
    assert painter.context.bytes_read == ROW_ALIGNMENT * 2 * 50  # rows 0..49, 70 pixels wide
    painter.canvas.close()


def test_a_frame_that_drew_nothing_presents_the_last_image_and_reads_nothing():
    painter = BoxPainter()
    before = painter.frame(None).copy()
    painter.context.bytes_read = 0
    shown = painter.frame((10, 10, 0, 5))  # an empty box
    assert painter.context.bytes_read == 0
    np.testing.assert_array_equal(shown, before)
    painter.canvas.close()


def test_a_new_size_reads_all_of_the_new_texture():
    painter = BoxPainter()
    painter.frame(None)
    painter.canvas.set_logical_size(40, 90)
    shown = painter.frame((1, 1, 2, 2))  # the drawer says a box, but the texture is new
    assert shown.shape == (90, 40, 4)
    np.testing.assert_array_equal(shown, painter.texture_pixels())
    assert painter.context.bytes_read == ROW_ALIGNMENT * 90
    painter.canvas.close()


def test_a_present_while_the_last_one_s_pixels_are_on_their_way_reads_both_boxes():
    """rendercanvas presents asynchronously (a running loop); the window draws a stroke's changes
    and presents them at once. The present under way is then dropped (never shown, its buffer
    kept for later) and the next reads its box again with its own."""
    painter = BoxPainter()
    painter.frame(None)
    context, shown = painter.context, []

    async def presents():
        painter.boxes = [(2, 3, 5, 5)]
        painter.draw()
        pending = context._rc_present()  # as rendercanvas's scheduler asks
        assert pending["method"] == "async"
        pending["awaitable"].then(shown.append)
        painter.boxes = [(40, 30, 6, 6)]
        painter.draw()
        now = context._rc_present(force_sync=True)  # before the loop ran the first's callbacks
        await asyncio.sleep(0.1)  # the loop runs them now
        return now

    now = asyncio.run(presents())
    assert shown == []  # the first present was dropped
    np.testing.assert_array_equal(now["data"], painter.texture_pixels())
    assert context.bytes_read == ROW_ALIGNMENT * (36 - 3)  # both boxes: 44 x 33 pixels
    assert len(context._spare) == 2  # the dropped present's buffer came back too
    painter.canvas.close()


def test_a_context_configured_again_reads_all_of_its_new_texture():
    painter = BoxPainter()
    painter.frame(None)
    painter.context.unconfigure()
    painter.context.configure(
        device=painter.device,
        format="rgba8unorm",
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_DST,
    )
    shown = painter.frame((1, 1, 2, 2))  # a new texture: its other pixels were never read
    np.testing.assert_array_equal(shown, painter.texture_pixels())
    assert painter.context.bytes_read == 2 * ROW_ALIGNMENT * 50  # 70 pixels of 4 bytes a row
    painter.canvas.close()
