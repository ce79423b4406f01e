"""Measurements on a document's coefficients that selections need: levels in dB, a fundamental's
track over time, a hum's frequency, and the magic wand's connected region.

The track and the wand work on a :class:`Picture` of the whole document in seconds and Hz
(:func:`level_picture`: an STFT's own cells, or every block of an NSGT on one grid).

Each reads only the cells it needs (the time span asked for, the bands up to the highest harmonic),
so its cost follows the span, never the file's length; :func:`find_hum` reads at most
:data:`HUM_SECONDS` of audio.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import hz_to_bins, seconds_to_frames
from spectropaint.transforms.regions import Region
from spectropaint.transforms.shapes import Harmonic, Raster, Shape, Wand

FLOOR_DB = -160.0
TRACK_SEARCH_CENTS = 150.0
"""How far from the given fundamental the first frame's search looks."""
TRACK_STEP_CENTS = 40.0
"""How far the fundamental may move from one frame to the next."""
TRACK_RESOLUTION_CENTS = 5.0
PICTURE_STEP_SECONDS = 0.005
"""Spacing of the columns of a :func:`level_picture` of a document of several blocks."""
HUM_SECONDS = 8.0
"""The most audio :func:`find_hum` reads."""
HUM_WINDOW_SECONDS = 1.5
HUM_CONTRAST_HZ = 8.0
HUM_LINE_DB = 12.0
"""A line this far above its neighbourhood counts fully in the hum's score (no more)."""
WAND_BANDS = 15
"""Bands in the wand's median across frequency."""
HUM_HARMONICS = 12


def levels_db(document, region: Region) -> np.ndarray:
    """The level of every cell of ``region`` in dB relative to full scale, the channels' powers
    averaged: float64 ``[bins, frames]``."""
    block = document.blocks[region.block]
    cells = block.magnitude[:, region.bin0 : region.bin1, region.frame0 : region.frame1]
    magnitude = cells[list(region.channels)]  # gathered after slicing: the region's cells only
    power = (magnitude.double() ** 2).mean(dim=0).cpu().numpy()
    with np.errstate(divide="ignore"):
        level = 10 * np.log10(power / document.full_scale**2)
    return np.maximum(level, FLOOR_DB)


def _frame_index(document, block: int, seconds: float) -> float:
    layout = document.blocks[block].layout
    return float(
        seconds_to_frames(
            seconds,
            hop=layout.hop,
            sample_rate=document.sample_rate,
            frame0_sample=layout.frame0_sample,
        )
    )


def _frame_span(document, block: int, t0: float, t1: float) -> tuple[int, int]:
    n_frames = document.blocks[block].n_frames
    first = max(0, int(np.ceil(_frame_index(document, block, t0))))
    last = min(n_frames, int(np.floor(_frame_index(document, block, t1))) + 1)
    if last <= first:
        middle = int(round(_frame_index(document, block, 0.5 * (t0 + t1))))
        first = min(max(middle, 0), n_frames - 1)
        last = first + 1
    return first, last


