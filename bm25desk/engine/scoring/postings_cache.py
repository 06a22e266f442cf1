"""Decoded postings for the exhaustive path: per (weight table, segment, term), LRU in bytes.

The exhaustive traversal (``_topk_src/exhaustive.c``) adds ``qw · T[dl_index[d], tf]`` (or the
overflow value) for every posting of every query term. All of it but ``qw`` depends only on the
term's posting list in a segment and on the variant's tf-part table (variant, parameters, k1*,
average length, cap), so a term that recurs across queries — an evaluation run's "of", "the",
"in" — is decoded and weighted once: the kernel fills a ``_topk.Parts`` (docnos and float64 tf
parts, the very numbers it adds) the first time it meets the term, and reads it afterwards.
Scores stay bit-identical: the same ``acc[d] += qw · tp`` on the same ``tp``.

The cache belongs to one open index (``topk._State``) and goes with it: an index reopened after
an update or an edit starts empty, so no stale postings are ever served.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

MAX_BYTES = 64 << 20
"""Bytes of decoded postings kept per open index (12 per posting: an int32 docno and a float64
tf part). 64 MB holds every list of a SciFact-sized collection many times over, and the
frequent terms of a 1 M-passage one."""


class PartsCache:
    """Thread-safe LRU of ``_topk.Parts`` bounded in bytes (see the module docstring)."""

    def __init__(self, parts_type: Any, max_bytes: int = MAX_BYTES) -> None:
        """Keep at most ``max_bytes`` of ``parts_type`` objects (``_topk.Parts``)."""
        self._make = parts_type
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._lock = threading.Lock()
        # key -> (parts, the PostingList and Table it was made for, its bytes)
        self._entries: OrderedDict[tuple[int, int, str], tuple[Any, Any, Any, int]] = OrderedDict()

    def __len__(self) -> int:
        """Return the number of lists kept."""
        return len(self._entries)

    def get(self, table: Any, seg: int, term: str, pl: Any, n: int) -> Any:
        """Return the Parts of ``term``'s list ``pl`` (``n`` postings) in segment ``seg``, or None.

        ``table`` is the kernel's ``_topk.Table``: its identity stands for the variant and
        parameters (an entry holds it, so the identity is not reused while the entry lives). A
        new, empty Parts is made on a miss (the kernel fills it); None when the list alone
        would take more than a quarter of the cache.
        """
        key = (id(table), seg, term)
        got = self._entries.get(key)  # a plain read (atomic): the hot path takes no lock
        if got is not None and got[2] is table and (got[1] is pl or got[0].fits(pl)):
            try:
                self._entries.move_to_end(key)
            except KeyError:  # evicted meanwhile by another thread: still usable for this query
                pass
            return got[0]
        size = 12 * n
        if size * 4 > self.max_bytes:
            return None
        parts = self._make(pl, table)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.nbytes -= old[3]
            self._entries[key] = (parts, pl, table, size)
            self.nbytes += size
            while self.nbytes > self.max_bytes and self._entries:
                self.nbytes -= self._entries.popitem(last=False)[1][3]
        return parts

    def clear(self) -> None:
        """Drop every kept list."""
        with self._lock:
            self._entries.clear()
            self.nbytes = 0
