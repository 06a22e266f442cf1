"""One query's exhaustive top k in one kernel call (``_topk.exhaustive_query``, exquery.c, sums.c).

The kernel reads each term's Parts from the cache's maps, asks for the missing ones in one
callback, and traverses every segment with one heap. A query whose every contribution is > 0
("positive": each weight > 0 and its product with a bound below its term's tf parts > 0) keeps
no marks: a sum > 0 says its document matched, and its top k is taken from chunk maxima (the
k-th largest of them a bar, only the chunks reaching it read again). Every ranking here is
checked bit for bit against the dense float64 oracle (``dense_scores``: the same sums in query
order from 0.0; score descending, docno ascending; the match count): positive queries and ones
with negative or vanishing weights (products that round to 0.0, so that a matching document
may score 0.0), exact ties across chunks and windows, masks, several segments, deletions, tfs
above the cap, empty documents (a table whose smallest entry is 0), every variant, k from 1 to
beyond the collection, rows, argument checks, damaged blocks, the cache's second-chance eviction
and threads.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from exhaustive_helpers import SWEEP, VariantsOf, cache_of, damaged, draw_mask
from hypothesis import given
from hypothesis import strategies as st

from bm25desk.engine import get_variant
from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import postings_cache, topk
from bm25desk.engine.scoring.dense import dense_scores
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variant import TermWeight
from bm25desk.engine.scoring.variants import variant_classes

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")

KERNEL_KEYS = [c.key for c in variant_classes() if c.key != "bm25f"]
WORDS = [f"w{i}" for i in range(12)]
# Documents: drawn words, an empty one now and then (length 0: a zero row in the tables), a
# word repeated past the cap (tf 40 > 32: overflow postings), and exact duplicates (ties).
word = st.integers(0, 11).map(lambda i: WORDS[min(i, (i * i) // 12)])
text = (
    st.lists(word, min_size=0, max_size=10).map(" ".join)
    | st.just("")
    | st.sampled_from(WORDS[:3]).map(lambda w: " ".join([w] * 40))
)
corpus = st.lists(text, min_size=1, max_size=60).flatmap(
    lambda docs: st.integers(1, 4).map(lambda r: docs * r)  # repeated: exact ties
)
Ranking = tuple[list[int], list[int], int]


@pytest.fixture
def window() -> Iterator[Callable[[int], None]]:
    """Return ``set(shift)``: the kernel's window for this test (restored afterwards)."""
    before = topk._topk.window_shift()
    yield lambda shift: topk._topk.window_shift(shift)
    topk._topk.window_shift(before)


def oracle(index: Index, terms: list[topk.TermSpec], k: int, allowed: Any) -> Ranking:
    """Return the dense float64 ranking of ``terms`` as they are: docnos, score bits, count."""
    scores, matched = dense_scores(index, terms)
    if allowed is not None:
        matched = matched & allowed
    cand = np.flatnonzero(matched)
    order = np.lexsort((cand, -scores[cand]))[:k]
    return cand[order].tolist(), scores[cand][order].view(np.int64).tolist(), int(cand.size)


def kernel(index: Index, terms: list[topk.TermSpec], k: int, allowed: Any, rows: bool) -> Any:
    """Return exhaustive_top_k's ranking (docnos, score bits, count) and rows (tfs, part bits)."""
    got = topk.exhaustive_top_k(index, terms, k, allowed, rows=rows)
    assert got is not None
    top, n = got
    return (top.docnos.tolist(), top.scores.view(np.int64).tolist(), n), (
        top.tfs.tolist(),
        top.parts.view(np.int64).tolist(),
    )


def weighted(searcher: Searcher, query: list[str], variant: Any, scale: float) -> Any:
    """Return the query's TermSpecs, each weight's idf times ``scale`` (negative, tiny...)."""
    out = []
    seen: set[str] = set()
    for t in query:
        w = searcher.weight(t, variant)
        if w is None or t in seen:
            continue
        seen.add(t)
        out.append((t, query.count(t), dataclasses.replace(w, idf=w.idf * scale)))
    return out


