"""Collection and per-term statistics (N, Lavg, df, cf) that the index hands to scoring."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class CollectionStats:
    """Collection-wide statistics a variant may need, with a per-collection cache.

    ``df_all`` returns the document frequency of every term of the vocabulary (only Okapi's ε floor
    needs it: the mean idf over the vocabulary), loaded on first use.
    """

    __slots__ = ("_cache", "_df_all", "avgdl", "n_docs", "n_terms")

    def __init__(
        self, n_docs: int, avgdl: float, n_terms: int, df_all: Callable[[], IntArray]
    ) -> None:
        self.n_docs = n_docs
        self.avgdl = avgdl
        self.n_terms = n_terms
        self._df_all = df_all
        self._cache: dict[Any, Any] = {}

    def df_all(self) -> IntArray:
        """Return every vocabulary term's df (cached)."""
        return self.cached("df_all", self._df_all)  # type: ignore[no-any-return]

    def cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Return ``compute()`` memoised under ``key`` for this collection."""
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = compute()
            return value


@dataclass(frozen=True, slots=True)
class TermStats:
    """What a variant may know about one query term.

    ``postings()`` returns the term's ``(tf, dl)`` arrays over live documents; only BM25Adpt calls
    it (to fit its per-term k1), lazily.
    """

    term: str
    df: int
    cf: int
    postings: Callable[[], tuple[FloatArray, FloatArray]] = field(compare=False, repr=False)


class Statistics(Protocol):
    """Where scoring takes its statistics from.

    An :class:`~bm25desk.engine.index.reader.Index` (its own), or an external provider such as
    :class:`~bm25desk.engine.index.shards.GlobalStatistics` (those of every shard together).
    """

    @property
    def stats(self) -> CollectionStats:
        """Return N, the average length and the vocabulary's dfs of the whole collection."""
        ...

    def term_stats(self, term: str) -> TermStats | None:
        """Return a term's df, cf and lazy postings over the whole collection (None: unknown)."""
        ...
