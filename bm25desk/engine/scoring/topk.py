"""Exact top-k retrieval: a compiled document-at-a-time kernel with dynamic pruning.

:func:`top_k` returns the same documents with bit-identical float64 scores as the dense numpy
scoring in :mod:`bm25desk.engine.scoring.search` (``scores[docnos] += (qtf · idf) · tf_part(tf,
dl)`` over the distinct query terms in query order; score descending, ties by docno ascending), for
every variant and any parameters, without visiting every posting:

- **Weight tables.** For every variant the tf part depends on (tf, L) and on the variant's
  parameters, and for BM25Adpt on the term's k1* — never on anything else. So per (variant, k1*)
  the variant's own numpy ``tf_part`` is evaluated once on a grid: ``T[j, tf]`` for
  ``tf = 1..CAP`` and every distinct document length ``dl_values[j]`` of the collection. The
  grid is evaluated exactly like the postings are in search.py (contiguous float64 arrays), so
  the entries are the very numbers the dense path computes. A posting is weighted
  ``qw · T[dl_index[d], tf]``; postings with tf > CAP (rare) take their tf part from numpy,
  per term ("overflow"). A parameter change builds a new table (``CAP × distinct lengths``
  evaluations: well under a millisecond for passages).
- **Kernel** (``_topk_src/``): per segment (the top k carried from one segment to the next), the
  list with the largest bound is scored first when it is short ("seeding": a high threshold
  early), then block-max MaxScore runs over the other lists in docno order. Postings are read as
  the segment stores them: blocks of 128 with bit-packed gaps and tfs
  (:mod:`bm25desk.engine.index.blocks`), decoded one block at a time as a cursor enters it
  (tfs only when a document is scored), every block checked as it is decoded. Each block
  carries its frontier: for each tf, the shortest document with that tf (the Pareto frontier of
  (tf, length)); with a bound table ``U ≥ T`` that is non-decreasing in tf and non-increasing
  in length (``U = T`` for every registered variant; otherwise its monotone envelope) that
  gives each block's maximum tf part exactly, for any variant and parameters, without decoding
  the block; a term's own frontier (stored for lists of several blocks) gives its bound.
  Negative term weights (the ``bim*`` teaching weights, BM25Adpt with G¹ < 0, RSJ feedback) are
  bounded by 0. Comparisons with the threshold use a rounding slack, and are settled exactly
  (query-order sums of the bounds, ties by docno) when within it. Documents are scored by
  summing in query order from 0.0, like numpy; ties keep the lower docno. Each hit comes back
  with the tf and tf part of every query term (its explanation, with no second look-up).
  Queries whose lists hold few postings (up to 4096 in all, none of them most of them: rare
  terms) skip all of that ("short path", ``_topk_src/short.c``): every block is decoded and
  checked, every document scored the same way, and the top k taken from all of them.
- **Metadata** is computed when a segment is written or merged and stored in it: nothing is
  built on the query path but the per-document length index, once per index (a few
  milliseconds per million documents; a byte per document when there are at most 256 distinct
  lengths, so that the kernel's one random read per scored document stays in cache). Segments
  of format 1 and 2 (plain int32 postings) are encoded into blocks in memory on first use of a
  term, as before.

**Exhaustive traversal** (:func:`exhaustive_top_k`, ``_topk_src/exhaustive.c``): when the postings
cover much of a small collection or k is deep, the same kernel adds every posting of each term's
stored blocks into a score array in query order (the same table look-ups, the same sums), then
takes the top k: nothing is skipped and the match count is free. Each term's decoded docnos and
tf parts are kept per weight table (:mod:`~bm25desk.engine.scoring.postings_cache`, bounded in
bytes) so that terms recurring across queries are decoded once; a query is one kernel call
(``_topk.exhaustive_query``) that reads them from the cache itself.

**One call** (:func:`ranked`): a search that needs ids and scores only, on an index of one stored
segment whose query terms share one weight table, is ranked by one compiled call
(``_topk.ranked_terms``) from the query's TermSpecs and the lexicon's memo of term ids: the
weights, their checks and the ids are read inside it, and the lists set up from the segment's
arrays (what ``stored()`` checks, without a Python object per term), then the same traversal. A
query's new term then costs no Python object on this path.

Without the compiled extension (``HAVE_KERNEL`` is False: no compiler at install time, or
``BM25DESK_NO_EXTENSIONS=1`` in the environment) the same functions run the dense numpy path, with
identical results.

Counting the matches is separate (:func:`count_matches`), as pruning never sees most of them: one
pass over the postings, or, when one term's list dominates, probes of it from the others.
"""

