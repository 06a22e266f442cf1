"""Experiments: search every query with every configuration, evaluate the runs, check the outcome.

Queries are bags of words by default: each text is analysed with the index's analyser and scored
with ``searcher.search_terms``, so a test collection's hyphens, quotes and capitalised AND/OR/NOT
are text, never operators (``query_syntax=True`` sends the text to ``searcher.search`` instead).
Progress is reported in searches; a cancel token is checked before every search. The conventions
are :class:`~bm25desk.evaluation.metrics.EvalOptions`; the checks of
:mod:`bm25desk.evaluation.checks` add notes and hints, and refuse numbers that cannot be right.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.scoring.search import QueryError
from bm25desk.engine.scoring.variants import Variant
from bm25desk.evaluation import checks
from bm25desk.evaluation.configs import variant_name
from bm25desk.evaluation.data import EvalInputError, Qrels, Queries, Query, Ranking, Run
from bm25desk.evaluation.interfaces import HitLike, SearcherLike, SearchResultLike
from bm25desk.evaluation.metrics import (
    DEFAULT_METRICS,
    EvalOptions,
    Measure,
    Scorer,
    as_qrels_mapping,
    metric_cutoff,
    parse_metrics,
)
from bm25desk.evaluation.results import ConfigResult, ExperimentResult, IndexSummary
from bm25desk.evaluation.runs import run_tag

__all__ = ["run_experiment"]


@dataclass(frozen=True, slots=True)
class _Inputs:
    """The queries and judgements of an experiment, with where they came from."""

    items: tuple[Query, ...]
    queries: Queries | Sequence[Query]
    queries_source: str
    queries_format: str
    judgements: Mapping[str, Mapping[str, int]]
    qrels_source: str
    qrels_format: str

    @classmethod
    def of(
        cls,
        queries: Queries | Iterable[Query] | Mapping[str, str],
        qrels: Qrels | Mapping[str, Mapping[str, int]],
    ) -> _Inputs:
        if isinstance(queries, Queries):
            items, q_source, q_format = queries.items, queries.source, queries.format
        elif isinstance(queries, Mapping):
            items = tuple(Query(str(q), str(t)) for q, t in queries.items())
            q_source, q_format = "<mapping>", ""
        else:
            items, q_source, q_format = tuple(queries), "<list>", ""
        kept = queries if isinstance(queries, Queries) else items
        r_source = qrels.source if isinstance(qrels, Qrels) else "<mapping>"
        r_format = qrels.format if isinstance(qrels, Qrels) else ""
        return cls(items, kept, q_source, q_format, as_qrels_mapping(qrels), r_source, r_format)

    def said(self, which: str) -> str:
        """``read as smart from CISI.QRY``: how one input was read, for messages."""
        fmt, source = (
            (self.queries_format, self.queries_source)
            if which == "queries"
            else (self.qrels_format, self.qrels_source)
        )
        return f"read as {fmt} from {source}" if fmt else f"given as {source}"


@dataclass(slots=True)
class _Plan:
    """What is settled before searching: the topic set, its checks, notes and hints so far."""

    inputs: _Inputs
    scorer: Scorer
    judged_without_query: tuple[str, ...]
    missing: dict[str, tuple[str, ...]]
    missing_relevant: int
    notes: list[str]
    hints: list[str]

    @property
    def judgements(self) -> Mapping[str, Mapping[str, int]]:
        return self.inputs.judgements

    @classmethod
    def of(
        cls,
        searcher: SearcherLike,
        inputs: _Inputs,
        measures: Sequence[Measure],
        k: int,
        opts: EvalOptions,
    ) -> _Plan:
        """Check the inputs against each other and the index (raises EvalInputError)."""
        judgements = inputs.judgements
        topic = [q.qid for q in inputs.items]
        scorer = Scorer(tuple(measures), judgements, topic, opts)
        if not scorer.judged:
            raise EvalInputError(
                f"none of the {len(topic)} queries has judgements in {inputs.qrels_source} "
                f"(query ids like {', '.join(repr(q) for q in topic[:3])}; "
                f"judged ids like {', '.join(repr(q) for q in list(judgements)[:3])})"
            )
        topic_set = set(topic)
        judged_without_query = tuple(q for q in judgements if q not in topic_set)
        notes = _input_notes(measures, k, len(judged_without_query))
        hint = checks.ordinal_ids_hint(inputs.queries, judgements)
        index = searcher.index
        missing, missing_relevant = checks.missing_judged(index, scorer.judged, judgements)
        checks.require_findable(index, scorer.judged, judgements, missing, inputs.said("qrels"))
        if note := checks.missing_note(missing, missing_relevant):
            notes.append(note)
        hints = [hint] if hint else []
        return cls(inputs, scorer, judged_without_query, missing, missing_relevant, notes, hints)

    def result(
        self,
        searcher: SearcherLike,
        configs: tuple[ConfigResult, ...],
        searched: tuple[str, ...],
        k: int,
    ) -> ExperimentResult:
        """Assemble the experiment's result (hints are notes too, listed last)."""
        return ExperimentResult(
            configs=configs,
            metrics=self.scorer.names,
            options=self.scorer.options,
            k=k,
            qids=self.scorer.qids,
            searched=searched,
            unjudged=self.scorer.unjudged,
            judged_without_query=self.judged_without_query,
            missing_judged=self.missing,
            missing_relevant=self.missing_relevant,
            index=IndexSummary.of(searcher),
            queries_source=self.inputs.queries_source,
            qrels_source=self.inputs.qrels_source,
            created=_now(),
            notes=(*self.notes, *self.hints),
            hints=tuple(self.hints),
            queries_format=self.inputs.queries_format,
            qrels_format=self.inputs.qrels_format,
        )


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _config_names(configs: Sequence[Variant], k: int) -> list[str]:
    if not configs:
        raise EvalInputError("no configuration to evaluate")
    if k < 1:
        raise EvalInputError(f"k must be at least 1, not {k}")
    names = [variant_name(v) for v in configs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise EvalInputError(f"configuration listed twice: {', '.join(dupes)}")
    return names


def _input_notes(measures: Sequence[Measure], k: int, judged_without_query: int) -> list[str]:
    notes: list[str] = []
    for m in measures:
        cutoff = metric_cutoff(m)
        if cutoff is not None and cutoff > k:
            notes.append(f"{m} looks at {cutoff} hits but the runs are only {k} deep")
    if judged_without_query:
        notes.append(
            f"{judged_without_query} judged queries are not in the query set and were not evaluated"
        )
    return notes


def _columns(hits: Sequence[HitLike]) -> tuple[list[str], Sequence[float]]:
    """Return the hits' ids and scores (whole columns when the hits are the engine's arrays)."""
    docids = getattr(hits, "docids", None)
    if callable(docids):
        return docids(), hits.scores  # type: ignore[attr-defined]
    return [h.docid for h in hits], [float(h.score) for h in hits]


def _ranking_of(
    docids: list[str], scores: Sequence[float], qid: str, k: int, drop_self: bool
) -> Ranking:
    if drop_self and qid in docids:
        keep = [i for i, d in enumerate(docids) if d != qid]
        docids = [docids[i] for i in keep]
        scores = [float(scores[i]) for i in keep]
    return Ranking.of(docids[:k], scores[:k])


class _Searches:
    """Search queries with one variant, the way the experiment asks (bag of words or syntax).

    With the engine's searcher, a chunk of queries goes to ``search_many`` in one call (threads,
    no per-hit objects); any other searcher is asked query by query.
    """

    def __init__(
        self,
        searcher: SearcherLike,
        depth: int,
        tokenize: Callable[[str], list[str]] | None,
        query_syntax: bool,
        threads: int | None = None,
    ) -> None:
        if query_syntax and tokenize is not None:
            raise EvalInputError("tokenize and query_syntax exclude each other")
        self.searcher = searcher
        self.depth = depth
        self.query_syntax = query_syntax
        self.threads = threads
        self.terms_of = tokenize if tokenize is not None else searcher.index.analyzer.terms
        # Queries with nothing to search for (only stop words, only prohibitions): empty rankings.
        self.unsearchable: dict[str, str] = {}

    def hits(self, query: Query, variant: Variant) -> Sequence[HitLike]:
        """Return the top hits of ``query`` (none when there is nothing to search for)."""
        return self.many([query], variant)[0]

    def many(self, queries: Sequence[Query], variant: Variant) -> list[Sequence[HitLike]]:
        """Return the top hits of every query, in order (none for a query with nothing to find)."""
        asked: list[str | list[str]] = []
        for query in queries:
            asked.append(query.text if self.query_syntax else self.terms_of(query.text))
        out: list[Sequence[HitLike]] = [() for _ in queries]
        todo = [i for i, q in enumerate(asked) if q]
        for i in set(range(len(queries))) - set(todo):
            self.unsearchable[queries[i].qid] = "no terms left after analysis"
        search_many = getattr(self.searcher, "search_many", None)
        if search_many is not None:
            found = search_many(
                [asked[i] for i in todo], variant, k=self.depth, syntax=self.query_syntax,
                contributions=False, count=False, threads=self.threads,
            )  # fmt: skip
        else:
            found = [self._one(asked[i], variant) for i in todo]
        for i, res in zip(todo, found, strict=True):
            if isinstance(res, QueryError):
                self.unsearchable[queries[i].qid] = str(res)
            else:
                out[i] = res.hits
        return out

    def _one(self, query: str | list[str], variant: Variant) -> SearchResultLike | QueryError:
        """Search one query with a searcher that has no ``search_many``."""
        try:
            if isinstance(query, str):
                # Per-term breakdowns are for display; a run needs ids and scores only.
                return self.searcher.search(
                    query, variant, k=self.depth, contributions=False, count=False
                )
            return self.searcher.search_terms(
                query, variant, k=self.depth, contributions=False, count=False
            )
        except QueryError as exc:
            return exc

    def note(self) -> str | None:
        """Name the queries that had nothing to search for (None when every query had terms)."""
        if not self.unsearchable:
            return None
        sample = ", ".join(list(self.unsearchable)[:5])
        more = " ..." if len(self.unsearchable) > 5 else ""
        return (
            f"{len(self.unsearchable)} queries had nothing to search for (e.g. only stop words) "
            f"and count 0: {sample}{more}"
        )


BATCH = 64
"""Queries per call into the searcher: progress and cancellation are checked between calls."""


def _search_variant(
    searches: _Searches,
    variant: Variant,
    name: str,
    to_search: Sequence[Query],
    judgements: Mapping[str, Mapping[str, int]],
    k: int,
    opts: EvalOptions,
    step: Callable[[], None],
    cancel: CancelToken | None,
) -> tuple[Run, checks.SearchStats, float]:
    """Search every query with one variant: its run, what it retrieved, and the seconds taken."""
    rankings: dict[str, Ranking] = {}
    seen = checks.SearchStats()
    started = time.perf_counter()
    for lo in range(0, len(to_search), BATCH):
        if cancel is not None:
            cancel.check()
        chunk = to_search[lo : lo + BATCH]
        for query, hits in zip(chunk, searches.many(chunk, variant), strict=True):
            docids, scores = _columns(hits)
            seen.add(query.qid, docids, judgements.get(query.qid))
            ranking = _ranking_of(docids, scores, query.qid, k, opts.drop_self_hits)
            if len(ranking):
                rankings[query.qid] = ranking
            step()
    seconds = time.perf_counter() - started
    return Run(rankings, tag=run_tag(name), source=""), seen, seconds


# Long only by its docstring (every parameter explained); the code is ~35 lines.
def run_experiment(
    searcher: SearcherLike,
    queries: Queries | Iterable[Query] | Mapping[str, str],
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    configs: Sequence[Variant],
    metrics: str | Iterable[str | Measure] = DEFAULT_METRICS,
    *,
    k: int = 1000,
    options: EvalOptions | None = None,
    tokenize: Callable[[str], list[str]] | None = None,
    query_syntax: bool = False,
    search_unjudged: bool = False,
    keep_runs: bool = True,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    threads: int | None = None,
) -> ExperimentResult:
    """Search every query with every configuration and evaluate the runs.

    Parameters
    ----------
    searcher
        The engine's ``Searcher`` (anything with its ``search``/``search_terms``/``index``).
    queries
        The topic set: :class:`Queries`, ``Query`` objects or ``{qid: text}``.
    qrels
        Judgements.
    configs
        Variants with their parameters, e.g. ``[get_variant("lucene", k1=0.9, b=0.4)]``. Names
        (``repr``) must be distinct.
    metrics
        Metric names (see :func:`~bm25desk.evaluation.metrics.parse_metrics`).
    k
        Ranking depth per query (1000 is the TREC custom; R@1000 needs it).
    options
        Conventions (see :class:`~bm25desk.evaluation.metrics.EvalOptions`).
    tokenize
        Turns a query text into the terms to score (to reproduce an experiment with its own
        tokenisation). Default: the index's analyser (``searcher.index.analyzer.terms``).
        The terms are scored as a bag of words with ``searcher.search_terms``.
    query_syntax
        Send the query text to ``searcher.search`` instead, which understands the app's query
        syntax (``+must -not "a phrase" title:x``). Off by default: test-collection queries are
        natural language, and their hyphens, quotes and capitalised AND/OR/NOT are not operators.
    search_unjudged
        Also search queries without judgements (their rankings go into the runs; they do not
        change the metrics: ``average="all"`` counts them 0 either way).
    keep_runs
        Keep the ranked lists in the result (needed for run files; sweeps turn it off).
    progress
        ``progress(done, total)`` in searched queries (throttled).
    cancel
        Checked before every batch of searches (:data:`BATCH` queries); raises ``Cancelled``.
    threads
        Threads that search a batch concurrently (None: one per core; 1: none). The runs are
        the same whatever the number.

    Returns
    -------
    ExperimentResult
        With notes about the inputs, and hints (``result.hints``, also in ``result.notes``) when
        queries find themselves or SMART query numbers do not fit the judgements.

    Raises
    ------
    EvalInputError
        No configuration, duplicate configurations, bad ``k``, unknown metric, no query with
        judgements, or no relevant judged document in the index.
    ImplausibleResultError
        Every metric is 0 for every configuration although queries retrieved documents (a
        subclass of :class:`EvalInputError` that carries the result).
    Cancelled
        Cancellation was requested.
    """
    opts = options or EvalOptions()
    names = _config_names(configs, k)
    plan = _Plan.of(searcher, _Inputs.of(queries, qrels), parse_metrics(metrics), k, opts)
    to_search = [q for q in plan.inputs.items if search_unjudged or q.qid in plan.judgements]
    depth = k + 1 if opts.drop_self_hits else k
    searches = _Searches(searcher, depth, tokenize, query_syntax, threads)
    report = Throttle(progress)
    total, done = len(configs) * len(to_search), 0
    report(0, total)

    def step() -> None:
        nonlocal done
        done += 1
        report(done, total)

    results: list[ConfigResult] = []
    stats: list[checks.SearchStats] = []
    for variant, name in zip(configs, names, strict=True):
        run, seen, seconds = _search_variant(
            searches, variant, name, to_search, plan.judgements, k, opts, step, cancel
        )
        evaluation = plan.scorer(run)
        results.append(ConfigResult(variant, name, evaluation, run if keep_runs else None, seconds))
        stats.append(seen)
    if note := searches.note():
        plan.notes.append(note)
    searched = tuple(q.qid for q in to_search)
    if hint := checks.self_hit_hint(stats, searched, searcher.index, opts.drop_self_hits):
        plan.hints.append(hint)
    result = plan.result(searcher, tuple(results), searched, k)
    inputs = plan.inputs
    zero = checks.check_nonzero(result, stats, inputs.said("queries"), inputs.said("qrels"))
    return result if zero is None else dataclasses.replace(result, notes=(*result.notes, zero))
