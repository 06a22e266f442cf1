"""Two shards searched with global statistics rank exactly as their merged index does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dist_helpers import analyzer, records

from bm25desk.engine import IndexStore, Searcher, all_variants, build_index
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.assemble import assemble_index
from bm25desk.engine.index.parts import write_file_part
from bm25desk.engine.index.shards import GlobalStatistics
from bm25desk.engine.index.source import source_info
from bm25desk.engine.readers.corpus import split_ranges
from bm25desk.engine.scoring.variant import VariantError
from bm25desk.engine.scoring.variants import get_variant

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


# bm25f sums per-field lengths and dfs that global statistics do not carry yet: it refuses shards.
SHARDED_VARIANTS = [v for v in all_variants() if v.key != "bm25f"]


def test_bm25f_refuses_shards_in_words(shards) -> None:
    store, names = shards
    opened = [store.open(n) for n in names]
    searcher = Searcher(opened[0], statistics=GlobalStatistics(opened))
    with pytest.raises(VariantError, match="not available for shards"):
        searcher.search("river bank", get_variant("bm25f"), K)


def assert_ranks_as_merged(
    store: IndexStore, names: list[str], merged_name: str, queries: tuple[str, ...] = QUERIES
) -> None:
    """Assert shards ``names`` with global statistics rank ``queries`` as ``merged_name`` does."""
    opened = [store.open(n) for n in names]
    statistics = GlobalStatistics(opened)
    searchers = [Searcher(i, statistics=statistics) for i in opened]
    merged = Searcher(store.open(merged_name))
    assert (statistics.stats.n_docs, statistics.stats.avgdl) == (
        merged.index.n_docs,
        merged.index.avgdl,
    )
    assert statistics.stats.n_terms == merged.index.n_terms
    assert statistics.stats.df_all().tolist() == merged.index.stats.df_all().tolist()
    for variant in SHARDED_VARIANTS:
        for query in queries:
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


def test_two_shards_with_global_statistics_score_as_the_merged_index(shards) -> None:
    store, names = shards
    assert_ranks_as_merged(store, names, "merged")


def test_deleted_documents_of_a_shard_count_nowhere(tmp_path: Path) -> None:
    """Three shards, the first with a deleted document (a repeated id across its parts).

    The deleted document holds the only "quokka" and many "river"s: were it counted in N, the
    lengths, a df, cf, the vocabulary or BM25Adpt's postings, some score would differ.
    """
    rows = records(600, seed=11)
    rows.insert(240, {**rows[5], "text": "quokka " + "river " * 30})  # repeats doc5: deleted
    lines = [json.dumps(r) for r in rows]
    store = IndexStore(tmp_path / "indexes")
    cuts = {"a": lines[:241], "b": lines[241:420], "c": lines[420:], "merged": lines}
    paths = {}
    for name, part in cuts.items():
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("\n".join(part) + "\n", encoding="utf-8")
    for name in ("b", "c", "merged"):
        build_index(paths[name], name=name, analyzer=analyzer(), store=store)
    # Shard a from two parts, as Spark would write them: the repeat is resolved by a deletion.
    staging, spec = tmp_path / "staging", analyzer().spec()
    staging.mkdir()
    parts = [
        write_file_part(paths["a"], "beir", spec, staging, part=i, byte_range=r)
        for i, r in enumerate(split_ranges(paths["a"], 2))
    ]
    source = source_info(paths["a"], "beir", None, None, None)
    assemble_index("a", parts, analyzer(), source, store, build={"engine": "test"})
    with store.open("a") as a, store.open("merged") as merged:
        assert (a.n_slots, a.n_docs) == (241, 240)  # the repeat holds a slot, deleted
        assert not a.is_live(240)
        assert "quokka" in a.text(240)
        assert a.term_id("quokka") < 0
        assert merged.term_id("quokka") < 0
    assert_ranks_as_merged(store, ["a", "b", "c"], "merged", ("quokka river", *QUERIES))


def test_without_global_statistics_a_shard_scores_otherwise(shards) -> None:
    store, _ = shards
    local = Searcher(store.open("b"))
    merged = Searcher(store.open("merged"))
    query = "zebra river"
    ours = {h.docid: h.score for h in local.search(query, k=5).hits}
    theirs = {h.docid: h.score for h in merged.search(query, k=5).hits}
    assert ours.keys() & theirs.keys()
    assert all(ours[d] != theirs[d] for d in ours.keys() & theirs.keys())


def test_global_statistics_need_shards_analysed_alike(shards, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one shard"):
        GlobalStatistics([])
    store, names = shards
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(records(5, seed=9)[0]) + "\n", encoding="utf-8")
    build_index(path, name="unstemmed", analyzer=Analyzer.create(stopwords="en"), store=store)
    with pytest.raises(ValueError, match="shard 2 was analysed differently from shard 0"):
        GlobalStatistics([store.open(n) for n in [*names, "unstemmed"]])


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
    for variant in SHARDED_VARIANTS:
        for query in QUERIES:
            for index in opened:
                Searcher(index, strategy=strategy).search(query, variant, K)
            searchers = [Searcher(i, statistics, strategy=strategy) for i in opened]
            got = sharded_search(searchers, query, variant, K)
            want = merged.search(query, variant, K).hits
            assert [(h.docid, h.score) for h in got] == [(h.docid, h.score) for h in want]
