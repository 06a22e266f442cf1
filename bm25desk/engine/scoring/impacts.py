"""Exhaustive scoring over per-term impacts cached per (variant, parameters, term) — without C.

With the compiled kernel, exhaustive scoring runs in C from the stored blocks with no per-term
state (:func:`~bm25desk.engine.scoring.topk.exhaustive_top_k`); this module is the numpy path
behind it (no compiler, ``BM25DESK_NO_EXTENSIONS=1``, or weights the kernel cannot take), the
dense view of :meth:`~bm25desk.engine.scoring.search.Searcher.scores`, and :func:`prefer`.

The pruning kernel (:mod:`~bm25desk.engine.scoring.topk`) wins when it can skip most postings:
large collections, short queries, a shallow top k. When the query's postings cover much of a
small collection — SciFact-sized collections, long (argument-like) queries, evaluation runs at
k = 1000 — there is little to skip, and adding every posting is cheaper than deciding what to
skip. This module does that, bit for bit like the dense float64 scoring of
:func:`~bm25desk.engine.scoring.topk.dense_scores`:

- A term's **tf parts** ``w.tf_part(tf, L)`` over its live postings are computed once per
  (variant, parameters, per-term k1, term) with the variant's own numpy code on the same float64
  arrays as the dense path, and cached (bounded by bytes).
- A query's score array is one :func:`numpy.bincount` over the concatenated postings of its
  terms in query order, weighted ``(qtf · idf) · tf_part``: bincount adds each weight to its
  document in input order starting from 0.0, exactly the dense path's
  ``scores[docnos] += (qtf · idf) · tf_part`` term after term.
- The top k: score descending, docno ascending (:data:`~bm25desk.engine.scoring.results.TIE_RULE`),
  matching documents only; the match count comes free.

:func:`prefer` is the rule the searcher uses to pick this path or the kernel.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.engine.index.arrays import F64, I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.variant import TermWeight

TermSpec = tuple[str, int, TermWeight]
"""One distinct query term in query order: (term, qtf, its weighting), as for ``topk.top_k``."""

MAX_CACHE_BYTES = 256 << 20
"""Bytes of cached postings and tf parts kept per index (least recently used go first)."""

DENSE_MAX_DOCS = 1 << 21
"""Above this many document slots the score array of every query costs too much: never dense."""


@dataclass(frozen=True, slots=True)
class TermImpacts:
    """One term's live postings (global docnos ascending) and what each adds to a score.

    ``weights[i] = (qtf · idf) · tf_part(tf_i, L_i)`` under one weighting and one qtf;
    ``positive`` says every weight is > 0.
    """

    docnos: I64
    weights: F64
    positive: bool

    @property
    def nbytes(self) -> int:
        """Return the memory the arrays hold."""
        return int(self.docnos.nbytes + self.weights.nbytes)


class _Cache:
    """Per-index cache of :class:`TermImpacts` (thread-safe; computing twice is harmless)."""

    def __init__(self, index: Index) -> None:
        # A weak reference: this cache is the value of a WeakKeyDictionary keyed by the index,
        # and a strong one would keep every index ever searched open (its files and maps).
        self._index = weakref.ref(index)
        self.lock = threading.Lock()
        # variant -> (term, per-term k1, avgdl, qtf · idf) -> impacts; one LRU order over all
        self.tables: dict[Any, dict[tuple[Any, ...], TermImpacts]] = {}
        self.items: OrderedDict[tuple[Any, ...], TermImpacts] = OrderedDict()
        self.nbytes = 0
        self.doclen = np.asarray(index.doclen)

    def table(self, variant: Any) -> dict[tuple[Any, ...], TermImpacts]:
        """Return the impacts cached under ``variant`` (one hash of the variant per query)."""
        got = self.tables.get(variant)
        if got is None:
            with self.lock:
                got = self.tables.setdefault(variant, {})
        return got

    def get(
        self, table: dict[tuple[Any, ...], TermImpacts], term: str, qtf: int, w: TermWeight
    ) -> TermImpacts:
        """Return ``term``'s impacts with ``qtf`` under ``w`` (``table``: its variant's)."""
        qw = qtf * w.idf
        key = (term, w.k1, w.stats.avgdl, qw)  # avgdl: a shard may be searched on its own too
        got = table.get(key)  # a plain read: dict reads are atomic
        if got is not None:
            return got
        index = self._index()
        assert index is not None  # the caller holds it
        docnos, tfs = index.postings(term)
        docnos = np.ascontiguousarray(docnos, dtype=np.int64)
        # The dense path's own arrays and calls: the same float64 numbers, element for element.
        tf, dl = np.asarray(tfs).astype(np.float64), self.doclen[docnos].astype(np.float64)
        weights = np.ascontiguousarray(qw * w.tf_part(tf, dl), dtype=np.float64)
        got = TermImpacts(docnos, weights, bool(weights.size == 0 or weights.min() > 0.0))
        with self.lock:
            if key not in table:
                table[key] = got
                self.items[(w.variant, *key)] = got
                self.nbytes += got.nbytes
                while self.nbytes > MAX_CACHE_BYTES and len(self.items) > 1:
                    (variant, *old_key), old = self.items.popitem(last=False)
                    self.tables[variant].pop(tuple(old_key), None)
                    self.nbytes -= old.nbytes
        return got


_caches: weakref.WeakKeyDictionary[Index, _Cache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache(index: Index) -> _Cache:
    got = _caches.get(index)
    if got is None:
        with _caches_lock:
            got = _caches.get(index)
            if got is None:
                got = _caches[index] = _Cache(index)
    return got


def impacts(index: Index, term: str, qtf: int, w: TermWeight) -> TermImpacts:
    """Return ``term``'s live postings and weights with ``qtf`` under ``w`` (cached per index)."""
    cache = _cache(index)
    return cache.get(cache.table(w.variant), term, qtf, w)


