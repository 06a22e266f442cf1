"""What an evaluation needs from the engine, as protocols the real ``Searcher`` fits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bm25desk.engine.scoring.variants import Variant

__all__ = ["AnalyzerLike", "HitLike", "IndexLike", "SearchResultLike", "SearcherLike"]


class HitLike(Protocol):
    """One ranked document."""

    @property
    def docid(self) -> str:
        """The collection's own document id."""
        ...

    @property
    def score(self) -> float:
        """The document's score."""
        ...


class SearchResultLike(Protocol):
    """What a search returns: hits ordered by score desc, ties by internal document order."""

    @property
    def hits(self) -> Sequence[HitLike]:
        """The ranked hits."""
        ...


class AnalyzerLike(Protocol):
    """The part of the index's analyser an experiment uses."""

    def terms(self, text: str) -> list[str]:
        """Return the indexed terms of ``text``, in order."""
        ...


class IndexLike(Protocol):
    """The part of an index an experiment uses."""

    @property
    def analyzer(self) -> AnalyzerLike:
        """The analyser the index was built with (queries are analysed with it)."""
        ...

    def docno(self, docid: str) -> int | None:
        """Return the internal number of ``docid``, or None when it is not indexed."""
        ...


class SearcherLike(Protocol):
    """The part of ``bm25desk.engine.scoring.search.Searcher`` an experiment uses."""

    @property
    def index(self) -> IndexLike:
        """The searched index."""
        ...

    def search(
        self,
        query: str,
        variant: Variant,
        k: int = ...,
        *,
        contributions: bool = ...,
        count: bool = ...,
    ) -> SearchResultLike:
        """Analyse ``query`` with the index's analyser and return the top ``k``."""
        ...

    def search_terms(
        self,
        terms: list[str],
        variant: Variant,
        k: int = ...,
        *,
        contributions: bool = ...,
        count: bool = ...,
    ) -> SearchResultLike:
        """Score an already analysed bag of terms and return the top ``k``."""
        ...
