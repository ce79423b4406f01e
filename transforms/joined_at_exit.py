"""Background threads that the interpreter's exit waits for.

A daemon thread still inside native code (one of torch's calls, scipy's FFT) as the interpreter
exits takes the GIL back once the runtime is being torn down, and the whole process aborts
("terminate called without an active exception", status 134): a window closed during its first
seconds did so while the brushes' warm-up painted, and one closed while a sound opened while its
coarse picture was read. A thread started by :func:`start` is still a daemon (closing a window
never waits for it), but the exit first sets :func:`exiting`, for a loop to end at its next step,
and joins it: the step under way is finished (a stroke, a Numba compile, a file's coarse read).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable

_exiting = threading.Event()
_running: set[threading.Thread] = set()
_lock = threading.Lock()


def start(target: Callable[[], object], *, name: str) -> threading.Thread:
    """``target()`` on a daemon thread named ``name`` that the interpreter's exit joins."""

    def run() -> None:
        try:
            target()
        finally:
            with _lock:
                _running.discard(threading.current_thread())

    thread = threading.Thread(target=run, name=name, daemon=True)
    with _lock:
        _running.add(thread)
    thread.start()
    return thread


def exiting() -> bool:
    """Whether the interpreter is exiting: a thread of :func:`start` ends at its next step."""
    return _exiting.is_set()


@atexit.register
def _join_at_exit() -> None:
    _exiting.set()
    with _lock:
        running = list(_running)
    for thread in running:
        thread.join()
