"""Tile layout, reduced levels and dirty-rectangle bookkeeping, with no GPU."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from spectropaint.gpu.levels import ReducedLevels, pooled_columns
from spectropaint.gpu.tiles import (
    DirtyRects,
    MissingColumns,
    Rect,
    TileGrid,
    level_widths,
    merge_rects,
)


def cells(rect: Rect) -> set[tuple[int, int]]:
    return set(itertools.product(range(rect.row0, rect.row1), range(rect.col0, rect.col1)))


def test_levels_shrink_by_four_until_sixteen_columns_or_fewer():
    assert level_widths(51680) == (51680, 12920, 3230, 808, 202, 51, 13)
    assert level_widths(16) == (16,)
    assert level_widths(17) == (17, 5)


@pytest.mark.parametrize("seed", range(5))
def test_merged_rectangles_cover_every_input_cell_and_never_overlap(seed):
    rng = np.random.default_rng(seed)
    rects = []
    for _ in range(12):
        row0, col0 = rng.integers(0, 40, 2)
        rects.append(
            Rect(
                int(row0), int(row0 + rng.integers(1, 8)), int(col0), int(col0 + rng.integers(1, 8))
            )
        )
    merged = merge_rects(rects)
    covered = [cells(rect) for rect in merged]
    assert set().union(*(cells(rect) for rect in rects)) <= set().union(*covered)
    for a, b in itertools.combinations(merged, 2):
        assert not a.touches(b)
    assert sum(len(c) for c in covered) == len(set().union(*covered))


def test_dirty_rects_merge_per_channel_and_empty_on_take():
    dirty = DirtyRects()
    dirty.add(0, Rect(0, 4, 0, 4))
    dirty.add(0, Rect(2, 6, 2, 6))
    dirty.add(1, Rect(0, 4, 0, 4))
    dirty.add(0, Rect(10, 12, 10, 12))
    taken = dirty.take()
    assert sorted(taken[0]) == [Rect(0, 6, 0, 6), Rect(10, 12, 10, 12)]
    assert taken[1] == [Rect(0, 4, 0, 4)]
    assert dirty.take() == {}


def test_a_rectangle_at_a_reduced_level_covers_every_column_holding_its_frames():
    assert Rect(3, 5, 17, 18).at_level(1) == Rect(3, 5, 4, 5)
    assert Rect(3, 5, 15, 17).at_level(2) == Rect(3, 5, 0, 2)
    assert Rect(0, 1, 0, 64).at_level(3) == Rect(0, 1, 0, 1)


@pytest.mark.parametrize(
    ("max_dim", "level", "rect"),
    [
        (7, 0, Rect(3, 20, 40, 90)),
        (16, 0, Rect(0, 20, 0, 61)),
        (64, 0, Rect(5, 6, 60, 70)),
        (7, 1, Rect(2, 19, 3, 23)),
        (16, 2, Rect(0, 20, 0, 6)),
    ],
)
def test_pieces_put_every_cell_where_the_shaders_layer_formula_reads_it(max_dim, level, rect):
    n_channels, n_bins = 2, 20
    grid = TileGrid.create(n_channels, n_bins, (90, 23, 6), max_dim=max_dim)
    assert grid.tile_width <= max_dim and grid.tile_height <= max_dim
    textures = np.full((grid.n_layers, grid.tile_height, grid.tile_width), -1.0)
    source = np.arange(rect.size, dtype=float).reshape(rect.row1 - rect.row0, rect.col1 - rect.col0)
    for piece in grid.pieces(1, level, rect):
        (x, y, layer), (width, height, _), (row, col) = piece
        assert x + width <= grid.tile_width and y + height <= grid.tile_height
        assert (
            textures[layer, y : y + height, x : x + width] == -1
        ).all()  # each cell written once
        textures[layer, y : y + height, x : x + width] = source[
            row : row + height, col : col + width
        ]
    offsets = (0, 90, 113)
    for bin_, column in itertools.product(range(rect.row0, rect.row1), range(rect.col0, rect.col1)):
        virtual = offsets[level] + column
        layer = (
            1 * grid.tile_rows + bin_ // grid.tile_height
        ) * grid.tile_cols + virtual // grid.tile_width
        value = textures[layer, bin_ % grid.tile_height, virtual % grid.tile_width]
        assert value == source[bin_ - rect.row0, column - rect.col0]
    assert (textures >= 0).sum() == rect.size


def test_pieces_of_a_reduced_level_start_after_the_levels_before_it():
    grid = TileGrid.create(1, 4, (90, 23, 6), max_dim=32)
    (piece,) = grid.pieces(0, 2, Rect(0, 4, 0, 6))
    assert piece.origin == ((90 + 23) % 32, 0, (90 + 23) // 32)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_pooled_columns_are_the_maximum_over_each_columns_frames(level):
    rng = np.random.default_rng(level)
    magnitude = torch.from_numpy(rng.random((6, 203)).astype(np.float32))
    scale = 4**level
    n_columns = -(-203 // scale)
    rect = Rect(1, 5, max(0, n_columns - 7), n_columns)  # includes the short last column
    pooled = pooled_columns(magnitude, level, rect).numpy()
    for j, column in enumerate(range(rect.col0, rect.col1)):
        frames = magnitude[1:5, column * scale : min(203, (column + 1) * scale)].numpy()
        np.testing.assert_array_equal(pooled[:, j], frames.max(axis=1))


def test_tiles_are_powers_of_two_wide_and_a_single_row_is_exactly_the_bins_high():
    long = TileGrid.create(2, 1025, level_widths(51680), max_dim=16384)
    assert (long.tile_width, long.tile_height, long.column_shift) == (16384, 1025, 14)
    assert long.tile_rows == 1 and long.row_shift_and_mask == (31, 0xFFFFFFFF)
    assert long.tile_cols == -(-sum(level_widths(51680)) // 16384)
    short = TileGrid.create(1, 1025, (100,), max_dim=1000)
    assert (short.tile_width, short.tile_height, short.tile_rows) == (128, 512, 3)
    assert short.row_shift_and_mask == (9, 511)
    for bin_ in (0, 511, 512, 1024):
        shift, mask = short.row_shift_and_mask
        assert (bin_ >> shift, bin_ & mask) == divmod(bin_, short.tile_height)


def test_missing_columns_are_taken_once_each_coarsest_level_first():
    missing = MissingColumns((100, 25, 7))
    assert missing.columns() == 132 and missing.pending
    assert missing.take(0, 40, 60) == [(40, 60)]
    assert missing.take(0, 30, 50) == [(30, 40)]  # 40 .. 50 went already
    assert missing.columns() == 102
    assert missing.take_next(10) == [(2, 0, 7), (1, 0, 3)]
    assert missing.take_next(30) == [(1, 3, 25), (0, 0, 8)]
    taken = missing.take_next(1000)
    assert taken == [(0, 8, 30), (0, 60, 100)]
    assert not missing.pending and missing.take_next(5) == []
    missing.reset()
    assert missing.columns() == 132


def test_kept_levels_equal_levels_pooled_from_frames_before_and_after_edits():
    rng = np.random.default_rng(3)
    channels = torch.from_numpy(rng.uniform(0, 1, (2, 9, 1237)).astype(np.float32))
    magnitude = channels[1]  # a channel of the document: a view that does not start its storage
    widths = level_widths(1237)
    levels = ReducedLevels(magnitude, widths)

    def assert_current() -> None:
        for level, width in enumerate(widths):
            whole = Rect(0, 9, 0, width)
            assert torch.equal(
                levels.columns(level, whole), pooled_columns(magnitude, level, whole)
            )

    assert_current()
    random = []
    for _ in range(20):
        row0, col0 = int(rng.integers(0, 9)), int(rng.integers(0, 1237))
        random.append(
            Rect(row0, int(rng.integers(row0 + 1, 10)), col0, int(rng.integers(col0 + 1, 1238)))
        )
    # and the last frames, whose columns pool fewer than four at some levels
    for rect in [*random, Rect(2, 7, 1200, 1237), Rect(0, 9, 0, 1237)]:
        # lower and raise: a maximum must come down when its cell does
        magnitude[rect.row0 : rect.row1, rect.col0 : rect.col1] *= float(rng.choice([0.0, 3.0]))
        changed = levels.update(rect)
        assert changed == [(level, rect.at_level(level)) for level in range(len(widths))]
        assert_current()


def test_levels_not_asked_for_are_not_made_by_an_update():
    magnitude = torch.ones((4, 300))
    levels = ReducedLevels(magnitude, level_widths(300))
    levels.columns(1, Rect(0, 4, 0, 5))
    magnitude[:, 20:30] = 7.0
    levels.update(Rect(0, 4, 20, 30))
    assert levels._levels[2] is None  # made, from the current level 1, when first asked for
    assert levels.columns(2, Rect(0, 1, 0, 2)).tolist() == [[1.0, 7.0]]
