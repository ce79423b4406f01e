"""What an edit's upload reuses instead of doing again, each checked against the work done again.

- the boxes a level update wrote are read back as views of their levels (no slicing), and hold
  the level's current cells;
- a batch's kept rectangles leave the staging buffer in one copy, whatever their order among the
  rectangles written at once of the same rows;
- the uniforms are packed and written only when the view, the target or the reference level
  changed: a renderer drawing the same view object into other targets draws what a fresh one does.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import wgpu
from test_render_reference import FakeDocument, sample_magnitudes
from test_upload_batch import make_texture, path, placed, texture_cells  # noqa: F401 (fixture)

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.levels import ReducedLevels, pooled_columns
from spectropaint.gpu.renderer import TARGET_FORMAT, SpectrogramRenderer
from spectropaint.gpu.tiles import Rect, TileGrid, level_widths
from spectropaint.gpu.upload_batch import HostStaging, UploadBatch, UploadStats
from spectropaint.gpu.view import ViewSettings

N_BINS, N_FRAMES = 24, 1500


def test_boxes_an_update_wrote_read_back_as_views_holding_the_levels_current_cells():
    rng = np.random.default_rng(11)
    magnitude = torch.from_numpy(rng.uniform(0, 1, (N_BINS, N_FRAMES)).astype(np.float32))
    widths = level_widths(N_FRAMES)
    levels = ReducedLevels(magnitude, widths)
    whole = [levels.columns(level, Rect(0, N_BINS, 0, width)) for level, width in enumerate(widths)]
    first, second = Rect(2, 9, 300, 450), Rect(5, 20, 1400, 1500)
    for rect in (first, second):
        magnitude[rect.row0 : rect.row1, rect.col0 : rect.col1] *= 3.0
        for level, box in levels.update(rect):
            cells = levels.columns(level, box)
            assert torch.equal(cells, pooled_columns(magnitude, level, box))
            # a view of the level itself: it shares the level's memory
            assert cells.untyped_storage().data_ptr() == whole[level].untyped_storage().data_ptr()
    # the first edit's boxes, read after the second update, hold the cells as they are now
    magnitude[first.row0 : first.row1, first.col0 : first.col1] = 0.0
    levels.update(first)
    levels.update(second)
    for level in range(len(widths)):
        box = first.at_level(level)
        assert torch.equal(levels.columns(level, box), pooled_columns(magnitude, level, box))


def test_kept_rectangles_among_written_ones_of_the_same_rows_leave_with_their_own_values(path):  # noqa: F811
    """Boxes of one set of rows at every level, kept and written alternately (a written one
    first): the written ones reach the texture at once, the kept ones later with the values they
    had when the batch took them, though the staging buffer and the levels change meanwhile."""
    device = shared_device()
    magnitude = torch.from_numpy(sample_magnitudes(1, N_BINS, N_FRAMES, seed=12)[0]).to(path)
    levels = ReducedLevels(magnitude, level_widths(N_FRAMES))
    grid = TileGrid.create(1, N_BINS, levels.level_widths, max_dim=256)
    texture = make_texture(device, grid)
    staging, stats = HostStaging(), UploadStats()
    try:
        box = Rect(4, 19, 200, 900)
        boxes = [(level, box.at_level(level)) for level in range(len(levels.level_widths))]
        keep = [level % 2 == 1 for level, _ in boxes]
        batch = UploadBatch()
        for (level, rect), kept in zip(boxes, keep, strict=True):
            batch.add(texture, grid, level, rect, levels.columns(level, rect), keep=kept)
        taken = {
            level: levels.columns(level, rect).cpu().numpy().copy()
            for (level, rect), kept in zip(boxes, keep, strict=True)
        }
        held = batch.write(device.queue, stats, staging)
        assert [(cells.level, cells.rect) for cells in held] == [
            b for b, kept in zip(boxes, keep, strict=True) if kept
        ]
        expected = np.zeros((grid.n_layers, grid.tile_height, grid.tile_width), np.float32)
        for (level, rect), kept in zip(boxes, keep, strict=True):
            if not kept:
                placed(grid, level, rect, taken[level], expected)
        assert np.array_equal(texture_cells(device, texture), expected)

        magnitude[:, 200:900] = 9.0  # the levels change, and another transfer reuses the staging
        for level, rect in levels.update(Rect(0, N_BINS, 200, 900)):
            other = UploadBatch()
            other.add(texture, grid, level, rect, levels.columns(level, rect))
            other.write(device.queue, stats, staging)
            placed(grid, level, rect, levels.columns(level, rect).cpu().numpy(), expected)
        later = UploadBatch()
        for cells in held:
            later.add_host(cells)
            placed(grid, cells.level, cells.rect, taken[cells.level], expected)
        later.write(device.queue, stats, staging)
        assert np.array_equal(texture_cells(device, texture), expected)
        assert not any(np.any(taken[cells.level] == 9.0) for cells in held)
    finally:
        texture.destroy()


def draw(renderer, width: int, height: int, view: ViewSettings, **where) -> np.ndarray:
    """``renderer.render`` into a texture of its own (``where``: ``full_size``, ``offset``);
    uint8 RGBA ``[height, width, 4]``."""
    device = renderer.device
    texture = device.create_texture(
        size=(width, height, 1),
        format=TARGET_FORMAT,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    try:
        renderer.render(texture.create_view(), width, height, view=view, **where)
        data = device.queue.read_texture(
            {"texture": texture}, {"bytes_per_row": 4 * width}, (width, height, 1)
        )
        return np.frombuffer(data, np.uint8).reshape(height, width, 4).copy()
    finally:
        texture.destroy()


@pytest.fixture
def document():
    return FakeDocument(sample_magnitudes(1, N_BINS, N_FRAMES, seed=13))


def test_one_view_drawn_into_other_targets_draws_what_a_fresh_renderer_draws(document):
    view = ViewSettings(colormap="inferno", time_range=(100.0, 700.0))
    kept = SpectrogramRenderer(shared_device(), document, max_texture_dim=256)
    full_scale = kept.reference_magnitude
    try:
        targets = [
            ((40, 30), {}),
            ((40, 30), {}),  # the same again: no uniforms written
            ((20, 30), {"full_size": (40, 30), "offset": (20, 0)}),  # the right half
            ((20, 30), {"full_size": (40, 30), "offset": (0, 0)}),
            ((60, 24), {}),  # another level read
        ]
        pictures = [draw(kept, *size, view, **where) for size, where in targets]
        kept.reference_magnitude *= 4.0  # 12 dB quieter, same view and target
        darker = draw(kept, 40, 30, view)
        for (size, where), picture in zip(targets, pictures, strict=True):
            fresh = SpectrogramRenderer(shared_device(), document, max_texture_dim=256)
            try:
                assert np.array_equal(picture, draw(fresh, *size, view, **where))
            finally:
                fresh.close()
        assert np.array_equal(np.concatenate([pictures[3], pictures[2]], axis=1), pictures[0])
        fresh = SpectrogramRenderer(
            shared_device(), document, max_texture_dim=256, reference_magnitude=4.0 * full_scale
        )
        try:
            assert np.array_equal(darker, draw(fresh, 40, 30, view))
            assert not np.array_equal(darker, pictures[0])
        finally:
            fresh.close()
    finally:
        kept.close()
