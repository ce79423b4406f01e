"""Host memory the window adds to a document: the renderer's textures and the playback buffers.

Computed from shapes alone, like :mod:`spectropaint.transforms.memory_budget`, so that a file can
be refused from its header; the result is passed to the document as its ``reserve_bytes``.
"""

from __future__ import annotations

from spectropaint.gpu.lanes import MAX_LANES
from spectropaint.gpu.tiles import TileGrid, level_widths

WEBGPU_DEFAULT_TEXTURE_DIM = 8192


def texture_bytes(grid: TileGrid) -> int:
    """An r32float array texture holding ``grid``'s tiles (edge tiles are allocated whole)."""
    return 4 * grid.tile_width * grid.tile_height * grid.n_layers


def view_texture_bytes(
    n_bins: int,
    n_frames: int,
    *,
    max_texture_dim: int = WEBGPU_DEFAULT_TEXTURE_DIM,
    phase_view: bool = True,
) -> int:
    """The renderer's textures: the shown channel's magnitude with its max-pooled levels, and (once
    the phase is shown) its phase, in tiles of at most ``max_texture_dim`` texels a side."""
    magnitude = TileGrid.create(1, n_bins, level_widths(n_frames), max_dim=max_texture_dim)
    phase = TileGrid.create(1, n_bins, (n_frames,), max_dim=max_texture_dim)
    return texture_bytes(magnitude) + (texture_bytes(phase) if phase_view else 0)


def playback_bytes(n_samples: int, channels: int) -> int:
    """The playback buffers ``[N, C]`` float32: the original and, once edited, its edited copy."""
    return 2 * 4 * n_samples * channels


def view_and_playback_bytes(
    n_samples: int,
    channels: int,
    n_bins: int,
    n_frames: int,
    *,
    max_texture_dim: int = WEBGPU_DEFAULT_TEXTURE_DIM,
    phase_view: bool = True,
    textures_on_host: bool = True,
    stacked: bool = False,
) -> int:
    """Host memory the window adds for a document of this shape (a ``ReserveEstimate``).

    Parameters
    ----------
    n_samples, channels : int
        The audio's shape.
    n_bins, n_frames : int
        The shown block's grid.
    max_texture_dim : int
        The adapter's ``max_texture_dimension_2d`` (it sets the tile size, hence the padding).
    phase_view : bool
        Count the phase texture, made the first time the phase is shown.
    textures_on_host : bool
        True for a CPU adapter (lavapipe), whose textures live in host memory.
    stacked : bool
        Every channel drawn in a lane of its own: textures for each (up to ``MAX_LANES``).

    Returns
    -------
    int
        Bytes: :func:`view_texture_bytes` (when on the host), one channel's level-0 magnitude
        that the first upload copies, the reduced levels each lane's renderer keeps
        (:func:`reduced_level_bytes`; counted on the host even when they live on a GPU with the
        document), and :func:`playback_bytes`.
    """
    lanes = min(channels, MAX_LANES) if stacked else 1
    textures = lanes * view_texture_bytes(
        n_bins, n_frames, max_texture_dim=max_texture_dim, phase_view=phase_view
    )
    upload = 4 * n_bins * n_frames
    kept = lanes * reduced_level_bytes(n_bins, n_frames)
    return (
        (textures if textures_on_host else 0) + upload + kept + playback_bytes(n_samples, channels)
    )


def reduced_level_bytes(n_bins: int, n_frames: int) -> int:
    """The reduced levels of one channel that a renderer keeps next to the document (float32,
    about a third of level 0: :class:`~spectropaint.gpu.levels.ReducedLevels`)."""
    return 4 * n_bins * sum(level_widths(n_frames)[1:])
