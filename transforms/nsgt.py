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

import collections
import concurrent.futures
import contextlib
import functools
import itertools
import threading
from collections.abc import Iterator

import numpy as np
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.errors import Cancelled
from spectropaint.transforms.nsgt_design import BandGroup, FrameDesign, NSGTSettings, frame_design
from spectropaint.transforms.transform import BlockLayout, Progress, Store, Transform

CHUNK_SLICES = 8
"""Slices analysed per call (even); partial re-analyses (:meth:`NSGT.analyse_frames`) use the same
chunk grid, so they match bit for bit; a settle's spans (:meth:`NSGT.analyse_span`) match to float32
rounding."""


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

    def magnitude_at(self, blocks, seconds: float, hz: float):
        """``|even + odd|`` per channel at the band nearest ``hz`` (on a log scale) and the even
        block's frame nearest ``seconds``, from a document's ``blocks``; None outside the grid."""
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
        return total.abs().cpu().numpy()

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

    def analyse_span(
        self,
        span: torch.Tensor,
        start: int,
        block: int,
        frame0: int,
        frame1: int,
        n_samples: int,
    ) -> torch.Tensor:
        group, _ = self.group_of(block)
        parity, r0, r1 = self._slice_range(block, frame0, frame1)
        self._check_span(span, start, block, frame0, frame1, n_samples)
        # the block's own slices only (2 r + parity, two slice hops apart): the other parity's
        # frames are another block
        spectra = fft_ops.slice_spectra(
            span.to(self.device),
            self.design.slice_start(2 * r0 + parity) - start,
            r1 - r0,
            self.slice_length,
            self._window,
            hop=2 * self.design.slice_hop,
        )
        slices = self._group_coefficients(spectra, group)  # [C, R, B, M] from slice 2 r0 + parity
        frames = slices.permute(0, 2, 1, 3).flatten(2)
        offset = r0 * self._m(block)
        return frames[:, :, frame0 - offset : frame1 - offset]

    # ------------------------------------------------------------------------------------ forward
    @contextlib.contextmanager
    def sharing_work(self) -> Iterator[None]:
        """Within it, each chunk's slice spectra are computed once for every block that reads them
        (per thread: playback resynthesis and an export may run at once)."""
        outer = getattr(self._local, "shared", None)
        self._local.shared = {} if outer is None else outer
        try:
            yield
        finally:
            self._local.shared = outer

    def _spectra(self, samples: torch.Tensor, s0: int, s1: int) -> torch.Tensor:
        """rfft of the windowed slices ``[s0, s1)``: ``[C, s1 - s0, N/2 + 1]`` complex64."""
        shared = getattr(self._local, "shared", None)
        if shared is None:
            return self._compute_spectra(samples, s0, s1)
        key = (samples.data_ptr(), tuple(samples.shape), s0, s1)
        if key not in shared:
            shared[key] = self._compute_spectra(samples, s0, s1)
        return shared[key]

    def _compute_spectra(self, samples: torch.Tensor, s0: int, s1: int) -> torch.Tensor:
        first = self.design.slice_start(s0)
        return fft_ops.slice_spectra(samples, first, s1 - s0, self.slice_length, self._window)

    def _group_coefficients(self, spectra: torch.Tensor, group: int) -> torch.Tensor:
        """Coefficients ``[C, S, B, M]`` of one group in the slices whose spectra are
        ``[C, S, N/2 + 1]`` (those of one parity): one weighted gather of the bands' bins and one
        ``ifft`` of ``M`` points for all bands and slices."""
        tensors = self._groups[group]
        rows = fft_ops.take_scaled(spectra, tensors.index, tensors.analysis)
        return fft_ops.fft_(rows.unflatten(-1, (-1, tensors.m)), inverse=True)

    def _chunk_grid(self, s0: int, s1: int, total: int) -> Iterator[tuple[int, int]]:
        """Chunks ``[c0, c1)`` of the fixed grid over ``total`` slices that hold slices
        ``[s0, s1)``."""
        for c0 in range((s0 // CHUNK_SLICES) * CHUNK_SLICES, s1, CHUNK_SLICES):
            yield c0, min(c0 + CHUNK_SLICES, total)

    def analyse_frames(
        self, samples: torch.Tensor, block: int, frame0: int, frame1: int
    ) -> torch.Tensor:
        total = self.layout(samples.shape[-1])[block].n_frames
        if not 0 <= frame0 < frame1 <= total:
            raise ValueError(f"frames [{frame0}, {frame1}) are outside [0, {total})")
        group, _ = self.group_of(block)
        parity, r0, r1 = self._slice_range(block, frame0, frame1)
        slices = self.design.n_slices(samples.shape[-1])
        pieces = []
        for c0, c1 in self._chunk_grid(2 * r0 + parity, 2 * (r1 - 1) + parity + 1, slices):
            spectra = self._spectra(samples, c0, c1)
            pieces.append(self._group_coefficients(spectra[:, parity::2], group))
        frames = torch.cat(pieces, dim=1).permute(0, 2, 1, 3).flatten(2)  # [C, B, R * M]
        first_chunk = (2 * r0 + parity) // CHUNK_SLICES * CHUNK_SLICES  # even: its slice r is c/2
        offset = first_chunk // 2 * self.design.groups[group].m
        return frames[:, :, frame0 - offset : frame1 - offset]

    def _chunk_pieces(
        self, samples: torch.Tensor, c0: int, c1: int
    ) -> Iterator[tuple[int, int, int, torch.Tensor]]:
        """Every block's frames in slices ``[c0, c1)`` (one ``rfft`` for all groups), as
        ``[C, B, R, M]`` views (``R`` slices of ``M`` frames)."""
        spectra = self._spectra(samples, c0, c1)
        for group, info in enumerate(self.design.groups):
            for parity in (0, 1):
                if c1 - c0 <= parity:
                    continue
                slices = self._group_coefficients(spectra[:, parity::2], group)
                frame0 = (c0 + 1 - parity) // 2 * info.m
                frame1 = frame0 + slices.shape[1] * info.m
                yield 2 * group + parity, frame0, frame1, slices.permute(0, 2, 1, 3)

    def _chunks(
        self, samples: torch.Tensor, progress: Progress | None
    ) -> Iterator[tuple[int, int, int, torch.Tensor]]:
        total = self.design.n_slices(samples.shape[-1])
        for c0, c1 in self._chunk_grid(0, total, total):
            yield from self._chunk_pieces(samples, c0, c1)
            if progress is not None and progress(c1 / total) is False:
                raise Cancelled("analysis cancelled")

    def _analyse_into(self, samples: torch.Tensor, store: Store, progress: Progress | None) -> None:
        """Chunks of slices on :func:`~.fft_ops.cpu_workers` threads, each storing its own
        pieces (they are disjoint); ``progress`` is called on this thread, in order."""
        total = self.design.n_slices(samples.shape[-1])
        workers = fft_ops.cpu_workers(self.device)
        if workers == 1:
            super()._analyse_into(samples, store, progress)
            return

        def work(c0: int, c1: int) -> int:
            for piece in self._chunk_pieces(samples, c0, c1):
                store(*piece)
            return c1

        chunks = iter(self._chunk_grid(0, total, total))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            pending = collections.deque(
                pool.submit(work, *chunk) for chunk in itertools.islice(chunks, workers)
            )
            try:
                while pending:
                    done = pending.popleft().result()
                    pending.extend(
                        pool.submit(work, *chunk) for chunk in itertools.islice(chunks, 1)
                    )
                    if progress is not None and progress(done / total) is False:
                        raise Cancelled("analysis cancelled")
            finally:
                for future in pending:
                    future.cancel()

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
            for block, frame0, coefficients in mine:
                self._add_spectra(spectra, block, frame0 - r0 * self._m(block), coefficients)
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
