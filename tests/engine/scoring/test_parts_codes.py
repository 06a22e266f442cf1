"""Parts keep a tf part as its place in the table (parts.c): the same sums, bit for bit.

A filled Parts holds, per posting, an int32 docno and a 16-bit code (32-bit for a table of
64 K places or more), the place of ``T[dl_index[d], tf]`` in the table by column; a posting with
a tf above the cap carries an escape code and its overflow value is added by position after the
loop. These tests rank lists with overflow postings (tf well above the cap), in windows and
whole, cold (the fill) and warm (read from the codes), with 16-bit and forced 32-bit codes,
against the dense float64 ranking: docnos, score bits and match counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from exhaustive_helpers import cache_of, reference, specs

from bm25desk.engine import get_variant
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.search import Searcher

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")


@pytest.fixture
def window() -> Iterator[Callable[[int], None]]:
    """Return ``set(shift)``: the kernel's window for this test (restored afterwards)."""
    before = topk._topk.window_shift()
    yield lambda shift: topk._topk.window_shift(shift)
    topk._topk.window_shift(before)


@pytest.fixture(params=[False, True], ids=["codes16", "codes32"])
def wide(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Parts made with 16-bit codes (the table is small), then forced to 32-bit ones."""
    before = topk._topk.parts_wide(request.param)
    yield request.param
    topk._topk.parts_wide(before)


def _texts(seed: int, n: int) -> list[str]:
    """Documents of a small vocabulary where "x" and "y" often come 33-90 times (above the cap)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(40)])
    texts = []
    for i in range(n):
        words = list(rng.choice(vocab, size=int(rng.integers(1, 30))))
        if i % 3 == 0:
            words += ["x"] * int(rng.integers(1, 90))
        if i % 5 == 1:
            words += ["y"] * int(rng.integers(30, 70))
        rng.shuffle(words)
        texts.append(" ".join(words))
    return texts


def test_overflow_postings_read_from_codes_agree_with_the_dense_ranking(
    make_segmented: Any, window: Callable[[int], None], wide: bool
) -> None:
    texts = _texts(5, 2400)
    index = make_segmented([texts[:2000], texts[2000:]], [list(range(0, 2000, 11)), [7]])
    searcher = Searcher(index, strategy="exhaustive")
    st_ = topk._state(index)
    (p_x, _) = st_.postings("x")
    assert p_x is not None
    assert p_x.n_ovf > 50  # many postings above the cap, in many blocks
    queries = [["x"], ["w1", "x", "w3"], ["y", "x"], ["w2", "y", "w5", "x", "w7", "w9"]]
    for key in ("lucene", "bm25plus", "tfldp", "bm25l"):
        variant = get_variant(key)
        for shift in (4, 6, 30):  # many windows, a few, and the whole segment at once
            window(shift)
            cache_of(index).clear()
            for _ in range(2):  # cold: the search fills the Parts; warm: reads its codes
                for k in (1, 10, 1000):
                    for q in queries:
                        got = searcher.search(
                            " ".join(q), variant, k, syntax=False, contributions=False, count=True
                        )
                        d, s, n = reference(searcher, q, variant, k)
                        assert got.hits.docnos.tolist() == d, (key, shift, k, q)
                        assert got.hits.scores.view(np.int64).tolist() == s, (key, shift, q)
                        assert got.n_matches == n
                    many = searcher.search_many(queries, variant, k, count=True, threads=1)
                    for q, g in zip(queries, many, strict=True):
                        assert not isinstance(g, Exception)
                        d, s, n = reference(searcher, q, variant, k)
                        assert g.hits.docnos.tolist() == d, (key, shift, k, q)
                        assert g.hits.scores.view(np.int64).tolist() == s
                        assert g.n_matches == n
            entries = cache_of(index).entries()
            filled = [e for _, e in entries if e is not None and e.filled]
            assert filled  # the warm rounds read codes
            per_posting = 8 if wide else 6
            for parts in filled:
                assert parts.nbytes % 2 == 0
                assert parts.nbytes >= per_posting  # docno and code, and the overflow values


def test_parts_bytes_follow_the_code_width(make_index: Any) -> None:
    index = make_index(["a b", "b c", "c a a " + "a " * 40])
    searcher = Searcher(index)
    st_ = topk._state(index)
    (p_a,) = st_.postings("a")
    assert p_a is not None
    assert p_a.n_ovf == 1
    (_, _, w), _ = specs(searcher, ["a", "b"], get_variant("lucene"))
    table = st_.table(w, st_.segments[0].cap).kernel
    before = topk._topk.parts_wide()
    try:
        topk._topk.parts_wide(False)
        assert topk._topk.Parts(p_a.pl, table).nbytes == 6 * p_a.n + 8
        topk._topk.parts_wide(True)
        assert topk._topk.Parts(p_a.pl, table).nbytes == 8 * p_a.n + 8
    finally:
        topk._topk.parts_wide(before)
