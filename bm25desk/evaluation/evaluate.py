"""The evaluation's public names in one place (the path they had before the package was split).

Kept for users and for the app, which import from here. New code imports from the module of each
concern: :mod:`~bm25desk.evaluation.queries`, :mod:`~bm25desk.evaluation.qrels`,
:mod:`~bm25desk.evaluation.runs`, :mod:`~bm25desk.evaluation.detect`,
:mod:`~bm25desk.evaluation.metrics`, :mod:`~bm25desk.evaluation.experiments`,
:mod:`~bm25desk.evaluation.results`, :mod:`~bm25desk.evaluation.significance`,
:mod:`~bm25desk.evaluation.sweeps` and :mod:`~bm25desk.evaluation.export`.
"""

from __future__ import annotations

from bm25desk.evaluation.configs import variant_key, variant_name, variant_params
from bm25desk.evaluation.data import EvalInputError, FloatArray, Qrels, Queries, Query, Ranking, Run
from bm25desk.evaluation.detect import (
    QRELS_FORMATS,
    QUERY_FORMATS,
    detect_qrels_format,
    detect_queries_format,
)
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.export import (
    export_experiment,
    run_card,
    run_file_stem,
    write_per_query_csv,
)
from bm25desk.evaluation.interfaces import (
    AnalyzerLike,
    HitLike,
    IndexLike,
    SearcherLike,
    SearchResultLike,
)
from bm25desk.evaluation.metrics import (
    DEFAULT_METRICS,
    Average,
    EvalOptions,
    EvalResult,
    Measure,
    Ties,
    evaluate_run,
    metric_cutoff,
    parse_metrics,
)
from bm25desk.evaluation.qrels import parse_qrels, read_qrels
from bm25desk.evaluation.queries import parse_queries, read_queries
from bm25desk.evaluation.results import (
    ConfigResult,
    ExperimentResult,
    ImplausibleResultError,
    IndexSummary,
)
from bm25desk.evaluation.runs import format_run, parse_run, read_run, write_run
from bm25desk.evaluation.significance import PairedTest, compare_to_baseline, paired_test
from bm25desk.evaluation.sweeps import SweepCell, SweepResult, sweep

__all__ = [
    "DEFAULT_METRICS",
    "QRELS_FORMATS",
    "QUERY_FORMATS",
    "AnalyzerLike",
    "Average",
    "ConfigResult",
    "EvalInputError",
    "EvalOptions",
    "EvalResult",
    "ExperimentResult",
    "FloatArray",
    "HitLike",
    "ImplausibleResultError",
    "IndexLike",
    "IndexSummary",
    "Measure",
    "PairedTest",
    "Qrels",
    "Queries",
    "Query",
    "Ranking",
    "Run",
    "SearchResultLike",
    "SearcherLike",
    "SweepCell",
    "SweepResult",
    "Ties",
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
    "variant_key",
    "variant_name",
    "variant_params",
    "write_per_query_csv",
    "write_run",
]
