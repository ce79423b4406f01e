"""How much memory a document will take, and the refusal given before anything is allocated.

Everything here is computed from shapes, never measured, so it can run on a file's header alone:

- :func:`document_bytes`: what a :class:`~spectropaint.transforms.document.Document` holds (float64
  audio, float32 magnitude and phase of every coefficient block, exactly as the transform lays them
  out) plus the working memory of its analysis;
- what the window adds (textures, playback buffers) is estimated where those live
  (:mod:`spectropaint.gpu.texture_memory`, :mod:`spectropaint.app.files.file_actions`) and passed
  in as a reserve;
- :func:`compute_device`: the CPU instead of a GPU whose free memory the coefficients would not fit;
- :func:`memory_refusal`: why a document does not fit in the memory available, and what would fit;
- :func:`plan_document`: both, as the document uses them.

Host memory available is :func:`spectropaint.transforms.host_memory.available_memory`: the least of
free memory, the address-space limit's room and the control group's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch

from spectropaint.transforms.analysis import AnalysisSettings, make_transform
from spectropaint.transforms.fft_ops import cpu_workers
from spectropaint.transforms.files.audio_file import format_bytes, too_large
from spectropaint.transforms.nsgt_design import NSGTSettings, frame_design
from spectropaint.transforms.stft import STFT
from spectropaint.transforms.torch_device import device_name
from spectropaint.transforms.transform import BlockLayout

ReserveEstimate = Callable[[int, int, int, int], int]
"""``reserve(n_samples, channels, n_bins, n_frames) -> bytes``, e.g.
:func:`spectropaint.gpu.texture_memory.view_and_playback_bytes`."""


@dataclass(frozen=True)
class MemoryNeed:
    """Bytes of memory by purpose, e.g. ``(("audio", 2.5e9), ("spectrogram", 5.1e9))``."""

    parts: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(size for _, size in self.parts)

    def part(self, name: str) -> int:
        """Bytes of the part called ``name`` (0 when there is none)."""
        return sum(size for part, size in self.parts if part == name)

    def plus(self, name: str, size: int) -> MemoryNeed:
        return MemoryNeed((*self.parts, (name, int(size)))) if size else self

    def without(self, *names: str) -> MemoryNeed:
        return MemoryNeed(tuple(item for item in self.parts if item[0] not in names))

    def describe(self) -> str:
        """``'7.7 GB (audio 2.5 GB, spectrogram 5.1 GB, analysis 15.2 MB)'``; one part: its size."""
        total = format_bytes(self.total)
        if len(self.parts) < 2:
            return total
        return f"{total} ({', '.join(f'{name} {format_bytes(size)}' for name, size in self.parts)})"

    def refusal(self, budget: int | None) -> str | None:
        """``'too large: would need ..., ... available'`` when the total exceeds ``budget``."""
        if budget is None or self.total <= budget:
            return None
        return too_large(self.describe(), budget)


# --- the document --------------------------------------------------------------------------------


def audio_bytes(n_samples: int, channels: int) -> int:
    """The float64 samples ``[C, N]``."""
    return 8 * channels * n_samples


def _layouts(n_samples: int, settings: AnalysisSettings, sample_rate: int | None):
    if isinstance(settings, NSGTSettings) and sample_rate is None:
        raise ValueError("the NSGT's shape depends on the sample rate: give sample_rate")
    return make_transform(settings, sample_rate or 1).layout(n_samples, sample_rate or 1)


def spectrogram_bytes(
    n_samples: int, channels: int, settings: AnalysisSettings, *, sample_rate: int | None = None
) -> int:
    """Float32 magnitude and phase ``[C, F, T]`` of every block the transform lays out."""
    layouts = _layouts(n_samples, settings, sample_rate)
    return sum(2 * 4 * channels * layout.n_bins * layout.n_frames for layout in layouts)


def analysis_bytes(
    channels: int,
    settings: AnalysisSettings,
    *,
    sample_rate: int | None = None,
    n_samples: int | None = None,
    workers: int = 1,
) -> int:
    """Working memory of analysing ``workers`` chunks at once (an upper estimate, not a
    measurement; both transforms analyse a chunk per thread on the CPU).

    STFT: the chunk's padded float32 input, its windowed frames, the complex64 result, and its
    magnitude and phase before they are copied into the document's tensors. NSGT: a chunk of
    slices (fewer for a short signal): the float32 input and windowed slices, their complex64
    spectra, and for the largest group in one parity its gathered bins and coefficients
    (complex64) and their magnitude and phase.
    """
    if isinstance(settings, NSGTSettings):
        from spectropaint.transforms.nsgt import CHUNK_SLICES

        design = frame_design(settings, sample_rate)
        n = design.slice_length
        slices = (
            CHUNK_SLICES if n_samples is None else min(CHUNK_SLICES, design.n_slices(n_samples))
        )
        group = max(g.n_bands * g.m for g in design.groups)
        per_parity = -(-slices // 2)
        chunk = channels * (slices * (2 * n + 4 * n + 4 * n) + per_parity * group * (8 + 8 + 4 + 4))
        return workers * chunk
    frames = STFT.chunk_frames
    n_fft, n_bins = settings.n_fft, settings.n_fft // 2 + 1
    span = (frames - 1) * settings.hop + n_fft
    return workers * channels * (2 * 4 * span + frames * (4 * n_fft + 8 * n_bins + 2 * 4 * n_bins))


def document_bytes(
    n_samples: int, channels: int, settings: AnalysisSettings, *, sample_rate: int | None = None
) -> MemoryNeed:
    """What a document of ``n_samples`` x ``channels`` analysed with ``settings`` holds in memory.

    Parts ``audio`` (float64 samples), ``spectrogram`` (float32 magnitude and phase, exactly the
    ``nbytes`` of the document's tensors) and ``analysis`` (the work of opening it on the CPU).
    ``sample_rate`` is needed for the NSGT, whose bands are designed for it.
    """
    rate = sample_rate
    return MemoryNeed(
        (
            ("audio", audio_bytes(n_samples, channels)),
            ("spectrogram", spectrogram_bytes(n_samples, channels, settings, sample_rate=rate)),
            (
                "analysis",
                analysis_bytes(
                    channels,
                    settings,
                    sample_rate=rate,
                    n_samples=n_samples,
                    workers=cpu_workers(torch.device("cpu")),
                ),
            ),
        )
    )


def device_bytes(
    n_samples: int, channels: int, settings: AnalysisSettings, *, sample_rate: int | None = None
) -> int:
    """What a document keeps on a GPU: its spectrogram, its samples as float32, one chunk's work."""
    return (
        spectrogram_bytes(n_samples, channels, settings, sample_rate=sample_rate)
        + 4 * channels * n_samples
        + analysis_bytes(channels, settings, sample_rate=sample_rate, n_samples=n_samples)
    )


def device_free_bytes(device: torch.device) -> int | None:
    """Bytes a CUDA device can still give (the driver's free memory plus torch's unused cache)."""
    if device.type != "cuda":
        return None
    free, _ = torch.cuda.mem_get_info(device)
    return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)


