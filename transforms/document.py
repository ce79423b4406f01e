"""The editable document: original audio, transform settings, and magnitude and phase per channel.

No Qt and no wgpu here. Brushes edit the coefficients through :meth:`Document.read` and
:meth:`Document.write`; the document emits no change events itself: the session that drives the edits
does (``spectropaint.app.session.Session.changed``).

Resynthesis is by difference (README, "Architecture"): the edited signal is
``original + inverse(edited - original)`` computed only over frames that were written, so samples no
edit reaches keep their exact original values and an unedited document exports bit-identical.

Memory: a document that would not fit in the host memory available (or ``max_bytes``), counting a
caller's reserve for its view and playback, is refused before its coefficients are allocated, and
:meth:`Document.from_file` refuses it from the file's header, before reading a sample
(:mod:`.memory_budget`). The analysis writes each chunk's magnitude and phase straight into the
document's tensors, so opening peaks at the document's size plus one chunk. A GPU that runs out of
memory during the analysis, a dab or a resynthesis hands the document to the CPU
(:meth:`Document.continue_on_cpu`), and ``notices`` tells the person.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import NoReturn, TypeVar

import numpy as np
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.analysis import AnalysisSettings, make_transform
from spectropaint.transforms.errors import AudioFileError, Cancelled, SettingsError
from spectropaint.transforms.events import Event
from spectropaint.transforms.files.audio_file import (
    AudioData,
    AudioFormat,
    ExportReport,
    default_export_subtype,
    load_audio,
    write_audio,
)
from spectropaint.transforms.host_memory import available_memory
from spectropaint.transforms.memory_budget import ReserveEstimate, plan_document
from spectropaint.transforms.ordered_threads import finish, in_column_parts
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings
from spectropaint.transforms.torch_device import (
    HostRead,
    choose_device,
    continue_on_cpu_notice,
    limit_fft_plans,
    out_of_memory,
    release_cache,
    to_device,
    to_host,
)
from spectropaint.transforms.transform import BlockLayout, Progress, Transform

FORMAT_BY_SUFFIX = {".wav": "WAV", ".flac": "FLAC", ".aif": "AIFF", ".aiff": "AIFF", ".ogg": "OGG"}
READ_SHARE = 0.3
"""The part of :meth:`Document.from_file`'s progress given to reading (the rest is analysis)."""
CPU = torch.device("cpu")
HOST_PART = 1 << 17
"""Samples per host thread, at least, when the edited signal is made on the host: the original
copied into a new array while the device computes the edit, then the edit added in place. The new
array's pages fault in as they are first written, which on the H200's host took 3.1 ms for 29.7 s
of stereo on one thread and 1.3 ms on eight."""

T = TypeVar("T")


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


def _padded_for_analysis(samples: np.ndarray, minimum: int) -> np.ndarray:
    """``samples`` ``[C, N]``, or a copy padded with zeros to ``minimum`` samples when shorter."""
    if samples.shape[-1] >= minimum:
        return samples
    return np.pad(samples, ((0, 0), (0, minimum - samples.shape[-1])))


class _Rising:
    """A progress callback that never goes back (an analysis restarted on the CPU starts at 0)."""

    def __init__(self, progress: Progress | None):
        self.progress, self.best = progress, 0.0

    def __call__(self, done: float) -> object:
        self.best = max(self.best, done)
        return None if self.progress is None else self.progress(self.best)


