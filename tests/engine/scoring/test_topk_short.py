"""The kernel's short path (``_topk_src/short.c``): queries whose lists hold few postings.

search() and ranked() score every document of such a query (no bounds, no seeding, no lean
pass) and must return exactly what the pruning traversal returns: the dense float64 oracle's top
k bit for bit (scores summed in query order from 0.0, ties by the lower docno), with each hit's
row of tfs and tf parts, for every variant and parameters, allow and deny masks, deleted
documents, a previous segment's top k, tf above the cap, negative and zero weights, k from 1 to
beyond the matches; and a damaged block must raise the kernel's ValueError. ``short_limit``
forces the path (or keeps it off) so that lists of any size go through it; the path's choice
itself (balanced lists of up to 4096 postings, not one dominant list) is tested apart.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_topk import KERNEL_KEYS, SWEEP, check, corpora, layout, queries

from bm25desk.engine.index import blocks
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.search import Searcher

needs_kernel = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")
CHANGED = "postings changed"
ALWAYS, NEVER = 2**62, -1


@contextlib.contextmanager
def short_limit(limit: int) -> Iterator[None]:
    """Set the kernel's short-path limit for the block (ALWAYS, NEVER, or a number)."""
    from bm25desk.engine.scoring import _topk

    before = _topk.short_limit(limit)
    try:
        yield
    finally:
        _topk.short_limit(before)


# -- random lists over stored blocks, against a plain-Python oracle --------------------------------


