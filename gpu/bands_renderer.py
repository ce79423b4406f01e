"""The renderer of documents whose bands are not evenly spaced (the NSGT): a band-to-frequency lookup
per group of bands, each group at its own time rate.

An NSGT document's blocks come in pairs (one group of bands in the even and in the odd slices,
:mod:`spectropaint.transforms.nsgt`). What is drawn per group is the magnitude of the pair's sum at
each time, on the even block's frames: the unsliced transform's coefficient there. Each group's
magnitude (shown channel) and its max-pooled levels are tiles of one array texture; a storage buffer
describes each group (its band edges in Hz, its frames' place on the view's time axis, its tiles),
and the shader (``fs_bands`` in shaders/bands.wgsl) searches the band edges, so the linear, log and
mel axes are all exact. Dirty boxes of either block of a pair re-upload the columns they reach.

The view's time axis and the pointer's frames and bins are those of the default STFT (hop 512,
``n_fft`` 2048) at the document's rate: a stroke in frames and bins means the same on either
transform (:mod:`spectropaint.brushes.plane`).
"""

from __future__ import annotations

import struct

import numpy as np
import torch
import wgpu

from spectropaint.gpu.errors import GPUUnavailableError, gpu_errors
from spectropaint.gpu.geometry import reference_geometry
from spectropaint.gpu.levels import pooled_columns
from spectropaint.gpu.renderer import MASK_BINDING, SpectrogramRenderer, pipeline
from spectropaint.gpu.tiles import MAX_LEVELS, DirtyRects, Rect, TileGrid, level_widths, merge_rects
from spectropaint.gpu.uniforms import VIEW_SIZE
from spectropaint.gpu.upload_batch import HostStaging, UploadBatch, UploadStats
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.regions import Region

GROUP_FORMAT = "<ffIIffIIIIII16I16I"


def band_edges(centres: np.ndarray, nyquist: float) -> np.ndarray:
    """Cell edges of bands with ascending ``centres`` (Hz): 0, the geometric mean of each pair of
    neighbours (half the first positive centre after 0 Hz), and ``nyquist``."""
    low, high = centres[:-1], centres[1:]
    inner = np.where(low > 0, np.sqrt(np.maximum(low, 0) * high), high / 2)
    return np.concatenate(([0.0], inner, [nyquist]))


def combined_coefficients(
    document, block: int, channel: int, frame0: int, frame1: int
) -> torch.Tensor:
    """``even + odd`` of the pair holding ``block`` over the even block's frames ``[frame0,
    frame1)``: ``[bins, frames]`` complex64 (the odd block's frame at the same time is ``M / 2``
    before)."""
    even, odd = document.blocks[block & ~1], document.blocks[block | 1]
    lag = document.transform.slice_length // 2 // even.hop

    def coefficients(data, a, b):
        return torch.polar(data.magnitude[channel, :, a:b], data.phase[channel, :, a:b])

    total = coefficients(even, frame0, frame1)
    lo, hi = max(frame0, lag), min(frame1, odd.n_frames + lag)
    if hi > lo:
        total[:, lo - frame0 : hi - frame0] += coefficients(odd, lo - lag, hi - lag)
    return total


def combined_magnitude(
    document, block: int, channel: int, frame0: int, frame1: int
) -> torch.Tensor:
    """``|even + odd|``: see :func:`combined_coefficients`; ``[bins, frames]`` float32."""
    return combined_coefficients(document, block, channel, frame0, frame1).abs()


