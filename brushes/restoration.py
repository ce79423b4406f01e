"""De-click and de-hum, built on selections and operations.

**Clicks** are short events far above their neighbours across many bands. :func:`find_clicks`
analyses the edited sound with a short STFT (:data:`DETECT_SECONDS` windows) and compares, in
every frame and band, the level with the medians of the :data:`SIDE_FRAMES` frames on each side,
leaving out the frames the event itself reaches: a click stands above *both* sides, where a drum
hit's decay keeps the frames after it loud. A frame whose excess passes ``threshold_db`` in at
least ``min_share`` of the bands between :data:`CLICK_LOW_HZ` and 90 % of Nyquist is part of an
event; each event becomes one :class:`Click`, which :func:`declick_plans` heals (mode
``partials``) from :data:`CLICK_LOW_HZ` up, over every frame of the document's transform that
reaches it.

**Hum**: :func:`dehum_selection` measures a hum's fundamental (between 40 and 70 Hz by default,
:func:`~spectropaint.transforms.sound_analysis.find_hum`) and selects it and its harmonics at a steady
pitch, ready for a gain of ``-40`` dB or so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spectropaint.brushes.operations import Clipboard, Plan, plan_operation
from spectropaint.transforms.selection import Selection, rasterise
from spectropaint.transforms.shapes import Harmonic, Rectangle
from spectropaint.transforms.sound_analysis import find_hum

DETECT_SECONDS = 0.006
"""Window of the short STFT that finds clicks (a few milliseconds: a click fills one or two of its
frames, where the document's own frames may be ten times longer)."""
SIDE_FRAMES = 8
"""Frames of each side whose median a frame is compared with."""
CLICK_LOW_HZ = 1000.0
"""Bands below this take no part in finding clicks (music is loudest there)."""
CHUNK_SECONDS = 10.0
"""Audio scored at a time (the memory taken does not grow with the file)."""


@dataclass(frozen=True)
class Click:
    """A click found: where it starts and stops and its peak (seconds), and its score (the share
    of bands that stand out at the peak)."""

    start_seconds: float
    stop_seconds: float
    peak_seconds: float
    score: float


def _detector(sample_rate: int) -> tuple[int, int]:
    """``(n_fft, hop)`` of the short STFT."""
    n_fft = 1 << max(4, round(np.log2(DETECT_SECONDS * sample_rate)))
    return n_fft, n_fft // 4


def click_scores(
    document,
    *,
    t0: float = 0.0,
    t1: float | None = None,
    threshold_db: float = 12.0,
) -> tuple[float, float, np.ndarray]:
    """Per frame of a short STFT of the edited sound over ``[t0, t1)``, the share of bands above
    :data:`CLICK_LOW_HZ` that stand ``threshold_db`` above the medians of both sides.

    Returns ``(first_seconds, step_seconds, scores [T])``: frame ``i`` is centred at
    ``first_seconds + i * step_seconds``.
    """
    import torch
    from scipy.ndimage import median_filter

    sample_rate = document.sample_rate
    n_fft, hop = _detector(sample_rate)
    n = document.n_samples
    start = max(0, int(t0 * sample_rate)) // hop * hop
    stop = n if t1 is None else min(n, int(np.ceil(t1 * sample_rate)))
    bands = np.fft.rfftfreq(n_fft, 1 / sample_rate)
    rows = (bands >= CLICK_LOW_HZ) & (bands <= 0.45 * sample_rate)
    window = torch.hann_window(n_fft, dtype=torch.float64)
    gap, margin = n_fft // hop // 2, (n_fft // hop // 2 + SIDE_FRAMES) * hop
    chunk = int(CHUNK_SECONDS * sample_rate) // hop * hop
    scores = []
    for piece in range(start, stop, chunk):
        lo, hi = max(0, piece - margin), min(n, min(stop, piece + chunk) + margin)
        audio = torch.from_numpy(document.edited_between(lo, hi))
        spectrum = torch.stft(audio, n_fft, hop, window=window, center=False, return_complex=True)[
            :, torch.from_numpy(rows)
        ]
        power = (spectrum.abs() ** 2).mean(dim=0).numpy()
        level = 10 * np.log10(power + 1e-20)
        median = median_filter(level, size=(1, SIDE_FRAMES), mode="nearest")
        shift = gap + SIDE_FRAMES // 2
        before = np.pad(median, ((0, 0), (shift, 0)), mode="edge")[:, : median.shape[1]]
        after = np.pad(median, ((0, 0), (0, shift)), mode="edge")[:, shift:]
        expected = np.maximum(0.5 * (before + after), after)
        share = ((level - expected) >= threshold_db).mean(axis=0)
        # frame j of this piece is centred at lo + j * hop + n_fft / 2; keep [piece, piece + chunk)
        skip = (piece - lo) // hop
        count = (min(stop, piece + chunk) - piece) // hop
        scores.append(share[skip : skip + count])
    values = np.concatenate(scores) if scores else np.zeros(0)
    return (start + n_fft / 2) / sample_rate, hop / sample_rate, values


def find_clicks(
    document,
    *,
    t0: float = 0.0,
    t1: float | None = None,
    threshold_db: float = 12.0,
    min_share: float = 0.2,
) -> list[Click]:
    """The clicks in ``[t0, t1)`` (the whole sound by default), in time order.

    An event is a run of frames scoring at least half of ``min_share`` around a frame scoring
    ``min_share`` or more (see :func:`click_scores`); it spans its frames' windows. The defaults
    were chosen on synthesised music (``tests/music_fixtures.py``, seeds 1 to 7: 50 clicks of 12
    to 20 dB above their neighbourhood in 20 s) and checked on seeds 8 to 13: 48 to 50 found, at
    most 1 false.
    """
    first, step, scores = click_scores(document, t0=t0, t1=t1, threshold_db=threshold_db)
    half_window = 0.5 * _detector(document.sample_rate)[0] / document.sample_rate
    clicks = []
    above = scores >= 0.5 * min_share
    index, n = 0, len(scores)
    while index < n:
        if not above[index]:
            index += 1
            continue
        stop = index
        while stop < n and above[stop]:
            stop += 1
        peak = index + int(np.argmax(scores[index:stop]))
        if scores[peak] >= min_share:
            clicks.append(
                Click(
                    first + index * step - half_window,
                    first + (stop - 1) * step + half_window,
                    first + peak * step,
                    float(scores[peak]),
                )
            )
        index = stop
    return clicks


REACH_HOPS = 4
"""A click's selection reaches at most this many of a block's hops beyond it (the frames of a
transform that slices the signal, as the NSGT does, reach a whole slice; its atoms, a few hops)."""


def click_selection(
    document, click: Click, *, block: int = 0, low_hz: float = CLICK_LOW_HZ
) -> Selection | None:
    """A rectangle over every frame of ``block`` whose window reaches the click, from ``low_hz``
    up (by default :data:`CLICK_LOW_HZ`: below it the music holds most of the energy and a short
    click little, and healing there would change more music than click); None for a block wholly
    below it."""
    layout = document.blocks[block].layout
    middle = layout.n_frames // 2  # away from the ends, where the reach is clipped
    start, stop = document.transform.samples_reached(block, middle, middle + 1, 1 << 40)
    reach = min(stop - start, 2 * REACH_HOPS * layout.hop) / 2 / document.sample_rate
    top = float(layout.band_hz[-1]) + 1.0
    if top <= low_hz:
        return None
    return Selection.of(
        Rectangle(click.start_seconds - reach, click.stop_seconds + reach, low_hz, top)
    )


def declick_plans(document, clicks: list[Click], *, mode: str = "partials") -> list[Plan]:
    """One heal of each click on every block it reaches (they run as one undo step: see
    ``apply_plans``)."""
    plans = []
    for click in clicks:
        for block in range(len(document.blocks)):
            selection = click_selection(document, click, block=block)
            mask = None if selection is None else rasterise(selection, document, block=block)
            plans += plan_operation(document, mask, "heal", {"mode": mode}, clipboard=Clipboard())
    return plans


def dehum_selection(
    document,
    *,
    t0: float = 0.0,
    t1: float | None = None,
    low_hz: float = 40.0,
    high_hz: float = 70.0,
    count: int = 20,
    width_cents: float = 50.0,
) -> Selection:
    """The hum found between ``low_hz`` and ``high_hz`` over ``[t0, t1)`` and ``count`` of its
    harmonics, as a steady harmonic selection ``width_cents`` wide."""
    end = document.n_samples / document.sample_rate if t1 is None else t1
    f0 = find_hum(document, t0, end, low_hz=low_hz, high_hz=high_hz)
    return Selection.of(Harmonic(t0, end, f0, count, width_cents, follow=False))
