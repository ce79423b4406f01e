"""The clone's kernel in one GPU launch (Triton): :func:`.clone.clone`'s result for a group's
region, what its torch path computes in some ninety operations.

On CUDA each of those operations costs the host a launch (some 10 us each on the H200's host), so
a clone event there took 1.5 to 2 ms of host time whatever its size. Here one program takes one row
of one channel, in chunks of the box's columns. For each cell it computes, at the cell and (for
``auto``) at :data:`~.phase.CONTEXT_FRAMES` frames either side, what the torch path computes per
frame: the source's phase shifted to the destination's frequency, that phase carried forward by
its measured advance over the offset, the continuation's weight and its two alignments; then the
sums over those frames in torch's order, the decision between the two phases, and the copy; cells
whose source lies past the grid keep their own values. The mode, a wide offset and a source past
the grid are arguments, not compile-time constants, and no argument is specialised on: one compiled
variant serves every stroke (each new one would take a second or so, part way through a stroke).

The ramps are computed in float64 per row as torch's path does, the cells in float32 in its order,
without fused multiply-adds; the result equals torch's to float rounding
(``tests/test_clone_kernels.py``). The CPU's counterpart is :mod:`.clone_compiled`.

A stroke's group passes ``into``: the launch then crossfades its result with the box's values and
writes the document's cells itself (:data:`.clone.CloneInto`), for what the result's buffer and
the blend's own launch took (on the H200 a clone event 7 to 11 % shorter).

Used on CUDA where Triton imports, unless :data:`~.compiled_math.COMPILED_ENV` is ``0``.
"""

from __future__ import annotations

import functools

import torch

from spectropaint.brushes.kernels import originals_fused, triton_math
from spectropaint.brushes.kernels.clone_compiled import WIDE_OFFSET
from spectropaint.brushes.kernels.phase import ALIGNMENT, CONTEXT_FRAMES, MARGIN

BLOCK = 128
"""Box columns a program computes at once (it loops over wider boxes)."""
ALL = (0, 2**31 - 1, 0, 2**31 - 1)
"""The source's rows and columns in the grid where all of them are (:attr:`.context.Source.grid`)."""


def available(device: torch.device) -> bool:
    """Whether the clone's dabs on ``device`` go through the fused kernel."""
    return triton_math.wanted(device)


def reads_kept() -> bool:
    """Whether a source inside the grid is given to the kernel where its values lie
    (:attr:`.context.Source.kept`): once the kernel has run, no launch of it is refused
    (:class:`~.triton_math.Unavailable`), so no torch path needs those values as tensors."""
    return triton_math.launched(_kernel())


@functools.cache
def nowhere(device: torch.device) -> originals_fused.Kept:
    """A source wholly past the grid, where the kernel reads none of it: one cell, of 0 (one
    per device, as the cell is)."""
    cell = triton_math.one_cell(device, torch.float32, 0.0)[None]
    return originals_fused.Kept.of(cell, cell)


