"""Required lists: the pruning kernel's conjunction pass (``_topk_src/quick.c``).

With the top k full and one essential list left, a non-essential list whose absence alone keeps
a document out of the top k (the other lists' bounds fall short of the threshold) is
"required": a query of stopwords whose lists cover most documents with close bounds. The kernel
then takes the essential list a block at a time, filters its postings through a probe of each
required list and keeps the survivors for later calls. The top k must stay the oracle's bit for
bit (many equal scores, overflow postings, a negative weight, allow and deny masks, a previous
segment's top k, every block size), the conjunction must actually cut the candidates, and a
damaged block met by a probe must raise, not crash.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_topk_blocks import dense_layout, oracle

from bm25desk.engine.index import blocks
from bm25desk.engine.scoring import topk

needs_kernel = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")


def encode_lists(q: dict[str, Any]) -> None:
    """Encode q's (changed) lists again into its kernel arrays."""
    n = len(q["lists"])
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([d.size for d, _ in q["lists"]], out=ptr[1:])
    enc = blocks.encode(ptr, np.concatenate([d for d, _ in q["lists"]]),
                        np.concatenate([t for _, t in q["lists"]]), q["dli"], q["cap"],
                        q["shift"])  # fmt: skip
    front = blocks.term_frontiers(enc, q["dli"], q["cap"])
    q["arrays"] = [np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)], enc.blk_off, enc.blk_last,
                   ptr, enc.bptr, enc.ovf, front.terms, front.off, front.data]  # fmt: skip


def dense_query(seed: int, n_terms: int, cover: tuple[float, float] = (0.4, 0.9)) -> dict[str, Any]:
    """Lists covering most of the documents, tfs mostly small, bounds close to each other."""
    rng = np.random.default_rng(700 + seed)
    n_docs = 8000
    shift, cap, dli, T = dense_layout(rng, n_docs, [3, 8, 60])
    lists = []
    for _ in range(n_terms):
        docs = np.flatnonzero(rng.random(n_docs) < rng.uniform(*cover)).astype(np.int32)
        tfs = np.where(rng.random(docs.size) < 0.85, 1, rng.integers(1, 2 * cap + 2, docs.size))
        lists.append((docs, tfs.astype(np.int32)))
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum([d.size for d, _ in lists], out=ptr[1:])
    enc = blocks.encode(ptr, np.concatenate([d for d, _ in lists]),
                        np.concatenate([t for _, t in lists]), dli, cap, shift)  # fmt: skip
    front = blocks.term_frontiers(enc, dli, cap)
    stream = np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)]
    arrays = [stream, enc.blk_off, enc.blk_last, ptr, enc.bptr, enc.ovf, front.terms,
              front.off, front.data]  # fmt: skip
    qws = [float(rng.uniform(0.9, 1.1)) for _ in lists]
    ovf_vals = [rng.uniform(0.0, 3.0, int((t > cap).sum())) for _, t in lists]
    return {"rng": rng, "shift": shift, "cap": cap, "n_docs": n_docs, "dli": dli, "T": T,
            "lists": lists, "arrays": arrays, "qws": qws, "ovf": ovf_vals}  # fmt: skip


def run_search(q: dict[str, Any], k: int, allow=None, deny=None, prev=None, seed_ratio=4.0):
    from bm25desk.engine.scoring import _topk

    table = _topk.Table(q["T"], None, q["cap"])
    n = len(q["lists"])
    terms = [
        (_topk.stored(tuple(q["arrays"]), i, q["dli"], q["cap"], q["shift"]), q["qws"][i], table,
         None, q["ovf"][i] if q["ovf"][i].size else None, i)
        for i in range(n)
    ]  # fmt: skip
    return _topk.search(terms, q["dli"], k, n, allow, deny, 0, prev, True, seed_ratio)


def want(q: dict[str, Any], k: int, keep: np.ndarray) -> tuple[list[int], list[float]]:
    cap = q["cap"]
    kept = [(dd[keep[dd]], tt[keep[dd]]) for dd, tt in q["lists"]]
    kept_ovf = [ov[keep[dd[tt > cap]]] for (dd, tt), ov in zip(q["lists"], q["ovf"], strict=True)]
    return oracle(kept, q["qws"], q["T"], kept_ovf, q["dli"], k, cap)


@needs_kernel
@pytest.mark.parametrize("seed", range(16))
def test_required_lists_rank_like_the_oracle(seed: int) -> None:
    q = dense_query(seed, n_terms=2 + seed % 3)
    rng = q["rng"]
    n_docs = q["n_docs"]
    if seed % 5 == 4:
        q["qws"][0] = -q["qws"][0]  # bounded by 0: required only when the others fall short
    allow = rng.random(n_docs) < 0.9 if seed % 2 else None
    deny = rng.random(n_docs) < 0.05 if seed % 4 < 2 else None
    keep = np.ones(n_docs, bool)
    if allow is not None:
        keep &= allow
    if deny is not None:
        keep &= ~deny
    for k in (1, 3, 10, 40):
        for seed_ratio in (0.0, 4.0):  # without seeding, then as search() does by default
            d, s, _tf, _part, _st = run_search(q, k, allow, deny, seed_ratio=seed_ratio)
            want_d, want_s = want(q, k, keep)
            assert np.frombuffer(d, np.int64).tolist() == want_d
            assert np.frombuffer(s, np.float64).tolist() == want_s


