"""BM25F's compiled path: its top k and document frequencies from the stored blocks, in C.

:mod:`~bm25desk.engine.scoring.bm25f` ranks with numpy over each term's merged per-field
postings; this module does the same sums in the kernel (``_topk.bm25f``,
``_topk_src/bm25f.c``): per query term, its posting list in each scored field walked together
in docno order, each document's pseudo-tf summed in field order from 0.0 with numpy's operations
in numpy's order, saturated, weighted and added into the score in query order — bit for bit the
numpy scores — then the top k through the kernel's heap (score descending, docno ascending),
segment after segment. The posting lists are the top-k kernel's (:mod:`topk`'s per-index state:
stored blocks, decoded and checked as they are read). A document frequency over the scored fields
is the kernel's count of the union of the fields' lists.

Every function returns None when the kernel is not there (``BM25DESK_NO_EXTENSIONS=1``, no
compiler) or cannot take the query (a weight that is not finite, a score that is not): the caller
then runs numpy.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bm25desk.engine.index.arrays import F64, I32, I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import topk

if TYPE_CHECKING:
    from bm25desk.engine.scoring.bm25f_fields import ScoredField

HAVE_KERNEL = topk.HAVE_KERNEL and hasattr(topk._topk, "bm25f")
"""Whether the compiled bm25f ranking is available."""

FieldTerms = Sequence[str]
"""A query term's name in each scored field, in field order (the term, or a reserved term)."""


