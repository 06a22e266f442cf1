"""Block-compressed postings (segment format 3) at their edges, for the codec and the kernel.

The compiled codec and the numpy one write the same bytes and decode what they wrote; the
kernel ranks stored blocks exactly like the arrays they encode (against a float64 oracle): lists
shorter than a block, of exactly one block, one posting more, tfs up to 2**31 - 1 (overflow
postings), docno gaps of 2**24, every block size and cap.
"""

from __future__ import annotations

import numpy as np
import pytest

from bm25desk.engine.index import blocks
from bm25desk.engine.scoring import topk

needs_kernel = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")
EDGE_SIZES = [0, 1, 2, 127, 128, 129, 255, 256, 257, 1000]


def make_csr(rng: np.random.Generator, n_docs: int, sizes: list[int], big_tfs: bool = False):
    lists = []
    for size in sizes:
        size = min(size, n_docs)
        docs = np.sort(rng.choice(n_docs, size, replace=False)).astype(np.int32)
        choices = [1, 1, 1, 2, 3, 7, 31, 32, 33, 100]
        if big_tfs:
            choices += [2**31 - 1, 2**20, 65_535]
        lists.append((docs, rng.choice(choices, size).astype(np.int32)))
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([d.size for d, _ in lists], out=ptr[1:])
    docs = np.concatenate([d for d, _ in lists]) if lists else np.zeros(0, np.int32)
    tfs = np.concatenate([t for _, t in lists]) if lists else np.zeros(0, np.int32)
    return lists, ptr, docs, tfs


@pytest.mark.parametrize("shift", [2, 3, 7, 8])
@pytest.mark.parametrize("cap", [1, 2, 32, 255])
def test_codecs_agree_and_round_trip(shift: int, cap: int) -> None:
    rng = np.random.default_rng(shift * 1000 + cap)
    n_docs = 3000
    doclen = rng.integers(0, 400, n_docs).astype(np.int32)
    _, ptr, docs, tfs = make_csr(rng, n_docs, EDGE_SIZES, big_tfs=True)
    enc = blocks.encode(ptr, docs, tfs, doclen, cap, shift)
    ref = blocks.encode_numpy(ptr, docs, tfs, doclen, cap, shift)
    for got, want, name in zip(enc, ref, enc._fields, strict=True):
        assert np.array_equal(got, want), name
    assert enc.ovf.tolist() == np.flatnonzero(tfs > cap).tolist()
    stream = np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)]
    for decode in (blocks.decode, blocks.decode_numpy):
        d, t = decode(stream, enc.blk_off, enc.blk_last, enc.bptr, ptr, n_docs, cap, shift, doclen)
        assert d.tolist() == docs.tolist()
        assert t.tolist() == tfs.tolist()
    fronts = blocks.term_frontiers(enc, doclen, cap)
    assert fronts.terms.tolist() == np.flatnonzero(np.diff(enc.bptr) > 1).tolist()


def test_huge_gaps_and_tfs_round_trip() -> None:
    n_docs = 1 << 24
    doclen = np.zeros(n_docs, dtype=np.int32)
    docs = np.array([0, 1, (1 << 23) + 5, n_docs - 1], dtype=np.int32)
    tfs = np.array([2**31 - 1, 1, 33, 2**30], dtype=np.int32)
    ptr = np.array([0, 4], dtype=np.int64)
    enc = blocks.encode(ptr, docs, tfs, doclen)
    assert np.array_equal(enc.stream, blocks.encode_numpy(ptr, docs, tfs, doclen).stream)
    stream = np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)]
    for decode in (blocks.decode, blocks.decode_numpy):
        d, t = decode(stream, enc.blk_off, enc.blk_last, enc.bptr, ptr, n_docs)
        assert (d.tolist(), t.tolist()) == (docs.tolist(), tfs.tolist())


