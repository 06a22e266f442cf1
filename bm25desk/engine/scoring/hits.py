"""Ranked hits kept as arrays until someone reads them: :class:`Hits`, a lazy sequence of Hit.

A search at k = 1000 used to build 1,000 :class:`~bm25desk.engine.scoring.results.Hit` objects
(with a document record and a tuple of contributions each) that an evaluation run never read
beyond the id and the score. :class:`Hits` holds the ranking's docnos and scores (and, when the
kernel returned them, every hit's per-term tf and tf part) and builds a Hit the first time it is
indexed; ``docids()``, ``docnos`` and ``scores`` give whole columns without any Hit. A Hit built
here equals the one the searcher built eagerly before, field for field.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from bm25desk.engine.index.arrays import F64, I32, I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.stats import Statistics
from bm25desk.engine.scoring.results import Contribution, Hit, tie_groups
from bm25desk.engine.scoring.variant import TermWeight

TermSpec = tuple[str, int, TermWeight]
Detail = tuple[I32, F64]
"""Per hit and query term: (tf matrix, tf-part matrix), shape (hits, terms)."""


class DocidCache:
    """Docno → the source's own id, memoised per index (evaluation reads the same ids often)."""

    LIMIT = 2_000_000

    def __init__(self, index: Index) -> None:
        # A weak reference: this cache is the value of a WeakKeyDictionary keyed by the index,
        # and a strong one would keep every index ever searched open (its files and maps).
        self._index = weakref.ref(index)
        self.ids: dict[int, str] = {}

    def __call__(self, docnos: Sequence[int]) -> list[str]:
        """Return the ids of ``docnos`` in order."""
        ids = self.ids
        got = list(map(ids.get, docnos))
        if None in got:
            index = self._index()
            assert index is not None  # the caller holds it
            docid = index.docid
            for i, d in enumerate(docnos):
                if got[i] is None:
                    got[i] = value = docid(d)
                    if len(ids) < self.LIMIT:
                        ids[d] = value
        return got  # type: ignore[return-value]


_docid_caches: weakref.WeakKeyDictionary[Index, DocidCache] = weakref.WeakKeyDictionary()
_docid_lock = threading.Lock()


def docid_cache(index: Index) -> DocidCache:
    """Return the index's shared :class:`DocidCache`."""
    got = _docid_caches.get(index)
    if got is None:
        with _docid_lock:
            got = _docid_caches.setdefault(index, DocidCache(index))
    return got


class Hits(Sequence[Hit]):
    """The ranked hits of one search: a read-only sequence of :class:`Hit`, built on first read.

    Parameters
    ----------
    index
        The searched index.
    docnos, scores
        The ranking (best first).
    next_score
        The score of the document after the last hit (None: there is none), for tie groups.
    terms
        The scored query terms (None: hits carry no contributions, title or location).
    detail
        Returns the (tf, tf part) matrices of the hits, shape (hits, terms); called at most once,
        when the first Hit with contributions is built.
    statistics
        Where the contributions' document frequencies come from (default ``index``; a shard's
        searcher passes the whole collection's, as its weightings do).
    """

    __slots__ = (
        "_detail",
        "_dfs",
        "_groups",
        "_hits",
        "_index",
        "_lock",
        "_next",
        "_statistics",
        "_terms",
        "docnos",
        "scores",
    )

    def __init__(
        self,
        index: Index,
        docnos: I64,
        scores: F64,
        next_score: float | None = None,
        terms: Sequence[TermSpec] | None = None,
        detail: Callable[[], Detail] | None = None,
        statistics: Statistics | None = None,
    ) -> None:
        self._index = index
        self._statistics: Statistics = index if statistics is None else statistics
        self.docnos: I64 = _frozen(docnos)
        self.scores: F64 = _frozen(scores)
        self._next = next_score
        self._terms = None if terms is None else tuple(terms)
        self._detail: Callable[[], Detail] | Detail | None = detail
        self._dfs: list[int] | None = None
        self._groups: list[int | None] | None = None
        self._hits: list[Hit | None] = [None] * int(self.docnos.size)
        self._lock = threading.Lock()

    # -- columns ---------------------------------------------------------------------------------

    def docids(self) -> list[str]:
        """Return the hits' document ids in rank order (no Hit is built)."""
        return docid_cache(self._index)(self.docnos.tolist())

    @property
    def tie_groups(self) -> list[int | None]:
        """Return every hit's tie group (see :attr:`Hit.tie_group`)."""
        if self._groups is None:
            self._groups = tie_groups(self.scores, self._next)
        return self._groups

    @property
    def has_ties(self) -> bool:
        """Return whether any hit ties on score with a neighbour."""
        return any(g is not None for g in self.tie_groups)

    # -- the sequence ----------------------------------------------------------------------------

    def __len__(self) -> int:
        """Return the number of hits."""
        return len(self._hits)

    @overload
    def __getitem__(self, i: int) -> Hit: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Hit, ...]: ...

    def __getitem__(self, i: int | slice) -> Hit | tuple[Hit, ...]:
        """Return hit ``i`` (built now if it was not yet), or a tuple of hits for a slice."""
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        n = len(self._hits)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("hit index out of range")
        hit = self._hits[j]
        if hit is None:
            hit = self._hits[j] = self._build(j)
        return hit

    def __iter__(self) -> Iterator[Hit]:
        """Yield the hits in rank order."""
        for j in range(len(self._hits)):
            yield self[j]

    def __eq__(self, other: object) -> bool:
        """Return whether ``other`` is a sequence of equal hits (a tuple of Hit compares too)."""
        if isinstance(other, Hits) and other is self:
            return True
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        """Return the hits as a tuple would show them."""
        return repr(tuple(self))

    # -- building one hit ------------------------------------------------------------------------

    def _build(self, j: int) -> Hit:
        docno = int(self.docnos[j])
        score = float(self.scores[j])
        group = self.tie_groups[j]
        index = self._index
        if self._terms is None:
            length = int(index.doclen[docno])
            return Hit(j + 1, docno, index.docid(docno), score, "", "", length, (), group)
        tfs, parts = self._matrices()
        row_tf, row_part = tfs[j].tolist(), parts[j].tolist()
        dfs = self._term_dfs()
        contribs = tuple(
            Contribution(
                term, qtf, row_tf[t], dfs[t], w.idf, row_part[t], (qtf * w.idf) * row_part[t]
            )
            for t, (term, qtf, w) in enumerate(self._terms)
            if row_tf[t] > 0
        )
        rec = index.doc(docno)
        return Hit(
            j + 1, docno, rec.docid, score, rec.title, rec.location, rec.length, contribs, group
        )

    def _matrices(self) -> Detail:
        with self._lock:
            if callable(self._detail):
                self._detail = self._detail()
            assert self._detail is not None
            return self._detail

    def _term_dfs(self) -> list[int]:
        if self._dfs is None:
            dfs = []
            for term, _, _ in self._terms or ():
                stats = self._statistics.term_stats(term)
                dfs.append(stats.df if stats is not None else 0)
            self._dfs = dfs
        return self._dfs


def _frozen(a: Any) -> Any:
    """Return ``a`` as a read-only array (a view: the caller's array keeps its flags)."""
    if type(a) is np.ndarray and not a.flags.writeable:
        return a  # already read-only (the kernel's results are views of immutable bytes)
    view = np.asarray(a).view()
    view.flags.writeable = False
    return view