@needs_kernel
@pytest.mark.parametrize("seed", range(6))
def test_ties_at_the_threshold_keep_the_lower_docnos(seed: int) -> None:
    """One length row and tf 1 everywhere: every document of the intersection scores the same,
    so the k lowest docnos of it must come back (a candidate at the threshold is never dropped)."""
    q = dense_query(seed, n_terms=2 + seed % 2, cover=(0.6, 0.9))
    q["dli"] = np.zeros(q["n_docs"], np.int32)
    q["T"] = q["T"][:1].copy()
    q["T"].flags.writeable = False
    q["lists"] = [(docs, np.ones(docs.size, np.int32)) for docs, _ in q["lists"]]
    q["ovf"] = [np.zeros(0) for _ in q["lists"]]
    encode_lists(q)
    for k in (1, 10, 100):
        d, s, tf, part, _st = run_search(q, k, seed_ratio=0.0)
        want_d, want_s = want(q, k, np.ones(q["n_docs"], bool))
        assert np.frombuffer(d, np.int64).tolist() == want_d
        assert np.frombuffer(s, np.float64).tolist() == want_s
        # The same top k as a previous segment's (later docnos): the heap is full at the common
        # score from the start, and every document of the intersection (all at that score,
        # lower docnos) still enters it, each scored in full.
        prev = (
            np.frombuffer(d, np.int64) + q["n_docs"],
            np.frombuffer(s, np.float64).copy(),
            np.frombuffer(tf, np.int32).copy(),
            np.frombuffer(part, np.float64).copy(),
        )
        d2, s2, _tf, _part, _st = run_search(q, k, prev=prev, seed_ratio=0.0)
        assert np.frombuffer(d2, np.int64).tolist() == want_d
        assert np.frombuffer(s2, np.float64).tolist() == want_s


@needs_kernel
@pytest.mark.parametrize("seed", range(4))
def test_a_previous_segments_top_k_sets_the_threshold(seed: int) -> None:
    """A previous segment's top k fills the heap before the first posting: the lists are
    required from the start, and the result merges both segments' hits exactly."""
    q = dense_query(seed, n_terms=3)
    k = 10
    first = run_search(q, k, seed_ratio=0.0)
    ncols = len(q["lists"])
    base_d = np.frombuffer(first[0], np.int64) + q["n_docs"]  # as if this segment came later
    prev = (
        base_d.copy(),
        np.frombuffer(first[1], np.float64).copy(),
        np.frombuffer(first[2], np.int32).copy(),
        np.frombuffer(first[3], np.float64).copy(),
    )
    d, s, _tf, _part, st = run_search(q, k, prev=prev, seed_ratio=0.0)
    here_d, here_s = want(q, k, np.ones(q["n_docs"], bool))
    both = sorted(zip(here_s + prev[1].tolist(), here_d + prev[0].tolist(), strict=True),
                  key=lambda x: (-x[0], x[1]))[:k]  # fmt: skip
    assert np.frombuffer(d, np.int64).tolist() == [x[1] for x in both]  # ties: lower docno
    assert np.frombuffer(s, np.float64).tolist() == [x[0] for x in both]
    smallest = min(dd.size for dd, _ in q["lists"])
    assert ncols == 3
    assert st["candidates"] < smallest // 5


@needs_kernel
def test_the_conjunction_cuts_the_candidates() -> None:
    """Stopword-like lists: the full MaxScore step sees few more documents than it scores."""
    q = dense_query(3, n_terms=3, cover=(0.5, 0.7))
    _d, _s, _tf, _part, st = run_search(q, 10, seed_ratio=0.0)
    smallest = min(d.size for d, _ in q["lists"])
    assert st["candidates"] < smallest // 20, (st, smallest)


@needs_kernel
def test_a_damaged_block_met_by_a_probe_raises() -> None:
    """A required list's block whose stored last docno no longer matches its contents: the probe
    that decodes it stops the search with the kernel's ValueError."""
    q = dense_query(5, n_terms=2, cover=(0.7, 0.9))
    k = 10
    run_search(q, k, seed_ratio=0.0)  # intact: fine
    blk_last = q["arrays"][2].copy()
    bptr = q["arrays"][4]
    for t in range(len(q["lists"])):  # every block but each list's first and last
        lo, hi = int(bptr[t]), int(bptr[t + 1])
        blk_last[lo + 1 : hi - 1] += 1
    q["arrays"][2] = blk_last
    with pytest.raises(ValueError, match=r"postings changed|damaged|block"):
        run_search(q, k, seed_ratio=0.0)


@needs_kernel
@pytest.mark.parametrize("seed", range(8))
def test_a_seeded_list_with_required_lists_ranks_like_the_oracle(seed: int) -> None:
    """A short list of a large weight is scored first ("seeding"), probing two dense lists: once
    the top k is full, its documents go through the same conjunction (they are never seen
    again by the main pass), and most of them are never scored in full."""
    q = dense_query(40 + seed, n_terms=3, cover=(0.6, 0.9))
    rng = q["rng"]
    docs, _ = q["lists"][0]
    short = np.sort(rng.choice(docs, docs.size // 8, replace=False)).astype(np.int32)
    q["lists"][0] = (short, np.full(short.size, q["cap"], np.int32))
    q["qws"][0] = 4.0
    encode_lists(q)
    q["ovf"] = [rng.uniform(0.0, 3.0, int((t > q["cap"]).sum())) for _, t in q["lists"]]
    deny = rng.random(q["n_docs"]) < 0.05 if seed % 2 else None
    keep = np.ones(q["n_docs"], bool) if deny is None else ~deny
    for k in (1, 10, 30):
        d, s, _tf, _part, st = run_search(q, k, deny=deny, seed_ratio=4.0)
        want_d, want_s = want(q, k, keep)
        assert np.frombuffer(d, np.int64).tolist() == want_d
        assert np.frombuffer(s, np.float64).tolist() == want_s
        if k == 10:
            assert 0 < st["seeded"] < short.size * 3 // 4, (st, short.size)
