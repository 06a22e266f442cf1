"""Indexes of formats 2 and 3 (written by earlier bm25desk) open, answer exactly like a fresh
build, pass ``check``, and are rewritten in the current format by the next update.

``tests/data/format2`` holds an index built by the release before the block format from
``format2/source`` and then updated once (a file removed, one added): two segments with plain
int32 postings and text, a deletion file and a merged lexicon. ``tests/data/format3`` holds the
same kind of index written by the release before narrow offsets (main at d623fae: block
postings, every offset and count int64), whose documents after its update are those of
``format2/source`` too.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine.index.build import build_index, update_index
from bm25desk.engine.index.check import check_index
from bm25desk.engine.index.manifest import manifest_checksum
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import FORMAT, Segment
from bm25desk.engine.index.store import IndexStore
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import get_variant, variant_classes

DATA = Path(__file__).resolve().parents[2] / "data"
SOURCE = DATA / "format2" / "source"
OLD_FORMATS = (2, 3)
QUERIES = [
    ["apple"],
    ["pear", "apples"],
    ["orchard", "plum", "harvest"],
    ["cherry"],
    ["the", "and"],
]


@pytest.fixture(params=OLD_FORMATS, ids=[f"format{f}" for f in OLD_FORMATS])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[IndexStore, Path]:
    """A store holding a copy of an old index, its source folder copied beside it."""
    store = IndexStore(tmp_path / "store")
    store.root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(DATA / f"format{request.param}" / "index", store.root / "old")
    source = shutil.copytree(SOURCE, tmp_path / "source")
    path = store.root / "old" / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    with Index(store.root / "old") as index:  # the files as the index saw them (git keeps no times)
        for _docno, docid, mtime, _size in index.iter_live():
            os.utime(source / docid, (mtime, mtime))
    m["source"]["path"] = str(source)  # where the copy lives (the checksum follows the content)
    m["source"]["mtime"] = source.stat().st_mtime
    m["checksum"] = manifest_checksum(m)
    path.write_text(json.dumps(m), encoding="utf-8")
    (store.root / "old" / "manifest-2.json").write_text(json.dumps(m), encoding="utf-8")
    return store, source


def ranking(index: Index, key: str, query: list[str], kernel: bool) -> list[tuple[str, str]]:
    searcher = Searcher(index)
    variant = get_variant(key)
    terms = []
    for term, qtf in parse_terms(query).scored:
        w = searcher.weight(term, variant)
        if w is not None:
            terms.append((term, qtf, w))
    top = topk.top_k(index, terms, 10, kernel=kernel)
    return [
        (index.docid(int(d)), float(s).hex()) for d, s in zip(top.docnos, top.scores, strict=True)
    ]


def test_the_fixtures_are_of_their_formats() -> None:
    for fmt in OLD_FORMATS:
        index = DATA / f"format{fmt}" / "index"
        m = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
        assert m["format"] == fmt
        for entry in m["segments"]:
            seg = Segment(index / entry["name"])
            assert seg.format == fmt
            assert (index / entry["name"] / ("docs.npy" if fmt == 2 else "blocks.bin")).exists()
            if fmt == 3:  # every offset and count array int64: what format 4 narrows
                assert {a.dtype for a in (seg.ptr, seg.cf, seg.bptr, seg.blk_off)} == {
                    np.dtype(np.int64)
                }


@pytest.mark.parametrize("key", [c.key for c in variant_classes()])
def test_old_index_answers_like_a_fresh_build(
    key: str, old_store: tuple[IndexStore, Path], tmp_path: Path
) -> None:
    store, source = old_store
    build_index(source, name="fresh", store=store)
    with store.open("old") as old, store.open("fresh") as fresh:
        assert fresh.manifest["format"] == FORMAT
        assert (old.n_docs, old.total_len) == (fresh.n_docs, fresh.total_len)
        for query in QUERIES:
            want = ranking(fresh, key, query, kernel=True)
            assert ranking(fresh, key, query, kernel=False) == want
            assert ranking(old, key, query, kernel=True) == want
            assert ranking(old, key, query, kernel=False) == want
        for docno in range(old.n_slots):
            if old.is_live(docno):
                fresh_docno = fresh.docno(old.docid(docno))
                assert fresh_docno is not None
                assert old.text(docno) == fresh.text(fresh_docno)


def test_check_accepts_the_old_index(old_store: tuple[IndexStore, Path]) -> None:
    store, _ = old_store
    report = check_index("old", store=store)
    assert report.ok, report.as_text()


def test_an_update_rewrites_old_segments_in_the_current_format(
    old_store: tuple[IndexStore, Path],
) -> None:
    store, source = old_store
    with store.open("old") as before:
        want = {q[0]: ranking(before, "lucene", q, kernel=True) for q in QUERIES}
    (source / "g.txt").write_text("Quinces\nA quince is neither an apple nor a pear.", "utf-8")
    update_index("old", store=store)
    build_index(source, name="fresh", store=store)
    with store.open("old") as after, store.open("fresh") as fresh:
        assert after.manifest["format"] == FORMAT
        assert all(seg.format == FORMAT for seg in after.segments)
        assert all(seg.ptr.dtype == np.uint32 for seg in after.segments)
        assert all((seg.path / "blocks.bin").exists() for seg in after.segments)
        assert not any((seg.path / "docs.npy").exists() for seg in after.segments)
        assert any(d is not None for d in after.deleted)  # the deletion survived the rewrite
        for query in QUERIES:
            assert ranking(after, "lucene", query, True) == ranking(fresh, "lucene", query, True)
        assert want  # (the old answers were readable before the update)
    assert check_index("old", store=store).ok
