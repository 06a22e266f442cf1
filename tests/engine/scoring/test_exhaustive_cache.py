"""The exhaustive path's decoded-postings cache (scoring/postings_cache.py + _topk_src/parts.c).

Every ranking is checked against the dense numpy float64 ranking (score descending, docno
ascending, scores bit for bit) on a cold cache (the kernel fills the parts), a warm one (it
reads them), and under a byte cap so small that lists are evicted between queries; then across
a parameter change, a reopen after an edit, and two threads. Corpora are drawn so that both the
sparse (first-seen list) and the dense (scan of the seen bytes) bookkeeping run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from exhaustive_helpers import cache_of, draw_mask, reference, specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine import IndexStore, build_index, get_variant
from bm25desk.engine.index.edit import add_documents
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import postings_cache, topk
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import Variant, variant_classes

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")

KERNEL_KEYS = [c.key for c in variant_classes() if c.key != "bm25f"]
# Many words, few of them frequent: queries of rare words are sparse, of frequent ones dense.
WORDS = [f"w{i}" for i in range(40)]
word = st.integers(0, 39).map(lambda i: WORDS[min(i, (i * i) // 40)])
corpora = st.lists(st.lists(word, min_size=0, max_size=14).map(" ".join), min_size=1, max_size=120)
queries = st.lists(st.sampled_from([*WORDS, "zz"]), min_size=1, max_size=8)
SWEEP = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
VariantsOf = Callable[[str], st.SearchStrategy[Variant]]


def exhaustive(
    index: Index, terms: list[topk.TermSpec], k: int, allowed: object, rows: bool
) -> tuple[list[int], list[int], int]:
    """Return the exhaustive kernel's docnos, scores (int64 bits) and match count."""
    mask = None if allowed is None else np.asarray(allowed)
    got = topk.exhaustive_top_k(index, terms, k, mask, rows=rows)
    assert got is not None
    top, n = got
    return top.docnos.tolist(), top.scores.view(np.int64).tolist(), n


