"""Export a spectrogram as a PNG file of any size, rendered on the GPU piece by piece.

The picture is rendered in bands of rows, each band in pieces no wider than the GPU's texture limit,
read back, and streamed into the PNG encoder; neither the GPU nor the host ever holds the whole
picture, so a native-resolution export (one pixel per frame and bin) of an hours-long file works.
Every piece is the same shader with the same uniforms but an offset, so pieces join without seams.
The file is written atomically: a failure leaves no file behind and an existing one untouched. A GPU
that is missing or fails on the way is reported as an :class:`ImageFileError` naming the file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import wgpu

from spectropaint.gpu.adapter import shared_device
from spectropaint.gpu.errors import GPUUnavailableError, ImageFileError, gpu_errors
from spectropaint.gpu.png_axes import PictureFrame
from spectropaint.gpu.png_writer import PngStreamWriter
from spectropaint.gpu.renderer import TARGET_FORMAT, SpectrogramRenderer
from spectropaint.gpu.renderer_choice import renderer_for
from spectropaint.gpu.view import ViewSettings
from spectropaint.transforms.errors import Cancelled, SettingsError
from spectropaint.transforms.files.atomic_write import atomic_path
from spectropaint.transforms.files.audio_file import format_bytes
from spectropaint.transforms.files.file_reasons import describe_os_error
from spectropaint.transforms.host_memory import available_memory

PIECE_LIMIT = 4096
"""Widest and tallest render target used, in pixels (lower if the adapter's limit is lower)."""
MEMORY_BUDGET = 64 * 2**20
"""Bytes of RGBA rows in one band (two are held: one compressed while the next renders); bands get
shorter for wider pictures."""


@dataclass(frozen=True)
class PngReport:
    """What :func:`export_png` wrote."""

    path: str
    width: int
    height: int
    pieces: int
    """GPU renders the picture took."""
    piece_size: tuple[int, int]
    """Width and height of the render target (the most of the picture on the GPU at once)."""
    seconds: float

    @property
    def message(self) -> str:
        pieces = "1 GPU piece" if self.pieces == 1 else f"{self.pieces} GPU pieces"
        return (
            f"wrote '{self.path}': {self.width}x{self.height} PNG ({pieces}, {self.seconds:.2f} s)"
        )


MAX_PIXELS = 2**30
"""The most pixels a PNG may have (about 1.07 billion: the native picture of three hours at
44.1 kHz, hop 512; 3.2 GB of RGB for whatever opens it)."""


def check_size(width: int, height: int) -> None:
    """Refuse a picture the PNG format, this limit or the memory for one row would not allow.

    Raises
    ------
    SettingsError
        With the size and the limit it breaks.
    """
    if not (isinstance(width, int) and isinstance(height, int) and width >= 1 and height >= 1):
        raise SettingsError(f"PNG size must be two positive integers, not {width!r}x{height!r}")
    if width >= 2**31 or height >= 2**31:
        raise SettingsError(f"PNG size {width}x{height} is beyond the format's 2**31 - 1 pixels")
    if width * height > MAX_PIXELS:
        raise SettingsError(
            f"PNG size {width}x{height} is {width * height / 1e6:.0f} million pixels, more than "
            f"the {MAX_PIXELS / 1e6:.0f} million allowed"
        )
    row, budget = 3 * width, available_memory()
    if budget is not None and row > budget:
        raise SettingsError(
            f"PNG size {width}x{height}: one row of it needs {format_bytes(row)}, "
            f"{format_bytes(budget)} is available"
        )


def _check_size(size: tuple[int, int] | None, native: tuple[int, int]) -> tuple[int, int]:
    width, height = native if size is None else size
    check_size(width, height)
    return width, height


def native_size(view: ViewSettings, geometry) -> tuple[int, int]:
    """One pixel per frame and per bin of what ``view`` shows of a block of ``geometry``."""
    start, stop, low, high = view.visible(geometry)
    return max(1, round(stop - start)), max(1, round((high - low) / geometry.step_hz))


def export_png(
    document,
    path: str | os.PathLike,
    *,
    size: tuple[int, int] | None = None,
    colormap: str = "magma",
    range_db: float = 80.0,
    floor_db: float | None = None,
    gamma: float = 1.0,
    freq_scale: str = "linear",
    channel: int = 0,
    time_range: tuple[float, float] | None = None,
    freq_range: tuple[float, float] | None = None,
    axes: bool = False,
    progress: Callable[[float], object] | None = None,
    renderer: SpectrogramRenderer | None = None,
    max_texture_dim: int | None = None,
    memory_budget: int = MEMORY_BUDGET,
) -> PngReport:
    """Write ``document``'s spectrogram (block 0, one channel) as an 8-bit RGB PNG.

    Parameters
    ----------
    document
        A ``Document`` (or the renderer's document protocol).
    path : str or os.PathLike
        The PNG file; written atomically.
    size : (int, int), optional
        Width and height of the spectrogram in pixels; default one pixel per frame and bin shown.
    colormap, range_db, floor_db, gamma, freq_scale, channel, time_range, freq_range
        As in :class:`~spectropaint.gpu.view.ViewSettings` (by default the whole block).
    axes : bool
        Add time and frequency axes with labels and a dB colour bar around the picture.
    progress : callable, optional
        Called with the fraction done (0..1) after each piece; returning ``False`` cancels
        (:class:`~spectropaint.transforms.errors.Cancelled`, and no file is written).
    renderer : SpectrogramRenderer, optional
        Reuse a renderer of ``document`` (its textures are already on the GPU); otherwise one is
        made on the shared device and closed afterwards.
    max_texture_dim : int, optional
        Lower tile and piece limit than the adapter's (tests use it to force many pieces).
    memory_budget : int
        Bytes of picture rows held on the host at once.

    Raises
    ------
    ImageFileError
        The file could not be written (the message names it and says why), also when there is no
        GPU adapter or the GPU failed (the cause is then a ``GPUUnavailableError``).
    SettingsError
        A bad size, colormap, range, gamma, frequency scale or channel.
    """
    view = ViewSettings(
        colormap=colormap,
        floor_db=floor_db,
        range_db=range_db,
        gamma=gamma,
        freq_scale=freq_scale,
        channel=channel,
        time_range=time_range,
        freq_range=freq_range,
    )
    started = time.perf_counter()
    n_bins, n_frames = document.blocks[0].magnitude.shape[-2:]
    width, height = _check_size(size, (n_frames, n_bins))  # before any work
    own_renderer = renderer is None
    try:
        if own_renderer:
            renderer = renderer_for(shared_device(), document, max_texture_dim=max_texture_dim)
        try:
            geometry = renderer.geometry
            if size is None:  # a pixel per frame and bin of what the view shows
                width, height = native_size(view, geometry)
            frame = PictureFrame(width, height, view=view, geometry=geometry, axes=axes)
            limit = min(
                PIECE_LIMIT,
                renderer.device.limits["max-texture-dimension-2d"],
                max_texture_dim or PIECE_LIMIT,
            )
            piece_w = min(limit, width)
            band_h = max(1, min(limit, height, memory_budget // (4 * frame.total_width)))
            pieces = -(-width // piece_w) * -(-height // band_h)
            with gpu_errors(f"creating a {piece_w}x{band_h} render target"):
                target = renderer.device.create_texture(
                    label="png piece",
                    size=(piece_w, band_h, 1),
                    format=TARGET_FORMAT,
                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT
                    | wgpu.TextureUsage.COPY_SRC
                    | wgpu.TextureUsage.COPY_DST,  # a compute pass's picture is copied in
                )
            bands = _render_bands(renderer, target, view, (width, height), pieces, progress, path)
            try:
                with (
                    atomic_path(path) as temporary,
                    open(temporary, "wb") as file,
                    PngStreamWriter(
                        file, frame.total_width, frame.total_height, memory_budget=memory_budget
                    ) as png,
                ):
                    png.write_rows(frame.top)
                    for row0, band in bands:
                        png.write_rows(frame.rows(band, row0))
                    png.write_rows(frame.bottom)
            except OSError as err:
                raise ImageFileError(path, describe_os_error(err)) from err
            finally:
                target.destroy()
        finally:
            if own_renderer:
                renderer.close()
    except GPUUnavailableError as err:  # no adapter, or the GPU failed: say which file it was for
        raise ImageFileError(path, str(err), action="render") from err
    return PngReport(
        path=os.fspath(path),
        width=frame.total_width,
        height=frame.total_height,
        pieces=pieces,
        piece_size=(piece_w, band_h),
        seconds=time.perf_counter() - started,
    )


def _render_bands(
    renderer: SpectrogramRenderer,
    target: wgpu.GPUTexture,
    view: ViewSettings,
    full_size: tuple[int, int],
    pieces: int,
    progress: Callable[[float], object] | None,
    path: str | os.PathLike,
) -> Iterator[tuple[int, np.ndarray]]:
    """``(first_row, rows)`` bands of the ``full_size`` picture, uint8 ``[rows, width, 4]`` as read
    back (the PNG writer leaves the alpha out).

    Each band is rendered in pieces the size of ``target``, each piece read back at once. The bands
    take two buffers in turn: a band stays valid while the next one is rendered (the PNG writer
    compresses it meanwhile), not longer.
    """
    width, height = full_size
    piece_w, band_h = target.size[:2]
    buffers = [np.empty((band_h, width, 4), np.uint8) for _ in range(2)]  # used in turn
    done = 0
    for index, row0 in enumerate(range(0, height, band_h)):
        rows = min(band_h, height - row0)
        band = buffers[index % 2][:rows]
        for col0 in range(0, width, piece_w):
            cols = min(piece_w, width - col0)
            renderer.render(
                target.create_view(),
                piece_w,
                band_h,
                view=view,
                full_size=full_size,
                offset=(col0, row0),
            )
            with gpu_errors("reading the picture back from the GPU"):
                data = renderer.device.queue.read_texture(
                    {"texture": target, "origin": (0, 0, 0)},
                    {"bytes_per_row": 4 * cols, "rows_per_image": rows},
                    (cols, rows, 1),
                )
            band[:, col0 : col0 + cols] = np.frombuffer(data, np.uint8).reshape(rows, cols, 4)
            done += 1
            if progress is not None and progress(done / pieces) is False:
                raise Cancelled(f"PNG export to '{os.fspath(path)}' cancelled")
        yield row0, band
