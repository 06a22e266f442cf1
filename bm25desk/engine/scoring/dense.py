"""The dense float64 scoring every ranking must equal, and the per-document length index.

:func:`dense_scores` is search.py's reference scoring (``scores[docnos] += (qtf · idf) ·
tf_part(tf, dl)`` over the query's distinct terms in query order); :func:`top_k_dense` ranks it
(score descending, docno ascending). :func:`length_index` maps each document to its row in the
kernel's tf-part tables. Moved here from :mod:`~bm25desk.engine.scoring.topk`, which re-exports
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bm25desk.engine.index.arrays import F64, I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.variant import TermWeight

TermSpec = tuple[str, int, TermWeight]
"""One distinct query term in query order: (term, qtf, its weighting)."""


def length_index(doclen: Any) -> tuple[F64, Any]:
    """Return (distinct lengths ascending as float64, each document's index into them)."""
    doclen = np.asarray(doclen)
    if doclen.size == 0:
        return np.zeros(1, dtype=np.float64), np.zeros(0, dtype=np.uint8)
    top = int(doclen.max())
    if int(doclen.min()) >= 0 and top <= max(4 * doclen.size, 1 << 20):
        present = np.zeros(top + 1, dtype=np.bool_)
        present[doclen] = True
        values = np.flatnonzero(present)
        rank = np.cumsum(present, dtype=np.int32) - 1
        index = rank[doclen]
    else:
        values, inverse = np.unique(doclen, return_inverse=True)
        index = inverse.astype(np.int32)
    # The narrowest type that holds the rows: the kernel reads one entry per document it scores,
    # at random, and an array of a byte per document (passages have a few hundred distinct
    # lengths) stays in cache where one of four bytes does not.
    n = values.size
    dtype = np.uint8 if n <= 1 << 8 else np.uint16 if n <= 1 << 16 else np.int32
    return values.astype(np.float64), np.ascontiguousarray(index, dtype=dtype)


def dense_scores(index: Index, terms: Sequence[TermSpec]) -> tuple[F64, Any]:
    """Return (score by docno, match mask by docno): search.py's dense float64 scoring."""
    n = index.n_slots
    scores = np.zeros(n, dtype=np.float64)
    matched = np.zeros(n, dtype=bool)
    doclen = index.doclen
    for term, qtf, w in terms:
        docnos, tfs = index.postings(term)
        tf_part = w.tf_part(tfs.astype(np.float64), doclen[docnos].astype(np.float64))
        scores[docnos] += (qtf * w.idf) * tf_part
        matched[docnos] = True
    return scores, matched


def top_k_dense(index: Index, terms: Sequence[TermSpec], k: int, allow: Any) -> tuple[I64, F64]:
    """Return (docnos, scores) of the dense top ``k`` (matching, ``allow``ed documents only)."""
    scores, matched = dense_scores(index, terms)
    if allow is not None:
        matched &= allow
    cand = np.flatnonzero(matched)
    if cand.size == 0:
        return cand.astype(np.int64), np.zeros(0, dtype=np.float64)
    sc = scores[cand]
    if cand.size > k:
        kth = np.partition(sc, cand.size - k)[cand.size - k]
        keep = sc >= kth
        cand, sc = cand[keep], sc[keep]
    order = np.lexsort((cand, -sc))[:k]
    return np.asarray(cand[order], dtype=np.int64), np.asarray(sc[order], dtype=np.float64)
