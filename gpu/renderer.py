"""The spectrogram renderer: tiled magnitude and phase textures, dirty uploads, one draw per frame.

``SpectrogramRenderer(device, document)`` uploads the shown channel of the block as it is needed:
the first frame writes only the columns of the one reduced level its view samples (a 10-minute file
seen whole: a sixteenth of the cells), and every later frame that needs nothing new streams in up
to :data:`STREAM_BYTES` of the columns still missing, coarsest level first, until all are there (the
window also streams them between frames, :meth:`SpectrogramRenderer.stream`, so that they arrive
when nothing is drawn); a view that needs missing columns gets them in its own frame. Each :meth:`mark_dirty` (the window calls it for every change
the session emits) only marks a rectangle dirty, and the next :meth:`prepare` brings the reduced
levels up to date over it and uploads its box at the level the view reads; its boxes at the other
levels follow between frames (:meth:`SpectrogramRenderer.stream`), or with the next frame that
uploads nothing else. A frame's writes go to the host in
one transfer (:mod:`spectropaint.gpu.upload_batch`); on a GPU, an edit's boxes at the other levels
come over in that transfer too, so that the step writing them between frames transfers nothing.
The textures hold one channel, the one the view shows: showing another channel uploads it again, and
the textures stay half (stereo) the size, which lets an hour of stereo fit the 2 GiB that a single
allocation may take on lavapipe.
Changing the view (zoom, pan, colormap, range, frequency scale, overlays) rewrites the uniform block
and nothing else (but missing columns of a newly sampled level). :meth:`render` draws into any texture view; :mod:`spectropaint.gpu.canvas` hooks it
to a rendercanvas canvas, :mod:`spectropaint.gpu.png_export` to PNG files.

An error the GPU reports (validation, out of memory, a lost device) leaves as
:class:`~spectropaint.gpu.errors.GPUFailedError`, whose message says whether creating the textures,
uploading or drawing failed and what to try.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np
import wgpu

from spectropaint.gpu.colormaps import colormap_index, colormap_tables
from spectropaint.gpu.errors import GPUUnavailableError, gpu_errors
from spectropaint.gpu.frame_pass import STORAGE_PICTURE, WORKGROUP, draw_frame, use_compute
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.levels import ReducedLevels
from spectropaint.gpu.tiles import (
    LEVEL_FACTOR,
    DirtyRects,
    MissingColumns,
    Rect,
    TileGrid,
    add_rect,
    level_widths,
)
from spectropaint.gpu.uniforms import VIEW_SIZE, pack_view
from spectropaint.gpu.upload_batch import HostCells, HostStaging, UploadBatch, UploadStats
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.wgsl import shader_source
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import FREQ_SCALES, warp
from spectropaint.transforms.regions import Region, Regions
from spectropaint.transforms.torch_device import one_thread

TARGET_FORMAT = "rgba8unorm"
"""Not ``-srgb``: colour tables hold display values already, and an sRGB target would re-encode."""
_DB_PER_OCTAVE = 20.0 * math.log10(2.0)
STREAM_BYTES = 2 * 2**20
"""Texture bytes of not yet uploaded columns that each frame streams in besides what it needs (and
that each :meth:`SpectrogramRenderer.stream` step between frames writes): a frame that only moves
the playhead then writes at most this much of them (it was 16 MiB), besides changed boxes of levels
the view does not read that are still waiting."""


def _array_texture(device: wgpu.GPUDevice, grid: TileGrid, label: str) -> wgpu.GPUTexture:
    return device.create_texture(
        label=label,
        size=(grid.tile_width, grid.tile_height, grid.n_layers),
        format="r32float",
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )


MASK_BINDING = 6
"""The selection mask's texture (bindings 4 and 5 are the bands renderer's buffers)."""
BINDINGS = {
    "uniform": {"buffer": {"type": "uniform"}},
    "storage": {"buffer": {"type": "read-only-storage"}},
    # r32float binds as unfilterable (no float32-filterable needed)
    "2d-array": {"texture": {"sample_type": "unfilterable-float", "view_dimension": "2d-array"}},
    "2d": {"texture": {"sample_type": "unfilterable-float", "view_dimension": "2d"}},
    "picture": STORAGE_PICTURE,
}


_TEXTURE_BINDINGS = ((0, "uniform"), (1, "2d-array"), (2, "2d-array"), (3, "2d"), (6, "2d"))


def _layout(device: wgpu.GPUDevice, bindings, visibility) -> wgpu.GPUBindGroupLayout:
    return device.create_bind_group_layout(
        entries=[
            {"binding": binding, "visibility": visibility, **BINDINGS[kind]}
            for binding, kind in bindings
        ]
    )


@functools.cache
def pipeline(
    device: wgpu.GPUDevice,
    target_format: str,
    *,
    entry_point: str = "fs_main",
    sources: tuple[str, ...] = ("spectrogram.wgsl", "overlay.wgsl"),
    bindings: tuple[tuple[int, str], ...] = _TEXTURE_BINDINGS,
) -> tuple[wgpu.GPUBindGroupLayout, wgpu.GPURenderPipeline]:
    """A bind group layout (explicit: ``(binding, kind of BINDINGS)``) and the render pipeline of
    ``entry_point`` in ``sources``, compiled once per device and target format."""
    layout = _layout(device, bindings, wgpu.ShaderStage.FRAGMENT)
    module = device.create_shader_module(label=entry_point, code=shader_source(*sources))
    render = device.create_render_pipeline(
        label=entry_point,
        layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
        vertex={"module": module, "entry_point": "vs_main"},
        primitive={"topology": "triangle-list"},
        fragment={
            "module": module,
            "entry_point": entry_point,
            "targets": [{"format": target_format}],
        },
    )
    return layout, render


@functools.cache
def compute_pipeline(
    device: wgpu.GPUDevice,
) -> tuple[wgpu.GPUBindGroupLayout, wgpu.GPUComputePipeline]:
    """The bind group layout (the render pipeline's and the picture, binding 7) and the compute
    pipeline of ``cs_main`` (:mod:`spectropaint.gpu.frame_pass`), compiled once per device."""
    layout = _layout(device, (*_TEXTURE_BINDINGS, (7, "picture")), wgpu.ShaderStage.COMPUTE)
    module = device.create_shader_module(
        label="cs_main", code=shader_source("spectrogram.wgsl", "overlay.wgsl")
    )
    compute = device.create_compute_pipeline(
        label="cs_main",
        layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
        compute={"module": module, "entry_point": "cs_main"},
    )
    return layout, compute


class SpectrogramRenderer:
    """Draws one block of a document; ``view`` is what it shows (replace it to zoom, pan, restyle).

    Parameters
    ----------
    device : wgpu.GPUDevice
    document
        A ``Document``, or anything with ``blocks[i].magnitude/.phase`` (torch ``[C, F, T]``),
        ``.band_hz``, ``.frame_seconds``, ``.hop``, and ``.sample_rate``.
    view : ViewSettings, optional
    block : int
        The coefficient block drawn.
    max_texture_dim : int, optional
        Tile size limit below the adapter's ``max_texture_dimension_2d`` (tests shrink it).
    reference_magnitude : float, optional
        The magnitude drawn as 0 dB; default the document's ``full_scale`` (1 without one).
    target_format : str
        Texture format of the views :meth:`render` draws into.
    """

    _packed_view: ViewSettings | None = None
    _packed_key: tuple | None = None
    """The view and target shape whose uniforms the buffer holds (:meth:`prepare`)."""

    def __init__(
        self,
        device: wgpu.GPUDevice,
        document,
        *,
        view: ViewSettings | None = None,
        block: int = 0,
        max_texture_dim: int | None = None,
        reference_magnitude: float | None = None,
        target_format: str = TARGET_FORMAT,
    ):
        self.device = device
        self.document = document
        self.block_index = block
        self.view = view or ViewSettings()
        self.target_format = target_format
        self.reference_magnitude = reference_magnitude or getattr(document, "full_scale", 1.0)
        data = document.blocks[block]
        self.geometry = BlockGeometry.from_block(data, document.sample_rate)
        n_channels, n_bins, n_frames = data.magnitude.shape
        max_dim = device.limits["max-texture-dimension-2d"]
        if max_texture_dim is not None:
            max_dim = min(max_dim, max_texture_dim)
        self.n_channels = n_channels
        self.shown_channel = min(self.view.channel, n_channels - 1)
        """The channel the textures hold."""
        self.grid = TileGrid.create(1, n_bins, level_widths(n_frames), max_dim=max_dim)
        self.phase_grid = TileGrid.create(1, n_bins, (n_frames,), max_dim=max_dim)
        layers = device.limits["max-texture-array-layers"]
        if self.grid.n_layers > layers:
            raise GPUUnavailableError(
                f"this document needs {self.grid.n_layers} texture tiles of "
                f"{self.grid.tile_width}x{self.grid.tile_height}; the GPU allows {layers}"
            )
        self.stats = UploadStats()
        self._phase: wgpu.GPUTexture | None = None
        with gpu_errors(
            f"creating the textures of a spectrogram of {n_bins} bins by {n_frames} frames"
        ):
            self._magnitude = _array_texture(device, self.grid, "magnitude tiles")
            self._placeholder = _array_texture(device, TileGrid(1, 1, (1,), 1, 1), "no phase")
            self._colormaps = self._colormap_texture()
            self._mask, self._mask_shown = self._mask_texture(np.zeros((1, 1), np.float32)), None
            self._uniforms = device.create_buffer(
                size=VIEW_SIZE, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
            )
            self._layout, self._pipeline = pipeline(device, target_format)
        self._bind_group: wgpu.GPUBindGroup | None = None
        self._compute_group: tuple[wgpu.GPUTexture, wgpu.GPUBindGroup] | None = None
        self.compute = use_compute(device)
        """Draw by compute pass (:mod:`~spectropaint.gpu.frame_pass`) where the target allows."""
        self._dirty = DirtyRects()
        self._deferred: dict[int, list[Rect]] = {}
        """Changed boxes of each level not written yet: a frame writes those of the level its view
        reads, and the others go between frames (:meth:`stream`) or with a frame that uploads
        nothing else."""
        self._fetched: dict[int, tuple[list[Rect], list[HostCells]]] = {}
        """Host copies of a level's deferred boxes, brought over by an earlier frame's transfer (a
        GPU document's), so that writing them between frames needs no transfer of its own: valid
        while that level's list in ``_deferred`` is the same object (a new edit makes a new one)."""
        self._missing = MissingColumns(self.grid.level_widths)
        self._levels: ReducedLevels | None = None
        """The shown channel's reduced levels, made as they are first needed."""
        self._staging = HostStaging()
        self._view_span: tuple[int, int, int] | None = None
        self.stream_bytes = STREAM_BYTES
        """Bytes of missing columns each frame streams in besides those it reads."""

    # -------------------------------------------------------------------------------- set-up
    def _colormap_texture(self) -> wgpu.GPUTexture:
        tables = np.stack(list(colormap_tables().values()))
        rgba = np.concatenate([tables, np.ones(tables.shape[:2] + (1,), np.float32)], axis=-1)
        texture = self.device.create_texture(
            label="colour tables",
            size=(rgba.shape[1], rgba.shape[0], 1),
            format="rgba32float",
            usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
        )
        self.device.queue.write_texture(
            {"texture": texture},
            np.ascontiguousarray(rgba, dtype=np.float32),
            {"bytes_per_row": rgba.shape[1] * 16, "rows_per_image": rgba.shape[0]},
            texture.size,
        )
        return texture

    def _mask_texture(self, weights: np.ndarray) -> wgpu.GPUTexture:
        rows, columns = weights.shape
        texture = self.device.create_texture(
            label="selection mask",
            size=(columns, rows, 1),
            format="r32float",
            usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
        )
        self.device.queue.write_texture(
            {"texture": texture},
            np.ascontiguousarray(weights, dtype=np.float32),
            {"bytes_per_row": 4 * columns, "rows_per_image": rows},
            texture.size,
        )
        return texture

    def _show_mask(self, mask) -> None:
        """Upload the selection mask of the view, when it is a new one."""
        if mask is None or mask is self._mask_shown:
            return
        self._mask.destroy()
        self._mask, self._mask_shown = self._mask_texture(mask.weights), mask
        self._bind_group = None

    def _entries(self) -> list[dict]:
        phase = self._phase or self._placeholder

        def array_view(texture: wgpu.GPUTexture) -> wgpu.GPUTextureView:
            return texture.create_view(dimension="2d-array")

        return [
            {"binding": 0, "resource": {"buffer": self._uniforms}},
            {"binding": 1, "resource": array_view(self._magnitude)},
            {"binding": 2, "resource": array_view(phase)},
            {"binding": 3, "resource": self._colormaps.create_view()},
            {"binding": MASK_BINDING, "resource": self._mask.create_view()},
        ]

    def _get_bind_group(self) -> wgpu.GPUBindGroup:
        if self._bind_group is None:
            self._bind_group = self.device.create_bind_group(
                layout=self._layout, entries=self._entries()
            )
            self._compute_group = None
        return self._bind_group

    def _get_compute_group(self, picture: wgpu.GPUTexture) -> wgpu.GPUBindGroup:
        self._get_bind_group()  # drops the compute group when the textures changed
        if self._compute_group is None or self._compute_group[0] is not picture:
            layout, _ = compute_pipeline(self.device)
            entries = [*self._entries(), {"binding": 7, "resource": picture.create_view()}]
            group = self.device.create_bind_group(layout=layout, entries=entries)
            self._compute_group = (picture, group)
        return self._compute_group[1]

    # ------------------------------------------------------------------------------- uploads
    @property
    def _block(self):
        return self.document.blocks[self.block_index]

    def mark_dirty(self, region: Region | Regions) -> None:
        """``region`` of the document changed (a box, or boxes of several blocks): upload what of
        it the textures hold before the next frame."""
        for part in region.parts:
            self._mark_box(part)

    def _mark_box(self, region: Region) -> None:
        if region.block != self.block_index:
            return
        region = region.clipped(self.geometry.n_bins, self.geometry.n_frames)
        if region.empty:
            return
        if self.shown_channel in region.channels:
            self._dirty.add(0, Rect(region.bin0, region.bin1, region.frame0, region.frame1))

    def _show_channel(self, channel: int) -> None:
        """Make the textures hold ``channel``: everything uploads again at the next flush."""
        if channel != self.shown_channel:
            self.shown_channel = channel
            self._dirty.take()
            self._deferred.clear()
            self._fetched.clear()
            self._missing.reset()
            self._levels = None
            if self._phase is not None:  # made again, of the new channel, when the phase shows
                self._phase.destroy()
                self._phase, self._bind_group = None, None

    @property
    def streaming(self) -> bool:
        """Columns of some level are not uploaded yet, or changed boxes of a level the view does
        not read (frames keep streaming them in)."""
        return self._missing.pending or bool(self._deferred)

    def stream(self, budget_bytes: int | None = None) -> None:
        """Upload missing columns now: up to ``budget_bytes`` of them, or all (None), and the
        changed boxes not written yet (those of every level, unless an edit came since the last
        frame: then those of the level the view reads); counted in :attr:`stats` as a frame of its
        own."""
        self.stats.begin_frame()
        with gpu_errors("uploading the spectrogram to the GPU"):
            self._upload(budget_bytes)

    def _flush(self) -> None:
        self._upload(self.stream_bytes)

    def _upload(self, stream_bytes: int | None) -> None:
        """Write, in one batch: the dirty boxes at the level the view reads (at every level when
        the frame writes nothing else, or between frames), the columns the view reads that are
        still missing, and, when the frame writes neither, up to ``stream_bytes`` of the other
        missing columns (None: all of them, always). On a GPU the boxes left for later (no more
        than ``self.stream_bytes`` of them) come to the host in the same transfer, and the step
        that writes them needs none."""
        batch = UploadBatch()
        rects = self._dirty.take().get(0, [])
        magnitude = self._block.magnitude[self.shown_channel]
        if self._levels is None:
            self._levels = ReducedLevels(magnitude, self.grid.level_widths)
        self._levels.rebase(magnitude)
        # On the CPU an edit's level updates run on one torch thread: they are a few small
        # operations, and two threads waiting on each other at each one made a 256 x 256 edit cost
        # 8 to 16 ms instead of under 1 on a 2-core machine shared with other work
        # (``bench_render.py``). Building a whole level keeps every thread.
        small = bool(rects) and magnitude.device.type == "cpu"
        with one_thread() if small else contextlib.nullcontext():
            for rect in rects:
                for level, box in self._levels.update(rect):
                    self._deferred[level] = add_rect(self._deferred.get(level, []), box)
        spans = []
        if self._view_span is not None:
            level, col0, col1 = self._view_span
            spans = [(level, *span) for span in self._missing.take(level, col0, col1)]
        # the boxes of the level the view reads now; those of the others too in a frame that
        # changes nothing it shows, and between frames (stream)
        quiet = stream_bytes is None or not (rects or spans) or self._view_span is None
        ready = {
            level: cells
            for level, (boxes, cells) in self._fetched.items()
            if self._deferred.get(level) is boxes
        }
        now = [level for level in self._deferred if quiet or level == self._view_span[0]]
        self._fetched = {
            level: (self._deferred[level], cells)
            for level, cells in ready.items()
            if level not in now
        }
        for level in now:
            boxes = self._deferred.pop(level)
            for cells in ready.get(level, ()):
                batch.add_host(cells)
            for box in boxes if level not in ready else ():
                cells = self._levels.columns(level, box)
                batch.add(self._magnitude, self.grid, level, box, cells)
        # on a GPU, the boxes left for later come to the host with this frame's transfer (when
        # they are few: a large edit's wait for the steps between frames, as the frame would)
        later = [
            (level, box)
            for level, boxes in self._deferred.items()
            if level not in ready
            for box in boxes
        ]
        if UploadBatch.transfers(magnitude.device) and (
            sum(4 * box.size for _, box in later) <= self.stream_bytes
        ):
            for level, box in later:
                cells = self._levels.columns(level, box)
                batch.add(self._magnitude, self.grid, level, box, cells, keep=True)
        column_bytes = 4 * self.geometry.n_bins
        if stream_bytes is None:
            spans += self._missing.take_next(self._missing.columns())
        elif not (spans or rects):  # a frame that uploads what it reads or an edit streams nothing
            spans += self._missing.take_next(stream_bytes // column_bytes)
        for level, col0, col1 in spans:
            rect = Rect(0, self.geometry.n_bins, col0, col1)
            batch.add(self._magnitude, self.grid, level, rect, self._levels.columns(level, rect))
        if self._phase is not None:
            phase = self._block.phase[self.shown_channel]
            for rect in rects:
                cells = phase[rect.row0 : rect.row1, rect.col0 : rect.col1]
                batch.add(self._phase, self.phase_grid, 0, rect, cells)
        for cells in batch.write(self.device.queue, self.stats, self._staging):
            boxes = self._deferred[cells.level]
            self._fetched.setdefault(cells.level, (boxes, []))[1].append(cells)

    def _ensure_phase(self) -> None:
        if self._phase is not None:
            return
        self._phase = _array_texture(self.device, self.phase_grid, "phase tiles")
        self._bind_group = None
        batch = UploadBatch()
        batch.add(
            self._phase,
            self.phase_grid,
            0,
            self.phase_grid.full_rect(),
            self._block.phase[self.shown_channel],
        )
        batch.write(self.device.queue, self.stats, self._staging)

    def view_level(self, view: ViewSettings, full_width: int) -> int:
        """The reduced level a ``full_width`` pixel wide picture of ``view`` samples: the coarsest
        whose columns are no wider than a pixel's footprint (the shader reads only this one)."""
        t0, t1, _, _ = view.visible(self.geometry)
        frames_per_pixel = (t1 - t0) / max(1, full_width)
        level, scale = 0, 1
        while level + 1 < len(self.grid.level_widths) and frames_per_pixel >= scale * LEVEL_FACTOR:
            level, scale = level + 1, scale * LEVEL_FACTOR
        return level

    # ------------------------------------------------------------------------------- drawing
    def _uniform_values(
        self, view: ViewSettings, full_size: tuple[int, int], offset: tuple[int, int]
    ) -> dict:
        geometry, grid = self.geometry, self.grid
        if view.channel >= self.n_channels:
            raise SettingsError(
                f"channel {view.channel} asked for; the document has {self.n_channels}"
            )
        t0, t1, low_hz, high_hz = view.visible(geometry)
        overlays = view.overlays
        flags = 0
        playhead, selection = 0.0, (0.0, 0.0, 0.0, 0.0)
        mask_box = (0.0, 1.0, 0.0, 1.0)
        if overlays.mask is not None:
            flags |= 8
            m = overlays.mask
            mask_box = (float(m.frame0), float(m.frame_step), float(m.bin0), float(m.bin_step))
        if overlays.playhead_seconds is not None:
            flags |= 1
            playhead = float(geometry.frame_position(overlays.playhead_seconds))
        if overlays.selection is not None:
            flags |= 4
            s = overlays.selection
            start, stop = geometry.frame_position([s.start_seconds, s.stop_seconds])
            selection = (float(start), float(stop), s.low_hz, s.high_hz)
        widths = list(grid.level_widths) + [0] * (16 - len(grid.level_widths))
        offsets = list(grid.level_offsets) + [0] * (16 - len(grid.level_widths))
        reference_db = 20.0 * math.log10(self.reference_magnitude)
        return {
            "full_size": full_size,
            "offset": offset,
            "t0": t0,
            "t1": t1,
            "w_lo": float(warp(low_hz, view.freq_scale)),
            "w_hi": float(warp(high_hz, view.freq_scale)),
            "hz0": geometry.low_edge_hz,
            "hz_step": geometry.step_hz,
            "scale": FREQ_SCALES.index(view.freq_scale),
            "mode": 1 if view.mode == "phase" else 0,
            "db_a": _DB_PER_OCTAVE / view.range_db,
            "db_b": -(view.resolved_floor_db + reference_db) / view.range_db,
            "gamma": view.gamma,
            "colormap": colormap_index(view.colormap),
            "n_frames": geometry.n_frames,
            "n_bins": geometry.n_bins,
            "channel": 0,  # the textures hold the shown channel only
            "n_levels": len(grid.level_widths),
            "level": self.view_level(view, full_size[0]),
            "col_shift": grid.column_shift,
            "row_shift": grid.row_shift_and_mask[0],
            "row_mask": grid.row_shift_and_mask[1],
            "mag_cols": grid.tile_cols,
            "tile_rows": grid.tile_rows,
            "phase_col_shift": self.phase_grid.column_shift,
            "phase_cols": self.phase_grid.tile_cols,
            "phase_colormap": colormap_index(view.phase_colormap, cyclic=True),
            "overlay_flags": flags,
            "playhead": playhead,
            "level_offset": offsets,
            "level_width": widths,
            "selection": selection,
            "mask_box": mask_box,
        }

    def prepare(
        self,
        width: int,
        height: int,
        *,
        view: ViewSettings | None = None,
        full_size: tuple[int, int] | None = None,
        offset: tuple[int, int] = (0, 0),
        clip: tuple[int, int, int, int] | None = None,
    ) -> None:
        """Upload what changed and write the uniforms for a ``width`` x ``height`` target.

        ``full_size`` and ``offset`` make the target one piece of a larger picture: pixel (x, y) of
        the target is pixel (x + offset[0], y + offset[1]) of a ``full_size`` picture of ``view``.
        ``clip`` (x, y, width, height; default the whole target) is the part a compute pass draws.
        """
        view = view or self.view
        self.stats.begin_frame()
        # the same view drawn into the same target (each frame of a stroke) writes no uniforms
        shape = (full_size or (width, height), offset, clip or (0, 0, width, height))
        key = (*shape, self.reference_magnitude)
        packed = None
        if view is not self._packed_view or key != self._packed_key:
            values = self._uniform_values(view, shape[0], offset)
            values["clip"] = shape[2]
            level, scale = values["level"], LEVEL_FACTOR ** values["level"]
            self._view_span = (
                level,
                max(0, math.floor(values["t0"] / scale) - 1),
                min(self.grid.level_widths[level], math.ceil(values["t1"] / scale) + 1),
            )
            packed = pack_view(values)
        with gpu_errors("uploading the spectrogram to the GPU"):
            self._show_channel(view.channel)
            if view.mode == "phase":
                self._ensure_phase()
            self._show_mask(view.overlays.mask)
            self._flush()
            if packed is not None:
                self.device.queue.write_buffer(self._uniforms, 0, packed)
                self._packed_view, self._packed_key = view, key

    def encode(self, render_pass: wgpu.GPURenderPassEncoder) -> None:
        """Record the draw into a pass whose target has ``target_format`` (after :meth:`prepare`)."""
        render_pass.set_pipeline(self._pipeline)
        render_pass.set_bind_group(0, self._get_bind_group())
        render_pass.draw(3)

    def dispatch(
        self,
        compute_pass: wgpu.GPUComputePassEncoder,
        picture: wgpu.GPUTexture,
        clip: tuple[int, int, int, int],
    ) -> None:
        """Record the compute draw of ``clip`` into ``picture`` (after :meth:`prepare` with that
        clip)."""
        _, compute = compute_pipeline(self.device)
        compute_pass.set_pipeline(compute)
        compute_pass.set_bind_group(0, self._get_compute_group(picture))
        compute_pass.dispatch_workgroups(-(-clip[2] // WORKGROUP[0]), -(-clip[3] // WORKGROUP[1]))

    def render(
        self,
        target: wgpu.GPUTextureView,
        width: int,
        height: int,
        *,
        view: ViewSettings | None = None,
        full_size: tuple[int, int] | None = None,
        offset: tuple[int, int] = (0, 0),
    ) -> None:
        """:meth:`prepare`, then draw into ``target`` and submit."""
        self.prepare(width, height, view=view, full_size=full_size, offset=offset)
        draw_frame(self.device, target, [(self, (0, 0, width, height))], keep=False)

    def close(self) -> None:
        """Free the textures."""
        for texture in (
            self._magnitude,
            self._phase,
            self._placeholder,
            self._colormaps,
            self._mask,
        ):
            if texture is not None:
                texture.destroy()
        self._uniforms.destroy()
