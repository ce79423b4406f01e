"""The pen's kernel in one GPU launch (Triton): :func:`.pen.pen`'s result on an STFT's box, what
its torch path computes in some fifty operations (each cell's offset from the dab's centre, the
partial's frequency seen from it, the main lobe or the band's profile, the partial's phase ramp,
and the sum with what the cell holds).

On CUDA each of those operations costs the host a launch (some 10 us each on the H200's host), so
a pen event there took 1.6 to 1.8 ms of host time whatever its size. Here one program takes one
row of one channel, in chunks of the box's columns. The profile (a line's main lobe or a wider
brush's band), the centre (the dab's, or per cell the centre of the dab that painted it last) are
arguments, not compile-time constants, and no argument is specialised on: one compiled variant
serves every stroke. The arithmetic is the torch path's, in float64 where it is (the offset, the
frequency, the profile, the ramp) and float32 for the sum, without fused multiply-adds; its
float64 numbers travel as two float32 parts each (a float argument would be float32), the hop
over the sample rate as two integers. The result equals torch's to float rounding
(``tests/test_pen_fused.py``).

A stroke's group passes ``into``: the launch then crossfades its result with the box's values and
writes the document's cells itself (:data:`.pen.PenInto`), for what the result's buffer and the
blend's own launch took (on the H200 a pen event 13 to 17 % shorter).

Used on CUDA where Triton imports, for bands evenly spaced without a share of the signal (the
STFT's), unless :data:`~.compiled_math.COMPILED_ENV` is ``0``; the NSGT's bands and a fill's tones
keep the torch path.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from spectropaint.brushes.kernels import originals_fused, triton_math
from spectropaint.brushes.pen_partial import LINE_BINS

BLOCK = 128
"""Box columns a program computes at once (it loops over wider boxes)."""


def available(device: torch.device, context) -> bool:
    """Whether the pen's dab with ``context`` on ``device`` goes through the fused kernel."""
    if context.frame_weight is not None or context.bins is None or context.band_step_hz is None:
        return False
    return triton_math.wanted(device)


def pen(magnitude: torch.Tensor, phase: torch.Tensor, params, context, *, into=None, kept=None):
    """What :func:`.pen.pen` gives for the region ``magnitude``, ``phase`` ``[C, Bm, Tm]`` (on the
    GPU), as new tensors ``[C, B, T]`` on the box; where ``into`` is ``(weight, owner,
    destination)``, that blended with the box's values into the document instead
    (:func:`~.triton_math.put_arguments`), and None.

    ``kept`` (:class:`.originals_fused.Kept`): instead of ``magnitude`` and ``phase`` (None),
    where the box's values lie (its region is the box): the stroke's kept tiles and the document's
    cells; the kernel reads each cell there, with no copy of the box before it."""
    rows, columns = context.inner
    n_rows, width = rows.stop - rows.start, columns.stop - columns.start
    if kept is None:  # the region's values, read as a document with no tile kept
        kept = originals_fused.Kept.of(magnitude, phase)
    channels = kept.shape[0]
    out = triton_math.put_target((2, channels, n_rows, width), kept.document[0].device, into)
    centre = context.centre[1]
    cells = isinstance(centre, torch.Tensor)
    centres = centre if cells else triton_math.one_cell(out.device, torch.float64, 0.0)
    radius_bins = context.radius[1]
    level = context.full_scale * 10.0 ** (params.level_db / 20.0)
    triton_math.launch(
        _kernel(), (channels * n_rows,),
        *originals_fused.kept_arguments(kept), channels, context.bins,
        context.bin_hz, context.frames, centres, out, *triton_math.put_arguments(out, into),
        context.bins.stride(0), context.bin_hz.stride(0), context.frames.stride(0),
        *(centres.stride() if cells else (0, 0)), n_rows, rows.start, columns.start, width,
        context.hop, context.sample_rate,
        *_parts(0.0 if cells else centre), *_parts(context.band_step_hz), *_parts(level),
        int(radius_bins <= LINE_BINS), *_parts(radius_bins), *_parts(context.hardness),
        *_parts(max(1.0 - context.hardness, 1e-9)), BLOCK=BLOCK, enable_fp_fusion=False,
    )  # fmt: skip
    return (out[0], out[1]) if into is None else None


@functools.lru_cache(maxsize=256)
def _parts(value: float) -> tuple[float, float]:
    """A float64 number as two float32 numbers whose sum (in float64) is it to 1e-14 (kept for
    the numbers a stroke gives every launch: its level, radius and hardness, the bands' step)."""
    high = float(np.float32(value))
    return high, float(np.float32(value - high))


@functools.cache
def _kernel():
    """The kernel, compiled (or interpreted, under ``TRITON_INTERPRET=1``) with its helpers; no
    argument specialised on (see the module's docstring)."""
    return triton_math.jit_with(_pen_rows, "atan2", "row_program", "columns", "put",
                                "from_kept", general=True)  # fmt: skip


