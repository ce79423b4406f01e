"""The sliced non-stationary Gabor transform in torch (CUDA, MPS or CPU), behind :class:`Transform`.

The frame comes from ``nsgt`` (:mod:`.nsgt_design`); the transform here is torch: per chunk of
slices, one windowing, one ``rfft``, and per group of bands one weighted gather of bins and one
``ifft`` of ``M`` points (on the CPU through :mod:`.fft_ops`, chunks on several threads). Blocks
are ``(group, parity)``: the coefficients of one group in the even (or odd) slices. Same-parity slices tile time, so a block's frames are evenly spaced (``N / M``
samples) with no gaps and no overlaps; the other parity's frames cover the same times, shifted by
half a slice (``M / 2`` frames). Block ``2 g + p`` is group ``g``, parity ``p``.

A frame's inverse reaches the samples of its own slice only, so an edit is inverted over its own
slices (:meth:`NSGT.synthesise_frames`), the cost of resynthesising it does not grow with the file,
and samples of other slices are untouched. The sum of a block pair (both parities) at one time is
the coefficient of the unsliced NSGT there (the slice windows sum to one): that is what the renderer
shows (:func:`spectropaint.gpu.bands_renderer.combined_magnitude`) and :meth:`NSGT.magnitude_at`
reads.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
from collections.abc import Iterator, Sequence

import numpy as np
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.errors import Cancelled
from spectropaint.transforms.nsgt_design import BandGroup, FrameDesign, NSGTSettings, frame_design
from spectropaint.transforms.ordered_threads import results_in_order
from spectropaint.transforms.torch_device import HostRead
from spectropaint.transforms.transform import (
    BlockLayout,
    Progress,
    Store,
    Transform,
    cut_on_grid,
)

CHUNK_SLICES = 8
"""Slices of the whole analysis per call (even). A partial re-analysis (:meth:`NSGT.analyse_frames`)
transforms its block's own slices only (those of one parity), at most half as many at a time on the
same grid, so that its cost follows the frames asked for, not the chunks around them; a settle's
spans (:meth:`NSGT.analyse_pieces`) transform the union of their slices. On the CPU each slice's
FFTs are computed alone (pocketfft), so all of these equal the whole analysis bit for bit."""


class NSGT(Transform):
    """The sliced NSGT of ``[C, N]`` signals at one sample rate, into ``2 x groups`` blocks.

    Parameters
    ----------
    settings : NSGTSettings
    sample_rate : int
        The frame is designed for this rate (band centres are in Hz).
    device : str or torch.device
    """

    name = "nsgt"
    full_scale = 1.0
    """Magnitude of a full-scale sine at a band's centre, in the sum of a block pair."""

    def __init__(
        self,
        settings: NSGTSettings | None = None,
        sample_rate: int = 44100,
        *,
        device: torch.device | str = "cpu",
    ):
        self.settings = settings or NSGTSettings()
        self.sample_rate = int(sample_rate)
        self.device = torch.device(device)
        self.design: FrameDesign = frame_design(self.settings, self.sample_rate)
        self._window = torch.from_numpy(self.design.slice_window).to(self.device, torch.float32)
        self._local = threading.local()  # the spectra shared within sharing_work()
        self._groups = _group_tensors(self.settings, self.sample_rate, self.device)

    # ----------------------------------------------------------------------------------- geometry
    @property
    def slice_length(self) -> int:
        return self.design.slice_length

    def min_samples(self) -> int:
        return 1

    def group_of(self, block: int) -> tuple[int, int]:
        """``(group, parity)`` of a block."""
        return divmod(block, 2)

    def frame_weight(self, block: int, frames: torch.Tensor) -> torch.Tensor:
        """The slice window at each frame: the two parities' weights at one time sum to 1."""
        tensors = self._groups[self.group_of(block)[0]]
        return tensors.frame_weight[torch.remainder(frames, tensors.m).to(self.device)]

    def magnitude_at(self, blocks, seconds: float, hz: float) -> HostRead | None:
        """``|even + odd|`` per channel at the band nearest ``hz`` (on a log scale) and the even
        block's frame nearest ``seconds``, from a document's ``blocks``, on its way to the host;
        None outside the grid."""
        centres = self.design.band_hz
        band = int(np.argmin(abs(np.log(np.maximum(centres, 1e-3) / max(hz, 1e-3)))))
        group = next(g for g, info in enumerate(self.design.groups) if band < info.bands.stop)
        row = band - self.design.groups[group].bands.start
        even, odd = blocks[2 * group], blocks[2 * group + 1]
        frame = round((seconds - float(even.frame_seconds[0])) * self.sample_rate / even.hop)
        if not 0 <= frame < even.n_frames:
            return None
        total = torch.polar(even.magnitude[:, row, frame], even.phase[:, row, frame])
        partner = frame - self._m(2 * group) // 2
        if 0 <= partner < odd.n_frames:
            total = total + torch.polar(odd.magnitude[:, row, partner], odd.phase[:, row, partner])
        return HostRead(total.abs())

    def _slices_of_parity(self, parity: int, n_samples: int) -> int:
        total = self.design.n_slices(n_samples)
        return (total - parity + 1) // 2

    def layout(self, n_samples: int, sample_rate: int | None = None) -> list[BlockLayout]:
        """The blocks: per group, parity 0 then 1. The frame is designed for one rate, the
        transform's; ``sample_rate`` is not used."""
        design = self.design
        layouts = []
        for group in design.groups:
            hop = design.slice_length // group.m
            for parity in (0, 1):
                slices = self._slices_of_parity(parity, n_samples)
                layouts.append(
                    BlockLayout(
                        band_hz=design.band_hz[group.bands],
                        hop=hop,
                        n_frames=slices * group.m,
                        frame0_sample=design.slice_start(parity),
                    )
                )
        return layouts

    def _slice_range(self, block: int, frame0: int, frame1: int) -> tuple[int, int, int]:
        """``(parity, r0, r1)``: frames ``[frame0, frame1)`` lie in slices ``2 r + parity``."""
        group, parity = self.group_of(block)
        m = self.design.groups[group].m
        return parity, frame0 // m, -(-frame1 // m)

    def samples_reached(
        self, block: int, frame0: int, frame1: int, n_samples: int
    ) -> tuple[int, int]:
        parity, r0, r1 = self._slice_range(block, frame0, frame1)
        start = self.design.slice_start(2 * r0 + parity)
        stop = self.design.slice_start(2 * (r1 - 1) + parity) + self.slice_length
        return max(0, start), min(n_samples, stop)

    def resynthesis_pieces(self, start: int, stop: int) -> list[tuple[int, int]]:
        """Pieces one slice long, on the slices' grid. A piece's resynthesis transforms every
        slice it overlaps, whole: 3 for a piece on the grid (one of a parity inside it, one of the
        other at each end). Pieces of a fixed 1.5 s would transform the same slices eight times
        over, for eight pieces (``bench_transforms.py``: ``nsgt playback resynthesis``)."""
        return cut_on_grid(start, stop, self.slice_length)

    def frames_over(self, block: int, start: int, stop: int, n_samples: int) -> tuple[int, int]:
        group, parity = self.group_of(block)
        m = self.design.groups[group].m
        half, hop = self.slice_length // 2, self.design.slice_hop
        # slice s spans [s hop - half, s hop + half); s = 2 r + parity
        s0 = (start - half) // hop + 1
        s1 = -(-(stop + half) // hop)
        r0 = max(0, -(-(s0 - parity) // 2))
        r1 = min(self._slices_of_parity(parity, n_samples), -(-(s1 - parity) // 2))
        return r0 * m, max(r0, r1) * m

    # Settling: an edit's slices are resynthesised and every slice that overlaps them re-analysed
    # (spectropaint.brushes.settle); a slice's analysis reads its own samples only.
    supports_settle = True

    def samples_read(self, block: int, frame0: int, frame1: int, n_samples: int) -> tuple[int, int]:
        return self.samples_reached(block, frame0, frame1, n_samples)

    @property
    def group_tensors(self) -> tuple[_GroupTensors, ...]:
        """Every group's gather index and weights (read only)."""
        return self._groups

    @property
    def slice_window(self) -> torch.Tensor:
        """The slice window ``[N]``, float32 on the device (read only)."""
        return self._window

    settles_by_change = True

    def local_model(self, pieces):
        """The model of synthesis then analysis inside each slice's spectrum on the imposed cells
        of ``pieces`` that the settle iterates on (:class:`~.nsgt_local.SliceModel`; see
        :mod:`~spectropaint.transforms.settle_change`)."""
        from spectropaint.transforms.nsgt_local import SliceModel

        return SliceModel(self, pieces)

    def analyse_span(
        self,
        span: torch.Tensor,
        start: int,
        block: int,
        frame0: int,
        frame1: int,
        n_samples: int,
    ) -> torch.Tensor:
        return self.analyse_pieces(span, start, [(block, frame0, frame1)], n_samples)[0]

    def analyse_pieces(
        self,
        span: torch.Tensor,
        start: int,
        pieces: Sequence[tuple[int, int, int]],
        n_samples: int,
    ) -> list[torch.Tensor]:
        """:meth:`analyse_span` of several ``(block, frame0, frame1)``: the slices of each parity
        that any piece reads are transformed once (one ``rfft`` of their union) for all."""
        for block, frame0, frame1 in pieces:
            self._check_span(span, start, block, frame0, frame1, n_samples)
        ranges: dict[int, tuple[int, int]] = {}
        for block, frame0, frame1 in pieces:
            parity, r0, r1 = self._slice_range(block, frame0, frame1)
            a, b = ranges.get(parity, (r0, r1))
            ranges[parity] = (min(a, r0), max(b, r1))
        span = span.to(self.device)
        spectra = {
            parity: self._parity_spectra(span, start, parity, r0, r1)
            for parity, (r0, r1) in ranges.items()
        }
        frames = []
        for block, frame0, frame1 in pieces:
            parity, r0, r1 = self._slice_range(block, frame0, frame1)
            first = ranges[parity][0]
            frames.append(
                self._frames(spectra[parity][:, r0 - first : r1 - first], block, r0, frame0, frame1)
            )
        return frames

    # ------------------------------------------------------------------------------------ forward
    def _parity_spectra(
        self, samples: torch.Tensor, start: int, parity: int, r0: int, r1: int
    ) -> torch.Tensor:
        """rfft of the windowed slices ``2 r + parity`` for ``r`` in ``[r0, r1)`` (those of one
        block pair; two slice hops apart) of ``samples`` (from sample ``start``):
        ``[C, r1 - r0, N/2 + 1]`` complex64."""
        first = self.design.slice_start(2 * r0 + parity) - start
        hop = 2 * self.design.slice_hop
        return fft_ops.slice_spectra(
            samples, first, r1 - r0, self.slice_length, self._window, hop=hop
        )

    def _frames(
        self, spectra: torch.Tensor, block: int, r0: int, frame0: int, frame1: int
    ) -> torch.Tensor:
        """Frames ``[frame0, frame1)`` of ``block`` ``[C, B, frame1 - frame0]`` from the spectra of
        its slices from ``r0`` on (:meth:`_parity_spectra`), which must hold them."""
        slices = self._group_coefficients(spectra, self.group_of(block)[0])  # [C, R, B, M]
        frames = slices.permute(0, 2, 1, 3).flatten(2)
        offset = r0 * self._m(block)
        return frames[:, :, frame0 - offset : frame1 - offset]

    @contextlib.contextmanager
    def sharing_work(self) -> Iterator[None]:
        """Within it, the slice spectra of :meth:`analyse_frames` are computed once for every
        block of a parity that reads them (per thread: playback resynthesis and an export may run
        at once)."""
        outer = getattr(self._local, "shared", None)
        self._local.shared = {} if outer is None else outer
        try:
            yield
        finally:
            self._local.shared = outer

    def _shared_spectra(self, samples: torch.Tensor, parity: int, r0: int, r1: int) -> torch.Tensor:
        """:meth:`_parity_spectra` of the whole signal ``samples``, kept within
        :meth:`sharing_work` (a request inside slices computed before takes a view of them)."""
        shared = getattr(self._local, "shared", None)
        if shared is None:
            return self._parity_spectra(samples, 0, parity, r0, r1)
        signal = (samples.data_ptr(), tuple(samples.shape), parity)
        for (known, a, b), spectra in shared.items():
            if known == signal and a <= r0 and r1 <= b:
                return spectra[:, r0 - a : r1 - a]
        spectra = shared[(signal, r0, r1)] = self._parity_spectra(samples, 0, parity, r0, r1)
        return spectra

    def _group_coefficients(self, spectra: torch.Tensor, group: int) -> torch.Tensor:
        """Coefficients ``[C, S, B, M]`` of one group in the slices whose spectra are
        ``[C, S, N/2 + 1]`` (those of one parity): one weighted gather of the bands' bins and one
        ``ifft`` of ``M`` points for all bands and slices."""
        tensors = self._groups[group]
        rows = fft_ops.take_scaled(spectra, tensors.index, tensors.analysis)
        return fft_ops.fft_(rows.unflatten(-1, (-1, tensors.m)), inverse=True)

    def _chunk_grid(self, total: int) -> Iterator[tuple[int, int]]:
        """Chunks ``[c0, c1)`` of the fixed grid over ``total`` slices."""
        for c0 in range(0, total, CHUNK_SLICES):
            yield c0, min(c0 + CHUNK_SLICES, total)

    def analyse_frames(
        self, samples: torch.Tensor, block: int, frame0: int, frame1: int
    ) -> torch.Tensor:
        """Frames of the block's own slices only, computed :data:`CHUNK_SLICES` / 2 at a time on
        the chunk grid (bounded memory; shared between blocks within :meth:`sharing_work`)."""
        parity, r0, r1 = self._slice_range(block, frame0, frame1)
        m, step = self._m(block), CHUNK_SLICES // 2
        total = self._slices_of_parity(parity, samples.shape[-1]) * m  # the block's, as layout's
        if not 0 <= frame0 < frame1 <= total:
            raise ValueError(f"frames [{frame0}, {frame1}) are outside [0, {total})")
        pieces = []
        for a, b in itertools.pairwise([r0, *range((r0 // step + 1) * step, r1, step), r1]):
            spectra = self._shared_spectra(samples, parity, a, b)
            lo, hi = max(frame0, a * m), min(frame1, b * m)
            pieces.append(self._frames(spectra, block, a, lo, hi))
        return pieces[0] if len(pieces) == 1 else torch.cat(pieces, dim=-1)

    def _chunk_pieces(
        self, samples: torch.Tensor, c0: int, c1: int
    ) -> Iterator[tuple[int, int, int, torch.Tensor]]:
        """Every block's frames in slices ``[c0, c1)`` (one ``rfft`` for all groups), as
        ``[C, B, R, M]`` views (``R`` slices of ``M`` frames)."""
        first = self.design.slice_start(c0)
        spectra = fft_ops.slice_spectra(samples, first, c1 - c0, self.slice_length, self._window)
        for group, info in enumerate(self.design.groups):
            for parity in (0, 1):
                if c1 - c0 <= parity:
                    continue
                slices = self._group_coefficients(spectra[:, parity::2], group)
                frame0 = (c0 + 1 - parity) // 2 * info.m
                frame1 = frame0 + slices.shape[1] * info.m
                yield 2 * group + parity, frame0, frame1, slices.permute(0, 2, 1, 3)

    def _analyse_into(self, samples: torch.Tensor, store: Store, progress: Progress | None) -> None:
        """Chunks of slices on :func:`~.fft_ops.cpu_workers` threads, each storing its own
        pieces (they are disjoint); ``progress`` is called on this thread, in order."""
        total = self.design.n_slices(samples.shape[-1])

        def work(chunk: tuple[int, int]) -> int:
            for piece in self._chunk_pieces(samples, *chunk):
                store(*piece)
            return chunk[1]

        chunks = self._chunk_grid(total)
        workers = fft_ops.cpu_workers(self.device)
        with contextlib.closing(results_in_order(work, chunks, workers)) as results:
            for done in results:
                if progress is not None and progress(done / total) is False:
                    raise Cancelled("analysis cancelled")

    # ------------------------------------------------------------------------------------ inverse
    def synthesise_frames(
        self, coefficients: torch.Tensor, block: int, frame0: int, n_samples: int
    ) -> tuple[int, torch.Tensor]:
        return self.synthesise_many([(block, frame0, coefficients)], n_samples)

    def synthesise_many(
        self, pieces: list[tuple[int, int, torch.Tensor]], n_samples: int
    ) -> tuple[int, torch.Tensor]:
        """Samples of several blocks' frame spans, summed: one ``irfft`` per slice.

        ``pieces`` are ``(block, frame0, coefficients [C, B, T])``; returns ``(first_sample,
        samples [C, n])`` clipped to ``[0, n_samples)``, as :meth:`synthesise_frames`.
        """
        length = self.slice_length
        outputs = []
        for parity in (0, 1):
            mine = [p for p in pieces if self.group_of(p[0])[1] == parity and p[2].shape[-1]]
            if not mine:
                continue
            ranges = [self._slice_range(b, f0, f0 + c.shape[-1])[1:] for b, f0, c in mine]
            r0, r1 = min(r[0] for r in ranges), max(r[1] for r in ranges)
            channels = mine[0][2].shape[0]
            shape = (channels, r1 - r0, length // 2 + 1)
            spectra = fft_ops.zeros(shape, torch.complex64, self.device)
            for (block, frame0, coefficients), (a, b) in zip(mine, ranges, strict=True):
                # each block over its own slices: one that an edit holds a slice of costs one
                own = spectra[:, a - r0 : b - r0]
                self._add_spectra(own, block, frame0 - a * self._m(block), coefficients)
            signal = fft_ops.irfft(spectra, length).reshape(channels, -1)
            outputs.append((self.design.slice_start(2 * r0 + parity), signal))
        start = min(s for s, _ in outputs)
        stop = max(s + x.shape[-1] for s, x in outputs)
        lo, hi = max(0, start), min(n_samples, stop)
        out = torch.zeros(
            (outputs[0][1].shape[0], max(0, hi - lo)), dtype=torch.float32, device=self.device
        )
        for first, signal in outputs:
            a, b = max(lo, first), min(hi, first + signal.shape[-1])
            if b > a:
                out[:, a - lo : b - lo] += signal[:, a - first : b - first]
        return lo, out

    def _m(self, block: int) -> int:
        return self._groups[self.group_of(block)[0]].m

    def _add_spectra(
        self, spectra: torch.Tensor, block: int, frame0: int, coefficients: torch.Tensor
    ) -> None:
        """Add the slice spectra of one block's frames, starting ``frame0`` frames into the first
        slice of ``spectra`` ``[C, R, N/2 + 1]`` (frames outside the given ones are zero)."""
        tensors = self._groups[self.group_of(block)[0]]
        channels, slices = spectra.shape[:2]
        m = tensors.m
        coefficients = coefficients.to(self.device, torch.complex64)
        bands, frames = coefficients.shape[1:]
        if frame0 or slices * m - frame0 - frames:
            padded = fft_ops.zeros((channels, bands, slices * m), torch.complex64, self.device)
            fft_ops.copy_into(padded[:, :, frame0 : frame0 + frames], coefficients)
            coefficients = padded
        rows = fft_ops.empty((channels, slices, bands, m), torch.complex64, self.device)
        fft_ops.copy_into(rows, coefficients.view(channels, bands, slices, m).transpose(1, 2))
        rows = fft_ops.scale_(fft_ops.fft_(rows).flatten(-2), tensors.synthesis)  # [C, R, B * M]
        spectra.index_add_(-1, tensors.index, rows)

    def synthesise(self, blocks: list[torch.Tensor], n_samples: int) -> torch.Tensor:
        """The full inverse, a chunk of slices at a time."""
        out = torch.zeros((blocks[0].shape[0], n_samples), dtype=torch.float32, device=self.device)
        total = self.design.n_slices(n_samples)
        for c0 in range(0, total, CHUNK_SLICES):
            c1 = min(total, c0 + CHUNK_SLICES)
            pieces = []
            for block, coefficients in enumerate(blocks):
                m, parity = self._m(block), self.group_of(block)[1]
                r0, r1 = (c0 + 1 - parity) // 2, (c1 + 1 - parity) // 2
                if r1 > r0:
                    pieces.append((block, r0 * m, coefficients[:, :, r0 * m : r1 * m]))
            start, samples = self.synthesise_many(pieces, n_samples)
            out[:, start : start + samples.shape[-1]] += samples
        return out


@functools.lru_cache(maxsize=8)
def _group_tensors(
    settings: NSGTSettings, sample_rate: int, device: torch.device
) -> tuple[_GroupTensors, ...]:
    """Every group's tensors (read only; cached: a document makes several transforms)."""
    design = frame_design(settings, sample_rate)
    return tuple(
        _GroupTensors(group, design.slice_length, design.slice_window, device)
        for group in design.groups
    )


class _GroupTensors:
    """A :class:`BandGroup`'s gather index and weights on the transform's device.

    Each band's ``M`` bins go to the columns ``bin mod M`` (its taps cover at most ``M`` bins, so
    they do not collide): the ``ifft`` of such a row is then the band's coefficients in absolute
    time, with no phase ramp to apply, and the ``fft`` of coefficients gives the bins back there.
    Weights are pairs (real, imaginary) that also conjugate mirrored bins.
    """

    def __init__(
        self,
        group: BandGroup,
        slice_length: int,
        slice_window: np.ndarray,
        device: torch.device,
    ):
        def tensor(array: np.ndarray, dtype: type | None = None) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(array, dtype)).to(device)

        self.m = m = group.m
        columns = np.mod(group.start[:, None] + np.arange(m), m)  # [B, M]: tap j's column
        rows = np.arange(group.n_bands)[:, None]

        def circular(array: np.ndarray) -> np.ndarray:
            placed = np.empty_like(array)
            placed[rows, columns] = array
            return placed.ravel()

        sign = np.ones(group.index.size)
        sign[group.conjugate] = -1.0
        sign = circular(sign.reshape(group.index.shape))
        self.index = tensor(circular(group.index))  # [B * M] rfft bins
        analysis, synthesis = circular(group.analysis), circular(group.synthesis)
        self.analysis = tensor(np.stack((analysis, analysis * sign), -1), np.float32)
        self.synthesis = tensor(np.stack((synthesis, synthesis * sign), -1), np.float32)
        self.frame_weight = tensor(slice_window[:: slice_length // m], np.float32)
