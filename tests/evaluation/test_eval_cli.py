"""The eval and sweep commands (cli.py): tables, JSON, run files, one-line errors, exit codes."""

from __future__ import annotations

import json

import pytest
from evalkit import EVAL_DATA, FakeSearcher, make_parser, run_cli, run_with_files

from bm25desk import cli as main_cli
from bm25desk.engine.index.segment import IndexCorruptError
from bm25desk.evaluation import cli
from bm25desk.evaluation.cli import parse_range
from bm25desk.evaluation.data import EvalInputError


class TestCli:
    def test_eval_table(self, cli_files, capsys):
        code = run_with_files(
            "eval",
            cli_files,
            "--variants",
            "lucene,okapi:k1=1.5,b=0.75",
            "--b",
            "0.5",
            "--k",
            "20",
            "--per-query",
            "--baseline",
            "lucene",
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
        code = run_with_files(
            "eval",
            cli_files,
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
        code = run_with_files("eval", cli_files, *extra)
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
        code = run_with_files(
            "sweep",
            cli_files,
            "--variant",
            "bm25l",
            "--k1",
            "0.5:1.5:0.5",
            "--b",
            "0.25,0.75",
            "--delta",
            "0.5:1",
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "nDCG@10 for bm25l (k1, b, delta)" in out
        assert "delta = 0.6" in out
        assert "best nDCG@10:" in out

    def test_sweep_json(self, cli_files, capsys):
        code = run_with_files(
            "sweep",
            cli_files,
            "--variant",
            "lucene",
            "--k1",
            "0.5:1.0:0.25",
            "--metric",
            "RR@10,nDCG@10",
            "--json",
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
        code = run_with_files("sweep", cli_files, *extra)
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


# -- issue 16 item 8 with the real engine: every classic collection evaluates as it comes -------


@pytest.fixture
def bm25desk(tmp_path, monkeypatch, capsys):
    """Run the real command line on a private data dir; return ``(exit status, stdout, stderr)``."""
    monkeypatch.setenv("BM25DESK_DATA_DIR", str(tmp_path / "data"))

    def run(*argv: str) -> tuple[int, str, str]:
        code = main_cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _eval_json(bm25desk, collection: str, corpus: str, queries: str, qrels: str, *extra: str):
    code, _, err = bm25desk("index", str(EVAL_DATA / collection / corpus), "--name", collection)
    assert code == 0, err
    return bm25desk(
        "eval",
        collection,
        "--queries",
        str(EVAL_DATA / collection / queries),
        "--qrels",
        str(EVAL_DATA / collection / qrels),
        "--variants",
        "lucene",
        "--metrics",
        "RR@10,nDCG@10",
        "--json",
        *extra,
    )


@pytest.mark.parametrize(
    ("collection", "corpus", "queries", "qrels", "fmt"),
    [
        ("med", "MED.ALL", "MED.QRY", "MED.REL", "trec"),  # was read as SMART: all 0, exit 0
        ("cacm", "cacm.all", "query.text", "qrels.text", "smart"),  # was read as TREC: all 0
        ("adi", "ADI.ALL", "ADI.QRY", "ADI.REL", "smart"),
    ],
)
def test_smart_collections_evaluate_as_they_come(bm25desk, collection, corpus, queries, qrels, fmt):
    code, out, err = _eval_json(bm25desk, collection, corpus, queries, qrels)
    assert code == 0, err
    data = json.loads(out)
    assert data["qrels"]["format"] == fmt
    assert data["qrels"]["missing_from_index"] == 0
    aggregate = data["configs"][0]["aggregate"]
    assert aggregate["RR@10"] > 0.5
    assert aggregate["nDCG@10"] > 0.5


def test_a_wrong_format_chosen_fails_in_one_line(bm25desk):
    code, out, err = _eval_json(
        bm25desk, "med", "MED.ALL", "MED.QRY", "MED.REL", "--qrels-format", "smart"
    )
    assert code == 2
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("bm25desk: error: ")
    assert "6 of 9 judgements repeat an earlier (query, document) pair" in line
    assert "read as smart 'qid docid 0 0' (as chosen)" in line
    assert "--qrels-format" in line


def test_judgements_whose_documents_are_not_indexed_fail(bm25desk, tmp_path):
    qrels = tmp_path / "ordinal.rel"  # TIME-like: documents numbered by position, not by id
    qrels.write_text("1 0 101 1\n2 0 102 1\n3 0 103 1\n")
    code, _, err = _eval_json(bm25desk, "med", "MED.ALL", "MED.QRY", str(qrels))
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "none of the 3 relevant judged documents is in the index" in line
    assert "indexed ids look like '1', '2', '3'" in line


# -- the Glasgow layouts through the CLI (their document files need a corpus reader: see the
# report of issue 16 item 8; a fake searcher over the same documents stands in) -------------------

GLASGOW_DOCS = {
    "npl": {
        "1": "compact memories digital data storage",
        "2": "electronic analogue computer linear equations",
        "3": "microwave measurement dielectric constant liquids",
        "4": "dielectric properties water microwave frequencies",
        "5": "waveguide fed microwave radiators design",
        "6": "analysis slot radiators waveguide",
    },
    "lisa": {
        "1": "computers circulation control public library",
        "2": "computers catalogue public libraries",
        "3": "training librarians online information retrieval",
        "4": "microcomputers public libraries",
        "5": "librarian education information retrieval online searching",
        "6": "history school libraries britain",
    },
    # TIME.REL numbers documents by their position in TIME.ALL
    "time": {
        "1": "allies nassau nuclear strike force nato",
        "2": "president diem buddhists kennedy administration",
        "3": "de gaulle british entry common market",
        "4": "buddhist crisis saigon diem",
        "5": "britain common market macmillan de gaulle",
    },
}


@pytest.mark.parametrize(
    ("collection", "queries", "qrels"),
    [
        ("npl", "query-text", "rlv-ass"),
        ("lisa", "LISA.QUE", "LISARJ.NUM"),
        ("time", "TIME.QUE", "TIME.REL"),
    ],
)
def test_glasgow_layouts_evaluate(capsys, collection, queries, qrels):
    argv = ["eval", "tiny", "--queries", str(EVAL_DATA / collection / queries)]
    argv += ["--qrels", str(EVAL_DATA / collection / qrels), "--variants", "lucene"]
    code = run_cli([*argv, "--metrics", "RR@10", "--json"], FakeSearcher(GLASGOW_DOCS[collection]))
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert (data["queries"]["format"], data["qrels"]["format"]) == (collection, collection)
    assert data["queries"]["evaluated"] == 3
    assert data["configs"][0]["aggregate"]["RR@10"] > 0.5


def test_every_metric_zero_fails_in_one_line(capsys, tmp_path):
    queries = tmp_path / "q.tsv"
    queries.write_text("".join(f"q{i}\tcats\n" for i in range(5)))
    qrels = tmp_path / "r.txt"
    qrels.write_text("".join(f"q{i} 0 d4 1\n" for i in range(5)))
    code = run_cli(["eval", "tiny", "--queries", str(queries), "--qrels", str(qrels)])
    _, err = capsys.readouterr()
    assert code == 2
    (line,) = [x for x in err.splitlines() if not x.startswith("note:")]
    assert line.startswith("bm25desk: error: every metric is 0 for every configuration")
    assert "judgements read as trec from" in line


def test_self_hits_get_a_hint(capsys, tmp_path):
    docs = {f"a{i}": f"argument {i} about topic{i} and words{i}" for i in range(4)}
    docs |= {f"c{i}": f"counter to topic{i}" for i in range(4)}
    queries = tmp_path / "q.tsv"
    queries.write_text("".join(f"a{i}\t{docs[f'a{i}']}\n" for i in range(4)))
    qrels = tmp_path / "r.txt"
    qrels.write_text("".join(f"a{i} 0 c{i} 1\n" for i in range(4)))
    argv = [
        "eval",
        "tiny",
        "--queries",
        str(queries),
        "--qrels",
        str(qrels),
        "--variants",
        "lucene",
    ]
    assert run_cli(argv, FakeSearcher(docs)) == 0
    _, err = capsys.readouterr()
    (hint,) = [x for x in err.splitlines() if x.startswith("hint: ")]
    assert "4 of 4 queries rank a document with the query's own id first" in hint
    assert run_cli([*argv, "--drop-self-hits"], FakeSearcher(docs)) == 0
    assert "hint:" not in capsys.readouterr().err


def test_a_bug_is_not_reported_as_bad_input(cli_files, monkeypatch):
    """Issue 11: ``except ValueError`` around the experiment made programming errors exit 2."""

    def broken(*args, **kwargs):
        raise ValueError("a bug, not the user's input")

    monkeypatch.setattr(cli, "run_experiment", broken)
    with pytest.raises(ValueError, match="a bug"):
        run_with_files("eval", cli_files)


def test_a_damaged_index_is_not_bad_input(cli_files):
    """A damaged index reaches bm25desk.cli, which exits 3 ("rebuild it"), not 2."""

    def damaged(name: str) -> FakeSearcher:
        raise IndexCorruptError(f"index {name!r} is damaged; rebuild it")

    q, r = cli_files
    args = make_parser().parse_args(["eval", "tiny", "--queries", str(q), "--qrels", str(r)])
    with pytest.raises(IndexCorruptError):
        args.handler(args, damaged)


def test_unknown_variant_parameter_is_bad_input(cli_files, capsys):
    code = run_with_files("eval", cli_files, "--variants", "lucene:z=1")
    assert code == 2
    assert "has no parameter 'z'" in capsys.readouterr().err
