"""The short-time Fourier transform, with two engines (``torch.stft`` and nnAudio) and exact inverses.

Frames are centred (frame ``t`` is centred on sample ``t * hop``, the signal reflected at both ends),
as in ``torch.stft(center=True)`` and librosa. The inverse is weighted overlap-add divided by the
summed squared window of *all* frames, so the samples a span of frames produces can be computed alone
and added to the rest: that is what resynthesis by difference needs.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.errors import Cancelled, SettingsError
from spectropaint.transforms.geometry import fft_frequencies
from spectropaint.transforms.ordered_threads import results_in_order
from spectropaint.transforms.transform import BlockLayout, Progress, Store, Transform

WINDOWS = ("hann", "hamming", "blackman")
ENGINES = ("torch", "nnaudio")


@dataclass(frozen=True)
class STFTSettings:
    """Analysis settings: FFT size and hop in samples, window name, engine.

    The default engine is ``torch``: ``tests/benchmarks/bench_transforms.py`` measures it faster than
    nnAudio in both directions (see the README's numbers). On the CPU its analysis is computed by
    numpy and pocketfft (:meth:`STFT._stft_cpu`), equal to ``torch.stft`` to float32 rounding.
    """

    n_fft: int = 2048
    hop: int = 512
    window: str = "hann"
    engine: str = "torch"

    def __post_init__(self) -> None:
        if not isinstance(self.n_fft, int) or not 16 <= self.n_fft <= 65536:
            raise SettingsError(f"n_fft must be an integer from 16 to 65536, not {self.n_fft!r}")
        if not isinstance(self.hop, int) or not 1 <= self.hop <= self.n_fft // 2:
            raise SettingsError(
                f"hop must be an integer from 1 to n_fft/2 = {self.n_fft // 2}, not {self.hop!r}"
            )
        if self.window not in WINDOWS:
            raise SettingsError(f"window must be one of {', '.join(WINDOWS)}, not {self.window!r}")
        if self.engine not in ENGINES:
            raise SettingsError(f"engine must be one of {', '.join(ENGINES)}, not {self.engine!r}")

    def to_dict(self) -> dict:
        return {"n_fft": self.n_fft, "hop": self.hop, "window": self.window, "engine": self.engine}

    # The grid, from the settings alone (no transform object, no tensors): what the memory budget
    # and the project file check shapes with.
    def n_frames(self, n_samples: int) -> int:
        return 1 + n_samples // self.hop

    def min_samples(self) -> int:
        """The shortest signal analysed: one window."""
        return self.n_fft

    def layout(self, n_samples: int, sample_rate: int) -> list[BlockLayout]:
        """The one block of ``n_samples`` at ``sample_rate``."""
        band_hz = fft_frequencies(n_fft=self.n_fft, sample_rate=sample_rate)
        return [BlockLayout(band_hz=band_hz, hop=self.hop, n_frames=self.n_frames(n_samples))]


def window_tensor(name: str, n_fft: int, device: torch.device) -> torch.Tensor:
    """The periodic analysis window, float32."""
    make = {"hann": torch.hann_window, "hamming": torch.hamming_window}.get(
        name, torch.blackman_window
    )
    return make(n_fft, periodic=True, dtype=torch.float32, device=device)


class STFT(Transform):
    """A centred STFT of ``[C, N]`` float signals into one block ``[C, n_fft/2 + 1, 1 + N // hop]``."""

    name = "stft"

    def __init__(self, settings: STFTSettings | None = None, *, device: torch.device | str = "cpu"):
        self.settings = settings or STFTSettings()
        self.device = torch.device(device)
        self.window = window_tensor(self.settings.window, self.settings.n_fft, self.device)
        self._nnaudio: dict[bool, torch.nn.Module] = {}

    # ----------------------------------------------------------------------------------- geometry
    @property
    def n_fft(self) -> int:
        return self.settings.n_fft

    @property
    def hop(self) -> int:
        return self.settings.hop

    def n_frames(self, n_samples: int) -> int:
        return self.settings.n_frames(n_samples)

    def min_samples(self) -> int:
        return self.settings.min_samples()

    def layout(self, n_samples: int, sample_rate: int) -> list[BlockLayout]:
        return self.settings.layout(n_samples, sample_rate)

    def samples_reached(
        self, block: int, frame0: int, frame1: int, n_samples: int
    ) -> tuple[int, int]:
        half = self.n_fft // 2
        return max(0, frame0 * self.hop - half), min(n_samples, (frame1 - 1) * self.hop + half)

    def frames_over(self, block: int, start: int, stop: int, n_samples: int) -> tuple[int, int]:
        # frame t reaches samples [t hop - n_fft/2, t hop + n_fft/2)
        half = self.n_fft // 2
        lo = (start - half) // self.hop + 1
        hi = -(-(stop + half) // self.hop)
        return max(0, lo), min(self.n_frames(n_samples), hi)

    supports_settle = True
    least_squares_settle = True

    def samples_read(self, block: int, frame0: int, frame1: int, n_samples: int) -> tuple[int, int]:
        half = self.n_fft // 2
        start, stop = frame0 * self.hop - half, (frame1 - 1) * self.hop + half
        lo, hi = max(0, start), min(n_samples, stop)
        if start < 0:  # reflected at the start: samples 1 .. -start
            hi = max(hi, min(n_samples, 1 - start))
        if stop > n_samples:  # reflected at the end: samples down to 2 (n - 1) - (stop - 1)
            lo = min(lo, max(0, 2 * n_samples - 1 - stop))
        return lo, hi

    def frames_reaching(
        self, block: int, frame0: int, frame1: int, n_samples: int
    ) -> tuple[int, int]:
        reach = math.ceil(self.n_fft / self.hop) - 1
        return max(0, frame0 - reach), min(self.n_frames(n_samples), frame1 + reach)

    # ------------------------------------------------------------------------------------ forward
    def _padded(
        self, samples: torch.Tensor, start: int, stop: int, *, offset: int = 0, n: int | None = None
    ) -> torch.Tensor:
        """Samples ``[start, stop)`` of the signal reflect-padded by ``n_fft/2`` at both ends.

        ``samples`` holds the signal from sample ``offset`` on, of a signal ``n`` samples long
        (default: ``samples`` is the whole signal); the samples read must lie in it.
        """
        n = samples.shape[-1] if n is None else n
        half = self.n_fft // 2
        if start >= half and stop - half <= n:
            return samples[:, start - half - offset : stop - half - offset]
        index = torch.arange(start - half, stop - half, device=samples.device)
        index = torch.where(index < 0, -index, index)
        index = torch.where(index >= n, 2 * (n - 1) - index, index)
        return samples[:, index - offset]

    def analyse_frames(
        self, samples: torch.Tensor, block: int, frame0: int, frame1: int
    ) -> torch.Tensor:
        step = self.chunk_frames
        first = (frame0 // step) * step
        total = self.n_frames(samples.shape[-1])
        if not 0 <= frame0 < frame1 <= total:
            raise ValueError(f"frames [{frame0}, {frame1}) are outside [0, {total})")
        pieces = []
        for chunk0 in range(first, frame1, step):
            chunk1 = min(total, chunk0 + step)
            pieces.append(self._analyse_chunk(samples, chunk0, chunk1))
        out = pieces[0] if len(pieces) == 1 else torch.cat(pieces, dim=-1)
        return out[:, :, frame0 - first : frame1 - first]

    def _analyse_into(self, samples: torch.Tensor, store: Store, progress: Progress | None) -> None:
        """Chunks on :func:`~.fft_ops.cpu_workers` threads, each storing its own frames (they are
        disjoint); ``progress`` is called on this thread, in order. A chunk's bits do not depend on
        the thread that computes it."""
        total = self.n_frames(samples.shape[-1])

        def work(frame0: int) -> int:
            frame1 = min(total, frame0 + self.chunk_frames)
            store(0, frame0, frame1, self.analyse_frames(samples, 0, frame0, frame1))
            return frame1

        starts = range(0, total, self.chunk_frames)
        workers = fft_ops.cpu_workers(self.device)
        with contextlib.closing(results_in_order(work, starts, workers)) as results:
            for done in results:
                if progress is not None and progress(done / total) is False:
                    raise Cancelled("analysis cancelled")

    def _analyse_chunk(self, samples: torch.Tensor, frame0: int, frame1: int) -> torch.Tensor:
        x = self._padded(samples, frame0 * self.hop, (frame1 - 1) * self.hop + self.n_fft)
        return self._stft(x)

    def _stft(self, x: torch.Tensor) -> torch.Tensor:
        """Frames of ``x`` ``[C, L]`` (already padded: frame 0 starts at its sample 0): complex64
        ``[C, F, 1 + (L - n_fft) // hop]`` (on the CPU a transposed view of ``[C, T, F]``)."""
        if self.device.type == "cpu" and self.settings.engine == "torch":
            return self._stft_cpu(x)
        x = x.to(device=self.device, dtype=torch.float32)
        if self.settings.engine == "nnaudio":
            spec = self._nnaudio_module(center=False)(x)
            return torch.view_as_complex(spec.contiguous())
        return torch.stft(
            x,
            self.n_fft,
            self.hop,
            window=self.window,
            center=False,
            return_complex=True,
        )

    def _stft_cpu(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`_stft` by numpy and pocketfft on one thread: the float32 rounding, the windowed
        frames and an ``rfft`` along their contiguous last axis, about three times faster than
        ``torch.stft`` on this project's 2-core machine (``tests/benchmarks/bench_open.py``); the
        same frames of the same samples give the same bits in any chunk."""
        signal = np.asarray(x.detach().numpy(), dtype=np.float32)
        spectra = fft_ops.windowed_rfft(signal, self.n_fft, self.hop, self.window.numpy())
        return spectra.transpose(-1, -2)

    def analyse_span(
        self,
        span: torch.Tensor,
        start: int,
        block: int,
        frame0: int,
        frame1: int,
        n_samples: int,
    ) -> torch.Tensor:
        self._check_span(span, start, block, frame0, frame1, n_samples)
        first, stop = frame0 * self.hop, (frame1 - 1) * self.hop + self.n_fft
        return self._stft(self._padded(span, first, stop, offset=start, n=n_samples))

    def _nnaudio_module(self, *, center: bool) -> torch.nn.Module:
        if center not in self._nnaudio:
            from nnAudio.features import STFT as NNAudioSTFT

            self._nnaudio[center] = NNAudioSTFT(
                n_fft=self.n_fft,
                hop_length=self.hop,
                window=self.settings.window,
                freq_scale="no",
                center=center,
                pad_mode="reflect",
                iSTFT=True,
                output_format="Complex",
                verbose=False,
            ).to(self.device)
        return self._nnaudio[center]

    # ------------------------------------------------------------------------------------ inverse
    def _overlap_add(self, frames: torch.Tensor) -> torch.Tensor:
        """Overlap-add ``[C, T, n_fft]`` at hop spacing into ``[C, (T - 1) * hop + n_fft]``.

        When the hop divides ``n_fft`` each frame is ``n_fft / hop`` hop-long pieces and the sum is
        that many shifted additions (several times faster than ``fold``, measured here).
        """
        channels, count, n_fft = frames.shape
        hop = self.hop
        length = (count - 1) * hop + n_fft
        if n_fft % hop:
            return torch.nn.functional.fold(
                frames.transpose(1, 2),
                output_size=(1, length),
                kernel_size=(1, n_fft),
                stride=(1, hop),
            )[:, 0, 0, :]
        pieces = n_fft // hop
        parts = frames.reshape(channels, count, pieces, hop)
        out = torch.zeros(
            (channels, count + pieces - 1, hop), dtype=frames.dtype, device=frames.device
        )
        for k in range(pieces):
            out[:, k : k + count] += parts[:, :, k]
        return out.reshape(channels, length)

    def _envelope(self, start: int, stop: int, n_frames: int) -> torch.Tensor:
        """Sum of squared windows of all ``n_frames`` frames over padded samples ``[start, stop)``."""
        first = max(0, -(-(start - self.n_fft + 1) // self.hop))
        last = min(n_frames, (stop - 1) // self.hop + 1)
        square = (self.window * self.window)[None, None, :].expand(1, last - first, self.n_fft)
        env = self._overlap_add(square.contiguous())[0]
        offset = start - first * self.hop
        return env[offset : offset + stop - start]

    def synthesise_frames(
        self,
        coefficients: torch.Tensor,
        block: int,
        frame0: int,
        n_samples: int,
        *,
        adjoint: bool = False,
    ) -> tuple[int, torch.Tensor]:
        coefficients = coefficients.to(self.device)
        count = coefficients.shape[-1]
        # irfft along the last axis: several times faster than along the bins' axis
        frames = torch.fft.irfft(coefficients.transpose(-1, -2), n=self.n_fft, dim=-1)
        frames = frames * self.window
        start, stop = frame0 * self.hop, (frame0 + count - 1) * self.hop + self.n_fft
        out = self._overlap_add(frames)
        if adjoint:
            out = out * self.n_fft
        else:
            out = out / self._envelope(start, stop, self.n_frames(n_samples))
        half = self.n_fft // 2
        lo, hi = max(start, half), min(stop, n_samples + half)
        return lo - half, out[:, lo - start : hi - start]

    def coefficient_weights(self, block: int) -> torch.Tensor:
        # the one-sided spectrum stands for both halves: every bin but DC and Nyquist twice
        weights = torch.full((self.n_fft // 2 + 1,), 2.0, device=self.device)
        weights[0] = 1.0
        if self.n_fft % 2 == 0:
            weights[-1] = 1.0
        return weights

    def synthesise(self, blocks: list[torch.Tensor], n_samples: int) -> torch.Tensor:
        (spec,) = blocks
        spec = spec.to(self.device)
        if self.settings.engine == "nnaudio":
            module = self._nnaudio_module(center=True)
            return module.inverse(torch.view_as_real(spec), onesided=True, length=n_samples)
        return torch.istft(
            spec, self.n_fft, self.hop, window=self.window, center=True, length=n_samples
        )
