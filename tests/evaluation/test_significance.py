"""Significance (significance.py): randomization test, t-test (checked against scipy)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from evalkit import JUDGED, QUERIES
from scipy import stats

from bm25desk.engine.scoring.variants import get_variant
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.significance import compare_to_baseline, paired_test


class TestSignificance:
    def test_exact_small(self):
        t = paired_test([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
        # 8 sign assignments; |sum| = 3 only for all-plus and all-minus
        assert t.exact
        assert t.permutations == 8
        assert t.p_value == pytest.approx(2 / 8)
        assert (t.wins, t.losses, t.ties) == (3, 0, 0)
        assert t.delta == 1.0
        assert t.t is None  # zero variance
        assert t.p_t is None

    def test_exact_enumeration_by_hand(self):
        base = [0.5, 0.2, 0.9, 0.4]
        cand = [0.7, 0.1, 0.9, 0.8]
        d = np.subtract(cand, base)
        observed = abs(d.sum())
        count = sum(
            abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - 1e-12
            for signs in itertools.product((-1, 1), repeat=4)
        )
        t = paired_test(base, cand)
        assert t.p_value == pytest.approx(count / 16)
        assert (t.wins, t.losses, t.ties) == (2, 1, 1)

    def test_monte_carlo_is_seeded(self):
        rng = np.random.default_rng(1)
        a = rng.random(60)
        b = a + rng.normal(0.02, 0.1, 60)
        t1 = paired_test(a, b, permutations=2000, seed=7)
        t2 = paired_test(a, b, permutations=2000, seed=7)
        assert not t1.exact
        assert t1.p_value == t2.p_value
        assert 0 < t1.p_value <= 1
        identical = paired_test(a, a, permutations=500)
        assert identical.p_value == 1.0
        assert identical.ties == 60

    def test_t_test_against_scipy(self):
        rng = np.random.default_rng(3)
        for n in (2, 3, 5, 12, 40, 300):
            a = rng.random(n)
            b = a + rng.normal(0.05, 0.2, n)
            ours = paired_test(a, b, permutations=200)
            ref = stats.ttest_rel(b, a)
            assert ours.t == pytest.approx(float(ref.statistic), rel=1e-9)
            assert ours.p_t == pytest.approx(float(ref.pvalue), rel=1e-7, abs=1e-14)

    def test_t_test_by_hand(self):
        """Differences 1, 2, 3, 4: mean 2.5, sd √(5/3), so t = 2.5 / (√(5/3) / 2) = √15.

        With 3 degrees of freedom Student's t has a closed form,
        F(t) = 1/2 + (1/π)(atan(t/√3) + (t/√3) / (1 + t²/3)); at t = √15, t/√3 = √5 and
        1 + t²/3 = 6, so the two-sided p = 2(1 − F) = 1 − (2/π)(atan √5 + √5/6) ≈ 0.030466.
        """
        t = paired_test([0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0])
        assert t.t == pytest.approx(math.sqrt(15), rel=1e-12)
        expected = 1 - (2 / math.pi) * (math.atan(math.sqrt(5)) + math.sqrt(5) / 6)
        assert t.p_t == pytest.approx(expected, rel=1e-9)
        assert t.p_t == pytest.approx(0.030466, abs=5e-7)

    def test_errors(self):
        with pytest.raises(ValueError, match="shape"):
            paired_test([1.0], [1.0, 2.0])
        empty = paired_test([], [])
        assert empty.p_value == 1.0
        assert empty.n == 0

    def test_compare_to_baseline(self, searcher):
        configs = [get_variant("lucene"), get_variant("bm25l"), get_variant("okapi")]
        res = run_experiment(searcher, QUERIES, JUDGED, configs, ["RR@10", "nDCG@10"], k=5)
        tests = compare_to_baseline(res, "bm25l", permutations=100)
        assert [(t.metric, t.candidate) for t in tests] == [
            ("RR@10", repr(configs[0])),
            ("RR@10", repr(configs[2])),
            ("nDCG@10", repr(configs[0])),
            ("nDCG@10", repr(configs[2])),
        ]
        assert all(t.baseline == repr(configs[1]) for t in tests)
        assert all(t.n == 4 for t in tests)
        only = compare_to_baseline(res, 0, ["MRR@10"])
        assert [t.metric for t in only] == ["RR@10", "RR@10"]
        with pytest.raises(KeyError):
            compare_to_baseline(res, "tfidf")