@pytest.mark.parametrize("decode", [blocks.decode, blocks.decode_numpy])
def test_damaged_blocks_raise_block_error(decode) -> None:
    rng = np.random.default_rng(3)
    doclen = rng.integers(1, 50, 500).astype(np.int32)
    _, ptr, docs, tfs = make_csr(rng, 500, [300, 5, 129])
    enc = blocks.encode(ptr, docs, tfs, doclen)
    stream = np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)]
    bad = stream.copy()
    bad[1] = 40  # the first block's docno width: over 32
    with pytest.raises(blocks.BlockError, match="block 0"):
        decode(bad, enc.blk_off, enc.blk_last, enc.bptr, ptr, 500)
    last = enc.blk_last.copy()
    last[1] += 1  # the second block no longer ends where it says
    with pytest.raises(blocks.BlockError, match="block 1"):
        decode(stream, enc.blk_off, last, enc.bptr, ptr, 500)
    with pytest.raises(blocks.BlockError, match="block"):
        decode(stream[: int(enc.blk_off[-1])], enc.blk_off, enc.blk_last, enc.bptr, ptr, 500)
    frontier = stream.copy()
    frontier[3] = 0  # the first block's first frontier entry: tf 0
    with pytest.raises(blocks.BlockError, match="bound metadata"):
        decode(frontier, enc.blk_off, enc.blk_last, enc.bptr, ptr, 500)


def oracle(lists, qws, T, ovf_vals, dli, k, cap):
    scores: dict[int, float] = {}
    for (docs, tfs), qw, ov in zip(lists, qws, ovf_vals, strict=True):
        over = 0
        for d, tf in zip(docs.tolist(), tfs.tolist(), strict=True):
            if tf <= cap:
                part = float(T[dli[d], tf])
            else:
                part = float(ov[over])
                over += 1
            scores[d] = scores.get(d, 0.0) + qw * part
    ranked = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]
    return [d for d, _ in ranked], [s for _, s in ranked]


@needs_kernel
@pytest.mark.parametrize("seed", range(12))
def test_stored_blocks_rank_like_the_oracle(seed: int) -> None:
    from bm25desk.engine.scoring import _topk

    rng = np.random.default_rng(seed)
    shift = int(rng.choice([2, 3, 7, 8]))
    cap = int(rng.choice([1, 3, 32]))
    n_docs = int(rng.choice([300, 5000]))
    rows = 40
    dli = rng.integers(0, rows, n_docs).astype(np.int32)
    T = np.sort(rng.uniform(0.1, 3.0, (rows, cap + 1)), axis=1)
    T = np.ascontiguousarray(np.sort(T, axis=0)[::-1])
    T[:, 0] = 0.0
    sizes = [int(rng.choice(EDGE_SIZES)) for _ in range(int(rng.integers(1, 5)))]
    lists, ptr, docs, tfs = make_csr(rng, n_docs, sizes, big_tfs=True)
    enc = blocks.encode(ptr, docs, tfs, dli, cap, shift)
    front = blocks.term_frontiers(enc, dli, cap)
    stream = np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)]
    arrays = (stream, enc.blk_off, enc.blk_last, ptr, enc.bptr, enc.ovf, front.terms,
              front.off, front.data)  # fmt: skip
    qws = [float(rng.uniform(0.2, 3.0)) for _ in lists]
    ovf_vals = [rng.uniform(0.0, 4.0, int((t > cap).sum())) for _, t in lists]
    k = int(rng.choice([1, 10, 100000]))
    T.flags.writeable = False
    table = _topk.Table(T, None, cap)  # read by column in the kernel; plain arrays by row
    for narrow, checked in ((False, False), (True, False), (False, True), (True, True)):
        idx = dli.astype(np.uint8) if narrow else dli
        terms = []
        for i in range(len(lists)):
            pl = _topk.stored(arrays, i, idx, cap, shift)
            ov = ovf_vals[i] if ovf_vals[i].size else None
            terms.append((pl, qws[i], table, None, ov, i) if checked else (pl, qws[i], T, T, ov, i))
        d, s, _tf, _part = _topk.search(terms, idx, k, len(lists))
        want_d, want_s = oracle(lists, qws, T, ovf_vals, dli, k, cap)
        assert np.frombuffer(d, np.int64).tolist() == want_d
        assert np.frombuffer(s, np.float64).tolist() == want_s
        pls = [t[0] for t in terms]
        union = {int(x) for docs_, _ in lists for x in docs_.tolist()}
        assert _topk.count(pls, n_docs) == len(union)
        for (docs_, tfs_), pl in zip(lists, pls, strict=True):
            probe = np.arange(n_docs, dtype=np.int32)
            got = np.frombuffer(pl.tfs_of(probe), np.int32)
            want = np.zeros(n_docs, np.int32)
            want[docs_] = tfs_
            assert got.tolist() == want.tolist()


