"""The eval and sweep commands (cli.py): tables, JSON, run files, one-line errors, exit codes."""

from __future__ import annotations

import json

import pytest
from evalkit import (
    run_cli,
)

from bm25desk.evaluation.cli import parse_range
from bm25desk.evaluation.data import EvalInputError


class TestCli:
    def test_eval_table(self, cli_files, capsys):
        q, r = cli_files
        code = run_cli(
            [
                "eval",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variants",
                "lucene,okapi:k1=1.5,b=0.75",
                "--b",
                "0.5",
                "--k",
                "20",
                "--per-query",
                "--baseline",
                "lucene",
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "Lucene(k1=1.2, b=0.5)" in out  # global --b applied
        assert "Okapi(k1=1.5, b=0.75, epsilon=0.25)" in out  # inline wins
        assert "RR@10" in out
        assert "mean over 4 judged queries" in out
        assert "paired tests against Lucene(k1=1.2, b=0.5)" in out
        assert "per query: Okapi" in out
        assert "note:" in err

    def test_eval_json_and_run_dir(self, cli_files, capsys, tmp_path):
        q, r = cli_files
        code = run_cli(
            [
                "eval",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variants",
                "bm25plus",
                "--delta",
                "0.5",
                "--metrics",
                "MRR@10,MAP",
                "--average",
                "all",
                "--json",
                "--run-dir",
                str(tmp_path / "runs"),
            ]
        )
        out, _ = capsys.readouterr()
        assert code == 0
        data = json.loads(out)
        assert data["metrics"] == ["RR@10", "AP"]
        assert data["configs"][0]["name"] == "BM25Plus(k1=1.2, b=0.75, delta=0.5)"
        assert data["conventions"]["average"] == "all"
        assert data["queries"]["evaluated"] == 5
        assert (tmp_path / "runs" / "per_query.csv").exists()
        assert len(data["files"]) == 4

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (["--metrics", "bogus@3"], "unknown metric 'bogus@3'"),
            (["--variants", "nope"], "unknown variant 'nope'"),
            (["--variants", "tfidf", "--k1", "1.0"], "--k1: none of the chosen variants"),
            (["--variants", "lucene", "--b", "2"], "out of range"),
            (["--baseline", "okapi", "--variants", "lucene"], "--baseline okapi"),
            (["--k", "0"], "--k must be at least 1"),
        ],
    )
    def test_eval_bad_input(self, cli_files, capsys, extra, message):
        q, r = cli_files
        code = run_cli(["eval", "tiny", "--queries", str(q), "--qrels", str(r), *extra])
        _, err = capsys.readouterr()
        assert code == 2
        assert message in err
        assert len(err.strip().splitlines()) == 1

    def test_eval_missing_file_and_index(self, cli_files, capsys, tmp_path):
        q, r = cli_files
        assert (
            run_cli(["eval", "tiny", "--queries", str(tmp_path / "no.tsv"), "--qrels", str(r)]) == 2
        )
        assert "no such file" in capsys.readouterr().err
        assert run_cli(["eval", "other", "--queries", str(q), "--qrels", str(r)]) == 2
        assert "cannot open index 'other'" in capsys.readouterr().err

    def test_sweep(self, cli_files, capsys):
        q, r = cli_files
        code = run_cli(
            [
                "sweep",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variant",
                "bm25l",
                "--k1",
                "0.5:1.5:0.5",
                "--b",
                "0.25,0.75",
                "--delta",
                "0.5:1",
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "nDCG@10 for bm25l (k1, b, delta)" in out
        assert "delta = 0.6" in out
        assert "best nDCG@10:" in out

    def test_sweep_json(self, cli_files, capsys):
        q, r = cli_files
        code = run_cli(
            [
                "sweep",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variant",
                "lucene",
                "--k1",
                "0.5:1.0:0.25",
                "--metric",
                "RR@10,nDCG@10",
                "--json",
            ]
        )
        out, _ = capsys.readouterr()
        assert code == 0
        data = json.loads(out)
        assert data["axes"] == {"k1": [0.5, 0.75, 1.0]}
        assert set(data["grids"]) == {"RR@10", "nDCG@10"}

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (["--variant", "lucene", "--k1", "1:0.5:0.1"], "end is before the start"),
            (["--variant", "lucene", "--k1", "0.5:1:0"], "step must be positive"),
            (["--variant", "lucene", "--k1", "a:b"], "expected A:B:STEP"),
            (["--variant", "lucene", "--delta", "0.5"], "no parameter 'delta'"),
            (["--variant", "lucene"], "at least one parameter range"),
            (["--variant", "lucene", "--b", "0:2:0.5"], "out of range"),
        ],
    )
    def test_sweep_bad_input(self, cli_files, capsys, extra, message):
        q, r = cli_files
        code = run_cli(["sweep", "tiny", "--queries", str(q), "--qrels", str(r), *extra])
        _, err = capsys.readouterr()
        assert code == 2
        assert message in err

    def test_registered_in_the_real_cli(self):
        cli = pytest.importorskip("bm25desk.cli")
        args = cli.build_parser().parse_args(
            ["eval", "idx", "--queries", "q", "--qrels", "r", "--json", "--k1", "0.9"]
        )
        assert args.handler.__name__ == "cmd_eval"
        assert args.json
        assert args.k1 == 0.9

    def test_parse_range(self):
        assert parse_range("0.1:0.3:0.1") == [0.1, 0.2, 0.3]
        assert parse_range("0.5:1.5:0.25") == [0.5, 0.75, 1.0, 1.25, 1.5]
        assert parse_range("0.9") == [0.9]
        assert parse_range("0.9,1.2") == [0.9, 1.2]
        assert parse_range("1:1.2") == [1.0, 1.1, 1.2]
        with pytest.raises(EvalInputError, match="too many"):
            parse_range("0:100:0.01")
