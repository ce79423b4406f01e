""":func:`.spectral_filter.spectral_filter` on CUDA in one Triton launch for a small region: the
filter's linear convolution summed directly, at the box's cells alone, clamped at 0.

On CUDA the filter was a real 2-D FFT, the product with the taps' spectrum, the inverse FFT and
the slices of the box and its clamp: cuFFT's two calls cost some 60 us each of the H200's host,
whatever the size. The filter reads its whole region (the dab's box and one period of the cutoff
around it), through its taps (:func:`.fft.filter_taps`: the grid's periodic kernel at each
offset), so each cell of the box here sums the region's cells times their taps: ``S T`` products
a cell for a region of ``S x T``, which stays small for small brushes (a radius-8 dab: 289 cells
of 1 089 products; radius 32: 4 225 of 7 225). Larger regions (:data:`MOST_PRODUCTS`) keep the
FFT, whose cost grows with the region alone. The sums are products of small matrices, a tile of
the box and a few rows of the taps a program (:data:`TILE`, :data:`ROWS`). Equal to the FFT's
result to float rounding (``tests/test_filter_fused.py``).

A group of dabs goes through :func:`filter_into` instead: each dab's region is filtered where it
lies in the group's (no stack of regions), and each cell of the joint box that the dab holds last
is blended and written into the document in the same launch, one launch a size of region, where
the dab path took some twenty operations (the stack, this filter, the gather of each cell's result,
the blend): on the H200 a radius-8 filter event went from 1.10 to 0.75 ms (alternated strokes in one
process). Equal to the stacked filter and the fused blend to float rounding.

That launch reads the group's region where its starting values lie
(:class:`~.originals_fused.Kept`: the stroke's kept tiles, the document's cells elsewhere), with
no gathered copy and no launch of its own first. The tiles that this event's record kept are read
from their copies too, not from the document: a dab's region holds cells that other dabs' programs
of the launch write, and the next size's launch reads what this one wrote. Both kernels read
through :func:`~.triton_math._plain_from_kept`, a region given as a tensor as a document with no
tile kept: one compiled variant each.

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import torch

from spectropaint.brushes.kernels import originals_fused, triton_math
from spectropaint.brushes.kernels.originals_fused import Kept

MOST_PRODUCTS = 1 << 26
"""The most products (the box's cells times the region's, a plane) summed directly: radius 32
at the default cutoff is 31 million, radius 64 370 million; past this, the FFT."""
TILE = (16, 64)
"""Rows and columns of the box each program sums. The region's rows whose offset to the tile's
rows is one row of the taps make a product of two matrices (:func:`_plain_sum_taps`): the tile's
rows of the region (by the region's columns) times that row of the taps laid out by the offset of
each of the region's columns to each of the tile's, so each tap read serves the tile's 16 rows.
A program of cells read one tap a product: a radius-32 group's launch took 90 us of the H200
that way, 50 us in tiles of 16 x 64 (57 in 16 x 32, 84 in 16 x 128, 76 in 32 x 32); radius 8, 28
against 21 us."""
COLUMNS = 32
"""Columns of the region each product reads (the matrices' inner size): with 16, a radius-32
group's launch took 52 us of the H200 (tiles of 16 x 64); with 64, 76 us against 62 with 32
(tiles of 16 x 32, 2 warps)."""
ROWS = 4
"""Rows of the taps each program goes through. A tile's programs leave their sums for the last
of them to finish to add up (:func:`_plain_summed`), so the tile's products are spread over the
GPU rather than one after the other in one program: 2 or 3 rows took 53 and 52 us (16 x 64);
8 rows 67 us against 62 (16 x 32)."""
MOST_KEPT = 1 << 22
"""The most floats of programs' sums kept for the next launch (16 MiB): a radius-32 dab's tiles
take 102 400 a channel, a radius-8 dab's 12 288, so a stereo group of 20 and 170 such dabs fits;
a larger launch's are its own, freed after it."""
WARPS = 4
"""Warps a program: 2 took 67 us for a radius-32 group, 8 took 53 us (tiles of 16 x 64)."""
PRECISION = "tf32x3"
"""How the products multiply: three TF32 products for each float32 one (the low bits of each
factor added back), within float32's rounding: a radius-32 dab's sum was 2.7e-7 of its largest
cell from the FFT's in float64, against 7.4e-7 for the cell by cell sum in float32."""


def available(device: torch.device, shape: tuple[int, int], inner: tuple[slice, slice]) -> bool:
    """Whether a region of ``shape`` on ``device`` is filtered at its box ``inner`` (rows, columns
    slices) by the direct sum."""
    rows, columns = inner
    cells = (rows.stop - rows.start) * (columns.stop - columns.start)
    return cells * shape[0] * shape[1] <= MOST_PRODUCTS and triton_math.wanted(device)


def filtered(magnitude: torch.Tensor, taps: torch.Tensor, inner: tuple[slice, slice]):
    """The magnitudes of the box ``inner`` (rows, columns slices) of ``magnitude`` ``[..., S,
    T]`` filtered through ``taps`` ``[2 S - 1, 2 T - 1]`` (float32,
    contiguous, on the device) and clamped at 0: ``[..., B, T']``."""
    rows, columns = inner
    *lead, n_rows, width = magnitude.shape
    planes = magnitude.numel() // (n_rows * width)
    values = magnitude.reshape(planes, n_rows, width)
    height, box_width = rows.stop - rows.start, columns.stop - columns.start
    out = torch.empty((*lead, height, box_width), device=magnitude.device)
    tiles, chunks = _grid(height, box_width, n_rows)
    # (the region read as a document with no tile kept: the kernel that reads kept tiles too)
    region = originals_fused.kept_arguments(Kept.of(values, values))
    triton_math.launch(
        _kernel("filter"), (planes, tiles, chunks),
        *region, taps, out, n_rows, width, rows.start, columns.start, height, box_width,
        *_sums(magnitude.device, planes * tiles, chunks), **_constants(),
    )  # fmt: skip
    return out


def filter_into(kept: Kept, taps, dabs, last, weight, destination, box: tuple[int, int],
                inner: tuple[int, int]) -> None:  # fmt: skip
    """Each dab's region of the group's region (its starting values where they lie, ``kept``:
    the stroke's kept tiles and the document's cells) filtered through ``taps`` (as
    :func:`filtered`: the regions are one size, the ``taps``' ``[2 S - 1, 2 T - 1]``) at the
    cells of its box that it holds last, blended with their original values by ``weight`` ``[B,
    T]`` (as a magnitude-only kernel's blend: ``lerp`` where the weight is above 0), and written
    into ``destination`` (the document's magnitude and phase and the index of the joint box's
    first cell, as :meth:`~spectropaint.transforms.document.Document.cells` gives them): one
    launch for the filter of every dab, the gather of each cell's result and the blend, with no
    copy of the region before it.

    ``dabs`` ``[K, 3]`` (int32, contiguous): each dab's region's first row and column in the
    group's region (its box's in the joint box) and its number in ``last``; ``last`` ``[B, T]``
    (int32): the number of the dab whose box holds each cell last (-1 where none does), or a
    cell of 0 read through strides of 0 for one dab; ``box``: the dabs' boxes' ``(rows,
    columns)``; ``inner``: where the box begins in each dab's region (the kernel's margin)."""
    planes = kept.shape[0]
    n_rows, width = taps.shape[0] // 2 + 1, taps.shape[1] // 2 + 1
    height, box_width = box
    magnitude, _, first = destination
    last_strides = last.stride() if last.numel() > 1 else (0, 0)
    tiles, chunks = _grid(height, box_width, n_rows)
    every_tile = tiles * dabs.shape[0]
    triton_math.launch(
        _kernel("into"), (planes, every_tile, chunks),
        *originals_fused.kept_arguments(kept), taps, dabs, last,
        weight, magnitude, n_rows, width, *inner, height, box_width, tiles, *last_strides,
        weight.stride(0), first, *magnitude.stride(),
        *_sums(magnitude.device, planes * every_tile, chunks), **_constants(),
    )  # fmt: skip


def _grid(height: int, box_width: int, n_rows: int) -> tuple[int, int]:
    """A box's tiles and the programs that sum each (a region of ``n_rows`` rows)."""
    tile_rows, tile_columns = TILE
    tiles = -(-height // tile_rows) * -(-box_width // tile_columns)
    return tiles, -(-(n_rows + tile_rows - 1) // ROWS)


def _constants() -> dict:
    """The kernels' compile-time constants and launch options."""
    return {"TILE_ROWS": TILE[0], "TILE_COLUMNS": TILE[1], "COLUMNS": COLUMNS, "ROWS": ROWS,
            "PRECISION": PRECISION, "num_warps": WARPS, "enable_fp_fusion": False}  # fmt: skip


def _sums(device: torch.device, tiles: int, chunks: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Where a launch's ``chunks`` programs for each of ``tiles`` tiles leave their sums
    (``[tiles, chunks, TILE]`` from the first float), and each tile's count of programs finished
    (int32 at 0; the tile's last program sets it back). Both are kept per device and made larger
    where a launch needs more, the sums up to :data:`MOST_KEPT` floats: a launch that needs more
    has its own."""
    sums, counts = _sums.kept.get(device, (None, None))
    size = tiles * chunks * TILE[0] * TILE[1]
    if counts is None or counts.numel() < tiles:
        counts = torch.zeros(2 * tiles, dtype=torch.int32, device=device)
    if size > MOST_KEPT:
        _sums.kept[device] = sums, counts
        return torch.empty(size, device=device), counts
    if sums is None or sums.numel() < size:
        sums = torch.empty(min(2 * size, MOST_KEPT), device=device)
    _sums.kept[device] = sums, counts
    return sums, counts


_sums.kept = {}


@functools.cache
def _kernel(name: str):
    """Kernel ``name`` (``filter``: :func:`filtered`'s, ``into``: :func:`filter_into`'s), compiled
    (or interpreted, under ``TRITON_INTERPRET=1``) with the helpers they share; no argument
    specialised on."""
    _bind_helpers()
    kernel = {"filter": _filter_cells, "into": _filter_into_cells}[name]
    return triton_math.jit_with(kernel, "from_kept", "lerp", "reflected", general=True)


@functools.cache
def _bind_helpers() -> None:
    """The kernels' shared helpers jitted and bound once (Triton refuses a global that
    changes)."""
    globals()["_sum_taps"] = triton_math.helper(_plain_sum_taps, "from_kept", "reflected")
    globals()["_summed"] = triton_math.helper(_plain_summed)
    globals()["_tile"] = triton_math.helper(_plain_tile)


def _plain_tile(height, box_width, tile, TILE_ROWS: tl.constexpr, TILE_COLUMNS: tl.constexpr):
    """Tile ``tile`` of a box ``height x box_width`` (row by row): its rows' and columns' first
    cell, its rows and columns, and where they are in the box."""
    tile_columns = (box_width + TILE_COLUMNS - 1) // TILE_COLUMNS
    i0 = (tile // tile_columns) * TILE_ROWS
    j0 = (tile % tile_columns) * TILE_COLUMNS
    i = i0 + tl.arange(0, TILE_ROWS)
    j = j0 + tl.arange(0, TILE_COLUMNS)
    return i0, j0, i, j, (i < height)[:, None] & (j < box_width)[None, :]


def _plain_sum_taps(
    magnitude, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
    plane, top, left, taps, n_rows, width, row, column, columns_in,
    TILE_ROWS: tl.constexpr, TILE_COLUMNS: tl.constexpr, COLUMNS: tl.constexpr,
    ROWS: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """The filter's sum over this program's ``ROWS`` rows of the taps (the ``program_id(2)``-th
    of a tile's) at a tile of cells ``[TILE_ROWS, TILE_COLUMNS]`` whose first is row ``row`` and
    column ``column`` of a region ``[n_rows, width]`` (from row ``top`` and column ``left`` of
    channel ``plane`` of the values ``magnitude`` to ``frame0`` give, :func:`~.triton_math.
    _plain_from_kept`'s); ``columns_in``: the tile's columns in its box. The region's cells times
    ``taps`` ``[2 n_rows - 1, 2 width - 1]`` at the offset between the two: at the ``q``-th row of
    the taps from the tile's first row's own, the tile's row ``m`` reads the region's row ``m +
    n_rows - 1 - q``, all through that row of the taps. A cell past the grid (``n_bins x
    n_frames``, the region's first cell at ``bin0``, ``frame0``) is read at its reflection, as
    :func:`~spectropaint.brushes.dab.reflect_index` reflects (the caller's region lies less than
    the grid past it)."""
    taps_width = 2 * width - 1
    m = tl.arange(0, TILE_ROWS)
    source_step = tl.arange(0, COLUMNS)
    columns = column + tl.arange(0, TILE_COLUMNS)
    zeros = m[:, None] * 0 + source_step[None, :] * 0  # (the channel as a tile, as it takes)
    total = tl.zeros((TILE_ROWS, TILE_COLUMNS), dtype=tl.float32)
    first_q = tl.program_id(2) * ROWS
    for q in range(first_q, tl.minimum(first_q + ROWS, n_rows + TILE_ROWS - 1)):
        source_row = m + (n_rows - 1) - q
        rows_in = (source_row >= 0) & (source_row < n_rows)
        reflected_rows = _reflected(bin0 + top + source_row, n_bins) - bin0
        tap_row = taps + (row + q) * taps_width + (width - 1)
        in_taps = row + q + source_step * 0 < 2 * n_rows - 1  # (as a vector: a mask's)
        for start in range(0, width, COLUMNS):
            source_column = start + source_step
            present = source_column < width
            cells = _from_kept(
                magnitude, first, plane_stride, row_stride, column_stride,
                table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
                plane + zeros, plane + zeros, reflected_rows[:, None] + zeros,
                _reflected(frame0 + left + source_column[None, :], n_frames) - frame0 + zeros,
                rows_in[:, None] & present[None, :],
            )  # fmt: skip
            weights = tl.load(tap_row + columns[None, :] - source_column[:, None],
                              mask=(present & in_taps)[:, None] & columns_in[None, :],
                              other=0.0)  # fmt: skip
            total = tl.dot(cells, weights, total, input_precision=PRECISION)
    return total


def _plain_summed(total, sums, counts, tile, inside,
                  TILE_ROWS: tl.constexpr, TILE_COLUMNS: tl.constexpr):  # fmt: skip
    """The sums ``total`` of the programs of tile ``tile`` (one a ``program_id(2)``) added up, in
    their order, by the last of them to finish (``sums``, ``counts``: :func:`_sums`'; it sets the
    count back to 0 for the next launch), 0 in the others; and ``inside`` where this program is
    that last, nowhere in the others."""
    chunk = tl.program_id(2)
    chunks = tl.num_programs(2)
    cells = tl.arange(0, TILE_ROWS)[:, None] * TILE_COLUMNS + tl.arange(0, TILE_COLUMNS)[None, :]
    size = TILE_ROWS * TILE_COLUMNS
    tl.store(sums + (tile * chunks + chunk) * size + cells, total, mask=inside)
    tl.debug_barrier()  # (every lane's sum stored before the count says so)
    arrived = tl.atomic_add(counts + tile, 1, sem="acq_rel")
    whole = tl.zeros((TILE_ROWS, TILE_COLUMNS), dtype=tl.float32)
    if arrived == chunks - 1:
        for each in range(0, chunks):
            whole += tl.load(sums + (tile * chunks + each) * size + cells, mask=inside, other=0.0,
                             cache_modifier=".cg")  # fmt: skip
        tl.store(counts + tile, 0)
    return whole, inside & (cells * 0 + arrived == chunks - 1)


def _filter_cells(
    magnitude, phase, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
    taps, out, n_rows, width, row0, column0, height, box_width, sums, counts,
    TILE_ROWS: tl.constexpr, TILE_COLUMNS: tl.constexpr, COLUMNS: tl.constexpr,
    ROWS: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """The kernel: tile ``program_id(1)`` of plane ``program_id(0)`` of ``out`` ``[planes,
    height, box_width]`` (contiguous), the box whose first cell is ``(row0, column0)`` of the
    region ``[planes, n_rows, width]`` (``magnitude`` to ``frame0``: :func:`.originals_fused.
    kept_arguments`', ``phase`` unread): each cell the sum over the region's cells of their value
    times ``taps`` ``[2 n_rows - 1, 2 width - 1]`` at the offset between the two, at least 0;
    ``ROWS`` rows of the taps a program (``program_id(2)``), added up by the tile's last."""
    plane = tl.program_id(0)
    i0, j0, i, j, inside = _tile(height, box_width, tl.program_id(1), TILE_ROWS, TILE_COLUMNS)
    total = _sum_taps(
        magnitude, first, plane_stride, row_stride, column_stride,
        table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
        plane, 0, 0, taps, n_rows, width, row0 + i0, column0 + j0, j < box_width,
        TILE_ROWS, TILE_COLUMNS, COLUMNS, ROWS, PRECISION,
    )  # fmt: skip
    tile = plane * tl.num_programs(1) + tl.program_id(1)
    whole, finished = _summed(total, sums, counts, tile, inside, TILE_ROWS, TILE_COLUMNS)
    at = out + plane * (height * box_width) + i[:, None] * box_width + j[None, :]
    tl.store(at, tl.maximum(whole, 0.0), mask=finished)


def _filter_into_cells(
    magnitude, phase, first, plane_stride, row_stride, column_stride,
    table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
    taps, dabs, last, weight, out, n_rows, width, row0, column0, height, box_width, tiles,
    last_row, last_column, weight_row, out_first, out_plane, out_row, out_column, sums, counts,
    TILE_ROWS: tl.constexpr, TILE_COLUMNS: tl.constexpr, COLUMNS: tl.constexpr,
    ROWS: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """The kernel: a tile of a dab's box in plane ``program_id(0)`` (``program_id(1)``: the dab,
    then the tile, of ``tiles`` a dab's box, :func:`_grid`'s), ``ROWS`` rows of the taps
    (``program_id(2)``, added up by the tile's last program). ``dabs`` ``[K, 3]`` gives each dab's region's first row and column in the group's
    region (its starting values: ``magnitude`` to ``frame0``, :func:`.originals_fused.
    kept_arguments`', ``phase`` unread; each dab's region ``n_rows x width``, its box ``height x
    box_width`` from the region's ``(row0, column0)``) and the dab's number; the box's cell ``(i,
    j)`` is the joint box's ``(top + i, left + j)``. Each cell that ``last`` (the number of the
    dab whose box holds it last) gives to this dab is filtered as :func:`_filter_cells` does,
    clamped at 0, blended with its original value (the group region's, under the cell) by
    ``weight``'s cell as :func:`torch.lerp` does where the weight is above 0, and written into
    ``out`` (through its strides, from ``out_first``)."""
    plane = tl.program_id(0)
    dab = tl.program_id(1) // tiles
    i0, j0, i, j, inside = _tile(height, box_width, tl.program_id(1) % tiles, TILE_ROWS,
                                 TILE_COLUMNS)  # fmt: skip
    top = tl.load(dabs + 3 * dab)
    left = tl.load(dabs + 3 * dab + 1)
    number = tl.load(dabs + 3 * dab + 2)
    total = _sum_taps(
        magnitude, first, plane_stride, row_stride, column_stride,
        table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
        plane, top, left, taps, n_rows, width, row0 + i0, column0 + j0, j < box_width,
        TILE_ROWS, TILE_COLUMNS, COLUMNS, ROWS, PRECISION,
    )  # fmt: skip
    tile = plane * tl.num_programs(1) + tl.program_id(1)
    whole, finished = _summed(total, sums, counts, tile, inside, TILE_ROWS, TILE_COLUMNS)
    row = top + i[:, None]
    column = left + j[None, :]
    held = tl.load(last + row * last_row + column * last_column, mask=finished, other=-1)
    owned = finished & (held == number)
    zeros = row * 0 + column * 0
    old = _from_kept(
        magnitude, first, plane_stride, row_stride, column_stride,
        table, table_columns, tile_side, n_bins, n_frames, bin0, frame0,
        plane + zeros, plane + zeros, row0 + row + zeros, column0 + column + zeros, owned,
    )  # fmt: skip
    amount = tl.load(weight + row * weight_row + column, mask=owned, other=0.0)
    at = out_first + plane * out_plane + row * out_row + column * out_column
    tl.store(out + at, _lerp(old, tl.maximum(whole, 0.0), amount), mask=owned)


tl = _sum_taps = _summed = _tile = _from_kept = _lerp = _reflected = None  # (bound by _kernel)
