"""Significance: paired randomization and t-tests between configurations, per metric."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.evaluation.data import FloatArray
from bm25desk.evaluation.results import ExperimentResult

__all__ = ["PairedTest", "compare_to_baseline", "paired_test"]


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
    """Paired t statistic and two-sided p-value, or (None, None) when undefined.

    The statistic is computed here so that a zero variance (which rounding turns into a tiny
    one) gives None rather than an enormous t; the p-value is Student's t with ``n − 1`` degrees
    of freedom from scipy (imported on first use: it takes a second to load).
    """
    n = int(d.size)
    if n < 2:
        return None, None
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if not sd > 1e-15 * (1.0 + abs(mean)):
        return None, None
    from scipy import stats

    t = mean / (sd / math.sqrt(n))
    p = 2.0 * float(stats.t.sf(abs(t), n - 1))
    return t, min(1.0, max(0.0, p))


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
    names = (
        list(result.metrics)
        if metrics is None
        else [base.evaluation.metric_name(m) for m in metrics]
    )
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
