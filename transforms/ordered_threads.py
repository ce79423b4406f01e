"""Independent calls spread over a few threads, their results taken in order.

The CPU analyses (:mod:`.stft`, :mod:`.nsgt`) run chunks whose numpy and
pocketfft work releases the GIL, so two cores analyse two chunks at once; the caller reports progress
and may cancel between results, on its own thread.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


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
