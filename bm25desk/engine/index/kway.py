"""K-way merge of sorted streams of byte keys, a round of pieces at a time (vocabulary, docids)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator

import numpy as np

from bm25desk.engine.index.arrays import I64
from bm25desk.engine.index.merge_source import check_cancel
from bm25desk.engine.progress import CancelToken

__all__ = ["Chunk", "rounds", "split_records", "whole_runs"]

Chunk = tuple[list[bytes], I64]
"""Sorted keys (UTF-8 bytes) and a payload per key (a local term id, a merged docno)."""


def whole_runs(load: Callable[[int, int], Chunk], n: int, size: int) -> Iterator[Chunk]:
    """Yield ``load`` over ``[0, n)`` in pieces of about ``size`` that never split equal keys."""
    lo = 0
    while lo < n:
        hi = min(lo + size, n)
        keys, vals = load(lo, hi)
        while hi < n:  # duplicates (docids) continuing past the piece belong to it
            more, extra = load(hi, hi + 1)
            if more[0] != keys[-1]:
                break
            keys += more
            vals = np.concatenate([vals, extra])
            hi += 1
        yield keys, vals
        lo = hi


def rounds(streams: list[Iterator[Chunk]], cancel: CancelToken | None) -> Iterator[list[Chunk]]:
    """K-way merge of sorted streams, a round at a time (C-speed work, not a heap per key).

    Each round takes from every stream its pending keys up to ``bound``, the smallest last key
    loaded by a stream not yet exhausted: as pieces never split equal keys, no key ``<= bound``
    is still unloaded, so the union of what is taken precedes everything left. The stream that
    set the bound is used up, so every round consumes at least one piece. Yields, per round, what
    each stream gave (possibly nothing), in stream order.
    """
    k = len(streams)
    keys: list[list[bytes]] = [[] for _ in range(k)]
    vals: list[I64] = [np.zeros(0, dtype=np.int64) for _ in range(k)]
    start = [0] * k  # first pending key of keys[s]
    done = [False] * k
    while True:
        check_cancel(cancel)
        for s in range(k):
            if not done[s] and start[s] == len(keys[s]):
                piece = next(streams[s], None)
                if piece is None:
                    done[s] = True
                    keys[s], vals[s], start[s] = [], vals[s][:0], 0
                else:
                    keys[s], vals[s] = piece
                    start[s] = 0
        limits = [keys[s][-1] for s in range(k) if not done[s]]
        if not limits and all(start[s] == len(keys[s]) for s in range(k)):
            return
        bound = min(limits) if limits else None
        taken: list[Chunk] = []
        for s in range(k):
            a = start[s]
            b = len(keys[s]) if bound is None else bisect.bisect_right(keys[s], bound, lo=a)
            taken.append((keys[s][a:b], vals[s][a:b]))
            start[s] = b
        yield taken


def split_records(data: bytes, rel: list[int]) -> list[bytes]:
    """Cut ``data`` at the relative offsets ``rel`` (n + 1 of them) into n records."""
    return list(map(data.__getitem__, map(slice, rel[:-1], rel[1:])))