def clone(magnitude: torch.Tensor, phase: torch.Tensor, params, context, *, into=None,
          kept=None):  # fmt: skip
    """What :func:`.clone.clone` gives for the region ``magnitude``, ``phase`` ``[C, Bm, Tm]``
    (on the GPU), as new tensors ``[C, B, T]`` on the box; where ``into`` is ``(weight, owner,
    destination)``, that blended with the box's values into the document instead
    (:func:`~.triton_math.put_arguments`), and None.

    ``kept`` (:class:`.originals_fused.Kept`): instead of ``magnitude`` and ``phase`` (None),
    where the region's values lie: the stroke's kept tiles and the document's cells; the kernel
    reads each cell there, with no copy of the region before it."""
    source = context.source
    rows, columns = context.inner
    if kept is None:  # the region's values, read as a document with no tile kept
        kept = originals_fused.Kept.of(magnitude, phase)
    channels, _, n_frames = kept.shape
    device = kept.document[0].device
    n_rows, width = rows.stop - rows.start, columns.stop - columns.start
    out = triton_math.put_target((2, channels, n_rows, width), device, into)
    from_source, source_hz = source.kept, source.bin_hz
    grid = ALL if source.grid is None else source.grid
    if from_source is None:  # (read as a document with no tile kept)
        from_source = originals_fused.Kept.of(source.magnitude, source.phase)
        source_hz = source_hz[grid[0] :]  # (from the grid's first row, as a kept source's)
    # the frame before the grid's first, where the source begins before the grid, extrapolated
    extrapolate = int(grid[2] >= 1 and grid[2] + 1 < n_frames + 1)
    low, top = ALIGNMENT
    offset = params.offset_frames
    triton_math.launch(
        _kernel(), (channels * n_rows,),
        *originals_fused.kept_arguments(kept), channels,
        *originals_fused.kept_arguments(from_source), *grid, extrapolate,
        context.bin_hz, source_hz, context.frames, out, *triton_math.put_arguments(out, into),
        context.bin_hz.stride(0), source_hz.stride(0), context.frames.stride(0),
        n_rows, n_frames, rows.start, columns.start, width, context.hop,
        context.sample_rate, -offset, int(abs(offset) > WIDE_OFFSET), int(params.phase != "shift"),
        int(params.phase != "continue"), low, top - low, MARGIN,
        PAD=CONTEXT_FRAMES, BLOCK=BLOCK, enable_fp_fusion=False,
    )  # fmt: skip
    return (out[0], out[1]) if into is None else None


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``) with its helpers; no
    argument specialised on (see the module's docstring)."""
    return triton_math.jit_with(_clone_rows, "wrap", "row_program", "columns", "put",
                                "from_kept",
                                general=True)  # fmt: skip


def _clone_rows(
    magnitude, phase, first, magnitude_c, magnitude_b, magnitude_t,
    table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0, channels,
    source, source_phase, source_first, source_c, source_b, source_t, source_table,
    source_table_columns, source_side, source_bins, source_frames, source_bin0, source_frame0,
    grid_row0, grid_row1, grid_column0, grid_column1, extrapolate, destination_hz, source_hz,
    frames, out, weight, owner, out_magnitude, out_phase, weight_b, owner_b, owner_t, out_first,
    out_c, out_b, out_t, blends, destination_step, source_step, frames_step, n_rows,
    n_frames, row0, column0,
    width, hop, sample_rate, carried_frames, wide, carry, move, low, span, margin,
    PAD: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel (see the module's docstring): row ``b`` of channel ``c`` (program ``c *
    n_rows + b``). ``magnitude`` to ``tile_frame0``: where the region's values ``[C, Bm, Tm]`` lie
    (:func:`.originals_fused.kept_arguments`'), its rows from ``row0``, ``channels`` of them;
    ``source`` to ``source_frame0``: where the source's values ``[C, B, Tm + 1]`` lie, the frame
    before in front (likewise), read in the grid alone: its rows and columns ``grid_row0`` to
    ``grid_column1`` (elsewhere 0, and the cells there keep their own values), the phase of the
    column before the grid's first computed from the two after it where ``extrapolate`` (as
    :func:`~spectropaint.brushes.dab._source` extrapolates a copy); ``source_hz``: the frequencies
    of its rows from ``grid_row0``; ``out`` ``[2, C, B, T]``: the box's columns from
    ``column0``, or the document (``weight`` to ``blends``: :func:`~.triton_math.put_arguments`);
    ``carried_frames``: minus the offset; ``wide``: the carried advance multiplied out in float64;
    ``carry`` and ``move``: whether the ``continue`` and the ``shift`` modes are used (both:
    ``auto``); ``low``, ``span`` and ``margin``: :data:`~.phase.ALIGNMENT`'s lower value and its
    range, :data:`~.phase.MARGIN`; each ``*_c``, ``*_b``, ``*_t``: a tensor's strides. The hop
    over the sample rate is divided here, in float64, as Python divides it for torch (a float
    argument would be float32)."""
    c, b, out_row, plane = _row_program(out, n_rows, width)
    auto = carry * move
    # per row, in float64 as torch's phase ramps: the shift's rate, the source's centre phase
    # carried over the offset and its advance over one frame
    here = tl.load(destination_hz + (row0 + b) * destination_step).to(tl.float64)
    in_hz = tl.minimum(tl.maximum(b - grid_row0, 0), tl.maximum(grid_row1 - grid_row0 - 1, 0))
    there = tl.load(source_hz + in_hz * source_step).to(tl.float64)
    frame_seconds = hop.to(tl.float64) / sample_rate.to(tl.float64)
    shift_rate = (here - there) * frame_seconds
    source_rate = there * frame_seconds
    cycles = source_rate * carried_frames.to(tl.float64)
    centre = ((cycles - tl.floor(cycles)) * 6.283185307179586).to(tl.float32)
    cycles = source_rate * 1.0
    omega = ((cycles - tl.floor(cycles)) * 6.283185307179586).to(tl.float32)
    edge = tl.zeros((BLOCK,), dtype=tl.float32)  # (the extrapolated phase, every cell)
    if extrapolate != 0:
        lane = tl.arange(0, BLOCK) * 0
        row_in = (b + lane >= grid_row0) & (b + lane < grid_row1)  # (a vector: see below)
        grid_first = _from_kept(
            source_phase, source_first, source_c, source_b, source_t,
            source_table, source_table_columns, source_side, source_bins, source_frames,
            source_bin0, source_frame0,
            channels + c + lane, c + lane, b + lane, grid_column0 + lane, row_in,
        )  # fmt: skip
        grid_second = _from_kept(
            source_phase, source_first, source_c, source_b, source_t,
            source_table, source_table_columns, source_side, source_bins, source_frames,
            source_bin0, source_frame0,
            channels + c + lane, c + lane, b + lane, grid_column0 + 1 + lane,
            row_in & (grid_column0 + 1 + lane < grid_column1),
        )  # fmt: skip
        edge = 2.0 * grid_first - grid_second
    for start in range(0, width, BLOCK):
        x, inside, t = _columns(start, width, column0, BLOCK)
        # (each cell's channel, region row and source row)
        row_c, row_b, source_row = c + x * 0, row0 + b + x * 0, b + x * 0
        # (the source's row in the grid, as a vector: the interpreter makes a vector of bools
        # and'ed with one bool a vector of integers, which a load refuses as a mask)
        row_in = (source_row >= grid_row0) & (source_row < grid_row1)
        total = tl.zeros((BLOCK,), dtype=tl.float32)
        along = tl.zeros((BLOCK,), dtype=tl.float32)
        against = tl.zeros((BLOCK,), dtype=tl.float32)
        shifted = tl.zeros((BLOCK,), dtype=tl.float32)
        continued = tl.zeros((BLOCK,), dtype=tl.float32)
        for step in tl.static_range(2 * PAD + 1):
            # torch's order of the sums: the cell, then 1 and 2 frames before and after
            side = (step + 1) // 2 * (1 - 2 * (step % 2))
            at = t + side
            there_t = inside & (at >= 0) & (at < n_frames)
            # (the source's columns at and after: in the grid, and the extrapolated one)
            at_in = there_t & row_in & (at >= grid_column0) & (at < grid_column1)
            next_in = there_t & row_in & (at + 1 >= grid_column0) & (at + 1 < grid_column1)
            before = _from_kept(
                source_phase, source_first, source_c, source_b, source_t,
                source_table, source_table_columns, source_side, source_bins, source_frames,
                source_bin0, source_frame0,
                channels + row_c, row_c, source_row, at, at_in,
            )  # fmt: skip
            before = tl.where(there_t & (at == grid_column0 - 1), edge, before)
            after = _from_kept(
                source_phase, source_first, source_c, source_b, source_t,
                source_table, source_table_columns, source_side, source_bins, source_frames,
                source_bin0, source_frame0,
                channels + row_c, row_c, source_row, at + 1, next_in,
            )  # fmt: skip
            after = tl.where(there_t & (at + 1 == grid_column0 - 1), edge, after)
            turns = shift_rate * tl.load(frames + at * frames_step, mask=there_t, other=0).to(
                tl.float64
            )
            ramp = ((turns - tl.floor(turns)) * 6.283185307179586).to(tl.float32)
            moved = after + ramp
            deviation = _wrap((after - before) - omega)
            wide_carried = deviation.to(tl.float64) * carried_frames.to(tl.float64)
            wide_carried = (
                wide_carried
                - tl.floor(wide_carried * 0.15915494309189535 + 0.5) * 6.283185307179586
            ).to(tl.float32)
            carried = tl.where(wide != 0, wide_carried, deviation * carried_frames.to(tl.float32))
            carried_on = (moved + centre) + carried
            own = _from_kept(
                magnitude, first, magnitude_c, magnitude_b, magnitude_t,
                table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
                row_c, row_c, row_b, at, there_t,
            )  # fmt: skip
            vote = own * _from_kept(
                source, source_first, source_c, source_b, source_t,
                source_table, source_table_columns, source_side, source_bins, source_frames,
                source_bin0, source_frame0,
                row_c, row_c, source_row, at + 1, next_in,
            )  # fmt: skip
            destination = _from_kept(
                phase, first, magnitude_c, magnitude_b, magnitude_t,
                table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
                channels + row_c, row_c, row_b, at, there_t,
            )  # fmt: skip
            total += vote
            along += tl.cos(destination - carried_on) * vote
            against += tl.cos(destination - moved) * vote
            if step == 0:
                shifted = moved
                continued = carried_on
        total = tl.maximum(total, 1e-30)
        along = along / total
        against = against / total
        sure = tl.minimum(tl.maximum((along - low) / span, 0.0), 1.0) * tl.minimum(
            tl.maximum((along - against) / margin, 0.0), 1.0
        )
        blended = _wrap(continued - shifted) * sure + shifted
        chosen = tl.where(auto != 0, blended, tl.where(carry != 0, continued, shifted))
        # where the source lies past the grid, the cell keeps its own values
        keep = ~row_in | (t + 1 < grid_column0) | (t + 1 >= grid_column1)
        copied = _from_kept(
            source, source_first, source_c, source_b, source_t,
            source_table, source_table_columns, source_side, source_bins, source_frames,
            source_bin0, source_frame0,
            row_c, row_c, source_row, t + 1, inside & ~keep,
        )  # fmt: skip
        chosen = _wrap(chosen)
        was = _from_kept(
            magnitude, first, magnitude_c, magnitude_b, magnitude_t,
            table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
            row_c, row_c, row_b, t, inside,
        )  # fmt: skip
        was_phase = _from_kept(
            phase, first, magnitude_c, magnitude_b, magnitude_t,
            table, table_columns, tile_side, tile_bins, tile_frames, tile_bin0, tile_frame0,
            channels + row_c, row_c, row_b, t, inside,
        )  # fmt: skip
        _put(out_row, plane, c, b, x, inside, tl.where(keep, was, copied),
             tl.where(keep, was_phase, chosen), was, was_phase, weight, owner, out_magnitude,
             out_phase, weight_b, owner_b, owner_t, out_first, out_c, out_b, out_t,
             blends)  # fmt: skip


tl = _wrap = _row_program = _columns = _put = _from_kept = None  # (bound by _kernel)