def compute_device(
    n_samples: int,
    channels: int,
    settings: AnalysisSettings,
    device: torch.device,
    *,
    sample_rate: int | None = None,
) -> tuple[torch.device, str | None]:
    """``device``, or the CPU and a notice saying why when a GPU has too little free memory."""
    free = device_free_bytes(device)
    if free is None:
        return device, None
    need = device_bytes(n_samples, channels, settings, sample_rate=sample_rate)
    if need <= free:
        return device, None
    notice = (
        f"this document needs {format_bytes(need)} of {device_name(device)} memory, which has "
        f"{format_bytes(free)} free; SpectroPaint works on the CPU (slower)"
    )
    return torch.device("cpu"), notice


def host_need(
    n_samples: int,
    channels: int,
    settings: AnalysisSettings,
    *,
    device: torch.device,
    reserve: int | ReserveEstimate = 0,
    sample_rate: int | None = None,
) -> MemoryNeed:
    """Host memory a document needs on ``device``, plus the caller's ``reserve`` (bytes, or a
    :data:`ReserveEstimate` of the document's shape) as the part ``view and playback``.

    A CUDA device holds the spectrogram itself; the CPU and Apple's unified memory count it here.
    """
    need = document_bytes(n_samples, channels, settings, sample_rate=sample_rate)
    if device.type == "cuda":
        need = need.without("spectrogram", "analysis")
    if callable(reserve):
        bins, frames = shown_grid(_layouts(n_samples, settings, sample_rate))
        reserve = reserve(n_samples, channels, bins, frames)
    return need.plus("view and playback", reserve)


