"""What the Evaluation view computes on pool threads (Qt-free).

Reading queries and judgements, running an experiment or a sweep, the paired tests against a
baseline, one query's relevant documents with their full ranks, and the "why not" of a relevant
document outside the top k. Every function returns immutable objects (engine results or small
frozen dataclasses) that cross to the GUI thread by signal as they are.

Queries are evaluated as bags of words (the experiment's default): the drill-down analyses the
query text the same way (``index.analyzer.terms`` → :func:`parse_terms`), so the ranks and the
ledger shown here are those of the evaluated run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bm25desk.engine import Explanation, Index, Searcher, Variant
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.scoring.query import ParsedQuery, parse_terms
from bm25desk.evaluation.evaluate import (
    EvalInputError,
    EvalOptions,
    ExperimentResult,
    PairedTest,
    Qrels,
    Queries,
    SweepResult,
    compare_to_baseline,
    export_experiment,
    read_qrels,
    read_queries,
    run_experiment,
    sweep,
)
from bm25desk.ui.common.sample import SAMPLE_NAME, sample_path

METRICS: tuple[str, ...] = ("RR@10", "nDCG@10", "AP", "P@10", "R@100", "R@1000", "Judged@10")
"""The metrics the view offers (ir_measures names)."""

METRIC_HELP: Mapping[str, str] = {
    "RR@10": "reciprocal rank of the first relevant document in the top 10 (MRR@10)",
    "nDCG@10": "normalised discounted cumulative gain of the top 10",
    "AP": "average precision over the whole ranking (MAP)",
    "P@10": "share of the top 10 that is relevant",
    "R@100": "share of the relevant documents found in the top 100",
    "R@1000": "share of the relevant documents found in the top 1000",
    "Judged@10": "share of the top 10 that has a judgement (low: the judgements are incomplete)",
}

SWEEP_AXES: tuple[str, ...] = ("k1", "b", "delta")
"""Parameters a sweep can vary, in grid order (x, y, then slices)."""

# Query and judgement files that travel together in known test collections: (queries, qrels),
# relative to the folder of the collection's source file.
_COMPANIONS: tuple[tuple[str, str], ...] = (
    ("CISI.QRY", "CISI.REL"),
    ("cran.qry", "cranqrel"),
    ("queries.jsonl", "qrels/test.tsv"),
)


# ------------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EvalInputs:
    """Queries and judgements as read, or None for the one not loaded yet."""

    queries: Queries | None = None
    qrels: Qrels | None = None

    @property
    def ready(self) -> bool:
        """Return whether both are loaded."""
        return self.queries is not None and self.qrels is not None

    def judged_queries(self) -> int:
        """Return how many of the queries have judgements (0 when one side is missing)."""
        if self.queries is None or self.qrels is None:
            return 0
        judged = self.qrels.judgements
        return sum(1 for q in self.queries.items if q.qid in judged)


@dataclass(frozen=True, slots=True)
class Companions:
    """Query and judgement files that belong to the open collection."""

    queries: Path
    qrels: Path
    label: str  # the button text


def companion_files(index: Index | None) -> Companions | None:
    """Return the queries and judgements that come with ``index``'s collection, if any.

    The bundled sample (CISI) has its own; for a collection built from a test collection's file,
    the usual companions next to the source file (``CISI.QRY`` + ``CISI.REL``, Cranfield's
    ``cran.qry`` + ``cranqrel``, BEIR's ``queries.jsonl`` + ``qrels/test.tsv``) are offered.
    """
    if index is None:
        return None
    try:
        source = Path(str(index.source.get("path", "")))
    except (AttributeError, TypeError):
        return None
    sample = sample_path()
    is_sample = index.name == SAMPLE_NAME
    if not is_sample and str(source):
        try:
            is_sample = source.resolve() == sample.resolve()
        except OSError:
            is_sample = False
    folder = sample.parent if is_sample else (source.parent if str(source) else None)
    if folder is None:
        return None
    for queries, qrels in _COMPANIONS:
        q, r = folder / queries, folder / qrels
        if q.is_file() and r.is_file():
            label = (
                "Load the sample's queries and judgements"
                if is_sample
                else f"Load {queries} and {qrels} from the collection's folder"
            )
            return Companions(q, r, label)
    return None


def load_queries(path: str | Path, fmt: str = "auto") -> Queries:
    """Read a query file (``fmt``: ``auto`` or a format name)."""
    return read_queries(path, format=fmt)


def load_qrels(path: str | Path, fmt: str = "auto") -> Qrels:
    """Read a judgement file (``fmt``: ``auto`` or a format name)."""
    return read_qrels(path, format=fmt)


# ------------------------------------------------------------------------------------------------
# Experiments
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExperimentRequest:
    """What to evaluate, as chosen in the view."""

    configs: tuple[Variant, ...]
    metrics: tuple[str, ...]
    k: int = 1000
    options: EvalOptions = field(default_factory=EvalOptions)


def run_eval(
    searcher: Searcher,
    inputs: EvalInputs,
    request: ExperimentRequest,
    progress: ProgressFn,
    cancel: CancelToken,
) -> ExperimentResult:
    """Run the experiment (raises :class:`EvalInputError` with a readable message)."""
    if inputs.queries is None or inputs.qrels is None:
        raise EvalInputError("load a query file and a judgement file first")
    return run_experiment(
        searcher,
        inputs.queries,
        inputs.qrels,
        list(request.configs),
        request.metrics,
        k=request.k,
        options=request.options,
        progress=progress,
        cancel=cancel,
    )


@dataclass(frozen=True, slots=True)
class BaselineTests:
    """The paired tests of every configuration against one baseline."""

    baseline: int
    tests: tuple[PairedTest, ...]


def baseline_tests(result: ExperimentResult, baseline: int) -> BaselineTests:
    """Test every configuration of ``result`` against configuration ``baseline``."""
    if len(result.configs) < 2:
        return BaselineTests(baseline, ())
    return BaselineTests(baseline, compare_to_baseline(result, baseline))


def export_runs(result: ExperimentResult, directory: str | Path) -> tuple[Path, ...]:
    """Write run files, run cards, the per-query CSV and ``experiment.json`` into ``directory``."""
    return tuple(export_experiment(result, directory))


# ------------------------------------------------------------------------------------------------
# Sweeps
# ------------------------------------------------------------------------------------------------


def sweep_axes(variant: Variant) -> tuple[str, ...]:
    """Return the parameters of ``variant`` a sweep can vary (k1, b, δ, in that order)."""
    names = {p.name for p in type(variant).params()}
    return tuple(a for a in SWEEP_AXES if a in names)


def axis_values(start: float, stop: float, step: float) -> tuple[float, ...]:
    """Return ``start, start + step, ... ≤ stop`` rounded to the step's precision.

    Raises
    ------
    EvalInputError
        A non-positive step, a range that runs backwards, or more than 101 values.
    """
    if not (math.isfinite(start) and math.isfinite(stop) and math.isfinite(step)):
        raise EvalInputError("sweep ranges must be finite numbers")
    if step <= 0:
        raise EvalInputError("a sweep step must be greater than 0")
    if stop < start:
        raise EvalInputError(f"the range {start:g} … {stop:g} runs backwards")
    n = math.floor((stop - start) / step + 1e-9) + 1
    if n > 101:
        raise EvalInputError(f"{n} values from {start:g} to {stop:g}: use a larger step")
    decimals = max(0, min(6, -math.floor(math.log10(step)) + 2))
    return tuple(round(start + i * step, decimals) for i in range(n))


@dataclass(frozen=True, slots=True)
class SweepRequest:
    """A sweep as chosen in the view: the variant, the values of each axis, the metric."""

    variant: Variant
    grid: tuple[tuple[str, tuple[float, ...]], ...]
    metric: str
    options: EvalOptions = field(default_factory=EvalOptions)

    @property
    def n_cells(self) -> int:
        """Return the number of configurations the sweep evaluates."""
        n = 1
        for _, values in self.grid:
            n *= len(values)
        return n


def run_sweep(
    searcher: Searcher,
    inputs: EvalInputs,
    request: SweepRequest,
    progress: ProgressFn,
    cancel: CancelToken,
) -> SweepResult:
    """Run the sweep (raises :class:`EvalInputError` with a readable message)."""
    if inputs.queries is None or inputs.qrels is None:
        raise EvalInputError("load a query file and a judgement file first")
    return sweep(
        searcher,
        inputs.queries,
        inputs.qrels,
        request.variant,
        dict(request.grid),
        (request.metric,),
        options=request.options,
        progress=progress,
        cancel=cancel,
    )


# ------------------------------------------------------------------------------------------------
# Per-query drill-down
# ------------------------------------------------------------------------------------------------


def bag_of_words(searcher: Searcher, text: str) -> ParsedQuery:
    """Return ``text`` analysed as the experiment analyses it (no query syntax)."""
    return parse_terms(searcher.index.analyzer.terms(text))


@dataclass(frozen=True, slots=True)
class RelevantDoc:
    """A judged-relevant document of one query and where the configuration ranked it.

    ``rank`` is the document's full rank (not limited to the run's depth), None when it does not
    match the query; ``in_index`` is False for a judged document the index does not hold.
    """

    docid: str
    title: str
    relevance: int
    rank: int | None
    score: float | None
    in_index: bool


@dataclass(frozen=True, slots=True)
class QueryDetail:
    """One query under one configuration: its relevant documents and the cut-off's score."""

    qid: str
    text: str
    variant: Variant
    cutoff: int
    cutoff_score: float | None  # the score of the hit at rank ``cutoff`` (None: fewer hits)
    n_matches: int
    docs: tuple[RelevantDoc, ...]


