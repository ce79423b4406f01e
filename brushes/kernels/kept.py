"""Work buffers kept between dabs, per thread and by their sizes.

A dab at radius 8 is some fifty small operations on a CPU; making its buffers (each ``torch.empty``
or ``zeros`` an operation, each view of them another) would be a third more. Objects that hold
such buffers (warp's ``_Work``, :class:`~.phase.Continuation`,
:class:`~spectropaint.brushes.blend.WindowBlend`) are made once per size and thread and reused: a
kept object is valid until the next call of :func:`kept` with the same key in that thread.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")

KEPT_WORK = 16
"""Objects of so many keys are kept, per thread (dabs of one brush at one size have a few shapes,
a box one cell larger or smaller with the dab's fractional centre; warp keeps two kinds)."""
KEPT_WORK_CELLS = 6144
"""Windows of up to this many cells (rows times columns) keep their buffers: clone's regions at
radius 32 (64 x 68) are, warp's at 64 x 64. Warp's buffers of such a window take some 2.5 MB at
stereo, so a thread keeps 40 MB at the very most, a few MB in practice; on larger windows making
them costs little beside the work."""

_kept = threading.local()
_every_kept: weakref.WeakSet = weakref.WeakSet()
_kept_lock = threading.Lock()


class _Kept:
    """A thread's kept objects, by key, the most recently used last."""

    __slots__ = ("objects", "__weakref__")

    def __init__(self):
        self.objects: dict[Hashable, object] = {}


def kept(make: Callable[..., T], shape: tuple[int, ...], device, *, cells: int) -> T:
    """``make(shape, device=device)``: the thread's kept one of this ``shape`` and ``device``, or a
    new one (kept when its window has at most :data:`KEPT_WORK_CELLS` ``cells``).

    The object may hold the previous call's values: the caller overwrites what it reads.
    """
    if cells > KEPT_WORK_CELLS:
        return make(shape, device=device)
    mine = getattr(_kept, "objects", None)
    key = (make, tuple(shape), device)
    with _kept_lock:
        if mine is None:
            mine = _kept.objects = _Kept()
            _every_kept.add(mine)
        objects = mine.objects
        found = objects.pop(key, None)
        if found is None:
            found = make(shape, device=device)
            while len(objects) >= KEPT_WORK:
                del objects[next(iter(objects))]
        objects[key] = found
    return found


def clear_kept_work() -> None:
    """Forget every thread's kept objects."""
    with _kept_lock:
        for mine in list(_every_kept):
            mine.objects.clear()
