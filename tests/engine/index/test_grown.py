"""A corpus file that only grew is updated by appending its new records (engine/index/grown.py):
exactly a fresh build of the whole file; anything else is rebuilt, and the report says why."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from edit_helpers import assert_same_as_fresh, live_ids, write_beir, write_passages

from bm25desk.engine import CancelToken, IndexStore, StoreError, build_index, update_index
from bm25desk.engine.index.edit import remove_documents
from bm25desk.engine.progress import Cancelled

FIRST = [("p1", "apple pie"), ("p2", "banana bread"), ("p3", "cherry pie and apple")]
MORE = [("p4", "kiwi tart"), ("p5", "apple apple cake")]
QUERIES = ["apple", "pie cake", "kiwi banana cherry"]


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def fresh_of(store: IndexStore, path: Path, fmt: str, **kw) -> object:
    build_index(path, name="fresh", fmt=fmt, store=store, replace=True, **kw)
    return store.open("fresh")


@pytest.fixture
def passages(store: IndexStore, tmp_path: Path) -> Path:
    path = write_passages(tmp_path / "passages.tsv", FIRST)
    build_index(path, name="grow", fmt="msmarco-passages", store=store)
    return path


def test_the_build_records_the_prefix(store: IndexStore, passages: Path) -> None:
    src = store.open("grow").source
    size = passages.stat().st_size
    assert src["size"] == size
    assert src["prefix"]["bytes"] == size
    assert src["prefix"]["lines"] == 3
    assert src["prefix"]["ends_line"] is True
    assert len(src["prefix"]["xxh3"]) == 16


def test_a_grown_file_gets_only_its_new_records(store: IndexStore, passages: Path) -> None:
    old_size = passages.stat().st_size
    append(passages, "".join(f"{i}\t{t}\n" for i, t in MORE))
    report = update_index("grow", store=store)
    assert (report.rebuilt, report.added, report.read, report.indexed) == (False, 2, 2, 2)
    assert report.note.startswith(f"Appended: the file grew from {old_size:,} to ")
    assert "Appended: " in report.summary()
    index = store.open("grow")
    assert live_ids(index) == ["p1", "p2", "p3", "p4", "p5"]
    assert index.source["prefix"]["bytes"] == passages.stat().st_size
    assert index.source["prefix"]["lines"] == 5
    assert_same_as_fresh(index, fresh_of(store, passages, "msmarco-passages"), QUERIES)
    # and again: nothing changed now
    assert update_index("grow", store=store).note == ""
    assert store.open("grow").generation == index.generation


def test_repeated_ids_and_bad_lines_in_the_new_part(store: IndexStore, passages: Path) -> None:
    """A new record with an id the file had earlier is skipped (a build skips it too); skipped
    lines are reported with their line in the whole file."""
    append(passages, "p2\tbanana again\nbroken line without a tab\np6\tplum\n")
    report = update_index("grow", store=store)
    assert report.added == 1
    reasons = {s.where: s.reason for s in report.skipped}
    assert any("duplicate id 'p2'" in r for r in reasons.values())
    assert f"{passages}:5" in reasons  # the broken line is the file's fifth
    index = store.open("grow")
    assert live_ids(index) == ["p1", "p2", "p3", "p6"]
    assert_same_as_fresh(index, fresh_of(store, passages, "msmarco-passages"), QUERIES)


def test_tsv_with_a_header_and_jsonl_grow_too(store: IndexStore, tmp_path: Path) -> None:
    tsv = tmp_path / "table.tsv"
    tsv.write_text("id\ttitle\ttext\nt1\tApples\tapple pie\nt2\tPears\tpear tart\n", "utf-8")
    build_index(tsv, name="table", store=store)
    assert store.open("table").source["format"] == "tsv-header"
    append(tsv, "t3\tKiwis\tkiwi and apple\n")
    assert update_index("table", store=store).added == 1
    index = store.open("table")
    assert live_ids(index) == ["t1", "t2", "t3"]
    assert index.doc(2).title == "Kiwis"
    assert_same_as_fresh(index, fresh_of(store, tsv, "tsv-header"), QUERIES)

    jsonl = write_beir(tmp_path / "corpus.jsonl", FIRST)
    build_index(jsonl, name="beir", store=store)
    append(jsonl, '{"_id": "p4", "title": "", "text": "kiwi tart"}\n')
    report = update_index("beir", store=store)
    assert (report.rebuilt, report.added) == (False, 1)
    assert_same_as_fresh(store.open("beir"), fresh_of(store, jsonl, "beir"), QUERIES)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            lambda p: p.write_text("p1\tapple tax\n" + p.read_text("utf-8")[13:] + "p9\tx\n"),
            "the file's first 53 bytes changed since it was indexed",
        ),
        (lambda p: p.write_text("p1\tapple pie\n", "utf-8"), "the file shrank from 53 to 13 bytes"),
    ],
)
def test_other_changes_rebuild_and_say_why(
    store: IndexStore, passages: Path, change, reason: str
) -> None:
    assert passages.stat().st_size == 53
    change(passages)
    report = update_index("grow", store=store)
    assert report.rebuilt
    assert report.note == f"Rebuilt: {reason}."
    assert_same_as_fresh(store.open("grow"), fresh_of(store, passages, "msmarco-passages"), QUERIES)


def test_a_file_without_a_final_line_break_is_rebuilt(store: IndexStore, tmp_path: Path) -> None:
    path = tmp_path / "open.tsv"
    path.write_text("p1\tapple pie\np2\tbanana", "utf-8")
    build_index(path, name="open", fmt="msmarco-passages", store=store)
    append(path, " bread\np3\tcherry\n")
    report = update_index("open", store=store)
    assert report.rebuilt
    assert "did not end with a line break" in report.note
    assert store.open("open").text(1) == "banana bread"


def test_a_line_still_being_written_waits(store: IndexStore, passages: Path) -> None:
    generation = store.open("grow").generation
    append(passages, "p4\tkiwi ta")
    report = update_index("grow", store=store)
    assert (report.rebuilt, report.added) == (False, 0)
    assert report.note == "Nothing new yet: the file grew by 10 bytes but has no complete new line."
    assert store.open("grow").generation == generation
    append(passages, "rt\np5\tpl")  # p4 is complete now; p5 is not yet
    assert update_index("grow", store=store).added == 1
    assert live_ids(store.open("grow")) == ["p1", "p2", "p3", "p4"]
    append(passages, "um\n")
    assert update_index("grow", store=store).added == 1
    assert_same_as_fresh(store.open("grow"), fresh_of(store, passages, "msmarco-passages"), QUERIES)


def test_compressed_and_record_formats_are_rebuilt(store: IndexStore, tmp_path: Path) -> None:
    gz = tmp_path / "passages.tsv.gz"
    gz.write_bytes(gzip.compress(b"p1\tapple\n"))
    build_index(gz, name="gz", fmt="msmarco-passages", store=store)
    assert "prefix" not in store.open("gz").source
    gz.write_bytes(gzip.compress(b"p1\tapple\np2\tpear\n"))
    assert update_index("gz", store=store).note == (
        "Rebuilt: the index records no checksum of the file's contents."
    )
    smart = tmp_path / "docs.all"
    smart.write_text(".I 1\n.W\napple pie\n", "utf-8")
    build_index(smart, name="smart", fmt="smart", store=store)
    append(smart, ".I 2\n.W\npear\n")
    report = update_index("smart", store=store)
    assert report.note == "Rebuilt: a smart file is rebuilt when it changes."
    assert store.open("smart").n_docs == 2


def test_an_edited_index_is_not_rebuilt_without_consent(store: IndexStore, passages: Path) -> None:
    remove_documents("grow", ["p2"], store=store)
    # growing keeps the edits: p2 stays removed, the new records come after
    append(passages, "p4\tkiwi tart\n")
    assert update_index("grow", store=store).added == 1
    assert live_ids(store.open("grow")) == ["p1", "p3", "p4"]
    # a change that needs a rebuild would lose them: refused, then done on request
    passages.write_text("p1\tplum\n", "utf-8")
    with pytest.raises(StoreError, match=r"edited by id .*1 removed.*--discard-edits"):
        update_index("grow", store=store)
    assert live_ids(store.open("grow")) == ["p1", "p3", "p4"]
    report = update_index("grow", store=store, discard_edits=True)
    assert report.rebuilt
    index = store.open("grow")
    assert live_ids(index) == ["p1"]
    assert "edits" not in index.source


def test_cancelling_an_append_changes_nothing(store: IndexStore, passages: Path) -> None:
    before = sorted(n for n in os.listdir(store.root / "grow") if not n.startswith("."))
    append(passages, "p4\tkiwi\n")
    cancel = CancelToken()
    cancel.set()
    with pytest.raises(Cancelled):
        update_index("grow", store=store, cancel=cancel)
    assert sorted(n for n in os.listdir(store.root / "grow") if not n.startswith(".")) == before
    assert update_index("grow", store=store).added == 1