def rows_oracle(index: Index, terms: list[topk.TermSpec], docnos: list[int]) -> Any:
    """Return the per-term tf and tf part bits of ``docnos`` (the numbers the ranking used)."""
    parts = topk.tf_parts(index, terms, np.array(docnos, dtype=np.int64))
    tfs = np.stack([tf for tf, _ in parts], axis=1) if parts else np.zeros((len(docnos), 0))
    vals = np.stack([p for _, p in parts], axis=1) if parts else np.zeros((len(docnos), 0))
    return tfs.astype(np.int32).tolist(), vals.astype(np.float64).view(np.int64).tolist()


@pytest.mark.slow
@given(groups=st.lists(corpus, min_size=1, max_size=3), data=st.data())
@SWEEP
def test_every_query_kind_agrees_with_the_dense_ranking(
    groups: list[list[str]],
    data: st.DataObject,
    make_segmented: Any,
    variants: VariantsOf,
    window: Callable[[int], None],
) -> None:
    deleted = [
        data.draw(st.lists(st.integers(0, len(g) - 1), max_size=len(g) // 3, unique=True))
        for g in groups
    ]
    index = make_segmented(groups, deleted)
    searcher = Searcher(index)
    cache = cache_of(index)
    for _ in range(4):
        variant = data.draw(variants(data.draw(st.sampled_from(KERNEL_KEYS))))
        query = data.draw(st.lists(st.sampled_from([*WORDS, "zz"]), min_size=1, max_size=8))
        # positive, negative, vanishing (products that round to 0.0), mixed signs
        scale = data.draw(st.sampled_from([1.0, -1.0, 1e-320, 5e-324, 1e-300, 3.0]))
        terms = weighted(searcher, query, variant, scale)
        if data.draw(st.booleans()) and len(terms) > 1:  # one term of the other sign
            t, q, w = terms[0]
            terms[0] = (t, q, dataclasses.replace(w, idf=-w.idf))
        if not terms or topk._top_k_kernel(index, terms, 1, None) is None:
            continue  # weights the kernel declines (the numpy path ranks them)
        k = data.draw(st.integers(1, 12) | st.sampled_from([65, 200, 100_000]))
        allowed = draw_mask(data, index.n_slots)
        want = oracle(index, terms, k, allowed)
        rows = data.draw(st.booleans())
        window(data.draw(st.sampled_from([4, 5, 30])))
        cache.clear()
        cold, cold_rows = kernel(index, terms, k, allowed, rows)  # fills the parts
        warm, warm_rows = kernel(index, terms, k, allowed, rows)  # reads them
        assert cold == warm == want, (variant, query, scale, k)
        assert cold_rows == warm_rows
        if rows:
            assert warm_rows == rows_oracle(index, terms, want[0])


def test_ties_across_chunks_and_windows(make_index: Any, window: Callable[[int], None]) -> None:
    # 40 distinct documents, each 25 times: every score is shared by 25 documents spread over
    # the whole collection, so the k-th best ties with documents in every chunk and window.
    rng = np.random.default_rng(3)
    base = [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 8)))) for _ in range(40)]
    index = make_index(base * 25)
    searcher = Searcher(index)
    for shift in (4, 6, 30):
        window(shift)
        for key in ("lucene", "bm25plus", "tfidf"):
            variant = get_variant(key)
            for query in (["w0"], ["w0", "w1", "w2"], WORDS):
                terms = weighted(searcher, query, variant, 1.0)
                for k in (1, 3, 24, 25, 26, 64, 65, 77, 999, 1000, 1001):
                    cache_of(index).clear()
                    for rows in (False, True):
                        got, _ = kernel(index, terms, k, None, rows)
                        assert got == oracle(index, terms, k, None), (shift, key, query, k)


