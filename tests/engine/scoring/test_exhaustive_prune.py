"""Windows that skip their low-bound lists (``_topk_src/winprune.c``).

A search that wants no match count (``exhaustive_top_k(count=False)``: an evaluation run, the
benchmark's ids and scores) may let a large segment's windows skip the terms whose upper bounds
sum to at most a share of the k-th best score, look them up only for the documents that may
still enter, and score those again in query order. These tests shrink the window and raise the
share (``_topk.window_prune``) so that small corpora skip in most windows, and check every
ranking against the dense numpy float64 ranking (docnos, scores bit for bit) and against the same
search with the count: one slice and several, several segments, deletions, masks, every variant,
tf above the cap, parts cold, warm and evicted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np
import pytest
from exhaustive_helpers import (
    SWEEP,
    VariantsOf,
    cache_of,
    cold_warm_evicted,
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
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.search import Searcher

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")

Setup = Callable[[int, int, float], None]


@pytest.fixture
def setup() -> Iterator[Setup]:
    """Return ``set(threads, shift, share)`` for this test (restored afterwards)."""
    threads = topk._topk.exhaustive_threads()
    shift = topk._topk.window_shift()
    share = topk._topk.window_prune()

    def set_(n: int, window: int, prune: float) -> None:
        topk._topk.exhaustive_threads(n, 1)
        topk._topk.window_shift(window)
        topk._topk.window_prune(prune)

    yield set_
    topk._topk.exhaustive_threads(*threads)
    topk._topk.window_shift(shift)
    topk._topk.window_prune(share)


def ranking(index: Index, terms: list[topk.TermSpec], k: int, allowed: Any) -> Any:
    """Return the uncounted exhaustive ranking: docnos and score bits (its count is -1)."""
    got = topk.exhaustive_top_k(index, terms, k, allowed, rows=False, count=False)
    assert got is not None
    top, n = got
    assert n == -1
    return top.docnos.tolist(), top.scores.view(np.int64).tolist()  # (a tuple, as ref[:2])


def skipped() -> int:
    """Return how many windows have skipped lists since the module loaded."""
    return int(topk._topk.window_prune_counts()[0])


@pytest.mark.slow
@given(groups=st.lists(corpora, min_size=1, max_size=3), data=st.data())
@SWEEP
def test_skipping_windows_agree_with_the_dense_ranking(
    groups: list[list[str]],
    data: st.DataObject,
    make_segmented: Any,
    variants: VariantsOf,
    setup: Setup,
) -> None:
    index = draw_segmented(data, groups, make_segmented)
    searcher = Searcher(index)
    cache = cache_of(index)
    for _ in range(3):
        case = draw_case(data, searcher, variants)
        if case is None:
            continue
        variant, query, k, allowed, terms, ref = case
        threads = data.draw(st.sampled_from([1, 2, 3]))
        setup(threads, data.draw(st.integers(4, 6)), data.draw(st.sampled_from([0.2, 0.6, 0.95])))
        # (cold: skipped lists still fill their parts; warm: they are looked up there)
        rank = partial(ranking, index, terms, k, allowed)
        cold_warm_evicted(data, cache, rank, ref[:2], (variant, query, k))


def _zipf_texts(seed: int, n: int, vocab: int, length: int, heavy: bool = False) -> list[str]:
    """Documents over a Zipf vocabulary (with heavy: a few repeating t0 beyond the tf cap)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"t{i}" for i in range(vocab)])
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    out = []
    for i in range(n):
        doc = list(rng.choice(words, size=int(rng.integers(0, length)), p=p))
        if heavy and i % 97 == 0:
            doc += ["t0"] * int(rng.integers(40, 300))  # tf above the cap: overflow values
        out.append(" ".join(doc))
    return out


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_long_queries_skip_and_rank_exactly(
    make_segmented: Any, setup: Setup, threads: int
) -> None:
    texts = _zipf_texts(5, 4000, 120, 40, heavy=True)
    groups = [texts[:2600], texts[2600:2650], texts[2650:]]  # the middle one: under a window
    index = make_segmented(groups, [list(range(0, 2600, 9)), [], list(range(5, 1350, 4))])
    searcher = Searcher(index)
    rng = np.random.default_rng(8)
    sizes = rng.integers(20, 80, size=12)
    qs = [[f"t{i}" for i in rng.integers(0, 120, size=int(n))] for n in sizes]
    qs += [["t0", "t1", "t2", *q[:10]] for q in qs[:4]]  # the heavy term (overflow) skipped
    mask = rng.random(index.n_slots) < 0.6
    before = skipped()
    for key in ("lucene", "bm25l", "bm25plus", "atire", "tfldp"):
        variant = get_variant(key)
        for share in (0.2, 0.9):
            setup(threads, 6, share)
            cache_of(index).clear()
            for k in (1, 10, 11, 40):
                for q in qs:
                    terms = specs(searcher, q, variant)
                    for allowed in (None, mask):
                        ref = reference(searcher, q, variant, k, allowed)
                        assert ranking(index, terms, k, allowed) == (ref[0], ref[1]), (key, k, q)
    assert skipped() > before  # (the windows did skip: else this tested nothing new)


def test_searches_at_once_skip_and_fill_the_same_parts(make_index: Any, setup: Setup) -> None:
    index = make_index(_zipf_texts(7, 4000, 60, 30, heavy=True))
    searcher = Searcher(index)
    variant = get_variant("lucene")
    rng = np.random.default_rng(4)
    qs = [[f"t{i}" for i in rng.integers(0, 60, size=int(rng.integers(15, 50)))] for _ in range(40)]
    want = [reference(searcher, q, variant, 10)[:2] for q in qs]
    setup(2, 6, 0.5)
    before = skipped()
    for _ in range(3):
        cache_of(index).clear()  # (each round: the parts filled by searches running at once)
        with ThreadPoolExecutor(4) as pool:
            got = list(
                pool.map(lambda q: ranking(index, specs(searcher, q, variant), 10, None), qs)
            )
        assert got == want
    assert skipped() > before


def test_search_without_the_count_ranks_as_with_it(make_segmented: Any, setup: Setup) -> None:
    texts = _zipf_texts(9, 3000, 80, 30)
    index = make_segmented([texts[:2000], texts[2000:]], [list(range(0, 2000, 11)), []])
    searcher = Searcher(index, strategy="exhaustive")
    setup(2, 6, 0.5)
    rng = np.random.default_rng(2)
    variant = get_variant("lucene")
    before = skipped()
    for _ in range(10):
        q = " ".join(f"t{i}" for i in rng.integers(0, 80, size=40))
        counted = searcher.search(q, variant, k=10, syntax=False, contributions=False)
        bare = searcher.search(q, variant, k=10, syntax=False, contributions=False, count=False)
        assert bare.n_matches == -1
        assert counted.n_matches > 0
        assert bare.hits.docnos.tolist() == counted.hits.docnos.tolist()
        bits = bare.hits.scores.view(np.int64).tolist()
        assert bits == counted.hits.scores.view(np.int64).tolist()
    assert skipped() > before


def test_the_share_is_checked() -> None:
    share = topk._topk.window_prune()
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="share"):
            topk._topk.window_prune(bad)
    assert topk._topk.window_prune() == share
