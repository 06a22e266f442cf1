"""Metadata and field columns are recorded at build and read again by appends, rebuilds, workers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from bm25desk.engine import IndexStore, build_index, update_index
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.reserved import field_length_term, field_term
from bm25desk.engine.readers.document import ExtraColumns
from bm25desk.engine.scoring.facets import facets
from bm25desk.engine.scoring.filters import Filters, filter_mask, meta_keys

EXTRA = ExtraColumns(meta=("lang",), fields=("tags",))


def _jsonl(path: Path, rows: list[tuple[str, str, str | None]]) -> Path:
    with open(path, "a", encoding="utf-8") as fh:
        for docid, text, lang in rows:
            obj = {"_id": docid, "title": "", "text": text, "tags": f"tag{docid}"}
            if lang is not None:
                obj["lang"] = lang
            fh.write(json.dumps(obj) + "\n")
    return path


def _langs(index: Index) -> dict[str, list[str]]:
    f = facets(index, None)
    return {v: sorted(index.docid(int(d)) for d in _docnos(index, v)) for v, _ in f["lang"]}


def _docnos(index: Index, lang: str) -> list[int]:
    return filter_mask(index, Filters.of(where={"lang": lang})).nonzero()[0].tolist()


def test_jsonl_columns_are_recorded_and_kept_by_appends_and_rebuilds(
    store: IndexStore, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path / "corpus.jsonl", [("a", "apple pie", "en"), ("b", "pear", None)])
    build_index(path, name="c", fmt="beir", extra=EXTRA, store=store)
    index = store.open("c")
    src = index.source
    assert (src["meta_columns"], src["field_columns"]) == (["lang"], ["tags"])
    assert (src["meta_keys"], src["fields"]) == (["lang"], ["tags"])
    assert meta_keys(index) == ("lang",)
    assert index.postings(field_term("tags", "taga"))[0].tolist() == [0]
    assert _langs(index) == {"en": ["a"]}
    # The file grows: only the new records are read, with their columns.
    _jsonl(path, [("c", "plum", "fr"), ("d", "fig", "en")])
    assert update_index("c", store=store).note.startswith("Appended")
    index = store.open("c")
    assert _langs(index) == {"en": ["a", "d"], "fr": ["c"]}
    assert index.source["meta_columns"] == ["lang"]
    # Rewritten: rebuilt with the same columns.
    path.write_text("")
    _jsonl(path, [("x", "kiwi", "de")])
    assert update_index("c", store=store).note.startswith("Rebuilt")
    index = store.open("c")
    assert _langs(index) == {"de": ["x"]}
    assert index.postings(field_length_term("tags"))[1].tolist() == [1]


def test_a_parallel_build_reads_the_columns_too(store: IndexStore, tmp_path: Path) -> None:
    rows = [(f"d{i}", f"word{i % 7} common", ["en", "fr", None][i % 3]) for i in range(300)]
    path = _jsonl(tmp_path / "corpus.jsonl", rows)
    build_index(path, name="one", fmt="beir", extra=EXTRA, store=store)
    build_index(path, name="two", fmt="beir", extra=EXTRA, store=store, workers=2)
    one, two = store.open("one"), store.open("two")
    assert two.manifest["build"]["processes"] == 2
    assert facets(one, None) == facets(two, None)
    assert facets(two, None)["lang"] == (("en", 100), ("fr", 100))


def test_a_folder_index_declares_its_keys_and_updates_fill_them(
    store: IndexStore, tmp_path: Path
) -> None:
    root = tmp_path / "docs"
    (root / "notes").mkdir(parents=True)
    (root / "a.txt").write_text("apple")
    build_index(root, name="f", store=store)
    index = store.open("f")
    assert index.source["meta_keys"] == ["type", "folder", "year"]
    assert index.source["fields"] == ["name", "path", "heading"]
    new = root / "notes" / "b.md"
    new.write_text("apple banana")
    old = time.mktime((2019, 3, 3, 12, 0, 0, 0, 0, -1))
    os.utime(new, (old, old))
    update_index("f", store=store)
    index = store.open("f")
    got = facets(index, None)
    assert dict(got["type"]) == {"txt": 1, "md": 1}
    assert dict(got["folder"]) == {".": 1, "notes": 1}
    assert ("2019", 1) in got["year"]
    only = Filters.of(modified_to="2019-12-31", folders=["notes"])
    assert filter_mask(index, only).nonzero()[0].tolist() == [index.docno("notes/b.md")]


def test_added_documents_get_the_index_columns(store: IndexStore, tmp_path: Path) -> None:
    from bm25desk.engine.index.edit import add_documents

    path = _jsonl(tmp_path / "corpus.jsonl", [("a", "apple", "en")])
    build_index(path, name="e", fmt="beir", extra=EXTRA, store=store)
    more = _jsonl(tmp_path / "more.jsonl", [("b", "apple", "fr"), ("a", "apple two", "de")])
    add_documents("e", more, store=store)
    index = store.open("e")
    assert _langs(index) == {"de": ["a"], "fr": ["b"]}
    assert index.postings(field_term("tags", "tagb"))[0].size == 1