@pytest.mark.slow
@given(
    groups=st.lists(corpora, min_size=1, max_size=3),
    data=st.data(),
)
@SWEEP
def test_cold_warm_and_evicted_agree_with_the_dense_ranking(
    groups: list[list[str]], data: st.DataObject, make_segmented: object, variants: VariantsOf
) -> None:
    deleted = [
        data.draw(st.lists(st.integers(0, len(g) - 1), max_size=len(g) // 2, unique=True))
        for g in groups
    ]
    index = make_segmented(groups, deleted)  # type: ignore[operator]
    searcher = Searcher(index)
    cache = cache_of(index)
    for _ in range(4):
        variant = data.draw(variants(data.draw(st.sampled_from(KERNEL_KEYS))))
        query = data.draw(queries)
        k = data.draw(st.integers(1, 12) | st.just(1000))
        allowed = draw_mask(data, index.n_slots)
        ref = reference(searcher, query, variant, k, allowed)
        terms = specs(searcher, query, variant)
        if not terms or topk._top_k_kernel(index, terms, 1, None) is None:
            continue  # weights the kernel declines (the numpy path ranks them)
        cache.clear()
        cold = exhaustive(index, terms, k, allowed, rows=data.draw(st.booleans()))
        warm = exhaustive(index, terms, k, allowed, rows=False)
        assert cold == ref, (variant, query, k)
        assert warm == ref, (variant, query, k)
        # Evicted between queries: a cap below one list keeps none, a small one a few.
        cache.clear()
        cache.max_bytes = data.draw(st.sampled_from([1, 64, 600]))
        try:
            evicted = exhaustive(index, terms, k, allowed, rows=False)
            assert cache.nbytes <= cache.max_bytes
            assert exhaustive(index, terms, k, allowed, rows=False) == ref
        finally:
            cache.max_bytes = postings_cache.MAX_BYTES
        assert evicted == ref, (variant, query, k)


def test_parts_are_filled_once_and_read_after(make_index: object) -> None:
    texts = [f"a b {'c ' * (i % 5)} w{i % 7}" for i in range(300)]
    index = make_index(texts)  # type: ignore[operator]
    searcher = Searcher(index)
    variant = get_variant("lucene")
    terms = specs(searcher, ["a", "c", "w3"], variant)
    cache = cache_of(index)
    cache.clear()
    first = exhaustive(index, terms, 10, None, rows=True)
    assert len(cache) == 3
    parts = [e for _, e in cache.entries()]
    assert all(p.filled for p in parts)
    assert sum(p.nbytes + postings_cache._ENTRY_BYTES for p in parts) == cache.nbytes
    second = exhaustive(index, terms, 10, None, rows=False)
    assert [e for _, e in cache.entries()] == parts  # the same objects
    assert first == second == reference(searcher, ["a", "c", "w3"], variant, 10)


def test_a_parameter_change_uses_other_parts(make_index: object) -> None:
    texts = [
        " ".join(["x"] * (1 + i % 9) + ["y"] * (i % 4) + ["z" * (1 + i % 3)]) for i in range(200)
    ]
    index = make_index(texts)  # type: ignore[operator]
    searcher = Searcher(index)
    cache = cache_of(index)
    seen = []
    for k1, b in [(1.2, 0.75), (0.5, 0.3), (1.2, 0.75), (2.0, 1.0)]:
        variant = get_variant("lucene", k1=k1, b=b)
        terms = specs(searcher, ["x", "y", "zz"], variant)
        got = exhaustive(index, terms, 50, None, rows=False)
        assert got == reference(searcher, ["x", "y", "zz"], variant, 50)
        seen.append(got[1])
    assert seen[0] == seen[2] != seen[1]
    assert len(cache) == 3 * 3  # (x, y, zz) under three tables


def test_reopening_after_an_edit_serves_no_stale_postings(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "store")
    first = tmp_path / "a.tsv"
    first.write_text("".join(f"d{i}\tapple {'pear ' * (i % 3)}plum{i % 4}\n" for i in range(60)))
    build_index(first, name="ix", fmt="msmarco-passages", store=store)
    variant = get_variant("lucene")
    query = ["apple", "pear", "plum1"]
    before = store.open("ix")
    s0 = Searcher(before)
    old = exhaustive(before, specs(s0, query, variant), 1000, None, rows=False)
    assert old == reference(s0, query, variant, 1000)
    assert len(cache_of(before))
    more = tmp_path / "b.tsv"
    # New documents with these terms, and d0..d9 replaced (deleted and added again).
    more.write_text("".join(f"d{i}\tpear pear plum1 apple{i}\n" for i in range(10, 0, -1)))
    add_documents("ix", more, fmt="msmarco-passages", store=store)
    after = store.open("ix")
    s1 = Searcher(after)
    assert len(cache_of(after)) == 0
    new = exhaustive(after, specs(s1, query, variant), 1000, None, rows=False)
    assert new == reference(s1, query, variant, 1000)
    assert new != old
    # The old index, still open, keeps its own parts and its own answers.
    assert exhaustive(before, specs(s0, query, variant), 1000, None, rows=False) == old


def test_two_threads_fill_and_read_the_same_parts(make_index: object) -> None:
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(WORDS[:12], size=int(rng.integers(1, 20)))) for _ in range(2000)]
    index = make_index(texts)  # type: ignore[operator]
    searcher = Searcher(index, strategy="exhaustive")
    variant = get_variant("bm25l", k1=1.1, b=0.6)
    qs = [list(rng.choice(WORDS[:12], size=int(rng.integers(1, 6)))) for _ in range(200)]
    want = [reference(searcher, q, variant, 100) for q in qs]
    for _ in range(3):
        cache_of(index).clear()
        got = searcher.search_many(qs, variant, 100, threads=2)
        for g, (d, s, _n) in zip(got, want, strict=True):
            assert not isinstance(g, Exception)
            assert g.hits.docnos.tolist() == d
            assert g.hits.scores.view(np.int64).tolist() == s
    # The same parts read concurrently by raw threads, none filled beforehand.
    cache_of(index).clear()
    errors: list[BaseException] = []

    def run(part: list[list[str]]) -> None:
        try:
            for q in part:
                got = exhaustive(index, specs(searcher, q, variant), 100, None, rows=False)
                assert got == reference(searcher, q, variant, 100)
        except BaseException as exc:  # reported below, in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(qs[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_parts_reject_another_list_or_table(make_index: object) -> None:
    index = make_index(["a b", "b c", "c a a"])  # type: ignore[operator]
    searcher = Searcher(index)
    variant = get_variant("lucene")
    st_ = topk._state(index)
    (p_a,), (p_b,) = st_.postings("a"), st_.postings("b")
    assert p_a is not None
    assert p_b is not None
    (_, _, wa), _ = specs(searcher, ["a", "b"], variant)
    table = st_.table(wa, st_.segments[0].cap).kernel
    wo = searcher.weight("a", get_variant("lucene", k1=2.0))
    assert wo is not None
    other = st_.table(wo, st_.segments[0].cap).kernel
    parts = topk._topk.Parts(p_a.pl, table)
    assert parts.fits(p_a.pl)
    assert not parts.fits(p_b.pl)
    assert not parts.filled
    assert parts.nbytes == 6 * p_a.n  # an int32 docno and a 16-bit place in a small table
    sg = st_.segments[0]
    search = topk._topk.search
    with pytest.raises(ValueError, match="another posting list or table"):
        search([(p_b.pl, 1.0, table, None, None, 0, parts)], sg.dli, 5, 1, exhaustive=True)
    assert other is not table
    with pytest.raises(ValueError, match="another posting list or table"):
        search([(p_a.pl, 1.0, other, None, None, 0, parts)], sg.dli, 5, 1, exhaustive=True)
    with pytest.raises(ValueError, match="another posting list or table"):
        search([(p_a.pl, 1.0, table, None, None, 0, "parts")], sg.dli, 5, 1, exhaustive=True)
    with pytest.raises(TypeError):
        topk._topk.Parts(p_a.pl, "table")


