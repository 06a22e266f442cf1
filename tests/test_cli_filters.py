"""search filters and facets on the command line, --meta-column at build, the keys in info."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from bm25desk import cli

ROWS = [
    {"_id": "a", "text": "apple pie", "lang": "en", "topic": "baking"},
    {"_id": "b", "text": "apple tart", "lang": "fr", "topic": "baking"},
    {"_id": "c", "text": "pear apple", "lang": "en"},
    {"_id": "d", "text": "plum", "lang": "de"},
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def jsonl(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), "utf-8")
    argv = ["index", str(path), "--name", "c", "--meta-column", "lang"]
    assert run(capsys, *argv, "--field-column", "topic")[0] == 0
    return "c"


def test_where_filters_and_json_facets(jsonl: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", jsonl, "apple", "--where", "lang=en", "--json", "--facets")
    assert code == 0
    data = json.loads(out)
    assert [h["docid"] for h in data["hits"]] == ["a", "c"]
    assert data["matches"] == 2
    assert data["filters"] == {
        "types": [],
        "folders": [],
        "modified_from": None,
        "modified_to": None,
        "where": {"lang": ["en"]},
    }
    # lang's own filter is left out of its facet: every language the query matches
    assert data["facets"] == {"lang": [{"value": "en", "count": 2}, {"value": "fr", "count": 1}]}
    code, out, _ = run(capsys, "search", jsonl, "apple", "--where", "lang=en", "--where", "lang=fr")
    assert code == 0
    assert "filtered (lang en|fr): N, df and Lavg are the collection's" in out
    code, out, _ = run(capsys, "search", jsonl, "apple", "--where", "lang=de")
    assert code == 1  # nothing passes: no results
    code, out, _ = run(capsys, "info", jsonl, "--json")
    assert json.loads(out)["metadata"] == {"lang": 3}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--where", "colour=red"], "has no metadata key 'colour'"),
        (["--where", "lang"], "expected KEY=VALUE"),
        (["--type", "pdf"], "has no file types"),
        (["--modified-since", "2024-1-1x"], "is not a date"),
        (["--modified-since", "2024-02-02", "--modified-until", "2024-02-01"], "is after"),
    ],
)
def test_bad_filters_exit_2_with_one_line(
    jsonl: str, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    code, out, err = run(capsys, "search", jsonl, "apple", *options)
    assert code == 2
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_meta_columns_need_named_columns(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("1\tsome passage\n", "utf-8")
    code, _, err = run(capsys, "index", str(path), "--meta-column", "lang")
    assert code == 2
    assert "header row or a BEIR/JSONL" in err


def test_folder_filters_and_text_facets(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "docs"
    files = {"notes/2024/plan.md": 2024, "notes/r.txt": 2024, "mail/m.txt": 2023, "x.md": 2022}
    for rel, year in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("apple budget")
        t = time.mktime((year, 6, 1, 12, 0, 0, 0, 0, -1))
        os.utime(path, (t, t))
    assert run(capsys, "index", str(root), "--name", "f")[0] == 0
    code, out, _ = run(
        capsys, "search", "f", "apple", "--folder", "notes", "--type", "md", "--json"
    )
    assert [h["docid"] for h in json.loads(out)["hits"]] == ["notes/2024/plan.md"]
    argv = ["search", "f", "apple", "--modified-since", "2023-01-01", "--facets", "-k", "10"]
    code, out, _ = run(capsys, *argv, "--modified-until", "2023-12-31")
    assert code == 0
    assert "mail/m.txt" in out
    assert "notes/r.txt" not in out
    assert "  year: 2024 2, 2022 1, 2023 1" in out  # the year facet ignores the date range
    assert "  folder: mail 1" in out
