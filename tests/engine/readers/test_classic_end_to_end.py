"""NPL, LISA and TIME from their own files to evaluation numbers, through the command line.

Each collection's fixture (tests/data/corpus, real layout) is indexed as it comes, then evaluated
with the queries and judgements of tests/data/eval in their real layouts. Wrong ids would show
here: TIME's judgements count documents by position, so an index keyed by the ``*TEXT`` numbers
finds none of them and ``eval`` fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from reader_helpers import FIXTURES, REPO, write

from bm25desk import cli

EVAL = REPO / "tests" / "data" / "eval"

Run = Callable[..., tuple[int, str, str]]

COLLECTIONS = [
    # (name, corpus under tests/data/corpus, format, queries, judgements, documents)
    ("npl", "npl/doc-text", "npl", "query-text", "rlv-ass", 12),
    ("lisa", "lisa", "lisa", "LISA.QUE", "LISARJ.NUM", 9),
    ("time", "time/TIME.ALL", "time", "TIME.QUE", "TIME.REL", 7),
]


@pytest.fixture
def bm25desk(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Run:
    """Run the real command line on a private data dir; return ``(exit status, stdout, stderr)``.

    ``data_dir`` also clears a ``--data-dir`` an earlier CLI test left set in this process.
    """

    def run(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.mark.parametrize("detected", [True, False], ids=["detected", "--format"])
@pytest.mark.parametrize(("name", "corpus", "fmt", "queries", "qrels", "n"), COLLECTIONS)
def test_index_then_evaluate(
    bm25desk: Run,
    detected: bool,
    name: str,
    corpus: str,
    fmt: str,
    queries: str,
    qrels: str,
    n: int,
) -> None:
    choice = () if detected else ("--format", fmt)
    code, out, err = bm25desk("index", str(FIXTURES / corpus), "--name", name, *choice, "--json")
    assert code == 0, err
    assert json.loads(out)["documents"] == n
    files = ("--queries", str(EVAL / fmt / queries), "--qrels", str(EVAL / fmt / qrels))
    metrics = ("--metrics", "RR@10,nDCG@10,AP")
    code, out, err = bm25desk("eval", name, *files, "--variants", "lucene", *metrics, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["queries"]["format"], data["qrels"]["format"]) == (fmt, fmt)
    assert data["queries"]["evaluated"] == 3
    assert data["qrels"]["missing_from_index"] == 0  # every judged document id is in the index
    aggregate = data["configs"][0]["aggregate"]
    assert aggregate["RR@10"] > 0.5
    assert aggregate["nDCG@10"] > 0.5
    assert aggregate["AP"] > 0


def test_lisa_index_says_what_it_left_out(bm25desk: Run) -> None:
    code, out, err = bm25desk("index", str(FIXTURES / "lisa"))
    assert code == 0, err
    assert "into 'lisa'" in out
    assert "LISA0.501:7: duplicate id '3' (first seen at LISA0.001:14)" in err
    assert "not a LISA file (1 file without a numbered extension like LISA0.001's: README)" in err


def test_a_corpus_folder_is_rebuilt_on_update_not_emptied(bm25desk: Run, tmp_path: Path) -> None:
    # A LISA folder (and a BEIR dataset folder) is one corpus: an update reads it again as such.
    # Updated file by file like a folder of documents, it lost every document.
    beir = tmp_path / "scifact-like"
    write(beir / "corpus.jsonl", '{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": "two"}\n')
    write(beir / "queries.jsonl", '{"_id": "q1", "text": "one"}\n')
    for source, name, n in ((FIXTURES / "lisa", "lisa", 9), (beir, "beir", 2)):
        assert bm25desk("index", str(source), "--name", name)[0] == 0
        code, _, err = bm25desk("update", name)
        assert code == 0, err
        code, out, _ = bm25desk("info", name, "--json")
        assert code == 0
        assert json.loads(out)["documents"] == n, name


def test_format_override_that_does_not_fit(bm25desk: Run) -> None:
    code, out, err = bm25desk("index", str(FIXTURES / "time" / "TIME.ALL"), "--format", "lisa")
    assert (code, out) == (2, "")
    (line,) = err.strip().splitlines()
    assert line.startswith("bm25desk: error: no documents found in ")
    assert "TIME.ALL:1 (text outside a record (no 'Document N' line))" in line
