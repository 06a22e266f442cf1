"""The single query's new terms: what a term's first use costs is cut without changing a result.

A term's blocks are asked for (``MADV_WILLNEED``) in one compiled call at its first look-up:
these tests compare the range it asks for with the Python computation it replaces, for every term
of an index and for ids and offsets out of range (a hint never reads past the map).
"""

from __future__ import annotations

import contextlib
import mmap
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from bm25desk.engine import IndexStore, build_index
from bm25desk.engine.index import blocks
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import get_variant, variant_classes

_needs_codec = pytest.mark.skipif(blocks._blocks is None, reason="the C kernel is not loaded")


def _python_range(data: mmap.mmap, blk_off, bptr, first: int, end: int) -> int:
    """The bytes the Python prefetch asks for (its checks, in the same order)."""
    if not 0 <= first < end < len(bptr):
        return 0
    b0, b1 = int(bptr[first]), int(bptr[end])
    if not 0 <= b0 < b1 < len(blk_off):
        return 0
    a, z = int(blk_off[b0]), int(blk_off[b1])
    if not 0 <= a < z <= len(data):
        return 0
    return z - (a - a % mmap.PAGESIZE)


def _mapped_segment(index):
    """Return the index's segment and its mapped blocks.bin (the test's index maps it)."""
    seg = index.segments[0]
    assert isinstance(seg.blocks, mmap.mmap), "blocks.bin was read, not mapped: a larger index"
    return seg, seg.blocks


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    """An index of 300 small documents (every term with a few blocks or one)."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(400)]
    lines = []
    for d in range(300):
        n = int(rng.integers(3, 40))
        text = " ".join(words[int(i)] for i in rng.zipf(1.3, size=n) % len(words))
        lines.append(f"d{d}\t{text}")
    src = tmp_path / "docs.tsv"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = IndexStore(tmp_path / "store")
    build_index(src, name="s", fmt="msmarco-passages", store=store)
    return tmp_path / "store"


@_needs_codec
def test_compiled_prefetch_asks_for_what_python_did(index_dir: Path) -> None:
    with IndexStore(index_dir).open("s") as index:
        seg, data = _mapped_segment(index)
        n = len(seg.bptr) - 1
        cases = [(t, t + 1) for t in range(n)] + [(0, n), (3, 9), (n - 1, n)]
        cases += [(-1, 0), (n, n + 1), (5, 5), (7, 3), (0, n + 1), (10**9, 10**9 + 1)]
        for first, end in cases:
            want = _python_range(data, seg.blk_off, seg.bptr, first, end)
            got = blocks._blocks.prefetch(data, seg.blk_off, seg.bptr, first, end)
            assert got == want, (first, end)


@_needs_codec
def test_compiled_prefetch_of_damaged_offsets_asks_for_nothing_outside(index_dir: Path) -> None:
    """Offsets past the map or out of order ask for nothing (decoding reports the damage)."""
    with IndexStore(index_dir).open("s") as index:
        seg, data = _mapped_segment(index)
        rng = np.random.default_rng(3)
        n = len(seg.bptr) - 1
        for _ in range(50):
            off = np.array(seg.blk_off, dtype=np.int64)
            bptr = np.array(seg.bptr, dtype=np.int64)
            i = int(rng.integers(0, off.size))
            off[i] = int(rng.choice([-5, len(data) + 1, 2**40, int(off[i]) // 2]))
            j = int(rng.integers(0, bptr.size))
            bptr[j] = int(rng.choice([-1, off.size, 2**33, int(bptr[j]) + 1]))
            for t in range(n):
                want = _python_range(data, off, bptr, t, t + 1)
                got = blocks._blocks.prefetch(data, off, bptr, t, t + 1)
                assert got == want <= len(data)
        with pytest.raises(TypeError):
            blocks._blocks.prefetch(data, np.zeros(3, np.int16), seg.bptr, 0, 1)


def test_prefetch_then_search_is_unchanged(index_dir: Path) -> None:
    """The hint (compiled or not) changes no ranking."""
    from bm25desk.engine import Searcher

    with IndexStore(index_dir).open("s") as index:
        searcher = Searcher(index)
        first = [(h.docid, h.score) for h in searcher.search("w1 w5 w77", k=20).hits]
        for t in range(len(index.segments[0].bptr) - 1):
            index.segments[0].prefetch(t)
        again = [(h.docid, h.score) for h in Searcher(index).search("w1 w5 w77", k=20).hits]
        assert first == again


# -- the one-call ranking through the searcher ---------------------------------------------------


def _dense_top(searcher, query: str, variant, k: int) -> tuple[list[int], list[int]]:
    """The dense float64 ranking (score descending, docno ascending): docnos and score bits."""
    parsed = searcher.parse(query, syntax=True)
    scores, ok = searcher.scores(parsed, variant)
    cand = np.flatnonzero(ok)
    order = np.lexsort((cand, -scores[cand]))[:k]
    return cand[order].tolist(), scores[cand][order].view(np.int64).tolist()


needs_kernel = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")


@needs_kernel
@pytest.mark.parametrize("key", [c.key for c in variant_classes() if c.key != "bm25f"])
def test_search_without_contributions_ranks_in_one_call(
    key: str, make_segmented, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids and scores come from one compiled call, equal to the dense ranking bit for bit:
    with deleted documents and constraints (allowed masks), at any k."""
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(60)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(700)]
    texts += ["w1 w1 w1 w2"] * 40  # ties
    deleted = sorted(rng.choice(len(texts), size=90, replace=False).tolist())
    with layout_small():
        index = make_segmented([texts], [deleted])
    calls = {"ranked": 0}
    real = topk.ranked

    def counted(*args, **kwargs):
        got = real(*args, **kwargs)
        calls["ranked"] += got is not None
        return got

    monkeypatch.setattr(topk, "ranked", counted)
    searcher = Searcher(index, strategy="kernel")
    variant = get_variant(key)
    queries = [
        "w1 w2",
        "w3 w3 w7 w50",
        "w1",
        "w59 w0 w13 w1 w2 w3",
        "w2 +w5",
        "w4 -w6",
        "nosuch w8",
    ]
    for query in queries:
        for k in (1, 5, 10, 37, 2000):
            want = _dense_top(searcher, query, variant, k)
            fast = searcher.search(query, variant, k, contributions=False, count=False)
            full = searcher.search(query, variant, k)
            got = (fast.hits.docnos.tolist(), fast.hits.scores.view(np.int64).tolist())
            assert got == want, (query, k)
            assert got == (full.hits.docnos.tolist(), full.hits.scores.view(np.int64).tolist())
    if key != "bm25adpt":  # its per-term k1* tables are search()'s (one query term: one call)
        assert calls["ranked"] >= len(queries) * 5 - 5


def layout_small() -> contextlib.ExitStack:
    """Blocks of 4 postings: short lists of many blocks (skips, block bounds, frontiers)."""
    stack = contextlib.ExitStack()
    for mod in (topk, blocks):
        stack.enter_context(mock.patch.object(mod, "SHIFT", 2))
    return stack
