"""A coarse picture of a sound while it opens: one short-time spectrum per column of the canvas,
read straight from the file, coloured and warped as the view will show it. No Qt.

Reading and analysing a long file takes seconds (ten minutes of stereo: the whole file decoded, an
STFT of 50,000 frames, uploads); this takes a fraction of a second, because it reads only
``columns`` windows of ``n_fft`` samples, one under each column. It samples where the full picture
pools, so a short click between two columns may be missing until the full picture replaces it.
"""

from __future__ import annotations

import os
import stat

import numpy as np

from spectropaint.gpu.colormaps import lookup
from spectropaint.gpu.geometry import BlockGeometry
from spectropaint.gpu.view import ViewSettings
from spectropaint.gpu.view_mapping import ViewMapping


def read_windows(path: str, columns: int, n_fft: int) -> tuple[np.ndarray, int, int] | None:
    """``columns`` windows of ``n_fft`` samples, evenly spread over ``path`` and mixed to mono,
    with the sample rate and the file's length in samples; None when the file cannot give them
    (opening it properly then says why)."""
    import soundfile as sf

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # never read a pipe or a device: it could block
        with sf.SoundFile(path) as audio:
            frames, rate = audio.frames, audio.samplerate
            if frames < n_fft or columns < 1:
                return None
            starts = np.linspace(0, frames - n_fft, columns).astype(np.int64)
            windows = np.empty((columns, n_fft), np.float32)
            for index, start in enumerate(starts):
                audio.seek(int(start))
                block = audio.read(n_fft, dtype="float32", always_2d=True)
                if len(block) < n_fft:
                    return None
                windows[index] = block.mean(axis=1)
            # a damaged float file may hold NaN or infinities: opening it says so; here, silence
            return np.nan_to_num(windows, nan=0.0, posinf=0.0, neginf=0.0), rate, frames
    except (OSError, RuntimeError, ValueError, sf.LibsndfileError):
        return None


def preview_picture(
    windows: np.ndarray, rate: int, view: ViewSettings, width: int, height: int
) -> np.ndarray:
    """``[height, width, 3]`` uint8: the windows' spectra as ``view`` colours and warps them
    (frequency scale, colormap, dB floor and range, gamma), the whole sound across.

    Levels are dB of a full-scale sinusoid, as the document's: a Hann window's peak is
    ``sum(window) / 2``.
    """
    columns, n_fft = windows.shape
    window = np.hanning(n_fft + 1)[:-1].astype(np.float32)
    spectra = np.abs(np.fft.rfft(windows * window, axis=1))  # [columns, bins]
    reference = window.sum() / 2
    geometry = BlockGeometry(
        n_frames=columns,
        n_bins=n_fft // 2 + 1,
        first_hz=0.0,
        step_hz=rate / n_fft,
        first_seconds=0.0,
        step_seconds=1.0,
    )
    plain = ViewSettings(
        colormap=view.colormap,
        floor_db=view.floor_db,
        range_db=view.range_db,
        gamma=view.gamma,
        freq_scale=view.freq_scale,
    )
    mapping = ViewMapping(geometry, plain, width, height)
    rows = np.array([mapping.to_document(0, y + 0.5).bin for y in range(height)])
    bins = np.clip(np.rint(rows).astype(np.int64), 0, geometry.n_bins - 1)
    cols = np.clip((np.arange(width) + 0.5) / width * columns, 0, columns - 1).astype(np.int64)
    magnitude = spectra[np.ix_(cols, bins)].T  # [height, width]
    with np.errstate(divide="ignore"):
        db = 20 * np.log10(np.maximum(magnitude, 1e-30) / reference)
    level = np.clip((db - plain.resolved_floor_db) / plain.range_db, 0.0, 1.0) ** plain.gamma
    return np.round(lookup(plain.colormap, level) * 255).astype(np.uint8)
