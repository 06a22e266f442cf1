"""Exhaustive scoring over per-term impacts cached per (variant, parameters, term).

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

from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import F64, I64
from bm25desk.engine.scoring.variant import TermWeight

TermSpec = tuple[str, int, TermWeight]
"""One distinct query term in query order: (term, qtf, its weighting), as for ``topk.top_k``."""

MAX_CACHE_BYTES = 256 << 20
"""Bytes of cached postings and tf parts kept per index (least recently used go first)."""

DENSE_MAX_DOCS = 1 << 21
"""Above this many document slots the score array of every query costs too much: never dense."""


@dataclass(frozen=True, slots=True)
class TermImpacts:
    """One term's live postings (global docnos ascending) with their tf parts under one weighting.

    ``positive`` says every tf part is > 0 (so every weight has the sign of ``qtf · idf``).
    """

    docnos: I64
    parts: F64
    positive: bool

    @property
    def nbytes(self) -> int:
        """Return the memory the arrays hold."""
        return int(self.docnos.nbytes + self.parts.nbytes)


class _Cache:
    """Per-index cache of :class:`TermImpacts` (thread-safe; computing twice is harmless)."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple[Any, ...], TermImpacts] = OrderedDict()
        self.nbytes = 0
        self.doclen = np.asarray(index.doclen)

    def get(self, term: str, w: TermWeight) -> TermImpacts:
        """Return ``term``'s impacts under ``w``'s variant, parameters and per-term k1."""
        key = (term, w.variant, w.k1)
        got = self.items.get(key)  # a plain read: dict reads are atomic, LRU order is a hint
        if got is not None:
            return got
        docnos, tfs = self.index.postings(term)
        docnos = np.ascontiguousarray(docnos, dtype=np.int64)
        # The dense path's own arrays and call: the same float64 numbers, element for element.
        parts = np.ascontiguousarray(
            w.tf_part(np.asarray(tfs).astype(np.float64), self.doclen[docnos].astype(np.float64)),
            dtype=np.float64,
        )
        got = TermImpacts(docnos, parts, bool(parts.size == 0 or parts.min() > 0.0))
        with self.lock:
            if key not in self.items:
                self.items[key] = got
                self.nbytes += got.nbytes
                while self.nbytes > MAX_CACHE_BYTES and len(self.items) > 1:
                    _, old = self.items.popitem(last=False)
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


def impacts(index: Index, term: str, w: TermWeight) -> TermImpacts:
    """Return ``term``'s live postings and tf parts under ``w`` (cached per index)."""
    return _cache(index).get(term, w)


def prefer(index: Index, postings: int, k: int) -> bool:
    """Return whether exhaustive scoring is expected to beat the pruning kernel.

    ``postings`` is the query's total document frequency. Exhaustive costs about one add per
    posting plus a pass over the collection's score array; the kernel pays several times more
    per posting it reads but may skip most of them, which it cannot when the postings cover a
    good part of the collection or when k is deep. The thresholds were measured on SciFact-sized
    and 100 k / 1 M-passage collections (``docs/benchmarks/README.md``).
    """
    n = index.n_slots
    if n > DENSE_MAX_DOCS or postings == 0:
        return False
    return postings * 4 >= n or k * 16 >= n


def scores(index: Index, terms: Sequence[TermSpec]) -> tuple[F64, Any, bool]:
    """Return (score by docno, match mask or None, whether every weight is positive).

    The match mask is None when every weight is positive: then a document matches exactly when
    its score is > 0 (a sum of positive numbers never rounds to 0).
    """
    cache = _cache(index)
    n = index.n_slots
    docs: list[I64] = []
    weights: list[F64] = []
    positive = True
    for term, qtf, w in terms:
        imp = cache.get(term, w)
        if imp.docnos.size == 0:
            continue
        qw = qtf * w.idf
        positive = positive and imp.positive and qw > 0.0
        docs.append(imp.docnos)
        weights.append(qw * imp.parts)
    if not docs:
        return np.zeros(n, dtype=np.float64), (None if positive else np.zeros(n, bool)), positive
    d = docs[0] if len(docs) == 1 else np.concatenate(docs)
    wt = weights[0] if len(weights) == 1 else np.concatenate(weights)
    out = np.bincount(d, weights=wt, minlength=n)
    if positive:
        return out, None, True
    matched = np.zeros(n, dtype=bool)
    matched[d] = True
    return out, matched, False


def dense(index: Index, terms: Sequence[TermSpec]) -> tuple[F64, Any]:
    """Return (score by docno, match mask by docno), equal to ``topk.dense_scores``."""
    out, matched, _ = scores(index, terms)
    if matched is None:
        matched = out > 0.0
    return out, matched


def top_k(
    index: Index, terms: Sequence[TermSpec], k: int, allowed: Any = None
) -> tuple[I64, F64, int]:
    """Return (docnos, scores, number of matching documents) of the exhaustive top ``k``.

    Order: score descending, docno ascending; only live, matching and ``allowed`` documents
    (``allowed``: a boolean mask by docno, or None).
    """
    out, matched, _ = scores(index, terms)
    if matched is None:
        cand = np.flatnonzero(out)  # positive weights: matched ⇔ score > 0
        if allowed is not None:
            cand = cand[allowed[cand]]
    else:
        if allowed is not None:
            matched &= allowed
        cand = np.flatnonzero(matched)
    n_matches = int(cand.size)
    sc = out[cand]
    if cand.size > k:
        kth = np.partition(sc, cand.size - k)[cand.size - k]
        keep = sc >= kth  # ties at the k-th score stay: the docno order settles them below
        cand, sc = cand[keep], sc[keep]
    order = np.lexsort((cand, -sc))[:k]
    return cand[order].astype(np.int64, copy=False), sc[order], n_matches
