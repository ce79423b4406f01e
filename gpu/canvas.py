"""Hooking a renderer to a rendercanvas canvas (offscreen in tests and exports, Qt in the app)."""

from __future__ import annotations

from collections.abc import Callable

import wgpu

from spectropaint.gpu.errors import GPUUnavailableError, gpu_errors
from spectropaint.gpu.lanes import LaneRenderer
from spectropaint.gpu.renderer import SpectrogramRenderer


def attach_canvas(
    renderer: LaneRenderer | SpectrogramRenderer,
    canvas,
    *,
    on_error: Callable[[GPUUnavailableError], None] | None = None,
    damage: Callable[[tuple[int, int]], tuple[int, int, int, int] | None] | None = None,
) -> None:
    """Draw ``renderer`` (one, or the lanes of a :class:`LaneRenderer`) into ``canvas`` on every
    frame the canvas draws.

    ``damage(size)``, when given (with a :class:`LaneRenderer`), says what part of the frame (``x, y, width, height`` in pixels of
    a ``size`` frame) must be drawn again, or None for all of it; the rest keeps the last frame's
    pixels (the canvas's texture is kept between frames while its size stays).

    The canvas context is configured with the renderer's target format (``rgba8unorm``, so the
    colours are exact), and as a copy destination where the surface allows, so that a compute
    pass can draw the frame (:mod:`spectropaint.gpu.frame_pass`). Ask the canvas for a frame with ``canvas.request_draw()`` after changing
    ``renderer.view`` or editing the document; an offscreen canvas draws on ``canvas.draw()``.
    A GPU failure while drawing goes to ``on_error`` (when given) and the frame is skipped:
    rendercanvas itself would only log it.
    """
    context = canvas.get_context("wgpu")
    try:  # a compute pass draws into a picture copied into the canvas's texture (frame_pass)
        context.configure(
            device=renderer.device,
            format=renderer.target_format,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_DST,
        )
    except (ValueError, RuntimeError):  # a surface that cannot be copied into: render passes
        context.configure(device=renderer.device, format=renderer.target_format)

    def draw_frame() -> None:
        try:
            with gpu_errors("getting the window's image"):
                texture = context.get_current_texture()
                target = texture.create_view()
            size = (texture.size[0], texture.size[1])
            if damage is None:
                renderer.render(target, *size)
            else:
                renderer.render(target, *size, scissor=damage(size))
        except GPUUnavailableError as exc:
            if on_error is None:
                raise
            on_error(exc)
            raise wgpu.DrawCancelled(str(exc)) from exc  # rendercanvas then skips presenting

    canvas.request_draw(draw_frame)
