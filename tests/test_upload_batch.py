"""A frame's uploads in one batch: the textures hold what writing each rectangle alone gives.

The path a CUDA document takes (every rectangle gathered by one ``torch.cat`` into the staging
buffer, one transfer to the host) runs here on CPU tensors by making ``UploadBatch.transfers`` say
yes for every device: the gathering and the writes by offset and pitch are the same code.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import wgpu
from test_render_reference import FakeDocument, render_offscreen, sample_magnitudes

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.levels import ReducedLevels
from spectropaint.gpu.renderer import STREAM_BYTES, SpectrogramRenderer
from spectropaint.gpu.tiles import Rect, TileGrid, level_widths
from spectropaint.gpu.upload_batch import HostStaging, UploadBatch, UploadStats
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.regions import Region

pytestmark = pytest.mark.gpu

N_BINS, N_FRAMES, TILE = 40, 700, 128
BOXES = (  # (rows, level-0 columns): across tile borders, one row, every bin
    Rect(3, 20, 100, 300),
    Rect(0, N_BINS, 600, 700),
    Rect(10, 11, 0, 700),
    Rect(25, 31, 126, 131),
)


@pytest.fixture(params=["in place", "gathered", "cuda"])
def path(request, monkeypatch) -> str:
    """Both ways cells reach the host: read in place (the CPU's) and gathered (CUDA's, on the CPU
    and on CUDA where there is one); the torch device the cells are on."""
    if request.param == "gathered":
        monkeypatch.setattr(UploadBatch, "transfers", staticmethod(lambda device: True))
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    return "cuda" if request.param == "cuda" else "cpu"


def make_texture(device: wgpu.GPUDevice, grid: TileGrid) -> wgpu.GPUTexture:
    return device.create_texture(
        size=(grid.tile_width, grid.tile_height, grid.n_layers),
        format="r32float",
        usage=wgpu.TextureUsage.TEXTURE_BINDING
        | wgpu.TextureUsage.COPY_DST
        | wgpu.TextureUsage.COPY_SRC,
    )


def texture_cells(device: wgpu.GPUDevice, texture: wgpu.GPUTexture) -> np.ndarray:
    """Every texel, ``[layers, height, width]``."""
    width, height, layers = texture.size
    data = device.queue.read_texture(
        {"texture": texture},
        {"bytes_per_row": 4 * width, "rows_per_image": height},
        (width, height, layers),
    )
    return np.frombuffer(data, np.float32).reshape(layers, height, width).copy()


def placed(grid: TileGrid, level: int, rect: Rect, cells: np.ndarray, into: np.ndarray) -> None:
    """Put ``cells`` at ``rect`` of ``level`` in ``into`` ``[layers, height, width]`` texel by
    texel, from the layout's definition (levels end to end on one column axis cut into tiles)."""
    for row in range(rect.row0, rect.row1):
        tile_row, y = divmod(row, grid.tile_height)
        for col in range(rect.col0, rect.col1):
            tile_col, x = divmod(grid.level_offsets[level] + col, grid.tile_width)
            into[grid.layer(0, tile_row, tile_col), y, x] = cells[row - rect.row0, col - rect.col0]


def level_boxes(levels: ReducedLevels) -> list[tuple[int, Rect, torch.Tensor]]:
    """Each box at every level it reaches, with its cells (views of the levels; every third one
    as float64, which is written as float32)."""
    found = []
    for box in BOXES:
        for level in range(len(levels.level_widths)):
            rect = box.at_level(level)
            cells = levels.columns(level, rect)
            found.append((level, rect, cells.double() if len(found) % 3 == 2 else cells))
    return found


def test_one_batch_of_boxes_at_every_level_writes_what_each_box_written_alone_writes(path):
    device = shared_device()
    magnitude = torch.from_numpy(sample_magnitudes(1, N_BINS, N_FRAMES, seed=4)[0]).to(path)
    levels = ReducedLevels(magnitude, level_widths(N_FRAMES))
    grid = TileGrid.create(1, N_BINS, levels.level_widths, max_dim=TILE)
    together, alone = make_texture(device, grid), make_texture(device, grid)
    staging, stats = HostStaging(), UploadStats()
    try:
        boxes = level_boxes(levels)
        batch = UploadBatch()
        for level, rect, cells in boxes:
            batch.add(together, grid, level, rect, cells)
        assert batch.write(device.queue, stats, staging) == []
        assert stats.frame_bytes == sum(4 * rect.size for _, rect, _ in boxes)
        expected = np.zeros((grid.n_layers, grid.tile_height, grid.tile_width), np.float32)
        for level, rect, cells in boxes:
            one = UploadBatch()
            one.add(alone, grid, level, rect, cells)
            one.write(device.queue, stats, staging)
            placed(grid, level, rect, cells.float().cpu().numpy(), expected)
        written = texture_cells(device, together)
        assert np.array_equal(written, texture_cells(device, alone))
        assert np.array_equal(written, expected)
        assert np.count_nonzero(written) > 0.9 * sum(rect.size for _, rect, _ in boxes)
    finally:
        together.destroy()
        alone.destroy()


