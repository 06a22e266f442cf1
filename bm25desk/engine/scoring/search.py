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

import copy
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from bm25desk.engine.index.arrays import F64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.stats import CollectionStats, Statistics, TermStats
from bm25desk.engine.scoring import batch, bm25f, impacts, topk
from bm25desk.engine.scoring import by_df as by_df_module
from bm25desk.engine.scoring.bm25f import BM25F
from bm25desk.engine.scoring.constraints import ConstraintCheck, allowed_mask
from bm25desk.engine.scoring.explain import Explanation, TermExplanation, explain_document
from bm25desk.engine.scoring.family import Lucene
from bm25desk.engine.scoring.feedback import Feedback, rsj_text, rsj_weight, with_feedback
from bm25desk.engine.scoring.filters import Filters, filtered_allowed
from bm25desk.engine.scoring.hits import Hits
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

    CACHE_SIZE = 1 << 16
    """Weightings kept per (variant with its parameters, feedback) (an evaluation's vocabulary)."""

    CACHED_VARIANTS = 16
    """(variant, feedback) pairs whose weightings are kept; the least recently used go first."""

    STRATEGIES = ("auto", "kernel", "exhaustive")

    def __init__(
        self, index: Index, statistics: Statistics | None = None, *, strategy: str = "auto"
    ) -> None:
        """Search ``index``.

        ``strategy`` picks how a top k is found: ``auto`` (the default) by
        :func:`~bm25desk.engine.scoring.impacts.prefer`, ``kernel`` always by the pruning kernel,
        ``exhaustive`` always by adding every posting. The rankings are the same bit for bit;
        the choice is for tests and benchmarks.
        """
        if strategy not in self.STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(self.STRATEGIES)}")
        self.index = index
        self.statistics: Statistics = statistics if statistics is not None else index
        self.strategy = strategy
        # (variant, feedback) -> term -> weighting: one hash of the variant per query, then plain
        # dict reads per term (reads and writes of a dict are atomic: computing twice is harmless).
        self._weights: OrderedDict[tuple[Any, ...], dict[str, TermWeight | None]] = OrderedDict()
        self._last_table: tuple[Variant, Feedback | None, dict[str, TermWeight | None]] | None = (
            None
        )
        # variant -> (the statistics, (df -> weighting, the idfs of dfs 1..IDF_RANGE computed
        # IDF_CHUNK at a time: chunk -> idfs, a list, the weighting new dfs copy)): terms of one
        # df share a weighting.
        self._df_weights: OrderedDict[Variant, tuple[CollectionStats, _ByDf]] = OrderedDict()
        self._last_by_df: tuple[Variant, CollectionStats, _ByDf] | None = None
        # term -> its document frequency in ``index`` (what a ranking reads: impacts.prefer).
        self._dfs: dict[str, int] = {}
        self._lock = threading.Lock()
        self.suggester = Suggester(index)
        self.filters: Filters | None = None  # set by :meth:`filtered`

    def filtered(self, filters: Filters | None) -> Searcher:
        """Return a searcher (sharing this one's caches) whose rankings keep to ``filters``.

        Filters restrict the documents returned and counted; N, df and the average length stay
        the collection's, so each score is the unfiltered one (:mod:`.filters`).
        """
        other = copy.copy(self)
        other.filters = filters if filters else None
        return other

    def _allowed(self, parsed: ParsedQuery) -> Any:
        """Return the allowed mask of a ranking: the query's constraints and the filters."""
        constraints = allowed_mask(self.index, parsed) if parsed.has_constraints else None
        return filtered_allowed(self.index, constraints, self.filters)

    # -- analysis --------------------------------------------------------------------------------

    def parse(self, query: str, *, syntax: bool = True) -> ParsedQuery:
        """Parse and analyse ``query`` with the index's analyser."""
        return parse_query(query, self.index.analyzer, syntax=syntax)

    def analyze(self, query: str | ParsedQuery, *, syntax: bool = True) -> QueryAnalysis:
        """Return the query's tokens with their status (stop-listed, unknown...) and role."""
        parsed = query if isinstance(query, ParsedQuery) else self.parse(query, syntax=syntax)
        term_id = self.index.term_id
        tokens = parsed.tokens
        # Each distinct term is looked up once (a long query repeats its words).
        missing = [
            t for t in {tok.term: None for tok in tokens} if t is not None and term_id(t) < 0
        ]
        return analysis_of(parsed, missing)

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
        return self._weigh(self._table(variant, feedback), term, variant, feedback)

    def _table(self, variant: Variant, feedback: Feedback | None) -> dict[str, TermWeight | None]:
        """Return the cached weightings of (``variant``, ``feedback``) by term."""
        last = self._last_table  # a run of queries under one variant: no hash of it per query
        if last is not None and last[0] is variant and last[1] is feedback:
            return last[2]
        key = (variant, feedback)
        with self._lock:
            table = self._weights.get(key)
            if table is None:
                table = self._weights[key] = {}
                while len(self._weights) > self.CACHED_VARIANTS:
                    self._weights.popitem(last=False)
            else:
                self._weights.move_to_end(key)
        self._last_table = (variant, feedback, table)
        return table

    def _weigh(
        self,
        table: dict[str, TermWeight | None],
        term: str,
        variant: Variant,
        feedback: Feedback | None,
    ) -> TermWeight | None:
        """Return ``term``'s weighting in ``table``; computed and remembered (and its df) if not.

        One read of the table: it is bounded, and another search may empty it between a test
        and a read of the same term.
        """
        known: TermWeight | None = table.get(term, _UNWEIGHED)
        if known is not _UNWEIGHED:
            return known
        stats = self.term_stats_for(term, variant, feedback)
        w = None if stats is None else variant.weigh(stats, self.statistics.stats)
        if w is not None and stats is not None:
            local = stats if self.statistics is self.index else self.index.term_stats(term)
            self._dfs[term] = local.df if local is not None else 0
            if feedback is not None:
                w = with_feedback(
                    self.index, term, w, stats.df, feedback, self._containing(term, variant)
                )
        if len(table) >= self.CACHE_SIZE:
            table.clear()  # bounded; a search fills back what it needs
        table[term] = w
        return w

    def term_stats_for(
        self, term: str, variant: Variant, feedback: Feedback | None = None
    ) -> TermStats | None:
        """Return ``term``'s df and cf as ``variant`` counts them (bm25f: over its fields)."""
        if not isinstance(variant, BM25F):
            return self.statistics.term_stats(term)
        return bm25f.term_stats(self, term, variant)

    def _containing(self, term: str, variant: Variant) -> Any:
        """Return the documents feedback counts as containing ``term`` (None: its postings)."""
        if not isinstance(variant, BM25F):
            return None
        return bm25f.term_postings(self.index, term, bm25f.scored_fields(self, variant))[0]

    def _weigh_many(
        self,
        table: dict[str, TermWeight | None],
        terms: Sequence[str],
        variant: Variant,
        feedback: Feedback | None,
    ) -> None:
        """Weigh the distinct ``terms`` not in ``table`` yet, together, into it.

        A variant that weighs by df alone (every one but BM25Adpt, whose k1* is fitted per term)
        gives terms of the same df the same weighting, so weightings are kept by df too
        (:meth:`_by_df`): a query's new term usually costs a df look-up, and the new dfs are
        weighed in one vectorised idf call (:meth:`Variant.weigh_many`, :meth:`Variant.weigh`'s
        numbers bit for bit).
        """
        statistics = self.statistics
        own = statistics is self.index
        if own and feedback is None and _weighs_by_df(variant):  # the common case, tested first
            self._weigh_own_by_df(table, terms, variant)
            return
        if feedback is not None or isinstance(variant, BM25F):
            for term in terms:
                self._weigh(table, term, variant, feedback)
            return
        if not _weighs_by_df(variant):  # weighed per term (BM25Adpt; BM25F went above)
            if len(terms) < 2:
                for term in terms:
                    self._weigh(table, term, variant, feedback)
                return
            known = [st for st in map(statistics.term_stats, terms) if st is not None]
            weights = variant.weigh_many(known, statistics.stats)
            weighed: dict[str, tuple[str, int, TermWeight | None]] = {
                t: (t, 0, None) for t in terms
            }
            for st, w in zip(known, weights, strict=True):
                weighed[st.term] = (st.term, st.df, w)
            self._remember(table, list(weighed.values()), own)
            return
        # (own statistics were weighed above): a shard's terms, dfs from the whole collection
        stats = statistics.stats
        by_df, chunks, _proto = self._df_table(variant, stats)
        dfs = list(map(_df_of(statistics), terms))
        found: list[tuple[str, int, TermWeight | None]] = []
        new_dfs: dict[int, None] = {}
        for term, df in zip(terms, dfs, strict=True):
            got = by_df.get(df) if df > 0 else None  # read once: another search may clear it
            if got is None and df > 0:
                new_dfs[df] = None
            found.append((term, df, got))
        if new_dfs:
            new = by_df_module.weigh_dfs(variant, stats, list(new_dfs), chunks)
            if len(by_df) + len(new) >= self.CACHE_SIZE:
                by_df.clear()  # bounded; later searches fill back what they need
            by_df.update(new)
            found = [(t, df, new[df] if got is None and df > 0 else got) for t, df, got in found]
        self._remember(table, found, own)

    def _weigh_own_by_df(
        self, table: dict[str, TermWeight | None], terms: Sequence[str], variant: Variant
    ) -> None:
        """Do :meth:`_weigh_many` for a variant that weighs by df alone, with the index's stats.

        The new terms' dfs in one compiled call (:meth:`Index.term_dfs`), their weightings by df
        into ``table`` and their dfs into ``_dfs`` in another (``by_df.remember_weighing``),
        which weighs the new dfs itself from their chunks of idfs; only dfs whose chunk is not
        computed yet (or above :data:`~.by_df.IDF_RANGE`) are weighed here (``by_df.weigh_dfs``).
        """
        stats = self.index.stats
        by_df, chunks, proto = self._df_table(variant, stats)
        words = terms if type(terms) is list else list(terms)
        dfs = self.index.term_dfs(words)
        if len(table) + len(words) >= self.CACHE_SIZE:
            table.clear()  # bounded; a search fills back what it needs
        if len(by_df) + len(words) >= self.CACHE_SIZE:
            by_df.clear()  # bounded; later searches fill back what they need
        top = min(by_df_module.IDF_RANGE, int(stats.n_docs))
        memo, size = self._dfs, by_df_module.IDF_CHUNK
        remember = by_df_module.remember_weighing
        missing = remember(words, dfs, by_df, table, memo, chunks, size, top, proto)
        if missing:  # (a chunk of idfs not computed yet, or a df above top)
            by_df.update(by_df_module.weigh_dfs(variant, stats, missing, chunks))
            remember(words, dfs, by_df, table, memo, chunks, size, top, proto)

    def _remember(
        self,
        table: dict[str, TermWeight | None],
        weighed: Sequence[tuple[str, int, TermWeight | None]],
        own: bool,
    ) -> None:
        """Put (term, df, weighting) into ``table``, and each term's df in this index into _dfs."""
        if len(table) + len(weighed) >= self.CACHE_SIZE:
            table.clear()  # bounded; a search fills back what it needs
        dfs = self._dfs
        local = self.index.term_df
        for term, df, w in weighed:
            table[term] = w
            if w is not None:
                dfs[term] = df if own else local(term)

    def _by_df(self, variant: Variant, stats: CollectionStats) -> dict[int, TermWeight]:
        """Return the weightings of ``variant`` by df under ``stats`` (the latest variants)."""
        return self._df_table(variant, stats)[0]

    def _df_table(
        self, variant: Variant, stats: CollectionStats
    ) -> tuple[dict[int, TermWeight], dict[int, Any], TermWeight]:
        """Return :meth:`_by_df`, its chunks of idfs and the weighting its new dfs copy.

        The chunks: the idfs computed so far (see ``by_df.weigh_dfs``); the copied weighting:
        ``by_df.prototype``'s (see ``by_df.remember_weighing``).
        """
        last = self._last_by_df  # a run of queries under one variant: no hash of it per query
        if last is not None and last[0] is variant and last[1] is stats:
            return last[2]
        with self._lock:
            got = self._df_weights.get(variant)
            if got is not None and got[0] is stats:
                self._df_weights.move_to_end(variant)
        if got is None or got[0] is not stats:
            got = (stats, ({}, {}, by_df_module.prototype(variant, stats)))
            with self._lock:
                self._df_weights[variant] = got
                while len(self._df_weights) > self.CACHED_VARIANTS:
                    self._df_weights.popitem(last=False)
        self._last_by_df = (variant, stats, got[1])
        return got[1]

    def _weighted(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None
    ) -> list[topk.TermSpec]:
        """Return (term, qtf, weighting) of the scored terms in query order, unknown ones out."""
        return self._weighed(parsed, variant, feedback)[0]

    def _weighed(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None
    ) -> tuple[list[topk.TermSpec], list[str]]:
        """Return :meth:`_weighted`, and the scored terms left out (no weighting) in order."""
        got = self._weighed_postings(parsed, variant, feedback)
        return got[0], got[1]

    def _weighed_postings(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None
    ) -> tuple[list[topk.TermSpec], list[str], int | None]:
        """Return :meth:`_weighed` and the weighed terms' postings here (None: not counted).

        The postings (the sum of their dfs) are what :meth:`_rank` reads. A query whose terms
        are all weighed already costs one compiled call (``by_df.weighed``).
        """
        table = self._table(variant, feedback)
        scored = parsed.scored
        got = by_df_module.weighed(scored, table, self._dfs)
        if type(got) is tuple:
            return got
        self._weigh_many(table, got, variant, feedback)
        got = by_df_module.weighed(scored, table, self._dfs)
        if type(got) is tuple:
            return got
        out: list[topk.TermSpec] = []
        unknown: list[str] = []
        for term, qtf in scored:
            w = self._weigh(table, term, variant, feedback)
            if w is None:
                unknown.append(term)
            else:
                out.append((term, qtf, w))
        return out, unknown, None

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
        if not parsed.syntax and feedback is None and self.statistics is self.index:
            variant = variant or Lucene()
            if not isinstance(variant, BM25F):
                return self._search_bag(parsed, variant, k, contributions, count)
        return self.search_parsed(
            parsed, variant, k, feedback=feedback, contributions=contributions, count=count
        )

    def _search_bag(
        self, parsed: ParsedQuery, variant: Variant, k: int, contributions: bool, count: bool
    ) -> SearchResult:
        """Do :meth:`search_parsed` for a bag of words, its analysis read off the weightings.

        In a bag of words every analysed token is a scored term, and (with this index's own
        statistics, no feedback and one field) a term has no weighting exactly when it is in
        no document: the terms :meth:`analyze` would look up again are the ones weighed as
        None (a test compares the two paths on random queries under every variant).
        """
        started = time.perf_counter()
        k = self.check_k(k)
        if not parsed.scored:
            raise QueryError(_empty_reason(parsed))
        terms, unknown, postings = self._weighed_postings(parsed, variant, None)
        analysis = analysis_of(parsed, unknown)
        hits, n_matches = self._rank(parsed, terms, k, contributions, count, postings)
        stats = self.statistics.stats
        return SearchResult(
            parsed.text, analysis, variant, hits, n_matches, stats.n_docs, stats.avgdl,
            time.perf_counter() - started, None,
        )  # fmt: skip

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

    def search_many(
        self,
        queries: Sequence[str | Sequence[str] | ParsedQuery],
        variant: Variant | None = None,
        k: int = 10,
        *,
        feedback: Feedback | None = None,
        syntax: bool = True,
        contributions: bool = False,
        count: bool = False,
        threads: int | None = 1,
    ) -> list[SearchResult | QueryError]:
        """Rank many queries at once (evaluation runs, batch retrieval): one result per query.

        A query is a text (parsed as :meth:`search` does, ``syntax`` applying), a sequence of
        already-analysed terms (as :meth:`search_terms`) or a :class:`ParsedQuery`. Each result
        equals what searching the query alone returns; a query with nothing to search for gives
        its :class:`QueryError` in its place, so one bad query never loses the others. By default
        hits carry ids and scores only (``contributions=False``, ``count=False``: what a run
        needs), and every hit stays in arrays until read (``result.hits.docids()``).

        ``threads`` (None: one per core, see :func:`~bm25desk.engine.scoring.batch.default_threads`)
        search chunks of queries concurrently; results keep the order of ``queries``.

        Raises
        ------
        QueryError
            When ``k`` is not a whole number of at least 1 (before any search).
        """
        variant = variant or Lucene()
        k = self.check_k(k)
        with batch.no_collection():
            return self._search_many(
                queries, variant, k, feedback, syntax, contributions, count, threads
            )

    def _search_many(
        self,
        queries: Sequence[str | Sequence[str] | ParsedQuery],
        variant: Variant,
        k: int,
        feedback: Feedback | None,
        syntax: bool,
        contributions: bool,
        count: bool,
        threads: int | None,
    ) -> list[SearchResult | QueryError]:
        """Do :meth:`search_many` (``variant`` given, ``k`` checked)."""
        if not isinstance(queries, list | tuple):  # (a generator, dict keys: read in waves)
            queries = list(queries)
        n = batch.default_threads() if threads is None else max(1, int(threads))
        done: dict[int, SearchResult] = {}
        if not contributions and not isinstance(variant, BM25F) and self.strategy != "kernel":
            # One kernel call per chunk of queries (evaluation runs), a wave of queries being
            # prepared while the previous one is ranked: see batch.py.
            parsed, done = batch.search_waves(self, queries, syntax, variant, k, feedback, count, n)
        else:
            parsed = [self._as_parsed(q, syntax) for q in queries]
            self._weigh_new(parsed, variant, feedback)
        if len(done) == len(parsed):
            return [done[i] for i in range(len(parsed))]

        def one(i: int) -> SearchResult | QueryError:
            got = done.get(i)
            if got is not None:
                return got
            try:
                return self.search_parsed(
                    parsed[i], variant, k, feedback=feedback, contributions=contributions,
                    count=count,
                )  # fmt: skip
            except QueryError as exc:
                return exc

        return batch.run_chunked(one, range(len(parsed)), n)

    def _weigh_new(
        self, parsed: Sequence[ParsedQuery], variant: Variant, feedback: Feedback | None
    ) -> None:
        """Weigh the distinct terms of ``parsed`` not weighed yet, at once (before any search).

        Rather than searches racing to weigh them on several threads.
        """
        table = self._table(variant, feedback)
        terms = dict.fromkeys(t for p in parsed for t, _ in p.scored)
        missing = [t for t in terms if t not in table]
        if missing and len(table) + len(missing) >= self.CACHE_SIZE:
            # The table is bounded: emptied, and every term of these queries weighed again
            # with the new ones (emptied by the weighing, it would lose the ones it had).
            table.clear()
            missing = list(terms)
        if missing:
            if len(missing) > batch.CHUNK:  # many new terms, all read right after: no read-ahead
                self.index.look_up(missing)
            self._weigh_many(table, missing, variant, feedback)

    def _as_parsed(self, query: str | Sequence[str] | ParsedQuery, syntax: bool) -> ParsedQuery:
        if isinstance(query, ParsedQuery):
            return query
        if isinstance(query, str):
            return self.parse(query, syntax=syntax)
        return parse_terms(list(query))

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
        if not parsed.scored:
            raise QueryError(_empty_reason(parsed))
        analysis = self.analyze(parsed)
        terms = self._weighted(parsed, variant, feedback)
        if isinstance(variant, BM25F):  # fields: an exact numpy path of its own
            allowed = self._allowed(parsed)
            hits, n_matches = bm25f.rank(self, variant, terms, k, allowed, contributions)
            n_matches = n_matches if count else -1
        else:
            hits, n_matches = self._rank(parsed, terms, k, contributions, count)
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

    def _rank(
        self,
        parsed: ParsedQuery,
        terms: list[topk.TermSpec],
        k: int,
        contributions: bool,
        count: bool,
        postings: int | None = None,
    ) -> tuple[Hits, int]:
        """Return the top ``k`` as lazy hits, and the match count (-1 unless ``count``).

        ``postings``: the terms' postings in this index (their dfs), when the caller has them.

        Exhaustive scoring (in C from the stored blocks, or numpy over cached impacts without
        the kernel: :mod:`~bm25desk.engine.scoring.impacts`) on small collections, when the
        postings cover much of the collection or k is deep; else the pruning kernel. All give
        the dense float64 ranking bit for bit, so which one ran never shows.
        """
        index = self.index
        allowed = self._allowed(parsed) if self.filters or parsed.has_constraints else None
        if postings is None:
            dfs = self._dfs
            postings = 0
            for t in terms:
                postings += dfs.get(t[0], 0)
        detail: Any = None
        # One document more than asked for: whether the last hit ties with the next one.
        strategy = self.strategy
        exhaustive = strategy == "exhaustive" or (
            strategy == "auto"
            and impacts.prefer(index, postings, k + 1, topk.HAVE_KERNEL, len(terms))
        )
        got = (
            topk.exhaustive_top_k(index, terms, k + 1, allowed, rows=contributions, count=count)
            if exhaustive
            else None
        )
        if got is not None:  # every posting added in C: no per-term state, the count for free
            top, n_matches = got
            docnos, scores = top.docnos, top.scores
            if contributions:
                detail = (top.tfs[:k], top.parts[:k])
            n_matches = n_matches if count else -1
        elif exhaustive:  # without the kernel: numpy over cached impacts
            docnos, scores, n_matches = impacts.top_k(index, terms, k + 1, allowed)
            top_docnos = docnos[:k]
            detail = lambda: _matrices(index, terms, top_docnos)  # noqa: E731
            n_matches = n_matches if count else -1
        else:
            # Ids and scores only: the whole ranking in one compiled call when it can be.
            fast = None if contributions or not terms else topk.ranked(index, terms, k + 1, allowed)
            if fast is not None:
                docnos, scores = fast
            else:
                top = topk.top_k(index, terms, k + 1, allowed, rows=contributions)
                docnos, scores = top.docnos, top.scores
                if contributions:
                    detail = (top.tfs[:k], top.parts[:k])
            n_matches = topk.count_matches(index, terms, allowed) if count else -1
        next_score = float(scores[k]) if scores.size > k else None
        if not contributions:
            terms, detail = None, None  # type: ignore[assignment]
        hits = Hits(index, docnos[:k], scores[:k], next_score, terms, detail, self.statistics)
        return hits, n_matches

    def check_k(self, k: Any) -> int:
        """Return how many hits to rank for a request of ``k``: at most every live document.

        Raises
        ------
        QueryError
            When ``k`` is not a whole number of at least 1.
        """
        if type(k) is int and k >= 1:  # the common case, without isinstance checks
            n = self.index.n_docs
            return k if k <= n else max(n, 1)
        if type(k) is not int and (isinstance(k, bool) or not isinstance(k, int | np.integer)):
            raise QueryError(f"k must be a whole number, not {k!r}")
        if k < 1:
            raise QueryError("k must be at least 1")
        # Asking for more than every document means every document (-k 99999999999999999999).
        return min(int(k), max(self.index.n_docs, 1))

    def scores(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None = None
    ) -> tuple[F64, Any]:
        """Return (score by docno, match mask by docno): the dense view behind a ranking."""
        terms = self._weighted(parsed, variant, feedback)
        if isinstance(variant, BM25F):
            scores, matched, _ = bm25f.dense(self, variant, terms)
        elif self.index.n_slots <= impacts.DENSE_MAX_DOCS:
            scores, matched = impacts.dense(self.index, terms)
        else:
            scores, matched = topk.dense_scores(self.index, terms)
        allowed = self._allowed(parsed)
        if allowed is not None:
            matched &= allowed
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