def test_vanishing_products_still_match(make_index: Any, window: Callable[[int], None]) -> None:
    # Weights so small that some products qw * tf part round to 0.0 (tf parts below 0.5 in the
    # long documents, with k1 = 3 and b = 1), others to the smallest double: a matching document
    # may score 0.0, and none may be lost (no marks are kept only when every product is > 0).
    texts = ["a b", "a", "b c", "c", "a c c", "", "a " + "z " * 40, "c " + "z " * 60]
    index = make_index(texts * 20)
    searcher = Searcher(index)
    variant = get_variant("lucene", k1=3.0, b=1.0)
    cache = cache_of(index)
    for shift, max_bytes in (
        (4, postings_cache.MAX_BYTES),
        (30, postings_cache.MAX_BYTES),
        (4, 600),
    ):
        window(shift)
        cache.max_bytes = max_bytes  # 600: no list gets a filled Parts (decoded each time)
        for idf in (5e-324, 1e-323, 2e-323, 1e-310):
            for query in (["a"], ["a", "c"], ["c", "b", "a"]):
                terms = [
                    (t, q, dataclasses.replace(w, idf=idf))
                    for t, q, w in weighted(searcher, query, variant, 1.0)
                ]
                if idf == 5e-324:
                    assert 0 in oracle(index, terms, 10**6, None)[1]  # some match scores 0.0
                for k in (1, 5, 50, 200):
                    cache.clear()
                    for _ in range(2):  # cold, warm
                        got, _ = kernel(index, terms, k, None, False)
                        assert got == oracle(index, terms, k, None), (idf, query, k)
    cache.max_bytes = postings_cache.MAX_BYTES


class _HalvedIdf(TermWeight):
    """A weighting whose idf, as getattr reads it, is half of what its slot holds."""

    @property  # type: ignore[override]
    def idf(self) -> float:
        return 0.5 * _IDF_SLOT.__get__(self)


_IDF_SLOT = TermWeight.__dict__["idf"]


def test_the_kernel_reads_a_weightings_idf_as_getattr_does(make_index: Any) -> None:
    # The kernel reads a TermWeight's idf and k1 off their slots (getattr goes through its
    # __getattr__ hook); any other type, a subclass included, by getattr.
    index = make_index(["a b", "a", "b c", "c c a", "b"] * 7)
    searcher = Searcher(index)
    variant = get_variant("lucene")
    plain = weighted(searcher, ["a", "b", "c"], variant, 1.0)
    lazy = [(t, q, TermWeight.with_text_later(variant, w.stats, w.idf, 3)) for t, q, w in plain]
    halved = [(t, q, _HalvedIdf.with_text_later(variant, w.stats, w.idf, 3)) for t, q, w in plain]
    assert [w.idf for _, _, w in halved] == [0.5 * w.idf for _, _, w in plain]
    for k in (1, 4, 100):
        cache_of(index).clear()
        assert kernel(index, lazy, k, None, False)[0] == oracle(index, plain, k, None)
        assert kernel(index, halved, k, None, False)[0] == oracle(index, halved, k, None)
        assert oracle(index, halved, k, None)[1] != oracle(index, plain, k, None)[1]
        for terms in (lazy, halved):  # the pruning kernel reads them too (ranked.c)
            got = topk.ranked(index, terms, k)
            assert got is not None
            want = oracle(index, terms, k, None)
            assert (got[0].tolist(), got[1].view(np.int64).tolist()) == want[:2]


def test_masks_and_deletions_in_the_chunked_top_k(
    make_segmented: Any, window: Callable[[int], None]
) -> None:
    rng = np.random.default_rng(5)
    texts = [" ".join(rng.choice(WORDS[:6], size=int(rng.integers(1, 12)))) for _ in range(900)]
    index = make_segmented([texts[:500], texts[500:]], [list(range(0, 500, 3)), [7, 8, 9]])
    searcher = Searcher(index)
    variant = get_variant("lucene")
    terms = weighted(searcher, ["w0", "w1", "w3"], variant, 1.0)
    masks = [None, rng.random(index.n_slots) < 0.5, np.zeros(index.n_slots, bool)]
    masks.append(np.arange(index.n_slots) % 97 == 0)  # a few documents, in few chunks
    for shift in (4, 8, 30):
        window(shift)
        for allowed in masks:
            for k in (1, 10, 65, 400):
                got, _ = kernel(index, terms, k, allowed, False)
                assert got == oracle(index, terms, k, allowed), (shift, k)


