"""Presenting by read-back, reading back only what the frames drew since the last read-back.

rendercanvas's read-back context (its "bitmap" present method) copies the whole canvas texture to
host memory for every frame and hands the canvas a new array of it. A frame after an edit draws
only the part of the picture the edit reaches (:func:`~spectropaint.gpu.canvas.attach_canvas`'s
``damage``), and the rest of the texture holds the last frame's pixels, which were read back then.
:class:`RegionReadBack` keeps the last image read back and copies into it only the box drawn since
(:meth:`RegionReadBack.drawn`). On the H200 a stroke's move across a ten-minute file seen whole
spent 1.0 ms reading back its 762 x 688 canvas, 0.46 ms of it copying the mapped pixels, and 0.6
ms reading back its box (``bench_app.py``'s stroke, its functions timed). The canvas presents that
same array each time; it changes in place.
"""

from __future__ import annotations

import numpy as np
import wgpu
from rendercanvas.contexts.wgpucontext import WgpuContextToBitmap, parse_format

Box = tuple[int, int, int, int]
"""``(x, y, width, height)`` in the texture's pixels."""

ROW_ALIGNMENT = 256
"""A texture-to-buffer copy's rows start on multiples of this many bytes (WebGPU's rule)."""
SPARE_BUFFERS = 2
"""Read-back buffers kept for the next read-backs (the largest): one, and one whose mapping an
asynchronous present still waits for."""