from __future__ import annotations

import contextlib
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from bm25desk.engine import native
from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import F64, I32, I64, IndexCorruptError
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import Segment
from bm25desk.engine.scoring import postings_cache
from bm25desk.engine.scoring.dense import dense_scores as dense_scores  # re-exported
from bm25desk.engine.scoring.dense import length_index as length_index  # re-exported
from bm25desk.engine.scoring.dense import top_k_dense as _top_k_dense
from bm25desk.engine.scoring.variant import TermWeight

_topk: Any = native.load("bm25desk.engine.scoring._topk")

HAVE_KERNEL = _topk is not None
"""Whether the compiled kernel is available (else every function runs the dense numpy path)."""

CAP = blocks.CAP
"""Largest tf weighted through the table; larger tfs are weighted per posting by numpy (a format
3 segment records the cap its blocks were written with; this one is for older segments)."""

SHIFT = blocks.SHIFT
"""Postings per block = 2**SHIFT (128), for segments of format 1 and 2 (encoded in memory)."""

TermSpec = tuple[str, int, TermWeight]
"""One distinct query term in query order: (term, qtf, its weighting)."""


class TopK(NamedTuple):
    """A ranking: the top documents and, per query term, what each of them got from it.

    ``tfs[i, t]`` and ``parts[i, t]`` are the tf and tf part of term ``t`` (the position in the
    ``terms`` given to :func:`top_k`) in document ``docnos[i]`` (0 and 0.0 when absent), so
    ``scores[i] == Σ_t (qtf_t · idf_t) · parts[i, t]`` summed in term order, bit for bit.
    """

    docnos: I64
    scores: F64
    tfs: I32
    parts: F64


_I64 = np.dtype(np.int64)  # (np.frombuffer takes a dtype by position in half the time)
_F64 = np.dtype(np.float64)
_MAX_LISTS = 4096  # posting lists kept per index (stored ones are views: a few hundred bytes)
_MAX_TABLES = 256
_MAX_OVERFLOW = 4096
_SEGMENT_OVERFLOW = 1 << 19
"""A segment of at most this many postings with tf > cap has all their tf parts computed in one
numpy call the first time a term of it needs some (4 MB at most; see _State.overflow_values)."""
_MAX_SEGMENT_OVERFLOW = 8  # such arrays kept per index (least recently used go first)


@dataclass(frozen=True, slots=True)
class _Table:
    key: Any
    T: F64  # (n lengths, CAP + 1): T[j, tf] = tf_part(tf, dl_values[j]); column 0 unused (0.0)
    U: F64  # bound table: T itself when T is monotone, else its monotone envelope
    ok: bool  # every reachable entry finite and non-negative (else: the numpy path)
    kernel: Any = None  # the kernel's checked _topk.Table of (T, U), when ok and compiled


class _Postings(NamedTuple):
    """One term's postings in one segment: the kernel's view, and where to read them in numpy.

    A tuple (made once per term and segment on the term's first use: a tuple is made faster
    than a frozen dataclass), with the number of overflow postings at hand for every search.
    """

    pl: Any  # _topk.PostingList, or None without the kernel
    seg: Segment
    tid: int
    n: int
    ovf: tuple[I32, I32, I32]  # the postings with tf > cap: positions in the list, docnos, tfs
    n_ovf: int  # how many postings have tf > cap (len(ovf[0]))

    @classmethod
    def of(cls, pl: Any, seg: Segment, tid: int, n: int, ovf: tuple[I32, I32, I32]) -> _Postings:
        """Return the postings with their overflow counted."""
        return cls(pl, seg, tid, n, ovf, int(ovf[0].size))

    def arrays(self) -> tuple[I32, I32]:
        """Return the (local docnos, tfs), decoded."""
        return self.seg.postings(self.tid)


