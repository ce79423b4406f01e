"""Edits upload only their dirty rectangle (bytes counted) and change only the pixels inside it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_render_reference import (
    FakeDocument,
    assert_pixels_match,
    oracle_picture,
    render_offscreen,
    sample_magnitudes,
)

from spectropaint.gpu import upload_batch
from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.regions import Region

pytestmark = pytest.mark.gpu

N_CHANNELS, N_BINS, N_FRAMES = 2, 48, 1100
TILE = 256
NATIVE = ViewSettings(colormap="inferno")


@pytest.fixture
def document():
    return FakeDocument(sample_magnitudes(N_CHANNELS, N_BINS, N_FRAMES, seed=3))


@pytest.fixture
def renderer(document):
    renderer = SpectrogramRenderer(
        shared_device(), document, max_texture_dim=TILE, reference_magnitude=1.0, view=NATIVE
    )
    document.changed.connect(renderer.mark_dirty)
    render_offscreen(renderer, N_FRAMES, N_BINS)  # the first frame uploads level 0
    renderer.stream()  # and the reduced levels
    yield renderer
    document.changed.disconnect(renderer.mark_dirty)
    renderer.close()


def expected_bytes(bins: tuple[int, int], frames: tuple[int, int], n_levels: int) -> int:
    """float32 cells of a box at level 0 plus the columns of each reduced level it reaches."""
    total = 0
    for level in range(n_levels):
        scale = 4**level
        columns = math.ceil(frames[1] / scale) - frames[0] // scale
        total += 4 * (bins[1] - bins[0]) * columns
    return total


def test_the_first_two_frames_upload_every_cell_of_every_level_of_the_shown_channel(document):
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=TILE)
    try:
        render_offscreen(renderer, 40, 30)  # the 69 columns of level 2, which it samples
        widths = renderer.grid.level_widths
        assert widths == (1100, 275, 69, 18, 5)
        assert renderer.stats.frame_bytes == 4 * N_BINS * 69
        render_offscreen(renderer, 40, 30)  # the rest: this small document streams in at once
        assert renderer.stats.frame_bytes == 4 * N_BINS * (sum(widths) - 69)
        assert not renderer.streaming
        render_offscreen(renderer, 40, 30)
        assert renderer.stats.frame_bytes == 0  # nothing changed, nothing uploaded
    finally:
        renderer.close()


def test_the_first_frame_uploads_the_level_its_view_samples_and_later_frames_stream_the_rest(
    document,
):
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=TILE, view=NATIVE)
    try:
        renderer.stream_bytes = 0
        first = render_offscreen(renderer, 40, 30)  # 27.5 frames a pixel: level 2, 69 columns
        assert renderer.view_level(NATIVE, 40) == 2
        assert renderer.stats.frame_bytes == 4 * N_BINS * 69
        assert renderer.streaming
        renderer.stream_bytes = 4 * N_BINS * 100  # a hundred columns a frame
        frames, total = 0, renderer.stats.total_bytes
        while renderer.streaming:
            again = render_offscreen(renderer, 40, 30)
            assert renderer.stats.frame_bytes <= renderer.stream_bytes
            frames += 1
        widths = renderer.grid.level_widths
        assert frames == -(-(sum(widths) - 69) // 100)
        assert renderer.stats.total_bytes == 4 * N_BINS * sum(widths)  # each column once
        assert renderer.stats.total_bytes > total
        assert np.array_equal(first, again)  # the streamed first frame is the full one
        assert_pixels_match(first, oracle_picture(document, NATIVE, 40, 30))
        assert_pixels_match(  # level 0 streamed in correctly too
            render_offscreen(renderer, N_FRAMES, N_BINS),
            oracle_picture(document, NATIVE, N_FRAMES, N_BINS),
        )
        assert renderer.stats.frame_bytes == 0
    finally:
        renderer.close()


def test_a_view_needing_missing_columns_gets_them_in_its_own_frame(document):
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=TILE, view=NATIVE)
    try:
        renderer.stream_bytes = 0
        render_offscreen(renderer, 40, 30)
        zoomed = ViewSettings(colormap="inferno", time_range=(300.0, 400.0))
        picture = render_offscreen(renderer, 100, N_BINS, zoomed)  # a frame a pixel: level 0
        assert (
            renderer.stats.frame_bytes == 4 * N_BINS * 102
        )  # the view's columns and one more each side
        assert_pixels_match(picture, oracle_picture(document, zoomed, 100, N_BINS))
    finally:
        renderer.close()


def level_bytes(bins: tuple[int, int], frames: tuple[int, int], level: int) -> int:
    return expected_bytes(bins, frames, level + 1) - expected_bytes(bins, frames, level)


def assert_box_uploads(renderer, *boxes, level: int = 0, extra: int = 0) -> None:
    """The frame just drawn wrote each box (``(bins, frames)``) at the ``level`` its view reads
    (and ``extra`` bytes); a step between frames then writes them at every other level."""
    n_levels = len(renderer.grid.level_widths)
    at_level = sum(level_bytes(*box, level) for box in boxes)
    assert renderer.stats.frame_bytes == at_level + extra
    renderer.stream(0)  # between frames: no missing columns, the boxes of the other levels
    assert renderer.stats.frame_bytes == sum(expected_bytes(*b, n_levels) for b in boxes) - at_level
    assert not renderer.streaming


def test_pixels_after_box_uploads_equal_those_of_a_full_re_upload(document, renderer):
    zoomed_out = ViewSettings(colormap="inferno")
    rng = np.random.default_rng(5)
    for bins, frames in (((3, 40), (250, 262)), ((0, 48), (1020, 1100)), ((20, 21), (0, 700))):
        shape = (1, bins[1] - bins[0], frames[1] - frames[0])
        document.write(Region(*bins, *frames, (0,)), rng.uniform(0, 2, shape).astype(np.float32))
        render_offscreen(renderer, 64, 40, zoomed_out)  # uploads each box at every level
    fresh = SpectrogramRenderer(
        shared_device(), document, max_texture_dim=TILE, reference_magnitude=1.0
    )
    try:
        fresh.stream()  # every column uploaded from the document as it is now
        for view, width, height in ((NATIVE, N_FRAMES, N_BINS), (zoomed_out, 64, 40)):
            assert np.array_equal(
                render_offscreen(renderer, width, height, view),
                render_offscreen(fresh, width, height, view),
            )
    finally:
        fresh.close()


def test_an_edit_uploads_only_its_rectangle_and_changes_only_its_pixels(document, renderer):
    before = render_offscreen(renderer, N_FRAMES, N_BINS)
    region = Region(
        bin0=10, bin1=30, frame0=240, frame1=270, channels=(0,)
    )  # crosses a tile border
    document.write(region, np.full((1, 20, 30), 0.5, np.float32))
    after = render_offscreen(renderer, N_FRAMES, N_BINS)

    tile_bytes = 4 * renderer.grid.tile_width * renderer.grid.tile_height
    assert renderer.stats.frame_bytes < tile_bytes / 10
    assert_box_uploads(renderer, ((10, 30), (240, 270)))

    changed = (after != before).any(axis=-1)
    rows = slice(N_BINS - 30, N_BINS - 10)  # bins 10 .. 29, low frequencies at the bottom
    assert not changed[:, :240].any() and not changed[:, 270:].any()
    assert not changed[: rows.start].any() and not changed[rows.stop :].any()
    assert changed[rows, 240:270].mean() > 0.9  # 0.5 is -6 dB: nearly every cell got brighter
    assert_pixels_match(after, oracle_picture(document, NATIVE, N_FRAMES, N_BINS))


def test_overlapping_edits_before_a_frame_upload_their_union_once(document, renderer):
    document.write(Region(0, 10, 100, 120, (0,)), np.ones((1, 10, 20), np.float32))
    document.write(Region(5, 15, 110, 130, (0,)), np.ones((1, 10, 20), np.float32))
    render_offscreen(renderer, N_FRAMES, N_BINS)
    assert_box_uploads(renderer, ((0, 15), (100, 130)))


def test_separate_edits_upload_separately_and_other_channels_not_at_all(document, renderer):
    second = ViewSettings(colormap="inferno", channel=1)
    render_offscreen(renderer, N_FRAMES, N_BINS, second)  # showing channel 1 uploads its level 0
    assert renderer.stats.frame_bytes == 4 * N_BINS * N_FRAMES
    renderer.stream()
    assert renderer.stats.frame_bytes == 4 * N_BINS * sum(renderer.grid.level_widths[1:])
    document.write(Region(0, 4, 10, 14, (1,)), np.ones((1, 4, 4), np.float32))
    document.write(Region(40, 44, 900, 904, (1,)), np.ones((1, 4, 4), np.float32))
    document.write(Region(0, N_BINS, 0, 50, (0,)), np.ones((1, N_BINS, 50), np.float32))
    render_offscreen(renderer, N_FRAMES, N_BINS, second)  # the channel 0 edit is not shown
    assert_box_uploads(renderer, ((0, 4), (10, 14)), ((40, 44), (900, 904)))
    assert_pixels_match(
        render_offscreen(renderer, N_FRAMES, N_BINS, second),
        oracle_picture(document, second, N_FRAMES, N_BINS),
    )
    assert_pixels_match(  # back on channel 0: uploaded whole again, its edit included
        render_offscreen(renderer, N_FRAMES, N_BINS, NATIVE),
        oracle_picture(document, NATIVE, N_FRAMES, N_BINS),
    )


def test_reduced_levels_stay_current_after_an_edit(document, renderer):
    zoomed_out = ViewSettings(colormap="grayscale")
    document.write(Region(0, N_BINS, 777, 778, (0,)), np.ones((1, N_BINS, 1), np.float32))
    picture = render_offscreen(renderer, 50, 24, zoomed_out)  # 22 frames per pixel: level 2
    assert_pixels_match(picture, oracle_picture(document, zoomed_out, 50, 24))
    assert (picture[:, int(777 / N_FRAMES * 50)] == 255).all()


def test_the_phase_texture_is_made_on_first_use_and_kept_current(document, renderer):
    assert renderer.stats.total_bytes == 4 * N_BINS * sum(renderer.grid.level_widths)
    phase_view = ViewSettings(mode="phase")
    render_offscreen(renderer, 100, 48, phase_view)
    assert renderer.stats.frame_bytes == 4 * N_BINS * N_FRAMES
    block = document.blocks[0]
    block.phase[0, 20:22, 50:60] = 3.0
    renderer.mark_dirty(Region(20, 22, 50, 60, (0,)))
    picture = render_offscreen(renderer, 100, 48, phase_view)
    level = renderer.view_level(phase_view, 100)
    assert_box_uploads(renderer, ((20, 22), (50, 60)), level=level, extra=4 * 2 * 10)
    assert_pixels_match(picture, oracle_picture(document, phase_view, 100, 48))


def test_regions_of_other_blocks_and_outside_the_grid_are_ignored_or_clipped(document, renderer):
    renderer.mark_dirty(Region(0, 5, 0, 5, (0,), block=1))
    renderer.mark_dirty(Region(N_BINS, N_BINS + 5, 0, 5, (0,)))
    render_offscreen(renderer, 20, 20)
    assert renderer.stats.frame_bytes == 0
    renderer.mark_dirty(Region(N_BINS - 2, N_BINS + 5, N_FRAMES - 1, N_FRAMES + 9, (0,)))
    render_offscreen(renderer, 20, 20)
    level = renderer.view_level(renderer.view, 20)
    assert_box_uploads(renderer, ((N_BINS - 2, N_BINS), (N_FRAMES - 1, N_FRAMES)), level=level)


def test_a_box_is_written_from_the_cells_own_memory_with_no_host_copy(
    document, renderer, monkeypatch
):
    written = []
    write_texture = upload_batch.write_texture

    def spy(queue, texture, origin, data, offset, bytes_per_row, rows_per_image, size):
        written.append((data, bytes_per_row, size))
        write_texture(queue, texture, origin, data, offset, bytes_per_row, rows_per_image, size)

    monkeypatch.setattr(upload_batch, "write_texture", spy)
    region = Region(bin0=5, bin1=37, frame0=600, frame1=700, channels=(0,))
    document.write(region, np.full((1, 32, 100), 0.25, np.float32))
    after = render_offscreen(renderer, N_FRAMES, N_BINS)
    assert_box_uploads(renderer, ((5, 37), (600, 700)))  # the other levels' boxes now

    magnitude = document.blocks[0].magnitude[0].numpy()
    levels = [magnitude] + [
        renderer._levels.columns(level, renderer.grid.full_rect(level)).numpy()
        for level in range(1, len(renderer.grid.level_widths))
    ]
    uploads = [(data, pitch, size) for data, pitch, size in written if size[1] == 32]
    assert len(uploads) >= len(levels)  # a box at each level (split at tile borders)
    for data, pitch, _ in uploads:  # every write reads a level's own cells, a row its pitch
        owner = next((level for level in levels if np.shares_memory(data, level)), None)
        assert owner is not None
        assert pitch == 4 * owner.shape[1]
    assert_pixels_match(after, oracle_picture(document, NATIVE, N_FRAMES, N_BINS))


def test_a_frame_streams_at_most_its_budget_and_streaming_goes_on_between_frames(document):
    from spectropaint.gpu.lanes import LaneRenderer
    from spectropaint.gpu.renderer import STREAM_BYTES

    lanes = LaneRenderer(shared_device(), document, NATIVE, max_texture_dim=TILE)
    try:
        renderer = lanes.renderers[0]
        renderer.stream_bytes = STREAM_BYTES
        assert STREAM_BYTES <= 2 * 2**20  # a playhead frame writes no more than this
        render_offscreen(renderer, N_FRAMES, N_BINS)  # level 0: the view's own columns
        renderer.stream_bytes = 4 * N_BINS * 30  # this small document: 30 columns a step
        missing = renderer._missing.columns()
        assert missing == sum(renderer.grid.level_widths[1:])
        steps = 0
        while lanes.streaming:  # no frame drawn: the window streams between frames
            lanes.stream(renderer.stream_bytes)
            assert renderer.stats.frame_bytes <= 4 * N_BINS * 30
            steps += 1
        assert steps == math.ceil(missing / 30)
        fresh = SpectrogramRenderer(
            shared_device(), document, max_texture_dim=TILE, reference_magnitude=1.0
        )
        try:
            fresh.stream()
            zoomed_out = ViewSettings(colormap="inferno")
            assert np.array_equal(  # the streamed levels equal levels uploaded whole
                render_offscreen(renderer, 64, 40, zoomed_out),
                render_offscreen(fresh, 64, 40, zoomed_out),
            )
        finally:
            fresh.close()
    finally:
        lanes.close()


def test_an_edit_s_frame_writes_the_edit_and_streams_nothing_else(document):
    """While the columns the view does not read still stream in, a frame that shows an edit writes
    only the edit (the next step between frames streams on)."""
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=TILE, view=NATIVE)
    document.changed.connect(renderer.mark_dirty)
    try:
        renderer.stream_bytes = 4 * N_BINS * 100  # a hundred columns a frame
        render_offscreen(renderer, 40, 30)  # the level the whole view samples, the rest missing
        assert renderer.streaming
        bins, frames = (3, 40), (250, 262)
        shape = (1, bins[1] - bins[0], frames[1] - frames[0])
        document.write(Region(*bins, *frames, (0,)), np.full(shape, 0.5, np.float32))
        render_offscreen(renderer, 40, 30)
        level = renderer._view_span[0]
        assert renderer.stats.frame_bytes == level_bytes(bins, frames, level)
        assert renderer.streaming
    finally:
        renderer.close()
