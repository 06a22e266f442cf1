"""Evaluation: metrics via ir_measures, experiments over variants, significance, sweeps, exports.

Readers for queries, judgements and runs live in :mod:`bm25desk.evaluation.topics` and are
re-exported here. Every number comes from ``ir_measures`` (which runs ``trec_eval`` through
pytrec_eval for the classic measures); this module only decides *which* queries and *which* ranked
lists it sees, and writes those decisions down.

Conventions (:class:`EvalOptions`, recorded in every result and run card)
--------------------------------------------------------------------------
Queries are bags of words (default ``query_syntax=False``): each text is analysed with the
index's analyser and scored with ``searcher.search_terms``, so a ``-``, a quote, ``AND``/``NOT`` or
a parenthesis in a test collection's natural-language query is just text, never an operator.

``average="judged"`` (default)
    The mean is over the queries that have at least one judgement (even if all judgements are 0).
    A judged query whose ranking is empty counts 0, as ``trec_eval -c`` does (plain ``trec_eval``
    skips judged queries absent from the run file; for runs produced here that only concerns
    queries that retrieved nothing). Queries without judgements are left out.
``average="all"``
    The mean is over every query that was asked; queries without judgements count 0 for every
    metric. Some tutorials report this; on CISI it gives numbers about 0.68 times as large.
``drop_self_hits``
    BEIR's rule for collections where queries are documents too (ArguAna, Quora): a hit whose
    docid equals the query id is removed before evaluation. Experiments then fetch one extra hit
    so that the ranked list is still ``k`` long, as BEIR does.
``ties="engine"`` (default)
    The ranked list is evaluated in the engine's order (score descending, equal scores in internal
    document order). trec_eval re-sorts a run by score and breaks ties by document id, so the
    scores handed to ir_measures are rank-derived (``n, n−1, ..., 1``), which makes its order the
    engine's order exactly, for every provider.
``ties="trec_eval"``
    The raw scores are handed over, and trec_eval orders equal scores by document id (descending),
    as it would for the exported run file. (ir_measures' own ``Judged`` provider breaks ties by
    document id ascending: another reason for the default.)

Exported run files always carry the raw scores; the run card records the convention used.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import itertools
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, cast

import ir_measures
import numpy as np
import numpy.typing as npt

import bm25desk
from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.scoring.search import QueryError
from bm25desk.engine.scoring.variants import Variant
from bm25desk.evaluation.topics import (
    QRELS_FORMATS,
    QUERY_FORMATS,
    EvalInputError,
    Qrels,
    Queries,
    Query,
    Ranking,
    Run,
    detect_qrels_format,
    detect_queries_format,
    format_run,
    parse_qrels,
    parse_queries,
    parse_run,
    read_qrels,
    read_queries,
    read_run,
    write_run,
)

__all__ = [
    "DEFAULT_METRICS",
    "QRELS_FORMATS",
    "QUERY_FORMATS",
    "ConfigResult",
    "EvalInputError",
    "EvalOptions",
    "EvalResult",
    "ExperimentResult",
    "IndexSummary",
    "PairedTest",
    "Qrels",
    "Queries",
    "Query",
    "Ranking",
    "Run",
    "SearcherLike",
    "SweepCell",
    "SweepResult",
    "compare_to_baseline",
    "detect_qrels_format",
    "detect_queries_format",
    "evaluate_run",
    "export_experiment",
    "format_run",
    "metric_cutoff",
    "paired_test",
    "parse_metrics",
    "parse_qrels",
    "parse_queries",
    "parse_run",
    "read_qrels",
    "read_queries",
    "read_run",
    "run_card",
    "run_experiment",
    "run_file_stem",
    "sweep",
    "variant_params",
    "write_per_query_csv",
    "write_run",
]

FloatArray: TypeAlias = npt.NDArray[np.float64]
Measure: TypeAlias = ir_measures.Measure
Average = Literal["judged", "all"]
Ties = Literal["engine", "trec_eval"]

DEFAULT_METRICS: tuple[str, ...] = (
    "RR@10",
    "nDCG@10",
    "AP",
    "P@10",
    "R@100",
    "R@1000",
    "Judged@10",
)
"""MRR@10, nDCG@10, MAP, P@10, Recall@100, Recall@1000 and the judged share of the top 10."""


# --------------------------------------------------------------------------------------------
# What the evaluation needs from the engine (structural: the real Searcher and test fakes fit)
# --------------------------------------------------------------------------------------------


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


def variant_name(variant: Variant) -> str:
    """Return the canonical name of a variant (its ``repr``, e.g. ``Lucene(k1=0.9, b=0.4)``)."""
    return repr(variant)


def variant_key(variant: Variant) -> str:
    """Return the registry key of a variant (``lucene``), or its class name if it has none."""
    key = getattr(variant, "key", None)
    return key if isinstance(key, str) else type(variant).__name__.lower()


def variant_params(variant: Variant) -> dict[str, float]:
    """Return a variant's parameters, ``{field name: value}``, in field order."""
    return {f.name: getattr(variant, f.name) for f in dataclasses.fields(cast(Any, variant))}


def _with_params(variant: Variant, params: Mapping[str, float]) -> Variant:
    """Return ``variant`` with some parameters changed (variants are frozen dataclasses)."""
    changed: Variant = dataclasses.replace(cast(Any, variant), **params)
    return changed