class _State:
    """Per-index data for the kernel: length index, posting lists, weight tables (thread-safe)."""

    def __init__(self, index: Index) -> None:
        doclen = np.asarray(index.doclen)
        self.dl_values, self.dl_index = length_index(doclen)
        self.segments: list[_Seg] = []
        for seg, base, dele in zip(index.segments, index.bases, index.deleted, strict=False):
            b = int(base)
            deny = None if dele is None else np.ascontiguousarray(dele, dtype=np.bool_)
            dli = self.dl_index[b : b + seg.n_docs]
            cap, shift = (seg.cap, seg.shift) if seg.format >= 3 else (CAP, SHIFT)
            self.segments.append(_Seg(seg, b, seg.n_docs, dli, deny, cap, shift))
        self.lock = threading.Lock()
        # Every segment hands the kernel its stored blocks: a list costs nothing to make again.
        self.stored = all(sg.seg.format >= 3 for sg in self.segments)
        self.lists: OrderedDict[str, tuple[_Postings | None, ...]] = OrderedDict()
        self.tables: OrderedDict[Any, _Table] = OrderedDict()
        self.last_table: _LastTable | None = None  # the table asked for last, by identity
        self.overflow: OrderedDict[Any, F64] = OrderedDict()
        self.segment_overflow: OrderedDict[Any, F64] = OrderedDict()
        # The exhaustive path's decoded tf parts (released with this state, i.e. the index).
        nnz = sum(int(sg.seg.nnz) for sg in self.segments)
        self.parts = (
            postings_cache.PartsCache(_topk.Parts, postings_cache.budget(nnz))
            if HAVE_KERNEL
            else None
        )

    # -- posting lists ---------------------------------------------------------------------------

    def postings(self, term: str) -> tuple[_Postings | None, ...]:
        """Return the term's postings per segment (None where absent).

        Format 3 segments hand the kernel their stored blocks (nothing is read or built here);
        older segments' lists are encoded in memory on first use and kept (LRU).
        """
        got = self.lists.get(term)  # a plain read (atomic): the hot path takes no lock
        if got is not None:
            if not self.stored:  # lists encoded in memory are worth keeping: least recent first
                with self.lock:
                    if term in self.lists:
                        self.lists.move_to_end(term)
            return got
        segs, one = self.segments, self._segment_postings
        out = (one(term, segs[0]),) if len(segs) == 1 else tuple([one(term, sg) for sg in segs])
        with self.lock:
            self.lists[term] = out
            while len(self.lists) > _MAX_LISTS:
                self.lists.popitem(last=False)
        return out

    @staticmethod
    def _segment_postings(term: str, sg: _Seg) -> _Postings | None:
        seg = sg.seg
        tid = seg.lexicon.find(term)
        if tid < 0:
            return None
        if seg.format >= 3 and HAVE_KERNEL:  # the common path: the list knows its sizes
            pl = _topk.stored(seg.kernel_arrays, tid, sg.dli, sg.cap, sg.shift)
            n, n_ovf = pl.n, pl.n_overflow
            if n == 0:
                return None
            if not n_ovf:
                return _Postings(pl, seg, tid, n, _NO_OVERFLOW, 0)
            i, j = pl.overflow_from, pl.overflow_from + n_ovf
            pos = np.frombuffer(pl.overflow_positions(), dtype=np.int32)
            ovf = (pos, np.asarray(seg.ovf_doc[i:j]), np.asarray(seg.ovf_tf[i:j]))
            return _Postings(pl, seg, tid, n, ovf, n_ovf)
        n = int(seg.ptr[tid + 1] - seg.ptr[tid])
        if n == 0:
            return None
        if seg.format >= 3:  # without the kernel
            return _Postings.of(None, seg, tid, n, seg.overflow(tid))
        docs, tfs = seg.postings(tid)
        if not HAVE_KERNEL:
            return _Postings.of(None, seg, tid, n, _overflow_of(docs, tfs, sg.cap))
        pl = _topk.PostingList(docs, tfs, sg.dli, sg.cap, sg.shift)
        pos = np.frombuffer(pl.overflow_positions(), dtype=np.int32)
        return _Postings.of(pl, seg, tid, n, (pos, np.asarray(docs[pos]), np.asarray(tfs[pos])))

    # -- weight tables ---------------------------------------------------------------------------

    def table(self, w: TermWeight, cap: int = 0) -> _Table:
        """Return the tf-part table of ``w``'s variant (and per-term k1, for BM25Adpt).

        Keyed by the average length too: a shard searched with the whole collection's statistics
        and on its own shares this state but not its tf parts.
        """
        cap = cap or CAP
        last = self.last_table  # a run of queries under one variant: no hash of it per query
        if (
            last is not None
            and last.variant is w.variant
            and last.k1 == w.k1
            and last.avgdl == w.stats.avgdl
            and last.cap == cap
        ):
            return last.table
        got = self._table(w, cap)
        self.last_table = _LastTable(w.variant, w.k1, w.stats.avgdl, cap, got)
        return got

    def _table(self, w: TermWeight, cap: int) -> _Table:
        key = (w.variant, w.k1, w.stats.avgdl, cap)
        with self.lock:
            got = self.tables.get(key)
            if got is not None:
                self.tables.move_to_end(key)
                return got
        table = build_table(w, self.dl_values, cap)
        with self.lock:
            self.tables[key] = table
            while len(self.tables) > _MAX_TABLES:
                self.tables.popitem(last=False)
        return table

    def overflow_values(self, term: str, s: int, p: _Postings, w: TermWeight, doclen: Any) -> F64:
        """Return numpy's tf parts of the postings with tf > cap (cached per term and table).

        In a stored segment a term's overflow postings are a range of the segment's (from
        ``overflow_from``): unless its variant fits k1 per term, that range of the segment's
        own tf parts (:meth:`_segment_overflow`), when it has them. A term's first search cost
        a numpy call of its own (~8 µs, whatever the length: 24 µs a query on 100 k long
        documents, a fifth of a first pass beyond the warm one); the segment's are one call.
        """
        if w.k1 is None and p.pl is not None and p.seg.format >= 3:
            whole = self._segment_overflow(s, w, doclen)
            if whole is not None:
                i = p.pl.overflow_from
                return whole[i : i + p.n_ovf]
        key = (term, s, w.variant, w.k1, w.stats.avgdl)
        with self.lock:
            got = self.overflow.get(key)
            if got is not None:
                return got
        base = self.segments[s].base
        _pos, docs, tfs = p.ovf
        values = _tf_parts_of(w, tfs, docs, base, doclen)
        with self.lock:
            self.overflow[key] = values
            while len(self.overflow) > _MAX_OVERFLOW:
                self.overflow.popitem(last=False)
        return values

    def _segment_overflow(self, s: int, w: TermWeight, doclen: Any) -> F64 | None:
        """Return the tf parts of segment ``s``'s postings with tf > cap, in its order, or None.

        Under ``w``'s variant and statistics; None when the segment has more than
        :data:`_SEGMENT_OVERFLOW` of them. Elementwise float64 numpy on the same (tf, length)
        numbers as a term's own call, so each value is the same bit for bit.
        """
        key = (s, w.variant, w.stats.avgdl)
        with self.lock:
            got = self.segment_overflow.get(key)
            if got is not None:
                self.segment_overflow.move_to_end(key)
                return got
        sg = self.segments[s]
        seg = sg.seg
        if len(seg.ovf_tf) > _SEGMENT_OVERFLOW:
            return None
        values = _tf_parts_of(w, seg.ovf_tf, seg.ovf_doc, sg.base, doclen)
        values.flags.writeable = False
        with self.lock:
            self.segment_overflow[key] = values
            while len(self.segment_overflow) > _MAX_SEGMENT_OVERFLOW:
                self.segment_overflow.popitem(last=False)
        return values


