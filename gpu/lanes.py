"""Channels stacked in lanes: channel 0 (left) on top, then the others, up to :data:`MAX_LANES`,
each drawn by a renderer of its own (:func:`~spectropaint.gpu.renderer_choice.renderer_for`: the
STFT's or the NSGT's) into a band of one picture.

:func:`lane_bands` places the bands (no GPU); :class:`LaneRenderer` draws them in one render pass,
each renderer clipped to its band, where the shader sees the band as a picture of its own (its
``full_size`` and an ``offset`` that moves the band's first row to row 0).
"""

from __future__ import annotations

import dataclasses

import wgpu

from spectropaint.gpu.frame_pass import draw_frame
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.renderer_choice import renderer_for
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping
from spectropaint.transforms.regions import Region

MAX_LANES = 8
GAP_PX = 3
"""Dark rows between two lanes."""


def lane_bands(lanes: int, height: int, gap: int = GAP_PX) -> list[tuple[int, int]]:
    """``(first_row, rows)`` of each of ``lanes`` bands, top to bottom, splitting ``height`` rows
    with ``gap`` rows between bands (integers: the bands meet the gaps exactly)."""
    if lanes <= 1:
        return [(0, height)]
    usable = max(lanes, height - gap * (lanes - 1))
    bands, row = [], 0
    for index in range(lanes):
        rows = usable * (index + 1) // lanes - usable * index // lanes
        bands.append((row, rows))
        row += rows + gap
    return bands


def lane_at(y: float, bands: list[tuple[int, int]]) -> int | None:
    """The index of the band holding row ``y``, or None in a gap (or outside)."""
    for index, (first, rows) in enumerate(bands):
        if first <= y < first + rows:
            return index
    return None


def _clip(
    band: tuple[int, int], width: int, scissor: tuple[int, int, int, int] | None
) -> tuple[int, int, int, int] | None:
    """The part of ``band`` (full width) inside ``scissor``, as a scissor, or None if none."""
    first, rows = band
    x0, y0, x1, y1 = 0, first, width, first + rows
    if scissor is not None:
        sx, sy, sw, sh = scissor
        x0, y0 = max(x0, sx), max(y0, sy)
        x1, y1 = min(x1, sx + sw), min(y1, sy + sh)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1 - x0, y1 - y0


class LaneRenderer:
    """The lanes of one document: one :class:`SpectrogramRenderer` per channel shown, top to bottom.

    Parameters
    ----------
    device : wgpu.GPUDevice
    document
        What the renderers draw (see :class:`SpectrogramRenderer`).
    view : ViewSettings
        The view every lane shows (each with its own channel).
    stacked : bool
        Every channel in a lane of its own (up to :data:`MAX_LANES`); else ``view.channel`` alone.
    max_texture_dim : int, optional
        As for :class:`SpectrogramRenderer`.
    """

    def __init__(
        self,
        device: wgpu.GPUDevice,
        document,
        view: ViewSettings,
        *,
        stacked: bool = False,
        max_texture_dim: int | None = None,
    ):
        self.device = device
        self.document = document
        self.max_texture_dim = max_texture_dim
        self._renderers: dict[int, SpectrogramRenderer] = {}
        self.closed = False
        """:meth:`close` was called: nothing is drawn or uploaded any more."""
        self.view = view
        self.stacked = stacked
        self.show(view, stacked)

    # ------------------------------------------------------------------------------- lanes
    @property
    def n_channels(self) -> int:
        return self.document.blocks[0].magnitude.shape[0]

    @property
    def channels(self) -> list[int]:
        """The channel of each lane, top to bottom."""
        if self.stacked and self.n_channels > 1:
            return list(range(min(self.n_channels, MAX_LANES)))
        return [min(self.view.channel, self.n_channels - 1)]

    @property
    def renderers(self) -> list[SpectrogramRenderer]:
        return [self._renderers[channel] for channel in self.channels]

    @property
    def geometry(self) -> BlockGeometry:
        return self.renderers[0].geometry

    @property
    def target_format(self) -> str:
        return self.renderers[0].target_format

    def show(self, view: ViewSettings, stacked: bool) -> None:
        """Show ``view``, stacked or not: renderers are made for channels that gain a lane (raises
        ``GPUUnavailableError`` when the GPU cannot hold them) and closed for those that lose one."""
        self.view, self.stacked = view, stacked
        wanted = self.channels
        for channel in wanted:
            lane_view = dataclasses.replace(view, channel=channel)
            if channel not in self._renderers:
                self._renderers[channel] = renderer_for(
                    self.device, self.document, view=lane_view, max_texture_dim=self.max_texture_dim
                )
            self._renderers[channel].view = lane_view
        for channel in [c for c in self._renderers if c not in wanted]:
            self._renderers.pop(channel).close()

    def bands(self, height: int) -> list[tuple[int, int]]:
        return lane_bands(len(self.channels), height)

    def lane_at(self, y: float, height: int) -> int | None:
        return lane_at(y, self.bands(height))

    def mapping(self, lane: int, width: float, height: float) -> ViewMapping:
        """Pixels of lane ``lane`` (its own rows, from 0 at its top) to document coordinates."""
        _, rows = self.bands(int(height))[lane]
        return ViewMapping(self.geometry, self.view, max(1.0, width), max(1, rows))

    def mark_dirty(self, region: Region) -> None:
        for renderer in self.renderers:
            renderer.mark_dirty(region)

    @property
    def streaming(self) -> bool:
        """Some lane has columns not uploaded yet, or changed boxes of levels it does not show (see
        :meth:`stream`)."""
        return not self.closed and any(renderer.streaming for renderer in self.renderers)

    def stream(self, budget_bytes: int) -> None:
        """Upload up to ``budget_bytes`` of each lane's missing columns, between frames: they are
        columns the view does not show (a frame uploads those it reads), so nothing is drawn."""
        for renderer in self.renderers:
            if renderer.streaming:
                renderer.stream(budget_bytes)

    # ------------------------------------------------------------------------------- drawing
    def render(
        self,
        target: wgpu.GPUTextureView,
        width: int,
        height: int,
        *,
        scissor: tuple[int, int, int, int] | None = None,
    ) -> None:
        """Draw every lane (or only the pixels in ``scissor``, keeping the rest of ``target``)."""
        bands = lane_bands(len(self.channels), height)
        parts = []
        for renderer, band in zip(self.renderers, bands, strict=True):
            clip = _clip(band, width, scissor)
            if clip is not None:
                first, rows = band
                renderer.prepare(
                    width, rows, full_size=(width, rows), offset=(0, -first), clip=clip
                )
                parts.append((renderer, clip))
        draw_frame(self.device, target, parts, keep=scissor is not None)

    def close(self) -> None:
        self.closed = True
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()
