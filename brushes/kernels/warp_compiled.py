"""Warp's dabs of one group compiled for the CPU (Numba): what :class:`.warp.WarpPlan` plans and
:func:`~spectropaint.brushes.dab.drag_windows` computes dab after dab, in one call.

On a CPU the torch path is op-bound: a planned warp group costs some hundred operations to plan
and fifty a dab, a microsecond or more each, so a warp event at radius 8 took 1.6 ms at one
thread (issue 15 asks for 1 ms). Here one compiled function takes the group's dabs in order. For
each dab it makes two passes over the dab's window, so that a dab reads what the previous one
left:

1. every window cell finds the point it samples (``amount * weight * step`` behind it, clamped to
   the dab's own region), its four neighbours in the values held (reflected past the grid as the
   plan's maps say) and their bilinear weights; carries each neighbour's phase in each mode
   (``continue``: by its measured drift over the columns moved; ``shift``: by its row's advance
   per frame), sums the phasors into a magnitude and one moved phase per mode, and for ``auto``
   the terms of the continuation's alignment;
2. every cell of weight above 0 sums those terms over :data:`~.phase.CONTEXT_FRAMES` columns
   either side, decides how surely the destination continues, blends the phases, and crossfades
   the result into the values through the dab's weight.

The arithmetic is the plan's, cell by cell, in float32; the sines, cosines and arctangents are
Cephes' polynomials (the argument reduced in float64), written without branches so that the
compiler vectorises the cells of a row. A group's result equals the torch path to float rounding
(``tests/test_warp_fused.py`` checks it group by group, with the GPU's kernel,
:mod:`.warp_fused`).

Used on the CPU where Numba imports; ``SPECTROPAINT_FUSED_WARP=0`` turns it off (as it does the
GPU's). Compiled at its first use (a few seconds), then loaded from Numba's cache on disk.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from spectropaint.brushes.kernels import compiled_math
from spectropaint.brushes.kernels.phase import ALIGNMENT, CONTEXT_FRAMES, MARGIN
from spectropaint.brushes.kernels.warp import FUSED_ENV


def available(device: torch.device) -> bool:
    """Whether a group's dabs on ``device`` go through the compiled kernel (the first call imports
    Numba: some 0.3 s)."""
    return wanted(device) and _kernel() is not None


def wanted(device: torch.device) -> bool:
    """Whether the compiled kernel is for ``device`` and turned off neither by
    :data:`FUSED_ENV` nor by :data:`~.compiled_math.COMPILED_ENV`, and Numba is installed;
    without importing it."""
    if compiled_math.switched_off(FUSED_ENV):
        return False
    return compiled_math.wanted(device)


def apply(current: torch.Tensor, windows, original: torch.Tensor, prepared: dict, params) -> None:
    """A group's ``K`` dabs applied in order to ``current`` ``[2, C, R, S]`` (contiguous, on the
    CPU), in place, as :func:`~spectropaint.brushes.dab.drag_planned` applies them.

    Parameters
    ----------
    windows : spectropaint.brushes.dab.DragWindows
        The dabs' windows, masks and maps.
    original : torch.Tensor [shape=(2, C, Bm, Tm)]
        The group's region as the stroke began.
    prepared : dict
        :func:`.warp.warp_prepare`'s tensors for the group's region.
    params : spectropaint.brushes.kernels.warp.WarpParams
    """
    low, top = ALIGNMENT
    ramp = prepared["ramp"]
    drift = prepared.get("drift")
    omega = prepared.get("omega")
    channels, region_width = current.shape[1], ramp.shape[-1]
    window_cells, outside = windows.cells()
    starting, start_cells = _rows_apart(original, windows.region_rows[:, :, None],
                                        windows.region_columns[:, None, :])  # fmt: skip
    if drift is None:  # (a mode not used: offsets of 0)
        drift = torch.zeros((1, ramp.numel()))
    if omega is None:
        omega = torch.zeros(ramp.shape)
    _kernel()(
        current.view(2, channels, -1).numpy(),
        np.asarray(windows.masks),
        np.asarray(windows.corners, dtype=np.int64),
        (params.amount * windows.step).astype(np.float32),  # (as the plan rounds it)
        np.asarray(windows.dest_columns, dtype=np.float32),
        np.asarray(windows.dest_rows, dtype=np.float32),
        np.asarray(windows.high, dtype=np.float32),
        np.asarray(windows.column_maps, dtype=np.int64),
        np.asarray(windows.row_maps, dtype=np.int64),
        window_cells,
        start_cells,
        outside,
        ramp.numpy().reshape(-1),
        drift.reshape(drift.shape[0], -1).numpy(),
        omega[:, 0].contiguous().numpy(),
        starting,
        region_width,
        current.shape[-1],
        params.phase != "shift",
        params.phase != "continue",
        np.float32(low),
        np.float32(1.0 / (top - low)),
        np.float32(1.0 / MARGIN),
    )


def prepare(
    original: torch.Tensor,
    bin_hz: torch.Tensor,
    frames: torch.Tensor,
    params,
    *,
    hop: int,
    sample_rate: int,
) -> dict[str, torch.Tensor]:
    """:func:`.warp.warp_prepare`'s tensors (its arguments and results), in one compiled call
    instead of some fifteen operations: the ramps in float64 as there, reduced to one cycle and
    rounded to float32, the drift wrapped as :func:`.phase.wrap` wraps it (a half turn exactly
    may round the other way)."""
    rate = bin_hz.to(torch.float64).numpy() * (hop / sample_rate)
    ramp = np.empty((len(rate), len(frames)), dtype=np.float32)
    centre = np.empty(len(rate), dtype=np.float32)
    drift = None
    if params.phase != "shift":
        channels = original.shape[1]
        drift = np.empty((channels, *ramp.shape), dtype=np.float32)
        phases = original[1].numpy()
    else:
        phases = np.zeros((1, 1, 1), dtype=np.float32)
    _preparer()(rate, frames.to(torch.float64).numpy(), phases, ramp, centre, drift)
    prepared = {"ramp": torch.from_numpy(ramp)}
    if drift is not None:
        prepared["drift"] = torch.from_numpy(drift)
    if params.phase != "continue":
        omega = torch.from_numpy((2 * math.pi * hop / sample_rate) * bin_hz.numpy()).float()
        prepared["omega"] = omega[:, None].expand(ramp.shape)
    return prepared


def _rows_apart(values: torch.Tensor, rows: np.ndarray, columns: np.ndarray):
    """``values`` ``[2, C, B, T]`` (its rows may lie apart: a view of a wider region) as an
    array ``[2, C, N]`` over the same memory, and the places in it of the cells at ``rows`` and
    ``columns`` (no copy of the values)."""
    if values.stride(-1) != 1:
        values = values.contiguous()
    row_step = values.stride(-2)
    span = (values.shape[-2] - 1) * row_step + values.shape[-1]
    flat = values.as_strided((*values.shape[:2], span), (*values.stride()[:2], 1))
    return flat.numpy(), rows * row_step + columns


@functools.cache
def _kernel():
    """:func:`_warp_group` and its helpers as Numba functions (compiled at the first call), or
    None where Numba does not import."""
    global _tap, _carry_and_sum, _decide_and_blend
    _carry_and_sum = compiled_math.compile_with(
        _plain_carry_and_sum, "sincos", "atan2", "crossfade", "around", "wrap", "clamp01"
    )  # (binds the helpers for every function of this module)
    if _carry_and_sum is None:
        return None
    _tap = compiled_math.inline(_plain_tap)
    _decide_and_blend = compiled_math.compile_kernel(_plain_decide_and_blend)
    return compiled_math.compile_kernel(_warp_group, nogil=True)


@functools.cache
def _preparer():
    """:func:`_plain_prepare` compiled."""
    return compiled_math.compile_kernel(_plain_prepare)


def _plain_prepare(rate, frames, phases, ramp, centre, drift):
    """The ramp ``2 pi frac(rate f)`` of each row's ``rate`` (cycles a frame) at each of
    ``frames`` and at frame 1 (``centre``), in float64, rounded to float32; and unless ``drift``
    is None the drift of ``phases`` ``[C, B, T + 1]``: each frame's advance less the centre's."""
    turn = 2 * np.pi
    for b in range(rate.shape[0]):
        cycles = rate[b] * 1.0
        centre[b] = np.float32((cycles - np.floor(cycles)) * turn)
        for t in range(frames.shape[0]):
            cycles = rate[b] * frames[t]
            ramp[b, t] = np.float32((cycles - np.floor(cycles)) * turn)
    if drift is None:
        return
    for c in range(drift.shape[0]):
        for b in range(drift.shape[1]):
            for t in range(drift.shape[2]):
                advance = (phases[c, b, t + 1] - phases[c, b, t]) - centre[b]
                turns = np.rint(advance * np.float32(1 / (2 * np.pi)))  # (half to even)
                drift[c, b, t] = advance - turns * np.float32(2 * np.pi)


def _warp_group(
    held, masks, corners, shift, dest_columns, dest_rows, high, column_maps, row_maps,
    window_cells, start_cells, outside, ramp, drift, omega, starting, region_width, width, carry,
    move, low, along_scale, margin_scale,
):  # fmt: skip
    """The kernel (see the module's docstring). ``held`` ``[2, C, R S]``: magnitudes, then phases;
    ``ramp`` ``[Bm Tm]``, ``drift`` ``[C, Bm Tm]`` and ``omega`` ``[Bm]`` flattened; ``starting``
    ``[2, C, N]``: the region as the stroke began, at ``start_cells``; ``carry``
    and ``move``: whether the ``continue`` and the ``shift`` modes are used (both: ``auto``).

    The cells of a window row are the innermost loop, without branches, so that they vectorise."""
    n_dabs, height, window = masks.shape
    channels = held.shape[1]
    last_row, last_drift = omega.shape[0] - 1, drift.shape[0] - 1
    f32 = np.float32
    one, zero = f32(1.0), f32(0.0)
    auto = carry and move
    pad = CONTEXT_FRAMES
    # Each window row is computed in loops over its cells: the look-ups by index in plain loops,
    # the arithmetic in loops without branches over C-contiguous rows of values by cell (a view
    # with strides of its own would need gathers, which the compiler avoids here):
    #   ``row_in``: 0-3 the neighbours' weights, 4-7 their magnitudes, 8-11 their phases less
    #   their ramps, 12-15 the continue mode's carry, 16-17 the shift's (by row), 18 the cell's
    #   ramp, 19-20 its magnitude and phase as the stroke began (0 outside the dab's box)
    #   ``moved[c, y]``: magnitude, moved phase (continue, shift), the continuation's terms
    #   (weight, along, against), padded with zeros either side for the sums over columns
    row_in = np.empty((21, window), dtype=np.float32)
    moved = np.zeros((channels, height, 6, window + 2 * pad), dtype=np.float32)
    # the neighbours' places in the values held and in the region, their ramps, the columns moved
    places = np.empty((4, window), dtype=np.int64)
    regions = np.empty((4, window), dtype=np.int64)
    ramps = np.empty((4, window), dtype=np.float32)
    columns_moved = np.empty((2, window), dtype=np.float32)
    blended = np.empty((2, window), dtype=np.float32)
    for k in range(n_dabs):
        row0, column0 = corners[0, k], corners[1, k]
        region_rows, held_rows = row_maps[0, k], row_maps[1, k]
        region_columns, held_columns = column_maps[0, k], column_maps[1, k]
        for y in range(height):  # pass 1: gather, carry, sum
            dest_b, mask, cells, starts = (
                dest_rows[k, y],
                masks[k, y],
                window_cells[k, y],
                start_cells[k, y],
            )
            for x in range(window):  # the sampled point, its neighbours, their weights
                weight, dest_t = mask[x], dest_columns[k, x]
                source_t = min(max(dest_t - shift[k, 0] * weight, zero), high[k, 0])
                source_b = min(max(dest_b - shift[k, 1] * weight, zero), high[k, 1])
                low_t = min(np.floor(source_t), high[k, 0] - one)
                low_b = min(np.floor(source_b), high[k, 1] - one)
                frac_t, frac_b = source_t - low_t, source_b - low_b
                t0, b0 = np.uintp(low_t), np.uintp(low_b)
                t1, b1 = t0 + np.uintp(1), b0 + np.uintp(1)
                r0, r1 = region_rows[b0], region_rows[b1]
                h0, h1 = held_rows[b0] * width, held_rows[b1] * width
                c0, c1 = region_columns[t0], region_columns[t1]
                g0, g1 = held_columns[t0], held_columns[t1]
                regions[0, x], regions[1, x] = r0 * region_width + c0, r0 * region_width + c1
                regions[2, x], regions[3, x] = r1 * region_width + c0, r1 * region_width + c1
                places[0, x], places[1, x] = h0 + g0, h0 + g1
                places[2, x], places[3, x] = h1 + g0, h1 + g1
                w_t0, w_b0 = one - frac_t, one - frac_b
                row_in[0, x], row_in[1, x] = w_b0 * w_t0, w_b0 * frac_t
                row_in[2, x], row_in[3, x] = frac_b * w_t0, frac_b * frac_t
                columns_moved[0, x], columns_moved[1, x] = dest_t - low_t, dest_t - (low_t + one)
                row_in[16, x] = omega[np.uintp(min(r0, last_row))] * (source_t - dest_t)
                row_in[17, x] = omega[np.uintp(min(r1, last_row))] * (source_t - dest_t)
                for tap in range(4):
                    ramps[tap, x] = ramp[np.uintp(regions[tap, x])]
                row_in[18, x] = ramp[np.uintp(cells[x])]
            for c in range(channels):
                magnitudes, phases, drifts = held[0, c], held[1, c], drift[min(c, last_drift)]
                for tap in range(4):  # gathered (loads by index, which do not vectorise here)
                    for x in range(window):
                        place = np.uintp(places[tap, x])
                        row_in[4 + tap, x] = magnitudes[place]
                        row_in[8 + tap, x] = phases[place] - ramps[tap, x]
                        row_in[12 + tap, x] = (drifts[np.uintp(regions[tap, x])]
                                               * columns_moved[tap % 2, x])  # fmt: skip
                was, was_phase, out = starting[0, c], starting[1, c], moved[c, y]
                for x in range(window):
                    cell = np.uintp(starts[x])
                    row_in[19, x] = zero if outside[k, y, x] else was[cell]
                    row_in[20, x] = was_phase[cell]
                _carry_and_sum(row_in, out, pad)
        for c in range(channels):  # pass 2: decide, blend into the window
            magnitudes, phases = held[0, c], held[1, c]
            for y in range(height):
                first, mask, out = (row0 + y) * width + column0, masks[k, y], moved[c, y]
                _decide_and_blend(out, mask, magnitudes[first : first + window],
                                  phases[first : first + window], blended, pad, auto, carry, low,
                                  along_scale, margin_scale)  # fmt: skip
                for x in range(window):  # cells of weight 0 keep their values
                    if mask[x] > zero:
                        magnitudes[first + x], phases[first + x] = blended[0, x], blended[1, x]


def _plain_decide_and_blend(
    out, mask, magnitudes, phases, blended, pad, auto, carry, low, along_scale, margin_scale
):  # fmt: skip
    """Pass 2's arithmetic on a window row: ``out`` (pass 1's rows, padded) decided between the
    modes and crossfaded with the row's values (``magnitudes``, ``phases``) through ``mask``,
    into ``blended`` ``[2, W]``."""
    for x in range(mask.shape[0]):
        at = np.uintp(pad + x)
        total = max(_around(out, 3, at), np.float32(1e-30))
        along, against = _around(out, 4, at) / total, _around(out, 5, at) / total
        sure = _clamp01((along - low) * along_scale) * _clamp01((along - against) * margin_scale)
        carried, shifted = out[1, at], out[2, at]
        phase = _wrap(carried - shifted) * sure + shifted
        phase = phase if auto else (carried if carry else shifted)
        magnitude, phase = _crossfade(magnitudes[x], phases[x], out[0, at], _wrap(phase), mask[x])
        blended[0, x] = magnitude
        blended[1, x] = phase


def _plain_carry_and_sum(row_in, row_out, pad):
    """Pass 1's arithmetic on a window row (see :func:`_warp_group` for the rows), the four taps
    written out (a loop over them, not unrolled in time, kept the cells' loop from vectorising)."""
    for x in range(row_in.shape[1]):
        m0, rc0, ic0, rs0, is0 = _tap(row_in[0, x], row_in[4, x], row_in[8, x], row_in[12, x],
                                      row_in[16, x])  # fmt: skip
        m1, rc1, ic1, rs1, is1 = _tap(row_in[1, x], row_in[5, x], row_in[9, x], row_in[13, x],
                                      row_in[16, x])  # fmt: skip
        m2, rc2, ic2, rs2, is2 = _tap(row_in[2, x], row_in[6, x], row_in[10, x], row_in[14, x],
                                      row_in[17, x])  # fmt: skip
        m3, rc3, ic3, rs3, is3 = _tap(row_in[3, x], row_in[7, x], row_in[11, x], row_in[15, x],
                                      row_in[17, x])  # fmt: skip
        magnitude = ((m0 + m1) + m2) + m3
        ramp = row_in[18, x]
        carried = _atan2(((ic0 + ic1) + ic2) + ic3, ((rc0 + rc1) + rc2) + rc3) + ramp
        shifted = _atan2(((is0 + is1) + is2) + is3, ((rs0 + rs1) + rs2) + rs3) + ramp
        term, was_phase = row_in[19, x] * magnitude, row_in[20, x]
        at = np.uintp(pad + x)
        row_out[0, at], row_out[1, at], row_out[2, at] = magnitude, carried, shifted
        row_out[3, at] = term
        row_out[4, at] = _sincos(was_phase - carried)[1] * term
        row_out[5, at] = _sincos(was_phase - shifted)[1] * term


def _plain_tap(weight, magnitude, deviation, carried_by, shifted_by):
    """A neighbour's weighted magnitude and its weighted phasor in each mode (continue, shift):
    ``(magnitude, real, imaginary, real, imaginary)``."""
    sin_c, cos_c = _sincos(deviation + carried_by)
    sin_s, cos_s = _sincos(deviation + shifted_by)
    return magnitude * weight, weight * cos_c, weight * sin_c, weight * cos_s, weight * sin_s


_sincos = _atan2 = _tap = _crossfade = _around = _wrap = _clamp01 = _carry_and_sum = (
    _decide_and_blend
) = None  # (bound by _kernel)
