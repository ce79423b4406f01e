"""The ``nsgt`` package (0.19), made to run on numpy 2, and the Bark scale it lacks.

``nsgt`` designs the frames: frequency scales (:func:`scale`) and the windows of the sliced transform
(``nsgt.nsgfwin_sl.nsgfwin``), which SpectroPaint's torch transform (:mod:`.nsgt`) uses. Version 0.19
clips an integer array with ``np.clip(M, min_win, np.inf, out=M)``, which numpy 1.26 and 2 refuse
(``_UFuncOutputCastingError``): every NSGT that package builds fails there. :func:`nsgt_modules`
gives that one module a numpy whose ``clip`` keeps an integer ``out`` integer, at run time; the
installed files are never changed. Import ``nsgt`` through :func:`nsgt_modules` only.
"""

from __future__ import annotations

import functools
import types
import warnings

import numpy as np


class _NumpyWithIntegerClip(types.ModuleType):
    """numpy, except that ``clip(a, lo, hi, out=a)`` on an integer ``a`` clips in place (what
    ``nsgfwin`` means: window lengths of at least ``min_win``)."""

    def __getattr__(self, name: str):
        return getattr(np, name)

    @staticmethod
    def clip(a, a_min, a_max, out=None, **kwargs):
        if out is not None and np.issubdtype(out.dtype, np.integer):
            low = -np.inf if a_min is None else a_min
            high = np.inf if a_max is None else a_max
            out[...] = np.minimum(np.maximum(a, low), high)
            return out
        return np.clip(a, a_min, a_max, out=out, **kwargs)


@functools.cache
def nsgt_modules() -> types.SimpleNamespace:
    """The ``nsgt`` package and the modules SpectroPaint calls, patched for numpy 2 (once).

    Returns a namespace with ``nsgt`` (the package: ``NSGT``, ``NSGT_sliced``, scales),
    ``nsgfwin`` (the sliced window design), ``calcwinrange``, ``nsdual``, ``nsgtf`` (the numpy
    forward of one slice), ``makewnd`` (the slice window) and ``Scale``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "falling back to numpy.fft", "scikits.audio ..."
        import nsgt
        from nsgt import fscale, nsdual, nsgfwin_sl, nsgtf, slicing, util

    nsgfwin_sl.np = _NumpyWithIntegerClip("numpy")
    return types.SimpleNamespace(
        nsgt=nsgt,
        nsgfwin=nsgfwin_sl.nsgfwin,
        calcwinrange=util.calcwinrange,
        nsdual=nsdual.nsdual,
        nsgtf=nsgtf.nsgtf,
        makewnd=slicing.makewnd,
        Scale=fscale.Scale,
    )


def hz_to_bark(hz):
    """Traunmüller's (1990) critical-band rate in Bark."""
    hz = np.asarray(hz, dtype=np.float64)
    return 26.81 * hz / (1960.0 + hz) - 0.53


def bark_to_hz(bark):
    """Inverse of :func:`hz_to_bark`."""
    bark = np.asarray(bark, dtype=np.float64)
    return 1960.0 * (bark + 0.53) / (26.28 - bark)


@functools.cache
def _bark_scale_class() -> type:
    base = nsgt_modules().Scale

    class BarkScale(base):
        """Bands evenly spaced in Bark from ``fmin`` to ``fmax``; Q by nsgt's numerical rule."""

        def __init__(self, fmin: float, fmax: float, bnds: int):
            base.__init__(self, bnds)
            self.zmin, self.zmax = float(hz_to_bark(fmin)), float(hz_to_bark(fmax))
            self.zstep = (self.zmax - self.zmin) / (bnds - 1)

        def F(self, bnd=None):  # noqa: N802 (nsgt's name)
            if bnd is None:
                bnd = np.arange(self.bnds)
            return bark_to_hz(np.asarray(bnd) * self.zstep + self.zmin)

    return BarkScale


def scale(name: str, fmin: float, fmax: float, bands: int):
    """An ``nsgt`` scale object: ``scale()`` returns centre frequencies (Hz) and Q per band.

    Parameters
    ----------
    name : str
        ``'log'`` (constant Q, bands ``2 ** (1 / bins_per_octave)`` apart), ``'mel'`` or ``'bark'``.
    fmin, fmax : float
        Centre frequencies of the lowest and highest band, Hz.
    bands : int
        Number of bands, at least 2.
    """
    modules = nsgt_modules()
    if name == "log":
        return modules.nsgt.LogScale(fmin, fmax, bands)
    if name == "mel":
        return modules.nsgt.MelScale(fmin, fmax, bands)
    return _bark_scale_class()(fmin, fmax, bands)