def query_detail(
    searcher: Searcher,
    qid: str,
    text: str,
    judgements: Mapping[str, int],
    variant: Variant,
    cutoff: int,
) -> QueryDetail:
    """Rank every relevant document of ``qid`` under ``variant`` (one scoring pass)."""
    index = searcher.index
    parsed = bag_of_words(searcher, text)
    relevant = [(d, r) for d, r in judgements.items() if r > 0]
    if parsed.scored:
        scores, ok = searcher.scores(parsed, variant)
    else:
        scores, ok = np.zeros(index.n_slots), np.zeros(index.n_slots, dtype=bool)
    order_scores = np.sort(scores[ok])[::-1]
    n_matches = int(order_scores.size)
    cutoff_score = float(order_scores[cutoff - 1]) if n_matches >= cutoff else None
    idx = np.arange(scores.size)
    docs = []
    for docid, rel in relevant:
        docno = index.docno(docid)
        if docno is None:
            docs.append(RelevantDoc(docid, "", rel, None, None, False))
            continue
        title = index.doc(docno).title
        if not ok[docno]:
            docs.append(RelevantDoc(docid, title, rel, None, None, True))
            continue
        # The engine's order: score descending, equal scores by internal document number.
        s = scores[docno]
        better = ok & ((scores > s) | ((scores == s) & (idx < docno)))
        docs.append(RelevantDoc(docid, title, rel, int(better.sum()) + 1, float(s), True))
    docs.sort(key=lambda d: (d.rank is None, d.rank or 0, not d.in_index, d.docid))
    return QueryDetail(qid, text, variant, cutoff, cutoff_score, n_matches, tuple(docs))