def shown_grid(layouts: list[BlockLayout]) -> tuple[int, int]:
    """``(bins, frames)`` of a grid with as many cells as the view shows: the one block of the
    STFT; for the NSGT, whose view shows the sum of each block pair, their cells as one grid as
    long as the longest block."""
    if len(layouts) == 1:
        return layouts[0].n_bins, layouts[0].n_frames
    shown = layouts[::2]
    frames = max(layout.n_frames for layout in shown)
    cells = sum(layout.n_bins * layout.n_frames for layout in shown)
    return -(-cells // frames), frames


@dataclass(frozen=True)
class MemoryPlan:
    """Where a document computes (``device``), the notice when that is not the device asked for,
    and the reason to refuse it (None when it fits)."""

    device: torch.device
    notice: str | None
    refusal: str | None


def plan_document(
    n_samples: int,
    channels: int,
    settings: AnalysisSettings,
    *,
    sample_rate: int,
    device: torch.device,
    reserve: int | ReserveEstimate = 0,
    budget: int | None,
) -> MemoryPlan:
    """:func:`compute_device`, then :func:`memory_refusal` of host memory on that device."""
    target, notice = compute_device(n_samples, channels, settings, device, sample_rate=sample_rate)
    refusal = memory_refusal(
        n_samples,
        channels,
        settings,
        sample_rate=sample_rate,
        device=target,
        reserve=reserve,
        budget=budget,
    )
    return MemoryPlan(target, notice, refusal)


def memory_refusal(
    n_samples: int,
    channels: int,
    settings: AnalysisSettings,
    *,
    sample_rate: int,
    device: torch.device,
    reserve: int | ReserveEstimate = 0,
    budget: int | None,
) -> str | None:
    """Why the document does not fit in ``budget`` bytes, and what would; None when it fits.

    The advice is the smallest larger hop that fits (STFT) or fewer bins per octave (NSGT), else
    the length of audio that would. Audio that alone exceeds the budget is refused as such.
    """

    def need_with(changed: AnalysisSettings) -> MemoryNeed:
        return host_need(
            n_samples, channels, changed, device=device, reserve=reserve, sample_rate=sample_rate
        )

    need = need_with(settings)
    if budget is None or need.total <= budget:
        return None
    audio = need.part("audio")
    if audio > budget:
        reason = too_large(f"{format_bytes(audio)} for the audio alone", budget)
    else:
        reason = need.refusal(budget)
    for cheaper, advice in _cheaper(settings) if audio <= budget else ():
        cheaper_need = need_with(cheaper)
        if cheaper_need.total <= budget:
            return f"{reason}; with {advice} it would need {format_bytes(cheaper_need.total)}"
    seconds = budget / need.total * n_samples / sample_rate
    return f"{reason}; open a shorter part of it (about {seconds:.0f} s would fit)"


def _cheaper(settings: AnalysisSettings):
    """Settings that need less memory, cheapest last, with how to say them."""
    if isinstance(settings, NSGTSettings):
        bpo = settings.bins_per_octave // 2
        while bpo >= 12:
            yield dataclasses.replace(settings, bins_per_octave=bpo), f"{bpo} bins per octave"
            bpo //= 2
        return
    hop = settings.hop * 2
    while hop <= settings.n_fft // 2:
        yield dataclasses.replace(settings, hop=hop), f"a hop of {hop} samples"
        hop *= 2