def _entries_and_accounts(index: Index, terms: list[topk.TermSpec], max_bytes: int) -> tuple:
    cache = cache_of(index)
    cache.clear()
    cache.max_bytes = max_bytes
    st_ = topk._state(index)
    rows = postings_cache.entries(st_, index.doclen, terms)
    assert rows is not None
    shape = [[None if e is None else (e.n, e.nbytes, e.n_overflow) for e in row] for row in rows]
    return shape, cache.nbytes, sorted(key[1:] for key, _ in cache.entries())  # (any order)


def test_a_batchs_new_entries_made_in_c_are_the_python_ones(
    make_index: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch path's new terms (postings_cache.entries): made by _topk.fresh where it can,
    the rest in Python (long lists, past the admission length), with the same entries, bytes
    and order of keys as all made in Python; and evaluation rankings equal the dense ones."""
    texts = [f"a b {'c ' * (i % 5)} w{i % 7} {'d' if i % 3 else 'e'} r{i}" for i in range(400)]
    index = make_index(texts)  # type: ignore[operator]
    searcher = Searcher(index)
    variant = get_variant("bm25l")
    words = ["a", "c", "w3", "d", "r7", "zz", "e", "r399"]
    terms = specs(searcher, words, variant)
    made: list[int] = []
    real = topk._topk.fresh

    def counting(*args: object) -> list[object]:
        got = real(*args)
        made.extend(1 for e in got if e is not NotImplemented)
        return got

    monkeypatch.setattr(topk._topk, "fresh", counting, raising=False)
    small = 4 * (postings_cache._ENTRY_BYTES + postings_cache.PART_BYTES * 150)  # short: ~150
    got_c = _entries_and_accounts(index, terms, small)
    assert 0 < sum(made) < len(terms)  # (some in C, the longest lists not)
    monkeypatch.setattr(
        postings_cache, "_fresh", lambda st, t, m, g, missing: [NotImplemented] * len(missing)
    )
    got_py = _entries_and_accounts(index, terms, small)
    assert got_c == got_py
    cache_of(index).max_bytes = postings_cache.MAX_BYTES
    results = searcher.search_many([" ".join(words)], variant, 50, contributions=False)
    ref = reference(searcher, words, variant, 50)
    assert results[0].hits.docnos.tolist() == ref[0]


def test_fresh_keeps_what_the_map_holds_and_declines_what_is_not_for_it(make_index: object) -> None:
    index = make_index(["a b c", "a b", "a"])  # type: ignore[operator]
    searcher = Searcher(index)
    terms = specs(searcher, ["a", "b"], get_variant("lucene"))
    st_ = topk._state(index)
    cache = cache_of(index)
    tk = st_.table(terms[0][2], st_.segments[0].cap).kernel
    view = postings_cache._views(st_)[0]
    memo = {"a": index.segments[0].lexicon.find("a"), "gone": -1}
    kept = object()
    added: list = []
    m = {"b": kept}
    got = topk._topk.fresh(view, memo, tk, m, ["a", "b", "c", "gone"], 99, 7, added)
    assert got[0].n == 3
    assert got[1] is kept  # (already in the map)
    assert got[2] is NotImplemented  # (not in the memo)
    assert got[3] is None  # (in no document)
    assert added == [m, "a", 7 + got[0].nbytes, m, "gone", 7]  # (map, term, bytes) flat
    assert m == {"b": kept, "a": got[0], "gone": None}
    got = topk._topk.fresh(view, memo, tk, {}, ["a"], 3, 7, [])  # a list of 3 is not short
    assert got == [NotImplemented]
    with pytest.raises(TypeError):
        topk._topk.fresh(view, memo, tk, {}, [1], 99, 7, [])
    assert cache is cache_of(index)


def test_accounted_entries_join_the_order_as_they_came_and_count_once() -> None:
    """The kernel's entries (account) are counted at once and ordered when next read or put."""
    cache = postings_cache.PartsCache(topk._topk.Parts, max_bytes=10_000)
    table = object()
    t, e = id(table), postings_cache._ENTRY_BYTES
    m = cache.map_of(table, 0)
    m.update(a=None, b=None)  # (as the kernel puts them, then notes them)
    cache.account([m, "a", 100, m, "b", 200])
    assert cache.nbytes == 300
    cache.put(table, 0, "c", None)
    m["d"] = None
    cache.account([m, "d", 50])
    cache.put(table, 0, "b", None)  # b again, as another thread's put: its own size, at the back
    assert len(cache) == 4
    assert [key[2] for key, _ in cache.entries()] == ["a", "c", "d", "b"]
    assert all(key[:2] == (t, 0) for key, _ in cache.entries())
    assert cache.nbytes == 100 + e + 50 + e
    cache.account([m, "c", 999])  # one another thread put first: not counted twice
    assert len(cache) == 4
    assert cache.nbytes == 100 + e + 50 + e
    cache.account([{"x": None}, "x", 70])  # a map the cache no longer has: not counted
    assert len(cache) == 4
    assert cache.nbytes == 100 + e + 50 + e
    cache.max_bytes = 100 + e + 50 + e  # an account over the cap evicts, oldest first
    m["f"] = None
    cache.account([m, "f", 60])
    assert [key[2] for key, _ in cache.entries()] == ["c", "d", "b", "f"]
    assert "a" not in m
    assert cache.nbytes == e + 50 + e + 60
    cache.account([m, "g", 1])
    cache.clear()
    assert len(cache) == 0
    assert cache.nbytes == 0


def test_maps_take_turns_when_evicting_and_an_emptied_map_goes() -> None:
    """Two tables' maps: eviction takes the oldest entry of each in turn (the second chance of a
    Parts read again: test_exhaustive_query.py); a map left empty is dropped, and the search's
    last maps with it."""
    cache = postings_cache.PartsCache(topk._topk.Parts, max_bytes=10_000)
    old, new = object(), object()
    e = postings_cache._ENTRY_BYTES
    for term in ("a", "b", "c"):
        cache.put(old, 0, term, None)
    for term in ("x", "y"):
        cache.put(new, 0, term, None)
    cache.last = ((), ())
    cache.max_bytes = 3 * e  # three of the six must go: a and x, then b
    cache.put(new, 0, "z", None)
    assert sorted(key[2] for key, _ in cache.entries()) == ["c", "y", "z"]
    cache.max_bytes = e  # c (its map emptied, dropped) and y
    cache.account([cache.map_of(new, 0), "q", 0])
    assert [key[2] for key, _ in cache.entries()] == ["z", "q"]
    assert cache.last is None
    assert cache.lookup(old, 0, "c") is postings_cache._MISSING
