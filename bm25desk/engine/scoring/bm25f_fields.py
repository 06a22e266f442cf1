"""BM25F's fields on an index: which it has, their lengths and averages, those a variant scores.

A field other than **text** (the main postings and document lengths) is stored as reserved terms
(:mod:`~bm25desk.engine.index.reserved`): its terms and one length term per document. Lengths and
averages are computed once per opened index (it never changes) and shared by the numpy ranking,
the compiled one (:mod:`~bm25desk.engine.scoring.bm25f_kernel`) and the explanations.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bm25desk.engine.index.arrays import F64, I32, I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.reserved import field_length_term, field_term
from bm25desk.engine.scoring.variant import VariantError

if TYPE_CHECKING:
    from bm25desk.engine.scoring.bm25f import BM25F
    from bm25desk.engine.scoring.search import Searcher

TEXT = "text"
TITLE = "title"

_LENGTHS = field_length_term("x")[:-1]  # the prefix every field-length term starts with


@dataclass(frozen=True, slots=True)
class ScoredField:
    """A field as one ranking uses it: weight, b, every document's length and the average."""

    name: str
    weight: float
    b: float
    lengths: F64  # by docno (0 where the document has no such field)
    avg: float


_cache: weakref.WeakKeyDictionary[Index, dict[str, tuple[F64, float]]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


_fields: weakref.WeakKeyDictionary[Index, tuple[str, ...]] = weakref.WeakKeyDictionary()
_scored: weakref.WeakKeyDictionary[Index, OrderedDict[BM25F, tuple[ScoredField, ...]]] = (
    weakref.WeakKeyDictionary()
)


def index_fields(index: Index) -> list[str]:
    """Return the fields ``index`` has: ``text``, then those stored as reserved terms.

    Kept per index (an opened index never changes; the look-up was a tenth of a search).
    """
    got = _fields.get(index)
    if got is None:
        ids, _, _ = index.reserved_table(_LENGTHS)
        names = [index.term_name(int(t))[len(_LENGTHS) :] for t in ids]
        got = _fields[index] = (TEXT, *sorted(n for n in names if n != TEXT))
    return list(got)


def describe_fields(index: Index) -> list[dict[str, Any]]:
    """Return each field of ``index`` with its average length and how many documents have it."""
    out = []
    for name in index_fields(index):
        if name == TEXT:
            docs = index.n_docs
        else:
            docs = int(index.postings(field_length_term(name))[0].size)
        out.append({"field": name, "avg_length": field_lengths(index, name)[1], "documents": docs})
    return out


def field_lengths(index: Index, name: str) -> tuple[F64, float]:
    """Return every document's length in field ``name`` (by docno) and the field's Lavg.

    Lavg_f = total live length / N (documents without the field count as 0); the text field's
    are the document lengths and the index's average length. An average of 0 is taken as 1, as
    for Lavg (no posting depends on it).
    """
    with _lock:
        per = _cache.setdefault(index, {})
        got = per.get(name)
    if got is not None:
        return got
    if name == TEXT:
        lengths = np.asarray(index.doclen, dtype=np.float64)
        avg = float(index.avgdl)
    else:
        docnos, tfs = index.postings(field_length_term(name))
        lengths = np.zeros(index.n_slots, dtype=np.float64)
        lengths[docnos] = tfs
        avg = float(tfs.sum(dtype=np.int64)) / index.n_docs if index.n_docs else 0.0
    got = (lengths, avg if avg > 0 else 1.0)
    with _lock:
        per[name] = got
    return got


def scored_fields(searcher: Searcher, variant: BM25F) -> list[ScoredField]:
    """Return the fields ``variant`` scores on the searcher's index (weight above 0).

    A title field the index lacks (built before fields existed, or a source without titles) is
    left out; any other field it lacks is an error.

    Raises
    ------
    VariantError
        For a sharded search, a field the index does not have, or no field of weight above 0.
    """
    index = searcher.index
    if searcher.statistics is not index:
        raise VariantError("bm25f ranks one index at a time: it is not available for shards yet")
    kept = _scored.get(index)
    got = None if kept is None else kept.get(variant)
    if got is not None:  # a search asks for them once per query and per new term
        return list(got)
    have = index_fields(index)
    out = []
    for name, w, b in variant.fields():
        if name not in have:
            if name == TITLE:
                continue
            raise VariantError(
                f"index {index.name!r} has no field {name!r} (its fields: {', '.join(have)})"
            )
        if w > 0:
            lengths, avg = field_lengths(index, name)
            out.append(ScoredField(name, float(w), float(b), lengths, avg))
    if not out:
        raise VariantError("bm25f: every field has weight 0; give one a weight above 0")
    with _lock:
        kept = _scored.setdefault(index, OrderedDict())
        kept[variant] = tuple(out)
        while len(kept) > 64:
            kept.popitem(last=False)
    return out


def field_term_of(f: ScoredField, term: str) -> str:
    """Return the name ``term`` has in field ``f`` (itself in text, else a reserved term)."""
    return term if f.name == TEXT else field_term(f.name, term)


def field_postings(index: Index, f: ScoredField, term: str) -> tuple[I64, I32]:
    """Return the live postings of ``term`` in field ``f`` (global docnos ascending, tfs)."""
    return index.postings(field_term_of(f, term))
