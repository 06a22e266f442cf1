"""What an experiment produced: results per configuration, conventions, notes, hints."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ir_measures

import bm25desk
from bm25desk.engine.scoring.variants import Variant
from bm25desk.evaluation.configs import variant_key, variant_params
from bm25desk.evaluation.data import EvalInputError, Run
from bm25desk.evaluation.interfaces import SearcherLike
from bm25desk.evaluation.jsonsafe import json_float
from bm25desk.evaluation.metrics import EvalOptions, EvalResult

__all__ = ["ConfigResult", "ExperimentResult", "ImplausibleResultError", "IndexSummary"]


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
        Per query, the judged documents that are not in the index. They cannot be retrieved;
        the relevant ones still count (as they must) in recall and in nDCG's ideal ranking.
    missing_relevant
        How many of those are judged relevant (> 0).
    index
        Index fingerprint, size and analyser.
    queries_source, qrels_source
        Where queries and judgements came from.
    created
        ISO 8601 time (UTC) the experiment finished.
    notes
        Things the user should know (depth shallower than a cutoff, missing documents...),
        hints included.
    hints
        The notes that suggest doing something differently (drop self hits, number SMART
        queries by position...): a user interface may show them more prominently.
    queries_format, qrels_format
        The formats the query and judgement files were read in ("" for in-memory inputs).
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
    hints: tuple[str, ...] = ()
    queries_format: str = ""
    qrels_format: str = ""

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
                "aggregate": {m: json_float(v) for m, v in c.aggregate.items()},
                "seconds": round(c.seconds, 4),
            }
            if per_query:
                item["per_query"] = {
                    q: {m: json_float(c.evaluation.per_query[m][i]) for m in self.metrics}
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
                "format": self.queries_format,
                "evaluated": len(self.qids),
                "searched": len(self.searched),
                "unjudged": len(self.unjudged),
            },
            "qrels": {
                "source": self.qrels_source,
                "format": self.qrels_format,
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
            "hints": list(self.hints),
        }


class ImplausibleResultError(EvalInputError):
    """The experiment ran, but its numbers cannot be right (every metric 0 for every variant).

    The message says what was seen, which formats were assumed and how to choose others;
    :attr:`result` still holds the numbers, for whoever wants to look at them anyway.
    """

    def __init__(self, message: str, result: ExperimentResult) -> None:
        super().__init__(message)
        self.result = result
