"""The command line of issue 14 part A: add/remove by id, look inside, CSV export, edits in info.

Exit codes as the README gives them: 0 ok, 1 no results, 2 bad input, 3 damaged, 4 could not
write. CSV is RFC 4180 (read back here with the csv module) with control characters escaped.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from bm25desk import cli
from bm25desk.engine import IndexStore, Searcher, get_variant

FIRST = "p1\tapple pie\np2\tbanana bread\np3\tcherry pie and apple\n"
MORE = 'p4\tkiwi, "tart" and apple\np2\tbanana split\n'


@pytest.fixture
def passages(data_dir: Path, tmp_path: Path) -> str:
    path = tmp_path / "passages.tsv"
    path.write_text(FIRST, "utf-8")
    assert cli.main(["index", str(path), "--name", "fruit"]) == 0
    return "fruit"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def live(name: str) -> list[str]:
    return [docid for _, docid, _, _ in IndexStore().open(name).iter_live()]


def test_add_and_remove(passages: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    more = tmp_path / "more.tsv"
    more.write_text(MORE, "utf-8")
    code, out, _ = run(capsys, "add", passages, str(more), "--json")
    assert code == 0
    report = json.loads(out)
    assert (report["added"], report["replaced"], report["documents"]) == (1, 1, 4)
    assert live(passages) == ["p1", "p3", "p4", "p2"]  # the replaced p2 moves to the end
    ids = tmp_path / "ids.txt"
    ids.write_text("p1\n\np4\n", "utf-8")
    code, out, _ = run(capsys, "remove", passages, "--ids", str(ids), "p3", "nope")
    assert code == 0
    assert "Removed 3 documents" in out
    assert "'nope'" in out
    assert live(passages) == ["p2"]
    code, out, _ = run(capsys, "info", passages)
    assert "edited:   2 time(s) by id since the build (1 added, 1 replaced, 3 removed" in out


def test_add_and_remove_errors(
    passages: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "add", passages, str(tmp_path / "missing.tsv"))
    assert code == 2
    assert err.startswith("bm25desk: error: ")
    assert err.count("\n") == 1
    code, _, err = run(capsys, "remove", passages, "--ids", "nope")
    assert code == 2
    assert "no document of 'fruit' has any of these ids" in err
    code, _, err = run(capsys, "add", "nosuch", str(tmp_path))
    assert code == 2
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("hello", "utf-8")
    assert cli.main(["index", str(folder), "--name", "folder"]) == 0
    more = tmp_path / "more.tsv"
    more.write_text(MORE, "utf-8")
    code, _, err = run(capsys, "add", "folder", str(more))
    assert code == 2
    assert "folder" in err
    assert live(passages) == ["p1", "p2", "p3"]


def test_remove_waits_for_no_one_while_another_writes(
    passages: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with IndexStore().writing(passages):
        code, _, err = run(capsys, "remove", passages, "--ids", "p1")
    assert code == 4
    assert "bm25desk: error:" in err
    assert live(passages) == ["p1", "p2", "p3"]


def test_update_discard_edits(
    passages: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "remove", passages, "--ids", "p2")[0] == 0
    (tmp_path / "passages.tsv").write_text("p1\tplum\n", "utf-8")
    code, _, err = run(capsys, "update", passages)
    assert code == 2
    assert "--discard-edits" in err
    code, out, _ = run(capsys, "update", passages, "--discard-edits", "--json")
    assert code == 0
    assert json.loads(out)["documents"] == 1


def test_terms(passages: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "terms", passages, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["total"] == IndexStore().open(passages).n_terms
    assert data["terms"][0] == {"term": "appl", "df": 2, "cf": 2}
    code, out, _ = run(capsys, "terms", passages, "--sort", "term", "--prefix", "b", "--csv")
    assert code == 0
    assert rows(out) == [
        {"term": "banana", "df": "1", "cf": "1"},
        {"term": "bread", "df": "1", "cf": "1"},
    ]
    assert run(capsys, "terms", passages, "--prefix", "zz")[0] == 1
    assert run(capsys, "terms", passages, "--top", "0")[0] == 2
    assert run(capsys, "terms", passages, "--csv", "--json")[0] == 2


def test_postings(passages: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "postings", passages, "pie", "--variant", "bm25l", "--json")
    assert code == 0
    data = json.loads(out)
    searcher = Searcher(IndexStore().open(passages))
    hits = searcher.search("pie", get_variant("bm25l"), 10).hits
    assert [(p["docid"], p["contribution"]) for p in data["postings"]] == [
        (h.docid, h.score) for h in hits
    ]
    assert (data["term"], data["df"], data["total"]) == ("pie", 2, 2)
    assert data["fields"] == ["text"]
    code, out, _ = run(capsys, "postings", passages, "pie", "--variant", "bm25f")
    assert out.startswith("pie: df 2, cf 2, idf ")  # no titles here: bm25f scores the text only
    code, out, _ = run(capsys, "postings", passages, "PIE", "--sort", "docno", "--csv")
    assert code == 0
    assert [(r["docno"], r["docid"], r["tf"], r["length"]) for r in rows(out)] == [
        ("0", "p1", "1", "2"),
        ("2", "p3", "1", "3"),
    ]
    code, out, _ = run(capsys, "postings", passages, "pie", "--all", "--csv", "--ascending")
    assert [r["docid"] for r in rows(out)] == ["p3", "p1"]  # longer document: smaller weight
    code, out, _ = run(capsys, "postings", passages, "pie", "--limit", "1", "--offset", "1")
    assert code == 0
    assert "postings 2–2 of 2" in out
    code, _, err = run(capsys, "postings", passages, "zebra")
    assert code == 1
    assert err == "bm25desk: 'zebra' is in no document of 'fruit'\n"
    assert run(capsys, "postings", passages, "pie", "--limit", "0")[0] == 2
    assert run(capsys, "postings", passages, "pie", "--offset", "-1")[0] == 2


def test_doc_terms(passages: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doc-terms", passages, "p3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["exact"] is True
    assert data["length"] == 3  # "and" is a stop word
    assert sorted(t["term"] for t in data["terms"]) == ["appl", "cherri", "pie"]
    code, out, _ = run(capsys, "doc-terms", passages, "p3", "--csv", "--limit", "1")
    assert [r["term"] for r in rows(out)] == ["cherri"]  # df 1: the heaviest
    code, _, err = run(capsys, "doc-terms", passages, "p9")
    assert code == 2
    assert "no document with id 'p9'" in err


def test_search_and_explain_csv(
    passages: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    more = tmp_path / "more.tsv"
    more.write_text(MORE, "utf-8")
    assert run(capsys, "add", passages, str(more))[0] == 0
    code, out, _ = run(capsys, "search", passages, "apple pie", "--json")
    hits = json.loads(out)["hits"]
    code, out, _ = run(capsys, "search", passages, "apple pie", "--csv")
    assert code == 0
    got = rows(out)
    assert list(got[0]) == [
        "rank",
        "docid",
        "score",
        "length",
        "title",
        "location",
        "tf:appl",
        "weight:appl",
        "tf:pie",
        "weight:pie",
    ]
    assert [(r["docid"], float(r["score"])) for r in got] == [
        (h["docid"], h["score"]) for h in hits
    ]
    code, out, _ = run(capsys, "search", passages, "apple pie", "--csv", "--explain")
    ledger = rows(out)
    assert {(r["docid"], r["rank"]) for r in ledger} == {(h["docid"], str(h["rank"])) for h in hits}
    code, out, _ = run(capsys, "explain", passages, "apple pie", "p1", "p4", "--csv")
    assert code == 0
    ledger = rows(out)
    assert [(r["docid"], r["term"], r["status"]) for r in ledger] == [
        ("p1", "appl", "matched"),
        ("p1", "pie", "matched"),
        ("p4", "appl", "matched"),
        ("p4", "pie", "unmatched"),
    ]
    total = sum(float(r["weight"]) for r in ledger if r["docid"] == "p1")
    assert total == pytest.approx(float(ledger[0]["score"]), rel=1e-12)
    assert run(capsys, "search", passages, "zebra", "--csv")[0] == 1


def test_csv_quotes_and_escapes(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hostile.tsv"
    path.write_text('id\ttitle\ttext\nx,"1"\tA \x1b[2J, "quoted"\tbody words\n', "utf-8")
    assert cli.main(["index", str(path), "--name", "h"]) == 0
    code, out, _ = run(capsys, "search", "h", "body", "--csv")
    assert code == 0
    assert '"x,""1"""' in out  # RFC 4180: quoted, quotes doubled
    assert "\x1b" not in out
    (row,) = rows(out)
    assert row["docid"] == 'x,"1"'
    assert row["title"] == 'A \\x1b[2J, "quoted"'


