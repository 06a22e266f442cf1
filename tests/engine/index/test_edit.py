"""Adding, replacing and removing documents by id (engine/index/edit.py): the index afterwards
ranks exactly like a fresh build of the resulting collection, for every variant."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest
from edit_helpers import assert_same_as_fresh, fresh, live_ids, write_beir, write_passages
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine import CancelToken, IndexStore, StoreError, build_index
from bm25desk.engine.index.edit import EDIT_HISTORY, add_documents, remove_documents
from bm25desk.engine.index.store import IndexLockedError
from bm25desk.engine.progress import Cancelled

BASE = [
    ("a", "apple pie with apple cream"),
    ("b", "banana bread and banana cake"),
    ("c", "cherry pie"),
    ("d", "apple and banana smoothie"),
]
QUERIES = ["apple", "banana pie", "cherry apple banana", "smoothie cream bread", "kiwi"]


@pytest.fixture
def base(store: IndexStore, tmp_path: Path) -> str:
    path = write_passages(tmp_path / "base.tsv", BASE)
    build_index(path, name="fruit", fmt="msmarco-passages", store=store)
    return "fruit"


def test_add_appends_new_ids_and_replaces_known_ones(
    store: IndexStore, tmp_path: Path, base: str
) -> None:
    extra = write_beir(tmp_path / "extra.jsonl", [("e", "kiwi pie"), ("b", "banana split")])
    seen: list[tuple[int, int]] = []
    report = add_documents(base, extra, store=store, progress=lambda d, t: seen.append((d, t)))
    assert (report.added, report.replaced, report.removed, report.read) == (1, 1, 0, 2)
    assert seen[-1][0] == seen[-1][1] == extra.stat().st_size
    index = store.open(base)
    # a replaced document takes its new place at the end, after the added ones before it
    assert live_ids(index) == ["a", "c", "d", "e", "b"]
    assert index.text(index.docno("b")) == "banana split"
    expected = [BASE[0], BASE[2], BASE[3], ("e", "kiwi pie"), ("b", "banana split")]
    assert_same_as_fresh(index, fresh(store, tmp_path, "expected", expected), QUERIES)
    edits = index.source["edits"]
    assert edits[-1]["op"] == "add"
    assert edits[-1]["from"] == str(extra.resolve())
    assert (edits[-1]["added"], edits[-1]["replaced"], edits[-1]["format"]) == (1, 1, "beir")
    assert index.source["edit_totals"] == {
        "operations": 1,
        "added": 1,
        "replaced": 1,
        "removed": 0,
    }
    assert "Added 1 and replaced 1 documents of 'fruit'" in report.summary()


def test_remove_reports_unknown_ids(store: IndexStore, tmp_path: Path, base: str) -> None:
    report = remove_documents(base, ["b", "zz", "b", "d"], store=store)
    assert (report.removed, report.n_not_found, report.not_found) == (2, 1, ("zz",))
    assert "1 ids are in no document: 'zz'" in report.summary()
    index = store.open(base)
    assert live_ids(index) == ["a", "c"]
    assert_same_as_fresh(index, fresh(store, tmp_path, "expected", [BASE[0], BASE[2]]), QUERIES)
    assert index.source["edit_totals"]["removed"] == 2


def test_nothing_found_changes_nothing(store: IndexStore, base: str) -> None:
    generation = store.open(base).generation
    with pytest.raises(StoreError, match="no document of 'fruit' has any of these ids: 'x', 'y'"):
        remove_documents(base, ["x", "y"], store=store)
    assert store.open(base).generation == generation


def test_removing_everything_leaves_an_empty_index(store: IndexStore, base: str) -> None:
    remove_documents(base, [d for d, _ in BASE], store=store)
    index = store.open(base)
    assert (index.n_docs, index.n_terms, live_ids(index)) == (0, 0, [])


def test_an_empty_add_file_is_refused(store: IndexStore, tmp_path: Path, base: str) -> None:
    empty = write_passages(tmp_path / "blank.tsv", [("e", "   ")])
    with pytest.raises(StoreError, match=r"no documents found in .*blank\.tsv; 1 record skipped"):
        add_documents(base, empty, fmt="msmarco-passages", store=store)
    assert store.open(base).generation == 1


def test_a_folder_index_is_refused(store: IndexStore, tiny_folder: Path, tmp_path: Path) -> None:
    build_index(tiny_folder, name="notes", store=store)
    with pytest.raises(StoreError, match=r"follows the folder .*bm25desk update"):
        remove_documents("notes", ["tiny-1.txt"], store=store)


def test_cancel_and_failure_leave_the_index_as_it_was(
    store: IndexStore, tmp_path: Path, base: str
) -> None:
    before = sorted(n for n in os.listdir(store.root / base) if not n.startswith("."))
    cancel = CancelToken()
    cancel.set()
    extra = write_passages(tmp_path / "more.tsv", [("e", "kiwi pie"), ("f", "plum")])
    with pytest.raises(Cancelled):
        add_documents(base, extra, store=store, cancel=cancel)
    with (
        mock.patch("bm25desk.engine.index.commit.write_manifest", side_effect=OSError("boom")),
        pytest.raises(OSError, match="boom"),
    ):
        add_documents(base, extra, store=store)
    assert sorted(n for n in os.listdir(store.root / base) if not n.startswith(".")) == before
    assert live_ids(store.open(base)) == [d for d, _ in BASE]


def test_the_writer_lock_is_held(store: IndexStore, base: str) -> None:
    with store.writing(base), pytest.raises(IndexLockedError):
        remove_documents(base, ["a"], store=store)


def test_the_edit_history_is_bounded(store: IndexStore, tmp_path: Path, base: str) -> None:
    with mock.patch("bm25desk.engine.index.edit.EDIT_HISTORY", 3):
        for d in ("a", "b", "c", "d"):
            remove_documents(base, [d], store=store)
    source = store.open(base).source
    assert EDIT_HISTORY == 100
    assert [e["removed"] for e in source["edits"]] == [1, 1, 1]
    assert source["edit_totals"] == {"operations": 4, "added": 0, "replaced": 0, "removed": 4}


WORDS = ["apple", "banana", "cherry", "pie", "cake", "kiwi", "plum", "tart"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
doc_ids = st.sampled_from([f"d{i}" for i in range(10)])
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(st.tuples(doc_ids, texts), min_size=1, max_size=4)),
        st.tuples(st.just("remove"), st.lists(doc_ids, min_size=1, max_size=3)),
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    initial=st.lists(st.tuples(doc_ids, texts), min_size=1, max_size=8, unique_by=lambda d: d[0]),
    ops=operations,
)
def test_any_sequence_of_edits_ranks_like_a_fresh_build(
    tmp_path_factory: pytest.TempPathFactory,
    initial: list[tuple[str, str]],
    ops: list[tuple[str, list]],
) -> None:
    """The model: an ordered collection. Adding appends new ids and moves a replaced id to the
    end with its new text (within one file the first record of an id wins, as in a build);
    removing drops ids. Every variant then ranks the edited index exactly like a fresh build."""
    tmp = tmp_path_factory.mktemp("edits")
    store = IndexStore(tmp / "indexes")
    model = dict(initial)
    with mock.patch("os.fsync"):
        initial_tsv = write_passages(tmp / "initial.tsv", initial)
        build_index(initial_tsv, name="ix", fmt="msmarco-passages", store=store)
        for n, (op, arg) in enumerate(ops):
            if op == "add":
                first: dict[str, str] = {}
                for docid, text in arg:
                    first.setdefault(docid, text)
                for docid, text in first.items():
                    model.pop(docid, None)
                    model[docid] = text
                added = write_passages(tmp / f"add{n}.tsv", arg)
                add_documents("ix", added, fmt="msmarco-passages", store=store)
            elif any(d in model for d in arg):
                for docid in arg:
                    model.pop(docid, None)
                remove_documents("ix", arg, store=store)
            else:
                with pytest.raises(StoreError):
                    remove_documents("ix", arg, store=store)
        index = store.open("ix")
        assert live_ids(index) == list(model)
        if model:
            expected = fresh(store, tmp, "expected", list(model.items()))
            assert_same_as_fresh(index, expected, ["apple", "banana pie", " ".join(WORDS)])
        else:
            assert index.n_docs == 0
