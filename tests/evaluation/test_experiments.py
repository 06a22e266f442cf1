"""Experiments (experiments.py) against a fake searcher: topic sets, depth, notes, cancel."""

from __future__ import annotations

import json

import pytest
from evalkit import JUDGED, QUERIES

from bm25desk.engine.progress import Cancelled, CancelToken
from bm25desk.engine.scoring.variants import get_variant
from bm25desk.evaluation.data import EvalInputError
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.metrics import EvalOptions, evaluate_run


class TestExperiment:
    def test_basic(self, searcher):
        configs = [get_variant("lucene"), get_variant("lucene", k1=0.5, b=0.3)]
        seen: list[tuple[int, int]] = []
        res = run_experiment(
            searcher,
            QUERIES,
            JUDGED,
            configs,
            ["RR@10", "nDCG@10", "R@100"],
            k=3,
            progress=lambda d, t: seen.append((d, t)),
        )
        assert [c.name for c in res.configs] == [repr(v) for v in configs]
        assert res.qids == ("q1", "q2", "q3", "q4")
        assert res.searched == ("q1", "q2", "q3", "q4")
        assert res.unjudged == ("q5",)
        assert res.judged_without_query == ("zz",)
        assert res.missing_judged == {"q1": ("gone",)}
        assert res.missing_relevant == 1
        assert seen[-1] == (8, 8)
        assert any("not in the index" in n for n in res.notes)
        assert any("not in the query set" in n for n in res.notes)
        assert any("nothing to search for" in n and "q4" in n for n in res.notes)
        c = res.configs[0]
        assert c.run is not None
        assert all(len(r) <= 3 for r in c.run.rankings.values())
        assert "q4" not in c.run.rankings  # analysed to nothing: no ranking, counts 0
        # the experiment's numbers are evaluate_run's numbers on its own run
        again = evaluate_run(c.run, JUDGED, res.metrics, queries=list(QUERIES))
        assert dict(again.aggregate) == dict(c.aggregate)
        assert res.config(0) is c
        assert res.config(c.name) is c
        with pytest.raises(KeyError, match="names 2 configurations"):
            res.config("lucene")
        data = json.loads(json.dumps(res.as_dict(per_query=True)))
        assert data["configs"][0]["per_query"]["q1"]["RR@10"] == 1.0
        assert data["conventions"]["average"] == "judged"

    def test_bag_of_words_by_default_and_query_syntax_on_request(self, searcher):
        v = [get_variant("lucene")]
        run_experiment(searcher, {"q1": "cats -dogs"}, {"q1": {"d1": 1}}, v, ["RR@10"], k=5)
        assert searcher.calls == [("terms", ("cats", "-dogs"))]
        searcher.calls.clear()
        run_experiment(
            searcher, {"q1": "cats -dogs"}, {"q1": {"d1": 1}}, v, ["RR@10"], k=5, query_syntax=True
        )
        assert searcher.calls == [("search", "cats -dogs")]

    def test_tokenize(self, searcher):
        res = run_experiment(
            searcher,
            {"q1": "Cats  purr"},
            {"q1": {"d1": 1}},
            [get_variant("okapi")],
            ["RR@10"],
            k=5,
            tokenize=lambda s: s.lower().split(" "),
        )
        assert searcher.calls == [("terms", ("cats", "", "purr"))]
        assert res.configs[0].aggregate["RR@10"] == 1.0
        with pytest.raises(EvalInputError, match="exclude"):
            run_experiment(
                searcher,
                {"q1": "x"},
                {"q1": {"d1": 1}},
                [get_variant("okapi")],
                "RR@10",
                tokenize=str.split,
                query_syntax=True,
            )

    def test_average_all_counts_unjudged_without_searching_them(self, searcher):
        v = [get_variant("lucene")]
        judged = run_experiment(searcher, QUERIES, JUDGED, v, ["RR@10"], k=5)
        every = run_experiment(
            searcher, QUERIES, JUDGED, v, ["RR@10"], k=5, options=EvalOptions(average="all")
        )
        assert every.qids == tuple(QUERIES)
        assert "q5" not in every.searched
        a, b = judged.configs[0].aggregate["RR@10"], every.configs[0].aggregate["RR@10"]
        assert b == pytest.approx(a * 4 / 5)
        unjudged_too = run_experiment(searcher, QUERIES, JUDGED, v, ["RR@10"], search_unjudged=True)
        assert "q5" in unjudged_too.searched

    def test_drop_self_hits_keeps_k_hits(self, searcher):
        v = [get_variant("lucene")]
        plain = run_experiment(searcher, {"q3": "query birds"}, JUDGED, v, ["RR@10"], k=2)
        dropped = run_experiment(
            searcher,
            {"q3": "query birds"},
            JUDGED,
            v,
            ["RR@10"],
            k=2,
            options=EvalOptions(drop_self_hits=True),
        )
        plain_run = plain.configs[0].run
        drop_run = dropped.configs[0].run
        assert plain_run is not None
        assert drop_run is not None
        assert plain_run.rankings["q3"].docids == ("q3", "d4")
        # one extra hit was fetched, so the list is still k long after dropping the self hit
        assert drop_run.rankings["q3"].docids == ("d4", "d5")

    def test_cancel(self, searcher):
        token = CancelToken()
        token.set()
        with pytest.raises(Cancelled):
            run_experiment(searcher, QUERIES, JUDGED, [get_variant("lucene")], cancel=token)

    def test_bad_inputs(self, searcher):
        v = get_variant("lucene")
        with pytest.raises(EvalInputError, match="none of the 1 queries has judgements"):
            run_experiment(searcher, {"x": "cats"}, JUDGED, [v])
        with pytest.raises(EvalInputError, match="listed twice"):
            run_experiment(searcher, QUERIES, JUDGED, [v, get_variant("lucene")])
        with pytest.raises(EvalInputError, match="no configuration"):
            run_experiment(searcher, QUERIES, JUDGED, [])
        with pytest.raises(EvalInputError, match="k must be"):
            run_experiment(searcher, QUERIES, JUDGED, [v], k=0)
        with pytest.raises(EvalInputError, match="unknown metric"):
            run_experiment(searcher, QUERIES, JUDGED, [v], ["nope"])

    def test_depth_note(self, searcher):
        res = run_experiment(searcher, QUERIES, JUDGED, [get_variant("lucene")], ["R@100"], k=10)
        assert any("R@100 looks at 100 hits" in n for n in res.notes)
