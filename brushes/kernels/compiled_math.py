"""What the kernels compiled by Numba for the CPU share: Numba itself, imported once with LLVM's
limits raised, the switch that turns them off, and float32 math that vectorises.

On a CPU torch's path is op-bound: a dab is dozens of operations, a microsecond or more each,
where its arithmetic takes a few nanoseconds a cell. :mod:`.warp_compiled`,
:mod:`.clone_compiled`, :mod:`~spectropaint.brushes.blend_compiled` and (for the host's own work,
whatever the device) :mod:`~spectropaint.brushes.mask_compiled` compute cells in loops instead. The sines, cosines and arctangents
here are Cephes' polynomials (the argument reduced in float64), written without branches so that
the compiler vectorises the cells of a row; they agree with torch's to float32 rounding.

The helpers are plain Python until :func:`helpers` compiles them (inlined where they are called);
a kernel's module binds them to its own names before its functions are compiled, as Numba
resolves a function's globals when it compiles it.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import math
import os
import threading
from types import SimpleNamespace

import numpy as np
import torch

log = logging.getLogger(__name__)

COMPILED_ENV = "SPECTROPAINT_COMPILED"
"""``0`` turns the compiled kernels off: every brush takes torch's path on the CPU."""
FAST = frozenset({"nnan", "ninf", "nsz"})
"""Numba's fast-math flags for the kernels: no contraction or reassociation (torch's rounding)."""
CHECK_OPTIONS = (
    "runtime-memory-check-threshold",
    "vectorize-memory-check-threshold",
    "pragma-vectorize-memory-check-threshold",
    "memory-check-merge-threshold",
)
"""LLVM's limits on the overlap checks a vectorised loop may begin with (see :func:`numba_module`)."""


def wanted(device: torch.device) -> bool:
    """Whether compiled kernels are for ``device`` (the CPU) and not turned off, and Numba is
    installed; without importing it."""
    return device.type == "cpu" and enabled()


def enabled() -> bool:
    """Whether compiled code is not turned off and Numba is installed (for the host's own work,
    whatever the device); without importing it."""
    return not switched_off() and _installed()


def switched_off(variable: str = COMPILED_ENV) -> bool:
    """Whether the environment variable ``variable`` turns code off (it is ``0``): the compiled
    and fused kernels' switches. Inside :class:`SwitchesHeld`, as first read there."""
    held = getattr(_held, "switches", None)
    if held is None:
        return os.environ.get(variable, "").strip() == "0"
    off = held.get(variable)
    if off is None:
        off = held[variable] = os.environ.get(variable, "").strip() == "0"
    return off


_held = threading.local()
"""``switches``: what :func:`switched_off` answers from inside a :class:`SwitchesHeld`, a thread's
own (the window paints on a thread of its own, and the warm-up on another), or None."""


class SwitchesHeld:
    """``with SwitchesHeld(held):`` :func:`switched_off` reads each variable once into ``held``
    (a stroke's, kept across its events) and answers from it: a stroke keeps each switch as it
    first read it, where an event would ask ``os.environ`` several times, some 2 us each. Held
    switches nest: ``SwitchesHeld({COMPILED_ENV: True})`` turns the kernels off inside a stroke
    (the tests' reference path)."""

    def __init__(self, held: dict[str, bool]) -> None:
        self.held = held
        self._outer: dict[str, bool] | None = None

    def __enter__(self) -> None:
        self._outer, _held.switches = getattr(_held, "switches", None), self.held

    def __exit__(self, *exc) -> None:
        _held.switches, self._outer = self._outer, None


@functools.cache
def _installed() -> bool:
    """Whether Numba is installed, asked once (the finder takes some 40 us, and each group of
    dabs asks)."""
    return importlib.util.find_spec("numba") is not None


@functools.cache
def numba_module():
    """Numba, or None where it does not import (some 0.3 s at the first call).

    A kernel's row loops read a score of rows and write several: each pair is checked for overlap
    as the loop begins, which is more checks than LLVM allows by default (8), and it would not
    vectorise them. The limits are raised for this process's compilations; the checks cost
    nanoseconds a row."""
    try:
        import numba
    except ImportError:
        log.info("Numba is not installed: the brushes take torch's path on the CPU")
        return None
    import llvmlite.binding

    for option in CHECK_OPTIONS:
        llvmlite.binding.set_option("spectropaint", f"-{option}=1000")
    return numba


def compile_kernel(function, **options):
    """``function`` compiled at its first call (numpy's error model: a division by zero gives
    inf, not an exception, whose test in every division keeps loops from vectorising), kept in
    Numba's cache on disk where a folder for it is writable."""
    numba = numba_module()
    settings = {"fastmath": set(FAST), "error_model": "numpy", **options}
    try:
        return numba.njit(function, cache=True, **settings)
    except RuntimeError as error:  # no writable folder for the cache (Numba's own message)
        log.info("%s is compiled without a cache: %s", function.__name__, error)
        return numba.njit(function, **settings)


