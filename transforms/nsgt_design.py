"""NSGT settings and the frame they design: slices, band windows, duals and the groups of bands.

The sliced NSGT (Holighaus, Dörfler, Velasco, Grill, "A framework for invertible, real-time
constant-Q transforms", 2013) cuts the signal into slices of ``N`` samples, ``N / 2`` apart, each
weighted by a window that is zero in its outer quarters and sums to one with its neighbours (nsgt's
``makewnd``), and analyses every slice with a painless NSGT of length ``N``: band ``k`` takes the
slice's spectrum under its window ``g_k`` (``Lg_k`` bins) and returns ``M_k`` coefficients, one every
``N / M_k`` samples. ``nsgt`` (through :mod:`.nsgt_compat`) supplies the scale, the windows and the
canonical dual windows; this module only arranges them for torch:

- ``M_k`` is the power of two at or above ``Lg_k`` (at least ``N / MAX_HOP``), so every band's hop
  is a whole number of samples and the slice period ``N`` is a whole number of frames;
- **groups**: runs of adjacent bands with the same ``M``, so each is rectangular; a group with the
  slices of one parity (even or odd; same-parity slices tile time without overlap) is a
  coefficient block with a uniform time grid;
- per group, for each band, the first bin of its window and, for each of ``M`` bins from there,
  the rfft bin it is (mirrored, hence conjugated, below 0 Hz or above Nyquist), the analysis weight
  and the synthesis weight; most bands read a plain slice of the rfft.

Normalisation: ``c_k[m] = (2 / N) sum_l X[l] g_k[l] exp(2 pi i l m / M_k)``, so a full-scale sine at
a band's centre has magnitude 1 (0 dB) in every band whatever its ``M``, and a steady tone's phase
advances by ``2 pi f hop / sr`` per frame, as in the STFT. Synthesis is nsgt's canonical dual
(``g_k / sum_j M_j g_j**2``), the least-squares inverse for these coefficients.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.nsgt_compat import nsgt_modules, scale

SCALES = ("log", "mel", "bark")
MIN_WINDOW_BINS = 8
"""The narrowest band's window spans at least this many bins of a slice (nsgt warns below 8: its
atoms would then be longer than a quarter slice)."""
MIN_SLICE, MAX_SLICE = 2**12, 2**21
MAX_HOP = 2048
"""Largest hop of any band (samples): low bands are sampled at least this often, for the picture."""


@dataclass(frozen=True)
class NSGTSettings:
    """Analysis settings of the NSGT.

    Attributes
    ----------
    scale : str
        ``'log'`` (constant Q), ``'mel'`` or ``'bark'``: how band centres are spaced.
    bins_per_octave : int
        12 to 96. The log scale has exactly this many bands per octave from ``fmin``; mel and Bark
        have as many bands in all as the log scale would between ``fmin`` and ``fmax``.
    fmin : float
        Centre of the lowest band, Hz (default C1, 32.70 Hz).
    fmax : float or None
        Upper limit of the highest band's centre, Hz; None: as high as the sample rate allows
        (half the rate divided by ``2 ** (1 / bins_per_octave)``), so that the band left for
        frequencies above it is no wider than its neighbours.
    """

    scale: str = "log"
    bins_per_octave: int = 48
    fmin: float = 32.70
    fmax: float | None = None

    name = "nsgt"

    def __post_init__(self) -> None:
        if self.scale not in SCALES:
            raise SettingsError(f"scale must be one of {', '.join(SCALES)}, not {self.scale!r}")
        bpo = self.bins_per_octave
        if isinstance(bpo, bool) or not isinstance(bpo, int) or not 12 <= bpo <= 96:
            raise SettingsError(f"bins per octave must be an integer from 12 to 96, not {bpo!r}")
        if not _finite(self.fmin) or not 1.0 <= self.fmin <= 20000.0:
            raise SettingsError(f"fmin must be from 1 to 20000 Hz, not {self.fmin!r}")
        if self.fmax is not None and (not _finite(self.fmax) or self.fmax < 2 * self.fmin):
            raise SettingsError(
                f"fmax must be at least an octave above fmin ({2 * self.fmin:g} Hz), "
                f"not {self.fmax!r}"
            )

    def to_dict(self) -> dict:
        return {
            "scale": self.scale,
            "bins_per_octave": self.bins_per_octave,
            "fmin": self.fmin,
            "fmax": self.fmax,
        }

    def describe(self) -> str:
        top = "Nyquist" if self.fmax is None else f"{self.fmax:g} Hz"
        return f"NSGT {self.scale}, {self.bins_per_octave} bins/octave, {self.fmin:g} Hz to {top}"


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class BandGroup:
    """Adjacent bands sharing ``M`` coefficients per slice: one block per slice parity.

    Band ``k``'s window covers bins ``start[k] + j`` for ``j`` in ``[0, Lg_k)``; arrays of shape
    ``(B, m)`` hold, at column ``j``, what concerns bin ``start[k] + j`` (0 where ``j >= Lg_k``).
    The coefficients are ``c = ramp * ifft(row * analysis)`` where ``ramp[k, m] = exp(2 pi i
    start[k] m / M)`` puts back the bins' absolute frequencies (the transform gets the same without
    the ramp by placing bin ``b`` at column ``b mod M``).

    Attributes
    ----------
    bands : slice
        Their indices among all bands (0 is the DC band, the last the Nyquist band).
    m : int
        Coefficients per band per slice (a power of two); the hop is ``N / m`` samples.
    start : np.ndarray [shape=(B,)], int64
        Unwrapped bin of each band's first window tap (negative for the DC band).
    regular : np.ndarray [shape=(B,)], bool
        Bins ``[start, start + m)`` all lie in ``[0, N/2]``: the row is a slice of the rfft.
    index : np.ndarray [shape=(B, m)], int64
        The rfft bin at each column, mirrored into ``[0, N/2]``; where the window is not (both
        weights 0), a different bin for each such column, in turn.
    conjugate : np.ndarray [shape=(K,)], int64
        Flat positions (into ``B * m``) whose bin is mirrored, hence read conjugated.
    analysis : np.ndarray [shape=(B, m)], float64
        ``g_k * 2 m / N``.
    synthesis : np.ndarray [shape=(B, m)], float64
        The dual window times ``N / 2``; 0 on the negative side of the DC and Nyquist bands,
        whose mirror images are themselves; doubled at bins 0 and ``N / 2`` of the other bands,
        which their mirror images also reach.
    """

    bands: slice
    m: int
    start: np.ndarray
    regular: np.ndarray
    index: np.ndarray
    conjugate: np.ndarray
    analysis: np.ndarray
    synthesis: np.ndarray

    @property
    def n_bands(self) -> int:
        return self.bands.stop - self.bands.start


@dataclass(frozen=True)
class FrameDesign:
    """The sliced NSGT of one settings and sample rate.

    Attributes
    ----------
    slice_length : int
        ``N``, a power of two; slices start every ``N / 2`` samples.
    transition : int
        Samples over which a slice window rises (and falls).
    slice_window : np.ndarray [shape=(N,)], float64
        nsgt's slice window: zero in the outer quarters, sums to one with its neighbours.
    band_hz : np.ndarray [shape=(K + 2,)]
        Centre of every band: 0 (DC band), the scale's bands, half the sample rate (Nyquist band).
    groups : tuple of BandGroup
    """

    settings: NSGTSettings
    sample_rate: int
    slice_length: int
    transition: int
    slice_window: np.ndarray
    band_hz: np.ndarray
    groups: tuple[BandGroup, ...]

    @property
    def slice_hop(self) -> int:
        return self.slice_length // 2

    def n_slices(self, n_samples: int) -> int:
        """Slices covering ``[0, n_samples)``: slice ``s`` spans ``[s H - N/2, s H + N/2)``."""
        return (max(n_samples, 1) - 1) // self.slice_hop + 2

    def slice_start(self, index: int) -> int:
        return index * self.slice_hop - self.slice_length // 2

    @property
    def coefficients_per_slice(self) -> int:
        return sum(group.n_bands * group.m for group in self.groups)


def scale_bands(settings: NSGTSettings, sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """Centre frequencies (Hz) and Q of the scale's bands at ``sample_rate``."""
    nyquist = sample_rate / 2.0
    bpo = settings.bins_per_octave
    limit = nyquist * 2.0 ** (-1.0 / bpo)
    fmax = limit if settings.fmax is None else settings.fmax
    if fmax > limit:
        raise SettingsError(
            f"fmax {fmax:g} Hz leaves no room below half the sample rate ({nyquist:g} Hz) at "
            f"{bpo} bins per octave: use at most {math.floor(limit)} Hz, or none"
        )
    if settings.fmin * 2 > fmax:
        raise SettingsError(
            f"fmin {settings.fmin:g} Hz is less than an octave below fmax {fmax:g} Hz"
        )
    n_bands = int(math.floor(math.log2(fmax / settings.fmin) * bpo + 1e-9)) + 1
    if settings.scale == "log":
        fmax = settings.fmin * 2.0 ** ((n_bands - 1) / bpo)  # exactly bpo bands per octave
    frequencies, q = scale(settings.scale, settings.fmin, fmax, n_bands)()
    return np.asarray(frequencies, dtype=np.float64), np.broadcast_to(q, frequencies.shape)