_UNWEIGHED: Any = object()
"""What a weight table gives for a term not weighed yet (None: weighed, in no document)."""

_ByDf = tuple[dict[int, TermWeight], dict[int, Any], TermWeight]
"""A variant's weightings by df, its chunks of idfs and the weighting new dfs copy."""


def analysis_of(parsed: ParsedQuery, missing: Sequence[str]) -> QueryAnalysis:
    """Return the analysis of ``parsed`` whose terms ``missing`` are in no document."""
    tokens = parsed.tokens
    unknown: tuple[str, ...] = ()
    if missing:
        gone = set(missing)
        tokens = tuple(_unknown(tok) if tok.term in gone else tok for tok in tokens)
        unknown = tuple(dict.fromkeys(t.term for t in tokens if t.term in gone))
    if not parsed.syntax and len(parsed.scored) == len(parsed.tokens):
        # a bag of words whose every token is a distinct scored term: none was stop-listed
        return QueryAnalysis(parsed, tokens, unknown, ())
    stops = [t.surface for t in parsed.tokens if t.status == "stop"]
    stopped = tuple(dict.fromkeys(stops)) if stops else ()
    return QueryAnalysis(parsed, tokens, unknown, stopped)


_UNKNOWN: dict[QueryToken, QueryToken] = {}
"""A token's "unknown" twin, made once (tokens are immutable)."""