def _union(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    x0, y0 = min(a[0], b[0]), min(a[1], b[1])
    x1, y1 = max(a[0] + a[2], b[0] + b[2]), max(a[1] + a[3], b[1] + b[3])
    return (x0, y0, x1 - x0, y1 - y0)


class _Reading:
    """One box's copy on its way to host memory in ``buffer``: ``then`` (rendercanvas's awaitable)
    gets the present's result once the buffer is mapped and the box copied into the kept image. An
    abandoned reading (a present came before it was mapped) only gives its buffer back."""

    def __init__(
        self,
        context: RegionReadBack,
        box: Box,
        row_bytes: int,
        texel_bytes: int,
        buffer: wgpu.GPUBuffer,
    ):
        self.context = context
        self.box = box
        self.row_bytes = row_bytes
        self.texel_bytes = texel_bytes
        self.buffer = buffer
        self.promise = None
        self.done = False
        self._callbacks: list = []

    def then(self, callback) -> None:
        self._callbacks.append(callback)

    def resolve(self, _=None) -> dict | None:
        """Copy the mapped box into the image (once) and tell the callbacks; the result."""
        if self.done:
            return None
        self.done = True
        result = self.context._take(self)
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(result)
        return result

    def abandon(self) -> None:
        """Never present this one (:meth:`resolve` does nothing now); its buffer is kept once
        mapped."""
        self.done = True
        self.promise.then(self._give_back)

    def _give_back(self, _=None) -> None:
        self.buffer.unmap()
        self.context._keep_spare(self.buffer)


class RegionReadBack(WgpuContextToBitmap):
    """rendercanvas's read-back context that reads back only the box of the texture drawn since
    the last read-back, into an image it keeps (``canvas.get_context(RegionReadBack)``).

    Whoever draws says what each frame drew with :meth:`drawn` (``None``: all of it). The first
    frame, a new size and a failed read-back read all of it. The presented array is the kept
    image: it is changed in place by later frames. A present asked for while the last one's
    pixels are still on their way (rendercanvas's scheduler presents asynchronously; the window
    draws a stroke's changes at once) reads that one's box again with its own: the texture holds
    the newest pixels. (Waiting for the mapping instead made wgpu-py warn, in a race between its
    poller thread and the wait.)

    Attributes
    ----------
    bytes_read : int
        Bytes copied from the GPU by the last read-back (tests, benchmarks).
    """

    def __init__(self, present_info: dict):
        super().__init__(present_info)
        self._image: np.ndarray | None = None
        self._unread: Box | None = None
        self._all_unread = True
        self._spare: list[wgpu.GPUBuffer] = []
        """Read-back buffers not in use (unmapped)."""
        self._reading: _Reading | None = None
        self._target: wgpu.GPUTexture | None = None
        self.bytes_read = 0

    def drawn(self, box: Box | None) -> None:
        """The frame being drawn changed ``box`` of the texture (None: all of it)."""
        if box is None:
            self._all_unread = True
        elif box[2] > 0 and box[3] > 0:
            self._unread = _union(self._unread, box)

    def _get_current_texture(self):
        texture = super()._get_current_texture()
        if texture is not self._target:  # new (a new size): nothing of it was read back
            self._target, self._all_unread = texture, True
        return texture

    def _rc_present(self, *, force_sync: bool = False) -> dict:
        texture = self._target
        if texture is None:
            return {"method": "skip"}
        self._abandon_reading()
        width, height = texture.size[0], texture.size[1]
        if self._image is None or self._image.shape[:2] != (height, width):
            self._all_unread = True
        box = (0, 0, width, height) if self._all_unread else self._unread
        self._all_unread, self._unread = False, None
        if box is None:  # nothing drawn since the last read-back
            return self._result()
        reading = self._start(texture, box)
        if force_sync:
            return reading.resolve()
        reading.promise.then(reading.resolve)
        return {"method": "async", "awaitable": reading}

    def _abandon_reading(self) -> None:
        """The read-back under way (its pixels not mapped yet) is not presented: its box is read
        again with the next one's."""
        reading, self._reading = self._reading, None
        if reading is not None and not reading.done:
            reading.abandon()
            whole = reading.box == (0, 0, *self._image.shape[1::-1])
            self.drawn(None if whole else reading.box)

    def _buffer(self, size: int) -> wgpu.GPUBuffer:
        """A spare read-back buffer of at least ``size`` bytes, or a new one."""
        for buffer in self._spare:
            if buffer.size >= size:
                self._spare.remove(buffer)
                return buffer
        return self._config["device"].create_buffer(
            label="region read-back",
            size=size,
            usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.MAP_READ,
        )

    def _keep_spare(self, buffer: wgpu.GPUBuffer) -> None:
        """Keep ``buffer`` for the next read-backs, but only the :data:`SPARE_BUFFERS` largest."""
        self._spare.append(buffer)
        if len(self._spare) > SPARE_BUFFERS:
            smallest = min(self._spare, key=lambda spare: spare.size)
            self._spare.remove(smallest)
            smallest.destroy()

    def _start(self, texture: wgpu.GPUTexture, box: Box) -> _Reading:
        """Copy ``box`` of ``texture`` to a read-back buffer and ask for it mapped."""
        dtype, _, channels, texel_bytes = parse_format(texture.format)
        x, y, w, h = box
        row_bytes = -(-w * texel_bytes // ROW_ALIGNMENT) * ROW_ALIGNMENT
        size = row_bytes * h
        reading = _Reading(self, box, row_bytes, texel_bytes, self._buffer(size))
        device = self._config["device"]
        encoder = device.create_command_encoder()
        encoder.copy_texture_to_buffer(
            {"texture": texture, "mip_level": 0, "origin": (x, y, 0)},
            {
                "buffer": reading.buffer,
                "offset": 0,
                "bytes_per_row": row_bytes,
                "rows_per_image": h,
            },
            (w, h, 1),
        )
        device.queue.submit([encoder.finish()])
        # as rendercanvas's own read-back: the copy was just submitted, so wgpu-py's extra submit
        # before mapping (which "READ" makes) is not needed
        reading.promise = reading.buffer.map_async("READ_NOSYNC", 0, size)
        self._reading = reading
        self.bytes_read = size
        if box == (0, 0, texture.size[0], texture.size[1]):  # all of it: a new image
            self._image = np.empty((texture.size[1], texture.size[0], channels), dtype)
        return reading

    def _take(self, reading: _Reading) -> dict:
        """The mapped box copied into the kept image; the present's result. A read-back that
        failed leaves all of the next frame to read back."""
        if self._reading is reading:
            self._reading = None
        buffer = reading.buffer
        try:
            if buffer.map_state != "mapped":
                reading.promise.sync_wait()
            x, y, w, h = reading.box
            image = self._image
            mapped = buffer.read_mapped(0, reading.row_bytes * h, copy=False)
            rows = np.frombuffer(mapped, np.uint8).reshape(h, reading.row_bytes)
            texels = rows[:, : w * reading.texel_bytes].view(image.dtype)
            image[y : y + h, x : x + w] = texels.reshape(h, w, image.shape[2])
            del rows, texels, mapped
        except Exception:
            self._all_unread = True
            raise
        finally:
            if buffer.map_state == "mapped":
                buffer.unmap()
            self._keep_spare(buffer)
        return self._result()

    def _result(self) -> dict:
        _, short_format, _, _ = parse_format(self._target.format)
        return {"method": "bitmap", "format": short_format, "data": self._image}

    def _unconfigure(self) -> None:
        """The texture goes (rendercanvas drops it): the next frame reads all of a new one."""
        super()._unconfigure()
        self._abandon_reading()
        self._image = self._target = None

    def _rc_close(self):
        self._abandon_reading()
        self._spare = []
        self._image = self._target = None
        super()._rc_close()
