"""A stroke's original values of a box gathered in one GPU launch (Triton) from the tiles its open
step keeps and from the document: what :meth:`~spectropaint.brushes.history.OpenStep.original`
otherwise does by pasting each tile (an allocation, then four slices and a copy a tile).

A small brush's group box meets one to four tiles; on CUDA each paste's operations cost the host
a launch or a view (some 5 to 20 us each on the H200's host), about nine operations an event. Here
each cell of the box takes its value from the kept tile that holds it (a tile ``[2, C, h, w]``,
read through its own shape), or from the document where the tile is fresh (recorded by this
event: the document still holds its original values). The values are copied, not computed: the
result equals the paste bit for bit.

:func:`scale_into` goes on from those values for a brush whose kernel scales magnitudes by one
number (gain and erase, :attr:`~spectropaint.brushes.registry.BrushKind.scale`): each cell's
original magnitude, scaled, blended by the stroke's coverage and written into the document in the
same launch, for what the gather, the kernel's product and the blend's launch took in three (a
gain event on the H200 did little else).

The pen's and the blur's kernels go further: they take :class:`Kept` (:func:`kept_arguments`)
and read each cell where it lies themselves, through the same tile helpers
(:func:`~.triton_math._plain_from_tiles`), with no gathered copy and no launch of its own.

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``, for
boxes that meet at most :data:`MOST_TILES` kept tiles and whose channels are a run.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch

from spectropaint.brushes.kernels import triton_math

MOST_TILES = 4
"""The kept tiles one launch reads (each an argument): a box meeting more is pasted."""
BLOCK = 512
"""Cells each program copies."""


class Kept(NamedTuple):
    """Where a box's original values lie (:meth:`~spectropaint.brushes.history.OpenStep.kept`):
    the ``tiles`` the stroke kept that hold some of it (each ``[2, C, h, w]``, contiguous, with its
    first row and column in the box), and elsewhere the ``document``'s cells (its magnitude and
    phase and the index of the box's first cell, as :meth:`~spectropaint.transforms.document.
    Document.cells` gives them); the box's ``shape`` ``(C, B, T)``."""

    tiles: list[tuple[torch.Tensor, int, int]]
    document: tuple[torch.Tensor, torch.Tensor, int]
    shape: tuple[int, int, int]


def available(device: torch.device) -> bool:
    """Whether a box's original values on ``device`` are gathered by the kernel."""
    return triton_math.wanted(device)


def gather(
    out: torch.Tensor,
    tiles: list[tuple[torch.Tensor, int, int]],
    document: tuple[torch.Tensor, torch.Tensor, int],
) -> torch.Tensor:
    """``out`` ``[2, C, B, T]`` (contiguous) filled with each cell's value from the tile of
    ``tiles`` that holds it (each ``[2, C, h, w]``, contiguous, with its first row and column in
    the box, which may lie before it), and elsewhere from ``document`` (its magnitude and phase
    and the index of the box's first cell in them, as :meth:`~spectropaint.transforms.document.
    Document.cells` gives them); returns ``out``. At most :data:`MOST_TILES` tiles."""
    _, channels, rows, width = out.shape
    cells = out.numel()
    triton_math.launch(
        _kernel("gather"), (-(-cells // BLOCK),),
        out, *kept_arguments(tiles, document, out), cells, channels, rows, width, BLOCK=BLOCK,
    )  # fmt: skip
    return out


def kept_arguments(
    tiles: list[tuple[torch.Tensor, int, int]],
    document: tuple[torch.Tensor, torch.Tensor, int],
    spare: torch.Tensor,
) -> list:
    """A kernel's arguments for reading a box's original values from ``tiles`` and ``document``
    (as :func:`gather` reads them, through :func:`~.triton_math._plain_from_tiles`): the
    document's magnitude and phase, the box's first cell in them and their strides, then each
    tile, its first row and column in the box and its height and width (``spare`` stands for the
    tensor of tiles not given, which are never read)."""
    magnitude, phase, first = document
    return [magnitude, phase, first, *magnitude.stride(), *tile_places(tiles, spare)]


def scale_into(
    tiles: list[tuple[torch.Tensor, int, int]],
    document: tuple[torch.Tensor, torch.Tensor, int],
    shape: tuple[int, int, int],
    factor: float,
    weight: torch.Tensor,
) -> None:
    """The original magnitudes of a box of ``shape`` ``(C, B, T)`` (from ``tiles`` and
    ``document``, as :func:`gather` reads them) times ``factor``, blended towards by ``weight``
    (``[B, T]``; torch's ``lerp``, as :func:`.blend.blend` blends a magnitude-only kernel's
    result) and written into ``document``'s magnitudes; its phases are left as they are. The
    product is rounded to float32 as torch's would be (``factor`` is taken as a float32)."""
    channels, rows, width = shape
    magnitude, _, first = document
    cells = channels * rows * width
    triton_math.launch(
        _kernel("scale"), (-(-cells // BLOCK),),
        magnitude, first, *magnitude.stride(), *tile_places(tiles, magnitude), weight,
        *weight.stride(), factor, cells, rows, width, BLOCK=BLOCK, enable_fp_fusion=False,
    )  # fmt: skip


def tile_places(tiles: list[tuple[torch.Tensor, int, int]], spare: torch.Tensor) -> list:
    """The kernels' arguments for ``tiles`` (read by :func:`~.triton_math._plain_from_tiles`): each tile, its first row and column in the box and
    its height and width, then tiles of no rows (never read; ``spare`` stands for their tensor)
    up to :data:`MOST_TILES`."""
    unused = (tiles[0][0] if tiles else spare, 0, 0, 0, 0)
    places = [(tile, top, left, tile.shape[-2], tile.shape[-1]) for tile, top, left in tiles]
    places += [unused] * (MOST_TILES - len(places))
    return [value for place in places for value in place]


@functools.cache
def _kernel(name: str):
    """The kernel ``name`` (``"gather"`` or ``"scale"``), compiled (or interpreted, under
    ``TRITON_INTERPRET=1``); no argument specialised on (:func:`~.triton_math.jit_with`'s
    ``general``)."""
    function = {"gather": _gather_cells, "scale": _scale_cells}[name]
    return triton_math.jit_with(function, "from_tiles", *(["lerp"] if name == "scale" else []),
                                general=True)  # fmt: skip


def _gather_cells(
    out, magnitude, phase, first, plane_stride, row_stride, column_stride,
    tile0, top0, left0, height0, width0, tile1, top1, left1, height1, width1,
    tile2, top2, left2, height2, width2, tile3, top3, left3, height3, width3,
    cells, channels, rows, width, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of ``out`` ``[2, C, rows, width]``, each from the first tile
    whose rows and columns hold it (tile ``i``'s first cell at row ``top_i`` and column
    ``left_i`` of the box, ``height_i`` x ``width_i`` cells a plane), else from the document's
    magnitude (part 0) or phase (part 1) at ``first`` and its strides."""
    cell = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < cells
    column = cell % width
    row = (cell // width) % rows
    plane = cell // (width * rows)  # part * channels + channel
    value, held = _from_tiles(
        tile0, top0, left0, height0, width0, tile1, top1, left1, height1, width1,
        tile2, top2, left2, height2, width2, tile3, top3, left3, height3, width3,
        plane, row, column, inside, BLOCK,
    )  # fmt: skip
    part = plane // channels
    at = first + (plane % channels) * plane_stride + row * row_stride + column * column_stride
    from_document = inside & (held == 0)
    stored_magnitude = tl.load(magnitude + at, mask=from_document & (part == 0), other=0.0)
    stored_phase = tl.load(phase + at, mask=from_document & (part == 1), other=0.0)
    value = tl.where(from_document, tl.where(part == 0, stored_magnitude, stored_phase), value)
    tl.store(out + cell, value, mask=inside)


def _scale_cells(
    magnitude, first, plane_stride, row_stride, column_stride,
    tile0, top0, left0, height0, width0, tile1, top1, left1, height1, width1,
    tile2, top2, left2, height2, width2, tile3, top3, left3, height3, width3,
    weight, weight_row, weight_column, factor, cells, rows, width, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of the box's magnitudes ``[C, rows, width]`` (at ``first`` of
    ``magnitude`` and its strides), each its original value (the first tile's that holds it, as
    :func:`_gather_cells` finds it, else the document's) moved towards that value times ``factor``
    by ``weight``'s cell of the same row and column."""
    cell = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < cells
    column = cell % width
    row = (cell // width) % rows
    plane = cell // (width * rows)  # the channel: a tile's magnitudes are its first planes
    value, held = _from_tiles(
        tile0, top0, left0, height0, width0, tile1, top1, left1, height1, width1,
        tile2, top2, left2, height2, width2, tile3, top3, left3, height3, width3,
        plane, row, column, inside, BLOCK,
    )  # fmt: skip
    at = first + plane * plane_stride + row * row_stride + column * column_stride
    from_document = inside & (held == 0)
    stored = tl.load(magnitude + at, mask=from_document, other=0.0)
    original = tl.where(from_document, stored, value)
    amount = tl.load(weight + row * weight_row + column * weight_column, mask=inside, other=0.0)
    tl.store(magnitude + at, _lerp(original, original * factor, amount), mask=inside)


tl = _from_tiles = _lerp = None  # (bound by _kernel)