def _slice_length(frequencies: np.ndarray, q: np.ndarray, sample_rate: int) -> int:
    """The shortest power-of-two slice in which the narrowest band spans ``MIN_WINDOW_BINS`` bins."""
    widths = np.concatenate(
        ([frequencies[0] / q[0]], frequencies[2:] - frequencies[:-2], [frequencies[-1] / q[-1]])
    )
    wanted = MIN_WINDOW_BINS * sample_rate / float(widths.min())
    return int(min(MAX_SLICE, max(MIN_SLICE, 1 << math.ceil(math.log2(wanted)))))


def _next_power_of_two(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


@functools.lru_cache(maxsize=8)
def frame_design(settings: NSGTSettings, sample_rate: int) -> FrameDesign:
    """The frame of ``settings`` at ``sample_rate`` (cached: it is used by every document)."""
    modules = nsgt_modules()
    frequencies, q = scale_bands(settings, sample_rate)
    n = _slice_length(frequencies, q, sample_rate)
    transition = n // 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g, rfbas, _ = modules.nsgfwin(frequencies, q, sample_rate, n, sliced=True, min_win=4)
    wins, nn = modules.calcwinrange(g, rfbas, n)
    positive = len(g) // 2 + 1  # DC, the scale's bands, Nyquist
    m = np.array([max(_next_power_of_two(len(g[k])), n // MAX_HOP, 4) for k in range(positive)])
    m_all = np.concatenate((m, m[-2:0:-1]))  # negative-frequency bands mirror bands K..1
    duals = modules.nsdual(g, wins, nn, m_all)

    taps = []
    for k in range(positive):
        length = len(g[k])
        start = int(rfbas[k]) - length // 2  # unwrapped bin of the first window tap
        wrapped = np.mod(start + np.arange(length), n)
        negative = wrapped > n // 2
        analysis = np.roll(g[k], length // 2) * (2.0 * m[k] / n)
        synthesis = np.roll(duals[k], length // 2) * (n / 2.0)
        if k in (0, positive - 1):
            synthesis = np.where(negative, 0.0, synthesis)
        else:  # this band's mirror image covers bins 0 and N/2 too, where both are real
            synthesis = np.where((wrapped == 0) | (wrapped == n // 2), 2 * synthesis, synthesis)
        bins = np.where(negative, n - wrapped, wrapped)
        taps.append((start, bins, negative, analysis, synthesis))

    groups = []
    first = 0
    for k in range(1, positive + 1):
        if k < positive and m[k] == m[first]:
            continue
        groups.append(_group(slice(first, k), int(m[first]), taps[first:k], n))
        first = k
    slice_window = modules.makewnd(n, transition)
    band_hz = np.concatenate(([0.0], frequencies, [sample_rate / 2.0]))
    return FrameDesign(settings, sample_rate, n, transition, slice_window, band_hz, tuple(groups))


def _group(bands: slice, m: int, taps: list, n: int) -> BandGroup:
    count = bands.stop - bands.start
    start = np.array([tap[0] for tap in taps], dtype=np.int64)
    index = np.zeros((count, m), dtype=np.int64)
    conjugate = np.zeros((count, m), dtype=bool)
    analysis = np.zeros((count, m))
    synthesis = np.zeros((count, m))
    window = np.zeros((count, m), dtype=bool)
    for row, (_, bins, negative, weights, duals) in enumerate(taps):
        length = len(bins)
        window[row, :length] = True
        index[row, :length] = bins
        conjugate[row, :length] = negative
        analysis[row, :length] = weights
        synthesis[row, :length] = duals
    # a column outside the window weighs 0 either way: spread those over the bins, so that adding a
    # group's rows into a spectrum (the synthesis) does not pile them all on bin 0, where a GPU's
    # atomic additions of a slice's 10^5 such columns wait on one another
    index[~window] = np.arange(np.count_nonzero(~window)) % (n // 2 + 1)
    regular = (start >= 0) & (start + m <= n // 2 + 1)
    return BandGroup(
        bands, m, start, regular, index, np.flatnonzero(conjugate.ravel()), analysis, synthesis
    )
