"""Metrics through ir_measures: names, conventions, and the per-query values of a run.

Every number comes from ``ir_measures`` (which runs ``trec_eval`` through pytrec_eval for the
classic measures); this module only decides *which* queries and *which* ranked lists it sees, and
writes those decisions down.

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

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import ir_measures
import numpy as np

from bm25desk.evaluation.data import EvalInputError, FloatArray, Qrels, Queries, Run

__all__ = [
    "DEFAULT_METRICS",
    "Average",
    "EvalOptions",
    "EvalResult",
    "Measure",
    "Scorer",
    "Ties",
    "as_qrels_mapping",
    "evaluate_run",
    "metric_cutoff",
    "parse_metrics",
]

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
        return self.per_query[self.metric_name(metric)]

    def query(self, qid: str) -> dict[str, float]:
        """Return ``{metric: value}`` for one query (KeyError when it was not evaluated)."""
        i = self.qids.index(qid) if qid in self.qids else -1
        if i < 0:
            raise KeyError(qid)
        return {m: float(self.per_query[m][i]) for m in self.metrics}

    def metric_name(self, metric: str) -> str:
        """Return the canonical name of ``metric`` (``MRR@10`` → ``RR@10``)."""
        if metric in self.per_query:
            return metric
        return str(parse_metrics([metric])[0])


class Scorer:
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
        """Evaluate ``run``: per-query values for the topic set and their aggregates."""
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


def as_qrels_mapping(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
) -> Mapping[str, Mapping[str, int]]:
    """Return the ``{qid: {docid: relevance}}`` mapping of ``qrels``."""
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
    judgements = as_qrels_mapping(qrels)
    if queries is None:
        topic = list(judgements) + [q for q in run.rankings if q not in judgements]
    elif isinstance(queries, Queries):
        topic = list(queries.ids())
    else:
        topic = list(queries)
    return Scorer(parse_metrics(metrics), judgements, topic, opts)(run)
