"""Decoded postings for the exhaustive path: per (weight table, segment, term), LRU in bytes.

The exhaustive traversal (``_topk_src/exhaustive.c``) adds ``qw · T[dl_index[d], tf]`` (or the
overflow value) for every posting of every query term. All of it but ``qw`` depends only on the
term's posting list in a segment and on the variant's tf-part table (variant, parameters, k1*,
average length, cap), so a term that recurs across queries — an evaluation run's "of", "the",
"in" — is decoded and weighted once: the kernel fills a ``_topk.Parts`` (docnos and each tf
part's place in the table, so that it reads back the very numbers it adds: 6 bytes a posting)
the first time it meets the term, and reads it afterwards. Scores stay bit-identical: the same
``acc[d] += qw · tp`` on the same ``tp``.

The cache belongs to one open index (``topk._State``) and goes with it: an index reopened after
an update or an edit starts empty, so no stale postings are ever served.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

MAX_BYTES = 64 << 20
"""The default bytes of decoded postings kept per open index (6 or 8 per posting: an int32 docno
and its tf part's place in the table): every list of a SciFact-sized collection many times over."""

MAX_BYTES_CAP = 256 << 20
"""The most :func:`budget` gives, whatever the collection's size."""


def budget(postings: int) -> int:
    """Return the bytes a cache keeps for an index of ``postings`` postings.

    A third of what decoding them all would take, between :data:`MAX_BYTES` and
    :data:`MAX_BYTES_CAP`. On 1 M passages (50 M postings: 200 MB) a run of long queries read 92 %
    of its postings from the cache, against 33 % at 64 MB, where the frequent terms' lists
    (about 12 MB each decoded) pushed one another out; 128 MB gave 82 %.
    """
    return max(MAX_BYTES, min(MAX_BYTES_CAP, 12 * int(postings) // 3))


ADMIT_AT_ONCE = 4096
"""Lists shorter than this get their Parts the first time (the ghost rule is for long ones)."""

MAX_GHOSTS = 1 << 16
"""Keys of long lists met once, remembered (LRU) so that the second meeting makes a Parts."""

PART_BYTES = 6
"""What a posting of a Parts takes, counted before it is made: an int32 docno and its tf part's
place in the table, 16 bits for a table of fewer than 64 K places, as for passages (32 beyond:
the Parts made then counts its own bytes)."""

_ABSENT = (None, None, None)
"""A cache entry for a term with no postings in the segment."""

_ENTRY_BYTES = 256
"""What an entry costs beside its parts (the dict slot, key and tuples), for the byte cap."""


class PartsCache:
    """Thread-safe LRU of per-term kernel arguments, bounded in bytes (see the module docstring).

    An entry, per (table, segment, term), is what the kernel needs for the term: its
    PostingList, its overflow values and its ``_topk.Parts`` (None for a list too big to keep),
    or ``_ABSENT`` — so a warm query reads one dict entry per term, and no lexicon.
    """

    def __init__(self, parts_type: Any, max_bytes: int = MAX_BYTES) -> None:
        """Keep at most ``max_bytes`` (``parts_type``: ``_topk.Parts``)."""
        self._make = parts_type
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._lock = threading.Lock()
        # key -> ((PostingList, overflow values, Parts), the table it is for, bytes)
        self._entries: OrderedDict[tuple[int, int, str], tuple[tuple[Any, Any, Any], Any, int]]
        self._entries = OrderedDict()
        # keys met once whose entry got no Parts (admission: a Parts only for a term met again)
        self._ghosts: OrderedDict[tuple[int, int, str], None] = OrderedDict()

    def __len__(self) -> int:
        """Return the number of entries kept."""
        return len(self._entries)

    def lookup(self, table: Any, seg: int, term: str) -> tuple[Any, Any, Any] | None:
        """Return the entry of ``term`` in segment ``seg`` under ``table``, or None (a miss).

        ``table`` is the kernel's ``_topk.Table``: its identity stands for the variant and its
        parameters (an entry holds it, so the identity is not reused while the entry lives).
        """
        key = (id(table), seg, term)
        got = self._entries.get(key)  # a plain read (atomic): the hot path takes no lock
        if got is None or got[1] is not table:
            return None
        try:  # noqa: SIM105 (contextlib.suppress costs more, on the hot path)
            self._entries.move_to_end(key)
        except KeyError:  # evicted meanwhile by another thread: still good for this query
            pass
        return got[0]

    def put(
        self, table: Any, seg: int, term: str, pl: Any, n: int, ov: Any
    ) -> tuple[Any, Any, Any]:
        """Keep and return the entry for ``term``'s list ``pl`` of ``n`` postings (None: absent).

        A new Parts is empty (the kernel fills it). None is made for a list that alone would
        take more than a quarter of the cap, nor, once the cache is full, for a long list met
        for the first time: that entry is not kept, only its key (a ghost), and the list gets
        its Parts when it comes again. Filling a Parts writes 6-8 bytes a posting; on a large
        collection most long lists of a run of long queries come once, and their Parts would
        push out the ones that are read again (1 M passages, long mix: 16 % of the postings
        came from the cache before this rule, 33 % with it at the same size).
        """
        key = (id(table), seg, term)
        keep = True
        if pl is None:
            entry, size = _ABSENT, _ENTRY_BYTES
        else:
            size = PART_BYTES * n + _ENTRY_BYTES
            parts = None
            if size * 4 <= self.max_bytes:
                with self._lock:
                    keep = (
                        n < ADMIT_AT_ONCE
                        or self.nbytes + size <= self.max_bytes
                        or self._ghosts.pop(key, 0) is None
                    )
                    if not keep:
                        self._ghosts[key] = None
                        while len(self._ghosts) > MAX_GHOSTS:
                            self._ghosts.popitem(last=False)
                if keep:
                    parts = self._make(pl, table)
            entry = (pl, ov, parts)
            size = _ENTRY_BYTES if parts is None else parts.nbytes + _ENTRY_BYTES
        if not keep:
            return entry
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.nbytes -= old[2]
            self._entries[key] = (entry, table, size)
            self.nbytes += size
            while self.nbytes > self.max_bytes and self._entries:
                self.nbytes -= self._entries.popitem(last=False)[1][2]
        return entry

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self._ghosts.clear()
            self.nbytes = 0


def exhaustive(
    st: Any,
    doclen: Any,
    terms: Sequence[Any],
    k: int,
    allow: Any,
    rows: bool,
    search: Callable[..., Any],
) -> tuple[Any, int] | None:
    """Run the exhaustive kernel over every segment: (its last result, the match count), or None.

    ``st`` is the index's ``topk._State`` (``doclen`` its document lengths), ``terms`` the
    (term, qtf, weighting) of the query, ``search`` the kernel's ``_topk.search``. None when a
    weight or table is one the kernel cannot take (the caller ranks with numpy). Per term and
    segment a warm query reads one cache entry (no lexicon, no posting list made, no block
    decoded).
    """
    cache: PartsCache = st.parts
    qws = []
    for _term, qtf, w in terms:
        qw = qtf * w.idf
        if not math.isfinite(qw):
            return None
        qws.append(qw)
    ncols = len(terms)
    tables: dict[tuple[Any, int], Any] = {}
    lists: dict[str, Any] = {}
    prev: Any = None
    matches = 0
    entries = cache._entries  # looked up inline: one dict read per warm term (see lookup)
    for s, sg in enumerate(st.segments):
        args = []
        k1: Any = _ABSENT  # the terms share a table unless their k1* differ (BM25Adpt)
        tk: Any = None
        table_id = 0
        for col, (term, _qtf, w) in enumerate(terms):
            if w.k1 is not k1:
                k1, tk = w.k1, kernel_table(st, tables, w, sg.cap)
                if tk is None:
                    return None
                table_id = id(tk)
            key = (table_id, s, term)
            hit = entries.get(key)
            entry = hit[0] if hit is not None and hit[1] is tk else None
            if entry is not None:
                try:  # noqa: SIM105 (contextlib.suppress costs more, on the hot path)
                    entries.move_to_end(key)
                except KeyError:  # evicted meanwhile by another thread: still good for now
                    pass
            else:
                entry = _miss(st, doclen, cache, tk, s, term, w, lists)
            if entry[0] is not None:
                args.append((entry[0], qws[col], tk, None, entry[1], col, entry[2]))
        if not args:
            continue
        seg_allow = None if allow is None else allow[sg.base : sg.base + sg.n]
        *got, n = search(
            args, sg.dli, k, ncols, seg_allow, sg.deny, sg.base, prev, exhaustive=True, rows=rows
        )
        prev, matches = tuple(got), matches + n
    return prev, matches


def kernel_table(st: Any, tables: dict[tuple[Any, int], Any], w: Any, cap: int) -> Any:
    """Return the kernel's table of weighting ``w`` for blocks of ``cap`` (None: it has none).

    ``tables`` keeps the ones a search asked for by (k1*, cap): its terms share the variant and
    statistics, so their tables differ by those alone.
    """
    table = tables.get((w.k1, cap))
    if table is None:
        table = tables[w.k1, cap] = st.table(w, cap)
    return table.kernel if table.ok else None


def _miss(
    st: Any, doclen: Any, cache: PartsCache, tk: Any, s: int, term: str, w: Any, lists: Any
) -> tuple[Any, Any, Any]:
    """Make and keep the cache entry of ``term`` in segment ``s`` under table ``tk``.

    ``lists`` (term -> its postings per segment, or None) saves the look-up of a term's lists
    for its other segments.
    """
    per_seg = lists.get(term) if lists is not None else None
    if per_seg is None and st.stored and len(st.segments) == 1:
        per_seg = (st._segment_postings(term, st.segments[0]),)  # kept by the entry: no LRU
    elif per_seg is None:
        per_seg = st.postings(term)
        if lists is not None:
            lists[term] = per_seg
    p = per_seg[s]
    ov = None
    if p is not None and p.n_ovf:
        ov = st.overflow_values(term, s, p, w, doclen)
    return cache.put(tk, s, term, None if p is None else p.pl, p.n if p else 0, ov)


def entry(st: Any, doclen: Any, tk: Any, s: int, term: str, w: Any) -> tuple[Any, Any, Any]:
    """Return what the kernel needs for ``term`` in segment ``s`` under the kernel table ``tk``.

    (PostingList or None when the term is absent there, overflow values, Parts or None), from
    the cache or made and kept (the batch path: ``scoring/batch.py``).
    """
    cache: PartsCache = st.parts
    got = cache.lookup(tk, s, term)
    if got is not None:
        return got
    if not st.stored:  # lists encoded in memory: kept by the state, made once
        return _miss(st, doclen, cache, tk, s, term, w, None)
    # Stored blocks: the list costs nothing to make again, and the entry keeps it (a run's
    # thousands of new terms would only churn the state's LRU of lists).
    p = st._segment_postings(term, st.segments[s])
    ov = st.overflow_values(term, s, p, w, doclen) if p is not None and p.n_ovf else None
    return cache.put(tk, s, term, None if p is None else p.pl, p.n if p else 0, ov)
