"""Independent calls spread over a few threads: results taken in order, or column parts of an array.

The CPU analyses (:mod:`.stft`, :mod:`.nsgt`) run chunks whose numpy and
pocketfft work releases the GIL, so two cores analyse two chunks at once; the caller reports progress
and may cancel between results, on its own thread. Copies and sums of samples run in column parts on
the process's :func:`host_pool`, started once.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

HOST_THREADS = 8
"""Threads of :func:`host_pool`: memory-bound work on the host (copies and sums of samples, whose
new pages fault in as they are first written) scales to about this many on the H200's host."""
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def host_pool() -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool of :data:`HOST_THREADS` threads, started at its first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(HOST_THREADS, "spectropaint-host")
        return _pool


def in_column_parts(
    work: Callable[[slice], object], n: int, least: int
) -> list[concurrent.futures.Future]:
    """Start ``work(columns)`` on :func:`host_pool` for slices that cover ``[0, n)``: one per core
    (at most :data:`HOST_THREADS`), each of ``least`` columns or more, so that a short array is
    one part. Returns at once; :func:`finish` waits."""
    parts = max(1, min(HOST_THREADS, os.cpu_count() or 1, n // least))
    step = max(1, -(-n // parts))
    return [host_pool().submit(work, slice(first, first + step)) for first in range(0, n, step)]


def finish(futures: Iterable[concurrent.futures.Future]) -> list:
    """Wait for every call, then raise the first one's error, if any: their results, in order."""
    futures = list(futures)
    concurrent.futures.wait(futures)
    return [future.result() for future in futures]


def results_in_order(
    work: Callable[[Item], Result], items: Iterable[Item], workers: int
) -> Iterator[Result]:
    """``work(item)`` for every item, at most ``workers`` at once, yielded in the items' order.

    With one worker the calls run on the caller's thread, one after the other. Closing the iterator
    early (a cancel) cancels the calls not started and waits for the running ones.
    """
    if workers <= 1:
        yield from map(work, items)
        return
    items = iter(items)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        pending = collections.deque(
            pool.submit(work, item) for item in itertools.islice(items, workers)
        )
        try:
            while pending:
                result = pending.popleft().result()
                pending.extend(pool.submit(work, item) for item in itertools.islice(items, 1))
                yield result
        finally:
            for future in pending:
                future.cancel()
