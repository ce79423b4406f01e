"""A stroke's original values of a box gathered in one GPU launch (Triton) from the tiles its open
step keeps and from the document: what :meth:`~spectropaint.brushes.history.OpenStep.original`
otherwise does by pasting each tile (an allocation, then four slices and a copy a tile).

A small brush's group box meets one to four tiles; on CUDA each paste's operations cost the host
a launch or a view (some 5 to 20 us each on the H200's host), about nine operations an event. Here
each cell of the box takes its value from the kept tile that holds it (found in the block's
:class:`~.tile_table.TileTable`), or from the document where no tile is kept. The values are
copied, not computed: the result equals the paste bit for bit.

:func:`scale_into` goes on from those values for a brush whose kernel scales magnitudes by one
number (gain and erase, :attr:`~spectropaint.brushes.registry.BrushKind.scale`): each cell's
original magnitude, scaled, blended by the stroke's coverage and written into the document in the
same launch, for what the gather, the kernel's product and the blend's launch took in three (a
gain event on the H200 did little else).

The pen's, the blur's, the filter's, warp's and the clone's kernels go further: they take
:class:`Kept` (:func:`kept_arguments`) and read each cell where it lies themselves, through the
same helper (:func:`~.triton_math._plain_from_kept`), with no gathered copy and no launch of its
own.

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``, for
boxes whose channels are a run.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch

from spectropaint.brushes.kernels import tile_table, triton_math

BLOCK = 512
"""Cells each program copies."""


class Kept(NamedTuple):
    """Where a box's original values lie (:meth:`~spectropaint.brushes.history.OpenStep.kept`):
    the stroke's kept tiles (``places``: :meth:`.tile_table.TileTable.places` at the box's first
    cell), and elsewhere the ``document``'s cells (its magnitude and phase and the index of the
    box's first cell, as :meth:`~spectropaint.transforms.document.Document.cells` gives them);
    the box's ``shape`` ``(C, B, T)``."""

    places: tuple
    document: tuple[torch.Tensor, torch.Tensor, int]
    shape: tuple[int, int, int]

    @classmethod
    def of(cls, magnitude: torch.Tensor, phase: torch.Tensor) -> Kept:
        """A box's values (its magnitude and phase ``[C, B, T]``) read as a document with no tile
        kept: a kernel that reads kept tiles keeps one compiled variant."""
        if magnitude.stride() != phase.stride():
            magnitude, phase = magnitude.contiguous(), phase.contiguous()
        places = tile_table.no_tiles(magnitude.device)
        return cls(places, (magnitude, phase, 0), tuple(magnitude.shape))

    def moved(self, rows: int, columns: int) -> Kept:
        """Where the values of the box whose first cell lies ``rows`` and ``columns`` past this
        one's lie, to this one's last cell. Either may be negative: the new box then begins
        before this one, its cells there read by a kernel only through a mask."""
        magnitude, phase, first = self.document
        channels, n_rows, width = self.shape
        *table, bin0, frame0 = self.places
        return Kept(
            (*table, bin0 + rows, frame0 + columns),
            (
                magnitude,
                phase,
                first + rows * magnitude.stride(-2) + columns * magnitude.stride(-1),
            ),
            (channels, n_rows - rows, width - columns),
        )


def available(device: torch.device) -> bool:
    """Whether a box's original values on ``device`` are gathered by the kernel."""
    return triton_math.wanted(device)


