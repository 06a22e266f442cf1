"""bm25f on the command line: --field-weight / --field-b (search, explain, eval); info's fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bm25desk import cli

RECORDS = [
    {"_id": "a", "title": "Apple pie", "text": "a recipe with pears and sugar"},
    {"_id": "b", "title": "Pear tart", "text": "apple apple apple and more in a long text"},
    {"_id": "c", "title": "Bread", "text": "flour water salt"},
]


@pytest.fixture
def recipes(data_dir: Path, tmp_path: Path) -> str:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), "utf-8")
    assert cli.main(["index", str(path), "--name", "recipes"]) == 0
    return "recipes"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def ranked(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    code, out, _ = run(capsys, "search", *argv, "--json")
    assert code == 0
    return [h["docid"] for h in json.loads(out)["hits"]]


def test_field_weights_move_title_matches(recipes: str, capsys: pytest.CaptureFixture[str]) -> None:
    title_heavy = ranked(
        capsys, recipes, "apple", "--variant", "bm25f", "--field-weight", "title=5"
    )
    assert title_heavy == ["a", "b"]
    text_only = ranked(capsys, recipes, "apple", "--variant", "bm25f", "--field-weight", "title=0")
    assert text_only == ranked(capsys, recipes, "apple")  # = lucene, the text alone
    assert text_only[0] == "b"
    code, out, _ = run(
        capsys,
        *("search", recipes, "apple", "--variant", "bm25f", "--json"),
        *("--field-weight", "title=2.5", "--field-b", "title=0.9", "--field-b", "text=0.5"),
    )
    assert code == 0
    variant = json.loads(out)["variant"]
    assert (variant["w_title"], variant["b_title"], variant["b_text"]) == (2.5, 0.9, 0.5)


def test_explain_json_has_the_fields(recipes: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", recipes, "apple", "a", "--variant", "bm25f", "--json")
    assert code == 0
    row = json.loads(out)["contributions"][0]
    fields = {f["field"]: f for f in row["fields"]}
    assert fields["title"]["tf"] == 1
    assert fields["title"]["weight"] == 2.0
    assert row["pseudo_tf"] == pytest.approx(fields["text"]["part"] + fields["title"]["part"])
    code, out, _ = run(capsys, "explain", recipes, "apple", "a", "--variant", "bm25f")
    assert code == 0
    assert "in the title field: 1 occurrence in 2 terms" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--variant", "bm25f", "--field-weight", "heading=2"), "has no field 'heading'"),
        (("--variant", "lucene", "--field-weight", "title=2"), "apply to --variant bm25f only"),
        (("--variant", "bm25f", "--field-b", "title"), "write FIELD=NUMBER"),
        (("--variant", "bm25f", "--field-weight", "title=99"), "out of range"),
    ],
)
def test_bad_field_flags_exit_2(
    recipes: str, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    for command in (("search", recipes, "apple"), ("explain", recipes, "apple", "a")):
        code, _, err = run(capsys, *command, *argv)
        assert code == 2
        assert message in err
        assert len(err.strip().splitlines()) == 1


def test_info_lists_the_fields(recipes: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "info", recipes, "--json")
    assert code == 0
    fields = {f["field"]: f for f in json.loads(out)["fields"]}
    assert set(fields) == {"text", "title"}
    assert fields["title"]["avg_length"] == pytest.approx(5 / 3)  # apple pie, pear tart, bread
    assert fields["title"]["documents"] == 3
    code, out, _ = run(capsys, "info", recipes)
    assert "fields:   text (average length" in out


def test_eval_with_field_weights(
    recipes: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tapple\n", "utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n", "utf-8")
    inputs = ("eval", recipes, "--queries", str(queries), "--qrels", str(qrels))
    metric = ("--metrics", "RR", "--json")
    code, out, _ = run(capsys, *inputs, "--variants", "bm25f", "--field-weight", "title=5", *metric)
    assert code == 0
    assert json.loads(out)["configs"][0]["params"]["w_title"] == 5.0
    code, _, err = run(capsys, *inputs, "--variants", "lucene", "--field-weight", "title=5")
    assert code == 2
    assert "bm25f variant only" in err
    code, _, err = run(capsys, *inputs, "--variants", "bm25f", "--field-b", "nope=0.5")
    assert code == 2
    assert "has no field 'nope'" in err
