"""TREC run files (runs.py): reading, exact round trips, refusing what the format cannot hold."""

from __future__ import annotations

import pytest
from evalkit import lines_of

from bm25desk.evaluation.data import Ranking, Run
from bm25desk.evaluation.runs import format_run, parse_run, read_run, write_run


class TestRuns:
    def test_parse_sorts_by_rank_and_reports(self):
        text = (
            "q1 Q0 d2 2 1.5 tagA\n"
            "q1 Q0 d1 1 2.5 tagA\n"
            "q1 Q0 d1 3 0.5 tagA\n"
            "q1 Q0 d3 x 0.5 tagA\n"
            "q1 Q0 d4 4 nan tagA\n"
            "q1 Q0 d5 4 abc tagA\n"
            "q2 Q0 d9 1 1\n"
            "q2 Q0 d9 1 1 tagB\n"
        )
        run = parse_run(text)
        assert run.tag == "tagA"
        assert run.rankings["q1"].docids == ("d1", "d2")
        assert run.rankings["q1"].scores.tolist() == [2.5, 1.5]
        assert run.rankings["q2"].docids == ("d9",)
        assert lines_of(run) == [3, 4, 5, 6, 7]
        assert any("several run tags" in n for n in run.notes)
        assert run.n_hits == 3

    def test_empty_run(self):
        run = parse_run("")
        assert len(run) == 0
        assert format_run(run) == ""

    def test_round_trip_exact_scores(self, tmp_path):
        run = Run(
            {
                "q1": Ranking.of(["d1", "d2", "d3"], [1 / 3, 1 / 3, 1e-17]),
                "q2": Ranking.of(["d9"], [12.345678901234567]),
            },
            tag="Lucene(k1=0.9, b=0.4)",
        )
        for name in ("run.trec", "run.trec.gz"):
            path = write_run(run, tmp_path / name)
            back = read_run(path)
            assert back.tag == "Lucene(k1=0.9,b=0.4)"  # whitespace removed
            assert {q: r.docids for q, r in back.rankings.items()} == {
                q: r.docids for q, r in run.rankings.items()
            }
            for q in run.rankings:
                assert back.rankings[q].scores.tolist() == run.rankings[q].scores.tolist()
        assert not list(tmp_path.glob("*.tmp"))
        first = (tmp_path / "run.trec").read_text().splitlines()[0]
        assert first == "q1 Q0 d1 1 0.3333333333333333 Lucene(k1=0.9,b=0.4)"

    def test_write_refuses_whitespace_ids(self):
        run = Run({"q1": Ranking.of(["my doc.txt"], [1.0])})
        with pytest.raises(ValueError, match="whitespace"):
            format_run(run)

    def test_ranking_is_read_only(self):
        r = Ranking.of(["a"], [1.0])
        with pytest.raises(ValueError, match="read-only"):
            r.scores[0] = 2.0
        with pytest.raises(ValueError, match="docids but"):
            Ranking.of(["a", "b"], [1.0])