def gather(out: torch.Tensor, kept: Kept) -> torch.Tensor:
    """``out`` ``[2, C, B, T]`` (contiguous) filled with each cell's value from where ``kept``
    says it lies (its kept tile, else the document); returns ``out``."""
    _, channels, rows, width = out.shape
    cells = out.numel()
    triton_math.launch(
        _kernel("gather"), (-(-cells // BLOCK),),
        out, *kept_arguments(kept), cells, channels, rows, width, BLOCK=BLOCK,
    )  # fmt: skip
    return out


def kept_arguments(kept: Kept) -> list:
    """A kernel's arguments for reading a box's original values where ``kept`` says they lie
    (through :func:`~.triton_math._plain_from_kept`): the document's magnitude and phase, the
    box's first cell in them and their strides, then the tile table's places."""
    magnitude, phase, first = kept.document
    return [magnitude, phase, first, *magnitude.stride(), *kept.places]


def scale_into(kept: Kept, factor: float, weight: torch.Tensor) -> None:
    """The original magnitudes of a box (where ``kept`` says they lie) times ``factor``, blended
    towards by ``weight`` (``[B, T]``; torch's ``lerp``, as :func:`.blend.blend` blends a
    magnitude-only kernel's result) and written into the document's magnitudes; its phases are
    left as they are. The product is rounded to float32 as torch's would be (``factor`` is taken
    as a float32)."""
    channels, rows, width = kept.shape
    magnitude, _, first = kept.document
    cells = channels * rows * width
    triton_math.launch(
        _kernel("scale"), (-(-cells // BLOCK),),
        magnitude, first, *magnitude.stride(), *kept.places, weight, *weight.stride(), factor,
        cells, rows, width, BLOCK=BLOCK, enable_fp_fusion=False,
    )  # fmt: skip


@functools.cache
def _kernel(name: str):
    """The kernel ``name`` (``"gather"`` or ``"scale"``), compiled (or interpreted, under
    ``TRITON_INTERPRET=1``); no argument specialised on (:func:`~.triton_math.jit_with`'s
    ``general``)."""
    if name == "gather":
        return triton_math.jit_with(_gather_cells, "from_kept", general=True)
    return triton_math.jit_with(_scale_cells, "from_kept", "lerp", general=True)


def _gather_cells(
    out, magnitude, phase, first, plane_stride, row_stride, column_stride, table, table_columns,
    tile_side, n_bins, n_frames, bin0, frame0, cells, channels, rows, width, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of ``out`` ``[2, C, rows, width]``, each from its kept tile
    (``table`` to ``frame0``: :meth:`.tile_table.TileTable.places`), else from the document's
    magnitude (part 0) or phase (part 1) at ``first`` and its strides."""
    cell = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < cells
    column = cell % width
    row = (cell // width) % rows
    plane = cell // (width * rows)  # part * channels + channel
    values = tl.where(plane < channels, magnitude, phase)
    value = _from_kept(values, first, plane_stride, row_stride, column_stride, table,
                       table_columns, tile_side, n_bins, n_frames, bin0, frame0, plane,
                       plane % channels, row, column, inside)  # fmt: skip
    tl.store(out + cell, value, mask=inside)


def _scale_cells(
    magnitude, first, plane_stride, row_stride, column_stride, table, table_columns, tile_side,
    n_bins, n_frames, bin0, frame0, weight, weight_row, weight_column, factor, cells, rows, width,
    BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel: ``BLOCK`` cells of the box's magnitudes ``[C, rows, width]`` (at ``first`` of
    ``magnitude`` and its strides), each its original value (its kept tile's, as
    :func:`~.triton_math._plain_from_kept` finds it) moved towards that value times ``factor``
    by ``weight``'s cell of the same row and column."""
    cell = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = cell < cells
    column = cell % width
    row = (cell // width) % rows
    plane = cell // (width * rows)  # the channel: a tile's magnitudes are its first planes
    original = _from_kept(magnitude, first, plane_stride, row_stride, column_stride, table,
                          table_columns, tile_side, n_bins, n_frames, bin0, frame0, plane, plane,
                          row, column, inside)  # fmt: skip
    at = first + plane * plane_stride + row * row_stride + column * column_stride
    amount = tl.load(weight + row * weight_row + column * weight_column, mask=inside, other=0.0)
    tl.store(magnitude + at, _lerp(original, original * factor, amount), mask=inside)


tl = _from_kept = _lerp = None  # (bound by _kernel)
