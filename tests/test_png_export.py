"""PNG export: equal to stitched on-screen renders, any size, streamed in bands, axes, errors."""

from __future__ import annotations

import io
import os
import tracemalloc
import zlib

import numpy as np
import pytest
from PIL import Image
from test_render_reference import (
    FakeDocument,
    assert_pixels_match,
    oracle_picture,
    render_offscreen,
    sample_magnitudes,
)

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.colormaps import lookup
from spectropaint.gpu.errors import ImageFileError
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.png_axes import BAR_GAP, BAR_WIDTH, LEFT, TOP, PictureFrame
from spectropaint.gpu.png_export import export_png
from spectropaint.gpu.png_writer import PngStreamWriter, adler32_combine
from spectropaint.gpu.renderer import SpectrogramRenderer
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.errors import Cancelled, SettingsError

TILE = 64


@pytest.fixture(scope="module")
def document():
    return FakeDocument(sample_magnitudes(2, 50, 3 * TILE, seed=5))


@pytest.fixture(scope="module")
def renderer(document):
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=TILE)
    yield renderer
    renderer.close()


def read_png(path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "RGB"
        return np.asarray(image)


@pytest.mark.gpu
def test_native_export_of_a_three_tile_document_equals_the_stitched_renders(
    document, renderer, tmp_path
):
    assert renderer.phase_grid.tile_cols == 3  # level 0 spans three tiles
    report = export_png(document, tmp_path / "native.png", max_texture_dim=TILE)
    exported = read_png(tmp_path / "native.png")
    assert (report.width, report.height) == (3 * TILE, 50) == exported.shape[1::-1]
    assert report.pieces == 3
    stitched = np.concatenate(
        [
            render_offscreen(
                renderer, TILE, 50, ViewSettings(time_range=(k * TILE, (k + 1) * TILE))
            )
            for k in range(3)
        ],
        axis=1,
    )
    np.testing.assert_array_equal(exported, stitched)
    assert_pixels_match(exported, oracle_picture(document, ViewSettings(), 3 * TILE, 50))


@pytest.mark.gpu
@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
def test_export_at_a_chosen_size_equals_a_render_with_the_same_settings(
    document, renderer, tmp_path, scale
):
    settings = dict(
        colormap="plasma", range_db=60.0, floor_db=-70.0, gamma=0.8, freq_scale=scale, channel=1
    )
    path = tmp_path / f"{scale}.png"
    report = export_png(document, path, size=(150, 70), max_texture_dim=TILE, **settings)
    assert report.pieces == 3 * 2  # 64-pixel pieces: three across, two down
    exported = read_png(path)
    view = ViewSettings(**settings)
    np.testing.assert_array_equal(exported, render_offscreen(renderer, 150, 70, view))
    if scale != "log":  # the oracle's default frequency range is every bin
        assert_pixels_match(exported, oracle_picture(document, view, 150, 70))


@pytest.mark.gpu
def test_a_ten_minute_native_png_is_streamed_without_holding_the_picture(tmp_path):
    n_frames, n_bins = 51680, 128  # ten minutes at hop 512, 44.1 kHz
    magnitude = sample_magnitudes(1, n_bins, n_frames, seed=7)
    document = FakeDocument(magnitude, sample_rate=44100, hop=512)
    picture_bytes = n_frames * n_bins * 3
    renderer = SpectrogramRenderer(shared_device(), document, max_texture_dim=4096)
    renderer.stream()  # upload the document first: only the export's own memory is measured
    tracemalloc.start()
    try:
        report = export_png(
            document, tmp_path / "long.png", renderer=renderer, memory_budget=2 * 2**20
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        renderer.close()
    assert (report.width, report.height) == (n_frames, n_bins)
    piece_w, piece_h = report.piece_size
    assert piece_w * piece_h * 4 < picture_bytes / 10  # the GPU target is a small piece
    assert report.pieces == -(-n_frames // piece_w) * -(-n_bins // piece_h) > 10
    assert peak < picture_bytes / 2  # host memory: two bands of rows and the groups in flight
    exported = read_png(tmp_path / "long.png")
    for start in (0, 4096 * 7 - 200, n_frames - 300):  # includes a piece border
        window = ViewSettings(time_range=(start, start + 300))
        assert_pixels_match(
            exported[:, start : start + 300], oracle_picture(document, window, 300, n_bins)
        )


@pytest.mark.gpu
def test_axes_surround_the_same_picture_with_labels_and_a_colour_bar(document, tmp_path):
    export_png(document, tmp_path / "plain.png", max_texture_dim=TILE, colormap="viridis")
    report = export_png(
        document, tmp_path / "axes.png", max_texture_dim=TILE, colormap="viridis", axes=True
    )
    plain, framed = read_png(tmp_path / "plain.png"), read_png(tmp_path / "axes.png")
    assert framed.shape == (report.height, report.width, 3)
    assert report.width > plain.shape[1] and report.height > plain.shape[0]
    np.testing.assert_array_equal(framed[TOP : TOP + 50, LEFT : LEFT + 3 * TILE], plain)
    dark = framed.max(axis=-1) < 100
    assert dark[TOP : TOP + 50, :LEFT].sum() > 30  # frequency labels
    assert dark[TOP + 50 :, LEFT : LEFT + 3 * TILE].sum() > 30  # time labels
    right = framed[TOP : TOP + 50, LEFT + 3 * TILE :]
    bar_column = right[:, BAR_GAP + BAR_WIDTH // 2]
    top_colour, bottom_colour = (np.round(lookup("viridis", [0.99, 0.01]) * 255)).astype(int)
    assert np.abs(bar_column[0].astype(int) - top_colour).max() <= 3
    assert np.abs(bar_column[-1].astype(int) - bottom_colour).max() <= 3


@pytest.mark.gpu
def test_progress_reaches_one_and_cancelling_leaves_the_old_file(document, tmp_path):
    seen = []
    export_png(
        document, tmp_path / "a.png", max_texture_dim=TILE, size=(100, 100), progress=seen.append
    )
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 4
    target = tmp_path / "b.png"
    target.write_bytes(b"old")
    with pytest.raises(Cancelled, match="b.png"):
        export_png(document, target, max_texture_dim=TILE, progress=lambda fraction: fraction < 0.5)
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.png", "b.png"]  # no temporary file left


@pytest.mark.gpu
def test_bad_destination_and_settings_are_reported_with_the_file_name(document, tmp_path):
    missing = tmp_path / "no such folder" / "x.png"
    with pytest.raises(
        ImageFileError, match=r"cannot write '.*x\.png': folder '.*no such folder' does not exist"
    ):
        export_png(document, missing, max_texture_dim=TILE)
    with pytest.raises(SettingsError, match="PNG size must be two positive integers"):
        export_png(document, tmp_path / "y.png", size=(0, 10))
    with pytest.raises(SettingsError, match="unknown colormap 'jet'"):
        export_png(document, tmp_path / "y.png", colormap="jet")
    with pytest.raises(SettingsError, match="channel 2 asked for; the document has 2"):
        export_png(document, tmp_path / "y.png", channel=2)
    assert not (tmp_path / "y.png").exists()


@pytest.mark.parametrize(("width", "bands"), [(1, [3, 4]), (37, [1, 1, 5]), (100_000, [2, 1])])
def test_the_stream_writer_round_trips_through_pillow(width, bands):
    rng = np.random.default_rng(width)
    picture = rng.integers(0, 256, (sum(bands), width, 3), dtype=np.uint8)
    picture[:, : width // 2] = 7  # a flat part that compresses
    buffer = io.BytesIO()
    with PngStreamWriter(buffer, width, sum(bands)) as png:
        row = 0
        for count in bands:
            png.write_rows(picture[row : row + count])
            row += count
    buffer.seek(0)
    with Image.open(buffer) as image:
        np.testing.assert_array_equal(np.asarray(image.convert("RGB")), picture)


def test_the_stream_writer_refuses_a_wrong_row_count():
    with (
        pytest.raises(ValueError, match="2 rows written, the header says 3"),
        PngStreamWriter(io.BytesIO(), 4, 3) as png,
    ):
        png.write_rows(np.zeros((2, 4, 3), np.uint8))
    png = PngStreamWriter(io.BytesIO(), 4, 3)
    with pytest.raises(ValueError, match="more than 3 rows"):
        png.write_rows(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(
        ValueError, match=r"rows must be uint8 \[n, 4, 3\] or \[n, 4, 4\], not uint8 \[1, 5, 3\]"
    ):
        png.write_rows(np.zeros((1, 5, 3), np.uint8))
    with pytest.raises(ValueError, match=r"or \[n, 4, 4\], not float32 \[1, 4, 4\]"):
        png.write_rows(np.zeros((1, 4, 4), np.float32))
    with pytest.raises(ValueError, match=r"or \[n, 4, 4\], not uint8 \[4, 3\]"):
        png.write_rows(np.zeros((4, 3), np.uint8))


@pytest.mark.parametrize("split", [0, 1, 65520, 65521, 65522, 200_000])
def test_adler32_of_joined_bytes_combines_from_the_parts(split):
    data = np.random.default_rng(split).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    first, second = data[:split], data[split:]
    combined = adler32_combine(zlib.adler32(first), zlib.adler32(second), len(second))
    assert combined == zlib.adler32(data)


@pytest.mark.parametrize("channels", [3, 4])
def test_groups_compressed_in_parallel_decode_to_the_picture_while_bands_are_reused(channels):
    width, band_rows, n_bands = 100_000, 20, 5  # about three rows a group: seven groups a band
    rng = np.random.default_rng(11)
    picture = rng.integers(0, 256, (band_rows * n_bands, width, 3), dtype=np.uint8)
    picture[:, ::7] = 0  # something to compress
    buffers = [rng.integers(0, 256, (band_rows, width, channels), np.uint8) for _ in range(2)]
    outputs = {}
    for workers in (1, 4):
        buffer = io.BytesIO()
        with PngStreamWriter(buffer, width, len(picture), workers=workers) as png:
            for index in range(n_bands):
                band = buffers[index % 2]
                band[..., :3] = picture[index * band_rows : (index + 1) * band_rows]  # alpha left
                png.write_rows(band)
                buffers[(index + 1) % 2][:] = 255  # the band before this one is free to reuse
        buffer.seek(0)
        with Image.open(buffer) as image:
            np.testing.assert_array_equal(np.asarray(image.convert("RGB")), picture)
        outputs[workers] = buffer.getvalue()
    assert outputs[1] == outputs[4]  # the same groups, the same bytes, whatever the threads


@pytest.mark.parametrize(
    "view",
    [
        ViewSettings(freq_range=(1705.0, 1705.01), range_db=1e-4, floor_db=-100.0),
        ViewSettings(freq_range=(440.0, 440.001), freq_scale="log"),
        ViewSettings(freq_range=(999.0, 1001.0), freq_scale="mel"),
        ViewSettings(time_range=(1000.0, 1000.5)),
    ],
)
def test_no_two_axis_labels_read_the_same_however_far_the_view_is_zoomed(view):
    """Six significant digits wrote 1705.008 Hz and 1705.009 Hz both as '1.70501k': every label of
    an axis is now its own value, at its own place."""
    geometry = BlockGeometry(
        n_frames=5000, n_bins=1025, first_hz=0.0, step_hz=44100 / 2048, first_seconds=0.0,
        step_seconds=512 / 44100,
    )  # fmt: skip
    frame = PictureFrame(400, 300, view=view, geometry=geometry, axes=True)
    for axis in ("mt", "rm", "lm"):  # time (below), frequency (left), dB (right of the bar)
        labels = [label for label in frame._labels if label.anchor == axis]
        values = [label.text for label in labels if label.text not in ("Hz", "dB")]
        assert len(values) >= 2, (axis, values)
        assert len(set(values)) == len(values), (axis, values)
        places = [(label.x, label.y) for label in labels]
        assert len(set(places)) == len(places), (axis, places)