def test_kept_cells_are_written_later_as_they_were_when_the_batch_took_them(path):
    """A kept rectangle is not written by its batch, and keeps its values though the staging
    buffer is overwritten by the next batch and the level changes meanwhile."""
    device = shared_device()
    magnitude = torch.from_numpy(sample_magnitudes(1, N_BINS, N_FRAMES, seed=5)[0]).to(path)
    levels = ReducedLevels(magnitude, level_widths(N_FRAMES))
    grid = TileGrid.create(1, N_BINS, levels.level_widths, max_dim=TILE)
    texture = make_texture(device, grid)
    staging, stats = HostStaging(), UploadStats()
    try:
        now, later = Rect(0, N_BINS, 0, 50), Rect(5, 30, 120, 140)
        batch = UploadBatch()
        batch.add(texture, grid, 0, later, levels.columns(0, later), keep=True)
        batch.add(texture, grid, 1, now, levels.columns(1, now))
        kept = batch.write(device.queue, stats, staging)
        assert [(cells.level, cells.rect) for cells in kept] == [(0, later)]
        assert stats.frame_bytes == 4 * now.size
        taken = levels.columns(0, later).cpu().numpy().copy()
        expected = np.zeros((grid.n_layers, grid.tile_height, grid.tile_width), np.float32)
        placed(grid, 1, now, levels.columns(1, now).cpu().numpy(), expected)
        assert np.array_equal(texture_cells(device, texture), expected)

        magnitude[later.row0 : later.row1, later.col0 : later.col1] = 7.0
        other = UploadBatch()  # the next transfer reuses the staging buffer from its start
        wide = Rect(0, N_BINS, 300, 340)
        other.add(texture, grid, 0, wide, levels.columns(0, wide))
        other.write(device.queue, stats, staging)
        placed(grid, 0, wide, levels.columns(0, wide).cpu().numpy(), expected)
        last = UploadBatch()
        last.add_host(kept[0])
        last.write(device.queue, stats, staging)
        placed(grid, 0, later, taken, expected)
        assert np.array_equal(texture_cells(device, texture), expected)
        assert not np.any(taken == 7.0)
    finally:
        texture.destroy()


def pictures(renderer: SpectrogramRenderer) -> list[np.ndarray]:
    """The whole document drawn at a width that reads each level in turn (one cell a pixel at
    level 0), with ``renderer.view``'s settings otherwise."""
    found = []
    for level, width in enumerate((N_FRAMES, 170, 40, 10)):
        assert renderer.view_level(ViewSettings(), width) == level
        found.append(render_offscreen(renderer, width, N_BINS, ViewSettings()))
    return found


@pytest.fixture
def document(path):
    document = FakeDocument(sample_magnitudes(2, N_BINS, N_FRAMES, seed=6))
    block = document.blocks[0]
    block.magnitude, block.phase = block.magnitude.to(path), block.phase.to(path)
    return document


def test_edits_fetched_with_their_frame_and_written_between_frames_match_a_fresh_upload(
    path, document
):
    """On a GPU the boxes of the levels the view does not read come to the host with the frame's
    transfer and are written between frames from there; edits in between (the same cells again,
    a zoom onto another level) leave the textures as a full upload of the document makes them."""
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=TILE)
    document.changed.connect(renderer.mark_dirty)
    whole = ViewSettings()
    zoomed = ViewSettings(time_range=(100.0, 300.0))
    rng = np.random.default_rng(7)
    try:
        render_offscreen(renderer, 40, 30, whole)
        renderer.stream()
        for frames, view, again, budget in (
            ((100, 300), whole, False, STREAM_BYTES),
            ((120, 180), whole, True, STREAM_BYTES),  # edited again before the step between
            ((250, 420), zoomed, False, STREAM_BYTES),  # the next frame reads level 0
            ((0, 700), whole, True, STREAM_BYTES),
            ((0, 700), whole, False, 4 * 30 * 700),  # more than a frame streams: not fetched
        ):
            renderer.stream_bytes = budget
            region = Region(3, 33, *frames, (0,))
            shape = (1, 30, frames[1] - frames[0])
            document.write(region, rng.uniform(0, 2, shape).astype(np.float32))
            render_offscreen(renderer, 40, 30, whole)
            level = renderer._view_span[0]
            box = Rect(3, 33, *frames).at_level(level)
            assert renderer.stats.frame_bytes == 4 * box.size
            fetched = sum(
                cells.rect.size for _, kept in renderer._fetched.values() for cells in kept
            )
            others = sum(Rect(3, 33, *frames).at_level(other).size for other in range(4))
            gathering = UploadBatch.transfers(document.blocks[0].magnitude.device)
            assert fetched == (others - box.size if gathering and budget == STREAM_BYTES else 0)
            if again:
                document.write(region, rng.uniform(0, 2, shape).astype(np.float32))
            render_offscreen(renderer, 200, 30, view)
            renderer.stream(0)
            assert not renderer.streaming
            fresh = SpectrogramRenderer(shared_device(), document, max_texture_dim=TILE)
            try:
                fresh.stream()
                for mine, theirs in zip(pictures(renderer), pictures(fresh), strict=True):
                    assert np.array_equal(mine, theirs)
            finally:
                fresh.close()
    finally:
        document.changed.disconnect(renderer.mark_dirty)
        renderer.close()
