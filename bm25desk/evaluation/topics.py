"""The readers' public names in one place (the path they had before the package was split).

Kept for users who import from here. Queries are read by :mod:`~bm25desk.evaluation.queries`,
judgements by :mod:`~bm25desk.evaluation.qrels`, runs by :mod:`~bm25desk.evaluation.runs`, formats
are told by :mod:`~bm25desk.evaluation.detect`, and the data types live in
:mod:`~bm25desk.evaluation.data`.
"""

from __future__ import annotations

from bm25desk.evaluation.data import EvalInputError, Qrels, Queries, Query, Ranking, Run
from bm25desk.evaluation.detect import (
    QRELS_FORMATS,
    QUERY_FORMATS,
    detect_qrels_format,
    detect_queries_format,
)
from bm25desk.evaluation.qrels import parse_qrels, read_qrels
from bm25desk.evaluation.queries import parse_queries, read_queries
from bm25desk.evaluation.runs import format_run, parse_run, read_run, write_run

__all__ = [
    "QRELS_FORMATS",
    "QUERY_FORMATS",
    "EvalInputError",
    "Qrels",
    "Queries",
    "Query",
    "Ranking",
    "Run",
    "detect_qrels_format",
    "detect_queries_format",
    "format_run",
    "parse_qrels",
    "parse_queries",
    "parse_run",
    "read_qrels",
    "read_queries",
    "read_run",
    "write_run",
]