def dense_layout(
    rng: np.random.Generator, n_docs: int, row_choices: list[int]
) -> tuple[int, int, np.ndarray, np.ndarray]:
    """Draw a block shift, a tf cap, each document's length row and a read-only table whose
    tf parts grow with tf and shrink with the row (so block bounds are close), 0.0 at tf 0."""
    shift = int(rng.choice([2, 3, 7]))
    cap = int(rng.choice([1, 3, 32]))
    rows = int(rng.choice(row_choices))
    dli = rng.integers(0, rows, n_docs).astype(np.int32)
    T = np.sort(rng.uniform(0.1, 3.0, (rows, cap + 1)), axis=1)
    T = np.ascontiguousarray(np.sort(T, axis=0)[::-1])
    T[:, 0] = 0.0
    T.flags.writeable = False
    return shift, cap, dli, T


@needs_kernel
@pytest.mark.parametrize("seed", range(12))
def test_dense_lists_rank_like_the_oracle(seed: int) -> None:
    """Lists that cover most documents with close bounds (a query of stopwords) at a small k.

    Pruning then passes over most documents on their block maxima or their contributions
    alone, before the full MaxScore step: with many equal scores (few lengths, tfs mostly 1),
    a negative weight, and allow and deny masks, the top k stays the oracle's bit for bit.
    """
    from bm25desk.engine.scoring import _topk

    rng = np.random.default_rng(100 + seed)
    n_docs = 6000
    shift, cap, dli, T = dense_layout(rng, n_docs, [2, 5, 40])
    n_terms = 1 + seed % 4  # one term: its contributions are the scores (no other bound)
    lists = []
    for _ in range(n_terms):
        docs = np.flatnonzero(rng.random(n_docs) < rng.uniform(0.3, 0.95)).astype(np.int32)
        tfs = np.where(rng.random(docs.size) < 0.9, 1, rng.integers(1, 2 * cap + 2, docs.size))
        lists.append((docs, tfs.astype(np.int32)))
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum([d.size for d, _ in lists], out=ptr[1:])
    enc = blocks.encode(ptr, np.concatenate([d for d, _ in lists]),
                        np.concatenate([t for _, t in lists]), dli, cap, shift)  # fmt: skip
    front = blocks.term_frontiers(enc, dli, cap)
    stream = np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)]
    arrays = (stream, enc.blk_off, enc.blk_last, ptr, enc.bptr, enc.ovf, front.terms,
              front.off, front.data)  # fmt: skip
    qws = [float(rng.uniform(0.5, 1.5)) for _ in lists]
    if seed % 3 == 2:
        qws[0] = -qws[0]
    ovf_vals = [rng.uniform(0.0, 3.0, int((t > cap).sum())) for _, t in lists]
    allow = rng.random(n_docs) < 0.9 if seed % 2 else None
    deny = rng.random(n_docs) < 0.05 if seed % 4 < 2 else None
    keep = np.ones(n_docs, bool)
    if allow is not None:
        keep &= allow
    if deny is not None:
        keep &= ~deny
    table = _topk.Table(T, None, cap)
    union = {int(x) for docs_, _ in lists for x in docs_.tolist()}
    for k in (1, 10, 50):
        terms = [
            (_topk.stored(arrays, i, dli, cap, shift), qws[i], table, None,
             ovf_vals[i] if ovf_vals[i].size else None, i)
            for i in range(n_terms)
        ]  # fmt: skip
        d, s, _tf, _part, st = _topk.search(terms, dli, k, n_terms, allow, deny, stats=True)
        kept = [(dd[keep[dd]], tt[keep[dd]]) for dd, tt in lists]
        kept_ovf = [ov[keep[dd[tt > cap]]] for (dd, tt), ov in zip(lists, ovf_vals, strict=True)]
        want_d, want_s = oracle(kept, qws, T, kept_ovf, dli, k, cap)
        assert np.frombuffer(d, np.int64).tolist() == want_d
        assert np.frombuffer(s, np.float64).tolist() == want_s
        assert st["candidates"] < len(union)  # most documents never reached the full step