def _tf_parts_of(w: TermWeight, tfs: Any, docs: Any, base: int, doclen: Any) -> F64:
    """Return ``w``'s tf parts of postings (tfs, local docnos) of a segment starting at ``base``."""
    tf = np.asarray(tfs).astype(np.float64)
    dl = np.asarray(doclen[np.asarray(docs).astype(np.int64) + base]).astype(np.float64)
    return np.ascontiguousarray(w.tf_part(tf, dl), dtype=np.float64)


class _LastTable(NamedTuple):
    """The table a search asked for last, with what it was asked for (one attribute: atomic)."""

    variant: Any
    k1: float | None
    avgdl: float
    cap: int
    table: _Table


class _Seg(NamedTuple):
    """One segment as the kernel sees it."""

    seg: Segment
    base: int  # its first docno
    n: int  # its documents
    dli: Any  # their length index (uint8, uint16 or int32)
    deny: Any  # its deletion mask, or None
    cap: int  # its block layout
    shift: int


_NO_OVERFLOW = (np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32))


def _overflow_of(docs: I32, tfs: I32, cap: int) -> tuple[I32, I32, I32]:
    """Return the (positions, docnos, tfs) of the postings with tf > cap."""
    pos = np.flatnonzero(np.asarray(tfs) > cap).astype(np.int32)
    return pos, np.asarray(docs[pos]), np.asarray(tfs[pos])


