"""A stamping group's weights computed and the stroke's coverage raised by them in one GPU launch
(Triton), from the dabs' distances along their boxes' rows and columns.

A stamping brush blends each group's result into the document by the stroke's coverage: each
cell's largest weight any of the stroke's dabs gave it so far, raised by the group's. On a GPU the
host computed the group's weights over its joint box (:func:`~spectropaint.brushes.
mask_compiled.group_weights`, which maps too which dab holds each cell), raised its coverage tiles
there, and staged the box's blend weight and map for the kernels: at radius 32 some 5 700 cells
a group, three arrays of 23 kB, and on the H200's host a third of a filter event. A dab's weight
at a cell follows from the cell's row's and column's distances from its centre, so the host now
packs those (:func:`~spectropaint.brushes.mask_compiled.packed_distances`, 3 kB) and this launch
computes every cell of the joint box: each dab's weight where its box holds the cell (by
:func:`.triton_math._plain_falloff`, the host's arithmetic bit for bit), their largest (or, where
every dab has one peak weight, the nearest dab's, as the host's loop for a mouse's strokes
computes it), the dab that holds the cell last, and the coverage raised in its tile on the device
(each cell of the box lies in one tile, which one lane reads and writes). The blend weight and the
maps the group's kernels read are written on the device: ``tests/test_coverage_fused.py`` compares
them with the host's, bit for bit.

Used for the groups of a stroke of dabs of :data:`FEWEST_CELLS` or more on CUDA where Triton
imports (its coverage then kept on the device, :func:`~spectropaint.brushes.dab.
_coverage_on_host`), unless :data:`~.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from spectropaint.brushes.kernels import staging, triton_math
from spectropaint.brushes.tiles import TileMap
from spectropaint.transforms.regions import Region

BLOCK = 256
"""Cells of the joint box each program computes."""
CHUNK_CELLS = 1 << 20
"""Cells of each zeroed chunk that coverage tiles are cut from (4 MiB: 256 tiles of 64 x 64)."""
FEWEST_CELLS = 1 << 10
"""The fewest cells of a brush's full-size dab's box (radius 16 along both axes) whose strokes
have their coverage raised by the launch. On the H200, against the host's raise (alternated stroke
by stroke, 5 rounds): at radius 32 the pen's events took 0.88 of the time, the clone's 0.91, the
blur's 0.95, the filter's 0.95 to 0.98; at radius 8, 1.05 to 1.10: a small group's weights cost
the host little, and the launch's 13 us on the device are waited for at the event's end."""
NO_MAPS, HOLDERS, OWNERS = 0, 1, 2
"""Which maps the launch writes besides the blend weight: none, the dab that holds each cell
last (int32, -1 where none), or whether some dab holds it (bool) and that dab's centre bin
(float64, NaN where none)."""


def available(device: torch.device, dab_cells: int) -> bool:
    """Whether the coverage of a stroke on ``device`` whose full-size dab's box holds
    ``dab_cells`` is raised by the launch (:data:`FEWEST_CELLS`)."""
    return dab_cells >= FEWEST_CELLS and triton_math.wanted(device)


class ZeroedTiles:
    """Zeroed float32 coverage tiles on ``device``, cut from chunks of :data:`CHUNK_CELLS` zeroed
    at once: a tile made alone is an allocation and a launch of its own, and a stroke across a
    long file seen whole meets dozens a pointer move. A stroke keeps its own, and drops them as
    it ends."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.chunk: torch.Tensor | None = None
        self.used = 0

    def take(self, shape: tuple[int, int]) -> torch.Tensor:
        cells = shape[0] * shape[1]
        if self.chunk is None or self.used + cells > self.chunk.numel():
            self.chunk, self.used = torch.zeros(max(CHUNK_CELLS, cells), device=self.device), 0
        tile = self.chunk[self.used : self.used + cells].view(shape)
        self.used += cells
        return tile


