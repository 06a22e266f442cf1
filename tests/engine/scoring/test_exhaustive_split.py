"""The windowed exhaustive path split across threads (``_topk.exhaustive_threads``).

A large windowed search without rows (one query, or an evaluation run's batch on one thread) may
split its windows into slices, each on a parked worker thread (``_topk_src/workers.c``) with its
own cursors, sums (a spare set: ``sums.c``) and top k, merged exactly. These tests shrink the
window and the postings a slice needs so that small corpora split, and check every ranking
against the dense numpy float64 ranking (score descending, docno ascending, scores bit for bit,
match counts) with 1, 2 and 3 threads: several segments, deletions, masks, every variant, k from
1 to beyond the collection, parts cold (filled by the slices together), warm and evicted,
searches running at once, a forked child (damaged blocks met by a slice:
test_exhaustive_windows.py).
"""

from __future__ import annotations

import os
import signal
import time
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
    index = draw_segmented(data, groups, make_segmented)
    searcher = Searcher(index)
    cache = cache_of(index)
    for _ in range(3):
        case = draw_case(data, searcher, variants)
        if case is None:
            continue
        variant, query, k, allowed, terms, ref = case
        split(data.draw(st.sampled_from([1, 2, 3])), data.draw(st.integers(4, 6)))
        # (cold: the slices fill the parts together)
        rank = partial(ranking, index, terms, k, allowed)
        cold_warm_evicted(data, cache, rank, ref, (variant, query, k))


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


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_splits_with_workers_of_its_own(make_index: Any, split: Split) -> None:
    """The parent's parked workers are not in a child: it makes its own and does not hang."""
    index = make_index(_texts(5, 3000, 30, 20))
    searcher = Searcher(index)
    variant = get_variant("lucene")
    qs = [[f"t{i}" for i in range(j, j + 12)] for j in range(10)]
    want = [reference(searcher, q, variant, 50) for q in qs]
    split(2, 6)
    assert [ranking(index, specs(searcher, q, variant), 50, None) for q in qs] == want
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only when every split ranking is right
        ok = False
        try:
            cache_of(index).clear()
            got = [ranking(index, specs(searcher, q, variant), 50, None) for q in qs]
            ok = got == want
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung in a split search")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(status) == 0
    # and the parent's workers still serve it
    assert [ranking(index, specs(searcher, q, variant), 50, None) for q in qs] == want


def test_exhaustive_threads_is_checked() -> None:
    before = topk._topk.exhaustive_threads()
    for bad in ((-2,), (65,), (1, -5)):
        with pytest.raises(ValueError, match="exhaustive_threads takes"):
            topk._topk.exhaustive_threads(*bad)
    assert topk._topk.exhaustive_threads() == before
