"""A coarse picture of a long sound while it opens: every ``m``-th frame of the document's own STFT,
read straight from the file. No Qt.

Reading and analysing ten minutes of stereo takes over a second on two cores (the whole file
decoded, an STFT of 50,000 frames); this reads only the windows of the frames it keeps (a few
hundred kilobytes, one seek each) and analyses them as the document will: frame ``k`` of the coarse
document is frame ``k m`` of the full one, centred on sample ``k m hop``, with the same window,
the same reflection at the ends and the same float32 arithmetic, so its magnitudes are the full
document's there and a tone at 1 kHz or an onset at 5 s shows where the full picture will show it.
What lies between two kept frames (a click shorter than ``m`` hops) may be missing until the full
picture replaces it.

:func:`read_coarse` gives a :class:`CoarseDocument`, which the renderer draws as it draws a
document (``blocks``, ``sample_rate``, ``full_scale``); nothing can edit it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
import soundfile as sf
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.document import CoefficientBlock, measure_full_scale
from spectropaint.transforms.files.audio_file import MAX_SAMPLE
from spectropaint.transforms.files.file_reasons import file_kind_refusal
from spectropaint.transforms.stft import STFT, STFTSettings
from spectropaint.transforms.transform import BlockLayout

MIN_DECIMATION = 4
"""A sound gets a coarse picture when it has at least this many frames per column asked for:
a shorter one is analysed in full about as fast."""
MAX_CHANNELS = 8
"""Sounds with more channels than the window stacks get none (their coarse picture would be as
large as a short document)."""
MAX_READ_S = 1.5
"""The reads are given up when those done so far say that all of them would take longer (a
format whose seeks decode from far back): the full analysis waits for them."""


@dataclass(frozen=True)
class CoarseDocument:
    """Every ``decimation``-th frame of a sound's STFT, for drawing only.

    Attributes
    ----------
    blocks : list of CoefficientBlock
        One block: ``magnitude`` and ``phase`` ``[C, n_fft/2 + 1, K]`` float32, its layout's hop
        ``decimation * settings.hop`` samples, frame ``k`` centred on sample ``k * layout.hop``.
    sample_rate : int
    n_samples : int
        The sound's length in samples (per channel).
    full_scale : float
        The magnitude of a full-scale sinusoid (0 dB), the full document's.
    settings : STFTSettings
        The analysis it samples.
    decimation : int
        Frames of the full document per coarse frame.
    path : str
    """

    blocks: list[CoefficientBlock]
    sample_rate: int
    n_samples: int
    full_scale: float
    settings: STFTSettings
    decimation: int
    path: str

    @property
    def n_channels(self) -> int:
        return self.blocks[0].magnitude.shape[0]


def coarse_decimation(n_frames: int, columns: int) -> int:
    """Frames of the full document per coarse frame so that about ``columns`` remain (at least 1)."""
    return max(1, (n_frames - 1) // max(1, columns))


def _read_windows(audio: sf.SoundFile, centres: np.ndarray, n_fft: int) -> np.ndarray | None:
    """float32 ``[C, K, n_fft]``: the samples of the windows centred on ``centres`` (reflected at
    both ends as the STFT reflects the signal), one seek and read each; None when a read comes up
    short or all of them would take more than :data:`MAX_READ_S`."""
    n_samples = audio.frames
    windows = np.empty((audio.channels, len(centres), n_fft), np.float32)
    buffer = np.empty((n_fft, audio.channels), np.float32)
    started = time.perf_counter()
    for k, centre in enumerate(centres.tolist()):
        if k % 32 == 31 and (time.perf_counter() - started) * len(centres) / k > MAX_READ_S:
            return None
        start = centre - n_fft // 2
        if start >= 0 and start + n_fft <= n_samples:
            audio.seek(start)
            if len(audio.read(out=buffer)) < n_fft:
                return None
            windows[:, k] = buffer.T
            continue
        index = start + np.arange(n_fft)
        index = np.where(index < 0, -index, index)
        index = np.where(index >= n_samples, 2 * (n_samples - 1) - index, index)
        first, last = int(index.min()), int(index.max())
        audio.seek(first)
        block = audio.read(last + 1 - first, dtype="float32", always_2d=True)
        if len(block) <= last - first:
            return None
        windows[:, k] = block[index - first].T
    return windows


def read_coarse(
    path: str | os.PathLike,
    columns: int,
    settings: STFTSettings | None = None,
    *,
    min_decimation: int | None = None,
) -> CoarseDocument | None:
    """About ``columns`` frames of ``path``'s STFT (``settings``, default the STFT's defaults),
    evenly spaced: every ``m``-th frame of the full document, for ``m`` of at least
    ``min_decimation`` (default :data:`MIN_DECIMATION`).

    Returns None when the sound is too short for that, has more than :data:`MAX_CHANNELS`
    channels, or cannot be read this way (not a regular file, damaged, a read comes up short):
    opening it in full then says why, if anything is wrong.
    """
    settings = settings or STFTSettings()
    min_decimation = MIN_DECIMATION if min_decimation is None else min_decimation
    try:
        if file_kind_refusal(os.stat(path).st_mode) is not None:
            return None  # never read a pipe or a device: it could block
        with sf.SoundFile(path) as audio:
            n_samples, rate, channels = audio.frames, audio.samplerate, audio.channels
            n_frames = settings.n_frames(n_samples)
            decimation = coarse_decimation(n_frames, columns)
            if decimation < min_decimation or channels > MAX_CHANNELS or n_samples < settings.n_fft:
                return None
            hop = decimation * settings.hop
            count = 1 + (n_frames - 1) // decimation
            windows = _read_windows(audio, np.arange(count) * hop, settings.n_fft)
            if windows is None:
                return None
    except (OSError, RuntimeError, ValueError, sf.LibsndfileError):
        return None
    windows[~(np.abs(windows) <= MAX_SAMPLE)] = 0.0  # as opening the file reads them: silence
    transform = STFT(settings)
    window = transform.window.numpy()
    # back to back, one window each hop of n_fft: the full analysis's frames, bit for bit
    spectra = fft_ops.windowed_rfft(
        windows.reshape(channels, -1), settings.n_fft, settings.n_fft, window
    )
    magnitude, phase = fft_ops.polar(spectra.transpose(-1, -2))
    layout = BlockLayout(
        band_hz=settings.layout(n_samples, rate)[0].band_hz, hop=hop, n_frames=count
    )
    block = CoefficientBlock(
        magnitude=magnitude,
        phase=phase,
        layout=layout,
        frame_seconds=layout.frame_seconds(rate),
        edited_frames=np.zeros(count, dtype=bool),
    )
    return CoarseDocument(
        blocks=[block],
        sample_rate=rate,
        n_samples=n_samples,
        full_scale=measure_full_scale(transform, rate, torch.device("cpu")),
        settings=settings,
        decimation=decimation,
        path=os.fspath(path),
    )
