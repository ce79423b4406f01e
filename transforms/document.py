"""The editable document: original audio, transform settings, and magnitude and phase per channel.

No Qt and no wgpu here. Brushes edit the coefficients through :meth:`Document.read` and
:meth:`Document.write`; whoever batches edits (one pointer event) emits ``region_changed`` once.

Resynthesis is by difference (DESIGN.md): the edited signal is
``original + inverse(edited - original)`` computed only over frames that were written, so samples no
edit reaches keep their exact original values and an unedited document exports bit-identical.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch

from spectropaint.gpu.torch_device import choose_device
from spectropaint.transforms.audio_file import (
    AudioData,
    AudioFormat,
    ExportReport,
    default_export_subtype,
    load_audio,
    write_audio,
)
from spectropaint.transforms.errors import AudioFileError, Cancelled, SettingsError
from spectropaint.transforms.regions import Region, RegionChanged
from spectropaint.transforms.stft import STFT, STFTSettings
from spectropaint.transforms.transform import BlockLayout, Progress, Transform

FORMAT_BY_SUFFIX = {".wav": "WAV", ".flac": "FLAC", ".aif": "AIFF", ".aiff": "AIFF", ".ogg": "OGG"}


@dataclass
class CoefficientBlock:
    """One rectangular grid of coefficients: ``magnitude`` and ``phase`` are ``[C, F, T]`` float32."""

    magnitude: torch.Tensor
    phase: torch.Tensor
    layout: BlockLayout
    frame_seconds: np.ndarray
    edited_frames: np.ndarray
    """bool ``[T]``: frames written since the document was analysed."""

    @property
    def band_hz(self) -> np.ndarray:
        return self.layout.band_hz

    @property
    def hop(self) -> int:
        return self.layout.hop

    @property
    def n_bins(self) -> int:
        return self.magnitude.shape[1]

    @property
    def n_frames(self) -> int:
        return self.magnitude.shape[2]


def polar_to_complex(magnitude: torch.Tensor, phase: torch.Tensor) -> torch.Tensor:
    return torch.polar(magnitude, phase)


def edited_runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """Half-open ``[start, stop)`` runs of True in a bool array."""
    padded = np.concatenate(([False], flags, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))


class Document:
    """Audio plus its editable coefficients on one torch device."""

    def __init__(
        self,
        audio: AudioData,
        *,
        settings: STFTSettings | None = None,
        device: str | torch.device | None = None,
        progress: Progress | None = None,
    ):
        self.audio = audio
        self.settings = settings or STFTSettings()
        self.device = choose_device(device)
        self.transform: Transform = STFT(self.settings, device=self.device)
        n = audio.samples.shape[-1]
        if n < self.transform.min_samples():
            reason = (
                f"audio is {n} samples long, shorter than one analysis frame "
                f"({self.transform.min_samples()} samples)"
            )
            if audio.path is not None:
                raise AudioFileError(audio.path, reason)
            raise SettingsError(reason)
        self.region_changed = RegionChanged()
        self._samples = torch.from_numpy(np.ascontiguousarray(audio.samples)).to(self.device)
        coefficients = self.transform.analyse(self._samples, progress=progress)
        layouts = self.transform.layout(n, audio.format.sample_rate)
        self.blocks = [
            CoefficientBlock(
                magnitude=spec.abs(),
                phase=spec.angle(),
                layout=layout,
                frame_seconds=layout.frame_seconds(audio.format.sample_rate),
                edited_frames=np.zeros(layout.n_frames, dtype=bool),
            )
            for spec, layout in zip(coefficients, layouts, strict=True)
        ]

    # ------------------------------------------------------------------------------ construction
    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike,
        *,
        settings: STFTSettings | None = None,
        device: str | torch.device | None = None,
        progress: Progress | None = None,
    ) -> Document:
        return cls(load_audio(path), settings=settings, device=device, progress=progress)

    @classmethod
    def from_samples(
        cls,
        samples: np.ndarray,
        sample_rate: int,
        *,
        settings: STFTSettings | None = None,
        device: str | torch.device | None = None,
        subtype: str = "FLOAT",
    ) -> Document:
        """A document of in-memory samples ``[C, N]`` (or ``[N]`` for mono), float64 in [-1, 1]."""
        samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
        fmt = AudioFormat("WAV", subtype, int(sample_rate), samples.shape[0])
        return cls(AudioData(samples, fmt, None), settings=settings, device=device)

    # -------------------------------------------------------------------------------- properties
    @property
    def n_channels(self) -> int:
        return self.audio.samples.shape[0]

    @property
    def n_samples(self) -> int:
        return self.audio.samples.shape[-1]

    @property
    def sample_rate(self) -> int:
        return self.audio.format.sample_rate

    @property
    def is_edited(self) -> bool:
        return any(block.edited_frames.any() for block in self.blocks)

    # ---------------------------------------------------------------------------------- editing
    def _box(self, region: Region):
        block = self.blocks[region.block]
        if region.clipped(block.n_bins, block.n_frames) != region or region.empty:
            raise ValueError(
                f"region {region} is empty or outside the {block.n_bins}x{block.n_frames} grid"
            )
        first, count = region.channels[0], len(region.channels)
        if region.channels == tuple(range(first, first + count)):
            channels = slice(first, first + count)  # a view, not an advanced-indexing gather
        else:
            channels = list(region.channels)
        return block, (
            channels,
            slice(region.bin0, region.bin1),
            slice(region.frame0, region.frame1),
        )

    def read(self, region: Region) -> tuple[torch.Tensor, torch.Tensor]:
        """Copies of magnitude and phase in ``region``: ``[len(channels), bins, frames]``."""
        block, index = self._box(region)
        return block.magnitude[index].clone(), block.phase[index].clone()

    def write(self, region: Region, magnitude: torch.Tensor, phase: torch.Tensor) -> None:
        """Store magnitude and phase for ``region`` and mark its frames edited (does not emit)."""
        block, index = self._box(region)
        block.magnitude[index] = magnitude.to(block.magnitude.device, torch.float32)
        block.phase[index] = phase.to(block.phase.device, torch.float32)
        block.edited_frames[region.frame0 : region.frame1] = True

    # ------------------------------------------------------------------------------ resynthesis
    def _difference(self, block_index: int, frame0: int, frame1: int) -> torch.Tensor:
        """``edited - original`` coefficients of frames ``[frame0, frame1)``, zero where unedited."""
        block = self.blocks[block_index]
        flags = torch.from_numpy(block.edited_frames[frame0:frame1]).to(self.device)
        original = self.transform.analyse_frames(self._samples, block_index, frame0, frame1)
        edited = polar_to_complex(
            block.magnitude[:, :, frame0:frame1], block.phase[:, :, frame0:frame1]
        )
        reference = polar_to_complex(original.abs(), original.angle())
        return torch.where(flags, edited - reference, torch.zeros_like(edited))

    def edited_span(self, frame0: int, frame1: int, *, block: int = 0) -> tuple[int, np.ndarray]:
        """The edited signal over the samples frames ``[frame0, frame1)`` reach.

        Returns ``(first_sample, samples [C, n])``: the original samples plus the inverse of the
        differences of every edited frame that reaches them. Costs time in proportion to the span.
        """
        n = self.n_samples
        start, stop = self.transform.samples_reached(block, frame0, frame1, n)
        out = self.audio.samples[:, start:stop].copy()
        lo, hi = self.transform.frames_reaching(block, frame0, frame1, n)
        edited = self.blocks[block].edited_frames[lo:hi]
        if not edited.any():
            return start, out
        first = lo + int(np.argmax(edited))
        last = lo + len(edited) - int(np.argmax(edited[::-1]))
        delta = self._difference(block, first, last)
        s0, contribution = self.transform.synthesise_frames(delta, block, first, n)
        contribution = contribution.double().cpu().numpy()
        a, b = max(start, s0), min(stop, s0 + contribution.shape[-1])
        out[:, a - start : b - start] += contribution[:, a - s0 : b - s0]
        return start, out

    def edited_samples(self, *, progress: Progress | None = None) -> np.ndarray:
        """The whole edited signal ``[C, N]`` float64; the original array itself when unedited.

        ``progress`` is called with the fraction of edited runs done; ``False`` cancels.
        """
        if not self.is_edited:
            return self.audio.samples
        out = self.audio.samples.copy()
        runs = [
            (index, frame0, frame1)
            for index, block in enumerate(self.blocks)
            for frame0, frame1 in edited_runs(block.edited_frames)
        ]
        for done, (index, frame0, frame1) in enumerate(runs, 1):
            start, span = self.edited_span(frame0, frame1, block=index)
            out[:, start : start + span.shape[-1]] = span
            if progress is not None and progress(done / len(runs)) is False:
                raise Cancelled("resynthesis cancelled")
        return out

    # ---------------------------------------------------------------------------------- export
    def export(
        self,
        path: str | os.PathLike,
        *,
        subtype: str | None = None,
        format: str | None = None,
        progress: Progress | None = None,
    ) -> ExportReport:
        """Write the edited audio atomically; ``format`` from the suffix, ``subtype`` the source's.

        ``progress`` sees resynthesis as the first half and writing as the second; returning
        ``False`` cancels (:class:`Cancelled`) and leaves any existing file untouched.
        """
        if format is None:
            suffix = os.path.splitext(os.fspath(path))[1].lower()
            if suffix not in FORMAT_BY_SUFFIX:
                raise AudioFileError(
                    path,
                    f"unknown audio suffix {suffix or '(none)'!r}; use one of "
                    + ", ".join(sorted(FORMAT_BY_SUFFIX)),
                    action="write",
                )
            format = FORMAT_BY_SUFFIX[suffix]
        subtype = subtype or default_export_subtype(self.audio.format, format)

        def half(offset: float):
            return None if progress is None else (lambda done: progress(offset + done / 2))

        return write_audio(
            path,
            self.edited_samples(progress=half(0.0)),
            self.sample_rate,
            format=format,
            subtype=subtype,
            progress=half(0.5),
        )