def test_adpt_terms_with_their_own_tables(make_segmented: Any) -> None:
    rng = np.random.default_rng(8)
    texts = []  # word j repeated up to j + 1 times: tf distributions that differ (k1* too)
    for _ in range(400):
        words = [[w] * int(1 + rng.integers(0, 1 + j)) for j, w in enumerate(WORDS)]
        texts.append(" ".join(w for ws in words if rng.random() < 0.3 for w in ws))
    index = make_segmented([texts[:150], texts[150:]], [[1, 2], []])
    searcher = Searcher(index)
    variant = get_variant("bm25adpt")
    terms = weighted(searcher, ["w0", "w1", "w6", "w7", "w11", "zz"], variant, 1.0)
    assert len({w.k1 for _t, _q, w in terms}) > 1  # tables per term: groups
    for k in (1, 7, 100):
        for rows in (False, True):
            got, got_rows = kernel(index, terms, k, None, rows)
            assert got == oracle(index, terms, k, None)
            if rows:
                assert got_rows == rows_oracle(index, terms, got[0])


def _query_args(index: Index, searcher: Searcher, query: list[str]) -> tuple[Any, ...]:
    """Return (views, maps, terms) of a valid exhaustive_query call (cache cleared)."""
    st_ = topk._state(index)
    cache = cache_of(index)
    cache.clear()
    terms = weighted(searcher, query, get_variant("lucene"), 1.0)
    views = postings_cache._views(st_)
    tk = st_.table(terms[0][2], st_.segments[0].cap).kernel
    maps = (((tk, cache.map_of(tk, 0)),),)  # one segment, one group
    return views, maps, terms


def test_the_entry_checks_its_arguments(make_index: Any) -> None:
    index = make_index(["a b c", "a b", "c a", "b", "a a c"])
    searcher = Searcher(index)
    views, maps, terms = _query_args(index, searcher, ["a", "b", "c"])
    xq = topk._topk.exhaustive_query
    st_ = topk._state(index)
    tk = maps[0][0][0]
    lex = st_.segments[0].seg.lexicon

    def fill(missing: list[tuple[int, int]]) -> list[Any]:
        made = [topk._topk.parts(views[s], lex.find(terms[c][0]), tk) for s, c in missing]
        maps[0][0][1].update((terms[c][0], p) for (_s, c), p in zip(missing, made, strict=True))
        return made

    d, s, _tf, _p, n = xq(views, maps, terms, 3, None, False, fill)
    assert n == 5
    assert np.frombuffer(d, np.int64).size == 3
    assert xq(views, maps, terms, 3)[:2] == (d, s)  # all in the map now: no callback needed
    other = get_variant("lucene", k1=0.3)
    wo = searcher.weight("a", other)
    assert wo is not None
    tk_other = st_.table(wo, st_.segments[0].cap).kernel
    bad_parts = topk._topk.parts(views[0], lex.find("a"), tk_other)
    cases: list[tuple[tuple[Any, ...], dict[str, Any], type[Exception], str]] = [
        ((views, maps, terms, 0), {}, ValueError, "k must be"),
        ((list(views), maps, terms, 3), {}, TypeError, "must be tuples"),
        ((views, (), terms, 3), {}, TypeError, "one item each"),
        (((None,), maps, terms, 3), {}, TypeError, "Segment"),
        ((views, ((("x", {}),),), terms, 3), {}, TypeError, "Table, dict"),
        ((views, (((tk, {}),),), terms, 3), {}, ValueError, "no miss given"),
        ((views, (((tk, {}),),), terms, 3, None, False, lambda m: []), {}, ValueError,
         "one entry per missing"),
        ((views, (((tk, {}),),), terms, 3, None, False, lambda m: [bad_parts] * len(m)), {},
         ValueError, "another segment or table"),
        ((views, (((tk, {}),),), terms, 3, None, False, lambda m: ["x"] * len(m)), {},
         TypeError, "None or a Parts"),
        ((views, maps, [("a", 1)], 3), {}, TypeError, "text, qtf, weighting"),
        ((views, maps, terms, 3, np.ones(2, bool)), {}, ValueError, "allow must cover"),
        ((views, maps, terms, 3), {"groups": [0]}, ValueError, "one per term"),
        ((views, maps, terms, 3), {"groups": [0, 1, 0]}, ValueError, "per group"),
    ]  # fmt: skip
    for args, kw, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            xq(*args, **kw)

    # A callback that changes the list it was given: its answers still go where they were asked.
    def clearing(missing: list[tuple[int, int]]) -> list[Any]:
        got = [topk._topk.parts(views[s], lex.find(terms[c][0]), tk) for s, c in missing]
        missing.clear()
        return got

    assert xq(views, (((tk, {}),),), terms, 3, None, False, clearing)[:2] == (d, s)
    # A weight that is not finite: None (numpy ranks it); terms of several k1*: NotImplemented.
    inf = [(t, q, dataclasses.replace(w, idf=float("inf"))) for t, q, w in terms]
    assert xq(views, maps, inf, 3) is None
    mixed = [terms[0], (terms[1][0], 1, dataclasses.replace(terms[1][2], k1=0.7)), terms[2]]
    assert xq(views, maps, mixed, 3) is NotImplemented
    assert xq(views, maps, mixed, 3, groups=[0, 0, 0]) is not None
    # A Parts over a list with overflow postings needs its overflow values.
    big = make_index(["x " * 40, "x y", "y"])
    bs = Searcher(big)
    bviews, bmaps, bterms = _query_args(big, bs, ["x"])
    btk = bmaps[0][0][0]
    p = topk._topk.parts(bviews[0], topk._state(big).segments[0].seg.lexicon.find("x"), btk)
    assert p.n_overflow == 1
    with pytest.raises(ValueError, match="overflow values are missing"):
        xq(bviews, (((btk, {"x": p}),),), bterms, 3)
    with pytest.raises(ValueError, match="one finite tf part"):
        p.set_overflow(np.array([-1.0]))
    p.set_overflow(np.array([0.5]))
    with pytest.raises(ValueError, match="set already"):
        p.set_overflow(np.array([0.5]))
    with pytest.raises(ValueError, match="no stored blocks"):
        topk._topk.parts(topk._topk.Segment(np.zeros(3, np.uint8)), 0, btk)


