"""Helpers of the edit and grown-file tests: corpus files, and the fresh-build comparison."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bm25desk.engine import IndexStore, Searcher, all_variants, build_index
from bm25desk.engine.index.reader import Index


def write_passages(path: Path, docs: Sequence[tuple[str, str]]) -> Path:
    """Write (id, text) pairs as an MS MARCO passages TSV."""
    path.write_text("".join(f"{i}\t{t}\n" for i, t in docs), encoding="utf-8")
    return path


def write_beir(path: Path, docs: Sequence[tuple[str, str]]) -> Path:
    """Write (id, text) pairs as a BEIR corpus.jsonl."""
    lines = (json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in docs)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def live_ids(index: Index) -> list[str]:
    """Return the live document ids in index (docno) order."""
    return [docid for _, docid, _, _ in index.iter_live()]


def fresh(store: IndexStore, tmp: Path, name: str, docs: Sequence[tuple[str, str]]) -> Index:
    """Build ``docs`` (in this order) from scratch as index ``name`` and open it."""
    path = write_passages(tmp / f"{name}.tsv", docs)
    build_index(path, name=name, fmt="msmarco-passages", store=store)
    return store.open(name)


def assert_same_as_fresh(index: Index, fresh_index: Index, queries: Sequence[str]) -> None:
    """Assert ``index`` ranks exactly like ``fresh_index``: same statistics, and for every
    variant and query the same documents, in the same order, with bit-identical scores."""
    assert live_ids(index) == live_ids(fresh_index)
    assert (index.n_docs, index.total_len, index.n_terms) == (
        fresh_index.n_docs,
        fresh_index.total_len,
        fresh_index.n_terms,
    )
    assert index.avgdl == fresh_index.avgdl
    assert index.vocabulary() == fresh_index.vocabulary()
    if not index.n_docs:
        return
    edited, rebuilt = Searcher(index), Searcher(fresh_index)
    for variant in all_variants():
        for query in queries:
            a = edited.search(query, variant, index.n_docs, count=False)
            b = rebuilt.search(query, variant, index.n_docs, count=False)
            assert [(h.docid, h.score) for h in a.hits] == [(h.docid, h.score) for h in b.hits], (
                variant,
                query,
            )
