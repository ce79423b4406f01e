"""The interface every time-frequency transform of a document implements.

A transform turns samples ``[C, N]`` into one or more **blocks** of complex coefficients
``[C, F_b, T_b]``. Within a block every band has the same time step (``hop`` samples), so a block is a
rectangular grid that brushes and textures can address by (bin, frame). The STFT has one block; a
transform with non-uniform bands and per-band time rates (the NSGT) groups bands of equal rate into
blocks, and callers that loop over ``layout`` need no change.

Everything is linear, which is what resynthesis by difference relies on: the document asks for the
original coefficients of a frame span (:meth:`analyse_frames`) and for the samples that a coefficient
difference over a frame span produces (:meth:`synthesise_frames`), never for the whole file.
"""

from __future__ import annotations

import contextlib
import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.geometry import frames_to_seconds

Progress = Callable[[float], object]
"""Called with the fraction done (0..1); returning ``False`` cancels the work."""
Store = Callable[[int, int, int, torch.Tensor], None]
"""Takes ``(block, frame0, frame1, coefficients)`` of one chunk of an analysis."""
RESYNTHESIS_PIECE = 65536
"""Samples per piece of a long resynthesis done piece by piece (playback holds the document's lock
for one piece at a time: about 1.5 s at 44.1 kHz) where the transform has no grid of its own."""


