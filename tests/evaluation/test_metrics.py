"""Metrics through ir_measures (metrics.py): names, conventions, per-query values."""

from __future__ import annotations

import math

import ir_measures
import pytest
from evalkit import QRELS, run_of

from bm25desk.evaluation.data import EvalInputError, Ranking, Run
from bm25desk.evaluation.metrics import (
    DEFAULT_METRICS,
    EvalOptions,
    evaluate_run,
    metric_cutoff,
    parse_metrics,
)
from bm25desk.evaluation.qrels import parse_qrels


class TestMetrics:
    def test_parse_metrics(self):
        ms = parse_metrics("MRR@10, nDCG@10,MAP,P_10,recip_rank,R@1000,Judged@10,RR@10")
        assert [str(m) for m in ms] == [
            "RR@10",
            "nDCG@10",
            "AP",
            "P@10",
            "RR",
            "R@1000",
            "Judged@10",
        ]
        assert [str(m) for m in parse_metrics("P(rel=2)@5,nDCG@10")] == ["P(rel=2)@5", "nDCG@10"]
        assert len(parse_metrics(DEFAULT_METRICS)) == 7
        assert metric_cutoff("nDCG@10") == 10
        assert metric_cutoff("AP") is None

    @pytest.mark.parametrize("bad", ["foo", "nDCG@x", "", "RR@10,,bogus@3"])
    def test_unknown_metric(self, bad):
        with pytest.raises(EvalInputError):
            parse_metrics(bad)

    def test_matches_ir_measures_directly(self):
        qrels = parse_qrels(QRELS)
        run = run_of({"q1": [("d1", 3.0), ("d4", 2.0), ("d3", 1.0)], "q3": [("d1", 1.0)]})
        res = evaluate_run(run, qrels, DEFAULT_METRICS)
        direct = ir_measures.calc_aggregate(
            parse_metrics(DEFAULT_METRICS),
            {q: dict(d) for q, d in qrels.judgements.items()},
            {"q1": {"d1": 3.0, "d4": 2.0, "d3": 1.0}, "q3": {"d1": 1.0}},
        )
        for m, v in direct.items():
            assert res.aggregate[str(m)] == pytest.approx(v, abs=1e-12)
        # q2 is judged but absent from the run: counted 0 (trec_eval -c)
        assert res.qids == ("q1", "q2", "q3")
        assert res.query("q2")["RR@10"] == 0.0
        assert res.query("q1")["RR@10"] == 1.0
        assert res.values("MRR@10").tolist() == [1.0, 0.0, 0.0]

    def test_average_all_vs_judged(self):
        qrels = parse_qrels(QRELS)
        run = run_of({"q1": [("d1", 1.0)], "q4": [("d1", 1.0)], "q5": [("x", 1.0)]})
        topic = ["q1", "q2", "q3", "q4", "q5"]
        judged = evaluate_run(run, qrels, ["RR@10"], queries=topic)
        every = evaluate_run(run, qrels, ["RR@10"], queries=topic, options=EvalOptions("all"))
        assert judged.qids == ("q1", "q2", "q3")
        assert judged.unjudged == ("q4", "q5")
        assert judged.aggregate["RR@10"] == pytest.approx(1 / 3)
        assert every.qids == tuple(topic)
        assert every.aggregate["RR@10"] == pytest.approx(1 / 5)
        # d1 is relevant for q1 but q4 is unjudged: 0 under "all", whatever it retrieved
        assert every.query("q4")["RR@10"] == 0.0
        assert judged.aggregate["RR@10"] * 3 == pytest.approx(every.aggregate["RR@10"] * 5)

    def test_default_topic_set_includes_run_only_queries_for_all(self):
        qrels = parse_qrels(QRELS)
        run = run_of({"q1": [("d1", 1.0)], "q9": [("x", 1.0)]})
        res = evaluate_run(run, qrels, ["RR@10"], options=EvalOptions(average="all"))
        assert res.qids == ("q1", "q2", "q3", "q9")

    def test_ties_engine_vs_trec_eval(self):
        # All scores tie. The engine ranked d1 first; trec_eval orders ties by docid descending.
        qrels = parse_qrels("q 0 d1 1\nq 0 d2 0\n")
        run = run_of({"q": [("d1", 1.0), ("d0", 1.0), ("d2", 1.0)]})
        engine = evaluate_run(run, qrels, ["RR@10", "Judged@1"])
        trec = evaluate_run(
            run, qrels, ["RR@10", "Judged@1"], options=EvalOptions(ties="trec_eval")
        )
        assert engine.aggregate["RR@10"] == 1.0
        assert engine.aggregate["Judged@1"] == 1.0
        assert trec.aggregate["RR@10"] == 0.5  # d2, d1, d0
        # the Judged provider breaks ties by docid ascending (d0 first, unjudged)
        assert trec.aggregate["Judged@1"] == 0.0

    def test_empty_run_counts_zero_for_judged_queries(self):
        res = evaluate_run(Run({}), parse_qrels(QRELS), DEFAULT_METRICS)
        assert res.qids == ("q1", "q2", "q3")
        assert all(v == 0.0 for v in res.aggregate.values())

    def test_query_with_empty_ranking(self):
        run = Run({"q1": Ranking.of([], [])})
        res = evaluate_run(run, parse_qrels(QRELS), ["RR@10"])
        assert res.aggregate["RR@10"] == 0.0

    def test_cutoff_larger_than_run(self):
        qrels = parse_qrels("q 0 a 1\nq 0 b 1\nq 0 c 1\nq 0 z 1\n")
        run = run_of({"q": [("a", 3.0), ("x", 2.0), ("b", 1.0)]})
        res = evaluate_run(run, qrels, ["R@1000", "P@10", "Judged@10"])
        assert res.aggregate["R@1000"] == pytest.approx(0.5)
        assert res.aggregate["P@10"] == pytest.approx(0.2)
        assert res.aggregate["Judged@10"] == pytest.approx(2 / 3)  # ir_measures: judged/len(run)

    def test_drop_self_hits(self):
        qrels = parse_qrels("q1 0 d1 1\nq1 0 q1 1\n")
        run = run_of({"q1": [("q1", 3.0), ("d1", 2.0)]})
        kept = evaluate_run(run, qrels, ["RR@10", "P@1"])
        dropped = evaluate_run(
            run, qrels, ["RR@10", "P@1"], options=EvalOptions(drop_self_hits=True)
        )
        assert kept.aggregate["P@1"] == 1.0
        assert dropped.aggregate["RR@10"] == 1.0  # d1 moves to rank 1
        assert dropped.aggregate["P@1"] == 1.0

    def test_no_queries_gives_nan(self):
        res = evaluate_run(Run({}), parse_qrels(QRELS), ["RR@10"], queries=["zz"])
        assert res.qids == ()
        assert math.isnan(res.aggregate["RR@10"])

    def test_options_validated(self):
        with pytest.raises(EvalInputError):
            EvalOptions(average="some")  # type: ignore[arg-type]
        with pytest.raises(EvalInputError):
            EvalOptions(ties="random")  # type: ignore[arg-type]
        assert set(EvalOptions().describe()) == {"average", "ties", "self_hits"}