SMALL_DOCS = 1 << 15
"""Up to this many document slots the compiled exhaustive traversal is always preferred.

Re-measured after its decoded-postings cache (h17, SciFact, 5,183 documents, k = 10, warm, each
query timed both ways): exhaustive was faster in every bucket of postings / documents, from 0.03
(55 vs 56 µs) to above 4 (160 vs 300 µs)."""

DENSE_RATIO_K = 20
"""Compiled, above SMALL_DOCS: exhaustive when postings · k ≥ DENSE_RATIO_K · documents.

Measured on 100 k passages (four query mixes, each query timed both ways, warm): at k = 10 the
pruning kernel won up to 2 postings a document (0.5-1: 246 vs 400 µs; 1-2: 409 vs 568 µs) and
exhaustive from there on (2-4: 1.2 vs 7.2 ms; long queries: 2.8 vs 39 ms); at k = 1000
exhaustive won from 0.01-0.03 postings a document (178 vs 291 µs; 1-2: 1.4 vs 3.3 ms). The
product puts the switch at 2 for k = 10 and 0.02 for k = 1000."""


FEW_TERMS = 8
"""Compiled, shallow k: a query of fewer terms takes exhaustive scoring only from twice the
postings (:data:`DENSE_RATIO_K`), i.e. 4 a document at k = 10.

Re-measured after the kernel's lazy overflow maxima and column-major tables (h27, k = 10, each
query timed both ways, warm / first use): queries of 3-5 terms with 1-2 postings a document ran
0.65 vs 1.56 ms (100 k long documents), 1.05 vs 1.79 (100 k passages, frequent mix), 0.78 vs
1.56 (mixed) in the kernel vs exhaustively, and with 2-4 about even warm (1.07 vs 1.01, 1.15 vs
1.28) but 1.0-1.3 vs 3.6-3.8 ms at first use, where exhaustive fills a Parts for every long list.
Queries of 50-200 terms at 2-4 postings a document still ran 9.9 vs 2.3 ms in the kernel: the
kernel's work per candidate grows with the terms, exhaustive's does not."""

SHALLOW_K = 16
"""Up to this k (the default 10, plus one to see a tie) the FEW_TERMS rule applies (measured)."""


