"""The windowed exhaustive path split across threads (``_topk.exhaustive_threads``).

A large windowed search without rows (one query, or an evaluation run's batch on one thread) may
split its windows into slices, each on a thread of its
own with its own cursors, sums and top k, merged exactly. These tests shrink the window and the
postings a slice needs so that small corpora split, and check every ranking against the dense
numpy float64 ranking (score descending, docno ascending, scores bit for bit, match counts) with
1, 2 and 3 threads: several segments, deletions, masks, every variant, k from 1 to beyond the
collection, parts cold (filled by the slices together), warm and evicted, searches running at
once. Damaged blocks met by any slice give an error (or a result) and leave no parts half filled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from exhaustive_helpers import cache_of, damaged, draw_mask, reference, specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine import get_variant
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import postings_cache, topk
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import Variant, variant_classes

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")

KERNEL_KEYS = [c.key for c in variant_classes() if c.key != "bm25f"]
WORDS = [f"w{i}" for i in range(40)]
word = st.integers(0, 39).map(lambda i: WORDS[min(i, (i * i) // 40)])
corpora = st.lists(st.lists(word, min_size=0, max_size=14).map(" ".join), min_size=1, max_size=150)
queries = st.lists(st.sampled_from([*WORDS, "zz"]), min_size=0, max_size=8).map(
    lambda q: ["w0", *q]
)
SWEEP = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
VariantsOf = Callable[[str], st.SearchStrategy[Variant]]
Split = Callable[[int, int], None]


@pytest.fixture
def split() -> Iterator[Split]:
    """Return ``set(threads, shift)``: threads, any postings, a 2**shift window (restored)."""
    threads = topk._topk.exhaustive_threads()
    shift = topk._topk.window_shift()

    def set_(n: int, window: int) -> None:
        topk._topk.exhaustive_threads(n, 1)
        topk._topk.window_shift(window)

    yield set_
    topk._topk.exhaustive_threads(*threads)
    topk._topk.window_shift(shift)


def ranking(index: Index, terms: list[topk.TermSpec], k: int, allowed: Any) -> Any:
    """Return the exhaustive kernel's ranking without rows: docnos, score bits, count."""
    got = topk.exhaustive_top_k(index, terms, k, allowed, rows=False)
    assert got is not None
    top, n = got
    return top.docnos.tolist(), top.scores.view(np.int64).tolist(), n