def test_info_names_the_cjk_analyzer(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "zh.tsv"
    path.write_text("z1\t学而时习之\n", "utf-8")
    assert cli.main(["index", str(path), "--name", "zh", "--tokenizer", "cjk"]) == 0
    code, out, _ = run(capsys, "info", "zh")
    assert "analyzer: CJK bigram tokenizer (Han, Kana, Hangul bigrams; words elsewhere)" in out
    code, out, _ = run(capsys, "info", "zh", "--json")
    assert code == 0
    assert json.loads(out)["analyzer"]["tokenizer"] == "cjk"
    code, out, _ = run(capsys, "terms", "zh", "--sort", "term", "--csv")
    assert code == 0
    assert [r["term"] for r in rows(out)] == ["习之", "学而", "时习", "而时"]


def test_update_of_a_grown_file_says_what_it_did(
    passages: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "passages.tsv"
    with open(source, "a", encoding="utf-8") as fh:
        fh.write("p4\tkiwi tart\np5\tplu")
    code, out, _ = run(capsys, "update", passages, "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["rebuilt"], data["added"], data["documents"]) == (False, 1, 4)
    assert data["note"].startswith("Appended: the file grew from 53 to 66 bytes")
    code, out, _ = run(capsys, "update", passages)
    assert out.strip() == (
        "'fruit' is up to date (4 documents). "
        "Nothing new yet: the file grew by 6 bytes but has no complete new line."
    )
    source.write_text("p1\tplum\n", "utf-8")
    code, out, _ = run(capsys, "update", passages)
    assert code == 0
    assert "Rebuilt: the file shrank from 66 to 8 bytes." in out


def test_variants_use_the_one_name_the_app_shows(capsys) -> None:
    """Issue 10: the registry's label with its key, as the picker and the ledger show it."""
    from bm25desk import cli
    from bm25desk.engine.scoring.variants import variant_classes

    assert cli.main(["variants"]) == 0
    out = capsys.readouterr().out
    for cls in variant_classes():
        assert cls.display_name() in out.splitlines()
    assert cli.main(["variants", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in data] == [c.display_name() for c in variant_classes()]


def test_bm25f_postings_say_which_fields_df_and_cf_count(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "corpus.jsonl"
    docs = [("d1", "Pie", "apple pie"), ("d2", "Tarts", "cherry pie tart"), ("d3", "", "plum")]
    path.write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs), "utf-8"
    )
    assert cli.main(["index", str(path), "--name", "titled", "--format", "beir"]) == 0
    code, out, _ = run(capsys, "postings", "titled", "pie", "--variant", "bm25f")
    assert code == 0
    # BEIR puts the title first in the text: pie twice in d1's text, once in d2's, once in a title
    assert out.startswith("pie: df 2, cf 4 over text + title, idf ")
    code, out, _ = run(capsys, "postings", "titled", "pie", "--variant", "bm25f", "--json")
    assert json.loads(out)["fields"] == ["text", "title"]