def build_table(w: TermWeight, dl_values: F64, cap: int = 0) -> _Table:
    """Evaluate ``w.tf_part`` on the (tf, length) grid, as search.py evaluates postings.

    The grid is flattened into contiguous float64 arrays and passed in one call, exactly like
    ``w.tf_part(tfs.astype(float64), doclen[docnos].astype(float64))``, so each entry is the
    number the dense path computes for the same (tf, L).
    """
    cap = cap or CAP
    width = cap + 1
    n = dl_values.size
    tf = np.tile(np.arange(width, dtype=np.float64), n)
    tf[::width] = 1.0  # column 0 is never used; evaluate tf = 1 there (no 0/0 warnings)
    dl = np.repeat(np.asarray(dl_values, dtype=np.float64), width)
    with np.errstate(all="ignore"):
        flat = np.asarray(w.tf_part(tf, dl), dtype=np.float64)
    T = np.ascontiguousarray(flat.reshape(n, width))
    T[:, 0] = 0.0
    # Rows of length 0 are unreachable (an empty document has no postings): not checked, and
    # zeroed, so that the kernel's check of the whole table holds.
    reach = dl_values > 0
    body = T[reach, 1:]
    ok = bool(np.isfinite(body).all() and (body >= 0.0).all())
    U = T
    if ok:
        T[~reach] = 0.0
        mono = bool((np.diff(body, axis=1) >= 0).all() and (np.diff(body, axis=0) <= 0).all())
        if not mono or not reach.all():
            # Monotone envelope: U[j, tf] = max T[j', tf'] over tf' ≤ tf, j' ≥ j.
            env = np.where(reach[:, None], T, 0.0)
            env = np.maximum.accumulate(env, axis=1)
            env = np.maximum.accumulate(env[::-1], axis=0)[::-1]
            U = np.ascontiguousarray(env)
    kernel = None
    if ok and HAVE_KERNEL:
        for a in (T, U):
            a.flags.writeable = False  # the kernel checks the tables once: they must not change
        kernel = _topk.Table(T, None if U is T else U, cap)
    return _Table((w.variant, w.k1, cap), T, U, ok, kernel)


_states: weakref.WeakKeyDictionary[Index, _State] = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


_last_state: tuple[weakref.ref[Index], weakref.ref[_State]] | None = None
"""The index searched last and its state, weakly (one attribute: read and replaced atomically;
the state lives while its index does, and goes with it)."""


def _state(index: Index) -> _State:
    global _last_state
    last = _last_state  # a run of queries on one index: no lock, no weak-dictionary look-up
    if last is not None and last[0]() is index:
        got = last[1]()
        if got is not None:
            return got
    with _states_lock:
        st = _states.get(index)
    if st is None:
        st = _State(index)
        with _states_lock:
            st = _states.setdefault(index, st)
    _last_state = (weakref.ref(index), weakref.ref(st))
    return st


def prepare(index: Index) -> None:
    """Build the per-index data now (the length index) instead of on the first query."""
    _state(index)


def _as_mask(allowed: Any, n: int) -> Any:
    """Return ``allowed`` as a contiguous boolean mask of ``n`` documents (or None)."""
    if allowed is None:
        return None
    mask = np.asarray(allowed)
    if mask.shape != (n,) or mask.dtype != np.bool_:
        raise ValueError(f"allowed must be a boolean mask of {n} documents")
    return np.ascontiguousarray(mask)


def _check_k(k: Any) -> int:
    """Return ``k`` if it is a whole number of at least 1 (the kernel and numpy paths alike)."""
    if type(k) is int and k >= 1:  # the common case, without isinstance checks
        return k
    if type(k) is not int and (isinstance(k, bool) or not isinstance(k, int | np.integer)):
        raise TypeError(f"k must be an integer, not {type(k).__name__}")
    if k < 1:
        raise ValueError("k must be at least 1")
    return int(k)


# -- top k ----------------------------------------------------------------------------------------


def top_k(
    index: Index,
    terms: Sequence[TermSpec],
    k: int,
    allowed: Any = None,
    *,
    kernel: bool | None = None,
    rows: bool = True,
) -> TopK:
    """Return the top ``k`` matching documents with their scores and per-term parts.

    ``terms`` are the distinct scored query terms in query order with their qtf and weighting
    (terms without a weighting are left out by the caller). ``allowed`` is an optional boolean
    mask by docno (query constraints); deleted documents are never returned. Order: score
    descending, docno ascending. Scores are bit-identical to the dense numpy scoring.
    ``kernel=False`` forces the numpy path (tests, benchmarks). ``rows=False`` may leave the
    kernel's ``tfs`` and ``parts`` zero (a caller that reads ids and scores only).
    """
    k = _check_k(k)
    allow = _as_mask(allowed, index.n_slots)
    use = HAVE_KERNEL if kernel is None else (kernel and HAVE_KERNEL)
    if use:
        got = _top_k_kernel(index, terms, k, allow, rows)
        if got is not None:
            return got[0]
    docnos, scores = _top_k_dense(index, terms, k, allow)
    parts = tf_parts(index, terms, docnos)
    n = len(terms)
    tfs = np.zeros((docnos.size, n), dtype=np.int32)
    vals = np.zeros((docnos.size, n), dtype=np.float64)
    for t, (tf, part) in enumerate(parts):
        tfs[:, t] = tf
        vals[:, t] = part
    return TopK(docnos, scores, tfs, vals)