@pytest.mark.slow
@given(groups=st.lists(corpora, min_size=1, max_size=3), data=st.data())
@SWEEP
def test_split_windows_agree_with_the_dense_ranking(
    groups: list[list[str]],
    data: st.DataObject,
    make_segmented: Any,
    variants: VariantsOf,
    split: Split,
) -> None:
    deleted = [
        data.draw(st.lists(st.integers(0, len(g) - 1), max_size=len(g) // 2, unique=True))
        for g in groups
    ]
    index = make_segmented(groups, deleted)
    searcher = Searcher(index)
    cache = cache_of(index)
    for _ in range(3):
        variant = data.draw(variants(data.draw(st.sampled_from(KERNEL_KEYS))))
        query = data.draw(queries)
        k = data.draw(st.integers(1, 12) | st.sampled_from([65, 1000]))
        allowed = draw_mask(data, index.n_slots)
        ref = reference(searcher, query, variant, k, allowed)
        terms = specs(searcher, query, variant)
        if not terms or topk._top_k_kernel(index, terms, 1, None) is None:
            continue  # weights the kernel declines (the numpy path ranks them)
        split(data.draw(st.sampled_from([1, 2, 3])), data.draw(st.integers(4, 6)))
        cache.clear()
        cold = ranking(index, terms, k, allowed)  # the slices fill the parts together
        warm = ranking(index, terms, k, allowed)  # and read them
        assert cold == warm == ref, (variant, query, k)
        cache.clear()
        cache.max_bytes = data.draw(st.sampled_from([1, 64, 600]))
        try:
            assert ranking(index, terms, k, allowed) == ref
        finally:
            cache.max_bytes = postings_cache.MAX_BYTES


def _texts(seed: int, n: int, vocab: int, length: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = np.array([f"t{i}" for i in range(vocab)])
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    return [" ".join(rng.choice(words, size=int(rng.integers(0, length)), p=p)) for _ in range(n)]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_many_slices_deep_k_masks_and_deletions(
    make_segmented: Any, split: Split, threads: int
) -> None:
    texts = _texts(11, 3000, 60, 25)
    groups = [texts[:1700], texts[1700:1750], texts[1750:]]  # the middle one: under a window
    index = make_segmented(groups, [list(range(0, 1700, 7)), [], list(range(3, 1250, 5))])
    searcher = Searcher(index)
    rng = np.random.default_rng(3)
    qs = [[f"t{i}" for i in rng.integers(0, 60, size=int(rng.integers(1, 30)))] for _ in range(25)]
    mask = rng.random(index.n_slots) < 0.7
    for key in ("lucene", "bm25l", "atire", "bm25plus", "tfldp"):
        variant = get_variant(key)
        for shift in (4, 7, 9):
            split(threads, shift)
            cache_of(index).clear()
            for k in (1, 10, 65, 1000, 5000):  # 65: the candidates' array, merged by selection
                for q in qs:
                    terms = specs(searcher, q, variant)
                    for allowed in (None, mask):
                        want = reference(searcher, q, variant, k, allowed)
                        assert ranking(index, terms, k, allowed) == want, (key, shift, k, q)
                # An evaluation run on one thread: the batch kernel splits its large queries.
                got = searcher.search_many(qs, variant, k, count=True, threads=1)
                for q, g in zip(qs, got, strict=True):
                    assert not isinstance(g, Exception)
                    d, s, n = reference(searcher, q, variant, k)
                    assert (g.hits.docnos.tolist(), g.hits.scores.view(np.int64).tolist()) == (d, s)
                    assert g.n_matches == n


def test_searches_at_once_share_the_parts_they_fill(make_index: Any, split: Split) -> None:
    index = make_index(_texts(7, 4000, 30, 20))
    searcher = Searcher(index)
    variant = get_variant("lucene")
    rng = np.random.default_rng(9)
    qs = [[f"t{i}" for i in rng.integers(0, 30, size=int(rng.integers(2, 20)))] for _ in range(60)]
    want = [reference(searcher, q, variant, 100) for q in qs]
    split(2, 6)
    for _ in range(3):
        cache_of(index).clear()
        with ThreadPoolExecutor(4) as pool:
            got = list(
                pool.map(lambda q: ranking(index, specs(searcher, q, variant), 100, None), qs)
            )
        assert got == want


def test_damaged_blocks_in_a_slice_raise_and_fill_nothing(make_index: Any, split: Split) -> None:
    rng = np.random.default_rng(5)
    texts = [
        " ".join(rng.choice(["a", "b", "c", "d"], size=int(rng.integers(1, 9)))) for _ in range(900)
    ]
    index = make_index(texts)
    searcher = Searcher(index)
    query = ["a", "b", "c", "d"]
    st_ = topk._state(index)
    sg = st_.segments[0]
    terms = specs(searcher, query, get_variant("lucene"))
    tables = [st_.table(w, sg.cap).kernel for _t, _q, w in terms]
    want = reference(searcher, query, get_variant("lucene"), 50)
    split(3, 4)
    outcomes = set()
    for _trial in range(300):
        arrays = damaged(sg.seg.kernel_arrays, rng)
        lists = [
            topk._topk.stored(arrays, sg.seg.lexicon.find(t), sg.dli, sg.cap, sg.shift)
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
            got = topk._topk.search(args, sg.dli, 50, len(args), exhaustive=True, rows=False)
        except ValueError as exc:
            error = str(exc)
        if error:
            assert "changed" in error or "damaged" in error
            outcomes.add("error")
            assert not any(p.filled for p in parts)  # a fill that met damage is dropped
            continue
        outcomes.add("result")
        if np.frombuffer(got[0], np.int64).tolist() == want[0]:
            assert all(p.filled for p in parts)
            again = topk._topk.search(args, sg.dli, 50, len(args), exhaustive=True, rows=False)
            assert again[:2] == got[:2]
    assert outcomes == {"error", "result"}


def test_exhaustive_threads_is_checked() -> None:
    before = topk._topk.exhaustive_threads()
    for bad in ((-2,), (65,), (1, -5)):
        with pytest.raises(ValueError, match="exhaustive_threads takes"):
            topk._topk.exhaustive_threads(*bad)
    assert topk._topk.exhaustive_threads() == before