def _comb_scores(
    level: np.ndarray,
    band_hz: np.ndarray,
    candidates: np.ndarray,
    count: int,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Sum over harmonics ``1..count`` (times ``weights [count]``, if given) of the level (dB,
    ``[bins]``) interpolated at ``h * candidate``: ``[len(candidates)]``; harmonics past the top
    band count as the floor."""
    n = level.shape[0]
    harmonics = np.arange(1, count + 1)
    positions = hz_to_bins(candidates[:, None] * harmonics[None, :], band_hz=band_hz)
    low = np.clip(np.floor(positions).astype(np.int64), 0, n - 2)
    frac = np.clip(positions - low, 0.0, 1.0)
    values = level[low] * (1 - frac) + level[low + 1] * frac
    values = np.where((positions < 0) | (positions > n - 1), FLOOR_DB, values)
    return values.sum(axis=1) if weights is None else values @ weights


def _best(candidates: np.ndarray, scores: np.ndarray) -> float:
    """The candidate of the highest score, refined by a parabola through its neighbours (in log
    frequency)."""
    index = int(np.argmax(scores))
    if 0 < index < len(scores) - 1:
        left, centre, right = scores[index - 1 : index + 2]
        curvature = left - 2 * centre + right
        if curvature < 0:
            shift = 0.5 * (left - right) / curvature
            logs = np.log(candidates)
            step = logs[index + 1] - logs[index]
            return float(np.exp(logs[index] + np.clip(shift, -0.5, 0.5) * step))
    return float(candidates[index])


def _cents_around(hz: float, span: float) -> np.ndarray:
    cents = np.arange(-span, span + 1e-9, TRACK_RESOLUTION_CENTS)
    return hz * 2.0 ** (cents / 1200.0)


@dataclass(frozen=True)
class Picture:
    """Levels of a document on one grid of seconds and Hz, from all its blocks.

    Attributes
    ----------
    seconds : np.ndarray [shape=(T,)]
        Centre time of each column (evenly spaced).
    hz : np.ndarray [shape=(B,)]
        Centre frequency of each row (increasing).
    level : np.ndarray [shape=(B, T)]
        dB relative to full scale, the channels' powers averaged, floored at :data:`FLOOR_DB`.
    """

    seconds: np.ndarray
    hz: np.ndarray
    level: np.ndarray

    def column(self, seconds: float) -> int:
        """The column nearest ``seconds`` (clipped to the picture)."""
        return int(np.argmin(np.abs(self.seconds - seconds)))


def _block_span(document, block: int, t0: float, t1: float) -> tuple[int, int]:
    """The frames of ``block`` whose centres lie in ``[t0, t1]``, with one to spare each side."""
    n_frames = document.blocks[block].n_frames
    first = max(0, int(np.floor(_frame_index(document, block, t0))) - 1)
    last = min(n_frames, int(np.ceil(_frame_index(document, block, t1))) + 2)
    return first, max(last, first)


def level_picture(
    document,
    t0: float,
    t1: float,
    *,
    top_hz: float = np.inf,
    channels: tuple[int, ...] | None = None,
) -> Picture:
    """The levels of ``document`` over ``[t0, t1]`` and the bands up to ``top_hz``, from every
    block: a :class:`Picture`.

    A document of one block (the STFT) gives that block's own cells: its frames centred in the
    span (at least one) and its bands up to the first at or above ``top_hz``. A document of
    several (the NSGT, one block per group of bands and slice parity) gives its bands on columns
    :data:`PICTURE_STEP_SECONDS` apart: each block's magnitudes interpolated linearly in time
    onto them, the two parities of a group added (their slice weights sum to one, so a steady
    partial has its full level at every time). Reads only the frames the span reaches.
    """
    channels = tuple(range(document.n_channels)) if channels is None else tuple(channels)
    blocks = document.blocks
    if len(blocks) == 1:
        first, last = _frame_span(document, 0, t0, t1)
        band_hz = np.asarray(blocks[0].band_hz, dtype=np.float64)
        top = len(band_hz)
        if np.isfinite(top_hz):
            top = min(top, int(np.ceil(hz_to_bins(top_hz, band_hz=band_hz))) + 3)
        region = Region(0, max(top, 2), first, last, channels, 0)
        seconds = blocks[0].frame_seconds[first:last].astype(np.float64)
        return Picture(seconds, band_hz[: region.bin1], levels_db(document, region))
    n_columns = max(1, int(np.floor((t1 - t0) / PICTURE_STEP_SECONDS)) + 1)
    seconds = t0 + PICTURE_STEP_SECONDS * np.arange(n_columns)
    rows: dict[float, np.ndarray] = {}  # a band's centre -> its magnitude [C, T], parities added
    for index, block in enumerate(blocks):
        band_hz = np.asarray(block.band_hz, dtype=np.float64)
        top = int(np.searchsorted(band_hz, top_hz)) + 1
        first, last = _block_span(document, index, t0, t1)
        if top <= 0 or last <= first:
            continue
        magnitude = block.magnitude[list(channels), :top, first:last].double().cpu().numpy()
        layout = block.layout
        position = seconds_to_frames(
            seconds,
            hop=layout.hop,
            sample_rate=document.sample_rate,
            frame0_sample=layout.frame0_sample,
        )
        low = np.floor(position).astype(np.int64) - first
        frac = position - np.floor(position)
        values = 0.0
        for column, weight in ((low, 1.0 - frac), (low + 1, frac)):
            inside = (column >= 0) & (column < last - first)  # no frame there: nothing
            values = values + magnitude[..., np.clip(column, 0, last - first - 1)] * (
                weight * inside
            )
        for row, hz in enumerate(band_hz[:top]):
            rows[hz] = rows.get(hz, 0.0) + values[:, row]
    hz = np.array(sorted(rows))
    magnitude = np.stack([rows[value] for value in hz], axis=1)  # [C, B, T]
    power = (magnitude**2).mean(axis=0)
    with np.errstate(divide="ignore"):
        level = 10 * np.log10(power / document.full_scale**2)
    return Picture(seconds, hz, np.maximum(level, FLOOR_DB))


def track_fundamental(
    document,
    t0: float,
    t1: float,
    f0: float,
    count: int,
    *,
    seed_seconds: float | None = None,
    channels: tuple[int, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The fundamental of a harmonic sound over ``[t0, t1)``, starting near ``f0`` Hz at
    ``seed_seconds`` (default ``t0``) and following it column by column both ways, on the
    document's :func:`level_picture` (all its blocks).

    Each column's fundamental maximises the sum over ``count`` harmonics of the level at ``h * f``
    (within :data:`TRACK_STEP_CENTS` of the previous column's; :data:`TRACK_SEARCH_CENTS` at the
    seed), refined by a parabola.

    Returns
    -------
    seconds, hz : np.ndarray [shape=(T,)]
        Centre time of each column and its fundamental.
    """
    top_hz = count * f0 * 2 ** ((TRACK_SEARCH_CENTS + 600) / 1200)
    picture = level_picture(document, t0, t1, top_hz=top_hz, channels=channels)
    level = np.maximum(picture.level, picture.level.max() - 80.0)
    seed_column = picture.column(t0 if seed_seconds is None else seed_seconds)
    track = np.empty(len(picture.seconds))
    candidates = _cents_around(f0, TRACK_SEARCH_CENTS)
    scores = _comb_scores(level[:, seed_column], picture.hz, candidates, count)
    track[seed_column] = _best(candidates, scores)
    for order in (range(seed_column + 1, len(track)), range(seed_column - 1, -1, -1)):
        previous = track[seed_column]
        for column in order:
            candidates = _cents_around(previous, TRACK_STEP_CENTS)
            scores = _comb_scores(level[:, column], picture.hz, candidates, count)
            previous = track[column] = _best(candidates, scores)
    return picture.seconds, track


def fundamental_near(document, seconds: float, low_hz: float, high_hz: float, count: int) -> float:
    """The fundamental in ``[low_hz, high_hz]`` whose ``count`` harmonics are loudest at
    ``seconds`` (a click on a zoomed-out view lands within a few pixels of it, which may be
    many cents)."""
    picture = level_picture(document, seconds, seconds, top_hz=count * high_hz * 1.1)
    column = picture.column(seconds)
    level = np.maximum(picture.level[:, column], picture.level[:, column].max() - 80.0)
    low = max(low_hz, float(picture.hz[1]))
    span = 1200 * np.log2(max(high_hz, low * 1.001) / low)
    candidates = low * 2.0 ** (np.arange(0.0, span + 1e-9, TRACK_RESOLUTION_CENTS) / 1200)
    return _best(candidates, _comb_scores(level, picture.hz, candidates, count))


def find_hum(
    document,
    t0: float,
    t1: float,
    *,
    low_hz: float = 40.0,
    high_hz: float = 70.0,
    harmonics: int = HUM_HARMONICS,
) -> float:
    """The fundamental of a steady hum in ``[low_hz, high_hz]`` over ``[t0, t1)``: the frequency
    whose harmonics stand highest above their neighbourhood (:data:`HUM_CONTRAST_HZ` each side)
    in a fine spectrum of the edited sound (each band's median level over the windows, so that
    a hum, there all along, counts more than the notes that come and go).

    A hum's lines are far narrower than a bin of the document's transform, so this reads the
    samples themselves: at most :data:`HUM_SECONDS` from the middle of the span, averaged over
    windows of :data:`HUM_WINDOW_SECONDS` (a resolution near 0.7 Hz at 44.1 kHz).
    """
    from scipy.ndimage import median_filter
    from scipy.signal import spectrogram

    rate = document.sample_rate
    middle = 0.5 * (t0 + t1)
    half = 0.5 * min(t1 - t0, HUM_SECONDS)
    start = max(0, int((middle - half) * rate))
    stop = min(document.n_samples, int((middle + half) * rate))
    audio = document.edited_between(start, stop)
    window = min(audio.shape[-1], 1 << round(np.log2(HUM_WINDOW_SECONDS * rate)))
    hz, _, power = spectrogram(audio, fs=rate, nperseg=window, noverlap=window * 3 // 4)
    top = np.searchsorted(hz, harmonics * high_hz * 1.1)
    with np.errstate(divide="ignore"):
        levels = np.maximum(10 * np.log10(power.mean(axis=0)[:top]), FLOOR_DB)
    level = np.median(levels, axis=-1)  # a hum is there all along; a note only for a while
    spacing = hz[1] - hz[0]
    contrast = level - median_filter(level, size=2 * round(HUM_CONTRAST_HZ / spacing) + 1)
    # first count the lines present (clipped), the low harmonics most; then refine on the levels
    weights = 1.0 / np.arange(1, harmonics + 1)
    candidates = np.arange(low_hz, high_hz, 0.05)
    lines = np.clip(contrast, 0.0, HUM_LINE_DB)
    rough = candidates[np.argmax(_comb_scores(lines, hz[:top], candidates, harmonics, weights))]
    candidates = np.arange(rough - 0.5, rough + 0.5, 0.01)
    return _best(candidates, _comb_scores(contrast, hz[:top], candidates, harmonics, weights))


def wand_raster(
    document,
    seconds: float,
    hz: float,
    tolerance_db: float,
    window_seconds: float,
    *,
    channels: tuple[int, ...] | None = None,
) -> Raster:
    """The magic wand: the cells 4-connected to the one at ``(seconds, hz)`` whose level stands at
    least ``tolerance_db`` above their surroundings, on the document's :func:`level_picture`
    (all its blocks).

    A cell's surroundings are the lower of two medians: its band's over ``window_seconds`` around
    the click (a partial held throughout stands above its neighbouring bands, not above itself
    in time) and its column's over :data:`WAND_BANDS` neighbouring bands (a click stands above the
    frames around it).

    The search stays within that window (its cost does not grow with the file). A click on a
    cell that does not stand out gives a raster of zeros.
    """
    from scipy.ndimage import label, median_filter

    picture = level_picture(
        document, seconds - window_seconds / 2, seconds + window_seconds / 2, channels=channels
    )
    level = picture.level
    in_time = np.median(level, axis=1, keepdims=True)
    in_frequency = median_filter(level, size=(WAND_BANDS, 1), mode="nearest")
    above = level >= np.minimum(in_time, in_frequency) + tolerance_db
    column = picture.column(seconds)
    row = int(np.clip(round(float(hz_to_bins(hz, band_hz=picture.hz))), 0, len(picture.hz) - 1))
    if not above[row, column]:
        return Raster(
            picture.seconds[column : column + 1],
            picture.hz[row : row + 1],
            np.zeros((1, 1), dtype=np.float32),
        )
    labels, _ = label(above)
    region = labels == labels[row, column]
    rows = np.flatnonzero(region.any(axis=1))
    columns = np.flatnonzero(region.any(axis=0))
    box = (slice(rows[0], rows[-1] + 1), slice(columns[0], columns[-1] + 1))
    return Raster(picture.seconds[box[1]], picture.hz[box[0]], region[box].astype(np.float32))


def resolve_shape(shape: Shape, document) -> Shape:
    """``shape`` measured on ``document`` when it depends on the sound (else itself)."""
    if shape.resolved:
        return shape
    if isinstance(shape, Harmonic):
        seconds, hz = track_fundamental(
            document,
            shape.t0,
            shape.t1,
            shape.f0,
            shape.count,
            seed_seconds=shape.seed_seconds,
        )
        return replace(shape, track=tuple(zip(seconds.tolist(), hz.tolist(), strict=True)))
    if isinstance(shape, Wand):
        raster = wand_raster(
            document, shape.seconds, shape.hz, shape.tolerance_db, shape.window_seconds
        )
        return replace(shape, raster=raster)
    raise SettingsError(f"cannot resolve a {shape.kind} selection")
