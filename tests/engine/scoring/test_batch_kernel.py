"""Evaluation runs through one kernel call per chunk of queries (``_topk.batch``, batch.c).

``Searcher.search_many`` hands the queries the exhaustive traversal suits to the kernel a chunk at
a time. Every ranking must still be the dense numpy float64 ranking (score descending, docno
ascending, scores bit for bit, match counts) and equal what searching the query alone returns:
several segments, deletions, filters and query constraints (masks per query), every variant with
drawn parameters, k from 1 to beyond the collection, one window or many, one thread or two.
The entry point checks every argument and reports damaged blocks as a damaged index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from exhaustive_helpers import cache_of, damaged, reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine import get_variant
from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import batch, topk
from bm25desk.engine.scoring.filters import Filters
from bm25desk.engine.scoring.search import QueryError, Searcher
from bm25desk.engine.scoring.variants import Variant, variant_classes

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")

KERNEL_KEYS = [c.key for c in variant_classes() if c.key != "bm25f"]
WORDS = [f"w{i}" for i in range(30)]
word = st.integers(0, 29).map(lambda i: WORDS[min(i, (i * i) // 30)])
corpora = st.lists(st.lists(word, min_size=0, max_size=12).map(" ".join), min_size=1, max_size=120)
bags = st.lists(st.sampled_from([*WORDS, "zz"]), min_size=0, max_size=9)
SWEEP = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def window() -> Iterator[Callable[[int], None]]:
    """Return ``set(shift)``: the kernel's window for this test (restored afterwards)."""
    before = topk._topk.window_shift()
    yield lambda shift: topk._topk.window_shift(shift)
    topk._topk.window_shift(before)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the kernel's batch calls and its one-query searches."""
    real = topk._topk
    seen = {"batch": 0, "search": 0}

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def batch(self, *a: Any, **kw: Any) -> Any:
            seen["batch"] += 1
            return real.batch(*a, **kw)

        def search(self, *a: Any, **kw: Any) -> Any:
            seen["search"] += 1
            return real.search(*a, **kw)

    monkeypatch.setattr(topk, "_topk", Counting())
    return seen


def _ranking(result: Any) -> tuple[list[int], list[int], int]:
    return (
        result.hits.docnos.tolist(),
        result.hits.scores.view(np.int64).tolist(),
        result.n_matches,
    )


def _alone(searcher: Searcher, query: Any, variant: Variant, k: int) -> Any:
    try:
        if isinstance(query, str):
            return searcher.search(query, variant, k, contributions=False, count=True)
        return searcher.search_terms(query, variant, k, contributions=False, count=True)
    except QueryError as exc:
        return exc


