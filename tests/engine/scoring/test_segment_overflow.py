"""A segment's overflow tf parts in one numpy call, each term reading its range (topk._State).

A posting with a tf above the cap takes its tf part from the variant's numpy code, not the table.
A term's first search made one numpy call for its own overflow postings (~8 µs whatever their
number); a stored segment's overflow postings are one ascending array, so all of their tf parts
are computed once per (segment, variant, statistics) and each term reads its range. These tests
check the range against the term's own call for every variant, bit for bit, on segments with
deletions, and that rankings with many overflow postings equal the dense float64 ranking with
the segment-level values and without them (a segment above the limit: per term, as before).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from exhaustive_helpers import KERNEL_KEYS, reference, specs

from bm25desk.engine import get_variant
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.search import Searcher

pytestmark = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")

WORDS = ["x", "y", "w1", "w2", "w3"]


def _texts(seed: int, n: int) -> list[str]:
    """Documents where "x" and "y" often come 33-120 times (above the cap of 32)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        words = list(rng.choice(WORDS[2:], size=int(rng.integers(1, 25))))
        if i % 2 == 0:
            words += ["x"] * int(rng.integers(1, 120))
        if i % 3 == 1:
            words += ["y"] * int(rng.integers(20, 80))
        rng.shuffle(words)
        out.append(" ".join(words))
    return out


@pytest.fixture(scope="module")
def index(make_segmented: Any) -> Any:
    texts = _texts(11, 900)
    return make_segmented([texts[:500], texts[500:]], [list(range(0, 500, 7)), [3, 4]])


@pytest.mark.parametrize("key", KERNEL_KEYS)
def test_a_terms_range_equals_its_own_call(index: Any, key: str) -> None:
    variant = get_variant(key)
    searcher = Searcher(index)
    st_ = topk._state(index)
    seen = 0
    for term, _qtf, w in specs(searcher, ["x", "y", "w1"], variant):
        for s, p in enumerate(st_.postings(term)):
            if p is None or not p.n_ovf:
                continue
            base = st_.segments[s].base
            own = topk._tf_parts_of(w, p.ovf[2], p.ovf[1], base, index.doclen)
            got = st_.overflow_values(term, s, p, w, index.doclen)
            assert got.view(np.int64).tolist() == own.view(np.int64).tolist(), (key, term, s)
            seen += 1
            if w.k1 is None:  # the segment's values were used: a range of one array
                whole = st_._segment_overflow(s, w, index.doclen)
                assert whole is not None
                assert np.shares_memory(got, whole)
    assert seen >= 3  # x in both segments, y in at least one


@pytest.mark.parametrize("limit", [topk._SEGMENT_OVERFLOW, 0], ids=["segment", "per-term"])
@pytest.mark.parametrize("strategy", ["kernel", "exhaustive"])
def test_rankings_with_overflow_equal_the_dense_ones(
    make_segmented: Any, monkeypatch: pytest.MonkeyPatch, limit: int, strategy: str
) -> None:
    monkeypatch.setattr(topk, "_SEGMENT_OVERFLOW", limit)
    texts = _texts(12, 700)
    index = make_segmented([texts[:400], texts[400:]], [[1, 2, 40], []])
    searcher = Searcher(index, strategy=strategy)
    queries = [["x"], ["y", "x"], ["w1", "x", "w3"], ["w2", "y"]]
    for key in ("lucene", "bm25l", "tfldp", "bm25adpt", "okapi"):
        variant = get_variant(key)
        for k in (1, 10, 300):
            for q in queries:
                got = searcher.search(
                    " ".join(q), variant, k, syntax=False, contributions=False, count=True
                )
                d, s, n = reference(searcher, q, variant, k)
                assert got.hits.docnos.tolist() == d, (key, k, q)
                assert got.hits.scores.view(np.int64).tolist() == s, (key, k, q)
                assert got.n_matches == n
    kept = topk._state(index).segment_overflow
    assert bool(kept) == (limit > 0)  # the segment's values were made exactly when allowed


def test_the_segment_values_follow_the_statistics_and_parameters(index: Any) -> None:
    st_ = topk._state(index)
    searcher = Searcher(index)
    (_, _, w1), *_ = specs(searcher, ["x"], get_variant("lucene", k1=1.2, b=0.75))
    (_, _, w2), *_ = specs(searcher, ["x"], get_variant("lucene", k1=2.0, b=0.3))
    a = st_._segment_overflow(0, w1, index.doclen)
    b = st_._segment_overflow(0, w2, index.doclen)
    assert a is not None
    assert b is not None
    assert not np.array_equal(a, b)  # other parameters: other values, not the cached ones
    assert not a.flags.writeable  # shared by every search: nobody may change it