def _unknown(tok: QueryToken) -> QueryToken:
    """Return ``tok`` with status ``unknown`` (its term is in no document)."""
    got = _UNKNOWN.get(tok)
    if got is None:
        got = QueryToken(tok.surface, tok.term, "unknown", tok.role)
        if len(_UNKNOWN) < 100_000:  # bounded on pathological input
            _UNKNOWN[tok] = got
    return got


def _matrices(index: Index, terms: list[topk.TermSpec], docnos: Any) -> tuple[Any, Any]:
    """Return the (tf, tf part) matrices of ``docnos`` × ``terms`` (for contributions)."""
    n = len(terms)
    tfs = np.zeros((docnos.size, n), dtype=np.int32)
    parts = np.zeros((docnos.size, n), dtype=np.float64)
    for t, (tf, part) in enumerate(topk.tf_parts(index, terms, docnos)):
        tfs[:, t] = tf
        parts[:, t] = part
    return tfs, parts


_BY_DF: dict[type, bool] = {}


def _weighs_by_df(variant: Variant) -> bool:
    """Return whether ``variant`` weighs a term by its df alone, one field (memo by type).

    Every variant but BM25Adpt (k1* fitted per term) and BM25F (dfs over fields); the test of
    the type is made once: ``isinstance`` on an ABC costs ~1 µs a query.
    """
    kind = type(variant)
    got = _BY_DF.get(kind)
    if got is None:
        got = _BY_DF[kind] = kind.weigh is Variant.weigh and not issubclass(kind, BM25F)
    return got


def _df_of(statistics: Statistics) -> Any:
    """Return a function giving a term's df under ``statistics`` (0 when it is unknown)."""

    def df(term: str) -> int:
        st = statistics.term_stats(term)
        return 0 if st is None else st.df

    return df


def _empty_reason(parsed: ParsedQuery) -> str:
    if not parsed.tokens:
        if parsed.text.strip() and not any(c.isalnum() for c in parsed.text):
            return "nothing to search for: the query has no words, only punctuation or symbols"
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