@pytest.mark.slow
@given(groups=st.lists(corpora, min_size=1, max_size=3), data=st.data())
@SWEEP
def test_batches_agree_with_the_dense_ranking_and_with_one_by_one(
    groups: list[list[str]],
    data: st.DataObject,
    make_segmented: Any,
    variants: Callable[[str], st.SearchStrategy[Variant]],
    window: Callable[[int], None],
) -> None:
    deleted = [
        data.draw(st.lists(st.integers(0, len(g) - 1), max_size=len(g) // 2, unique=True))
        for g in groups
    ]
    index = make_segmented(groups, deleted)
    window(data.draw(st.sampled_from([4, 5, 30])))
    variant = data.draw(variants(data.draw(st.sampled_from(KERNEL_KEYS))))
    k = data.draw(st.integers(1, 12) | st.sampled_from([65, 1000]))
    strategy = data.draw(st.sampled_from(["auto", "exhaustive"]))
    searcher = Searcher(index, strategy=strategy)
    queries: list[Any] = data.draw(st.lists(bags, min_size=1, max_size=12))
    # Some as text, some with syntax (a mask per query), some as already-analysed terms.
    texts = [" ".join(q) for q in queries]
    asked: list[Any] = [
        q if i % 3 == 0 else (f"+{t}" if i % 3 == 1 and q else t)
        for i, (q, t) in enumerate(zip(queries, texts, strict=True))
    ]
    if data.draw(st.booleans()):
        cache_of(index).clear()
    got = searcher.search_many(
        asked, variant, k, count=True, threads=data.draw(st.sampled_from([1, 2]))
    )
    for query, res in zip(asked, got, strict=True):
        alone = _alone(Searcher(index), query, variant, k)
        if isinstance(alone, QueryError):
            assert isinstance(res, QueryError)
            assert str(res) == str(alone)
            continue
        assert not isinstance(res, QueryError)
        assert _ranking(res) == _ranking(alone), (variant, query, k)
        assert res.analysis == alone.analysis
        assert res.hits.tie_groups == alone.hits.tie_groups
        parsed = res.analysis.parsed
        terms = [t for t, _ in parsed.scored for _ in range(dict(parsed.scored)[t])]
        want = reference(searcher, terms, variant, k, searcher._allowed(parsed))
        assert _ranking(res) == want


def test_exhaustive_queries_take_one_kernel_call_per_chunk(
    make_index: Any, calls: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(7)
    vocab = [f"t{i}" for i in range(40)]
    index = make_index([" ".join(rng.choice(vocab, size=15)) for _ in range(400)])
    searcher = Searcher(index)
    queries = [" ".join(rng.choice(vocab, size=int(rng.integers(1, 20)))) for _ in range(100)]
    monkeypatch.setattr(batch, "KERNEL_CHUNK", 32)
    monkeypatch.setattr(batch, "WAVE", 4096)  # one wave (a quarter of it) holds every query
    many = searcher.search_many([*queries, ""], get_variant("bm25l"), 1000, count=True)
    assert calls == {"batch": 4, "search": 0}
    assert isinstance(many[-1], QueryError)
    for q, res in zip(queries, many[:-1], strict=True):
        assert _ranking(res) == _ranking(_alone(searcher, q, get_variant("bm25l"), 1000))
    calls.update(batch=0, search=0)
    searcher.search_many(queries[:64], get_variant("bm25l"), 1000, threads=2)
    assert calls == {"batch": 4, "search": 0}  # two chunks a thread at least
    calls.update(batch=0, search=0)
    searcher.search_many(queries[:5], get_variant("bm25l"), 10, contributions=True)
    assert calls["batch"] == 0  # explanations: one by one
    calls.update(batch=0, search=0)
    Searcher(index, strategy="kernel").search_many(queries[:5], k=10)
    assert calls["batch"] == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_waves_of_queries_equal_one_by_one(
    make_index: Any, calls: dict[str, int], monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """A run of several waves (parsed and weighed while the previous ones rank) loses nothing.

    Results stay in the order of the queries; an empty query gives its error in its place, a
    query whose words are in no document ranks nothing, and terms first met in a later wave are
    weighed before it is ranked.
    """
    rng = np.random.default_rng(11)
    vocab = [f"t{i}" for i in range(60)]
    index = make_index([" ".join(rng.choice(vocab[:50], size=12)) for _ in range(300)])
    searcher = Searcher(index)
    queries = [
        " ".join(rng.choice(vocab[: 10 + i], size=int(rng.integers(1, 9)))) for i in range(45)
    ]
    queries[7] = ""
    queries[20] = "t55 t58"  # in no document
    monkeypatch.setattr(batch, "WAVE", 6)
    variant = get_variant("bm25plus")
    many = searcher.search_many(queries, variant, 1000, count=True, threads=threads)
    assert len(many) == len(queries)
    assert calls["batch"] >= 8  # a kernel call per wave at least
    assert calls["search"] == 0
    assert isinstance(many[7], QueryError)
    assert many[20].hits.docnos.size == 0
    for i, (q, res) in enumerate(zip(queries, many, strict=True)):
        if i == 7:
            continue
        assert _ranking(res) == _ranking(_alone(searcher, q, variant, 1000)), i


@pytest.mark.parametrize("threads", [1, 2])
def test_a_run_of_more_terms_than_the_weight_table_holds(
    make_index: Any, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """The weight table is bounded: a wave that fills it must not lose its earlier terms.

    Emptied when full, it used to keep only the terms new to the wave, and the wave's others
    (weighed by an earlier one) read as unweighed: dropped from its queries' scores. A second
    run on the same searcher did it too.
    """
    rng = np.random.default_rng(5)
    vocab = [f"t{i}" for i in range(80)]
    index = make_index([" ".join(rng.choice(vocab, size=10)) for _ in range(300)])
    runs = [
        [" ".join(rng.choice(vocab[a : a + 50], size=int(rng.integers(2, 9)))) for _ in range(60)]
        for a in (0, 30)
    ]  # the second run: terms of the first and new ones
    monkeypatch.setattr(Searcher, "CACHE_SIZE", 24)
    monkeypatch.setattr(batch, "WAVE", 8)
    for key in ("lucene", "bm25adpt"):  # weighed by df, and term by term
        variant = get_variant(key)
        searcher = Searcher(index)
        alone = Searcher(index)  # (its own table: bounded alike, but one query at a time)
        for queries in runs:  # the second run starts from the first's table
            many = searcher.search_many(queries, variant, 1000, count=True, threads=threads)
            for q, res in zip(queries, many, strict=True):
                assert _ranking(res) == _ranking(_alone(alone, q, variant, 1000)), (key, q)


def test_a_wave_whose_weightings_another_search_dropped(make_index: Any) -> None:
    """Between a wave's weighing and its ranking another search may empty the bounded table."""
    rng = np.random.default_rng(6)
    vocab = [f"t{i}" for i in range(30)]
    index = make_index([" ".join(rng.choice(vocab, size=8)) for _ in range(200)])
    queries = [" ".join(rng.choice(vocab, size=int(rng.integers(2, 7)))) for _ in range(20)]

    class Emptied(Searcher):
        def _weigh_new(self, parsed: Any, variant: Variant, feedback: Any) -> None:
            super()._weigh_new(parsed, variant, feedback)
            self._table(variant, feedback).clear()  # (what a search on another thread may do)

    variant = get_variant("bm25l")
    many = Emptied(index).search_many(queries, variant, 1000, count=True)
    for q, res in zip(queries, many, strict=True):
        assert _ranking(res) == _ranking(_alone(Searcher(index), q, variant, 1000)), q


def test_a_failure_in_a_later_wave_is_raised(
    make_index: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = make_index(["a b c", "a b", "c a", "b b c"])
    real = topk._topk
    made = {"n": 0}

    class FailsLater:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def batch(self, *a: Any, **kw: Any) -> Any:
            made["n"] += 1
            if made["n"] == 3:
                raise ValueError("the postings changed after the PostingList was built (...)")
            return real.batch(*a, **kw)

    monkeypatch.setattr(topk, "_topk", FailsLater())
    monkeypatch.setattr(batch, "WAVE", 2)
    with pytest.raises(IndexCorruptError, match="damaged"):
        Searcher(index).search_many(["a b", "c", "a", "b c", "a c", "b", "c b a"], k=1000)


def test_filters_and_deletions_in_a_batch(make_segmented: Any) -> None:
    rng = np.random.default_rng(3)
    vocab = [f"t{i}" for i in range(25)]
    groups = [[" ".join(rng.choice(vocab, size=9)) for _ in range(n)] for n in (300, 40, 250)]
    index = make_segmented(groups, [list(range(0, 300, 4)), [], list(range(1, 250, 3))])
    keep = rng.random(index.n_slots) < 0.6

    class Filtered(Searcher):
        """A searcher whose filters keep the documents of ``keep`` (what filters amount to)."""

        def _allowed(self, parsed: Any) -> Any:
            return keep

    searcher = Filtered(index)
    searcher.filters = Filters(types=("txt",))  # any: _allowed above decides
    queries = [list(rng.choice(vocab, size=int(rng.integers(1, 12)))) for _ in range(30)]
    for key in ("lucene", "bm25plus", "bim", "tfidf"):
        v = get_variant(key)
        for k in (1, 17, 1000):
            many = searcher.search_many(queries, v, k, count=True, threads=2)
            for q, res in zip(queries, many, strict=True):
                assert _ranking(res) == _ranking(_alone(searcher, q, v, k)), (key, k, q)


def _valid_call(index: Index, searcher: Searcher) -> tuple[list[Any], dict[str, Any]]:
    """Return the arguments of a valid ``_topk.batch`` call for two queries on ``index``."""
    st_ = topk._state(index)
    sg = st_.segments[0]
    terms = [(t, searcher.weight(t, get_variant("lucene"))) for t in ("a", "b", "c")]
    row = []
    for t, w in terms:
        assert w is not None
        tk = st_.table(w, sg.cap).kernel
        p = st_.postings(t)[0]
        assert p is not None
        row.append((p.pl, tk, None, topk._topk.Parts(p.pl, tk)))
    args = [
        ((sg.dli, sg.deny, sg.base),),
        (tuple(row),),
        np.array([0, 1, 2, 1], dtype=np.int32),
        np.array([1.5, 0.5, 2.0, 1.0]),
        np.array([0, 2, 4], dtype=np.int64),
        5,
    ]
    return args, {"allows": None}


def test_the_batch_entry_checks_its_arguments(make_index: Any) -> None:
    index = make_index(["a b c", "a b", "c a", "b", "a a c"])
    searcher = Searcher(index)
    args, kw = _valid_call(index, searcher)
    _d, _s, sizes, matches, kk = topk._topk.batch(*args, **kw)
    assert kk == 5
    assert np.frombuffer(sizes, np.int64).tolist() == [5, 5]
    assert np.frombuffer(matches, np.int64).tolist() == [5, 5]
    row = args[1][0]

    def bad(i: int, value: Any) -> list[Any]:
        out = list(args)
        out[i] = value
        return out

    cases: list[tuple[list[Any], dict[str, Any], type[Exception], str]] = [
        (bad(2, np.array([0, 3, 2, 1], np.int32)), kw, ValueError, "distinct, in range"),
        (bad(2, np.array([0, 0, 2, 1], np.int32)), kw, ValueError, "distinct, in range"),
        (bad(3, np.array([1.5, np.inf, 2.0, 1.0])), kw, ValueError, "finite weights"),
        (bad(4, np.array([0, 2, 3], np.int64)), kw, ValueError, "do not agree"),
        (bad(4, np.array([0, 3, 2, 4], np.int64)), kw, ValueError, "ascend"),
        (bad(2, np.array([0, 1, 2, 1], np.int64)), kw, TypeError, "int32"),
        (bad(5, 0), kw, ValueError, "k must be"),
        (bad(1, ((row[0], row[1]),)), kw, ValueError, "in range"),  # slot 2 of 2
        (bad(0, (args[0][0], args[0][0])), kw, TypeError, "one length"),
        (bad(1, (row, "x")), kw, TypeError, "one length"),
        (bad(1, ((row[0], row[1], "x"),)), kw, TypeError, "each entry"),
        (bad(1, ((row[0], row[1], (1, 2, 3, 4)),)), kw, TypeError, "each entry"),
        (bad(1, ((row[0], row[1], (row[0][0], row[0][1], None, row[1][3])),)), kw, ValueError,
         "parts were made"),
        (bad(0, ((np.zeros(9, np.uint8), None, 0),)), kw, ValueError, "another dl_index"),
        (bad(0, ((args[0][0][0], np.zeros(2, bool), 0),)), kw, ValueError, "deny must cover"),
        (bad(0, ()), kw, TypeError, "one length"),
        (args, {"allows": (None,)}, ValueError, "one item per query"),
        (args, {"allows": (None, np.ones(3, bool))}, ValueError, "every document"),
    ]  # fmt: skip
    for call, kws, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            topk._topk.batch(*call, **kws)
    # Masks: a query's allowed documents only.
    allow = np.array([True, False, True, False, True])
    d, _s, sizes, _m, _k = topk._topk.batch(*args, allows=(allow, None))
    first = np.frombuffer(d, np.int64)[: np.frombuffer(sizes, np.int64)[0]]
    assert set(first.tolist()) <= {0, 2, 4}


def test_damaged_blocks_in_a_batch_report_a_damaged_index(
    make_index: Any, window: Callable[[int], None]
) -> None:
    rng = np.random.default_rng(9)
    texts = [" ".join(rng.choice(list("abcdef"), size=int(rng.integers(1, 9)))) for _ in range(700)]
    index = make_index(texts)
    searcher = Searcher(index)
    args, kw = _valid_call(index, searcher)
    want = topk._topk.batch(*args, **kw)[:4]
    sg = topk._state(index).segments[0]
    arrays = sg.seg.kernel_arrays
    window(4)
    outcomes = set()
    for trial in range(200):
        bad = damaged(arrays, rng)
        row = []
        for (_pl, tk, ov, _pa), t in zip(args[1][0], "abc", strict=True):
            pl = topk._topk.stored(bad, sg.seg.lexicon.find(t), sg.dli, sg.cap, sg.shift)
            row.append((pl, tk, ov, topk._topk.Parts(pl, tk) if trial % 2 else None))
        call = list(args)
        call[1] = (tuple(row),)
        error = ""
        try:
            topk._topk.batch(*call, **kw)
        except ValueError as exc:
            error = str(exc)
        assert not error or "changed" in error
        outcomes.add("error" if error else "result")
    assert "error" in outcomes
    assert topk._topk.batch(*args, **kw)[:4] == want  # the undamaged lists: as before


def test_a_damaged_index_is_named_as_such(make_index: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    index = make_index(["a b c", "a b", "c a"])
    real = topk._topk

    class Damaged:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def batch(self, *a: Any, **kw: Any) -> Any:
            raise ValueError("the postings changed after the PostingList was built (...)")

    monkeypatch.setattr(topk, "_topk", Damaged())
    with pytest.raises(IndexCorruptError, match="damaged"):
        Searcher(index).search_many(["a b", "c"], k=1000)


def test_the_collector_is_left_as_it_was(make_index: Any) -> None:
    import gc

    index = make_index(["a b c", "a b", "c a"])
    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            Searcher(index).search_many(["a b", "c", ""], k=1000)
            assert gc.isenabled() is state
            with pytest.raises(QueryError):
                Searcher(index).search_many(["a"], k=0)
            assert gc.isenabled() is state
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("k", [65, 100, 301])
def test_deep_k_bars_candidates_with_ties(
    k: int, make_segmented: Any, window: Callable[[int], None]
) -> None:
    # Many windows whose candidates fill the array of 16 k several times over: the k best so far
    # bar the rest. Runs of identical documents tie at the bar (the lowest docnos win).
    rng = np.random.default_rng(k)
    base = ["a a b", "a c", "a b c d", "a", "b d d", "a e", "c c c a"]
    groups = [[base[int(i)] for i in rng.integers(0, len(base), size=n)] for n in (9000, 50, 7000)]
    index = make_segmented(groups, [list(range(0, 9000, 17)), [], list(range(2, 7000, 29))])
    searcher = Searcher(index, strategy="exhaustive")
    window(6)
    for key in ("lucene", "okapi", "bim"):
        v = get_variant(key)
        queries = [["a"], ["a", "b"], ["c", "a", "d"], ["a", "b", "c", "d", "e"]]
        got = searcher.search_many(queries, v, k, count=True, threads=2)
        for q, res in zip(queries, got, strict=True):
            assert _ranking(res) == reference(searcher, q, v, k), (key, q)


@pytest.mark.parametrize("k", [65, 200])
def test_a_segment_after_a_selected_one_keeps_the_order(k: int, make_segmented: Any) -> None:
    # The first segment has few candidates (its k best selected from an array: best first), the
    # second many (the heap of the top k, which the first's entries must enter as a heap).
    rng = np.random.default_rng(k)
    words = ["a", "b", "c", "d"]
    groups = [
        [" ".join(rng.choice(words, size=3)) for _ in range(300)],
        [" ".join(rng.choice(words, size=int(rng.integers(1, 6)))) for _ in range(20 * k)],
        [" ".join(rng.choice(words, size=2)) for _ in range(100)],
    ]
    index = make_segmented(groups, [[], list(range(0, 20 * k, 9)), []])
    searcher = Searcher(index, strategy="exhaustive")
    queries = [["a"], ["a", "b"], ["d", "c", "a"]]
    for key in ("lucene", "bm25l", "tfidf"):
        v = get_variant(key)
        for q, res in zip(queries, searcher.search_many(queries, v, k, count=True), strict=True):
            assert _ranking(res) == reference(searcher, q, v, k), (key, q)
