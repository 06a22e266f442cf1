"""The exhaustive path window by window (_topk_src/exhaustive.c) and the cache's admission rule.

A segment larger than the window, with postings for a quarter of its documents or more, is
scored a window of documents at a time: every term over the first window, then over the next.
The window is 32 K documents (64 K on an L2 cache of 2 MB or more); these tests shrink it
(``_topk.window_shift``) so that small corpora cross many windows, and check every ranking
against the dense numpy float64 ranking (score descending, docno ascending, scores bit for bit,
match counts) and against the unwindowed traversal: several segments, deletions, masks, every
variant, k from 1 to beyond the collection, with and without rows, cache cold, warm and
evicted. Damaged blocks met in a window give an error (or a result), never a crash, and leave
no half-filled parts behind.
"""

from __future__ import annotations

import ctypes
import platform
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from exhaustive_helpers import (
    SWEEP,
    VariantsOf,
    cache_of,
    corpora,
    draw_case,
    draw_segmented,
    reference,
    specs,
)
from hypothesis import given
from hypothesis import strategies as st

from bm25desk.engine import get_variant
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import postings_cache, topk
from bm25desk.engine.scoring.search import Searcher

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")

Ranking = tuple[list[int], list[int], int]


@pytest.fixture
def window() -> Iterator[Callable[[int], None]]:
    """Return ``set(shift)``: the kernel's window for this test (restored afterwards)."""
    before = topk._topk.window_shift()
    yield lambda shift: topk._topk.window_shift(shift)
    topk._topk.window_shift(before)


def test_the_window_follows_the_l2_cache() -> None:
    """64 K documents where the L2 cache holds 2 MB or more, else 32 K (as the module loads)."""
    l2 = 0
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        l2 = ctypes.CDLL(None).sysconf(191)  # _SC_LEVEL2_CACHE_SIZE in glibc
    code = "from bm25desk.engine.scoring import topk; print(topk._topk.window_shift())"
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(got.stdout) == (16 if l2 >= 2 << 20 else 15)


def exhaustive(index: Index, terms: list[topk.TermSpec], k: int, allowed: Any, rows: bool) -> Any:
    """Return the exhaustive kernel's ranking (docnos, score bits, count) and its rows."""
    got = topk.exhaustive_top_k(index, terms, k, allowed, rows=rows)
    assert got is not None
    top, n = got
    ranking = (top.docnos.tolist(), top.scores.view(np.int64).tolist(), n)
    return ranking, (top.tfs.tolist(), top.parts.view(np.int64).tolist())


@pytest.mark.slow
@given(groups=st.lists(corpora, min_size=1, max_size=3), data=st.data())
@SWEEP
def test_windows_agree_with_the_dense_ranking(
    groups: list[list[str]],
    data: st.DataObject,
    make_segmented: Any,
    variants: VariantsOf,
    window: Callable[[int], None],
) -> None:
    index = draw_segmented(data, groups, make_segmented)
    searcher = Searcher(index)
    cache = cache_of(index)
    for _ in range(3):
        case = draw_case(data, searcher, variants)
        if case is None:
            continue
        variant, query, k, allowed, terms, ref = case
        rows = data.draw(st.booleans())
        window(30)  # one window: the unwindowed traversal, for the rows
        cache.clear()
        plain, plain_rows = exhaustive(index, terms, k, allowed, rows)
        window(data.draw(st.integers(4, 6)))
        cache.clear()
        cold, cold_rows = exhaustive(index, terms, k, allowed, rows)  # fills the parts
        warm, warm_rows = exhaustive(index, terms, k, allowed, rows)  # reads them
        assert plain == cold == warm == ref, (variant, query, k)
        assert cold_rows == warm_rows == plain_rows
        cache.clear()
        cache.max_bytes = data.draw(st.sampled_from([1, 64, 600]))
        try:
            assert exhaustive(index, terms, k, allowed, rows)[0] == ref
            assert exhaustive(index, terms, k, allowed, False)[0] == ref
        finally:
            cache.max_bytes = postings_cache.MAX_BYTES


