"""Parameter sweeps: a variant at every combination of parameter values, and the best."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

import bm25desk
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.scoring.variants import Variant
from bm25desk.evaluation.configs import variant_key, variant_name, with_params
from bm25desk.evaluation.data import EvalInputError, FloatArray, Qrels, Queries, Query
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.interfaces import SearcherLike
from bm25desk.evaluation.jsonsafe import json_safe
from bm25desk.evaluation.metrics import EvalOptions, Measure, metric_cutoff, parse_metrics
from bm25desk.evaluation.results import ExperimentResult

__all__ = ["SweepCell", "SweepResult", "sweep"]


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
        params = _params_at(self.axes, self.values, idx)
        variant = with_params(self.base, params)
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
            "grids": {m: json_safe(g.tolist()) for m, g in self.grids.items()},
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
    threads: int | None = None,
) -> SweepResult:
    """Evaluate ``variant`` at every combination of the ``grid`` parameter values.

    Parameters
    ----------
    searcher, queries, qrels, options, tokenize, query_syntax, progress, cancel, threads
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
    axes, values = _axes(variant, grid)
    if k is None:
        cutoffs = [metric_cutoff(m) for m in measures]
        k = max(c for c in cutoffs if c is not None) if None not in cutoffs else 1000
    cells = itertools.product(*(range(len(v)) for v in values))
    configs = [with_params(variant, _params_at(axes, values, idx)) for idx in cells]
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
        threads=threads,
    )
    return _collect(variant, axes, values, experiment)


def _axes(
    variant: Variant, grid: Mapping[str, Sequence[float]]
) -> tuple[tuple[str, ...], tuple[tuple[float, ...], ...]]:
    """Return the swept parameters and their values (no duplicates), checked for ``variant``."""
    if not grid:
        raise EvalInputError("the sweep grid is empty: give values for at least one parameter")
    values: list[tuple[float, ...]] = []
    for name in grid:
        axis = tuple(dict.fromkeys(float(v) for v in grid[name]))
        if not axis:
            raise EvalInputError(f"no values for {name}")
        for v in axis:
            _check_param_value(variant, name, v)
        values.append(axis)
    return tuple(grid), tuple(values)


def _params_at(
    axes: Sequence[str], values: Sequence[Sequence[float]], index: Sequence[int]
) -> dict[str, float]:
    """Return the parameter values of the cell at ``index``."""
    return {a: values[j][i] for j, (a, i) in enumerate(zip(axes, index, strict=True))}


def _collect(
    variant: Variant,
    axes: tuple[str, ...],
    values: tuple[tuple[float, ...], ...],
    experiment: ExperimentResult,
) -> SweepResult:
    """Arrange an experiment's aggregates (cells in grid order) into grids and find the best."""
    shape = tuple(len(v) for v in values)
    grids: dict[str, FloatArray] = {}
    for metric in experiment.metrics:
        g = np.array([c.aggregate[metric] for c in experiment.configs], dtype=np.float64)
        g = g.reshape(shape)
        g.flags.writeable = False
        grids[metric] = g
    result = SweepResult(variant, axes, values, experiment.metrics, grids, {}, experiment)
    best: dict[str, SweepCell] = {}
    for metric, g in grids.items():
        flat = np.where(np.isnan(g), -np.inf, g).ravel()
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(flat)), shape))
        best[metric] = result.cell(idx, metric)
    return dataclasses.replace(result, best=best)