def compile_with(function, *names: str, **options):
    """``function`` compiled (:func:`compile_kernel`) once the helpers ``names`` of :func:`helpers`
    are bound to ``_<name>`` in its module's globals, where Numba looks them up as it compiles it;
    None where Numba does not import."""
    if numba_module() is None:
        return None
    math_ = helpers()
    for name in names:
        function.__globals__[f"_{name}"] = getattr(math_, name)
    return compile_kernel(function, **options)


def inline(function):
    """``function`` compiled to be inlined where a compiled function calls it."""
    return numba_module().njit(function, inline="always", fastmath=set(FAST), error_model="numpy")


@functools.cache
def helpers() -> SimpleNamespace:
    """The math below compiled to be inlined where it is called: ``sincos``, ``atan2``, ``wrap``,
    ``clamp01``, ``crossfade``, ``around``."""
    global _sincos, _atan2
    _sincos, _atan2 = inline(_plain_sincos), inline(_plain_atan2)
    return SimpleNamespace(
        sincos=_sincos,
        atan2=_atan2,
        wrap=inline(_plain_wrap),
        clamp01=inline(_plain_clamp01),
        crossfade=inline(_plain_crossfade),
        around=inline(_plain_around),
    )


def _plain_sincos(angle):
    """``(sin, cos)`` of a float32 angle: reduced by the nearest multiple of pi / 2 in float64
    (exact to 1e-9 for any angle a dab makes), then Cephes' ``sinf`` and ``cosf`` polynomials
    (within 1e-7 on ``[-pi / 4, pi / 4]``), the quadrant applied by selection."""
    wide = np.float64(angle)
    quarter = math.floor(wide * 0.6366197723675814 + 0.5)  # 2 / pi
    z = np.float32(wide - quarter * 1.5707963267948966)
    zz = z * z
    sin = z + z * zz * ((np.float32(-1.9515295891e-4) * zz + np.float32(8.3321608736e-3)) * zz
                        - np.float32(1.6666654611e-1))  # fmt: skip
    cos = (np.float32(1.0) - np.float32(0.5) * zz
           + zz * zz * ((np.float32(2.443315711809948e-5) * zz - np.float32(1.388731625493765e-3))
                        * zz + np.float32(4.166664568298827e-2)))  # fmt: skip
    turn = np.int64(quarter) & 3
    odd = (turn & 1) == 1
    s, c = (cos if odd else sin), (sin if odd else cos)
    return (-s if turn >= 2 else s), (-c if turn == 1 or turn == 2 else c)


def _plain_atan2(y, x):
    """``atan2(y, x)`` in float32: the octant reduced to ``[0, 1]``, then Cephes' ``atanf`` (as
    :mod:`.warp_fused` computes it on the GPU)."""
    ax, ay = abs(x), abs(y)
    big, small = max(ax, ay), min(ax, ay)
    ratio = small / big if big > 0.0 else np.float32(0.0)
    reduced = ratio > np.float32(0.4142135623730950)
    t = (ratio - np.float32(1.0)) / (ratio + np.float32(1.0)) if reduced else ratio
    z = t * t
    angle = (((np.float32(8.05374449538e-2) * z - np.float32(1.38776856032e-1)) * z
              + np.float32(1.99777106478e-1)) * z - np.float32(3.33329491539e-1)) * z * t + t  # fmt: skip
    angle = angle + np.float32(0.7853981633974483) if reduced else angle
    angle = np.float32(1.5707963267948966) - angle if ay > ax else angle
    angle = np.float32(3.141592653589793) - angle if x < 0.0 else angle
    return -angle if y < 0.0 else angle


def _plain_wrap(angle):
    """Angles less the nearest whole number of turns: ``[-pi, pi]``."""
    turns = np.floor(angle * np.float32(0.15915494309189535) + np.float32(0.5))
    return angle - turns * np.float32(6.283185307179586)


def _plain_crossfade(old, old_phase, magnitude, phase, weight):
    """The old value (``old``, ``old_phase``) moved towards the new by ``weight``, as complex
    numbers (:class:`~spectropaint.brushes.blend.WindowBlend`): ``(magnitude, phase)``."""
    sin, cos = _sincos(phase)
    old_sin, old_cos = _sincos(old_phase)
    old_real, old_imag = old_cos * old, old_sin * old
    real = (cos * magnitude - old_real) * weight + old_real
    imag = (sin * magnitude - old_imag) * weight + old_imag
    return math.sqrt(real * real + imag * imag), _atan2(imag, real)


def _plain_around(terms, row, at):
    """A row of ``terms``' sum over :data:`~.phase.CONTEXT_FRAMES` (2) columns either side of
    ``at`` (unsigned, as every index the vectorised loops compute: a signed one is tested for
    wrapping around, which the compiler cannot vectorise), in torch's order (:class:`.phase.
    Continuation`): the cell, then 1 and 2 columns either side."""
    one, two = np.uintp(1), np.uintp(2)
    return (((terms[row, at] + terms[row, at - one]) + terms[row, at + one]) + terms[row, at - two]
            + terms[row, at + two])  # fmt: skip


def _plain_clamp01(value):
    return min(max(value, np.float32(0.0)), np.float32(1.0))


_sincos = _atan2 = None  # (bound by helpers)
