"""Two shards searched with global statistics rank exactly as their merged index does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dist_helpers import analyzer, records

from bm25desk.engine import IndexStore, Searcher, all_variants, build_index
from bm25desk.engine.index.shards import GlobalStatistics

QUERIES = (
    "river bank",
    "flood water water storm",
    "zebra river",  # zebra: in the second shard only
    "ship sail wind snow mountain",
    "+forest -tree leaf",
    '"winter snow" ice',
)
K = 25


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexStore, list[str]]:
    """Build shard "a" (the first 350 records), shard "b" (the rest) and "merged" (all)."""
    root = tmp_path_factory.mktemp("shards")
    rows = records(700)
    rows[500] = {**rows[500], "text": rows[500]["text"] + " zebra zebra"}
    rows[640] = {**rows[640], "text": "zebra " + rows[640]["text"]}
    lines = [json.dumps(r) for r in rows]
    store = IndexStore(root / "indexes")
    for name, part in (("a", lines[:350]), ("b", lines[350:]), ("merged", lines)):
        path = root / f"{name}.jsonl"
        path.write_text("\n".join(part) + "\n", encoding="utf-8")
        build_index(path, name=name, analyzer=analyzer(), store=store)
    return store, ["a", "b"]


def sharded_search(searchers: list[Searcher], query: str, variant, k: int):
    """Search every shard, merge by score, then shard order and docno: the merged index's order."""
    hits = []
    for s, searcher in enumerate(searchers):
        for h in searcher.search(query, variant, k).hits:
            hits.append((-h.score, s, h.docno, h))
    return [h for *_, h in sorted(hits, key=lambda x: x[:3])[:k]]


def test_two_shards_with_global_statistics_score_as_the_merged_index(shards) -> None:
    store, names = shards
    opened = [store.open(n) for n in names]
    statistics = GlobalStatistics(opened)
    searchers = [Searcher(i, statistics=statistics) for i in opened]
    merged = Searcher(store.open("merged"))
    assert (statistics.stats.n_docs, statistics.stats.avgdl) == (
        merged.index.n_docs,
        merged.index.avgdl,
    )
    assert statistics.stats.n_terms == merged.index.n_terms
    assert statistics.stats.df_all().tolist() == merged.index.stats.df_all().tolist()
    for variant in all_variants():
        for query in QUERIES:
            got = sharded_search(searchers, query, variant, K)
            want = merged.search(query, variant, K).hits
            assert [(h.docid, h.score) for h in got] == [(h.docid, h.score) for h in want], (
                variant,
                query,
            )
            assert [h.contributions for h in got] == [h.contributions for h in want]
            shard = next(s for s in searchers if s.index.docno(want[0].docid) is not None)
            ours = shard.explain(query, want[0].docid, variant)
            theirs = merged.explain(query, want[0].docid, variant)
            assert (ours.score, ours.n_docs, ours.avgdl) == (
                theirs.score,
                theirs.n_docs,
                theirs.avgdl,
            )
            assert ours.terms == theirs.terms


def test_without_global_statistics_a_shard_scores_otherwise(shards) -> None:
    store, _ = shards
    local = Searcher(store.open("b"))
    merged = Searcher(store.open("merged"))
    query = "zebra river"
    ours = {h.docid: h.score for h in local.search(query, k=5).hits}
    theirs = {h.docid: h.score for h in merged.search(query, k=5).hits}
    assert ours.keys() & theirs.keys()
    assert all(ours[d] != theirs[d] for d in ours.keys() & theirs.keys())


def test_global_statistics_need_a_shard(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one shard"):
        GlobalStatistics([])


@pytest.mark.parametrize("strategy", ["kernel", "exhaustive"])
def test_a_shard_searched_on_its_own_first_still_scores_as_the_merged_index(
    shards, strategy
) -> None:
    # The kernel's tf-part tables and the cached impacts live with the index, not the searcher:
    # the collection's average length must be part of their keys.
    store, names = shards
    opened = [store.open(n) for n in names]
    statistics = GlobalStatistics(opened)
    merged = Searcher(store.open("merged"), strategy=strategy)
    for variant in all_variants():
        for query in QUERIES:
            for index in opened:
                Searcher(index, strategy=strategy).search(query, variant, K)
            searchers = [Searcher(i, statistics, strategy=strategy) for i in opened]
            got = sharded_search(searchers, query, variant, K)
            want = merged.search(query, variant, K).hits
            assert [(h.docid, h.score) for h in got] == [(h.docid, h.score) for h in want]