@dataclass(frozen=True, slots=True)
class WhyNot:
    """Why a relevant document is (not) in the top k: its rank, the gap and its ledger."""

    docid: str
    cutoff: int
    cutoff_score: float | None
    explanation: Explanation

    @property
    def rank(self) -> int | None:
        """Return the document's rank (None: it does not match the query)."""
        return self.explanation.rank

    @property
    def gap(self) -> float | None:
        """Return how much more it would need to score to reach rank ``cutoff``."""
        if self.cutoff_score is None:
            return None
        return self.cutoff_score - self.explanation.score


def why_not(
    searcher: Searcher,
    text: str,
    docid: str,
    variant: Variant,
    cutoff: int,
    cutoff_score: float | None,
) -> WhyNot:
    """Explain ``docid``'s score for the query ``text`` under ``variant``, with its rank."""
    parsed = bag_of_words(searcher, text)
    explanation = searcher.explain(parsed, docid, variant, with_rank=True)
    return WhyNot(docid, cutoff, cutoff_score, explanation)


def best_indices(values: Sequence[float], tol: float = 1e-12) -> frozenset[int]:
    """Return the positions of the largest value (empty when every value is equal or NaN)."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2 or max(finite) - min(finite) <= tol:
        return frozenset()
    top = max(finite)
    return frozenset(i for i, v in enumerate(values) if math.isfinite(v) and top - v <= tol)
