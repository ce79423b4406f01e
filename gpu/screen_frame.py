"""A frame for a window's surface: the picture kept in a texture of its own, composed with the
window's marks onto the surface's texture each time the window is presented.

A canvas that presents by read-back (rendercanvas's "bitmap") keeps its texture between frames, so
a frame may draw only what changed (:func:`~spectropaint.gpu.canvas.attach_canvas`'s ``damage``),
and the window paints its marks (the brush outline, lane names, the grid) with QPainter over the
read-back pixels. A surface's textures are new each frame and nothing can paint over them, so for a
surface the picture is drawn into :attr:`ScreenFrame.picture` (kept while the size stays) and
:meth:`ScreenFrame.compose` draws it with the marks over it (an RGBA image the window paints with
QPainter, premultiplied, uploaded where it changed) onto the surface texture: one render pass.
"""

from __future__ import annotations

import wgpu

from spectropaint.gpu.frame_pass import PICTURE_FORMAT
from spectropaint.gpu.renderer import pipeline


def _pipeline(
    device: wgpu.GPUDevice, target_format: str
) -> tuple[wgpu.GPUBindGroupLayout, wgpu.GPURenderPipeline]:
    """The compose pass: the picture (binding 0) and the marks (1) onto the surface."""
    return pipeline(
        device,
        target_format,
        entry_point="fs_compose",
        sources=("compose.wgsl",),
        bindings=((0, "2d"), (1, "2d")),
    )


def surface_format(preferred: str) -> str:
    """The surface format to configure: the preferred one without ``-srgb`` (the colour tables
    hold display values already; an sRGB surface would encode them again)."""
    return preferred.removesuffix("-srgb")


class ScreenFrame:
    """The kept picture and the marks of one canvas presenting to a surface of ``target_format``.

    Attributes
    ----------
    composed : int
        Frames composed so far (tests and benchmarks).
    """

    def __init__(self, device: wgpu.GPUDevice, target_format: str):
        self.device = device
        self.target_format = target_format
        self._picture: wgpu.GPUTexture | None = None
        self._marks: wgpu.GPUTexture | None = None
        self._bind_group: wgpu.GPUBindGroup | None = None
        self._picture_view: wgpu.GPUTextureView | None = None
        self.composed = 0

    @property
    def size(self) -> tuple[int, int] | None:
        return None if self._picture is None else tuple(self._picture.size[:2])

    def picture(self, size: tuple[int, int]) -> wgpu.GPUTextureView:
        """The kept picture of ``size`` (width, height) to draw into (new, black and with no
        marks, when the size changed: draw all of it then)."""
        if self.size != size:
            self.release()
            usage = wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST
            self._picture = self.device.create_texture(
                label="kept picture",
                size=(*size, 1),
                format=PICTURE_FORMAT,
                usage=usage | wgpu.TextureUsage.RENDER_ATTACHMENT,
            )
            self._marks = self.device.create_texture(
                label="marks", size=(*size, 1), format="rgba8unorm", usage=usage
            )
            layout, _ = _pipeline(self.device, self.target_format)
            self._bind_group = self.device.create_bind_group(
                layout=layout,
                entries=[
                    {"binding": 0, "resource": self._picture.create_view()},
                    {"binding": 1, "resource": self._marks.create_view()},
                ],
            )
            self._picture_view = self._picture.create_view()
        return self._picture_view

    def write_marks(self, data, pitch: int, rect: tuple[int, int, int, int]) -> None:
        """Upload ``rect`` (x, y, width, height) of the marks: ``data`` holds the image of the
        picture's size, rows of ``pitch`` bytes of uint8 RGBA with premultiplied alpha (a QImage's
        bytes: written from its memory, not copied)."""
        x, y, width, height = rect
        if self._marks is None or width <= 0 or height <= 0:
            return
        self.device.queue.write_texture(
            {"texture": self._marks, "origin": (x, y, 0)},
            data,
            {"offset": y * pitch + 4 * x, "bytes_per_row": pitch, "rows_per_image": height},
            (width, height, 1),
        )

    def compose(self, target: wgpu.GPUTextureView) -> None:
        """Draw the picture with the marks over it into ``target`` (the surface's texture, of the
        picture's size) and submit."""
        _, render = _pipeline(self.device, self.target_format)
        encoder = self.device.create_command_encoder()
        render_pass = encoder.begin_render_pass(
            color_attachments=[{"view": target, "load_op": "clear", "store_op": "store"}]
        )
        render_pass.set_pipeline(render)
        render_pass.set_bind_group(0, self._bind_group)
        render_pass.draw(3)
        render_pass.end()
        self.device.queue.submit([encoder.finish()])
        self.composed += 1

    def release(self) -> None:
        """Free the textures (they are made again for the next size asked)."""
        for texture in (self._picture, self._marks):
            if texture is not None:
                texture.destroy()
        self._picture = self._marks = self._bind_group = self._picture_view = None