def test_many_windows_deep_k_and_rows(make_segmented: Any, window: Callable[[int], None]) -> None:
    rng = np.random.default_rng(11)
    vocab = np.array([f"t{i}" for i in range(60)])
    weights = 1.0 / np.arange(1, 61)
    weights /= weights.sum()
    texts = [
        " ".join(rng.choice(vocab, size=int(rng.integers(0, 25)), p=weights)) for _ in range(3000)
    ]
    groups = [texts[:1700], texts[1700:1750], texts[1750:]]  # the middle one: under a window
    index = make_segmented(groups, [list(range(0, 1700, 7)), [], list(range(3, 1250, 5))])
    searcher = Searcher(index, strategy="exhaustive")
    qs = [list(rng.choice(vocab, size=int(rng.integers(1, 30)))) for _ in range(40)]
    for key in ("lucene", "bm25l", "atire", "bm25plus", "tfldp"):
        variant = get_variant(key)
        for shift in (4, 7, 10):
            window(shift)
            cache_of(index).clear()
            for k in (1, 10, 65, 1000, 5000):  # 65: the array of candidates poured into the heap
                got = searcher.search_many(qs, variant, k, count=True, threads=1)
                for q, g in zip(qs, got, strict=True):
                    assert not isinstance(g, Exception)
                    d, s, n = reference(searcher, q, variant, k)
                    assert g.hits.docnos.tolist() == d, (key, shift, k, q)
                    assert g.hits.scores.view(np.int64).tolist() == s
                    assert g.n_matches == n
        # Explanations (rows) from the windowed traversal equal the unwindowed one's.
        for q in qs[:8]:
            terms = specs(searcher, q, variant)
            window(5)
            a = exhaustive(index, terms, 20, None, True)
            window(30)
            assert a == exhaustive(index, terms, 20, None, True)
            assert a[0] == reference(searcher, q, variant, 20)


def test_window_shift_is_checked() -> None:
    before = topk._topk.window_shift()
    assert 4 <= before <= 30
    for bad in (3, 31, -2):
        with pytest.raises(ValueError, match=r"window_shift must be in 4\.\.30"):
            topk._topk.window_shift(bad)
    assert topk._topk.window_shift() == before


def _segment_args(index: Index, searcher: Searcher, query: list[str]) -> tuple[Any, ...]:
    st_ = topk._state(index)
    sg = st_.segments[0]
    terms = specs(searcher, query, get_variant("lucene"))
    tables = [st_.table(w, sg.cap).kernel for _t, _q, w in terms]
    return st_, sg, terms, tables


@pytest.mark.parametrize("threads", [1, 3])
def test_damaged_blocks_in_a_window_raise_and_fill_nothing(
    make_index: Any, window: Callable[[int], None], threads: int
) -> None:
    """With 3 threads, the searches without rows split into slices (exhaustive_threads)."""
    rng = np.random.default_rng(5)
    texts = [
        " ".join(rng.choice(["a", "b", "c", "d"], size=int(rng.integers(1, 9)))) for _ in range(900)
    ]
    index = make_index(texts)
    searcher = Searcher(index)
    query = ["a", "b", "c", "d"]
    _st, sg, terms, tables = _segment_args(index, searcher, query)
    want = reference(searcher, query, get_variant("lucene"), 50)
    arrays = sg.seg.kernel_arrays
    window(4)
    before = topk._topk.exhaustive_threads(threads, 1)
    try:
        outcomes = set()
        for trial in range(300):
            damaged = list(arrays)
            stream = np.array(arrays[0], copy=True)
            lo, hi = int(np.min(arrays[1])), int(np.max(arrays[1]))
            j = int(rng.integers(lo, max(lo + 1, hi)))
            stream[j] ^= np.uint8(1 << int(rng.integers(0, 8)))
            damaged[0] = stream
            lists = [
                topk._topk.stored(tuple(damaged), sg.seg.lexicon.find(t), sg.dli, sg.cap, sg.shift)
                for t, _q, _w in terms
            ]
            parts = [topk._topk.Parts(pl, tk) for pl, tk in zip(lists, tables, strict=True)]
            args = [
                (pl, qtf * w.idf, tk, None, None, col, pa)
                for col, (pl, (_t, qtf, w), tk, pa) in enumerate(
                    zip(lists, terms, tables, parts, strict=True)
                )
            ]
            error = ""
            try:
                got = topk._topk.search(
                    args, sg.dli, 50, len(args), exhaustive=True, rows=trial % 2 == 0
                )
            except ValueError as exc:
                error = str(exc)
            if error:
                assert "changed" in error or "damaged" in error
                outcomes.add("error")
                # A fill that met damage is dropped; a short list whose blocks all decoded may
                # have been filled whole before the damage was met (its Parts is sound).
                for pl, pa in zip(lists, parts, strict=True):
                    if pa.filled:
                        pl.tfs_of(np.arange(sg.n, dtype=np.int32))  # decodes: not damaged
                continue
            outcomes.add("result")
            if np.frombuffer(got[0], np.int64).tolist() == want[0]:
                assert all(p.filled for p in parts)
    finally:
        topk._topk.exhaustive_threads(*before)
    assert "error" in outcomes