_NORMS_KEPT = 8  # (field, b) norm arrays kept per index: n_slots float64 each
_LISTS_KEPT = 8192  # query terms' per-field lists kept per index (stored lists: views)
_norms: weakref.WeakKeyDictionary[Index, OrderedDict[Any, tuple[F64, ...]]] = (
    weakref.WeakKeyDictionary()
)
_lists_of: weakref.WeakKeyDictionary[Index, OrderedDict[Any, list[tuple[Any, ...]]]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()
_WORK_BYTES = 26  # the kernel's scratch per document (bm25f.c: WORK_BYTES)
_local = threading.local()


def _workspace(n: int) -> Any:
    """Return this thread's zeroed scratch for a segment of ``n`` documents (kept, reused).

    The kernel leaves it zero after every call, so a query pays for the documents it touches,
    not for clearing (or faulting in) a score array of every document.
    """
    got = getattr(_local, "work", None)
    if got is None or got.size < _WORK_BYTES * max(n, 1):
        got = _local.work = np.zeros(_WORK_BYTES * max(n, 1), dtype=np.uint8)
    return got


def field_norms(index: Index, f: ScoredField) -> tuple[F64, ...]:
    """Return B_f = 1 − b + b·L/Lavg of every document for field ``f``, per segment (cached).

    numpy's expression over the whole length array, element for element the one the numpy path
    evaluates over a term's postings, so the kernel divides by the very same numbers.
    """
    key = (f.name, f.b, f.avg)
    with _lock:
        per = _norms.setdefault(index, OrderedDict())
        got = per.get(key)
        if got is not None:
            per.move_to_end(key)
            return got
    with np.errstate(all="ignore"):
        whole = np.ascontiguousarray(1.0 - f.b + f.b * f.lengths / f.avg, dtype=np.float64)
    whole.flags.writeable = False
    got = tuple(whole[sg.base : sg.base + sg.n] for sg in topk._state(index).segments)
    with _lock:
        per[key] = got
        while len(per) > _NORMS_KEPT:
            per.popitem(last=False)
    return got


def _lists(index: Index, names: FieldTerms) -> list[tuple[Any, ...]]:
    """Return, per field, the term's kernel postings per segment (None where absent).

    Kept here per query term when the segments hand over stored blocks (a list is a view):
    topk's own cache holds 4,096 names, fewer than the field terms of a few thousand query
    words, and a miss looks the term up in every segment again.
    """
    key = tuple(names)
    cache = _lists_of.get(index)
    got = None if cache is None else cache.get(key)
    if got is not None:
        return got
    st = topk._state(index)
    got = [st.postings(name) for name in names]
    if not st.stored:  # lists encoded in memory (old segments): topk's own LRU bounds them
        return got
    with _lock:
        cache = _lists_of.setdefault(index, OrderedDict())
        cache[key] = got
        while len(cache) > _LISTS_KEPT:
            cache.popitem(last=False)
    return got


def doc_frequency(index: Index, names: FieldTerms) -> int | None:
    """Return how many live documents hold the term in at least one of the fields (or None)."""
    if not HAVE_KERNEL:
        return None
    st = topk._state(index)
    per_field = _lists(index, names)
    total = 0
    for s, sg in enumerate(st.segments):
        pls = [p.pl for p in (lists[s] for lists in per_field) if p is not None]
        if pls:
            with topk._damage_is_corruption(index):
                total += topk._topk.count(pls, sg.n, None, sg.deny)
    return total


def top_k(
    index: Index,
    fields: Sequence[ScoredField],
    terms: Sequence[tuple[FieldTerms, float]],
    k1: float,
    k: int,
    allowed: Any,
) -> tuple[I64, F64, int] | None:
    """Return the top ``k`` (docnos, scores; best first) and the number of matching documents.

    ``terms`` are the distinct query terms in query order, each as its names in ``fields`` and
    its weight qtf·idf. ``allowed`` is a boolean mask by docno, or None. None: the kernel is not
    there, or a weight or a score is not finite (numpy then ranks, as it always could).
    """
    if not HAVE_KERNEL or not all(math.isfinite(qw) for _, qw in terms):
        return None
    st = topk._state(index)
    allow = None if allowed is None else np.ascontiguousarray(allowed, dtype=np.bool_)
    per_term = [(_lists(index, names), float(qw)) for names, qw in terms]
    norms = [field_norms(index, f) for f in fields]
    work = _workspace(max((sg.n for sg in st.segments), default=0))
    prev: Any = None
    matches = 0
    bm25f = topk._topk.bm25f
    for s, sg in enumerate(st.segments):
        lo, hi = sg.base, sg.base + sg.n
        args = []
        for lists, qw in per_term:
            here = [
                (p.pl, f.weight, norm[s])
                for f, norm, p in zip(fields, norms, (ls[s] for ls in lists), strict=True)
                if p is not None
            ]
            if here:
                args.append((qw, here))
        if not args:
            continue
        seg_allow = None if allow is None else allow[lo:hi]
        with topk._damage_is_corruption(index):
            d, sc, n, nonfinite = bm25f(args, sg.n, k, k1, seg_allow, sg.deny, sg.base, prev, work)
        if nonfinite:
            return None
        prev = (np.frombuffer(d, dtype=np.int64), np.frombuffer(sc, dtype=np.float64))
        matches += n
    if prev is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), 0
    docnos, scores = prev  # sorted by the kernel: score descending, docno ascending
    return docnos, scores, matches


def detail(
    index: Index,
    fields: Sequence[ScoredField],
    terms: Sequence[FieldTerms],
    k1: float,
    top: I64,
) -> tuple[I32, F64]:
    """Return the (tf, tf part) matrices of the ``top`` documents × the query terms.

    The numbers the ranking summed: per term, each field's share ``w·tf/B`` where the field holds
    the term, added in field order from 0.0, then saturated (numpy, element for element the same
    operations as the kernel and the numpy ranking).
    """
    from bm25desk.engine.scoring.bm25f import field_part, saturate

    tfs = np.zeros((top.size, len(terms)), dtype=np.int32)
    parts = np.zeros((top.size, len(terms)), dtype=np.float64)
    for t, names in enumerate(terms):
        ptf = np.zeros(top.size, dtype=np.float64)
        for f, name in zip(fields, names, strict=True):
            docnos, ftf = index.postings(name)
            if not docnos.size:
                continue
            at = np.minimum(np.searchsorted(docnos, top), docnos.size - 1)
            hit = docnos[at] == top
            tf = ftf[at[hit]]
            tfs[hit, t] += tf
            lengths = f.lengths[top[hit]]
            ptf[hit] += field_part(f.weight, tf.astype(np.float64), lengths, f.b, f.avg)
        parts[:, t] = saturate(ptf, k1)
    return tfs, parts
