"""Search: rank an index under any variant, and explain any document (the :class:`Searcher`).

Scoring is float64 throughout. For each distinct query term (in query order) the searcher takes
the term's live postings and adds ``qtf · idf · tf_part(tf, L)`` to each posting's document
(:func:`~bm25desk.engine.scoring.topk.top_k` does so with pruning, bit for bit); the explanation
of a document runs the same :class:`~bm25desk.engine.scoring.variant.TermWeight` on the same
numbers in the same order, so its parts sum to the score bit for bit.

Ranking: score descending; **ties are broken by internal document order** (the order documents
were indexed: file order for corpus files, sorted path order for folders, then later updates).
The same rule applies in the CLI, the app and evaluation runs (:data:`TIE_RULE`).

A document is a match when it contains at least one scored term and satisfies the query's
constraints (``+``/``-``, phrases, ``title:``).

This module also keeps the names that used to live here (results, explanations, feedback).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import F64
from bm25desk.engine.index.stats import Statistics
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.constraints import ConstraintCheck, allowed_mask
from bm25desk.engine.scoring.explain import Explanation, TermExplanation, explain_document
from bm25desk.engine.scoring.family import Lucene
from bm25desk.engine.scoring.feedback import Feedback, rsj_text, rsj_weight, with_feedback
from bm25desk.engine.scoring.query import (
    ParsedQuery,
    QueryToken,
    contains_phrase,
    parse_query,
    parse_terms,
)
from bm25desk.engine.scoring.results import (
    TIE_RULE,
    Contribution,
    Hit,
    QueryAnalysis,
    SearchResult,
    tie_groups,
    variant_dict,
)
from bm25desk.engine.scoring.suggest import Suggester, Suggestion
from bm25desk.engine.scoring.variant import TermWeight, Variant

__all__ = [  # with the names this module used to hold or import (the old path re-exports it)
    "TIE_RULE",
    "ConstraintCheck",
    "Contribution",
    "Explanation",
    "Feedback",
    "Hit",
    "Lucene",
    "ParsedQuery",
    "QueryAnalysis",
    "QueryError",
    "QueryToken",
    "SearchResult",
    "Searcher",
    "Suggestion",
    "TermExplanation",
    "TermWeight",
    "Variant",
    "contains_phrase",
    "parse_query",
    "parse_terms",
    "rsj_text",
    "rsj_weight",
    "variant_dict",
]


class QueryError(ValueError):
    """The query cannot be searched (nothing left after analysis, only prohibitions...)."""


class Searcher:
    """Ranks an :class:`Index` under any variant and explains any document.

    Thread-safe for concurrent searches (caches are guarded); cheap to create.

    Parameters
    ----------
    index
        The index whose documents are ranked.
    statistics
        Where N, the average length and each term's df and cf come from: by default ``index``
        itself; for one shard of a collection, the whole collection's
        (:class:`~bm25desk.engine.index.shards.GlobalStatistics`), so that its scores are those
        of the merged index (``docs/scale.md``).
    """

    CACHE_SIZE = 4096

    def __init__(self, index: Index, statistics: Statistics | None = None) -> None:
        self.index = index
        self.statistics: Statistics = statistics if statistics is not None else index
        self._weights: OrderedDict[tuple[Any, ...], TermWeight | None] = OrderedDict()
        self._lock = threading.Lock()
        self.suggester = Suggester(index)

    # -- analysis --------------------------------------------------------------------------------

    def parse(self, query: str, *, syntax: bool = True) -> ParsedQuery:
        """Parse and analyse ``query`` with the index's analyser."""
        return parse_query(query, self.index.analyzer, syntax=syntax)

    def analyze(self, query: str | ParsedQuery, *, syntax: bool = True) -> QueryAnalysis:
        """Return the query's tokens with their status (stop-listed, unknown...) and role."""
        parsed = query if isinstance(query, ParsedQuery) else self.parse(query, syntax=syntax)
        tokens = []
        unknown: list[str] = []
        for tok in parsed.tokens:
            if tok.term is not None and self.index.term_id(tok.term) < 0:
                tok = dataclasses.replace(tok, status="unknown")
                unknown.append(tok.term)  # type: ignore[arg-type]
            tokens.append(tok)
        stopped = [t.surface for t in parsed.tokens if t.status == "stop"]
        return QueryAnalysis(
            parsed, tuple(tokens), tuple(dict.fromkeys(unknown)), tuple(dict.fromkeys(stopped))
        )

    def suggest(self, term: str, n: int = 3, *, typed: str | None = None) -> list[str]:
        """Return up to ``n`` words of the index close to the analysed ``term`` ("did you mean").

        Each is the word as people type it (the most frequent surface form of a vocabulary
        term, "fuzzy" rather than the stem "fuzzi"), with ``typed``'s capitalisation when given.
        An empty index has none. See :mod:`~bm25desk.engine.scoring.suggest`.
        """
        return [s.word for s in self.suggester.suggestions(term, n, typed=typed)]

    # -- weights ---------------------------------------------------------------------------------

    def weight(
        self, term: str, variant: Variant, feedback: Feedback | None = None
    ) -> TermWeight | None:
        """Return the term's weighting under ``variant`` (None when it is in no document)."""
        key = (term, variant, feedback)
        with self._lock:
            if key in self._weights:
                self._weights.move_to_end(key)
                return self._weights[key]
        stats = self.statistics.term_stats(term)
        w = None if stats is None else variant.weigh(stats, self.statistics.stats)
        if w is not None and stats is not None and feedback is not None:
            w = with_feedback(self.index, term, w, stats.df, feedback)
        with self._lock:
            self._weights[key] = w
            if len(self._weights) > self.CACHE_SIZE:
                self._weights.popitem(last=False)
        return w

    def _weighted(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None
    ) -> list[topk.TermSpec]:
        """Return (term, qtf, weighting) of the scored terms in query order, unknown ones out."""
        out = []
        for term, qtf in parsed.scored:
            w = self.weight(term, variant, feedback)
            if w is not None:
                out.append((term, qtf, w))
        return out

    # -- ranking ---------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        variant: Variant | None = None,
        k: int = 10,
        *,
        feedback: Feedback | None = None,
        syntax: bool = True,
        contributions: bool = True,
        count: bool = True,
    ) -> SearchResult:
        """Rank the index for ``query`` and return the top ``k`` hits with contributions.

        ``contributions=False`` returns ids, scores and lengths only — no per-term breakdown,
        title or location (evaluation runs at k = 1000 need nothing more). ``count=False``
        leaves the matching documents uncounted (``n_matches`` is -1): the ranking never visits
        most of them, and counting them costs a pass over every query term's postings.

        Raises
        ------
        QueryError
            When nothing is left to search for after analysis, or ``k`` is not a whole number
            of at least 1.
        """
        parsed = self.parse(query, syntax=syntax)
        return self.search_parsed(
            parsed, variant, k, feedback=feedback, contributions=contributions, count=count
        )

    def search_terms(
        self,
        terms: Sequence[str],
        variant: Variant | None = None,
        k: int = 10,
        *,
        feedback: Feedback | None = None,
        contributions: bool = True,
        count: bool = True,
    ) -> SearchResult:
        """Rank for already-analysed terms (used as they are: no analyser, no syntax)."""
        parsed = parse_terms(list(terms))
        return self.search_parsed(
            parsed, variant, k, feedback=feedback, contributions=contributions, count=count
        )

    def search_parsed(
        self,
        parsed: ParsedQuery,
        variant: Variant | None = None,
        k: int = 10,
        *,
        feedback: Feedback | None = None,
        contributions: bool = True,
        count: bool = True,
    ) -> SearchResult:
        """Rank for a :class:`ParsedQuery` (see :meth:`search`).

        The top k come from :func:`bm25desk.engine.scoring.topk.top_k` (a compiled kernel with
        dynamic pruning, or the dense numpy path without it): the same documents, with bit-identical
        scores, as :meth:`scores` ranked by score descending, docno ascending.
        """
        started = time.perf_counter()
        variant = variant or Lucene()
        k = self.check_k(k)
        analysis = self.analyze(parsed)
        if not parsed.scored:
            raise QueryError(_empty_reason(parsed))
        terms = self._weighted(parsed, variant, feedback)
        allowed = allowed_mask(self.index, parsed) if parsed.has_constraints else None
        # One document more than asked for: whether the last hit ties with the next one.
        top = topk.top_k(self.index, terms, k + 1, allowed)
        n_matches = topk.count_matches(self.index, terms, allowed) if count else -1
        docnos, scores = top.docnos[:k].tolist(), top.scores[:k].tolist()
        groups = tie_groups(scores, float(top.scores[k]) if top.scores.size > k else None)
        if contributions:
            hits = self._hits(terms, docnos, scores, top.tfs[:k].tolist(), top.parts[:k].tolist())
        else:  # ids and scores only: what a run file needs, ~10× cheaper at k = 1000
            docid, doclen = self.index.docid, self.index.doclen
            hits = tuple(
                Hit(i + 1, d, docid(d), s, "", "", int(doclen[d]), ())
                for i, (d, s) in enumerate(zip(docnos, scores, strict=True))
            )
        hits = tuple(
            h if g is None else dataclasses.replace(h, tie_group=g)
            for h, g in zip(hits, groups, strict=True)
        )
        return SearchResult(
            parsed.text,
            analysis,
            variant,
            hits,
            n_matches,
            self.statistics.stats.n_docs,
            self.statistics.stats.avgdl,
            time.perf_counter() - started,
            feedback,
        )

    def check_k(self, k: Any) -> int:
        """Return how many hits to rank for a request of ``k``: at most every live document.

        Raises
        ------
        QueryError
            When ``k`` is not a whole number of at least 1.
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer):
            raise QueryError(f"k must be a whole number, not {k!r}")
        if k < 1:
            raise QueryError("k must be at least 1")
        # Asking for more than every document means every document (-k 99999999999999999999).
        return min(int(k), max(self.index.n_docs, 1))

    def _hits(
        self,
        terms: list[topk.TermSpec],
        docnos: list[int],
        scores: list[float],
        tfs: list[list[int]],
        parts: list[list[float]],
    ) -> tuple[Hit, ...]:
        """Return hits with contributions from the ranking's own per-term tf parts."""
        dfs = []
        for term, _, _ in terms:
            stats = self.statistics.term_stats(term)
            dfs.append(stats.df if stats is not None else 0)
        hits = []
        for i, (docno, score) in enumerate(zip(docnos, scores, strict=True)):
            row_tf, row_part = tfs[i], parts[i]
            contribs = tuple(
                Contribution(
                    term, qtf, row_tf[t], dfs[t], w.idf, row_part[t], (qtf * w.idf) * row_part[t]
                )
                for t, (term, qtf, w) in enumerate(terms)
                if row_tf[t] > 0
            )
            rec = self.index.doc(docno)
            hits.append(
                Hit(i + 1, docno, rec.docid, score, rec.title, rec.location, rec.length, contribs)
            )
        return tuple(hits)

    def scores(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None = None
    ) -> tuple[F64, Any]:
        """Return (score by docno, match mask by docno): the dense view behind a ranking."""
        scores, matched = topk.dense_scores(self.index, self._weighted(parsed, variant, feedback))
        if parsed.has_constraints:
            matched &= allowed_mask(self.index, parsed)
        return scores, matched

    def rank_of(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None, docno: int
    ) -> int:
        """Return the rank ``docno`` has in the full ranking (it is assumed to match)."""
        scores, ok = self.scores(parsed, variant, feedback)
        s = scores[docno]
        better = ok & ((scores > s) | ((scores == s) & (np.arange(scores.size) < docno)))
        return int(better.sum()) + 1

    # -- explanation -----------------------------------------------------------------------------

    def explain(
        self,
        query: str | ParsedQuery,
        docid: str,
        variant: Variant | None = None,
        *,
        feedback: Feedback | None = None,
        syntax: bool = True,
        with_rank: bool = False,
    ) -> Explanation:
        """Explain the score of document ``docid`` (any document, matching or not).

        Raises
        ------
        KeyError
            When no live document has that id.
        """
        docno = self.index.docno(docid)
        if docno is None:
            raise KeyError(f"no document with id {docid!r} in index {self.index.name!r}")
        parsed = query if isinstance(query, ParsedQuery) else self.parse(query, syntax=syntax)
        return self.explain_docno(parsed, docno, variant, feedback=feedback, with_rank=with_rank)

    def explain_docno(
        self,
        parsed: ParsedQuery,
        docno: int,
        variant: Variant | None = None,
        *,
        feedback: Feedback | None = None,
        with_rank: bool = False,
    ) -> Explanation:
        """Explain the score of ``docno`` for a parsed query (see :meth:`explain`)."""
        return explain_document(self, parsed, docno, variant or Lucene(), feedback, with_rank)


def _empty_reason(parsed: ParsedQuery) -> str:
    if not parsed.tokens:
        return "the query is empty"
    stopped = [t.surface for t in parsed.tokens if t.status == "stop"]
    if stopped and all(t.term is None for t in parsed.tokens):
        return f"nothing to search for: {', '.join(stopped)} are stop words"
    if all(t.role == "prohibited" for t in parsed.tokens):
        return (
            "nothing to search for: the query only excludes words, and a query of only "
            "excluded words matches nothing to rank; add a word to search for"
        )
    return "nothing to search for after analysis"
