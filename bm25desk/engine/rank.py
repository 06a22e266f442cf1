"""A rank_bm25-style facade for people migrating from it: build from token lists or texts.

>>> corpus = [["hello", "world"], ["goodbye", "world"]]
>>> bm25 = BM25(corpus, "okapi", k1=1.5, b=0.75, epsilon=0.25)   # rank_bm25's BM25Okapi
>>> bm25.get_scores(["hello"]).shape
(2,)

Token lists are used exactly as given (even empty strings, as ``str.split(" ")`` produces);
texts are analysed with an :class:`~bm25desk.engine.analysis.analyzer.Analyzer`. Queries follow the
corpus: a list of tokens is used as is, a string is analysed. The index lives in a private
temporary directory for the object's lifetime; every variant and parameter applies without
rebuilding.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.arrays import F64
from bm25desk.engine.index.build import commit
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment_writer import SegmentWriter
from bm25desk.engine.scoring.query import ParsedQuery, parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import Variant, get_variant

T = TypeVar("T")


class BM25:
    r"""Score a small in-memory collection with any variant (rank_bm25's API, exact formulas).

    Parameters
    ----------
    corpus
        A list of token lists (used as they are) or a list of texts (analysed).
    variant
        A variant key (``okapi`` reproduces rank_bm25's ``BM25Okapi``) or a :class:`Variant`.
    analyzer
        The analyser for texts and string queries (default: lowercase ``\w+`` words).
    **params
        Variant parameters (``k1``, ``b``, ``delta``, ``epsilon``).
    """

    def __init__(
        self,
        corpus: Sequence[Sequence[str]] | Sequence[str],
        variant: str | Variant = "okapi",
        *,
        analyzer: Analyzer | None = None,
        **params: float,
    ) -> None:
        self.analyzer = analyzer or Analyzer()
        self._tmp = tempfile.TemporaryDirectory(prefix="bm25desk-")
        root = Path(self._tmp.name)
        writer = SegmentWriter(root / "seg-0")
        self._pretokenised = bool(corpus) and not isinstance(corpus[0], str)
        for i, doc in enumerate(corpus):
            if isinstance(doc, str):
                terms = self.analyzer.terms(doc)
                text = doc
            else:
                terms = list(doc)
                text = " ".join(terms)
            writer.add(terms, [], docid=str(i), title="", location="", text=text)
        writer.finish()
        commit(
            root,
            name="memory",
            analyzer=self.analyzer,
            source={"kind": "memory"},
            segments=[("seg-0", None)],
        )
        self.index = Index(root)
        self.searcher = Searcher(self.index)
        self.corpus_size = self.index.n_docs
        self.avgdl = self.index.avgdl
        self.variant: Variant = self._make(variant, params)

    @staticmethod
    def _make(variant: str | Variant, params: dict[str, Any]) -> Variant:
        if isinstance(variant, Variant):
            return dataclasses.replace(variant, **params) if params else variant  # type: ignore[type-var]
        return get_variant(variant, **params)

    def switch_to(self, variant: str | Variant, **params: float) -> BM25:
        """Score with another variant or parameters from now on (no rebuild); returns self."""
        self.variant = self._make(variant, params)
        return self

    def _parsed(self, query: Sequence[str] | str) -> ParsedQuery:
        if isinstance(query, str):
            return parse_terms(self.analyzer.terms(query))
        return parse_terms(list(query))

    def get_scores(self, query: Sequence[str] | str) -> F64:
        """Return the score of every document, in corpus order (0 where no query term occurs)."""
        scores, _ = self.searcher.scores(self._parsed(query), self.variant)
        return scores

    def get_batch_scores(self, query: Sequence[str] | str, doc_ids: Sequence[int]) -> F64:
        """Return the scores of the documents at positions ``doc_ids``."""
        ids = np.asarray(doc_ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.corpus_size):
            raise IndexError(f"document ids must be in [0, {self.corpus_size})")
        return self.get_scores(query)[ids]

    def get_top_n(self, query: Sequence[str] | str, documents: Sequence[T], n: int = 5) -> list[T]:
        """Return the ``n`` best of ``documents`` (parallel to the corpus), best first.

        Ties are broken by corpus order, like everywhere in bm25desk (rank_bm25's ``argsort`` order
        among equal scores is unspecified).
        """
        if len(documents) != self.corpus_size:
            raise ValueError("the documents given do not match the indexed corpus")
        scores = self.get_scores(query)
        order = np.lexsort((np.arange(scores.size), -scores))[:n]
        return [documents[i] for i in order.tolist()]

    def retrieve(
        self, queries: Sequence[Sequence[str] | str], k: int = 10, *, threads: int | None = 1
    ) -> tuple[npt.NDArray[np.int64], F64]:
        """Return the top ``k`` of every query at once: (document positions, scores), (n, k).

        Like bm25s's ``retrieve``: row ``i`` holds query ``i``'s best documents, best first (ties
        by corpus order). Only documents containing a query term are ranked: a row with fewer
        matches is padded with position -1 and score NaN. ``threads`` as for
        :meth:`~bm25desk.engine.scoring.search.Searcher.search_many` (None: one per core).
        """
        k = self.searcher.check_k(k)
        parsed = [self._parsed(q) for q in queries]
        found = self.searcher.search_many(parsed, self.variant, k, threads=threads)
        ids = np.full((len(parsed), k), -1, dtype=np.int64)
        scores = np.full((len(parsed), k), np.nan, dtype=np.float64)
        for i, res in enumerate(found):
            if not isinstance(res, Exception):  # nothing to search for: an empty row
                hits: Any = res.hits
                ids[i, : len(hits)] = hits.docnos
                scores[i, : len(hits)] = hits.scores
        return ids, scores

    def close(self) -> None:
        """Delete the temporary index now (otherwise when the object is collected)."""
        self._tmp.cleanup()