def _top_k_kernel(
    index: Index,
    terms: Sequence[TermSpec],
    k: int,
    allow: Any,
    rows: bool = True,
) -> tuple[TopK, int] | None:
    """Return the pruning kernel's top ``k`` and -1 (it does not count the matches), or None.

    None: a weight or a table the kernel cannot take (the caller runs numpy instead). This is
    the per-query path: plain dict reads, one table look-up per (k1*, cap), no lock when warm.
    """
    st = _state(index)
    lists_of = st.lists.get
    per_term = []
    for col, (term, qtf, w) in enumerate(terms):
        qw = qtf * w.idf
        if not math.isfinite(qw):
            return None
        per_term.append((col, term, qw, w, lists_of(term) or st.postings(term)))
    ncols = len(terms)
    prev: Any = None
    search = _topk.search
    # A query's terms share the variant and statistics: their tables differ by k1* and cap only.
    tables: dict[tuple[Any, int], _Table] = {}
    try:
        for s, sg in enumerate(st.segments):
            args = []
            for col, term, qw, w, lists in per_term:
                p = lists[s]
                if p is None:
                    continue
                table = tables.get((w.k1, sg.cap))
                if table is None:
                    table = tables[w.k1, sg.cap] = st.table(w, sg.cap)
                    if not table.ok:
                        return None
                ov = st.overflow_values(term, s, p, w, index.doclen) if p.n_ovf else None
                args.append((p.pl, qw, table.kernel, None, ov, col))
            if not args:
                continue
            seg_allow = None if allow is None else allow[sg.base : sg.base + sg.n]
            prev = search(args, sg.dli, k, ncols, seg_allow, sg.deny, sg.base, prev)
    except ValueError as exc:
        _raise_if_damaged(index, exc)
        raise
    return _result(prev, ncols, rows), -1


def ranked(
    index: Index, terms: Sequence[TermSpec], k: int, allowed: Any = None
) -> tuple[I64, F64] | None:
    """Return the pruning kernel's top ``k`` (docnos, scores) in one compiled call, or None.

    :func:`top_k`'s documents and scores bit for bit, without per-term Python objects: the
    terms' lists are set up from the segment's stored arrays inside the call. For the common
    case only: one stored segment, one weight table for every term (not BM25Adpt's per-term
    k1*), no postings with tf > cap; None otherwise (the caller runs :func:`top_k`).

    The call reads the terms themselves (each weight ``qtf * idf`` as Python computes it, each
    id from the lexicon's memo: the analysis looked the terms up already); a term the memo
    lacks, or a per-term k1, is left to the loop here, which declines or looks terms up as the
    call would.
    """
    st = _state(index)
    if not HAVE_KERNEL or not st.stored or len(st.segments) != 1:
        return None
    k = _check_k(k)
    if not terms:
        return None
    sg = st.segments[0]
    first = terms[0][2]
    got: Any = NotImplemented
    if first.k1 is None:  # (else BM25Adpt: the loop compares the terms' k1)
        memo = sg.seg.lexicon.memo  # term -> id, or -1: remembered by find()
        got = _ranked_call(index, st, sg, first, _topk.ranked_terms, terms, memo, k, allowed)
    if got is NotImplemented:
        find = sg.seg.lexicon.find
        tids: list[int] = []
        qws: list[float] = []
        for _term, qtf, w in terms:
            if w.k1 != first.k1:  # per-term tables (BM25Adpt)
                return None
            qw = qtf * w.idf
            if not math.isfinite(qw):
                return None
            tid = find(_term)
            if tid >= 0:
                tids.append(tid)
                qws.append(qw)
        if not tids:
            return None
        got = _ranked_call(index, st, sg, first, _topk.ranked, tids, qws, k, allowed)
    if got is None:
        return None
    return np.frombuffer(got[0], _I64), np.frombuffer(got[1], _F64)  # (dtype by position: faster)