def test_damaged_blocks_raise_and_leave_the_spare_sums_clean(
    make_index: Any, window: Callable[[int], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(9)
    texts = [" ".join(rng.choice(list("abcdef"), size=int(rng.integers(1, 9)))) for _ in range(700)]
    index = make_index(texts)
    searcher = Searcher(index)
    _views, maps, terms = _query_args(index, searcher, list("abcdef"))
    st_ = topk._state(index)
    sg = st_.segments[0]
    tk = maps[0][0][0]
    lex = sg.seg.lexicon
    want = oracle(index, terms, 50, None)
    outcomes = set()
    for trial in range(150):
        window(4 if trial % 2 else 30)
        bad = damaged(sg.seg.kernel_arrays, rng)
        view = topk._topk.Segment(sg.dli, sg.deny, sg.base, bad, sg.cap, sg.shift)
        made: list[Any] = []
        can_fill = trial % 4 < 2  # else never filled: decoded while the sums are added

        def fill(
            missing: list[tuple[int, int]],
            view: Any = view,
            made: list[Any] = made,
            fill: bool = can_fill,
        ) -> Any:
            for _s, c in missing:
                made.append(topk._topk.parts(view, lex.find(terms[c][0]), tk, fill=fill))
            return made

        error = ""
        try:
            topk._topk.exhaustive_query((view,), (((tk, {}),),), terms, 50, None, False, fill)
        except ValueError as exc:
            error = str(exc)
        if error:
            assert "changed" in error
            outcomes.add("error")
            for c, pa in enumerate(made):  # a filled Parts' own list decodes whole
                if pa.filled:
                    pl = topk._topk.stored(bad, lex.find(terms[c][0]), sg.dli, sg.cap, sg.shift)
                    pl.tfs_of(np.arange(sg.n, dtype=np.int32))
        else:
            outcomes.add("result")
        # The next search (sums from the spare set, unless the broken one dropped them) is right.
        cache_of(index).clear()
        got, _ = kernel(index, terms, 50, None, False)
        assert got == want
    assert "error" in outcomes
    # Through the index: a damaged index, named as such.
    real = topk._topk

    class Damaged:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def exhaustive_query(self, *a: Any, **kw: Any) -> Any:
            raise ValueError("the postings changed after the PostingList was built (...)")

    monkeypatch.setattr(postings_cache, "_topk", Damaged())
    with pytest.raises(IndexCorruptError, match="damaged"):
        topk.exhaustive_top_k(index, terms, 5)


def test_eviction_gives_a_read_entry_a_second_chance(make_index: Any) -> None:
    index = make_index([f"x{i % 8} y" for i in range(600)])  # x0..x7: 75 postings each
    searcher = Searcher(index)
    variant = get_variant("lucene")
    cache = cache_of(index)
    terms = {f"x{i}": weighted(searcher, [f"x{i}"], variant, 1.0) for i in range(8)}

    def run(t: str) -> None:
        assert kernel(index, terms[t], 5, None, False)[0] == oracle(index, terms[t], 5, None)

    def kept() -> list[str]:
        return [key[2] for key, _ in cache.entries()]

    cache.clear()
    run("x0")
    cache.max_bytes = 4 * cache.nbytes  # room for four lists (each a quarter: filled)
    try:
        for t in ("x1", "x2", "x3", "x4"):  # all new (a new entry counts as read): x0 goes
            run(t)
        assert kept() == ["x1", "x2", "x3", "x4"]
        run("x1")  # read again: the oldest, but it gets a second chance
        run("x5")
        assert kept() == ["x3", "x4", "x5", "x1"]
        run("x6")  # x3 unread since its chance: it goes
        assert kept() == ["x4", "x5", "x1", "x6"]
        assert cache.nbytes <= cache.max_bytes
        assert all(e.filled for _, e in cache.entries())
    finally:
        cache.max_bytes = postings_cache.MAX_BYTES


def test_entries_made_in_the_kernel_are_counted(make_segmented: Any) -> None:
    # A query's new terms of short lists are made by the kernel itself (their ids from the
    # lexicon's memo), the others by the callback (a tf above the cap, an absent term): every
    # entry in the maps is in the cache's order and its bytes, once.
    texts = [f"a{i % 7} b{i % 3} " + ("c " * 40 if i % 50 == 0 else "") for i in range(400)]
    index = make_segmented([texts[:250], texts[250:]], [[3], []])
    searcher = Searcher(index)
    variant = get_variant("lucene")
    cache = cache_of(index)
    cache.clear()
    for q in (["a1", "b2"], ["c", "a1", "zz"], ["b0", "a6", "c"], ["a1"]):
        terms = weighted(searcher, q, variant, 1.0)
        assert kernel(index, terms, 20, None, False)[0] == oracle(index, terms, 20, None)
    kept = cache.entries()
    in_maps = sorted(
        (id(table), s, term) for (_tid, s), (table, m) in cache._maps.items() for term in m
    )
    assert sorted(key for key, _ in kept) == in_maps
    size = sum(postings_cache._ENTRY_BYTES + (e.nbytes if e is not None else 0) for _, e in kept)
    assert cache.nbytes == size
    assert any(e is not None and e.n_overflow for _, e in kept)  # "c": made by the callback


def test_threads_search_one_index_with_a_small_cache(
    make_segmented: Any, window: Callable[[int], None]
) -> None:
    rng = np.random.default_rng(17)
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(0, 20)))) for _ in range(1500)]
    index = make_segmented([texts[:900], texts[900:]], [list(range(0, 900, 11)), []])
    searcher = Searcher(index)
    variant = get_variant("bm25l", k1=1.1, b=0.6)
    qs = [list(rng.choice([*WORDS, "zz"], size=int(rng.integers(1, 8)))) for _ in range(120)]
    cases = []
    for i, q in enumerate(qs):
        terms = weighted(searcher, q, variant, -1.0 if i % 5 == 0 else 1.0)
        if terms:
            cases.append((terms, 1 + i % 70, i % 3 == 0))
    want = [oracle(index, t, k, None) for t, k, _r in cases]
    cache = cache_of(index)
    errors: list[BaseException] = []
    window(6)
    for max_bytes in (postings_cache.MAX_BYTES, 3000):
        cache.clear()
        cache.max_bytes = max_bytes

        def run(part: int) -> None:
            try:
                for _ in range(2):
                    for (terms, k, rows), w in list(zip(cases, want, strict=True))[part::3]:
                        assert kernel(index, terms, k, None, rows)[0] == w
            except BaseException as exc:  # reported below, in the main thread
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert cache.nbytes <= cache.max_bytes
    cache.max_bytes = postings_cache.MAX_BYTES