def test_a_long_list_gets_its_parts_the_second_time_once_the_cache_is_full(
    make_index: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"x1 x2 x3 x4 x5 w{i % 7}" for i in range(300)]
    index = make_index(texts)
    searcher = Searcher(index)
    variant = get_variant("lucene")
    cache = cache_of(index)
    monkeypatch.setattr(postings_cache, "ADMIT_AT_ONCE", 100)  # x1..x5 long, w3 short
    monkeypatch.setattr(cache, "max_bytes", 8_500)  # four lists of 300 (2,056 bytes each)

    def run(query: list[str]) -> None:
        terms = specs(searcher, query, variant)
        assert exhaustive(index, terms, 10, None, False)[0] == reference(
            searcher, query, variant, 10
        )

    cache.clear()
    for term in ("x1", "x2", "x3", "x4"):  # room left: kept at once
        run([term])
    assert [key[2] for key, _ in cache.entries()] == ["x1", "x2", "x3", "x4"]
    run(["x5", "w3"])  # full: x5 only remembered, w3 (short) kept
    assert [key[2] for key, _ in cache.entries()] == ["x2", "x3", "x4", "w3"]
    assert len(cache._ghosts) == 1
    run(["x5"])  # met again: kept (x2, least recent, goes)
    assert [key[2] for key, _ in cache.entries()] == ["x3", "x4", "w3", "x5"]
    assert not cache._ghosts
    run(["x5"])  # and read
    assert all(e.filled for _, e in cache.entries())
    assert cache.nbytes <= cache.max_bytes
    cache.clear()
    assert len(cache) == 0


def test_the_cache_budget_follows_the_index() -> None:
    assert postings_cache.budget(0) == postings_cache.MAX_BYTES
    assert postings_cache.budget(5_000_000) == postings_cache.MAX_BYTES
    assert postings_cache.budget(50_000_000) == 200_000_000
    assert postings_cache.budget(10**9) == postings_cache.MAX_BYTES_CAP


def test_an_index_cache_is_sized_by_its_postings(make_index: Any) -> None:
    index = make_index(["a b c", "a b", "c"])
    assert cache_of(index).max_bytes == postings_cache.budget(7)


@pytest.mark.parametrize("shift", [4, 30])
@pytest.mark.parametrize("key", ["okapi", "lucene", "bim", "tfidf"])
def test_deep_k_selection_with_ties_and_negative_scores(
    key: str, shift: int, make_segmented: Any, window: Callable[[int], None]
) -> None:
    # Whole runs of identical documents (equal scores: the lowest docnos win at the k-th place),
    # a term in most documents (a negative idf under okapi: scores below zero), three segments.
    rng = np.random.default_rng(3)
    base = ["a a b", "a c", "a b c d", "a", "b d d", "a e"]
    groups = [[base[int(i)] for i in rng.integers(0, len(base), size=n)] for n in (400, 90, 700)]
    index = make_segmented(groups, [list(range(0, 400, 11)), [], list(range(5, 700, 13))])
    searcher = Searcher(index, strategy="exhaustive")
    variant = get_variant(key)
    window(shift)
    for query in (["a"], ["a", "b"], ["a", "b", "c", "d", "e"], ["d", "a"], ["e", "zz"]):
        terms = specs(searcher, query, variant)
        if not terms or topk._top_k_kernel(index, terms, 1, None) is None:
            continue
        for k in (65, 100, 333, 1000, 5000):
            allowed = rng.random(index.n_slots) < 0.8 if k == 333 else None
            want = reference(searcher, query, variant, k, allowed)
            assert exhaustive(index, terms, k, allowed, False)[0] == want, (query, k)
