"""Hooking a renderer to a rendercanvas canvas (offscreen in tests and exports, Qt in the app)."""

from __future__ import annotations

from collections.abc import Callable

import wgpu

from spectropaint.gpu.errors import GPUUnavailableError, gpu_errors
from spectropaint.gpu.lanes import LaneRenderer
from spectropaint.gpu.region_readback import RegionReadBack
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.screen_frame import ScreenFrame, surface_format

Marks = Callable[[tuple[int, int], ScreenFrame], None]


def attach_canvas(
    renderer: LaneRenderer | SpectrogramRenderer,
    canvas,
    *,
    on_error: Callable[[GPUUnavailableError], None] | None = None,
    damage: Callable[[tuple[int, int]], tuple[int, int, int, int] | None] | None = None,
    marks: Marks | None = None,
    on_surface_error: Callable[[Exception], None] | None = None,
) -> ScreenFrame | None:
    """Draw ``renderer`` (one, or the lanes of a :class:`LaneRenderer`) into ``canvas`` on every
    frame the canvas draws.

    ``damage(size)``, when given (with a :class:`LaneRenderer`), says what part of the frame (``x,
    y, width, height`` in pixels of a ``size`` frame) must be drawn again (width 0: none of it), or
    None for all of it; the rest keeps the last frame's pixels. A canvas that presents by read-back
    (any but one whose ``present`` says ``"screen"``) then reads back only that part
    (:class:`~spectropaint.gpu.region_readback.RegionReadBack`).

    A canvas that presents by read-back keeps its texture between frames, and the picture is drawn
    into it (as a copy destination where it allows, so that a compute pass can draw the frame:
    :mod:`spectropaint.gpu.frame_pass`). A canvas that presents to a surface (rendercanvas's
    "screen" method) draws into a :class:`ScreenFrame`'s kept picture, which is then composed with
    the marks onto the surface's texture: ``marks(size, frame)``, when given, uploads to ``frame``
    what changed of them before each composition; the ScreenFrame is returned then (None for a
    read-back canvas). The surface is configured with its preferred format less ``-srgb``.

    Ask the canvas for a frame with ``canvas.request_draw()`` after changing ``renderer.view`` or
    editing the document; an offscreen canvas draws on ``canvas.draw()``. A GPU failure while
    drawing goes to ``on_error`` (when given) and the frame is skipped: rendercanvas itself would
    only log it. A surface that gives no texture goes to ``on_surface_error`` when given (the
    window presents by read-back then); its errors while configuring are raised.
    """
    partial = damage is not None and getattr(canvas, "present", "bitmap") == "bitmap"
    context = canvas.get_context(RegionReadBack if partial else "wgpu")
    screen = None
    if getattr(canvas, "_present_to_screen", False):
        target_format = surface_format(context.get_preferred_format(renderer.device.adapter))
        context.configure(device=renderer.device, format=target_format)
        screen = ScreenFrame(renderer.device, target_format)
    else:
        try:  # a compute pass draws into a picture copied into the canvas's texture (frame_pass)
            context.configure(
                device=renderer.device,
                format=renderer.target_format,
                usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_DST,
            )
        except (ValueError, RuntimeError):  # a surface that cannot be copied into: render passes
            context.configure(device=renderer.device, format=renderer.target_format)

    def surface_texture() -> wgpu.GPUTexture:
        if screen is None or on_surface_error is None:
            return context.get_current_texture()
        try:
            return context.get_current_texture()
        except Exception as exc:  # noqa: BLE001 - whatever the surface raised: present otherwise
            on_surface_error(exc)
            raise wgpu.DrawCancelled(str(exc)) from exc

    def draw_frame() -> None:
        try:
            with gpu_errors("getting the window's image"):
                texture = surface_texture()
            size = (texture.size[0], texture.size[1])
            fresh = screen is not None and screen.size != size
            target = screen.picture(size) if screen is not None else texture.create_view()
            scissor = None if damage is None else damage(size)
            if fresh:  # a new kept picture: all of it
                scissor = None
            if partial:
                context.drawn(scissor)
            if scissor is None:
                renderer.render(target, *size)
            elif scissor[2] > 0:
                renderer.render(target, *size, scissor=scissor)
            if screen is not None:
                if marks is not None:
                    marks(size, screen)
                with gpu_errors("drawing the spectrogram"):
                    screen.compose(texture.create_view())
        except GPUUnavailableError as exc:
            if on_error is None:
                raise
            on_error(exc)
            raise wgpu.DrawCancelled(str(exc)) from exc  # rendercanvas then skips presenting

    canvas.request_draw(draw_frame)
    return screen