def _ranked_call(
    index: Index,
    st: _State,
    sg: Any,
    w: TermWeight,
    call: Any,
    terms: Any,
    ids: Any,
    k: int,
    allowed: Any,
) -> Any:
    """Return ``call``'s result (``_topk.ranked`` or ``ranked_terms``) under ``w``'s table.

    None when the table is not one the kernel can take.
    """
    table = st.table(w, sg.cap)
    if not table.ok:
        return None
    allow = None if allowed is None else _as_mask(allowed, index.n_slots)
    try:
        return call(
            sg.seg.kernel_arrays, sg.dli, terms, ids, table.kernel, k, allow, sg.deny, sg.cap,
            sg.shift,
        )  # fmt: skip
    except ValueError as exc:
        _raise_if_damaged(index, exc)
        raise


def _result(prev: Any, ncols: int, rows: bool) -> TopK:
    """Return the kernel's last (docnos, scores, tfs, parts) bytes as a TopK (None: nothing)."""
    if prev is None:
        return TopK(
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.float64),
            np.zeros((0, ncols), dtype=np.int32),
            np.zeros((0, ncols), dtype=np.float64),
        )
    d, sc, tf, part = prev
    docnos = np.frombuffer(d, dtype=np.int64)
    if not rows:  # the kernel kept no rows: zeros of the shape a caller may still look at
        tfs, parts = _zeros(docnos.size, ncols)
        return TopK(docnos, np.frombuffer(sc, dtype=np.float64), tfs, parts)
    return TopK(
        docnos,
        np.frombuffer(sc, dtype=np.float64),
        np.frombuffer(tf, dtype=np.int32).reshape(-1, ncols),
        np.frombuffer(part, dtype=np.float64).reshape(-1, ncols),
    )


_ZEROS: dict[tuple[int, int], tuple[I32, F64]] = {}
"""Read-only zero (tfs, parts) by shape, shared by the rankings that keep no rows."""

ZEROS_BYTES = 4 << 20
"""The most bytes :data:`_ZEROS` keeps (12 a cell: k = 10 and 20 terms take 2.6 KB a shape)."""

_zeros_kept = 0  # the bytes of _ZEROS (a race may count a shape twice: the bound only tightens)


def _zeros(n: int, ncols: int) -> tuple[I32, F64]:
    """Return read-only zero tfs and parts of ``n`` × ``ncols`` (made once a shape: ~2 µs)."""
    global _zeros_kept
    got = _ZEROS.get((n, ncols))
    if got is None:
        tfs, parts = np.zeros((n, ncols), np.int32), np.zeros((n, ncols))
        tfs.flags.writeable = parts.flags.writeable = False
        got = (tfs, parts)
        size = tfs.nbytes + parts.nbytes
        if _zeros_kept + size <= ZEROS_BYTES:  # (past it, a new shape is made each time)
            _zeros_kept += size
            _ZEROS[n, ncols] = got
    return got


def exhaustive_top_k(
    index: Index,
    terms: Sequence[TermSpec],
    k: int,
    allowed: Any = None,
    *,
    rows: bool = True,
    count: bool = True,
) -> tuple[TopK, int] | None:
    """Return the top ``k`` by adding every posting in C, and the number of matching documents.

    The same documents and bit-identical scores as :func:`top_k` (and the dense float64 path),
    without pruning: each term's stored blocks are decoded and weighted through the variant's
    tf-part table in one pass, and the decoded tf parts kept for the next query that has the
    term (:mod:`~bm25desk.engine.scoring.postings_cache`). For queries whose postings cover
    much of a small collection, and for deep k. ``rows=False`` leaves the per-term ``tfs`` and
    ``parts`` zero (a run needs ids and scores only). None without the compiled kernel, or when
    a weight or table is one the kernel cannot take (the caller then uses numpy).
    ``count=False``: the number of matching documents is not wanted (-1), and the windows of a
    large collection may skip the lists that cannot lift a document into the top k (the same
    top k, bit for bit: ``_topk_src/winprune.c``).
    """
    k = _check_k(k)
    if not HAVE_KERNEL:
        return None
    allow = _as_mask(allowed, index.n_slots)
    st = _state(index)
    try:  # (not _damage_is_corruption: a generator's context costs ~2 µs a query)
        got = postings_cache.exhaustive(st, index.doclen, terms, k, allow, rows, count)
    except ValueError as exc:
        _raise_if_damaged(index, exc)
        raise
    if got is None:
        return None
    prev, matches = got
    return _result(prev, len(terms), rows), matches