def raise_coverage(
    coverage: TileMap,
    zeros: ZeroedTiles,
    box: Region,
    packed: tuple[np.ndarray, int, int],
    *,
    hardness: float,
    nearest: bool,
    maps: int = NO_MAPS,
    centres: np.ndarray | None = None,
    dabs: np.ndarray | None = None,
):
    """The blend weight ``[B, T]`` of a group's joint ``box`` on the device, the stroke's
    ``coverage`` there (tiles on the device, made from ``zeros`` where it has none yet) raised to
    the group's largest weight per cell, in one launch; with the maps ``maps`` asks for.

    ``packed``: the group's distances and peak weights, as
    :func:`~spectropaint.brushes.mask_compiled.packed_distances` gives them; ``nearest``: every
    dab has one peak weight (the nearest dab's weight per cell, as the host computes it then);
    ``centres`` ``[K]`` (float64): the dabs' centre bins, for :data:`OWNERS`; ``dabs``: a host
    array the group's kernels read too (:func:`~spectropaint.brushes.dab._holders`'), staged with
    the launch's.

    Returns the blend weight, the maps (:data:`HOLDERS`: the map; :data:`OWNERS`: whether some
    dab holds each cell and its centre bin; else None) and ``dabs`` staged (or None). Raises
    :class:`~.triton_math.Unavailable` where Triton cannot compile."""
    data, width, height = packed
    device = zeros.device
    side = coverage.tile
    coverage.ensure(box, lambda tile: zeros.take(tile.shape))
    first_row, first_column = box.bin0 // side, box.frame0 // side
    last_row, last_column = (box.bin1 - 1) // side, (box.frame1 - 1) // side
    addresses = np.array([coverage.tiles[row, column].data_ptr()
                          for row in range(first_row, last_row + 1)
                          for column in range(first_column, last_column + 1)],
                         dtype=np.int64)  # fmt: skip
    parts = [data, addresses, *([] if centres is None else [centres])]
    staged = staging.for_kernels(parts if dabs is None else [*parts, dabs], device)
    if centres is None:  # (a float64 pointer all the same: one variant of the kernel)
        staged.insert(2, triton_math.one_cell(device, torch.float64, 0))
    n_rows, n_columns = box.shape
    cells = n_rows * n_columns
    last = centre = owned = None
    if maps == HOLDERS:  # (one allocation)
        blend, last = torch.empty((2, n_rows, n_columns), device=device).unbind(0)
        last = last.view(torch.int32)
    else:
        blend = torch.empty((n_rows, n_columns), device=device)
    if maps == OWNERS:
        centre = torch.empty((n_rows, n_columns), dtype=torch.float64, device=device)
        owned = torch.empty((n_rows, n_columns), dtype=torch.bool, device=device)
    n_dabs = len(data) // (width + height + 5)  # (each dab's floats and its box's four integers)
    triton_math.launch(
        _kernel(), (-(-cells // BLOCK),),
        staged[0], staged[1], staged[2], blend,
        triton_math.one_cell(device, torch.int32, 0) if last is None else last,
        triton_math.one_cell(device, torch.float64, 0) if centre is None else centre,
        triton_math.one_cell(device, torch.bool, 0) if owned is None else owned,
        n_dabs, width, height, n_columns, cells, box.bin0, box.frame0, first_row, first_column,
        last_column - first_column + 1, side, coverage.n_frames, hardness,
        *triton_math.falloff_arguments(hardness), int(nearest), maps, BLOCK=BLOCK,
        enable_fp_fusion=False,
    )  # fmt: skip
    found = last if maps == HOLDERS else (owned, centre) if maps == OWNERS else None
    return blend, found, staged[3] if dabs is not None else None


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``) with its helper; no
    argument but the block's cells specialised on (one variant for every group)."""
    return triton_math.jit_with(_raise, "falloff", general=True)


def _raise(
    data, addresses, centres, blend, last_out, centre_out, owned_out, n_dabs, W, H, T, cells,
    bin0, frame0, first_row, first_column, tile_columns, side, n_frames, hardness, span, hard,
    nearest, maps, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel (see the module's docstring): ``data`` the packed distances (``[K, W]`` along
    the columns, ``[K, H]`` along the rows, the peaks ``[K]``, then each dab's box in the joint
    box as int32's bits ``[K, 4]``); ``addresses`` the coverage tiles' (int64, tile rows from
    ``first_row`` and ``tile_columns`` columns from ``first_column``, of ``side`` cells, cut at the
    grid's ``n_frames``); the joint box ``cells`` cells, ``T`` a row, its first at ``bin0``,
    ``frame0``; the maps (``maps``: :data:`NO_MAPS`, :data:`HOLDERS`, :data:`OWNERS`) into
    ``last_out``, ``centre_out`` and ``owned_out``, the dabs' centre bins ``centres``."""
    spot = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = spot < cells
    b = spot // T
    t = spot - b * T
    rows = data + n_dabs * W
    peaks = rows + n_dabs * H
    spans = (peaks + n_dabs).to(tl.pointer_type(tl.int32), bitcast=True)
    largest = tl.zeros((BLOCK,), tl.float32)
    closest = tl.full((BLOCK,), 4.0, tl.float32)  # (2 radii: weight 0 where no dab reaches)
    last = tl.full((BLOCK,), -1, tl.int32)
    for k in range(n_dabs):
        x = t - tl.load(spans + 4 * k)
        y = b - tl.load(spans + 4 * k + 2)
        within = inside & (x >= 0) & (t < tl.load(spans + 4 * k + 1))
        within = within & (y >= 0) & (b < tl.load(spans + 4 * k + 3))
        down = tl.load(rows + k * H + y, mask=within, other=2.0)
        at = tl.load(data + k * W + x, mask=within, other=2.0)
        squared = down * down + at * at
        closest = tl.minimum(closest, squared)
        weight = _falloff(tl.sqrt_rn(squared), hardness, span, hard) * tl.load(peaks + k)
        largest = tl.maximum(largest, weight)
        last = tl.where(within, k, last)
    if nearest != 0:
        largest = _falloff(tl.sqrt_rn(closest), hardness, span, hard) * tl.load(peaks)
    at_bin = bin0 + b
    at_frame = frame0 + t
    tile_row = at_bin // side
    tile_column = at_frame // side
    address = tl.load(addresses + (tile_row - first_row) * tile_columns + tile_column
                      - first_column, mask=inside, other=0)  # fmt: skip
    width = tl.minimum(n_frames - tile_column * side, side)
    place = (address.to(tl.pointer_type(tl.float32)) + (at_bin - tile_row * side) * width
             + at_frame - tile_column * side)  # fmt: skip
    covered = tl.maximum(tl.load(place, mask=inside, other=0.0), largest)
    tl.store(place, covered, mask=inside)
    tl.store(blend + spot, covered, mask=inside)
    if maps == 1:  # HOLDERS
        tl.store(last_out + spot, last, mask=inside)
    if maps == 2:  # OWNERS
        held = last >= 0
        centre = tl.load(centres + tl.maximum(last, 0), mask=inside & held, other=float("nan"))
        tl.store(centre_out + spot, centre, mask=inside)
        tl.store(owned_out + spot, held, mask=inside)


tl = _falloff = None  # (bound by jit_with)
