"""The NSGT's settle work over a few cells: a model of synthesis then analysis inside each slice's
spectrum, and the analysis of a change of the sound over the bands it reaches.

A settle (:mod:`~spectropaint.transforms.settle_change`) iterates on the analysis, on the imposed
cells, of the synthesis of a change on those cells. Exactly, that is an inverse FFT and an FFT of
every slice holding imposed cells (12 s of samples a slice at 48 bins per octave). Within one slice,
though, synthesis then analysis without the slice window is a few small operations on the bins the
cells' bands reach: each band's ``M``-point FFT, weighted by the dual window and added into the
slice's spectrum, then read back under the analysis windows and inverse-transformed (``irfft``
then ``rfft`` of a spectrum is the spectrum itself, bar the imaginary parts at 0 Hz and at
Nyquist). :meth:`SliceModel.apply` does that for the bands holding imposed cells.

What the model leaves out is the slice window: a change is seen in full by the slice that
synthesised it and not by the slices of the other parity. That is exact where the change lies in
the window's flat middle (three quarters of the time) and, for erase and gain, close in the
cross-fades too (the change each parity synthesises from its own coefficients sums to the change
of the signal both windows share). The settle then synthesises the change found and analyses it
exactly (:meth:`SliceModel.analyse_change`), so what it stores is always the analysis of what is
heard; the model only decides how close that comes to what was painted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from spectropaint.transforms import fft_ops


@dataclass
class _Rows:
    """The imposed cells of one piece in one slice: bands ``[b0, b1)`` of its group, the slice's
    frames ``[f0, f1)`` (counted from the slice's first frame) and where they sit in the piece's
    mask (bands from ``row0``, frames from ``t0``); once placed (:meth:`SliceModel._place`), the
    cells' positions among the values (``source``) and among the bands' ``M`` frames
    (``target``), and the bands' taps."""

    piece: int
    group: int
    b0: int
    b1: int
    f0: int
    f1: int
    row0: int
    t0: int
    source: torch.Tensor | None = None
    target: torch.Tensor | None = None
    taps: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None


@functools.lru_cache(maxsize=32)
def _band_bins(tensors) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per band of a group: the first and last rfft bin its analysis taps read, and the largest
    tap weight (doubled where a bin is read twice)."""
    index = tensors.index.cpu().numpy().reshape(-1, tensors.m)
    weight = np.abs(tensors.analysis[:, 0].cpu().numpy()).reshape(-1, tensors.m)
    tapped = weight > 0
    lo = np.where(tapped, index, np.iinfo(np.int64).max).min(axis=1)
    hi = np.where(tapped, index, -1).max(axis=1)
    # a band whose taps are mirrored may read a bin twice (the 0 Hz and Nyquist bands)
    twice = np.array([np.unique(i[t]).size < t.sum() for i, t in zip(index, tapped, strict=True)])
    return lo, hi, weight.max(axis=1) * np.where(twice, 2.0, 1.0)


class SliceModel:
    """Synthesis then analysis of a change on the imposed cells, per slice, without the slice
    window (see the module).

    Parameters
    ----------
    transform : NSGT
    pieces : list of (block, bin0, frame0, mask)
        The imposed cells: ``mask`` (bool ``[bins, frames]``) covers bins ``bin0...`` and frames
        ``frame0...`` of the block. The flat order of the values :meth:`apply` reads and returns
        is each piece's cells in row-major order, the pieces in order.
    """

    def __init__(self, transform, pieces):
        self.transform = transform
        self.device = transform.device
        self.pieces = pieces
        self.index = [
            torch.nonzero(mask.flatten()).flatten().to(self.device) for *_, mask in pieces
        ]
        slices: dict[tuple[int, int], list[_Rows]] = {}
        for number, (block, bin0, frame0, mask) in enumerate(pieces):
            group, parity = transform.group_of(block)
            m = transform.group_tensors[group].m
            rows = torch.nonzero(mask.any(dim=1)).flatten()
            row0, row1 = int(rows[0]), int(rows[-1]) + 1
            frame1 = frame0 + mask.shape[1]
            for r in range(frame0 // m, -(-frame1 // m)):
                lo, hi = max(frame0, r * m), min(frame1, (r + 1) * m)
                if not mask[:, lo - frame0 : hi - frame0].any():
                    continue
                slices.setdefault((parity, r), []).append(
                    _Rows(
                        number,
                        group,
                        bin0 + row0,
                        bin0 + row1,
                        lo - r * m,
                        hi - r * m,
                        row0,
                        lo - frame0,
                    )
                )
        self.held = set(slices)  # (parity, slice of that parity) holding imposed cells
        self.size = sum(
            (row.b1 - row.b0) * transform.group_tensors[row.group].m
            for rows in slices.values()
            for row in rows
        )
        """Coefficients :meth:`apply` transforms per channel (its cost)."""
        # sqrt(2 N) max |a_k| / M_k: the largest coefficient per unit of windowed signal energy
        self._energy_bound = (2 * transform.slice_length) ** 0.5 * max(
            float(tensors.analysis[:, 0].view(-1, tensors.m).norm(dim=1).max()) / tensors.m
            for tensors in transform.group_tensors
        )
        self.slices = list(slices.values())
        self.bins = []  # per slice: its compact spectrum's first bin and end
        for rows in self.slices:
            reach = [_band_bins(transform.group_tensors[row.group]) for row in rows]
            lo = min(
                int(lows[row.b0 : row.b1].min())
                for row, (lows, _, _) in zip(rows, reach, strict=True)
            )
            hi = max(
                int(highs[row.b0 : row.b1].max())
                for row, (_, highs, _) in zip(rows, reach, strict=True)
            )
            self.bins.append((lo, hi + 1))
            for row in rows:
                self._place(row, lo, hi + 1)

    def _place(self, row: _Rows, lo: int, hi: int) -> None:
        """Fill ``row``'s positions and taps (bins counted from ``lo``; the taps outside a
        band's window, weighted 0, are pointed at ``[lo, hi)`` too)."""
        offsets = [0]
        for index in self.index:
            offsets.append(offsets[-1] + index.numel())
        mask = self.pieces[row.piece][3]
        rank = torch.full((mask.numel(),), -1, dtype=torch.int64)
        rank[self.index[row.piece].cpu()] = torch.arange(self.index[row.piece].numel())
        rows = slice(row.row0, row.row0 + row.b1 - row.b0)
        cells = rank.view(mask.shape)[rows, row.t0 : row.t0 + row.f1 - row.f0]
        band, frame = torch.nonzero(cells >= 0, as_tuple=True)
        m = self.transform.group_tensors[row.group].m
        row.source = (offsets[row.piece] + cells[band, frame]).to(self.device)
        row.target = (band * m + frame + row.f0).to(self.device)
        index, analysis, synthesis = self._taps(row.group, row.b0, row.b1)
        row.taps = ((index - lo) % (hi - lo), analysis, synthesis)

    def _taps(self, group: int, b0: int, b1: int):
        """The rfft bin, analysis and synthesis weights of bands ``[b0, b1)`` of a group,
        ``[(b1 - b0) * M]`` and ``[(b1 - b0) * M, 2]``."""
        tensors = self.transform.group_tensors[group]
        cells = slice(b0 * tensors.m, b1 * tensors.m)
        return tensors.index[cells], tensors.analysis[cells], tensors.synthesis[cells]

    def apply(self, change: torch.Tensor) -> torch.Tensor:
        """The analysis on the imposed cells of the synthesis of ``change`` on them, slice by
        slice without the window: ``[C, cells]`` complex64 to the same."""
        channels = change.shape[0]
        found = torch.zeros_like(change)
        half = self.transform.slice_length // 2
        for rows, (lo, hi) in zip(self.slices, self.bins, strict=True):
            spectrum = fft_ops.zeros((channels, hi - lo), torch.complex64, self.device)
            for row in rows:
                index, _, synthesis = row.taps
                m = self.transform.group_tensors[row.group].m
                frames = fft_ops.zeros(
                    (channels, (row.b1 - row.b0) * m), torch.complex64, self.device
                )
                frames[:, row.target] = change[:, row.source]
                frames = fft_ops.fft_(frames.view(channels, row.b1 - row.b0, m))
                spectrum.index_add_(-1, index, fft_ops.scale_(frames.flatten(1), synthesis))
            for edge in (0, half):  # irfft then rfft: these bins' imaginary parts are lost
                if lo <= edge < hi:
                    spectrum[:, edge - lo] = spectrum[:, edge - lo].real.to(torch.complex64)
            for row in rows:
                index, analysis, _ = row.taps
                m = self.transform.group_tensors[row.group].m
                taken = fft_ops.take_scaled(spectrum, index, analysis)
                frames = fft_ops.fft_(taken.view(channels, row.b1 - row.b0, m), inverse=True)
                found[:, row.source] += frames.flatten(1)[:, row.target]
        return found

    def analyse_change(
        self,
        change: torch.Tensor,
        first: int,
        pieces: list[tuple[int, int, int]],
        floor: float,
    ) -> list[tuple[int, int, int, torch.Tensor, int]]:
        """The analysis of a change of the signal ``change`` ``[C, n]`` (from sample ``first``;
        zero elsewhere) over the bands and slices of ``pieces`` (``(block, frame0, frame1)``) that
        it may move by ``floor`` or more, and over the imposed cells' bands and slices:
        ``(block, bin0, frame0, coefficients [C, bins, frames], piece)`` per block and run of
        slices.

        A band is left out when a bound on its coefficients is below ``floor``: ``max |a| / M``
        times the sum of the slice spectrum's magnitudes over the bins its taps read
        (``a``: its analysis weights; ``c[m] = (1/M) sum_j X[bin_j] a_j e^(...)``).
        """
        transform, design = self.transform, self.transform.design
        length = transform.slice_length
        channels = change.shape[0]
        spectra: dict[tuple[int, int], tuple[torch.Tensor, np.ndarray] | None] = {}

        def spectrum(parity: int, r: int):
            if (parity, r) not in spectra:
                start = design.slice_start(2 * r + parity)
                a, b = max(start, first), min(start + length, first + change.shape[-1])
                windowed = (
                    change[:, a - first : b - first] * transform.slice_window[a - start : b - start]
                )
                if (parity, r) not in self.held and self._energy_bound * float(
                    windowed.pow(2).sum(dim=-1).max().sqrt()
                ) < floor:
                    spectra[(parity, r)] = None
                    return None
                found = fft_ops.slice_spectra(
                    change, start - first, 1, length, transform.slice_window
                )[:, 0]
                sizes = np.abs(found.cpu().numpy()).max(axis=0)
                spectra[(parity, r)] = found, np.concatenate(([0.0], np.cumsum(sizes)))
            return spectra[(parity, r)]

        imposed_rows: dict[tuple[int, int], tuple[int, int]] = {}
        for rows in self.slices:
            for row in rows:
                block = self.pieces[row.piece][0]
                m = transform.group_tensors[row.group].m
                r = (self.pieces[row.piece][2] + row.t0) // m
                a, b = imposed_rows.get((block, r), (row.b0, row.b1))
                imposed_rows[(block, r)] = (min(a, row.b0), max(b, row.b1))
        found = []
        for number, (block, frame0, frame1) in enumerate(pieces):
            group, parity = transform.group_of(block)
            tensors = transform.group_tensors[group]
            m = tensors.m
            lo_bins, hi_bins, largest = _band_bins(tensors)
            for r in range(frame0 // m, -(-frame1 // m)):
                s0 = design.slice_start(2 * r + parity)
                if s0 + length <= first or first + change.shape[-1] <= s0:
                    continue  # the change does not reach this slice
                known = spectrum(parity, r)
                if known is None:
                    continue  # the change's energy under the slice window is too small
                values, sums = known
                bound = largest / m * (sums[hi_bins + 1] - sums[lo_bins])
                rows = np.flatnonzero(bound >= floor)
                b0, b1 = (int(rows[0]), int(rows[-1]) + 1) if rows.size else (0, 0)
                if (block, r) in imposed_rows:
                    a, b = imposed_rows[(block, r)]
                    b0, b1 = (a, b) if b1 == b0 else (min(a, b0), max(b, b1))
                if b1 == b0:
                    continue
                index, analysis = tensors.index, tensors.analysis
                cells = slice(b0 * m, b1 * m)
                taken = fft_ops.take_scaled(values, index[cells], analysis[cells])
                frames = fft_ops.fft_(taken.view(channels, b1 - b0, m), inverse=True)
                lo, hi = max(frame0, r * m), min(frame1, (r + 1) * m)
                found.append((block, b0, lo, frames[:, :, lo - r * m : hi - r * m], number))
        return found