# -- matches and explanations ---------------------------------------------------------------


def count_matches(
    index: Index,
    terms: Sequence[TermSpec | str],
    allowed: Any = None,
    *,
    kernel: bool | None = None,
) -> int:
    """Return how many live, allowed documents contain at least one of the terms.

    Costs one pass over the terms' postings (a bitmap union in C): comparable to exhaustive
    scoring, so call it only when the number is shown. ``kernel=False`` forces the numpy path.
    """
    names = [t if isinstance(t, str) else t[0] for t in terms]
    allow = _as_mask(allowed, index.n_slots)
    if not (HAVE_KERNEL if kernel is None else (kernel and HAVE_KERNEL)):
        m = np.zeros(index.n_slots, dtype=bool)
        for term in names:
            m[index.postings(term)[0]] = True
        if allow is not None:
            m &= allow
        return int(m.sum())
    st = _state(index)
    lists = [st.postings(t) for t in names]
    total = 0
    for s, sg in enumerate(st.segments):
        pls = [p.pl for p in (ls[s] for ls in lists) if p is not None]
        if pls:
            seg_allow = None if allow is None else allow[sg.base : sg.base + sg.n]
            with _damage_is_corruption(index):
                total += _topk.count(pls, sg.n, seg_allow, sg.deny)
    return total


@contextlib.contextmanager
def _damage_is_corruption(index: Index) -> Iterator[None]:
    """Report blocks the kernel found damaged as a damaged index (exit 3, "rebuild it")."""
    try:
        yield
    except ValueError as exc:
        _raise_if_damaged(index, exc)
        raise


def _raise_if_damaged(index: Index, exc: ValueError) -> None:
    """Raise :class:`IndexCorruptError` if ``exc`` is the kernel finding damaged blocks."""
    if "postings changed" in str(exc):
        raise IndexCorruptError(
            f"index {index.name!r} is damaged (a block of postings does not decode); rebuild it "
            "with 'bm25desk index' or delete it"
        ) from None


def _tfs_of(index: Index, p: _Postings, local: I32) -> I32:
    """Return the tf of each local docno in the list (0 where absent)."""
    order = np.argsort(local, kind="stable")
    if p.pl is not None:
        with _damage_is_corruption(index):
            got = np.frombuffer(p.pl.tfs_of(np.ascontiguousarray(local[order])), dtype=np.int32)
    else:
        docs, tfs = p.arrays()
        i = np.minimum(np.searchsorted(docs, local[order]), docs.size - 1)
        got = np.where(docs[i] == local[order], tfs[i], 0).astype(np.int32)
    out = np.empty(local.size, dtype=np.int32)
    out[order] = got
    return out


def tf_parts(index: Index, terms: Sequence[TermSpec], docnos: Any) -> list[tuple[I32, F64]]:
    """Return, per term, (tf, tf part) of each of ``docnos`` (0 and 0.0 where absent).

    The tf parts are the numbers the ranking used, so ``Σ (qtf · idf) · tf_part`` in query order
    reproduces each score bit for bit (for the score ledger of a hit). Deleted documents read as
    absent.
    """
    docnos = np.asarray(docnos, dtype=np.int64)
    st = _state(index)
    out: list[tuple[I32, F64]] = []
    for term, _qtf, w in terms:
        tf = np.zeros(docnos.size, dtype=np.int32)
        for s, p in enumerate(st.postings(term)):
            if p is None:
                continue
            sg = st.segments[s]
            sel = np.flatnonzero((docnos >= sg.base) & (docnos < sg.base + sg.n))
            if sel.size == 0:
                continue
            local = (docnos[sel] - sg.base).astype(np.int32)
            got = _tfs_of(index, p, local)
            if sg.deny is not None:
                got[sg.deny[local]] = 0
            tf[sel] = got
        part = np.zeros(docnos.size, dtype=np.float64)
        present = tf > 0
        if present.any():
            t = tf[present]
            dl = index.doclen[docnos[present]]
            table = st.table(w) if HAVE_KERNEL else None
            if table is not None and table.ok:
                vals = np.empty(t.size, dtype=np.float64)
                small = t <= CAP
                vals[small] = table.T[st.dl_index[docnos[present][small]], t[small]]
                if not small.all():
                    vals[~small] = w.tf_part(
                        t[~small].astype(np.float64), dl[~small].astype(np.float64)
                    )
                part[present] = vals
            else:
                part[present] = w.tf_part(t.astype(np.float64), dl.astype(np.float64))
        out.append((tf, part))
    return out