def _pen_rows(
    magnitude, phase, first, magnitude_c, magnitude_b, magnitude_t, table, table_columns, tile_side,
    n_bins, n_frames, bin0, frame0, channels,
    bins, bin_hz, frames, centres, out, weight, owner, out_magnitude, out_phase,
    weight_b, owner_b, owner_t, out_first, out_c, out_b, out_t, blends, bins_step, bin_hz_step,
    frames_step, centres_b, centres_t, n_rows,
    row0, column0, width, hop, sample_rate, centre_high, centre_low, step_high, step_low,
    level_high, level_low, line, radius_high, radius_low, hardness_high, hardness_low, span_high,
    span_low, BLOCK: tl.constexpr,
):  # fmt: skip
    """The kernel (see the module's docstring): row ``b`` of channel ``c`` (program ``c *
    n_rows + b``). ``magnitude``, ``phase``: the region ``[C, Bm, Tm]``, the box from row
    ``row0`` and column ``column0``; ``bins``, ``bin_hz``, ``frames``: the region's; ``centres``
    ``[B, T]``: the centre bin per cell of the box, added to ``centre_*``; ``out`` ``[2, C, B,
    T]``, or the document (``weight`` to ``blends``: :func:`~.triton_math.put_arguments`);
    ``magnitude`` and ``phase``: the region's values from ``first`` on (through the strides
    ``magnitude_*``) but the cells kept tiles hold (``table`` to ``frame0``:
    :func:`.originals_fused.kept_arguments`);
    ``line``: the main lobe, else the band's profile of ``radius_*``, ``hardness_*`` and
    ``span_*`` (one less the hardness); each ``*_high``, ``*_low``: a float64 number's parts;
    each ``*_c``, ``*_b``, ``*_t`` and ``*_step``: a tensor's strides."""
    c, b, out_row, plane = _row_program(out, n_rows, width)
    frame_seconds = hop.to(tl.float64) / sample_rate.to(tl.float64)
    centre = tl.cast(centre_high, tl.float64) + tl.cast(centre_low, tl.float64)
    step_hz = tl.cast(step_high, tl.float64) + tl.cast(step_low, tl.float64)
    level = tl.cast(level_high, tl.float64) + tl.cast(level_low, tl.float64)
    radius = tl.cast(radius_high, tl.float64) + tl.cast(radius_low, tl.float64)
    hardness = tl.cast(hardness_high, tl.float64) + tl.cast(hardness_low, tl.float64)
    span = tl.cast(span_high, tl.float64) + tl.cast(span_low, tl.float64)
    row_bin = tl.load(bins + (row0 + b) * bins_step)
    row_hz = tl.load(bin_hz + (row0 + b) * bin_hz_step).to(tl.float64)
    # the phase of frame t's window centre: pi per odd bin
    half_turns = (row_bin % 2).to(tl.float64) * 3.141592653589793
    for start in range(0, width, BLOCK):
        x, inside, t = _columns(start, width, column0, BLOCK)
        row_c, row_b = c + x * 0, row0 + b + x * 0  # (each cell's channel and region row)
        here = tl.load(centres + b * centres_b + x * centres_t, mask=inside, other=0.0)
        offset = row_bin.to(tl.float64) - (here + centre)
        frequency = row_hz - offset * step_hz
        # a line's main lobe |W(offset)| / W(0) of the periodic Hann window, 0 beyond 2 bins
        distance = tl.minimum(tl.abs(offset), 2.0)
        near_one = tl.abs(distance - 1.0) < 1e-4
        angle = distance * 3.141592653589793
        sinc = tl.where(distance == 0.0, 1.0, tl.sin(angle) / tl.where(distance == 0.0, 1.0, angle))
        lobe = tl.abs(
            tl.where(near_one, 0.5, sinc / tl.where(near_one, 1.0, 1.0 - distance * distance))
        )
        lobe = tl.where(distance < 2.0, lobe, 0.0)
        # a wider brush's band: 1 within the hardness, a raised cosine to 0 at the radius
        across = tl.abs(offset) / radius
        ramp = tl.minimum(tl.maximum((across - hardness) / span, 0.0), 1.0)
        band = tl.where(across < 1.0, 0.5 + 0.5 * tl.cos(3.141592653589793 * ramp), 0.0)
        amplitude = (level * tl.where(line != 0, lobe, band)).to(tl.float32)
        frame = tl.load(frames + t * frames_step, mask=inside, other=0).to(tl.float64)
        cycles = frequency * frame_seconds * frame
        tone = ((cycles - tl.floor(cycles)) * 6.283185307179586 - half_turns).to(tl.float32)
        was = _from_kept(magnitude, first, magnitude_c, magnitude_b, magnitude_t, table,
                         table_columns, tile_side, n_bins, n_frames, bin0, frame0, row_c, row_c,
                         row_b, t, inside)  # fmt: skip
        was_phase = _from_kept(phase, first, magnitude_c, magnitude_b, magnitude_t, table,
                               table_columns, tile_side, n_bins, n_frames, bin0, frame0,
                               channels + row_c, row_c, row_b, t, inside)  # fmt: skip
        real = was * tl.cos(was_phase) + amplitude * tl.cos(tone)
        imag = was * tl.sin(was_phase) + amplitude * tl.sin(tone)
        _put(out_row, plane, c, b, x, inside, tl.sqrt(real * real + imag * imag),
             _atan2(imag, real), was, was_phase, weight, owner, out_magnitude, out_phase, weight_b,
             owner_b, owner_t, out_first, out_c, out_b, out_t, blends)  # fmt: skip


tl = _atan2 = _row_program = _columns = _put = _from_kept = None  # (bound by _kernel)