def measure_full_scale(transform: Transform, sample_rate: int, device: torch.device) -> float:
    """The magnitude ``transform`` gives a full-scale cosine at the centre of a band of its first
    block (a quarter of the way up): what 0 dB means. The NSGT states its own (1)."""
    stated = getattr(transform, "full_scale", None)
    if stated is not None:
        return stated
    n = 4 * transform.min_samples()
    layout = transform.layout(n, sample_rate)[0]
    times = np.arange(n) / sample_rate
    tone = np.cos(2 * np.pi * layout.band_hz[max(1, layout.n_bins // 4)] * times)[None, :]
    middle = (n // 2) // layout.hop
    coefficients = transform.analyse_frames(
        torch.from_numpy(tone).to(device), 0, middle, middle + 1
    )
    return float(coefficients.abs().max())


def edited_minus_original(
    magnitude: torch.Tensor, phase: torch.Tensor, original: torch.Tensor, edited: np.ndarray
) -> torch.Tensor:
    """The stored ``magnitude`` and ``phase`` ``[C, F, T]`` minus the ``original`` analysis as a
    document stores it (through its float32 polar form, so cells left as analysed give 0
    exactly), on the frames ``edited`` (bool ``[T]``); 0 on the others: complex64."""
    difference = fft_ops.polar_difference(magnitude, phase, *fft_ops.polar(original))
    if not edited.all():  # no boolean indexing: on a GPU it waits for the device to count
        difference.masked_fill_(to_device(~edited, difference.device), 0)
    return difference


@dataclass(frozen=True)
class EditedRun:
    """Coefficients of frames ``frame0 ...`` of a block, with which of them are edited.

    Attributes
    ----------
    magnitude, phase : torch.Tensor [shape=(C, F, T)], float32
    edited : np.ndarray [shape=(T,)], bool
    """

    frame0: int
    magnitude: torch.Tensor
    phase: torch.Tensor
    edited: np.ndarray

    def copy(self) -> EditedRun:
        """A copy that later edits of the document do not change."""
        return EditedRun(
            self.frame0, self.magnitude.clone(), self.phase.clone(), self.edited.copy()
        )


def resynthesise(
    transform: Transform,
    samples: torch.Tensor,
    original: np.ndarray,
    start: int,
    stop: int,
    runs: list[tuple[int, EditedRun]],
    *,
    channels: tuple[int, ...] | None = None,
) -> np.ndarray:
    """Samples ``[start, stop)`` of the edited signal: ``original`` plus the inverse of
    ``edited - original`` over the edited frames of ``runs``.

    Parameters
    ----------
    samples : torch.Tensor [shape=(C, N)]
        The original signal as the transform reads it (float64 on the CPU, float32 elsewhere);
        only the samples the runs' frames read are used.
    original : np.ndarray [shape=(C, N)], float64
        The same samples, exactly.
    runs : list of (block, EditedRun)
        Every edited frame of any block that reaches ``[start, stop)`` must be in one.
    channels : tuple of int, optional
        The channels of ``samples`` and ``original`` that the runs hold (default: all).

    Returns
    -------
    np.ndarray [shape=(len(channels), stop - start)], float64
    """
    pick = slice(None) if channels is None else list(channels)
    out = original[pick, start:stop].copy()
    n = original.shape[-1]
    if not runs:
        return out
    spans = [(block, run.frame0, run.frame0 + run.edited.size) for block, run in runs]
    read = [transform.samples_read(*piece, n) for piece in spans]
    a0, a1 = min(a for a, _ in read), max(b for _, b in read)
    references = transform.analyse_pieces(samples[:, a0:a1][pick], a0, spans, n)
    pieces = []
    for (block, run), reference in zip(runs, references, strict=True):
        magnitude, phase = run.magnitude.to(transform.device), run.phase.to(transform.device)
        delta = edited_minus_original(magnitude, phase, reference, run.edited)
        pieces.append((block, run.frame0, delta))
    found = _near_on_host(*transform.synthesise_many(pieces, n), start, stop)
    if found is not None:
        a, near = found
        out[:, a : a + near.shape[-1]] += near
    return out


def _near(
    s0: int, contribution: torch.Tensor, start: int, stop: int
) -> tuple[int, torch.Tensor] | None:
    """The part of ``contribution`` ``[C, n]`` (samples from ``s0`` on) within ``[start, stop)``:
    ``(offset from start, [C, m])``, a view, or None when none is."""
    a, b = max(start, s0), min(stop, s0 + contribution.shape[-1])
    if b <= a:
        return None
    return a - start, contribution[:, a - s0 : b - s0]


def _near_on_host(
    s0: int, contribution: torch.Tensor, start: int, stop: int
) -> tuple[int, np.ndarray] | None:
    """:func:`_near` on the host. From CUDA as float64 (exact; a float64 sum on the host is then
    2.4 times faster than float64 + float32: 1.15 against 2.76 ms on one core here), through
    pinned memory; MPS has no float64."""
    found = _near(s0, contribution, start, stop)
    if found is None:
        return None
    a, near = found
    if near.device.type == "cuda":
        near = near.double()
    return a, to_host(near)


def _exact_in_float32(samples: np.ndarray) -> list[Future]:
    """Start asking, on the host threads, whether every sample of ``samples`` ``[C, n]`` float64 is
    a float32 value (so are those of 8- to 24-bit and float32 files): a bool per part."""

    def exact(part: slice) -> bool:
        stop = min(part.stop, samples.shape[-1])
        for first in range(part.start, stop, HOST_PART):  # a small float32 copy at a time
            piece = samples[:, first : min(stop, first + HOST_PART)]
            if not np.array_equal(piece.astype(np.float32), piece):
                return False
        return True

    return in_column_parts(exact, samples.shape[-1], HOST_PART)


def _copy_in_parts(out: np.ndarray, original: np.ndarray) -> list[Future]:
    """Start copying ``original`` into ``out`` (``[C, n]`` each) on the host threads."""
    return in_column_parts(
        lambda part: np.copyto(out[:, part], original[:, part]), out.shape[-1], HOST_PART
    )


def _add_in_parts(out: np.ndarray, near: np.ndarray) -> None:
    """``out += near`` (``[C, n]`` each), on the host threads."""
    finish(
        in_column_parts(
            lambda part: np.add(out[:, part], near[:, part], out=out[:, part]),
            out.shape[-1],
            HOST_PART,
        )
    )


def edited_runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """Half-open ``[start, stop)`` runs of True in a bool array."""
    padded = np.concatenate(([False], flags, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))


class Document:
    """Audio plus its editable coefficients on one torch device.

    Parameters
    ----------
    audio : AudioData
    settings : STFTSettings or NSGTSettings, optional
        The transform (default: the STFT's defaults).
    device : str or torch.device, optional
        See :func:`~spectropaint.transforms.torch_device.choose_device`. A GPU whose free memory the
        coefficients would not fit is replaced by the CPU, with a notice.
    progress : callable, optional
        Sees the fraction of the analysis done; returning ``False`` cancels (:class:`Cancelled`).
    reserve_bytes : int or callable, optional
        Host memory the caller will add for this document (bytes, or a
        :data:`~spectropaint.transforms.memory_budget.ReserveEstimate` of its shape, such as
        :func:`~spectropaint.transforms.memory_budget.view_and_playback_bytes`).
    max_bytes : int, optional
        The most host memory the document (audio, coefficients, reserve) may take; default: the
        memory available now plus the audio's own. A document that would need more is refused
        before the coefficients are allocated, naming the need, the budget and what would fit.

    Raises
    ------
    AudioFileError
        Audio read from a file that is too short or does not fit.
    SettingsError
        The same for audio without a file.
    """

    def __init__(
        self,
        audio: AudioData,
        *,
        settings: AnalysisSettings | None = None,
        device: str | torch.device | None = None,
        progress: Progress | None = None,
        reserve_bytes: int | ReserveEstimate = 0,
        max_bytes: int | None = None,
    ):
        self.audio = audio
        self.settings = settings or STFTSettings()
        self._full_scale: float | None = None
        self.notices: Event[str] = Event(remember=True)
        self.revision = 0
        """Counts :meth:`write` calls: work planned on the coefficients checks it is unchanged."""
        """Messages for the person at the program (a switch to the CPU); replayed to late listeners."""
        channels, length = audio.samples.shape
        try:
            minimum = make_transform(self.settings, audio.format.sample_rate).min_samples()
        except SettingsError as err:  # settings that do not fit this sample rate
            self._refuse(str(err))
        self._signal = _padded_for_analysis(audio.samples, minimum)
        """The samples analysed: the audio itself, or a copy padded with silence to one window."""
        n = self._signal.shape[-1]
        warnings = list(audio.warnings)
        if n > length:
            warnings.append(
                f"{length} samples long, shorter than one analysis window ({n} samples): "
                "padded with silence for analysis; exported at its own length"
            )
        if warnings:  # one notice: a status bar shows the last one only
            path = f"'{audio.path}': " if audio.path is not None else ""
            self.notices.emit(path + "; ".join(warnings))
        budget = max_bytes
        available = available_memory()
        if budget is None and available is not None:
            budget = available + audio.samples.nbytes  # the audio is held already
        plan = plan_document(
            n,
            channels,
            self.settings,
            sample_rate=audio.format.sample_rate,
            device=choose_device(device),
            reserve=reserve_bytes,
            budget=budget,
        )
        if plan.refusal is not None:
            self._refuse(plan.refusal)
        self.device = plan.device
        limit_fft_plans(self.device)
        self.transform: Transform = make_transform(
            self.settings, audio.format.sample_rate, self.device
        )
        if plan.notice is not None:
            self.notices.emit(plan.notice)
        self.blocks: list[CoefficientBlock] = []
        rising = _Rising(progress)

        def analyse() -> list[tuple[torch.Tensor, torch.Tensor]]:
            self._samples = self._device_samples()
            return self.transform.analyse_polar(self._samples, progress=rising)

        self._exactness: list[Future] | None = None
        """Whether the device's samples are the audio exactly, once asked (:meth:`_samples_exact`)."""
        polar = self.on_cpu_after_oom("analysing the audio", analyse)
        layouts = self.transform.layout(n, audio.format.sample_rate)
        self.blocks = [
            CoefficientBlock(
                magnitude=magnitude,
                phase=phase,
                layout=layout,
                frame_seconds=layout.frame_seconds(audio.format.sample_rate),
                edited_frames=np.zeros(layout.n_frames, dtype=bool),
            )
            for (magnitude, phase), layout in zip(polar, layouts, strict=True)
        ]

    def _refuse(self, reason: str) -> NoReturn:
        if self.audio.path is not None:
            raise AudioFileError(self.audio.path, reason)
        raise SettingsError(reason)

    def _device_samples(self) -> torch.Tensor:
        """The samples the transform reads: the float64 array itself on the CPU (no copy); float32
        elsewhere, converted slice by slice (the analysis rounds to float32 either way)."""
        samples = np.ascontiguousarray(self._signal)
        if self.device.type == "cpu":
            return torch.from_numpy(samples)
        out = torch.empty(samples.shape, dtype=torch.float32, device=self.device)
        step = 1 << 22
        for start in range(0, samples.shape[-1], step):
            piece = torch.from_numpy(samples[:, start : start + step])
            out[:, start : start + step] = piece.to(self.device, torch.float32)
        return out

    # ------------------------------------------------------------------------------ construction
    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike,
        *,
        settings: AnalysisSettings | None = None,
        device: str | torch.device | None = None,
        progress: Progress | None = None,
        reserve_bytes: int | ReserveEstimate = 0,
        max_bytes: int | None = None,
    ) -> Document:
        """Read and analyse ``path``; refused from its header alone when it would not fit.

        ``progress`` sees reading as the first :data:`READ_SHARE` and the analysis as the rest.
        See the class for the other parameters.
        """
        settings = settings or STFTSettings()
        chosen = choose_device(device)
        budget = available_memory() if max_bytes is None else max_bytes

        def admit(audio_format: AudioFormat, frames: int) -> str | None:
            try:
                return _plan(audio_format, frames)
            except SettingsError as err:  # settings that do not fit this file's sample rate
                return str(err)

        def _plan(audio_format: AudioFormat, frames: int) -> str | None:
            return plan_document(
                frames,
                audio_format.channels,
                settings,
                sample_rate=audio_format.sample_rate,
                device=chosen,
                reserve=reserve_bytes,
                budget=budget,
            ).refusal

        def part(offset: float, share: float) -> Progress | None:
            return None if progress is None else (lambda done: progress(offset + share * done))

        audio = load_audio(path, admit=admit, progress=part(0.0, READ_SHARE))
        return cls(
            audio,
            settings=settings,
            device=chosen,
            progress=part(READ_SHARE, 1.0 - READ_SHARE),
            reserve_bytes=reserve_bytes,
            max_bytes=max_bytes,
        )

    @classmethod
    def from_samples(
        cls,
        samples: np.ndarray,
        sample_rate: int,
        *,
        settings: AnalysisSettings | None = None,
        device: str | torch.device | None = None,
        subtype: str = "FLOAT",
        progress: Progress | None = None,
        reserve_bytes: int | ReserveEstimate = 0,
        max_bytes: int | None = None,
    ) -> Document:
        """A document of in-memory samples ``[C, N]`` (or ``[N]`` for mono), float64 in [-1, 1].

        Samples of another type are refused before their float64 copy is made when the document
        would not fit; see the class for the other parameters.
        """
        samples = np.atleast_2d(samples)
        if samples.dtype != np.float64:  # refuse before the float64 copy is made
            channels, n = samples.shape
            refusal = plan_document(
                n,
                channels,
                settings or STFTSettings(),
                sample_rate=int(sample_rate),
                device=choose_device(device),
                reserve=reserve_bytes,
                budget=available_memory() if max_bytes is None else max_bytes,
            ).refusal
            if refusal is not None:
                raise SettingsError(refusal)
        samples = np.asarray(samples, dtype=np.float64)
        fmt = AudioFormat("WAV", subtype, int(sample_rate), samples.shape[0])
        return cls(
            AudioData(samples, fmt, None),
            settings=settings,
            device=device,
            progress=progress,
            reserve_bytes=reserve_bytes,
            max_bytes=max_bytes,
        )

    # -------------------------------------------------------------------------------- properties
    @property
    def n_channels(self) -> int:
        return self.audio.samples.shape[0]

    @property
    def n_samples(self) -> int:
        """The audio's length in samples (the analysis of a very short file covers more)."""
        return self.audio.samples.shape[-1]

    @property
    def sample_rate(self) -> int:
        return self.audio.format.sample_rate

    @property
    def full_scale(self) -> float:
        """The magnitude of a full-scale sinusoid at a bin's centre in this document's transform:
        what 0 dB means, for the view, the readout and the brushes' levels.

        Measured once by analysing a test tone, so it holds for any transform, window and scaling.
        """
        if self._full_scale is None:
            self._full_scale = measure_full_scale(self.transform, self.sample_rate, self.device)
        return self._full_scale

    @property
    def analysed_samples(self) -> torch.Tensor:
        """The original samples ``[C, N]`` as the transform reads them (never written)."""
        return self._samples

    @property
    def is_edited(self) -> bool:
        return any(block.edited_frames.any() for block in self.blocks)

    # ------------------------------------------------------------------ out of device memory
    def on_cpu_after_oom(self, operation: str, work: Callable[[], T]) -> T:
        """``work()``; should the device run out of memory, :meth:`continue_on_cpu` and once more.

        Out of memory is ``torch.OutOfMemoryError`` or a library's failed allocation
        (:func:`~spectropaint.transforms.torch_device.out_of_memory`); other errors pass unchanged.

        ``work`` must be safe to repeat after a failure part way (read the document's tensors and
        device afresh, write only at its end). ``operation`` names it in the notice, e.g.
        ``'painting with blur'``.
        """
        try:
            return work()
        except RuntimeError as error:  # torch.OutOfMemoryError is one
            if not out_of_memory(error):
                raise
        # here, out of the except block, the failed attempt's tensors (its traceback) are freed
        self.continue_on_cpu(operation)
        return work()

    def continue_on_cpu(self, operation: str) -> None:
        """Move the samples and coefficients to the CPU, free the device's cache, and notify.

        Everything else that holds device tensors of this document (a stroke in progress) follows
        :attr:`device` before its next use. Coefficients keep the values the device computed, so
        resynthesis of frames already edited may differ from a CPU-only document's by the two
        devices' FFT rounding (about 1e-7 of full scale); unedited frames stay exact.
        """
        previous = self.device
        if previous.type != "cpu":
            self.device = CPU
            self.transform = make_transform(self.settings, self.sample_rate, CPU)
            self._samples = self._device_samples()
            for block in self.blocks:
                block.magnitude = block.magnitude.to(CPU)
                block.phase = block.phase.to(CPU)
            release_cache(previous)
        self.notices.emit(continue_on_cpu_notice(previous, operation))

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

    def write(self, region: Region, magnitude: torch.Tensor, phase: torch.Tensor | None) -> None:
        """Store magnitude and phase (None: the phase stays) for ``region`` and mark its frames
        edited (does not emit)."""
        block, index = self._box(region)
        block.magnitude[index] = magnitude.to(block.magnitude.device, torch.float32)
        if phase is not None:
            block.phase[index] = phase.to(block.phase.device, torch.float32)
        self.mark_written(region)

    def cells(self, region: Region) -> tuple[torch.Tensor, torch.Tensor, int] | None:
        """Where ``region``'s cells lie, for a kernel to write them in place (then
        :meth:`mark_written`): the block's magnitude and phase ``[channels, bins, frames]`` and
        the index of the region's first cell in their memory (the same strides serve both: no view
        is made); None where the channels are not a run."""
        block, channels = self.blocks[region.block], region.channels
        inside = 0 <= region.bin0 < region.bin1 <= block.n_bins
        if not (inside and 0 <= region.frame0 < region.frame1 <= block.n_frames and channels):
            self._box(region)  # (which says why)
        first = channels[0]
        if len(channels) > 1 and channels != tuple(range(first, first + len(channels))):
            return None
        magnitude = block.magnitude
        at = (
            first * magnitude.stride(0)
            + region.bin0 * magnitude.stride(1)
            + region.frame0 * magnitude.stride(2)
        )
        return magnitude, block.phase, at

    def mark_written(self, region: Region) -> None:
        """Mark ``region``'s frames edited, after its cells were written in place (:meth:`cells`)."""
        self.blocks[region.block].edited_frames[region.frame0 : region.frame1] = True
        self.revision += 1

    def magnitude_at(self, seconds: float, hz: float) -> HostRead | None:
        """Magnitude per channel ``[C]`` of the cell nearest ``seconds`` and ``hz``, on its way to
        the host (after the edits already asked of the device): the STFT's block, or the NSGT's
        nearest band (the sum of its two blocks at that time); None outside the grid."""
        if self.transform.name == "nsgt":
            return self.transform.magnitude_at(self.blocks, seconds, hz)
        block = self.blocks[0]
        step = block.hop / self.sample_rate
        frame = round((seconds - float(block.frame_seconds[0])) / step)
        bin_ = round(hz / float(block.band_hz[1]))
        if not (0 <= frame < block.n_frames and 0 <= bin_ < block.n_bins):
            return None
        return HostRead(block.magnitude[:, bin_, frame])

    # ------------------------------------------------------------------------------ resynthesis
    def _difference(self, block_index: int, frame0: int, frame1: int) -> torch.Tensor:
        """``edited - original`` coefficients of frames ``[frame0, frame1)``, zero where unedited."""
        block = self.blocks[block_index]
        frames = slice(frame0, frame1)
        return edited_minus_original(
            block.magnitude[:, :, frames],
            block.phase[:, :, frames],
            self.transform.analyse_frames(self._samples, block_index, frame0, frame1),
            block.edited_frames[frames],
        )

    def edited_run(
        self, frame0: int, frame1: int, *, block: int = 0, channels: tuple[int, ...] | None = None
    ) -> EditedRun | None:
        """The edited frames among ``[frame0, frame1)`` (first to last, with the unedited ones
        between), or None when none is edited. Views of the document's tensors, not copies."""
        coefficients = self.blocks[block]
        edited = coefficients.edited_frames[frame0:frame1]
        if not edited.any():
            return None
        first = frame0 + int(np.argmax(edited))
        last = frame0 + len(edited) - int(np.argmax(edited[::-1]))
        index = slice(None) if channels is None else list(channels)
        return EditedRun(
            first,
            coefficients.magnitude[index, :, first:last],
            coefficients.phase[index, :, first:last],
            coefficients.edited_frames[first:last],
        )

    def edited_span(self, frame0: int, frame1: int, *, block: int = 0) -> tuple[int, np.ndarray]:
        """The edited signal over the samples frames ``[frame0, frame1)`` of ``block`` reach.

        Returns ``(first_sample, samples [C, n])``: see :meth:`edited_between`.
        """
        start, stop = self.transform.samples_reached(block, frame0, frame1, self.n_samples)
        return start, self.edited_between(start, stop)

    def samples_of(self, region: Region) -> tuple[int, int]:
        """The half-open span of samples that editing ``region`` changes."""
        return self.transform.samples_reached(
            region.block, region.frame0, region.frame1, self.n_samples
        )

    def edited_between(self, start: int, stop: int) -> np.ndarray:
        """The edited signal over samples ``[start, stop)``, ``[C, stop - start]`` float64.

        The original samples plus the inverse of the differences of every edited frame, of every
        block, that reaches them. Costs time in proportion to the span. Should the device run out
        of memory, the document continues on the CPU.
        """
        return self.on_cpu_after_oom("resynthesising", lambda: self._edited_between(start, stop))

    def _edited_between(self, start: int, stop: int) -> np.ndarray:
        stop = max(start, min(stop, self.n_samples))  # the padding of a short file is not audio
        original = self.audio.samples[:, start:stop]
        # CUDA adds the edit to the float32 samples it holds where they are the original exactly:
        # only the sum crosses to the host. Otherwise the host threads copy the original while the
        # device computes the edit, then add it.
        on_device = self.device.type == "cuda" and self._samples_exact()
        out = None if on_device else np.empty_like(original)
        copying = [] if out is None else _copy_in_parts(out, original)
        try:
            found = self._edit_synthesis(start, stop)
        finally:
            finish(copying)
        if found is None:
            return original.copy() if out is None else out
        if out is None:
            return to_host(self._added_on_device(start, stop, *found))
        near = _near_on_host(*found, start, stop)
        if near is not None:
            a, values = near
            _add_in_parts(out[:, a : a + values.shape[-1]], values)
        return out

    def _samples_exact(self) -> bool:
        """Whether the device's float32 samples are the audio exactly, asked once, at the first
        resynthesis (on the host threads: 19 ms for ten minutes of stereo on the H200; not while
        the document opens, where those threads would compete with the analysis)."""
        if self._exactness is None:
            self._exactness = _exact_in_float32(self.audio.samples)
        return all(finish(self._exactness))

    def _added_on_device(
        self, start: int, stop: int, s0: int, contribution: torch.Tensor
    ) -> torch.Tensor:
        """The device's samples ``[start, stop)`` plus ``contribution`` (samples from ``s0`` on),
        in float64: the host's sum, bit for bit, where those samples are the original."""
        out = self._samples[:, start:stop].to(torch.float64, copy=True)
        found = _near(s0, contribution, start, stop)
        if found is not None:
            a, near = found
            out[:, a : a + near.shape[-1]] += near
        return out

    def _edit_synthesis(self, start: int, stop: int) -> tuple[int, torch.Tensor] | None:
        """The inverse of the differences of every edited frame that reaches samples ``[start,
        stop)``: ``(first sample, [C, n])`` on the device, or None."""
        n = self._signal.shape[-1]  # what was analysed: a short file's padding included
        pieces = []
        with self.transform.sharing_work():
            for index, block in enumerate(self.blocks):
                lo, hi = self.transform.frames_over(index, start, stop, n)
                edited = block.edited_frames[lo:hi]
                if not edited.any():
                    continue
                first = lo + int(np.argmax(edited))
                last = lo + len(edited) - int(np.argmax(edited[::-1]))
                pieces.append((index, first, self._difference(index, first, last)))
        if not pieces:
            return None
        return self.transform.synthesise_many(pieces, n)

    def edited_sample_spans(self) -> list[tuple[int, int]]:
        """Merged half-open sample spans where the edited signal may differ from the original."""
        spans = sorted(
            self.transform.samples_reached(index, frame0, frame1, self.n_samples)
            for index, block in enumerate(self.blocks)
            for frame0, frame1 in edited_runs(block.edited_frames)
        )
        merged: list[tuple[int, int]] = []
        for start, stop in spans:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
            else:
                merged.append((start, stop))
        return merged

    def edited_samples(self, *, progress: Progress | None = None) -> np.ndarray:
        """The whole edited signal ``[C, N]`` float64; the original array itself when unedited.

        ``progress`` is called with the fraction of edited sample spans done; ``False`` cancels.
        """
        if not self.is_edited:
            return self.audio.samples
        out = self.audio.samples.copy()
        spans = self.edited_sample_spans()
        for done, (start, stop) in enumerate(spans, 1):
            out[:, start:stop] = self.edited_between(start, stop)
            if progress is not None and progress(done / len(spans)) is False:
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
