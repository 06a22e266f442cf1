"""Decoded postings for the exhaustive path: per (weight table, segment, term), bounded in bytes.

The exhaustive traversal (``_topk_src/exhaustive.c``) adds ``qw · T[dl_index[d], tf]`` (or the
overflow value) for every posting of every query term. All of it but ``qw`` depends only on the
term's posting list in a segment and on the variant's tf-part table (variant, parameters, k1*,
average length, cap), so a term that recurs across queries — an evaluation run's "of", "the",
"in" — is decoded and weighted once: the kernel fills a ``_topk.Parts`` (docnos and each tf
part's place in the table, so that it reads back the very numbers it adds: 6 bytes a posting)
the first time it meets the term, and reads it afterwards. Scores stay bit-identical: the same
``acc[d] += qw · tp`` on the same ``tp``.

A query is one kernel call (``_topk.exhaustive_query``): the cache keeps, per (table, segment),
a plain dict of term -> Parts (None: the term is absent from the segment), which the kernel reads
itself, one look-up per term; the terms it does not find come back to :func:`_fill` in one list
(a Parts made over the segment's stored blocks, or None), and are kept. Recency without a write
per look-up: the kernel sets a Parts' reference bit when it reads it, and eviction (oldest
first) gives a referenced entry a second chance (CLOCK) instead of moving it on every hit.

The cache belongs to one open index (``topk._State``) and goes with it: an index reopened after
an update or an edit starts empty, so no stale postings are ever served.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

from bm25desk.engine import native

_topk: Any = native.load("bm25desk.engine.scoring._topk")

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

_ENTRY_BYTES = 256
"""What an entry costs beside its parts (the dict slot, key and objects), for the byte cap."""

_MISSING = object()

Key = tuple[int, int, str]
"""An entry's key: (id of its table, segment, term)."""

Order = OrderedDict[str, int]
"""A map's terms, oldest first, with the bytes each entry was counted at."""


