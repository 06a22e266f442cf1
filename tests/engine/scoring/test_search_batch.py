"""Batch search: ``Searcher.search_many`` equals searching one query at a time, for every variant
and any number of threads, and evaluation runs through it are unchanged."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import pytest

import bm25desk
from bm25desk.engine import rank
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.batch import no_collection, run_chunked
from bm25desk.engine.scoring.hits import Hits
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import QueryError, Searcher
from bm25desk.engine.scoring.variants import get_variant, variant_classes
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.qrels import read_qrels
from bm25desk.evaluation.queries import read_queries
from bm25desk.evaluation.sweeps import sweep

KEYS = [c.key for c in variant_classes()]


@pytest.fixture(scope="module")
def cisi_texts_queries(cisi_queries) -> list[str]:
    """CISI's query texts, with queries that have nothing to search for mixed in."""
    texts = [t for _, t in cisi_queries[:40]]
    return [*texts[:5], "the of and", "", "zzzz qqqq", *texts[5:]]


def _same(a, b) -> None:
    assert type(a) is type(b)
    if isinstance(a, QueryError):
        assert str(a) == str(b)
        return
    assert a.hits == b.hits
    assert [h.tie_group for h in a.hits] == [h.tie_group for h in b.hits]
    assert (a.query, a.analysis, a.variant, a.n_matches) == (
        b.query,
        b.analysis,
        b.variant,
        b.n_matches,
    )


def _alone(s: Searcher, query, v, k, **kw):
    try:
        if isinstance(query, str):
            return s.search(query, v, k=k, **kw)
        return s.search_terms(query, v, k=k, **kw)
    except QueryError as exc:
        return exc


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_search_many_equals_one_by_one(cisi_index: Index, cisi_texts_queries, key: str) -> None:
    v = get_variant(key)
    s = Searcher(cisi_index)
    an = cisi_index.analyzer
    mixed = [q if i % 3 else an.terms(q) for i, q in enumerate(cisi_texts_queries)]
    lean = {"contributions": False, "count": False}  # search_many's defaults
    for k, kw in ((10, {"contributions": True, "count": True}), (1000, lean)):
        alone = [_alone(Searcher(cisi_index), q, v, k, **kw) for q in mixed]
        for threads in (1, 2, None):
            many = s.search_many(mixed, v, k=k, threads=threads, **kw)
            assert len(many) == len(mixed)
            for a, b in zip(many, alone, strict=True):
                _same(a, b)
    found = s.search_many(mixed, v)
    assert [str(r) for r in found if isinstance(r, QueryError)] == ["the query is empty"]
    assert len(found[7].hits) == 0  # unknown words: no error, no hits