class BandsRenderer(SpectrogramRenderer):
    """Draws an NSGT document (every group of bands); the interface is :class:`SpectrogramRenderer`'s.

    The phase view (``mode='phase'``) shows the angle of the pair's sum, at level 0 of the same
    tiles (in a texture made when first asked for), through the cyclic colour map, as the
    STFT's does: per pixel, the band and frame under its centre.
    """

    def __init__(
        self,
        device: wgpu.GPUDevice,
        document,
        *,
        view=None,
        max_texture_dim: int | None = None,
        reference_magnitude: float | None = None,
        target_format: str = "rgba8unorm",
    ):
        self.device = device
        self.document = document
        self.block_index = 0
        self.view = view or ViewSettings()
        self.target_format = target_format
        self.reference_magnitude = reference_magnitude or document.transform.full_scale
        self.geometry = reference_geometry(document)
        n_channels = document.blocks[0].magnitude.shape[0]
        self.n_channels = n_channels
        self.shown_channel = min(self.view.channel, n_channels - 1)
        max_dim = device.limits["max-texture-dimension-2d"]
        if max_texture_dim is not None:
            max_dim = min(max_dim, max_texture_dim)
        pairs = range(0, len(document.blocks), 2)
        widths = [level_widths(document.blocks[b].n_frames) for b in pairs]
        most_bins = max(document.blocks[b].n_bins for b in pairs)
        largest = 1 << (max_dim.bit_length() - 1)
        tile_width = min(largest, 1 << max(0, max(sum(w) for w in widths) - 1).bit_length())
        tile_height = most_bins if most_bins <= max_dim else largest
        self.grids = [
            TileGrid(1, document.blocks[b].n_bins, w, tile_width, tile_height)
            for b, w in zip(pairs, widths, strict=True)
        ]
        self.grid = self.grids[0]
        self.phase_grid = self.grid
        self._layer0 = np.cumsum([0] + [grid.n_layers for grid in self.grids])
        layers = int(self._layer0[-1])
        if layers > device.limits["max-texture-array-layers"]:
            raise GPUUnavailableError(
                f"this document needs {layers} texture tiles of {tile_width}x{tile_height}; the "
                f"GPU allows {device.limits['max-texture-array-layers']}"
            )
        self.stats = UploadStats()
        self._staging = HostStaging()
        self._phase = None
        self._combined: list[torch.Tensor | None] = [None] * len(self.grids)
        self._tile_size = (tile_width, tile_height, layers)
        with gpu_errors(f"creating the textures of {len(self.grids)} groups of bands"):
            self._magnitude = self._tile_texture("band tiles", self._tile_size)
            self._placeholder = self._tile_texture("no band phase", (1, 1, 1))
            self._colormaps = self._colormap_texture()
            self._uniforms = device.create_buffer(
                size=VIEW_SIZE, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
            )
            self._groups, self._edges = self._group_buffers()
            self._layout, self._pipeline = pipeline(
                device,
                target_format,
                entry_point="fs_bands",
                sources=("spectrogram.wgsl", "overlay.wgsl", "bands.wgsl"),
                bindings=(
                    (0, "uniform"),
                    (1, "2d-array"),
                    (2, "2d-array"),
                    (3, "2d"),
                    (4, "storage"),
                    (5, "storage"),
                    (MASK_BINDING, "2d"),
                ),
            )
            self._mask = self._mask_texture(np.zeros((1, 1), np.float32))
        self._mask_shown = None
        self._bind_group = None
        self._dirty = DirtyRects()
        for index, grid in enumerate(self.grids):
            self._dirty.add(index, grid.full_rect())

    # ------------------------------------------------------------------------------- set-up
    def _tile_texture(self, label: str, size: tuple[int, int, int]) -> wgpu.GPUTexture:
        return self.device.create_texture(
            label=label,
            size=size,
            format="r32float",
            usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
        )

    def _group_buffers(self) -> tuple[wgpu.GPUBuffer, wgpu.GPUBuffer]:
        document, geometry = self.document, self.geometry
        centres = np.concatenate([block.band_hz for block in document.blocks[::2]])
        edges = band_edges(centres, document.sample_rate / 2.0)
        records, first = [], 0
        for index, grid in enumerate(self.grids):
            block = document.blocks[2 * index]
            n_bins = block.n_bins
            step = block.hop / document.sample_rate
            start = float(block.frame_seconds[0])
            # view texel p is at seconds (p - 0.5) * s + t0; frame i of the group at i + 0.5
            a = geometry.step_seconds / step
            b = (geometry.first_seconds - 0.5 * geometry.step_seconds - start) / step + 0.5
            offsets = list(grid.level_offsets) + [0] * (MAX_LEVELS - len(grid.level_widths))
            widths = list(grid.level_widths) + [0] * (MAX_LEVELS - len(grid.level_widths))
            records.append(
                struct.pack(
                    GROUP_FORMAT,
                    edges[first],
                    edges[first + n_bins],
                    first,
                    n_bins,
                    a,
                    b,
                    int(self._layer0[index]),
                    grid.tile_cols,
                    len(grid.level_widths),
                    0,
                    0,
                    0,
                    *offsets,
                    *widths,
                )
            )
            first += n_bins
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
        groups = self.device.create_buffer_with_data(data=b"".join(records), usage=usage)
        edge_data = np.ascontiguousarray(edges, dtype=np.float32)
        return groups, self.device.create_buffer_with_data(data=edge_data.tobytes(), usage=usage)

    def _get_bind_group(self) -> wgpu.GPUBindGroup:
        if self._bind_group is None:
            self._bind_group = self.device.create_bind_group(
                layout=self._layout,
                entries=[
                    {"binding": 0, "resource": {"buffer": self._uniforms}},
                    {
                        "binding": 1,
                        "resource": self._magnitude.create_view(dimension="2d-array"),
                    },
                    {
                        "binding": 2,
                        "resource": (self._phase or self._placeholder).create_view(
                            dimension="2d-array"
                        ),
                    },
                    {"binding": 3, "resource": self._colormaps.create_view()},
                    {"binding": 4, "resource": {"buffer": self._groups}},
                    {"binding": 5, "resource": {"buffer": self._edges}},
                    {"binding": MASK_BINDING, "resource": self._mask.create_view()},
                ],
            )
        return self._bind_group

    # ------------------------------------------------------------------------------- uploads
    @property
    def streaming(self) -> bool:
        """Never: each group is written whole, every level, by the first frame that shows it."""
        return False

    def _lag(self, group: int) -> int:
        return self.document.transform.slice_length // 2 // self.document.blocks[2 * group].hop

    def _mark_box(self, region: Region) -> None:
        group, odd = divmod(region.block, 2)
        if group >= len(self.grids) or self.shown_channel not in region.channels:
            return
        shift = self._lag(group) if odd else 0
        grid = self.grids[group]
        rect = Rect(
            max(0, region.bin0),
            min(grid.n_bins, region.bin1),
            max(0, region.frame0 + shift),
            min(grid.level_widths[0], region.frame1 + shift),
        )
        if rect.size:
            self._dirty.add(group, rect)

    def _show_channel(self, channel: int) -> None:
        if channel != self.shown_channel:
            self.shown_channel = channel
            self._dirty.take()
            self._combined = [None] * len(self.grids)
            for index, grid in enumerate(self.grids):
                self._dirty.add(index, grid.full_rect())

    def _ensure_phase(self) -> None:
        if self._phase is not None:
            return
        with gpu_errors("creating the phase textures of the groups of bands"):
            self._phase = self._tile_texture("band phase tiles", self._tile_size)
        self._bind_group = None
        batch = UploadBatch()
        for group, grid in enumerate(self.grids):
            if self._combined[group] is not None:  # else the next flush writes it whole
                self._write_phase(batch, group, grid.full_rect())
        batch.write(self.device.queue, self.stats, self._staging)

    def _write_phase(self, batch: UploadBatch, group: int, rect: Rect) -> None:
        """Add the angle of the pair's sum over ``rect`` (bins, level-0 frames) of ``group``."""
        total = combined_coefficients(
            self.document, 2 * group, self.shown_channel, rect.col0, rect.col1
        )
        angle = total[rect.row0 : rect.row1].angle()
        batch.add(self._phase, self.grids[group], 0, rect, angle, layer0=int(self._layer0[group]))

    def _flush(self) -> None:
        batch = UploadBatch()  # every group's rectangles off the device in one transfer
        for group, rects in self._dirty.take().items():
            base = int(self._layer0[group])
            combined = self._combined[group]
            if combined is None:
                frames = self.grids[group].level_widths[0]
                combined = combined_magnitude(
                    self.document, 2 * group, self.shown_channel, 0, frames
                )
                self._combined[group] = combined
                rects = [self.grids[group].full_rect()]
            else:
                for rect in rects:
                    combined[:, rect.col0 : rect.col1] = combined_magnitude(
                        self.document, 2 * group, self.shown_channel, rect.col0, rect.col1
                    )
            for level in range(len(self.grids[group].level_widths)):
                for rect in merge_rects(r.at_level(level) for r in rects):
                    cells = pooled_columns(combined, level, rect)
                    batch.add(self._magnitude, self.grids[group], level, rect, cells, layer0=base)
            if self._phase is not None:
                for rect in merge_rects(rects):
                    self._write_phase(batch, group, rect)
        batch.write(self.device.queue, self.stats, self._staging)

    # ------------------------------------------------------------------------------- drawing
    def _uniform_values(self, view, full_size, offset) -> dict:
        values = super()._uniform_values(view, full_size, offset)
        values.update(hz0=0.0, hz_step=1.0, col_shift=self.grid.column_shift)
        values["row_shift"], values["row_mask"] = self.grid.row_shift_and_mask
        return values

    def close(self) -> None:
        super().close()
        for buffer in (self._groups, self._edges):
            buffer.destroy()
