"""Lowering the priority of the calling thread, for work that may wait: a finished stroke's settle
should take what the painting thread, the window's thread and the renderer leave of a 2-core CPU,
not a third of it."""

from __future__ import annotations

import os
import threading

BACKGROUND_NICE = 10
"""Niceness added to a background thread (Linux's scale: 0 normal, 19 the least)."""


def lower_this_thread(nice: int = BACKGROUND_NICE) -> bool:
    """Make the calling thread ``nice`` steps nicer; True when the system allowed it.

    Linux gives every thread its own niceness (``setpriority`` on its thread id); elsewhere, or
    where it is refused, nothing changes. A thread's niceness cannot be raised back without
    privileges, so call this only on threads that stay in the background.
    """
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return False
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
    except OSError:
        return False
    return True