def prefer(index: Index, postings: int, k: int, compiled: bool = False, n_terms: int = 0) -> bool:
    """Return whether exhaustive scoring is expected to beat the pruning kernel.

    ``postings`` is the query's total document frequency, ``n_terms`` its number of distinct
    scored terms (0: unknown, taken as many). Exhaustive costs about one add per posting plus a
    pass over the collection's score array; the kernel pays several times more per posting it
    reads but may skip most of them, which it cannot when the postings cover a good part of the
    collection or when k is deep. The thresholds were measured on SciFact-sized and 100 k / 1
    M-passage collections and 100 k long documents (``docs/benchmarks/README.md``). With
    ``compiled`` (the exhaustive traversal in C,
    :func:`~bm25desk.engine.scoring.topk.exhaustive_top_k`), small collections always take it:
    on 5 k documents it beat the pruning kernel on short queries of rare terms too (its score
    array is at most 256 KB, cheap to clear); on larger ones it takes over when
    ``postings · k ≥ DENSE_RATIO_K · n`` (see there), twice that for a query of few terms at a
    shallow k (:data:`FEW_TERMS`).
    """
    n = index.n_slots
    if n > DENSE_MAX_DOCS or postings == 0:
        return False
    if compiled:
        ratio = DENSE_RATIO_K
        if 0 < n_terms < FEW_TERMS and k <= SHALLOW_K:
            ratio *= 2
        return n <= SMALL_DOCS or postings * k >= ratio * n or k * 16 >= n
    return postings * 4 >= n or k * 16 >= n


def scores(index: Index, terms: Sequence[TermSpec]) -> tuple[F64, Any]:
    """Return (score by docno, match mask by docno, or None when every weight is positive).

    With every weight positive a document matches exactly when its score is > 0 (a sum of
    positive numbers never rounds to 0), and no mask is made.
    """
    cache = _cache(index)
    n = index.n_slots
    docs: list[I64] = []
    weights: list[F64] = []
    positive = True
    table = cache.table(terms[0][2].variant) if terms else {}
    for term, qtf, w in terms:
        imp = cache.get(table, term, qtf, w)
        if imp.docnos.size:
            positive = positive and imp.positive
            docs.append(imp.docnos)
            weights.append(imp.weights)
    if not docs:
        return np.zeros(n, dtype=np.float64), None
    d = docs[0] if len(docs) == 1 else np.concatenate(docs)
    wt = weights[0] if len(weights) == 1 else np.concatenate(weights)
    # bincount adds weight i to out[d[i]] for i in order, from 0.0: query order, like numpy's
    # ``scores[docnos] += w`` term after term.
    out: F64 = np.bincount(d, weights=wt, minlength=n).astype(np.float64, copy=False)
    if positive:
        return out, None
    matched = np.zeros(n, dtype=bool)
    matched[d] = True
    return out, matched


def dense(index: Index, terms: Sequence[TermSpec]) -> tuple[F64, Any]:
    """Return (score by docno, match mask by docno), equal to ``topk.dense_scores``."""
    out, matched = scores(index, terms)
    return out, (out > 0.0 if matched is None else matched)


def top_k(
    index: Index, terms: Sequence[TermSpec], k: int, allowed: Any = None
) -> tuple[I64, F64, int]:
    """Return (docnos, scores, number of matching documents) of the exhaustive top ``k``.

    Order: score descending, docno ascending; only live, matching and ``allowed`` documents
    (``allowed``: a boolean mask by docno, or None).
    """
    out, matched = scores(index, terms)
    if matched is None:
        if allowed is not None:
            out[~allowed] = 0.0
        n_matches = int(np.count_nonzero(out))
        n = int(out.size)
        if n_matches > k:
            # The k-th best score; everything at least as good (ties included) is a candidate.
            kth = float(np.partition(out, n - k)[n - k])
            cand = np.flatnonzero(out >= kth) if kth > 0.0 else np.flatnonzero(out)
        else:
            cand = np.flatnonzero(out)
    else:
        if allowed is not None:
            matched &= allowed
        cand = np.flatnonzero(matched)
        n_matches = int(cand.size)
        if cand.size > k:
            sc = out[cand]
            kth = float(np.partition(sc, cand.size - k)[cand.size - k])
            cand = cand[sc >= kth]  # ties at the k-th score stay: docno order settles them
    sc = out[cand]
    order = np.lexsort((cand, -sc))[:k]
    return cand[order].astype(np.int64, copy=False), sc[order], n_matches
