"""Many searches at once: queries split into chunks that a few threads take in turn.

The pruning kernel's posting scan runs without the GIL, and so do numpy's larger array
operations; parsing, weighting and assembling results hold it. With two threads on two cores an
evaluation run's searches overlap where they can; one thread is a plain loop (no pool, no
overhead). Results come back in the order of the queries whatever the threads do.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

CHUNK = 16
"""Queries per task: enough to make a task's cost (tens of µs) small beside its searches."""


def default_threads() -> int:
    """Return the threads a batch uses when not told: one per core, at most 4."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def run_chunked(
    fn: Callable[[T], R], items: Sequence[T], threads: int, chunk: int = CHUNK
) -> list[R]:
    """Return ``[fn(x) for x in items]``, computed by up to ``threads`` threads in chunks.

    An exception raised by ``fn`` propagates (after the running chunks finish).
    """
    if threads <= 1 or len(items) <= chunk:
        return [fn(x) for x in items]

    def run(lo: int) -> list[R]:
        return [fn(x) for x in items[lo : lo + chunk]]

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="bm25desk-search") as pool:
        parts = list(pool.map(run, range(0, len(items), chunk)))
    return [r for part in parts for r in part]