def cut_on_grid(start: int, stop: int, step: int, origin: int = 0) -> list[tuple[int, int]]:
    """``[start, stop)`` cut at the samples ``origin + k step``: half-open pieces in order (none
    when the span is empty)."""
    if stop <= start:
        return []
    first = origin + ((start - origin) // step + 1) * step
    return list(itertools.pairwise([start, *range(first, stop, step), stop]))


@dataclass(frozen=True)
class BlockLayout:
    """The axes of one block of coefficients for a signal of a given length.

    Attributes
    ----------
    band_hz : np.ndarray [shape=(F,)]
        Centre frequency of each band (bin), in Hz, ascending.
    hop : int
        Samples between consecutive frames of this block.
    n_frames : int
        Frames in the block.
    frame0_sample : int
        Sample index of the centre of frame 0 (0 for a centred STFT).
    """

    band_hz: np.ndarray
    hop: int
    n_frames: int
    frame0_sample: int = 0

    @property
    def n_bins(self) -> int:
        return len(self.band_hz)

    def frame_seconds(self, sample_rate: int) -> np.ndarray:
        """Centre time of each frame in seconds, shape ``(n_frames,)``."""
        return frames_to_seconds(
            np.arange(self.n_frames),
            hop=self.hop,
            sample_rate=sample_rate,
            frame0_sample=self.frame0_sample,
        )


class Transform(ABC):
    """A linear, exactly invertible analysis of multichannel audio into coefficient blocks."""

    name: str
    chunk_frames: int = 256
    """Frames analysed per call; partial re-analyses use the same chunk grid, so they match."""
    device: torch.device = torch.device("cpu")
    """Where the coefficients are computed and kept."""

    @abstractmethod
    def layout(self, n_samples: int, sample_rate: int) -> list[BlockLayout]:
        """The blocks a signal of ``n_samples`` is analysed into."""

    @abstractmethod
    def min_samples(self) -> int:
        """The shortest signal this transform can analyse."""

    @abstractmethod
    def analyse_frames(
        self, samples: torch.Tensor, block: int, frame0: int, frame1: int
    ) -> torch.Tensor:
        """Coefficients of frames ``[frame0, frame1)`` of ``block``.

        Parameters
        ----------
        samples : torch.Tensor [shape=(C, N)]
            The whole signal (only the samples those frames see are read).

        Returns
        -------
        torch.Tensor [shape=(C, F, frame1 - frame0)], complex64
            Bit-identical to the same frames of a whole-signal analysis made with this method.
        """

    def analyse_span(
        self,
        span: torch.Tensor,
        start: int,
        block: int,
        frame0: int,
        frame1: int,
        n_samples: int,
    ) -> torch.Tensor:
        """Coefficients of frames ``[frame0, frame1)`` of ``block`` from part of a signal.

        Parameters
        ----------
        span : torch.Tensor [shape=(C, n)]
            Samples ``[start, start + n)`` of a signal ``n_samples`` long; they must hold every
            sample the frames read (:meth:`samples_read`, the reflections at the signal's ends
            included).

        Returns
        -------
        torch.Tensor [shape=(C, F, frame1 - frame0)], complex64
            The same frames :meth:`analyse_frames` gives for the whole signal, to float32 rounding.
        """
        raise NotImplementedError(f"the {self.name} transform does not settle edits")

    def analyse_pieces(
        self,
        span: torch.Tensor,
        start: int,
        pieces: Sequence[tuple[int, int, int]],
        n_samples: int,
    ) -> list[torch.Tensor]:
        """:meth:`analyse_span` of several ``(block, frame0, frame1)`` from the same ``span``, in
        order. Transforms whose blocks share a forward step (the NSGT's ``rfft`` per slice) do it
        once for all pieces."""
        return [
            self.analyse_span(span, start, block, frame0, frame1, n_samples)
            for block, frame0, frame1 in pieces
        ]

    @abstractmethod
    def synthesise_frames(
        self,
        coefficients: torch.Tensor,
        block: int,
        frame0: int,
        n_samples: int,
        *,
        adjoint: bool = False,
    ) -> tuple[int, torch.Tensor]:
        """Samples produced by ``coefficients`` placed at frames ``frame0...`` of ``block``.

        All other frames are taken as zero, and the normalisation is that of the whole-signal inverse
        of ``n_samples`` samples, so summing the results of disjoint frame spans gives the full
        inverse. Returns ``(first_sample, samples [C, n])`` clipped to ``[0, n_samples)``.

        ``adjoint=True`` gives the adjoint of the analysis instead (no normalisation), for the
        inner product ``Re sum(weights * conj(a) * b)`` of :meth:`coefficient_weights` on the
        coefficients (exact away from the signal's ends, where the analysis reflects).
        """

    def coefficient_weights(self, block: int) -> torch.Tensor:
        """Per-band weights ``[F]`` of the real inner product on ``block``'s coefficients under
        which ``synthesise_frames(..., adjoint=True)`` is the analysis' adjoint (settling only)."""
        raise NotImplementedError(f"the {self.name} transform does not settle edits")

    @abstractmethod
    def samples_reached(
        self, block: int, frame0: int, frame1: int, n_samples: int
    ) -> tuple[int, int]:
        """The half-open sample span that frames ``[frame0, frame1)`` of ``block`` contribute to."""

    def resynthesis_pieces(self, start: int, stop: int) -> list[tuple[int, int]]:
        """``[start, stop)`` cut into pieces for a resynthesis done one piece at a time, where the
        work the pieces repeat is least: here :data:`RESYNTHESIS_PIECE` samples each (an STFT
        piece reads only a window's length past its ends)."""
        return cut_on_grid(start, stop, RESYNTHESIS_PIECE, origin=start)

    @abstractmethod
    def frames_over(self, block: int, start: int, stop: int, n_samples: int) -> tuple[int, int]:
        """The half-open span of ``block``'s frames whose samples overlap ``[start, stop)``."""

    def synthesise_many(
        self, pieces: list[tuple[int, int, torch.Tensor]], n_samples: int
    ) -> tuple[int, torch.Tensor]:
        """The summed samples of several frame spans, ``(block, frame0, coefficients)`` each.

        Returns ``(first_sample, samples [C, n])`` clipped to ``[0, n_samples)``, covering every
        piece's :meth:`synthesise_frames`. Transforms whose blocks share an inverse step (the
        NSGT's ``irfft`` per slice) do it once for all pieces.
        """
        parts = [self.synthesise_frames(c, block, f0, n_samples) for block, f0, c in pieces]
        lo = min(first for first, _ in parts)
        hi = max(first + samples.shape[-1] for first, samples in parts)
        if len(parts) == 1:
            return parts[0]
        out = parts[0][1].new_zeros((parts[0][1].shape[0], hi - lo))
        for first, samples in parts:
            out[:, first - lo : first - lo + samples.shape[-1]] += samples
        return lo, out

    @contextlib.contextmanager
    def sharing_work(self) -> Iterator[None]:
        """Within it, :meth:`analyse_frames` calls on the same samples may share their work (the
        NSGT's slice spectra, which every block of a time span reads); the signal must not change
        meanwhile."""
        yield

    def frame_weight(self, block: int, frames: torch.Tensor) -> torch.Tensor | None:
        """The share of the signal that ``frames`` (int64) of ``block`` carry, float32, where
        blocks split it over time (the weights of the blocks holding one time sum to 1); None when
        a block holds all of it."""
        return None

    # Settling (spectropaint.brushes.settle) re-analyses an edit's reach from part of the signal;
    # a transform that supports it implements analyse_span and samples_read (the STFT and the
    # NSGT do). One that also has coefficient_weights and synthesise_frames(adjoint=True) settles
    # complex targets by least squares (the STFT), the others by alternating projections.
    supports_settle = False
    least_squares_settle = False

    # A transform whose exact synthesis and analysis are costly for small edits (the NSGT's
    # slices) settles by the change of the sound instead (spectropaint.transforms.settle_change),
    # iterating on the model that local_model gives.
    settles_by_change = False

    def local_model(self, pieces):
        """A cheap stand-in for synthesis then analysis on the imposed cells of ``pieces``
        (``(block, bin0, frame0, mask [bins, frames])``), with ``apply`` and ``analyse_change``
        (see :class:`~.nsgt_local.SliceModel`); only where :attr:`settles_by_change`."""
        raise NotImplementedError(f"the {self.name} transform has no local model")

    def samples_read(self, block: int, frame0: int, frame1: int, n_samples: int) -> tuple[int, int]:
        """The half-open sample span the analysis of frames ``[frame0, frame1)`` reads (with any
        reflection at the signal's ends): what :meth:`analyse_span` needs."""
        raise NotImplementedError(f"the {self.name} transform does not settle edits")

    def _check_span(
        self, span: torch.Tensor, start: int, block: int, frame0: int, frame1: int, n_samples: int
    ) -> None:
        """Raise ``ValueError`` unless ``span`` (samples from ``start``) holds every sample the
        frames ``[frame0, frame1)`` of ``block`` read (:meth:`analyse_span`)."""
        read = self.samples_read(block, frame0, frame1, n_samples)
        if read[0] < start or read[1] > start + span.shape[-1]:
            raise ValueError(
                f"frames [{frame0}, {frame1}) read samples {read}, outside the span given "
                f"[{start}, {start + span.shape[-1]})"
            )

    def frames_reaching(
        self, block: int, frame0: int, frame1: int, n_samples: int
    ) -> tuple[int, int]:
        """All frames whose span overlaps that of frames ``[frame0, frame1)`` (the STFT's heal
        grows its context by them)."""
        raise NotImplementedError(f"the {self.name} transform has no frames_reaching")

    @abstractmethod
    def synthesise(self, blocks: list[torch.Tensor], n_samples: int) -> torch.Tensor:
        """The full inverse: samples ``[C, n_samples]`` from every block (a reference path)."""

    def analyse(
        self, samples: torch.Tensor, *, progress: Progress | None = None
    ) -> list[torch.Tensor]:
        """Every block of a whole signal as complex64 ``[C, F, T]``; see :meth:`analyse_frames`."""
        blocks = self._empty_blocks(samples, torch.complex64, 1)

        def store(index: int, frame0: int, frame1: int, chunk: torch.Tensor) -> None:
            fft_ops.copy_into(_region(blocks[index][0], frame0, frame1, chunk), chunk)

        self._analyse_into(samples, store, progress)
        return [complex_block for (complex_block,) in blocks]

    def analyse_polar(
        self, samples: torch.Tensor, *, progress: Progress | None = None
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Every block of a whole signal as float32 magnitude and phase ``[C, F, T]``.

        Each chunk's magnitude and phase (:func:`~.fft_ops.polar_into`) go straight into the two
        tensors, so the memory taken is theirs plus one chunk's work per thread, never a complex
        copy of the whole block.
        """
        blocks = self._empty_blocks(samples, torch.float32, 2)

        def store(index: int, frame0: int, frame1: int, chunk: torch.Tensor) -> None:
            magnitude, phase = blocks[index]
            fft_ops.polar_into(
                chunk,
                _region(magnitude, frame0, frame1, chunk),
                _region(phase, frame0, frame1, chunk),
            )

        self._analyse_into(samples, store, progress)
        return [(magnitude, phase) for magnitude, phase in blocks]

    def _analyse_into(self, samples: torch.Tensor, store: Store, progress: Progress | None) -> None:
        """``store(block, frame0, frame1, coefficients)`` every chunk of every block (coefficients
        ``[C, F, frame1 - frame0]``, or ``[C, F, R, M]`` with ``R * M`` frames for a transform
        whose frames come ``M`` to a slice), reporting the fraction of frames done to
        ``progress`` after each and raising :class:`Cancelled` when it says False."""
        raise NotImplementedError

    def _empty_blocks(
        self, samples: torch.Tensor, dtype: torch.dtype, count: int
    ) -> list[tuple[torch.Tensor, ...]]:
        """``count`` uninitialised tensors ``[C, F, T]`` per block, on the transform's device."""
        return [
            tuple(
                fft_ops.empty(
                    (samples.shape[0], layout.n_bins, layout.n_frames), dtype, self.device
                )
                for _ in range(count)
            )
            for layout in self.layout(samples.shape[-1], 1)
        ]


def _region(target: torch.Tensor, frame0: int, frame1: int, values: torch.Tensor) -> torch.Tensor:
    """The view of ``target [C, F, T]`` that ``values`` ``[C, F, frame1 - frame0]`` or
    ``[C, F, R, M]`` fill."""
    region = target[:, :, frame0:frame1]
    return region.unflatten(-1, values.shape[-2:]) if values.dim() == 4 else region
