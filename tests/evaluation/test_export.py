"""Exports (export.py): run files, run cards, per-query CSV, experiment.json."""

from __future__ import annotations

import json

import pytest
from evalkit import JUDGED, QUERIES

from bm25desk.engine.scoring.variants import get_variant
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.export import export_experiment
from bm25desk.evaluation.metrics import evaluate_run
from bm25desk.evaluation.runs import read_run


class TestExport:
    def test_export(self, searcher, tmp_path):
        res = run_experiment(
            searcher, QUERIES, JUDGED, [get_variant("lucene"), get_variant("okapi")], k=5
        )
        files = export_experiment(res, tmp_path / "out")
        names = sorted(p.name for p in files)
        assert names == sorted(
            [
                "Lucene_k1=1.2_b=0.75.run",
                "Lucene_k1=1.2_b=0.75.card.json",
                "Okapi_k1=1.2_b=0.75_epsilon=0.25.run",
                "Okapi_k1=1.2_b=0.75_epsilon=0.25.card.json",
                "per_query.csv",
                "experiment.json",
            ]
        )
        back = read_run(tmp_path / "out" / "Lucene_k1=1.2_b=0.75.run")
        original = res.configs[0].run
        assert original is not None
        assert back.tag == "Lucene(k1=1.2,b=0.75)"
        assert {q: r.docids for q, r in back.rankings.items()} == {
            q: r.docids for q, r in original.rankings.items()
        }
        # re-evaluating the written run gives the same numbers (no ties in this corpus)
        again = evaluate_run(back, JUDGED, res.metrics, queries=list(QUERIES))
        for m in res.metrics:
            assert again.aggregate[m] == pytest.approx(res.configs[0].aggregate[m], abs=1e-12)
        card = json.loads((tmp_path / "out" / "Lucene_k1=1.2_b=0.75.card.json").read_text())
        assert card["variant"] == {
            "key": "lucene",
            "name": "Lucene(k1=1.2, b=0.75)",
            "params": {"k1": 1.2, "b": 0.75},
        }
        assert card["index"]["fingerprint"] == "fake-fp"
        assert card["index"]["analyzer"] == {"tokenizer": "fake"}
        assert card["conventions"]["ties"] == "engine"
        assert card["bm25desk"]
        assert card["created"]
        assert card["run_file"] == "Lucene_k1=1.2_b=0.75.run"
        rows = (tmp_path / "out" / "per_query.csv").read_text().splitlines()
        assert rows[0] == "config,key,qid,judged,missing_judged," + ",".join(res.metrics)
        assert len(rows) == 1 + 2 * 4
        assert rows[1].startswith('"Lucene(k1=1.2, b=0.75)",lucene,q1,1,1,')

    def test_export_needs_runs(self, searcher, tmp_path):
        res = run_experiment(searcher, QUERIES, JUDGED, [get_variant("lucene")], keep_runs=False)
        with pytest.raises(ValueError, match="did not keep"):
            export_experiment(res, tmp_path)