class PartsCache:
    """Thread-safe cache of per-term Parts, bounded in bytes (see the module docstring).

    An entry, per (table, segment, term), is the term's ``_topk.Parts`` there (filled by the
    first search that reads it; one that may not be filled, for a list too big to keep, is
    decoded by each search), or None when the term has no postings in the segment.
    """

    def __init__(self, parts_type: Any, max_bytes: int = MAX_BYTES) -> None:
        """Keep at most ``max_bytes`` (``parts_type``: ``_topk.Parts``)."""
        self._make = parts_type
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._lock = threading.Lock()
        # (id(table), segment) -> (table, {term: Parts | None}): what the kernel reads; holding
        # the table keeps its id from being reused while its entries live
        self._maps: dict[tuple[int, int], tuple[Any, dict[str, Any]]] = {}
        # id(map) -> (its key above, the map, its terms oldest first with their bytes): the
        # clock's hand at each order's front (the map held: its id is not reused meanwhile)
        self._orders: dict[int, tuple[tuple[int, int], dict[str, Any], Order]] = {}
        # what the kernel made, counted in nbytes but not in the orders yet (see account)
        self._pending: list[list[Any]] = []
        # keys met once whose entry got no Parts (admission: a Parts only for a term met again)
        self._ghosts: OrderedDict[Key, None] = OrderedDict()
        self.views: tuple[Any, ...] | None = None  # the segments as the kernel reads them
        self.memos: tuple[Any, ...] | None = None  # their lexicons' memos (term -> id)
        self.last: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None  # tables -> maps

    def __len__(self) -> int:
        """Return the number of entries kept."""
        with self._lock:
            self._fold()
            return sum(len(order) for _key, _m, order in self._orders.values())

    def _map(self, table: Any, seg: int) -> tuple[dict[str, Any], Order]:
        """Return the map of ``table`` in segment ``seg`` and its order, made if new (locked)."""
        key = (id(table), seg)
        got = self._maps.get(key)
        if got is None:
            got = self._maps[key] = (table, {})
            self._orders[id(got[1])] = (key, got[1], OrderedDict())
        return got[1], self._orders[id(got[1])][2]

    def map_of(self, table: Any, seg: int) -> dict[str, Any]:
        """Return the dict of term -> entry of ``table`` (a ``_topk.Table``) in segment ``seg``."""
        got = self._maps.get((id(table), seg))  # a plain read (atomic)
        if got is not None:
            return got[1]
        with self._lock:
            return self._map(table, seg)[0]

    def lookup(self, table: Any, seg: int, term: str) -> Any:
        """Return the entry of ``term`` in segment ``seg`` under ``table``, or ``_MISSING``."""
        got = self._maps.get((id(table), seg))
        return _MISSING if got is None else got[1].get(term, _MISSING)

    def entries(self) -> list[tuple[Key, Any]]:
        """Return every (key, entry) kept, map by map, each oldest first (tests)."""
        with self._lock:
            self._fold()
            return [
                ((key[0], key[1], term), m.get(term))
                for key, m, order in self._orders.values()
                for term in order
            ]

    def admit(self, table: Any, seg: int, term: str, n: int) -> tuple[bool, bool]:
        """Return (keep the entry, let its Parts be filled) for a list of ``n`` postings.

        No filling for a list that alone would take more than a quarter of the cap (its entry is
        kept, decoded by each search), nor, once the cache is full, for a long list met for the
        first time: that entry is not kept, only its key (a ghost), and the list gets its Parts
        when it comes again. Filling a Parts writes 6-8 bytes a posting; on a large collection
        most long lists of a run of long queries come once, and their Parts would push out the
        ones that are read again (1 M passages, long mix: 16 % of the postings came from the
        cache before this rule, 33 % with it at the same size).
        """
        size = PART_BYTES * n + _ENTRY_BYTES
        if size * 4 > self.max_bytes:
            return True, False
        if n < ADMIT_AT_ONCE:
            return True, True
        key = (id(table), seg, term)
        with self._lock:
            if self.nbytes + size <= self.max_bytes or self._ghosts.pop(key, 0) is None:
                return True, True
            self._ghosts[key] = None
            while len(self._ghosts) > MAX_GHOSTS:
                self._ghosts.popitem(last=False)
        return False, False

    def put(self, table: Any, seg: int, term: str, entry: Any) -> Any:
        """Keep and return ``entry`` (a Parts, or None: the term is absent from the segment)."""
        with self._lock:
            self._fold()
            self._keep(table, seg, term, entry)
            self._evict()
        return entry

    def put_many(self, entries: list[tuple[Any, int, str, Any]]) -> None:
        """Keep the (table, segment, term, entry) of ``entries`` (as :meth:`put`, one lock)."""
        with self._lock:
            self._fold()
            for table, seg, term, entry in entries:
                self._keep(table, seg, term, entry)
            if self.nbytes > self.max_bytes:
                self._evict()

    def _keep(self, table: Any, seg: int, term: str, entry: Any) -> None:
        """Put ``entry`` in its map, at the back of its order, and count it (locked)."""
        size = _ENTRY_BYTES
        if entry is not None and entry.fillable:
            size += entry.nbytes
        m, order = self._map(table, seg)
        old = order.pop(term, None)
        if old is not None:
            self.nbytes -= old
        m[term] = entry
        order[term] = size
        self.nbytes += size

    @property
    def short(self) -> int:
        """Return the length under which a list is kept at once and may be filled (no rule)."""
        return min(ADMIT_AT_ONCE, (self.max_bytes // 4 - _ENTRY_BYTES) // PART_BYTES + 1)

    def account(self, added: list[Any]) -> None:
        """Count the entries the kernel made and put in the maps itself: map, term, bytes each.

        Their bytes now; their terms join their maps' orders when something next reads or
        writes them (:meth:`_fold`). A flat list of the kernel's own objects and the sizes, kept
        until then: the key and note tuples of earlier versions, two a term kept alive until
        folded, cost a SciFact query's first pass ~6 µs (78 against 72 µs a query with them
        left out, 10 interleaved pairs of fresh processes); switching the collector off
        altogether gave back ~2 µs, so most of it is not the collector's walks.
        """
        with self._lock:
            self._pending.append(added)
            self.nbytes += sum(added[2::3])
            if self.nbytes > self.max_bytes:
                self._evict()

    def _fold(self) -> None:
        """Put the entries :meth:`account` counted into their orders (with the lock held).

        An entry another thread put meanwhile for the same key (its own, counted by it, in the
        order now), or one whose map is gone, is not counted twice: its pending bytes come off.
        """
        if not self._pending:
            return
        orders = self._orders
        for added in self._pending:
            it = iter(added)
            for m, term, size in zip(it, it, it, strict=True):
                got = orders.get(id(m))
                if got is None or got[1] is not m or term in got[2]:
                    self.nbytes -= size
                else:
                    got[2][term] = size
        self._pending.clear()

    def _evict(self) -> None:
        """Drop entries, oldest first in each map, until under the cap.

        Called with the lock held. The maps take turns, an entry each (one map: oldest first
        overall). The kernel sets a Parts' reference bit each time it reads it (``take_ref``
        clears it): an entry read since it last came to the front is moved to the back instead
        of dropped, once (the clock's second chance).
        """
        self._fold()
        turns = list(self._orders.values())
        chances = sum(len(order) for _key, _m, order in turns)
        while self.nbytes > self.max_bytes and turns:
            for got in list(turns):
                key, m, order = got
                if not order:
                    turns.remove(got)
                    continue
                term, size = order.popitem(last=False)
                entry = m.get(term)
                if chances > 0 and entry is not None and entry.take_ref():
                    chances -= 1
                    order[term] = size
                    continue
                self.nbytes -= size
                m.pop(term, None)
                if not m:
                    del self._maps[key], self._orders[id(m)]
                    turns.remove(got)
                    self.last = None  # (a search reads the map that puts now go to)
                if self.nbytes <= self.max_bytes:
                    break

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._maps.clear()
            self._orders.clear()
            self._pending.clear()
            self._ghosts.clear()
            self.nbytes = 0
            self.last = None


def _memos(st: Any) -> tuple[Any, ...]:
    """Return per segment its lexicon's memo of term -> id (a dict), or None (kept by the cache).

    The kernel reads a query's new terms' ids there (the analysis looked them up already), and
    makes their Parts itself when their lists are short (see ``fresh`` in exhaustive_query).
    """
    cache: PartsCache = st.parts
    got = cache.memos
    if got is None:
        memos = [getattr(sg.seg.lexicon, "memo", None) for sg in st.segments]
        got = cache.memos = tuple(m if isinstance(m, dict) else None for m in memos)
    return got


def _views(st: Any) -> tuple[Any, ...]:
    """Return the index's segments as ``_topk.Segment`` objects (made once, kept by the cache)."""
    cache: PartsCache = st.parts
    got = cache.views
    if got is None:
        got = cache.views = tuple(
            _topk.Segment(
                sg.dli, sg.deny, sg.base, sg.seg.kernel_arrays if st.stored else None,
                sg.cap, sg.shift,
            )
            for sg in st.segments
        )  # fmt: skip
    return got


def exhaustive(
    st: Any, doclen: Any, terms: Any, k: int, allow: Any, rows: bool, count: bool = True
) -> tuple[Any, int] | None:
    """Run the exhaustive kernel over every segment: (its result, the match count), or None.

    ``count=False``: the count is not wanted (-1), and a large segment's windows may skip
    the lists that cannot lift a document into the top k (``_topk_src/winprune.c``).

    ``st`` is the index's ``topk._State`` (``doclen`` its document lengths), ``terms`` the
    (term, qtf, weighting) of the query. The result is the kernel's (docnos, scores, tfs, parts)
    bytes, or None when no term has postings. None (instead of a pair) when a weight or table
    is one the kernel cannot take (the caller ranks with numpy). A warm query reads one dict
    entry per term and segment, inside the kernel: no lexicon, no Python object per term.
    """
    if not terms:
        return None, 0
    cache: PartsCache = st.parts
    views = cache.views or _views(st)
    w0 = terms[0][2]
    # The terms' tables differ by k1* (BM25Adpt) and the segment's cap only: the first term's,
    # unless the kernel finds another k1 (then groups of them).
    tables: dict[tuple[Any, int], Any] = {}
    segs = st.segments
    last = cache.last
    if len(segs) == 1:  # (the common case: the state's table of the query's weighting, once)
        tks: tuple[Any, ...] = (st.table(w0, segs[0].cap).kernel,)
    else:
        tks = tuple([st.table(w0, sg.cap).kernel for sg in segs])
    # (_topk.Table objects compare by identity; kernel None: a table the kernel cannot take)
    if last is not None and last[0] == tks:
        maps = last[1]
    else:
        if None in tks:
            return None
        maps = tuple(((tk, cache.map_of(tk, s)),) for s, tk in enumerate(tks))
        cache.last = (tks, maps)

    def miss(missing: list[tuple[int, int]]) -> list[Any]:
        return _fill(st, doclen, terms, maps, None, missing, fresh=False)

    memos = cache.memos or _memos(st)
    added: list[Any] = []
    prune = not count
    fresh = (memos, cache.short, _ENTRY_BYTES, added)
    got = _topk.exhaustive_query(views, maps, terms, k, allow, rows, miss, None, fresh, prune)
    if added:
        cache.account(added)
    if got is NotImplemented:
        grouped = _groups(st, tables, terms)
        if grouped is None:
            return None
        groups, maps = grouped

        def miss_grouped(missing: list[tuple[int, int]]) -> list[Any]:
            return _fill(st, doclen, terms, maps, groups, missing, fresh=False)

        fresh = (memos, cache.short, _ENTRY_BYTES, added := [])  # (its own notes)
        got = _topk.exhaustive_query(
            views, maps, terms, k, allow, rows, miss_grouped, groups, fresh, prune
        )
        if added:
            cache.account(added)
    if got is None:
        return None
    return (got[0], got[1], got[2], got[3]), got[4]


def _groups(
    st: Any, tables: dict[tuple[Any, int], Any], terms: Any
) -> tuple[list[int], tuple[Any, ...]] | None:
    """Return each term's group (by k1*) and per segment the (table, map) of every group."""
    cache: PartsCache = st.parts
    k1s: dict[Any, int] = {}
    groups: list[int] = []
    firsts: list[Any] = []
    for _term, _qtf, w in terms:
        g = k1s.get(w.k1)
        if g is None:
            g = k1s[w.k1] = len(firsts)
            firsts.append(w)
        groups.append(g)
    maps = []
    for s, sg in enumerate(st.segments):
        per = []
        for w in firsts:
            tk = kernel_table(st, tables, w, sg.cap)
            if tk is None:
                return None
            per.append((tk, cache.map_of(tk, s)))
        maps.append(tuple(per))
    return groups, tuple(maps)


def kernel_table(st: Any, tables: dict[tuple[Any, int], Any], w: Any, cap: int) -> Any:
    """Return the kernel's table of weighting ``w`` for blocks of ``cap`` (None: it has none).

    ``tables`` keeps the ones a search asked for by (k1*, cap): its terms share the variant and
    statistics, so their tables differ by those alone.
    """
    table = tables.get((w.k1, cap))
    if table is None:
        table = tables[w.k1, cap] = st.table(w, cap)
    return table.kernel if table.ok else None


def _fill(
    st: Any,
    doclen: Any,
    terms: Any,
    maps: tuple[Any, ...],
    groups: list[int] | None,
    missing: list[tuple[int, int]],
    *,
    fresh: bool = True,
) -> list[Any]:
    """Return the entries of the (segment, term position) pairs the kernel did not find.

    A query's new terms, all kept at once (one lock). The common case in C (:func:`_fresh`;
    ``fresh=False``: the caller's kernel call tried it already), else inline: a stored segment,
    a short list without postings above the cap (the others: :func:`_make`).
    """
    cache: PartsCache = st.parts
    out = []
    new = []
    stored, views, segs, make = st.stored, _views(st), st.segments, _topk.parts
    short = cache.short  # admitted at once and fits the cap: no admission rule to apply
    made = _fresh(st, terms, maps, groups, missing) if stored and fresh else None
    for i, (s, col) in enumerate(missing):
        term = terms[col][0]
        tk, m = maps[s][0 if groups is None else groups[col]]
        got = _MISSING if made is None else made[i]
        if got is not NotImplemented and got is not _MISSING:
            out.append(got)
            continue
        got = m.get(term, _MISSING)  # (another thread may have made it meanwhile)
        if got is _MISSING:
            if not stored:
                got = _make(st, doclen, tk, s, term, terms[col][2])
            else:
                tid = segs[s].seg.lexicon.find(term)
                got = make(views[s], tid, tk) if tid >= 0 else None
                if got is None or got.n == 0:
                    new.append((tk, s, term, None))
                    got = None
                elif got.n < short and not got.n_overflow:
                    new.append((tk, s, term, got))
                else:
                    got = _make(st, doclen, tk, s, term, terms[col][2])
        out.append(got)
    if new:
        cache.put_many(new)
    return out


def _fresh(
    st: Any,
    terms: Any,
    maps: tuple[Any, ...],
    groups: list[int] | None,
    missing: list[tuple[int, int]],
) -> list[Any]:
    """Return the entries of ``missing`` the kernel makes and keeps itself (``_topk.fresh``).

    As ``exhaustive_query`` makes a new term's: short lists of a stored segment whose term the
    lexicon's memo holds, kept in the map and counted; NotImplemented for the others (the
    caller makes them). One call per segment and table, not several Python lines per term.
    """
    cache: PartsCache = st.parts
    memos, views = cache.memos or _memos(st), _views(st)
    out: list[Any] = [NotImplemented] * len(missing)
    by: dict[tuple[int, int], list[int]]
    if len(memos) == 1 and groups is None:  # one segment, one table: one group (the common case)
        by = {(0, 0): list(range(len(missing)))}
    else:
        by = {}
        for i, (s, col) in enumerate(missing):
            by.setdefault((s, 0 if groups is None else groups[col]), []).append(i)
    added: list[Any] = []
    for (s, g), places in by.items():
        if memos[s] is None:
            continue
        tk, m = maps[s][g]
        words = [terms[missing[i][1]][0] for i in places]
        got = _topk.fresh(views[s], memos[s], tk, m, words, cache.short, _ENTRY_BYTES, added)
        for i, entry in zip(places, got, strict=True):
            out[i] = entry
    if added:
        cache.account(added)
    return out


def _make(st: Any, doclen: Any, tk: Any, s: int, term: str, w: Any) -> Any:
    """Make, keep (unless not admitted) and return the entry of ``term`` in segment ``s``."""
    cache: PartsCache = st.parts
    sg = st.segments[s]
    if st.stored:  # over the segment's stored blocks: no PostingList object
        tid = sg.seg.lexicon.find(term)
        parts = None if tid < 0 else _topk.parts(_views(st)[s], tid, tk)
        if parts is None or parts.n == 0:
            return cache.put(tk, s, term, None)
        keep, fill = cache.admit(tk, s, term, parts.n)
        if not fill:
            parts = _topk.parts(_views(st)[s], tid, tk, fill=False)
        if parts.n_overflow:  # (as topk._Postings reads to the state: the Parts has its range)
            i, n = parts.overflow_from, parts.n_overflow
            ovf = (None, sg.seg.ovf_doc[i : i + n], sg.seg.ovf_tf[i : i + n])
            p = SimpleNamespace(pl=parts, seg=sg.seg, n_ovf=n, ovf=ovf)
            parts.set_overflow(st.overflow_values(term, s, p, w, doclen))
    else:  # lists encoded in memory: kept by the state, made once
        p = st.postings(term)[s]
        if p is None:
            return cache.put(tk, s, term, None)
        keep, fill = cache.admit(tk, s, term, p.n)
        ov = st.overflow_values(term, s, p, w, doclen) if p.n_ovf else None
        parts = cache._make(p.pl, tk, ov, fill)
    return cache.put(tk, s, term, parts) if keep else parts


def entries(st: Any, doclen: Any, terms: Any) -> list[list[Any]] | None:
    """Return per segment, per term of ``terms`` (TermSpecs), its Parts (None: absent there).

    Or None when a table is one the kernel cannot take. From the cache's maps (one look-up a
    term), the missing ones made and kept at once (the batch path: ``scoring/batch.py``).
    """
    grouped = _groups(st, {}, terms)
    if grouped is None:
        return None
    groups, maps = grouped
    one = len(maps[0]) == 1 if maps else True
    rows = []
    for s, per in enumerate(maps):
        if one:
            get = per[0][1].get
            row = [get(t, _MISSING) for t, _q, _w in terms]
        else:
            row = [per[g][1].get(t, _MISSING) for (t, _q, _w), g in zip(terms, groups, strict=True)]
        missing = [(s, j) for j, e in enumerate(row) if e is _MISSING]
        if missing:
            made = _fill(st, doclen, terms, maps, groups, missing)
            for (_s, j), e in zip(missing, made, strict=True):
                row[j] = e
        rows.append(row)
    return rows