# --------------------------------------------------------------------------------------------
# Options and metrics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """The conventions of an evaluation (see the module docstring for what each one means).

    Parameters
    ----------
    average
        ``"judged"``: mean over queries with judgements; ``"all"``: over all queries, unjudged
        ones counted 0.
    ties
        ``"engine"``: evaluate in the engine's rank order; ``"trec_eval"``: raw scores, trec_eval
        breaks ties by document id.
    drop_self_hits
        Remove a hit whose docid equals the query id (BEIR's ``ignore_identical_ids``).
    """

    average: Average = "judged"
    ties: Ties = "engine"
    drop_self_hits: bool = False

    def __post_init__(self) -> None:
        """Reject unknown conventions."""
        if self.average not in ("judged", "all"):
            raise EvalInputError(f"average must be 'judged' or 'all', not {self.average!r}")
        if self.ties not in ("engine", "trec_eval"):
            raise EvalInputError(f"ties must be 'engine' or 'trec_eval', not {self.ties!r}")

    def describe(self) -> dict[str, str]:
        """Return one sentence per convention, for run cards and reports."""
        average = {
            "judged": "mean over queries with judgements (trec_eval -c); judged queries "
            "with no hits count 0; unjudged queries are not counted",
            "all": "mean over all queries; queries without judgements count 0",
        }[self.average]
        ties = {
            "engine": "engine order (score desc, then internal document order); "
            "rank-derived scores passed to ir_measures",
            "trec_eval": "raw scores; trec_eval orders equal scores by docid",
        }[self.ties]
        self_hits = (
            "a hit whose docid equals the query id is removed (BEIR)"
            if self.drop_self_hits
            else "hits are kept even when docid equals the query id"
        )
        return {"average": average, "ties": ties, "self_hits": self_hits}

    def as_dict(self) -> dict[str, object]:
        """Return the options as JSON-ready data."""
        return {
            "average": self.average,
            "ties": self.ties,
            "drop_self_hits": self.drop_self_hits,
            "description": self.describe(),
        }


def _split_metric_list(text: str) -> list[str]:
    """Split ``"RR@10,nDCG(dcg='exp-log2')@10"`` on commas outside parentheses."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _parse_one_metric(name: str) -> Measure:
    irm: Any = ir_measures  # ir_measures is only partly annotated
    try:
        measure: Any = irm.parse_measure(name)
    except (ValueError, NameError, SyntaxError, TypeError) as exc:
        try:  # trec_eval names: P_10, ndcg_cut_10, recip_rank, map
            found = irm.parse_trec_measure(name)
        except (ValueError, NameError, KeyError, TypeError):
            found = []
        if len(found) != 1:
            raise EvalInputError(
                f"unknown metric {name!r} (ir_measures: {exc}); "
                f"examples: {', '.join(DEFAULT_METRICS)}"
            ) from None
        measure = found[0]
    try:
        supported = bool(irm.DefaultPipeline.supports(measure))
    except AssertionError as exc:  # ir_measures validates parameters with assert
        raise EvalInputError(f"invalid metric {name!r}: {exc}") from None
    if not supported:
        raise EvalInputError(f"metric {name!r} is not supported by the installed ir_measures")
    result: Measure = measure
    return result


def parse_metrics(metrics: str | Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse metric names into ir_measures measures.

    Parameters
    ----------
    metrics
        A comma-separated string (``"RR@10,nDCG@10,AP"``) or an iterable of names or
        ``ir_measures`` measures. ir_measures names are accepted with their aliases (``MRR@10``
        is ``RR@10``, ``MAP`` is ``AP``), and so are trec_eval names (``P_10``, ``recip_rank``).

    Returns
    -------
    tuple of ir_measures.Measure
        In the given order, duplicates removed.

    Raises
    ------
    EvalInputError
        An unknown or unsupported metric, or an empty list.
    """
    items: list[str | Measure] = (
        list(_split_metric_list(metrics)) if isinstance(metrics, str) else list(metrics)
    )
    out: list[Measure] = []
    for item in items:
        m = _parse_one_metric(item) if isinstance(item, str) else item
        if m not in out:
            out.append(m)
    if not out:
        raise EvalInputError("no metric given")
    return tuple(out)


def metric_cutoff(measure: Measure | str) -> int | None:
    """Return a measure's rank cutoff (``10`` for ``nDCG@10``), or None when it has none."""
    m: Any = parse_metrics([measure])[0] if isinstance(measure, str) else measure
    cutoff = getattr(m, "params", {}).get("cutoff")
    return cutoff if isinstance(cutoff, int) else None


# --------------------------------------------------------------------------------------------
# Evaluating one run
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvalResult:
    """Metric values of one run, per query and aggregated.

    Attributes
    ----------
    metrics
        Canonical metric names (ir_measures spelling), in the requested order.
    qids
        The queries the aggregate is taken over, in topic order (see ``options.average``).
    per_query
        Per metric, a read-only array of values aligned with ``qids``.
    aggregate
        Per metric, the aggregate over ``qids`` (the measure's own aggregator: a mean for every
        common measure); NaN when ``qids`` is empty.
    unjudged
        Queries of the topic set without judgements (counted 0 under ``average="all"``, else
        left out).
    options
        The conventions used.
    """

    metrics: tuple[str, ...]
    qids: tuple[str, ...]
    per_query: Mapping[str, FloatArray]
    aggregate: Mapping[str, float]
    unjudged: tuple[str, ...]
    options: EvalOptions

    @property
    def n_queries(self) -> int:
        """Number of queries averaged over."""
        return len(self.qids)

    def values(self, metric: str) -> FloatArray:
        """Return the per-query values of ``metric`` (aligned with :attr:`qids`)."""
        return self.per_query[self._name(metric)]

    def query(self, qid: str) -> dict[str, float]:
        """Return ``{metric: value}`` for one query (KeyError when it was not evaluated)."""
        i = self.qids.index(qid) if qid in self.qids else -1
        if i < 0:
            raise KeyError(qid)
        return {m: float(self.per_query[m][i]) for m in self.metrics}

    def _name(self, metric: str) -> str:
        if metric in self.per_query:
            return metric
        return str(parse_metrics([metric])[0])


class _Scorer:
    """Evaluate runs against one set of judgements and one topic set (reuses the evaluator)."""

    def __init__(
        self,
        measures: tuple[Measure, ...],
        qrels: Mapping[str, Mapping[str, int]],
        topic: Sequence[str],
        options: EvalOptions,
    ) -> None:
        self.measures = measures
        self.names = tuple(str(m) for m in measures)
        self.options = options
        topic = list(dict.fromkeys(topic))
        self.judged = tuple(q for q in topic if q in qrels)
        self.unjudged = tuple(q for q in topic if q not in qrels)
        self.qids = self.judged if options.average == "judged" else tuple(topic)
        judged_qrels = {q: {d: int(r) for d, r in qrels[q].items()} for q in self.judged}
        irm: Any = ir_measures
        self._evaluator: Any = irm.evaluator(list(measures), judged_qrels) if self.judged else None

    def run_dict(self, run: Run) -> dict[str, dict[str, float]]:
        """Turn a run into ir_measures' ``{qid: {docid: score}}`` under the tie convention."""
        out: dict[str, dict[str, float]] = {}
        judged = set(self.judged)
        for qid, ranking in run.rankings.items():
            if qid not in judged:
                continue
            docids: Sequence[str] = ranking.docids
            scores: Sequence[float] = ranking.scores.tolist()
            if self.options.drop_self_hits and qid in docids:
                kept = [(d, s) for d, s in zip(docids, scores, strict=True) if d != qid]
                docids, scores = [d for d, _ in kept], [s for _, s in kept]
            if not docids:
                continue  # ir_measures gives a judged query without a ranking its DEFAULT (0)
            if self.options.ties == "engine":
                # Strictly decreasing, exact in float64: every provider keeps this order.
                n = len(docids)
                out[qid] = {d: float(n - i) for i, d in enumerate(docids)}
            else:
                out[qid] = dict(zip(docids, scores, strict=True))
        return out

    def __call__(self, run: Run) -> EvalResult:
        values: dict[str, dict[str, float]] = {name: {} for name in self.names}
        if self._evaluator is not None:
            for metric in self._evaluator.iter_calc(self.run_dict(run)):
                values[str(metric.measure)][metric.query_id] = float(metric.value)
        per_query: dict[str, FloatArray] = {}
        aggregate: dict[str, float] = {}
        judged = set(self.judged)
        for measure, name in zip(self.measures, self.names, strict=True):
            default = float(getattr(measure, "DEFAULT", 0.0))
            got = values[name]
            # A judged query ir_measures did not report (it reports them all, as trec_eval -c)
            # gets the measure's own value for an empty ranking; unjudged ones count 0 ("all").
            arr = np.array(
                [got.get(q, default) if q in judged else 0.0 for q in self.qids], dtype=np.float64
            )
            arr.flags.writeable = False
            per_query[name] = arr
            agg: Any = measure.aggregator()
            for v in arr.tolist():
                agg.add(v)
            aggregate[name] = float(agg.result()) if len(arr) else math.nan
        return EvalResult(self.names, self.qids, per_query, aggregate, self.unjudged, self.options)


def _as_qrels_mapping(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
) -> Mapping[str, Mapping[str, int]]:
    return qrels.judgements if isinstance(qrels, Qrels) else qrels


def evaluate_run(
    run: Run,
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    metrics: str | Iterable[str | Measure] = DEFAULT_METRICS,
    *,
    queries: Iterable[str] | Queries | None = None,
    options: EvalOptions | None = None,
) -> EvalResult:
    """Evaluate a run (read from a file or produced in memory) with ir_measures.

    Parameters
    ----------
    run
        The ranked lists.
    qrels
        The judgements (a :class:`Qrels` or ``{qid: {docid: relevance}}``).
    metrics
        Metric names (see :func:`parse_metrics`).
    queries
        The topic set: the queries that were asked. Default: the judged queries followed by the
        run's other queries, so ``average="judged"`` counts every judged query, a missing
        ranking as 0 (``trec_eval -c``), and ``average="all"`` adds the run's unjudged queries.
    options
        Conventions; default :class:`EvalOptions()`.

    Returns
    -------
    EvalResult
    """
    opts = options or EvalOptions()
    judgements = _as_qrels_mapping(qrels)
    if queries is None:
        topic = list(judgements) + [q for q in run.rankings if q not in judgements]
    elif isinstance(queries, Queries):
        topic = list(queries.ids())
    else:
        topic = list(queries)
    return _Scorer(parse_metrics(metrics), judgements, topic, opts)(run)


# --------------------------------------------------------------------------------------------
# Experiments
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexSummary:
    """What identifies the searched index in results and run cards."""

    fingerprint: str
    n_docs: int
    analyzer: Mapping[str, Any]

    @classmethod
    def of(cls, searcher: SearcherLike) -> IndexSummary:
        """Read the description of ``searcher.index`` (missing pieces become empty)."""
        index: Any = searcher.index
        fingerprint = getattr(index, "fingerprint", "")
        n_docs = getattr(index, "n_docs", 0)
        analyzer = getattr(index, "analyzer", None)
        spec = analyzer.spec() if analyzer is not None and hasattr(analyzer, "spec") else {}
        return cls(str(fingerprint), int(n_docs), dict(spec))


@dataclass(frozen=True, slots=True)
class ConfigResult:
    """One configuration's outcome in an experiment.

    Attributes
    ----------
    variant
        The variant with its parameters.
    name
        Its canonical name (``repr``), also the run tag.
    evaluation
        Metric values per query and aggregated.
    run
        The ranked lists (top ``k`` of every searched query), or None when not kept (sweeps).
    seconds
        Wall time spent searching (evaluation excluded).
    """

    variant: Variant
    name: str
    evaluation: EvalResult
    run: Run | None
    seconds: float

    @property
    def key(self) -> str:
        """The variant's registry key."""
        return variant_key(self.variant)

    @property
    def aggregate(self) -> Mapping[str, float]:
        """Aggregated metric values."""
        return self.evaluation.aggregate


@dataclass(frozen=True, slots=True)
class ExperimentResult:
    """Everything an experiment produced, and the conventions it used.

    Attributes
    ----------
    configs
        One result per configuration, in the order given.
    metrics
        Canonical metric names.
    options
        The conventions (averaging, ties, self hits).
    k
        Ranking depth per query.
    qids
        The queries every aggregate is taken over (topic order).
    searched
        The queries that were searched (judged ones, plus unjudged ones on request).
    unjudged
        Queries without judgements (see ``options.average``).
    judged_without_query
        Judged query ids absent from the query set (not evaluated).
    missing_judged
        Per query, the judged documents that are not in the index. They cannot be retrieved,
        yet still count (as they must) in recall and in nDCG's ideal ranking.
    missing_relevant
        How many of those are judged relevant (> 0).
    index
        Index fingerprint, size and analyser.
    queries_source, qrels_source
        Where queries and judgements came from.
    created
        ISO 8601 time (UTC) the experiment finished.
    notes
        Things the user should know (depth shallower than a cutoff, missing documents...).
    """

    configs: tuple[ConfigResult, ...]
    metrics: tuple[str, ...]
    options: EvalOptions
    k: int
    qids: tuple[str, ...]
    searched: tuple[str, ...]
    unjudged: tuple[str, ...]
    judged_without_query: tuple[str, ...]
    missing_judged: Mapping[str, tuple[str, ...]]
    missing_relevant: int
    index: IndexSummary
    queries_source: str
    qrels_source: str
    created: str
    notes: tuple[str, ...] = ()

    def config(self, which: int | str) -> ConfigResult:
        """Return a configuration by position, canonical name or (unambiguous) variant key.

        Raises
        ------
        KeyError
            No such configuration, or a key shared by several.
        """
        if isinstance(which, int):
            return self.configs[which]
        by_name = [c for c in self.configs if c.name == which]
        if by_name:
            return by_name[0]
        by_key = [c for c in self.configs if c.key == which]
        if len(by_key) == 1:
            return by_key[0]
        if by_key:
            raise KeyError(f"{which!r} names {len(by_key)} configurations; use the full name")
        raise KeyError(f"no configuration {which!r}")

    @property
    def missing_judged_count(self) -> int:
        """Number of judged (query, document) pairs whose document is not in the index."""
        return sum(len(d) for d in self.missing_judged.values())

    def as_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """Return the result as JSON-ready data (NaN becomes None; runs are not included)."""
        configs = []
        for c in self.configs:
            item: dict[str, Any] = {
                "name": c.name,
                "key": c.key,
                "params": variant_params(c.variant),
                "aggregate": {m: _json_float(v) for m, v in c.aggregate.items()},
                "seconds": round(c.seconds, 4),
            }
            if per_query:
                item["per_query"] = {
                    q: {m: _json_float(c.evaluation.per_query[m][i]) for m in self.metrics}
                    for i, q in enumerate(self.qids)
                }
            configs.append(item)
        return {
            "bm25desk": bm25desk.__version__,
            "ir_measures": ir_measures.__version__,
            "created": self.created,
            "index": dataclasses.asdict(self.index),
            "queries": {
                "source": self.queries_source,
                "evaluated": len(self.qids),
                "searched": len(self.searched),
                "unjudged": len(self.unjudged),
            },
            "qrels": {
                "source": self.qrels_source,
                "judged_without_query": list(self.judged_without_query),
                "missing_from_index": self.missing_judged_count,
                "missing_relevant": self.missing_relevant,
                "missing_by_query": {q: list(d) for q, d in self.missing_judged.items()},
            },
            "k": self.k,
            "metrics": list(self.metrics),
            "conventions": self.options.as_dict(),
            "configs": configs,
            "notes": list(self.notes),
        }


def _json_float(value: float | np.floating[Any]) -> float | None:
    v = float(value)
    return v if math.isfinite(v) else None


def _nested_json(value: Any) -> Any:
    """Nested lists of floats with NaN/inf replaced by None (JSON has no NaN)."""
    if isinstance(value, list):
        return [_nested_json(v) for v in value]
    return _json_float(value)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _as_queries(
    queries: Queries | Iterable[Query] | Mapping[str, str],
) -> tuple[tuple[Query, ...], str]:
    if isinstance(queries, Queries):
        return queries.items, queries.source
    if isinstance(queries, Mapping):
        return tuple(Query(str(q), str(t)) for q, t in queries.items()), "<mapping>"
    return tuple(queries), "<list>"


def _ranking_of(hits: Sequence[HitLike], qid: str, k: int, drop_self: bool) -> Ranking:
    if drop_self:
        hits = [h for h in hits if h.docid != qid]
    hits = hits[:k]
    return Ranking.of([h.docid for h in hits], [float(h.score) for h in hits])


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
        Metric names (see :func:`parse_metrics`).
    k
        Ranking depth per query (1000 is the TREC custom; R@1000 needs it).
    options
        Conventions (see :class:`EvalOptions`).
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
        Checked before every search; raises ``Cancelled``.

    Returns
    -------
    ExperimentResult

    Raises
    ------
    EvalInputError
        No configuration, duplicate configurations, bad ``k``, unknown metric, or no query with
        judgements.
    Cancelled
        Cancellation was requested.
    """
    opts = options or EvalOptions()
    measures = parse_metrics(metrics)
    if not configs:
        raise EvalInputError("no configuration to evaluate")
    if k < 1:
        raise EvalInputError(f"k must be at least 1, not {k}")
    names = [variant_name(v) for v in configs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise EvalInputError(f"configuration listed twice: {', '.join(dupes)}")
    items, queries_source = _as_queries(queries)
    judgements = _as_qrels_mapping(qrels)
    qrels_source = qrels.source if isinstance(qrels, Qrels) else "<mapping>"
    topic = [q.qid for q in items]
    scorer = _Scorer(measures, judgements, topic, opts)
    if not scorer.judged:
        sample_q = ", ".join(repr(q) for q in topic[:3])
        sample_j = ", ".join(repr(q) for q in list(judgements)[:3])
        raise EvalInputError(
            f"none of the {len(topic)} queries has judgements in {qrels_source} "
            f"(query ids like {sample_q}; judged ids like {sample_j})"
        )
    judged = set(scorer.judged)
    to_search = [q for q in items if search_unjudged or q.qid in judged]
    topic_set = set(topic)
    judged_without_query = tuple(q for q in judgements if q not in topic_set)

    notes: list[str] = []
    for m in measures:
        cutoff = metric_cutoff(m)
        if cutoff is not None and cutoff > k:
            notes.append(f"{m} looks at {cutoff} hits but the runs are only {k} deep")
    if judged_without_query:
        notes.append(
            f"{len(judged_without_query)} judged queries are not in the query set "
            "and were not evaluated"
        )

    # Judged documents the index does not hold: they count as unretrieved relevant documents.
    index = searcher.index
    missing: dict[str, tuple[str, ...]] = {}
    missing_relevant = 0
    for qid in scorer.judged:
        absent = tuple(d for d in judgements[qid] if index.docno(d) is None)
        if absent:
            missing[qid] = absent
            missing_relevant += sum(1 for d in absent if judgements[qid][d] > 0)
    if missing:
        n_missing = sum(len(v) for v in missing.values())
        notes.append(
            f"{n_missing} judged documents ({missing_relevant} relevant) in {len(missing)} "
            "queries are not in the index; they still count as relevant and unretrieved"
        )

    depth = k + 1 if opts.drop_self_hits else k
    if query_syntax and tokenize is not None:
        raise EvalInputError("tokenize and query_syntax exclude each other")
    terms_of = tokenize if tokenize is not None else index.analyzer.terms
    report = Throttle(progress)
    total = len(configs) * len(to_search)
    done = 0
    report(0, total)
    results: list[ConfigResult] = []
    # Queries with nothing to search for (only stop words, only prohibitions): empty rankings.
    unsearchable: dict[str, str] = {}
    for variant, name in zip(configs, names, strict=True):
        rankings: dict[str, Ranking] = {}
        started = time.perf_counter()
        for query in to_search:
            if cancel is not None:
                cancel.check()
            hits: Sequence[HitLike] = ()
            try:
                if query_syntax:
                    # Per-term breakdowns are for display; a run needs ids and scores only.
                    hits = searcher.search(
                        query.text, variant, k=depth, contributions=False, count=False
                    ).hits
                else:
                    terms = terms_of(query.text)
                    if terms:
                        hits = searcher.search_terms(
                            terms, variant, k=depth, contributions=False, count=False
                        ).hits
                    else:
                        unsearchable[query.qid] = "no terms left after analysis"
            except QueryError as exc:
                unsearchable[query.qid] = str(exc)
            ranking = _ranking_of(hits, query.qid, k, opts.drop_self_hits)
            if len(ranking):
                rankings[query.qid] = ranking
            done += 1
            report(done, total)
        seconds = time.perf_counter() - started
        run = Run(rankings, tag=_tag_of(name), source="")
        results.append(
            ConfigResult(variant, name, scorer(run), run if keep_runs else None, seconds)
        )
    if unsearchable:
        sample = ", ".join(list(unsearchable)[:5])
        more = " ..." if len(unsearchable) > 5 else ""
        notes.append(
            f"{len(unsearchable)} queries had nothing to search for (e.g. only stop words) "
            f"and count 0: {sample}{more}"
        )
    return ExperimentResult(
        configs=tuple(results),
        metrics=scorer.names,
        options=opts,
        k=k,
        qids=scorer.qids,
        searched=tuple(q.qid for q in to_search),
        unjudged=scorer.unjudged,
        judged_without_query=judged_without_query,
        missing_judged=missing,
        missing_relevant=missing_relevant,
        index=IndexSummary.of(searcher),
        queries_source=queries_source,
        qrels_source=qrels_source,
        created=_now(),
        notes=tuple(notes),
    )


def _tag_of(name: str) -> str:
    """A run tag: the canonical name without whitespace (``Lucene(k1=0.9,b=0.4)``)."""
    return re.sub(r"\s+", "", name) or "bm25desk"


# --------------------------------------------------------------------------------------------
# Significance
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A paired comparison of a candidate with a baseline on one metric.

    Attributes
    ----------
    metric, baseline, candidate
        What was compared.
    n
        Number of paired queries.
    baseline_mean, candidate_mean, delta
        Means of the per-query values and ``candidate_mean − baseline_mean``.
    wins, losses, ties
        Queries where the candidate is better, worse, equal (within 1e-12).
    p_value
        Two-sided paired randomization (sign-flip permutation) test of the mean difference.
        Exact (all ``2**n`` sign assignments) when ``2**n <= permutations``; otherwise
        ``permutations`` random assignments from a generator seeded with ``seed``, and
        ``p = (hits + 1) / (permutations + 1)``, which is never 0.
    permutations
        Sign assignments used (``2**n`` when exact).
    exact
        Whether all assignments were enumerated.
    seed
        The seed of the random assignments.
    t, p_t
        Paired t statistic and its two-sided p-value (Student's t with ``n − 1`` degrees of
        freedom); None when ``n < 2`` or all differences are equal.
    """

    metric: str
    baseline: str
    candidate: str
    n: int
    baseline_mean: float
    candidate_mean: float
    delta: float
    wins: int
    losses: int
    ties: int
    p_value: float
    permutations: int
    exact: bool
    seed: int
    t: float | None
    p_t: float | None

    def as_dict(self) -> dict[str, Any]:
        """Return the test as JSON-ready data."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def paired_test(
    baseline: Sequence[float] | FloatArray,
    candidate: Sequence[float] | FloatArray,
    *,
    permutations: int = 10_000,
    seed: int = 0,
    metric: str = "",
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
) -> PairedTest:
    """Compare paired per-query values: randomization test, t-test, wins/losses/ties.

    Parameters
    ----------
    baseline, candidate
        Per-query values in the same query order.
    permutations
        Number of random sign assignments (exact enumeration when ``2**n`` is not larger).
    seed
        Seed for the random assignments: the same inputs always give the same p-value.
    metric, baseline_name, candidate_name
        Labels stored in the result.

    Returns
    -------
    PairedTest

    Raises
    ------
    ValueError
        The sequences differ in length, or ``permutations < 1``.
    """
    a = np.asarray(baseline, dtype=np.float64)
    b = np.asarray(candidate, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values differ in shape: {a.shape} vs {b.shape}")
    if permutations < 1:
        raise ValueError("permutations must be at least 1")
    d = b - a
    n = int(d.size)
    zero = np.isclose(d, 0.0, rtol=0.0, atol=1e-12)
    wins = int(np.sum((d > 0) & ~zero))
    losses = int(np.sum((d < 0) & ~zero))
    ties = int(np.sum(zero))
    p_value, used, exact = _randomization_p(d, permutations, seed)
    t, p_t = _paired_t(d)
    return PairedTest(
        metric=metric,
        baseline=baseline_name,
        candidate=candidate_name,
        n=n,
        baseline_mean=float(a.mean()) if n else math.nan,
        candidate_mean=float(b.mean()) if n else math.nan,
        delta=float(d.mean()) if n else math.nan,
        wins=wins,
        losses=losses,
        ties=ties,
        p_value=p_value,
        permutations=used,
        exact=exact,
        seed=seed,
        t=t,
        p_t=p_t,
    )


def _randomization_p(d: FloatArray, permutations: int, seed: int) -> tuple[float, int, bool]:
    """Two-sided sign-flip test of ``mean(d) == 0``: ``(p, assignments, exact)``."""
    n = int(d.size)
    if n == 0:
        return 1.0, 0, True
    observed = abs(float(d.sum()))
    # Sums of the same numbers in another order differ in the last bits: count those as equal.
    tol = 1e-9 * (1.0 + float(np.abs(d).sum()))
    if n <= 30 and 2**n <= permutations:
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        signs = ((codes >> np.arange(n, dtype=np.int64)) & 1) * 2.0 - 1.0
        stats = np.abs(signs @ d)
        return float(np.mean(stats >= observed - tol)), 2**n, True
    rng = np.random.default_rng(seed)
    chunk = max(1, min(permutations, 4_000_000 // n))
    hits = 0
    left = permutations
    while left > 0:
        m = min(chunk, left)
        signs = rng.integers(0, 2, size=(m, n)).astype(np.float64) * 2.0 - 1.0
        hits += int(np.sum(np.abs(signs @ d) >= observed - tol))
        left -= m
    return (hits + 1) / (permutations + 1), permutations, False


def _paired_t(d: FloatArray) -> tuple[float | None, float | None]:
    """Paired t statistic and two-sided p-value, or (None, None) when undefined."""
    n = int(d.size)
    if n < 2:
        return None, None
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if not sd > 1e-15 * (1.0 + abs(mean)):
        return None, None
    t = mean / (sd / math.sqrt(n))
    dof = n - 1
    p = _betainc(dof / 2.0, 0.5, dof / (dof + t * t))
    return t, min(1.0, max(0.0, p))


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b) (continued fraction, Lentz's method).

    Two-sided Student-t p-value: ``p = I_{ν/(ν+t²)}(ν/2, 1/2)``. scipy is not a dependency;
    this is the standard algorithm (Numerical Recipes §6.4) and is checked against scipy in
    the tests when scipy is installed.
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def compare_to_baseline(
    result: ExperimentResult,
    baseline: int | str = 0,
    metrics: Iterable[str] | None = None,
    *,
    permutations: int = 10_000,
    seed: int = 0,
) -> tuple[PairedTest, ...]:
    """Test every other configuration of ``result`` against ``baseline``, metric by metric.

    Parameters
    ----------
    result
        An experiment.
    baseline
        The baseline configuration: position, canonical name or unambiguous variant key.
    metrics
        Metrics to test (default: all of the experiment's).
    permutations, seed
        See :func:`paired_test`.

    Returns
    -------
    tuple of PairedTest
        For each metric, then each non-baseline configuration in order.

    Raises
    ------
    KeyError
        Unknown baseline.
    """
    base = result.config(baseline)
    names = list(result.metrics) if metrics is None else [base.evaluation._name(m) for m in metrics]
    tests = []
    for metric in names:
        for cand in result.configs:
            if cand is base:
                continue
            tests.append(
                paired_test(
                    base.evaluation.per_query[metric],
                    cand.evaluation.per_query[metric],
                    permutations=permutations,
                    seed=seed,
                    metric=metric,
                    baseline_name=base.name,
                    candidate_name=cand.name,
                )
            )
    return tuple(tests)


# --------------------------------------------------------------------------------------------
# Parameter sweeps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SweepCell:
    """One cell of a sweep: its position, parameters, variant and metric value."""

    index: tuple[int, ...]
    params: Mapping[str, float]
    variant: Variant
    value: float


@dataclass(frozen=True, slots=True)
class SweepResult:
    """A grid of metric values over parameter values.

    Attributes
    ----------
    base
        The variant whose other parameters stay fixed.
    axes
        Parameter names, one per grid dimension (in the order of the ``grid`` argument).
    values
        The parameter values along each axis.
    metrics
        Canonical metric names.
    grids
        Per metric, an array of shape ``tuple(len(v) for v in values)``.
    best
        Per metric, the cell with the highest value (the first in grid order on ties).
    experiment
        The underlying experiment (runs not kept): per-query values of every cell, for
        significance tests between cells.
    """

    base: Variant
    axes: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]
    metrics: tuple[str, ...]
    grids: Mapping[str, FloatArray]
    best: Mapping[str, SweepCell]
    experiment: ExperimentResult

    def cell(self, index: Sequence[int], metric: str | None = None) -> SweepCell:
        """Return the cell at ``index`` with its value for ``metric`` (default: the first)."""
        name = metric or self.metrics[0]
        idx = tuple(int(i) for i in index)
        params = {a: self.values[j][i] for j, (a, i) in enumerate(zip(self.axes, idx, strict=True))}
        variant = _with_params(self.base, params)
        return SweepCell(idx, params, variant, float(self.grids[name][idx]))

    def on_edge(self, metric: str | None = None) -> tuple[str, ...]:
        """Return the axes along which the best cell lies on the edge of the grid.

        A best value at the edge of a range may be better still outside it: widen that range.
        """
        best = self.best[metric or self.metrics[0]]
        return tuple(
            axis
            for axis, values, i in zip(self.axes, self.values, best.index, strict=True)
            if len(values) > 1 and i in (0, len(values) - 1)
        )

    def as_dict(self) -> dict[str, Any]:
        """Return the sweep as JSON-ready data."""
        return {
            "variant": variant_name(self.base),
            "key": variant_key(self.base),
            "axes": {a: list(v) for a, v in zip(self.axes, self.values, strict=True)},
            "metrics": list(self.metrics),
            "grids": {m: _nested_json(g.tolist()) for m, g in self.grids.items()},
            "best": {
                m: {
                    "params": dict(c.params),
                    "name": variant_name(c.variant),
                    "value": c.value,
                    "on_edge": list(self.on_edge(m)),
                }
                for m, c in self.best.items()
            },
            "conventions": self.experiment.options.as_dict(),
            "k": self.experiment.k,
            "index": dataclasses.asdict(self.experiment.index),
            "created": self.experiment.created,
            "bm25desk": bm25desk.__version__,
        }


def _check_param_value(variant: Variant, name: str, value: float) -> None:
    fields = {f.name: f for f in dataclasses.fields(cast(Any, variant))}
    if name not in fields:
        have = ", ".join(fields) or "none"
        raise EvalInputError(
            f"{variant_key(variant)} has no parameter {name!r} (its parameters: {have})"
        )
    meta = fields[name].metadata
    lo, hi = meta.get("lo"), meta.get("hi")
    if not math.isfinite(value):
        raise EvalInputError(f"{name}={value} is not a finite number")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise EvalInputError(
            f"{name}={value:g} is outside the range {lo}..{hi} of {variant_key(variant)}"
        )


def sweep(
    searcher: SearcherLike,
    queries: Queries | Iterable[Query] | Mapping[str, str],
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    variant: Variant,
    grid: Mapping[str, Sequence[float]],
    metrics: str | Iterable[str | Measure] = ("nDCG@10",),
    *,
    k: int | None = None,
    options: EvalOptions | None = None,
    tokenize: Callable[[str], list[str]] | None = None,
    query_syntax: bool = False,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> SweepResult:
    """Evaluate ``variant`` at every combination of the ``grid`` parameter values.

    Parameters
    ----------
    searcher, queries, qrels, options, tokenize, query_syntax, progress, cancel
        As for :func:`run_experiment`.
    variant
        The variant; parameters not in ``grid`` keep its values.
    grid
        ``{"k1": [...], "b": [...]}`` (and ``"delta"`` for the variants that have it): the values
        of each swept parameter. Each must be a field of the variant and inside its ``lo..hi``.
    metrics
        Metrics to grid (the first is the one a UI shows by default).
    k
        Ranking depth; default: the largest metric cutoff when every metric has one (a sweep of
        nDCG@10 only needs 10 hits), else 1000.

    Returns
    -------
    SweepResult

    Raises
    ------
    EvalInputError
        Empty grid or axis, unknown parameter, value out of range, or as :func:`run_experiment`.
    """
    measures = parse_metrics(metrics)
    if not grid:
        raise EvalInputError("the sweep grid is empty: give values for at least one parameter")
    axes = tuple(grid)
    values: list[tuple[float, ...]] = []
    for name in axes:
        axis = tuple(dict.fromkeys(float(v) for v in grid[name]))
        if not axis:
            raise EvalInputError(f"no values for {name}")
        for v in axis:
            _check_param_value(variant, name, v)
        values.append(axis)
    if k is None:
        cutoffs = [metric_cutoff(m) for m in measures]
        k = max(c for c in cutoffs if c is not None) if None not in cutoffs else 1000
    cells = list(itertools.product(*(range(len(v)) for v in values)))
    configs = [
        _with_params(
            variant, {a: values[j][i] for j, (a, i) in enumerate(zip(axes, idx, strict=True))}
        )
        for idx in cells
    ]
    experiment = run_experiment(
        searcher,
        queries,
        qrels,
        configs,
        measures,
        k=k,
        options=options,
        tokenize=tokenize,
        query_syntax=query_syntax,
        keep_runs=False,
        progress=progress,
        cancel=cancel,
    )
    shape = tuple(len(v) for v in values)
    grids: dict[str, FloatArray] = {}
    best: dict[str, SweepCell] = {}
    for metric in experiment.metrics:
        g = np.array([c.aggregate[metric] for c in experiment.configs], dtype=np.float64)
        g = g.reshape(shape)
        g.flags.writeable = False
        grids[metric] = g
    result = SweepResult(variant, axes, tuple(values), experiment.metrics, grids, {}, experiment)
    for metric, g in grids.items():
        flat = np.where(np.isnan(g), -np.inf, g).ravel()
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(flat)), shape))
        best[metric] = result.cell(idx, metric)
    return dataclasses.replace(result, best=best)


# --------------------------------------------------------------------------------------------
# Exports
# --------------------------------------------------------------------------------------------


def run_file_stem(config: ConfigResult) -> str:
    """A file-name stem for a configuration (``Lucene_k1=0.9_b=0.4``)."""
    stem = re.sub(r"[^A-Za-z0-9.=+-]+", "_", config.name).strip("_")
    return stem or "run"


def run_card(
    result: ExperimentResult, config: ConfigResult, *, run_file: str = ""
) -> dict[str, Any]:
    """Describe how a run was made: index, analyser, variant, conventions, versions, date.

    Returns
    -------
    dict
        JSON-ready data (written as ``<run>.card.json`` by :func:`export_experiment`).
    """
    return {
        "run_file": run_file,
        "tag": _tag_of(config.name),
        "bm25desk": bm25desk.__version__,
        "ir_measures": ir_measures.__version__,
        "created": result.created,
        "index": {
            "fingerprint": result.index.fingerprint,
            "n_docs": result.index.n_docs,
            "analyzer": dict(result.index.analyzer),
        },
        "variant": {
            "key": config.key,
            "name": config.name,
            "params": variant_params(config.variant),
        },
        "k": result.k,
        "queries": {
            "source": result.queries_source,
            "searched": len(result.searched),
            "evaluated": len(result.qids),
        },
        "qrels": {
            "source": result.qrels_source,
            "missing_from_index": result.missing_judged_count,
            "missing_relevant": result.missing_relevant,
        },
        "conventions": result.options.as_dict(),
        "scores_in_file": "raw engine scores (rank order = engine order)",
        "metrics": {m: _json_float(v) for m, v in config.aggregate.items()},
    }


def write_per_query_csv(result: ExperimentResult, path: str | Path) -> Path:
    """Write one row per (configuration, query): ``config, key, qid, judged, missing, metrics...``.

    ``judged`` is 0 for queries counted 0 under ``average="all"``; ``missing_judged`` counts the
    query's judged documents absent from the index.
    """
    p = Path(path)
    unjudged = set(result.unjudged)
    with p.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["config", "key", "qid", "judged", "missing_judged", *result.metrics])
        for c in result.configs:
            for i, qid in enumerate(result.qids):
                row: list[object] = [
                    c.name,
                    c.key,
                    qid,
                    int(qid not in unjudged),
                    len(result.missing_judged.get(qid, ())),
                ]
                row.extend(repr(float(c.evaluation.per_query[m][i])) for m in result.metrics)
                writer.writerow(row)
    return p


def export_experiment(
    result: ExperimentResult, directory: str | Path, *, gzip_runs: bool = False
) -> list[Path]:
    """Write every run, its run card and a per-query CSV into ``directory`` (created if needed).

    For each configuration: ``<stem>.run`` (or ``.run.gz``) and ``<stem>.card.json`` next to it;
    then ``per_query.csv`` and ``experiment.json`` (the whole result without runs).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    ValueError
        The result kept no runs, or an id cannot be written in a run file.
    OSError
        The directory or a file cannot be written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for c in result.configs:
        if c.run is None:
            raise ValueError(f"{c.name}: the experiment did not keep its run")
        stem = run_file_stem(c)
        run_path = out / (stem + (".run.gz" if gzip_runs else ".run"))
        written.append(write_run(c.run, run_path, tag=_tag_of(c.name)))
        card_path = out / f"{stem}.card.json"
        card = run_card(result, c, run_file=run_path.name)
        card_path.write_text(
            json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        written.append(card_path)
    written.append(write_per_query_csv(result, out / "per_query.csv"))
    summary = out / "experiment.json"
    summary.write_text(
        json.dumps(result.as_dict(per_query=False), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    written.append(summary)
    return written
