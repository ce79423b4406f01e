"""Hooking a renderer to a rendercanvas canvas (offscreen in tests and exports, Qt in the app)."""

from __future__ import annotations

from spectropaint.gpu.renderer import SpectrogramRenderer


def attach_canvas(renderer: SpectrogramRenderer, canvas) -> None:
    """Draw ``renderer`` into ``canvas`` on every frame the canvas draws.

    The canvas context is configured with the renderer's target format (``rgba8unorm``, so the
    colours are exact). Ask the canvas for a frame with ``canvas.request_draw()`` after changing
    ``renderer.view`` or editing the document; an offscreen canvas draws on ``canvas.draw()``.
    """
    context = canvas.get_context("wgpu")
    context.configure(device=renderer.device, format=renderer.target_format)

    def draw_frame() -> None:
        texture = context.get_current_texture()
        renderer.render(texture.create_view(), texture.size[0], texture.size[1])

    canvas.request_draw(draw_frame)