def test_search_many_takes_texts_terms_and_parsed_queries(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    parsed = s.parse('+cat "the mat"')
    res = s.search_many(["cat dog", ["cat", "dog"], parsed, parse_terms(["fish"])], k=3)
    assert [type(r).__name__ for r in res] == ["SearchResult"] * 4
    assert res[0].hits == res[1].hits
    assert res[2].hits == s.search_parsed(parsed, k=3, contributions=False, count=False).hits
    assert res[2].analysis.parsed.has_constraints
    assert isinstance(res[3].hits, Hits)
    assert res[3].hits.docids() == ["tiny-5"]
    syntax = s.search_many(["-cat", "+cat"], k=3)
    assert isinstance(syntax[0], QueryError)
    assert "only excludes" in str(syntax[0])
    plain = s.search_many(["-cat", "+cat"], k=3, syntax=False)
    assert not isinstance(plain[0], QueryError)


def test_search_many_takes_any_iterable_of_queries(tiny_index: Index) -> None:
    searcher = Searcher(tiny_index)
    texts = ["cat dog", "fish", "the mat"]
    want = [r.hits.docnos.tolist() for r in searcher.search_many(texts, k=5)]
    assert all(want)
    for queries in ((t for t in texts), dict.fromkeys(texts).keys(), tuple(texts)):
        got = searcher.search_many(queries, k=5)
        assert [r.hits.docnos.tolist() for r in got] == want
    assert searcher.search_many([], k=5) == []


def test_search_many_checks_k_before_searching(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(QueryError, match="k must"):
            s.search_many(["cat"], k=bad)
    assert s.search_many([], k=3) == []


def test_run_chunked_keeps_order_and_raises() -> None:
    items = list(range(100))
    for threads in (1, 2, 3):
        assert run_chunked(lambda x: x * x, items, threads, chunk=7) == [x * x for x in items]

    def boom(x: int) -> int:
        if x == 50:
            raise ValueError("50")
        return x

    with pytest.raises(ValueError, match="50"):
        run_chunked(boom, items, 2, chunk=7)


# -- evaluation through the batch path -------------------------------------------------------------


class _OneByOne:
    """The engine's searcher without ``search_many``: evaluation asks query by query."""

    def __init__(self, searcher: Searcher) -> None:
        self.index = searcher.index
        self.search = searcher.search
        self.search_terms = searcher.search_terms


def _inputs():
    sample = Path(bm25desk.__file__).resolve().parent / "data" / "sample"
    return read_queries(sample / "CISI.QRY"), read_qrels(sample / "CISI.REL")


@pytest.mark.slow
def test_evaluation_is_the_same_by_batch_threads_or_one_by_one(cisi_index: Index) -> None:
    queries, qrels = _inputs()
    configs = [get_variant("lucene", k1=0.9, b=0.4), get_variant("bm25adpt"), get_variant("bim")]
    runs = []
    for searcher, threads in (
        (_OneByOne(Searcher(cisi_index)), 1),
        (Searcher(cisi_index), 1),
        (Searcher(cisi_index), 2),
        (Searcher(cisi_index, strategy="kernel"), None),
    ):
        res = run_experiment(
            searcher, queries, qrels, configs, ["AP", "nDCG@10", "R@1000"], k=1000,
            threads=threads, search_unjudged=True,
        )  # fmt: skip
        runs.append(res)
    first = runs[0]
    for other in runs[1:]:
        assert other.notes == first.notes
        for a, b in zip(first.configs, other.configs, strict=True):
            assert a.aggregate == b.aggregate
            assert a.run is not None
            assert b.run is not None
            assert a.run.rankings.keys() == b.run.rankings.keys()
            for qid, ranking in a.run.rankings.items():
                other_ranking = b.run.rankings[qid]
                assert ranking.docids == other_ranking.docids
                assert ranking.scores.tolist() == other_ranking.scores.tolist()


def test_sweep_is_the_same_with_threads(cisi_index: Index) -> None:
    queries, qrels = _inputs()
    grids = [
        sweep(Searcher(cisi_index), queries, qrels, get_variant("bm25l"),
              {"k1": [0.6, 1.2], "b": [0.3, 0.75]}, ["nDCG@10", "AP"], threads=t).grids
        for t in (1, 2)
    ]  # fmt: skip
    for metric in grids[0]:
        assert grids[0][metric].tolist() == grids[1][metric].tolist()


def test_facade_batch_retrieval_equals_top_n(cisi_texts) -> None:
    docs = cisi_texts[:300]
    bm25 = rank.BM25(docs, "lucene", k1=1.5, b=0.75)
    try:
        queries = ["library classification", ["information", "retrieval"], "zzzz", "system"]
        ids, scores = bm25.retrieve(queries, k=5)
        assert ids.shape == scores.shape == (4, 5)
        for i, q in enumerate(queries):
            full = bm25.get_scores(q)
            top = bm25.get_top_n(q, list(range(len(docs))), n=5)
            matched = int((full > 0).sum())
            assert ids[i][: min(5, matched)].tolist() == top[: min(5, matched)]
            assert scores[i][: min(5, matched)].tolist() == full[top[: min(5, matched)]].tolist()
            assert (ids[i][matched:] == -1).all()
        assert dataclasses.is_dataclass(bm25.variant)
    finally:
        bm25.close()


@pytest.mark.parametrize("strategy", ["kernel", "exhaustive"])
def test_a_searched_index_is_freed_when_nobody_holds_it(
    cisi_store, cisi_index: Index, strategy: str
) -> None:
    # The per-index caches (kernel state, impacts, docids) are weak: an application that reopens
    # its index after every update must not keep every earlier one open (files and maps: a
    # reader under a busy writer ran out of file descriptors).
    import gc
    import weakref

    index = cisi_store.open("cisi")
    searcher = Searcher(index, strategy=strategy)
    result = searcher.search("information retrieval systems", k=20)
    assert result.hits.docids()
    assert result.hits[0].contributions
    searcher.search_many(["library science", "computer indexing"], k=5)
    gone = weakref.ref(index)
    del index, searcher, result
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("on_before", [True, False])
def test_overlapping_batches_hold_the_collector_off_until_the_last_ends(on_before: bool) -> None:
    """Two batches at once (threads): the first to end leaves the collector off for the other."""
    was = gc.isenabled()
    (gc.enable if on_before else gc.disable)()
    try:
        first, second = no_collection(), no_collection()
        first.__enter__()
        second.__enter__()
        assert not gc.isenabled()
        first.__exit__(None, None, None)
        assert not gc.isenabled()  # the second batch still runs
        second.__exit__(None, None, None)
        assert gc.isenabled() == on_before
        with no_collection():  # and a batch alone, after them
            assert not gc.isenabled()
        assert gc.isenabled() == on_before
    finally:
        (gc.enable if was else gc.disable)()


def test_what_a_batch_made_is_old_when_it_ends() -> None:
    """Objects made while the collector was held off go to the oldest generation at the end.

    Not into a pass of the young generation over all of them (a long run's ~290 k objects);
    objects something else froze stay frozen.
    """
    was = gc.isenabled()
    gc.enable()
    try:
        with no_collection():
            made = [[i] for i in range(1000)]
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert all(id(o) in oldest for o in made)
        assert gc.get_freeze_count() == 0
        assert gc.isenabled()
        frozen = [[1], [2]]
        gc.freeze()
        try:
            with no_collection():
                made = [[i] for i in range(10)]
            tracked = {id(o) for o in gc.get_objects()}  # (the frozen ones are not among them)
            assert id(frozen[0]) not in tracked
            assert all(id(o) in tracked for o in made)
        finally:
            gc.unfreeze()
    finally:
        if not was:
            gc.disable()