def draw_case(rng: np.random.Generator, ties: bool = False) -> dict[str, Any]:
    """A segment's length index, a tf-part table (monotone or not), lists with tfs above the cap,
    weights (negative, zero, -0.0), masks, a previous top k, k and the stored arrays."""
    n_docs = int(rng.choice([1, 7, 60, 300, 3000]))
    cap, shift = int(rng.choice([1, 3, 32])), int(rng.choice([2, 3, 7]))
    rows = 1 if ties else int(rng.integers(1, 40))
    dli = rng.integers(0, rows, n_docs).astype(np.int32)
    T = rng.uniform(0.0, 3.0, (rows, cap + 1))
    if rng.random() < 0.5:  # monotone: its own bound; else the kernel checks its envelope
        T = np.sort(np.sort(T, axis=1), axis=0)[::-1].copy()
    T[:, 0] = 0.0
    U = np.maximum.accumulate(np.maximum.accumulate(T, axis=1)[::-1], axis=0)[::-1].copy()
    n_terms = int(rng.integers(1, 7)) if rng.random() < 0.9 else int(rng.integers(7, 24))
    budget = int(rng.choice([4, 40, 300, 4000]))
    lists, ovf = [], []
    for _ in range(n_terms):
        size = min(n_docs, int(rng.integers(0, budget // n_terms + 2)))
        docs = np.sort(rng.choice(n_docs, size, replace=False)).astype(np.int32)
        choices = [1] if ties else [1, 1, 2, 3, cap, cap + 1, cap + 9]
        tfs = rng.choice(choices, size).astype(np.int32)
        lists.append((docs, tfs))
        ovf.append(rng.uniform(0.0, 5.0, int((tfs > cap).sum())))
    qws = [1.5 if ties else float(rng.choice([rng.uniform(-2, 4), 0.0, -0.0, 1.0, 2.5]))
           for _ in lists]  # fmt: skip
    ncols = n_terms + int(rng.integers(0, 3))
    cols = sorted(rng.choice(ncols, n_terms, replace=False).tolist())
    allow = rng.random(n_docs) < 0.7 if rng.random() < 0.3 else None
    deny = rng.random(n_docs) < 0.2 if rng.random() < 0.3 else None
    base, prev = 0, None
    if rng.random() < 0.3:
        base = int(rng.integers(1, 1000))
        m = int(rng.integers(0, 5))
        pd = np.sort(rng.choice(base, min(m, base), replace=False)).astype(np.int64)
        m = pd.size
        ps = np.full(m, 1.5) if ties else rng.uniform(-1, 6, m)
        tf_rows = rng.integers(0, 9, m * ncols).astype(np.int32)
        prev = (pd, ps, tf_rows, rng.uniform(0, 3, m * ncols))
    union = len({int(d) for docs, _ in lists for d in docs})
    k = int(rng.choice([1, 2, 3, 10, max(union, 1), union + 7, 10**6]))
    case = {"n_docs": n_docs, "cap": cap, "shift": shift, "dli": dli, "T": T, "U": U,
            "lists": lists, "ovf": ovf, "qws": qws, "ncols": ncols, "cols": cols, "allow": allow,
            "deny": deny, "base": base, "prev": prev, "k": k}  # fmt: skip
    case["arrays"] = stored_arrays(case)
    return case


def stored_arrays(case: dict[str, Any]) -> tuple[Any, ...]:
    """The case's lists encoded as a stored segment's arrays (blocks, frontiers)."""
    counts = [d.size for d, _ in case["lists"]]
    ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    docs = np.concatenate([d for d, _ in case["lists"]])
    tfs = np.concatenate([t for _, t in case["lists"]])
    enc = blocks.encode(ptr, docs, tfs, case["dli"], case["cap"], case["shift"])
    front = blocks.term_frontiers(enc, case["dli"], case["cap"])
    stream = np.r_[enc.stream, np.zeros(blocks.PAD, np.uint8)]
    return (stream, enc.blk_off, enc.blk_last, ptr, enc.bptr, enc.ovf, front.terms, front.off,
            front.data)  # fmt: skip


def oracle(case: dict[str, Any], k: int | None = None) -> tuple[list[Any], ...]:
    """The top k by (score desc, docno asc), each score summed in query order from 0.0, with
    its rows of tfs and tf parts; the previous top k competes as it is."""
    nc, cap = case["ncols"], case["cap"]
    rows: list[tuple[float, int, list[int], list[float]]] = []
    if case["prev"] is not None:
        d, s, t, p = case["prev"]
        for i in range(d.size):
            rows.append((float(s[i]), int(d[i]), t[i * nc : (i + 1) * nc].tolist(),
                         p[i * nc : (i + 1) * nc].tolist()))  # fmt: skip
    at: dict[int, dict[int, tuple[int, float]]] = {}
    for i, (docs, tfs) in enumerate(case["lists"]):
        over = 0
        for doc, tf in zip(docs.tolist(), tfs.tolist(), strict=True):
            if tf <= cap:
                part = float(case["T"][case["dli"][doc], tf])
            else:
                part = float(case["ovf"][i][over])
                over += 1
            at.setdefault(doc, {})[i] = (tf, part)
    for doc, terms in at.items():
        if case["allow"] is not None and not case["allow"][doc]:
            continue
        if case["deny"] is not None and case["deny"][doc]:
            continue
        score, tf_row, part_row = 0.0, [0] * nc, [0.0] * nc
        for i in sorted(terms):
            tf, part = terms[i]
            score += case["qws"][i] * part
            tf_row[case["cols"][i]], part_row[case["cols"][i]] = tf, part
        rows.append((score, case["base"] + doc, tf_row, part_row))
    rows.sort(key=lambda r: (-r[0], r[1]))
    rows = rows[: case["k"] if k is None else k]
    return ([r[1] for r in rows], [r[0].hex() for r in rows], [x for r in rows for x in r[2]],
            [x.hex() for r in rows for x in r[3]])  # fmt: skip


def as_lists(got: Any) -> tuple[list[Any], ...]:
    """search()'s / ranked()'s bytes as (docnos, score hexes, tfs, part hexes)."""
    d, s, t, p = got[:4]
    hexes = [[x.hex() for x in np.frombuffer(b).tolist()] for b in (s, p)]
    ints = np.frombuffer(d, np.int64).tolist(), np.frombuffer(t, np.int32).tolist()
    return ints[0], hexes[0], ints[1], hexes[1]


def run_search(case: dict[str, Any], table: str = "raw", **kw: Any) -> Any:
    """search() over the case's stored lists (raw (T, U) arrays or a checked Table)."""
    from bm25desk.engine.scoring import _topk

    T, U = case["T"].copy(), case["U"].copy()
    T.flags.writeable = U.flags.writeable = False
    tab = _topk.Table(T, U, case["cap"]) if table == "table" else None
    terms = []
    for i in range(len(case["lists"])):
        pl = _topk.stored(case["arrays"], i, case["dli"], case["cap"], case["shift"])
        ov = case["ovf"][i] if case["ovf"][i].size else None
        if tab is not None:
            terms.append((pl, case["qws"][i], tab, None, ov, case["cols"][i]))
        else:
            terms.append((pl, case["qws"][i], T, U, ov, case["cols"][i]))
    return _topk.search(terms, case["dli"], case["k"], case["ncols"], case["allow"],
                        case["deny"], case["base"], case["prev"], True, **kw)  # fmt: skip


def run_ranked(case: dict[str, Any]) -> Any:
    """ranked() over the case's stored arrays (one segment: no previous top k, columns 0..n)."""
    from bm25desk.engine.scoring import _topk

    T, U = case["T"].copy(), case["U"].copy()
    T.flags.writeable = U.flags.writeable = False
    return _topk.ranked(case["arrays"], case["dli"], list(range(len(case["lists"]))),
                        list(case["qws"]), _topk.Table(T, U, case["cap"]), case["k"],
                        case["allow"], case["deny"], case["cap"], case["shift"])  # fmt: skip


def live_union(case: dict[str, Any]) -> int:
    union = {int(d) for docs, _ in case["lists"] for d in docs}
    return sum(1 for d in union if (case["allow"] is None or case["allow"][d])
               and (case["deny"] is None or not case["deny"][d]))  # fmt: skip


@needs_kernel
@pytest.mark.parametrize("seed", range(120))
def test_short_path_ranks_like_the_oracle(seed: int) -> None:
    """Random lists (tf above the cap, negative, zero and -0.0 weights, masks, a previous top k,
    k of 1 to beyond the matches), forced through the short path: the oracle bit for bit, rows
    included, and the same bytes as the pruning traversal's."""
    rng = np.random.default_rng(seed)
    case = draw_case(rng, ties=seed % 6 == 5)
    want = oracle(case)
    for table in ("raw", "table"):
        with short_limit(ALWAYS):
            got = run_search(case, table)
        assert as_lists(got) == want, f"seed {seed} {table}"
        stats = got[4]  # every live document of the union scored, nothing skipped or seeded
        assert stats["scored"] == stats["candidates"] == live_union(case)
        assert stats["skips"] == stats["seeded"] == 0
        with short_limit(NEVER):
            assert as_lists(run_search(case, table))[:2] == want[:2]
    one = {**case, "base": 0, "prev": None, "ncols": len(case["lists"]),
           "cols": list(range(len(case["lists"])))}  # fmt: skip
    with short_limit(ALWAYS):
        got = run_ranked(one)
    if any(ov.size for ov in case["ovf"]):
        assert got is None  # tf parts from numpy: search() instead
    else:
        assert as_lists(got) == oracle(one)


@needs_kernel
@pytest.mark.parametrize("seed", range(8))
def test_equal_scores_keep_the_lower_docnos(seed: int) -> None:
    """One length row, tf 1 and one weight: every document of a list scores the same, and so
    does each document of the same terms; the k lowest docnos of the best come back, also with
    a previous segment's top k at that very score (later docnos: all of them lose the ties)."""
    rng = np.random.default_rng(500 + seed)
    case = draw_case(rng, ties=True)
    case["prev"] = None
    case["base"] = 0
    for k in (1, 2, 5, 50, 10**6):
        case["k"] = k
        with short_limit(ALWAYS):
            got = run_search(case)
        assert as_lists(got) == oracle(case), (seed, k)
        kinds = (np.int64, np.float64, np.int32, np.float64)
        d, s, t, p = (np.frombuffer(x, dt).copy() for x, dt in zip(got[:4], kinds, strict=True))
        case["prev"], case["base"] = (d + case["n_docs"], s, t, p), 0
        with short_limit(ALWAYS):
            again = run_search(case)
        assert as_lists(again) == oracle(case), (seed, k, "prev")
        case["prev"] = None


# -- the index: every variant, segments, deletions, constraints ------------------------------------


@pytest.mark.slow
@needs_kernel
@pytest.mark.parametrize("key", KERNEL_KEYS)
@given(texts=corpora, data=st.data())
@SWEEP
def test_every_variant_through_the_short_path(
    key: str, texts: list[str], data: Any, make_index: Any, variants: Any
) -> None:
    """top_k(), ranked() and the rest against search.py's dense scores, short path forced."""
    cap = data.draw(st.sampled_from([1, 2, 32]))
    with layout(cap, data.draw(st.sampled_from([2, 7]))), short_limit(ALWAYS):
        index = make_index(texts)
        searcher = Searcher(index)
        for _ in range(2):
            k = data.draw(st.integers(1, 12) | st.just(1000))
            check(index, data.draw(queries), data.draw(variants(key)), k, searcher=searcher)


@pytest.mark.slow
@needs_kernel
@given(groups=st.lists(corpora, min_size=1, max_size=3), data=st.data())
@SWEEP
def test_segments_deletions_and_masks_through_the_short_path(
    groups: list[list[str]], data: Any, make_segmented: Any, variants: Any
) -> None:
    """Several segments (the top k carried from one to the next), deleted documents and query
    constraints, short path forced, then at its default limit."""
    deleted = [data.draw(st.lists(st.integers(0, len(g) - 1), max_size=len(g), unique=True))
               for g in groups]  # fmt: skip
    if sum(len(d) for d in deleted) == sum(len(g) for g in groups):
        deleted[0] = deleted[0][1:]
    with layout(data.draw(st.sampled_from([2, 32])), data.draw(st.sampled_from([2, 7]))):
        index = make_segmented(groups, deleted)
        searcher = Searcher(index)
        for limit in (ALWAYS, 4096):
            with short_limit(limit):
                variant = data.draw(variants(data.draw(st.sampled_from(KERNEL_KEYS))))
                k = data.draw(st.integers(1, 8) | st.just(500))
                allowed = None
                if data.draw(st.booleans()):
                    n = index.n_slots
                    allowed = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
                check(index, data.draw(queries), variant, k, allowed, searcher)


# -- damaged blocks --------------------------------------------------------------------------------

DAMAGES = ["docno width", "tf width", "last docno", "frontier tf", "frontier docno", "length row",
           "overflow position"]  # fmt: skip


def damaged(kind: str) -> dict[str, Any]:
    """A case of three lists of a few blocks (tf above the cap only for the overflow damage:
    ranked() takes the others), one thing in it damaged."""
    rng = np.random.default_rng(11)
    n_docs, cap, shift, rows = 400, 3, 3, 5
    dli = rng.integers(0, rows, n_docs).astype(np.int32)
    T = np.sort(np.sort(rng.uniform(0.1, 3.0, (rows, cap + 1)), axis=1), axis=0)[::-1].copy()
    T[:, 0] = 0.0
    lists, ovf = [], []
    for size in (30, 9, 17):
        docs = np.sort(rng.choice(n_docs, size, replace=False)).astype(np.int32)
        tfs = rng.choice([1, 2, 3, 5] if kind == "overflow position" else [1, 2, 3], size)
        tfs = tfs.astype(np.int32)
        lists.append((docs, tfs))
        ovf.append(rng.uniform(0.0, 4.0, int((tfs > cap).sum())))
    case = {"n_docs": n_docs, "cap": cap, "shift": shift, "dli": dli, "T": T, "U": T,
            "lists": lists, "ovf": ovf, "qws": [1.0, 2.0, 0.5], "ncols": 3, "cols": [0, 1, 2],
            "allow": None, "deny": None, "base": 0, "prev": None, "k": 5}  # fmt: skip
    arrays = [np.array(a, copy=True) for a in stored_arrays(case)]
    stream, blk_off, blk_last, _ptr, bptr, ovf_pos = arrays[:6]
    b = int(bptr[1]) + 1  # the second block of the second list (of 9 postings: blocks of 8)
    at = int(blk_off[b])
    if kind == "docno width":
        stream[at + 1] = 40
    elif kind == "tf width":
        stream[at + 2] = 33
    elif kind == "last docno":
        blk_last[int(bptr[0]) + 1] -= 1  # the first list's second block no longer ends there
    elif kind == "frontier tf":
        stream[at + 3] = 0
    elif kind == "frontier docno":  # a frontier document before the block's first
        stream[at + 4 : at + 8] = np.frombuffer(np.int32(blk_last[b - 1]).tobytes(), np.uint8)
    elif kind == "length row":  # beyond the table, for a document in no block's frontier
        dli[not_in_frontier(lists[2], dli, shift)] = rows
    else:  # an overflow posting of the first list listed one position later
        ovf_pos[0] += 1
    case["arrays"] = tuple(arrays)
    return case


def not_in_frontier(lst: tuple[np.ndarray, np.ndarray], dli: np.ndarray, shift: int) -> int:
    """A document of the list whose block's frontier entry of its tf is another document (one
    as short or shorter, earlier): only its posting reads its length row."""
    docs, tfs = lst
    for i in range(docs.size):
        lo = i - i % (1 << shift)
        same = [j for j in range(lo, i) if tfs[j] == tfs[i] and dli[docs[j]] <= dli[docs[i]]]
        if same:
            return int(docs[i])
    raise AssertionError("no such document")


@needs_kernel
@pytest.mark.parametrize("kind", DAMAGES)
def test_a_damaged_list_raises(kind: str) -> None:
    """Every block of every list is decoded and checked: damage anywhere in them raises the
    kernel's ValueError (search() and ranked()), it never yields a result."""
    case = damaged(kind)
    with short_limit(ALWAYS):
        with pytest.raises(ValueError, match=CHANGED):
            run_search(case)
        if kind == "overflow position":  # ranked() declines lists with tf > cap
            assert run_ranked(case) is None
        else:
            with pytest.raises(ValueError, match=CHANGED):
                run_ranked(case)


# -- which path, and lists that need more scratch than the arena's first block --------------------


@needs_kernel
def test_the_short_path_is_taken_for_balanced_short_lists_only() -> None:
    """Balanced lists of up to 4096 postings in all: every document scored; a list of nearly all
    the postings, or more than 4096 of them: the pruning traversal (which skips documents)."""
    rng = np.random.default_rng(3)
    case = draw_case(rng)
    n_docs = 20000
    dli = rng.integers(0, 4, n_docs).astype(np.int32)
    T = np.sort(np.sort(rng.uniform(0.1, 3.0, (4, 4)), axis=1), axis=0)[::-1].copy()
    T[:, 0] = 0.0

    def lists_of(sizes: list[int]) -> dict[str, Any]:
        lists = [(np.sort(rng.choice(n_docs, s, replace=False)).astype(np.int32),
                  rng.integers(1, 4, s).astype(np.int32)) for s in sizes]  # fmt: skip
        c = {**case, "n_docs": n_docs, "cap": 3, "shift": 7, "dli": dli, "T": T, "U": T,
             "lists": lists, "ovf": [np.zeros(0)] * len(sizes), "qws": [1.0] * len(sizes),
             "ncols": len(sizes), "cols": list(range(len(sizes))), "allow": None, "deny": None,
             "base": 0, "prev": None, "k": 1}  # fmt: skip
        c["qws"][-1] = 9.0  # the last list: few postings, a large weight (seeded first)
        c["arrays"] = stored_arrays(c)
        return c

    for sizes, short in (([1000, 1200, 900], True), ([300, 200], True), ([2000, 30], False),
                         ([2100, 2100, 10], False), ([400, 9], True)):  # fmt: skip
        c = lists_of(sizes)
        stats = run_search(c)[4]
        assert (stats["candidates"] == live_union(c) and stats["skips"] == 0) == short, sizes
        assert as_lists(run_search(c)) == oracle(c)
        with short_limit(NEVER):
            assert run_search(c)[4]["candidates"] < live_union(c), sizes


@needs_kernel
def test_scratch_beyond_the_first_block() -> None:
    """Calls whose scratch outgrows the arena's first block (the short path at 4096 postings,
    a pruning query of 300 terms) take more memory apart and then keep a larger block: the same
    results, call after call."""
    rng = np.random.default_rng(5)
    case = draw_case(rng)
    n_docs = 50000
    dli = rng.integers(0, 6, n_docs).astype(np.int32)
    T = np.sort(np.sort(rng.uniform(0.1, 3.0, (6, 33)), axis=1), axis=0)[::-1].copy()
    T[:, 0] = 0.0
    for sizes in ([1365, 1365, 1366], [40] * 300):
        lists = [(np.sort(rng.choice(n_docs, s, replace=False)).astype(np.int32),
                  rng.integers(1, 33, s).astype(np.int32)) for s in sizes]  # fmt: skip
        c = {**case, "n_docs": n_docs, "cap": 32, "shift": 7, "dli": dli, "T": T, "U": T,
             "lists": lists, "ovf": [np.zeros(0)] * len(sizes),
             "qws": rng.uniform(0.5, 3.0, len(sizes)).tolist(), "ncols": len(sizes),
             "cols": list(range(len(sizes))), "allow": None, "deny": None, "base": 0,
             "prev": None, "k": 20}  # fmt: skip
        c["arrays"] = stored_arrays(c)
        want = oracle(c)
        for limit in (4096, ALWAYS, 4096):
            with short_limit(limit):
                assert as_lists(run_search(c)) == want
                assert as_lists(run_ranked(c)) == want


@needs_kernel
@pytest.mark.parametrize(
    ("over", "error"),
    [({"qws": [math.inf, 1.0, 1.0]}, ValueError), ({"qws": ["1", 1.0, 1.0]}, TypeError),
     ({"tids": [0, 1, 99]}, ValueError), ({"tids": [0, 1, "2"]}, TypeError)],
)  # fmt: skip
def test_ranked_checks_every_term_before_declining(over: dict[str, Any], error: type) -> None:
    """A list with tf above the cap makes ranked() decline (None), but only a call whose term
    ids and weights are all good: a bad one beside it is still an error."""
    case = damaged("overflow position")  # (its lists themselves are fine up to there)
    case["arrays"] = stored_arrays(case)
    from bm25desk.engine.scoring import _topk

    T = case["T"].copy()
    T.flags.writeable = False
    kw: dict[str, Any] = {"arrays": case["arrays"], "dl_index": case["dli"], "tids": [0, 1, 2],
                          "qws": list(case["qws"]), "table": _topk.Table(T, None, case["cap"]),
                          "k": 5, "cap": case["cap"], "shift": case["shift"]}  # fmt: skip
    assert _topk.ranked(**kw) is None
    with pytest.raises(error):
        _topk.ranked(**{**kw, **over})


@needs_kernel
def test_short_limit_reads_and_sets() -> None:
    from bm25desk.engine.scoring import _topk

    before = _topk.short_limit()
    assert before == 4096
    try:
        assert _topk.short_limit(10) == 4096
        assert _topk.short_limit() == 10
        with pytest.raises(ValueError, match="postings"):
            _topk.short_limit(-2)
        with pytest.raises(TypeError):
            _topk.short_limit(1.5)
    finally:
        _topk.short_limit(before)
