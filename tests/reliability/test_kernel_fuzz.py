"""The top-k kernel's entry points never crash, whatever they are given (issue 16.2).

Every entry point of ``bm25desk.engine.scoring._topk`` — ``PostingList(...)`` and its methods,
``Table(...)``, ``search(...)`` and ``count(...)`` — is called with arguments built consistent
and then mutated: wrong types, dtypes and layouts, lengths that disagree, docnos and columns out
of range, absurd integers, uninitialised objects, and arrays written to after a PostingList was
built from them. Each call must end in a clean ``ValueError``/``TypeError`` (``RuntimeError`` for
a second ``__init__``) or in the correct result, checked against a plain-Python oracle; a call
that reads inconsistent arguments as if they were fine would be a wrong result, and one that
crashes the process kills the child.

The calls run in a child process (a hypothesis run and a seeded random loop), so that a crash
fails the test — with the case that crashed, from the child's progress file — instead of killing
pytest. ``test_numpy_path_raises_the_same_errors`` checks in-process that the Python API raises
the same errors with and without the kernel.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bm25desk.engine.scoring import topk

CLEAN = (ValueError, TypeError)
CHANGED = "the postings changed after the PostingList was built"
needs_kernel = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not built")


# -- consistent arguments --------------------------------------------------------------------------


@dataclass
class Case:
    """A consistent set of kernel arguments for one segment (and what to expect of them)."""

    n_docs: int
    cap: int
    shift: int
    rows: int
    dl_index: np.ndarray  # int32, one row index per document
    T: np.ndarray  # (rows, cap + 1) float64, column 0 unused
    U: np.ndarray  # its monotone envelope
    lists: list[tuple[np.ndarray, np.ndarray]]  # per term: docs (int32, ascending), tfs (int32)
    qw: list[float]
    cols: list[int]
    ncols: int
    k: int
    allow: np.ndarray | None = None
    deny: np.ndarray | None = None
    base: int = 0
    prev: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    overflow: list[np.ndarray | None] = field(default_factory=list)


def envelope(T: np.ndarray) -> np.ndarray:
    """Return the monotone envelope of T (non-decreasing in tf, non-increasing down the rows)."""
    env = np.maximum.accumulate(T, axis=1)
    return np.ascontiguousarray(np.maximum.accumulate(env[::-1], axis=0)[::-1])


def make_case(rng: random.Random) -> Case:
    """Draw a small consistent segment: lengths, a tf-part table, posting lists and options."""
    n_docs = rng.randint(0, 60)
    cap = rng.choice([1, 2, 3, 5, 32])
    shift = rng.choice([2, 3, 7])
    rows = rng.randint(1, 6)
    dl = np.array([rng.randrange(rows) for _ in range(n_docs)], dtype=np.int32)
    T = np.array([[rng.uniform(0.0, 3.0) for _ in range(cap + 1)] for _ in range(rows)])
    if rng.random() < 0.5:  # a monotone table is its own bound
        T = np.sort(T, axis=1)[::-1].copy()
        T = np.ascontiguousarray(np.sort(T, axis=0)[::-1])
    T[:, 0] = 0.0
    U = envelope(T)
    if np.array_equal(U, T):
        U = T
    n_terms = rng.randint(0, 4)
    lists, overflow = [], []
    for _ in range(n_terms):
        docs = sorted(rng.sample(range(n_docs), rng.randint(0, n_docs)) if n_docs else [])
        tfs = [rng.choice([1, 1, 2, 3, cap, cap + 1, cap + 7]) for _ in docs]
        d = np.array(docs, dtype=np.int32)
        t = np.array(tfs, dtype=np.int32)
        lists.append((d, t))
        n_ovf = int((t > cap).sum())
        overflow.append(np.array([rng.uniform(0, 5) for _ in range(n_ovf)]) if n_ovf else None)
    ncols = n_terms + rng.randint(0, 2)
    cols = sorted(rng.sample(range(ncols), n_terms))
    qw = [rng.choice([rng.uniform(-2, 4), 0.0, 1.0]) for _ in range(n_terms)]
    case = Case(n_docs, cap, shift, rows, dl, T, U, lists, qw, cols, ncols, rng.randint(1, 12))
    case.overflow = overflow
    if rng.random() < 0.3:
        case.allow = np.array([rng.random() < 0.7 for _ in range(n_docs)], dtype=np.bool_)
    if rng.random() < 0.3:
        case.deny = np.array([rng.random() < 0.2 for _ in range(n_docs)], dtype=np.bool_)
    if rng.random() < 0.3:
        case.base = rng.randint(1, 1000)
        m = rng.randint(0, 4)
        case.prev = (
            np.array(sorted(rng.sample(range(case.base), min(m, case.base))), dtype=np.int64),
            np.zeros(0),
            np.zeros(0, dtype=np.int32),
            np.zeros(0),
        )
        m = case.prev[0].size
        case.prev = (
            case.prev[0],
            np.array([rng.uniform(-1, 6) for _ in range(m)]),
            np.array([rng.randint(0, 9) for _ in range(m * ncols)], dtype=np.int32),
            np.array([rng.uniform(0, 3) for _ in range(m * ncols)]),
        )
    return case


# -- calling the kernel and the oracle -------------------------------------------------------------


def kernel() -> Any:
    """Return the compiled kernel module."""
    from bm25desk.engine.scoring import _topk

    return _topk


def build(case: Case) -> list[Any]:
    """Build the case's PostingLists (on the case's own arrays: mutations reach them)."""
    k = kernel()
    return [k.PostingList(d, t, case.dl_index, case.cap, case.shift) for d, t in case.lists]


def frozen(a: np.ndarray) -> np.ndarray:
    """Return a read-only copy of ``a`` (what a Table accepts)."""
    b = np.array(a, copy=True)
    b.flags.writeable = False
    return b


def search_args(case: Case, pls: list[Any], tables: str = "raw") -> list[tuple[Any, ...]]:
    """Return search()'s terms: raw (T, U) arrays or a checked Table per term."""
    k = kernel()
    out = []
    table: Any = None
    if tables == "table":
        table = k.Table(frozen(case.T), None if case.U is case.T else frozen(case.U), case.cap)
    for i, pl in enumerate(pls):
        ov = case.overflow[i]
        if tables == "table":
            out.append((pl, case.qw[i], table, None, ov, case.cols[i]))
        else:
            out.append((pl, case.qw[i], case.T, case.U, ov, case.cols[i]))
    return out


def call_search(case: Case, terms: Any, **over: Any) -> Any:
    """Call search() with the case's arguments, any of them replaced by ``over``."""
    kw: dict[str, Any] = {
        "allow": case.allow,
        "deny": case.deny,
        "base": case.base,
        "prev": case.prev,
    }
    kw.update({k: v for k, v in over.items() if k not in ("dl_index", "k", "ncols")})
    return kernel().search(
        terms,
        over.get("dl_index", case.dl_index),
        over.get("k", case.k),
        over.get("ncols", case.ncols),
        **kw,
    )


def oracle_search(case: Case) -> tuple[list[int], list[float], list[int], list[float]]:
    """Return the top k by (score desc, docno asc), scores summed in query order from 0.0."""
    rows: list[tuple[float, int, list[int], list[float]]] = []
    nc = case.ncols
    if case.prev is not None:
        d, s, t, p = case.prev
        for i in range(d.size):
            tf_row = t[i * nc : (i + 1) * nc].tolist()
            rows.append((float(s[i]), int(d[i]), tf_row, p[i * nc : (i + 1) * nc].tolist()))
    union = sorted({int(x) for docs, _ in case.lists for x in docs.tolist()})
    for doc in union:
        if (case.allow is not None and not case.allow[doc]) or (
            case.deny is not None and case.deny[doc]
        ):
            continue
        score, tf_row, part_row = 0.0, [0] * nc, [0.0] * nc
        for i, (docs, tfs) in enumerate(case.lists):
            hit = np.flatnonzero(docs == doc)
            if hit.size == 0:
                continue
            pos, tf = int(hit[0]), int(tfs[hit[0]])
            if tf <= case.cap:
                tp = float(case.T[case.dl_index[doc], tf])
            else:
                ov = case.overflow[i]
                assert ov is not None
                tp = float(ov[int((tfs[:pos] > case.cap).sum())])
            score += case.qw[i] * tp
            tf_row[case.cols[i]], part_row[case.cols[i]] = tf, tp
        rows.append((score, case.base + doc, tf_row, part_row))
    rows.sort(key=lambda r: (-r[0], r[1]))
    rows = rows[: case.k]
    return (
        [r[1] for r in rows],
        [r[0] for r in rows],
        [x for r in rows for x in r[2]],
        [x for r in rows for x in r[3]],
    )


def check_search_result(case: Case, got: Any) -> None:
    """Assert search()'s result equals the oracle's, bit for bit."""
    d, s, t, p = got[:4]
    want = oracle_search(case)
    assert np.frombuffer(d, np.int64).tolist() == want[0]
    assert [x.hex() for x in np.frombuffer(s, np.float64).tolist()] == [x.hex() for x in want[1]]
    assert np.frombuffer(t, np.int32).tolist() == want[2]
    assert np.frombuffer(p, np.float64).tolist() == want[3]


def oracle_count(case: Case, allow: Any = None, deny: Any = None) -> int:
    """Documents in the union of the lists, allowed and not denied."""
    union = {int(x) for docs, _ in case.lists for x in docs.tolist()}
    return sum(1 for d in union if (allow is None or allow[d]) and (deny is None or not deny[d]))


# -- mutations -----------------------------------------------------------------------------------

# A mutation returns ("error", call) when the call must raise cleanly, ("valid", call, check) when
# it must return the checked result, ("any", call) when either is right, or ("changed", call)
# for arrays written to after a PostingList was built: a result, or the ValueError saying the
# postings changed (the kernel must notice what would read out of bounds).
Outcome = tuple[Any, ...]
Mutation = Callable[[Case, random.Random], Outcome]
MUTATIONS: dict[str, Mutation] = {}


def mutation(fn: Mutation) -> Mutation:
    """Register a mutation under its name."""
    MUTATIONS[fn.__name__] = fn
    return fn


def strided(a: np.ndarray) -> np.ndarray:
    """Return a non-contiguous array with the values of ``a``."""
    big = np.repeat(a, 2)
    return big[::2]


@mutation
def valid_raw_tables(case: Case, rng: random.Random) -> Outcome:
    """Search with plain (T, U) arrays: the oracle's result."""
    pls = build(case)
    return (
        "valid",
        lambda: call_search(case, search_args(case, pls)),
        lambda r: check_search_result(case, r),
    )


@mutation
def valid_table_objects(case: Case, rng: random.Random) -> Outcome:
    """Search with checked Table objects and any seeding ratio, with statistics."""
    pls = build(case)
    seed = rng.choice([0.0, -1.0, math.nan, math.inf, 4.0, 1e-9])
    return (
        "valid",
        lambda: call_search(case, search_args(case, pls, "table"), seed=seed, stats=True),
        lambda r: check_search_result(case, r),
    )


@mutation
def absurd_k(case: Case, rng: random.Random) -> Outcome:
    """Call with k of 0, negative, huge, or not an integer (huge means every document)."""
    pls = build(case)
    k = rng.choice([0, -1, -(2**70), 2**70, 10**6, 1.5, "3", None, True])
    if isinstance(k, int) and not isinstance(k, bool) and k >= 1:
        big = replace(case, k=10**9)
        return (
            "valid",
            lambda: call_search(case, search_args(case, pls), k=k),
            lambda r: check_search_result(big, r),
        )
    return "error", lambda: call_search(case, search_args(case, pls), k=k)


@mutation
def bad_ncols(case: Case, rng: random.Random) -> Outcome:
    """Call with fewer columns than terms, a negative or huge count, or a float."""
    pls = build(case)
    n = len(pls)
    ncols = rng.choice([-1, 2**40, 2**70, max(n - 1, -1) if n else -1, 2.0])
    return "error", lambda: call_search(case, search_args(case, pls), ncols=ncols)


@mutation
def bad_base(case: Case, rng: random.Random) -> Outcome:
    """Call with a negative base, one that would overflow docnos, or a string."""
    pls = build(case)
    base = rng.choice([-1, 2**63 - 1, 2**70, -(2**70), "0"])
    return "error", lambda: call_search(case, search_args(case, pls), base=base)


@mutation
def other_dl_index(case: Case, rng: random.Random) -> Outcome:
    """Call with a length index other than the PostingLists were built with."""
    pls = build(case)
    dl = case.dl_index
    choice = rng.choice(["copy", "short", "long", "float", "strided", "list", "int64"])
    other: Any = {
        "copy": dl.copy(),
        "short": dl[:-1].copy(),
        "long": np.append(dl, 0).astype(np.int32),
        "float": dl.astype(np.float64),
        "strided": strided(dl),
        "list": dl.tolist(),
        "int64": dl.astype(np.int64),
    }[choice]
    if (not pls or case.n_docs == 0) and choice in ("copy", "short", "long", "strided"):
        return "any", lambda: call_search(case, search_args(case, pls), dl_index=other)
    return "error", lambda: call_search(case, search_args(case, pls), dl_index=other)


@mutation
def bad_masks(case: Case, rng: random.Random) -> Outcome:
    """Call with allow/deny masks that are short, float, strided or not arrays."""
    pls = build(case)
    name = rng.choice(["allow", "deny"])
    n = case.n_docs
    choice = rng.choice(["short", "float", "strided", "list", "long"])
    if choice == "short" and n == 0:
        choice = "float"
    mask = np.ones(n, dtype=np.bool_) if name == "allow" else np.zeros(n, dtype=np.bool_)
    value: Any = {
        "short": mask[:-1],
        "float": mask.astype(np.float64),
        "strided": strided(mask),
        "list": mask.tolist(),
        "long": np.append(mask, True),
    }[choice]
    call = lambda: call_search(case, search_args(case, pls), **{name: value})  # noqa: E731
    if choice == "long":  # longer than needed is fine
        return "valid", call, lambda r: check_search_result(replace(case, **{name: mask}), r)
    if choice == "strided" and n <= 1:
        return "valid", call, lambda r: check_search_result(replace(case, **{name: mask}), r)
    return "error", call


@mutation
def bad_term_shapes(case: Case, rng: random.Random) -> Outcome:
    """Call with terms that are not a sequence of well-formed tuples, or bad weights."""
    pls = build(case)
    terms = search_args(case, pls)
    choice = rng.choice(["not a sequence", "list item", "short item", "string", "qw", "huge qw"])
    if choice == "not a sequence":
        bad: Any = 42
    elif not terms:
        bad = [("x",)]
    elif choice == "list item":
        bad = [list(t) for t in terms]
    elif choice == "short item":
        bad = [t[:5] for t in terms]
    elif choice == "string":
        bad = [("pl", *t[1:]) for t in terms]
    elif choice == "qw":
        bad = [(t[0], rng.choice([math.nan, math.inf, -math.inf, "1"]), *t[2:]) for t in terms]
    else:
        bad = [(t[0], 10**400, *t[2:]) for t in terms]
    return "error", lambda: call_search(case, bad)


@mutation
def uninitialised_objects(case: Case, rng: random.Random) -> Outcome:
    """Use a PostingList or Table that was never (or not successfully) initialised."""
    k = kernel()
    choice = rng.choice(["new", "failed", "info", "overflow", "table", "count"])
    pl = k.PostingList.__new__(k.PostingList)
    if choice == "failed":
        with pytest.raises(ValueError, match="ascending"):
            pl.__init__(np.array([2, 1], np.int32), np.array([1, 1], np.int32), case.dl_index)
    if choice == "info":
        return "error", pl.info
    if choice == "overflow":
        return "error", pl.overflow_positions
    if choice == "count":
        return "error", lambda: k.count([pl], case.n_docs)
    terms: list[Any] = [(pl, 1.0, case.T, case.U, None, 0)]
    if choice == "table" and case.lists:
        real = build(case)[0]
        empty = k.Table.__new__(k.Table)
        terms = [(real, 1.0, empty, None, case.overflow[0], 0)]
    return "error", lambda: call_search(case, terms, ncols=max(case.ncols, 1))


@mutation
def bad_tables(case: Case, rng: random.Random) -> Outcome:
    """Call with tables of the wrong dtype or size, non-finite, negative or non-monotone."""
    pls = build(case)
    if not pls:
        return "valid", lambda: call_search(case, []), lambda r: check_search_result(case, r)
    T, U = case.T.copy(), case.U.copy()
    choice = rng.choice(
        ["float32", "ragged", "few rows", "U short", "nan", "negative", "U below", "U bumpy"]
    )
    if choice == "few rows" and max(pl.max_j for pl in pls) < 0:
        choice = "nan"
    if choice == "float32":
        T = T.astype(np.float32)
    elif choice == "ragged":
        T = T.ravel()[:-1].copy()
    elif choice == "few rows":
        T, U = T[: max(pl.max_j for pl in pls)].copy(), U[: max(pl.max_j for pl in pls)].copy()
    elif choice == "U short":
        U = U.ravel()[:-1].copy()
    elif choice == "nan":
        T[rng.randrange(case.rows), rng.randint(1, case.cap)] = math.nan
    elif choice == "negative":
        T[rng.randrange(case.rows), rng.randint(1, case.cap)] = -1.0
    elif choice == "U below":
        U = U.copy()
        U[rng.randrange(case.rows), rng.randint(1, case.cap)] -= 10.0
    elif case.cap > 1:  # U bumpy: falls from tf 1 to tf 2
        U[0, 1] = U[0, 2] + 10.0
    elif case.rows > 1:  # U bumpy: rises down the rows
        U[1, 1] = U[0, 1] + 10.0
    else:
        U[0, 1] = math.inf
    terms = [(t[0], t[1], T, U, *t[4:]) for t in search_args(case, pls)]
    return "error", lambda: call_search(case, terms)


@mutation
def bad_table_objects(case: Case, rng: random.Random) -> Outcome:
    """Make a Table from writable, ragged or non-monotone arrays, or misuse one."""
    k = kernel()
    choice = rng.choice(["writable", "cap", "bounds given", "U bumpy", "empty", "twice", "cap 0"])
    if choice == "writable":
        return "error", lambda: k.Table(case.T.copy(), None, case.cap)
    pls = build(case)
    if choice == "cap":

        def other_cap() -> Any:
            table = k.Table(frozen(case.T), None, case.cap + 1)  # may not even fit
            terms = [(pl, 1.0, table, None, case.overflow[i], case.cols[i]) for i, pl in
                     enumerate(pls)]  # fmt: skip
            return call_search(case, terms)

        return ("error" if pls else "any"), other_cap
    if choice == "cap 0":
        return "error", lambda: k.Table(frozen(case.T), None, rng.choice([0, 256, 2**70, -1]))
    if choice == "empty":
        return "error", lambda: k.Table(frozen(np.zeros(0)), None, case.cap)
    if choice == "U bumpy":
        U = case.U.copy()
        U[0, 1] = math.inf
        return "error", lambda: k.Table(frozen(case.T), frozen(U), case.cap)
    table = k.Table(frozen(case.T), None if case.U is case.T else frozen(case.U), case.cap)
    if choice == "twice":
        return "error_or_runtime", lambda: table.__init__(frozen(case.T))
    if not pls:
        return "any", lambda: None
    terms = [(pl, case.qw[i], table, case.U, case.overflow[i], case.cols[i]) for i, pl in
             enumerate(pls)]  # fmt: skip
    return "error", lambda: call_search(case, terms)


@mutation
def bad_overflow(case: Case, rng: random.Random) -> Outcome:
    """Call with overflow values missing, of the wrong size or dtype, NaN or negative."""
    pls = build(case)
    ovf = [i for i, pl in enumerate(pls) if pl.n_overflow]
    if not ovf:
        return (
            "valid",
            lambda: call_search(case, search_args(case, pls)),
            lambda r: check_search_result(case, r),
        )
    i = rng.choice(ovf)
    terms = search_args(case, pls)
    ov = case.overflow[i]
    assert ov is not None
    bad: Any = rng.choice(
        [None, ov[:-1].copy(), np.append(ov, 1.0), ov.astype(np.float32), ov * math.nan, -ov - 1]
    )
    terms[i] = (*terms[i][:4], bad, terms[i][5])
    return "error", lambda: call_search(case, terms)


@mutation
def bad_columns(case: Case, rng: random.Random) -> Outcome:
    """Call with columns out of range, of the wrong type, repeated or out of order."""
    pls = build(case)
    if not pls:
        return "error", lambda: call_search(case, [(None,)])
    terms = search_args(case, pls)
    i = rng.randrange(len(terms))
    col: Any = rng.choice([-1, case.ncols, 2**70, 1.0, "0", None])
    if len(terms) > 1 and rng.random() < 0.5:
        col = terms[i - 1][5] if i > 0 else terms[1][5]  # a duplicate or out of order
    terms[i] = (*terms[i][:5], col)
    return "error", lambda: call_search(case, terms)


@mutation
def bad_prev(case: Case, rng: random.Random) -> Outcome:
    """Call with previous top-k arrays of the wrong arity, dtype or size."""
    pls = build(case)
    d = np.array([0, 1], dtype=np.int64)
    s = np.array([1.0, 2.0])
    t = np.zeros(2 * case.ncols, dtype=np.int32)
    p = np.zeros(2 * case.ncols)
    prev: Any = rng.choice(
        [
            (d, s, t),
            (d.astype(np.int32), s, t, p),
            (d, s[:1], t, p),
            (d, s, np.zeros(2 * case.ncols + 1, dtype=np.int32), p),
            (d.tobytes()[:-1], s.tobytes(), t.tobytes(), p.tobytes()),
            [d, s, t, p],
            (d, s, t, p.astype(np.float32)),
        ]
    )
    return "error", lambda: call_search(case, search_args(case, pls), prev=prev)


@mutation
def chained_segments(case: Case, rng: random.Random) -> Outcome:
    """Feed a previous call's bytes back as ``prev`` (how topk.py chains segments)."""
    pls = build(case)
    first = replace(case, base=0, prev=None)
    second = replace(case, base=case.n_docs + 5)

    def call() -> Any:
        got = call_search(first, search_args(case, pls))
        return call_search(second, search_args(case, pls), prev=got[:4])

    def check(r: Any) -> None:
        d, s, t, p = oracle_search(first)
        chained = replace(
            second,
            prev=(
                np.array(d, dtype=np.int64),
                np.array(s),
                np.array(t, dtype=np.int32),
                np.array(p),
            ),
        )
        check_search_result(chained, r)

    return "valid", call, check


@mutation
def written_after_build(case: Case, rng: random.Random) -> Outcome:
    """Arrays written to after the PostingLists were built (an index file rewritten in place)."""
    pls = build(case)
    terms = search_args(case, pls, rng.choice(["raw", "table"]))
    with_postings = [i for i, (d, _) in enumerate(case.lists) if d.size]
    if not with_postings:
        return "changed", lambda: call_search(case, terms)
    docs, tfs = case.lists[rng.choice(with_postings)]
    j = rng.randrange(docs.size)
    choice = rng.choice(["doc high", "doc low", "doc back", "tf 0", "tf high", "tf cap", "length"])
    if choice == "doc high":
        docs[j] = case.n_docs + rng.randint(0, 2**30)
    elif choice == "doc low":
        docs[j] = -rng.randint(1, 2**30)
    elif choice == "doc back":
        docs[:] = docs[::-1].copy()
    elif choice == "tf 0":
        tfs[j] = rng.choice([0, -1, -(2**31)])
    elif choice == "tf high":
        tfs[j] = rng.choice([case.cap + 1, 2**31 - 1])
    elif choice == "tf cap":
        tfs[:] = 1
    else:
        case.dl_index[int(docs[j]) if 0 <= docs[j] < case.n_docs else 0] = rng.choice(
            [case.rows, 2**31 - 1, -1, -(2**31)]
        )
    entry = rng.choice(["search", "count"])
    if entry == "count":
        return "changed", lambda: kernel().count(pls, case.n_docs, case.allow, case.deny)
    return "changed", lambda: call_search(case, terms)


@mutation
def bad_posting_lists(case: Case, rng: random.Random) -> Outcome:
    """Build PostingLists from inconsistent arrays and options (or twice)."""
    k = kernel()
    n = case.n_docs
    dl = case.dl_index
    docs = np.arange(min(n, 5), dtype=np.int32)
    tfs = np.ones(docs.size, dtype=np.int32)
    choice = rng.choice(
        [
            "int64", "length", "unsorted", "dup", "high", "negative", "tf0", "dl negative",
            "cap", "shift", "strided", "big-endian", "not buffer", "twice", "valid",
        ]
    )  # fmt: skip
    if choice in ("unsorted", "dup", "tf0", "dl negative", "strided") and docs.size < 2:
        choice = "high"
    if choice == "int64":
        return "error", lambda: k.PostingList(docs.astype(np.int64), tfs, dl)
    if choice == "length":
        return "error", lambda: k.PostingList(docs, np.append(tfs, 1).astype(np.int32), dl)
    if choice == "unsorted":
        return "error", lambda: k.PostingList(docs[::-1].copy(), tfs, dl)
    if choice == "dup":
        return "error", lambda: k.PostingList(np.zeros(docs.size, np.int32), tfs, dl)
    if choice == "high":
        return "error", lambda: k.PostingList(np.array([n], np.int32), np.ones(1, np.int32), dl)
    if choice == "negative":
        return "error", lambda: k.PostingList(np.array([-1], np.int32), np.ones(1, np.int32), dl)
    if choice == "tf0":
        bad_tfs = tfs.copy()
        bad_tfs[-1] = rng.choice([0, -3])
        return "error", lambda: k.PostingList(docs, bad_tfs, dl)
    if choice == "dl negative":
        bad_dl = dl.copy()
        bad_dl[int(docs[-1])] = -1
        return "error", lambda: k.PostingList(docs, tfs, bad_dl)
    if choice == "cap":
        cap = rng.choice([0, 256, -1, 2**70, 1.5, "2"])
        return "error", lambda: k.PostingList(docs, tfs, dl, cap)
    if choice == "shift":
        return "error", lambda: k.PostingList(docs, tfs, dl, 32, rng.choice([1, 17, 2**70]))
    if choice == "strided":
        return "error", lambda: k.PostingList(strided(docs), tfs, dl)
    if choice == "big-endian":
        return "error", lambda: k.PostingList(docs.astype(">i4"), tfs, dl)
    if choice == "not buffer":
        return "error", lambda: k.PostingList(docs.tolist(), tfs, dl)
    pl = k.PostingList(docs, tfs, dl, case.cap, case.shift)
    if choice == "twice":
        return "error_or_runtime", lambda: pl.__init__(docs, tfs, dl)

    def check(info: Any) -> None:
        assert info["postings"] == docs.size
        assert pl.n == docs.size
        assert np.frombuffer(pl.overflow_positions(), np.int32).size == pl.n_overflow

    return "valid", pl.info, check


@mutation
def count_calls(case: Case, rng: random.Random) -> Outcome:
    """Call count() validly (the oracle's number) or with inconsistent arguments."""
    k = kernel()
    pls = build(case)
    choice = rng.choice(["valid", "n_docs", "huge", "not list", "not pl", "short mask", "float"])
    if choice == "valid":
        return (
            "valid",
            lambda: k.count(pls, case.n_docs, case.allow, case.deny),
            lambda r: _equal(r, oracle_count(case, case.allow, case.deny)),
        )
    if choice == "n_docs" and pls:
        return "error", lambda: k.count(pls, case.n_docs + rng.choice([1, -1]))
    if choice == "huge":
        return "error", lambda: k.count(pls, rng.choice([2**70, -(2**70), -1, 2**31]))
    if choice == "not list":
        return "error", lambda: k.count(42, case.n_docs)
    if choice == "not pl":
        return "error", lambda: k.count([*pls, "x"], case.n_docs)
    if choice == "short mask" and case.n_docs:
        return "error", lambda: k.count(pls, case.n_docs, np.ones(case.n_docs - 1, np.bool_))
    return "error", lambda: k.count(pls, case.n_docs, np.ones(case.n_docs, np.float64))


def stored_arrays(case: Case) -> tuple[Any, ...]:
    """Encode the case's lists as a stored segment's blocks (the lengths: the length index)."""
    from bm25desk.engine.index import blocks

    counts = [d.size for d, _ in case.lists]
    ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    docs = np.concatenate([d for d, _ in case.lists]) if case.lists else np.zeros(0, np.int32)
    tfs = np.concatenate([t for _, t in case.lists]) if case.lists else np.zeros(0, np.int32)
    lens = np.ascontiguousarray(case.dl_index, dtype=np.int32)
    enc = blocks.encode(ptr, docs, tfs, lens, case.cap, case.shift)
    front = blocks.term_frontiers(enc, lens, case.cap)
    stream = np.concatenate([enc.stream, np.zeros(blocks.PAD, np.uint8)])
    return (stream, enc.blk_off, enc.blk_last, ptr, enc.bptr, enc.ovf, front.terms, front.off,
            front.data)  # fmt: skip


def stored_lists(case: Case, arrays: tuple[Any, ...]) -> list[Any]:
    """The case's lists as PostingLists over stored blocks."""
    k = kernel()
    return [
        k.stored(arrays, t, case.dl_index, case.cap, case.shift) for t in range(len(case.lists))
    ]


@mutation
def valid_stored_blocks(case: Case, rng: random.Random) -> Outcome:
    """Search and count over stored blocks (format 3): the oracle's results."""
    pls = stored_lists(case, stored_arrays(case))
    if rng.random() < 0.5:
        return (
            "valid",
            lambda: call_search(case, search_args(case, pls, rng.choice(["raw", "table"]))),
            lambda r: check_search_result(case, r),
        )
    return (
        "valid",
        lambda: kernel().count(pls, case.n_docs, case.allow, case.deny),
        lambda r: _equal(r, oracle_count(case, case.allow, case.deny)),
    )


def damaged_arrays(case: Case, rng: random.Random) -> tuple[Any, ...]:
    """Return the case's stored arrays with one byte or one value damaged."""
    arrays = list(stored_arrays(case))
    i = rng.choice([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    a = np.array(arrays[i], copy=True)
    if a.size:
        j = rng.randrange(a.size)
        if a.dtype == np.uint8:
            a[j] ^= np.uint8(1 << rng.randrange(8))
        else:
            a[j] = rng.choice([-1, 0, 1, 7, 2**31 - 1, int(a[j]) + 1, int(a[j]) - 1])
    arrays[i] = a
    return tuple(arrays)


@mutation
def damaged_stored_blocks(case: Case, rng: random.Random) -> Outcome:
    """Stored blocks with a byte or a value damaged: a clean error or a result, never a crash."""
    arrays = damaged_arrays(case, rng)
    which = rng.choice(["search", "count", "tfs_of"])

    def call() -> Any:
        pls = stored_lists(case, arrays)
        if which == "count":
            return kernel().count(pls, case.n_docs, case.allow, case.deny)
        if which == "tfs_of":
            return [pl.tfs_of(np.arange(case.n_docs, dtype=np.int32)) for pl in pls]
        return call_search(case, search_args(case, pls))

    return "any", call


def ranked_call(case: Case, arrays: tuple[Any, ...], **over: Any) -> Any:
    """Call ranked() on stored blocks with the case's arguments, any replaced by ``over``."""
    k = kernel()
    table = k.Table(frozen(case.T), None if case.U is case.T else frozen(case.U), case.cap)
    kw: dict[str, Any] = {
        "arrays": arrays,
        "dl_index": case.dl_index,
        "tids": list(range(len(case.lists))),
        "qws": list(case.qw),
        "table": table,
        "k": case.k,
        "allow": case.allow,
        "deny": case.deny,
        "cap": case.cap,
        "shift": case.shift,
    }
    kw.update(over)
    return k.ranked(**kw)


def check_ranked_result(case: Case, got: Any) -> None:
    """ranked(): None when a list has tf > cap, else the oracle's result of one segment."""
    if any(ov is not None for ov in case.overflow):
        assert got is None
        return
    n = len(case.lists)
    check_search_result(replace(case, base=0, prev=None, cols=list(range(n)), ncols=n), got)


@mutation
def valid_ranked(case: Case, rng: random.Random) -> Outcome:
    """ranked() (one call from term ids) over stored blocks: the oracle's result."""
    arrays = stored_arrays(case)
    return "valid", lambda: ranked_call(case, arrays), lambda r: check_ranked_result(case, r)


@mutation
def damaged_ranked(case: Case, rng: random.Random) -> Outcome:
    """ranked() over stored arrays with a byte or a value damaged: an error or a result."""
    arrays = damaged_arrays(case, rng)
    return "any", lambda: ranked_call(case, arrays)


@mutation
def bad_ranked_arguments(case: Case, rng: random.Random) -> Outcome:
    """ranked() with one argument wrong: a clean error."""
    arrays = stored_arrays(case)
    n = len(case.lists)
    k = kernel()
    bad: list[dict[str, Any]] = [
        {"arrays": arrays[:8]},
        {"arrays": (arrays[0].astype(np.int32), *arrays[1:])},
        {"tids": [n]},
        {"tids": [-1]},
        {"tids": [2**40]},
        {"tids": ["0"]},
        {"tids": None},
        {"tids": [*range(n), 0], "qws": list(case.qw)},
        {"qws": [math.nan]},
        {"qws": [math.inf]},
        {"tids": [0], "qws": ["1.0"]},
        {"table": case.T},
        {"table": k.Table(frozen(case.T), None if case.U is case.T else frozen(case.U), case.cap),
         "cap": case.cap + 1},
        {"k": 0},
        {"k": "3"},
        {"dl_index": case.dl_index.astype(np.float64)},
        {"allow": np.ones(max(case.n_docs - 1, 0), dtype=np.bool_)} if case.n_docs else {"k": -1},
        {"deny": np.ones(3, dtype=np.int64)},
        {"shift": 1},
        {"cap": 0},
    ]  # fmt: skip
    over = rng.choice(bad)
    if n == 0 and over.get("tids") in ([n], [-1], [2**40], ["0"]):
        over["qws"] = [1.0]
    return "error", lambda: ranked_call(case, arrays, **over)


def _equal(a: Any, b: Any) -> None:
    assert a == b, (a, b)


# -- one case, in the child ------------------------------------------------------------------------


def run_case(seed: int, name: str, stats: dict[str, int]) -> None:
    """Build case ``seed``, apply mutation ``name``, call and check the outcome."""
    rng = random.Random(seed)
    case = make_case(rng)
    outcome = MUTATIONS[name](case, rng)
    kind, call = outcome[0], outcome[1]
    # These lists are short: the kernel would score them all (its short path). A third of the
    # cases each: the pruning traversal forced, the path's own choice, the short path forced.
    kernel().short_limit(random.Random(seed + 1).choice([-1, 4096, 2**62]))
    error: BaseException | None = None
    try:
        result = call()
    except (*CLEAN, RuntimeError) as exc:
        error = exc
    if error is None:
        assert kind in ("valid", "any", "changed"), f"{name}: accepted an inconsistent call"
        if kind == "valid":
            outcome[2](result)
        stats["checked" if kind == "valid" else "accepted"] += 1
        return
    assert str(error), f"{name}: an error needs a message: {error!r}"
    if isinstance(error, RuntimeError):  # only a second __init__ may say so
        assert kind == "error_or_runtime", f"{name}: {error!r}"
    else:
        assert kind != "valid", f"{name}: a valid call raised {error!r}"
    if kind == "changed":  # the other arguments are fine: only the change may be reported
        assert isinstance(error, ValueError), f"{name}: {error!r}"
        assert CHANGED in str(error), f"{name}: {error!r}"
    stats["raised"] += 1


def child_random_loop(seed: int, n: int, progress: str) -> dict[str, int]:
    """Run ``n`` seeded cases, cycling through every mutation."""
    stats = {"cases": 0, "raised": 0, "checked": 0, "accepted": 0}
    names = sorted(MUTATIONS)
    rng = random.Random(seed)
    with open(progress, "w", encoding="utf-8") as log:
        for i in range(n):
            case_seed, name = rng.getrandbits(48), names[i % len(names)]
            log.write(f"random case seed={case_seed} mutation={name}\n")
            log.flush()
            run_case(case_seed, name, stats)
            stats["cases"] += 1
    return stats


def child_hypothesis(max_examples: int, progress: str) -> dict[str, int]:
    """Let hypothesis choose the cases and mutations (and shrink a failure)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    stats = {"cases": 0, "raised": 0, "checked": 0, "accepted": 0}
    log = open(progress, "w", encoding="utf-8")  # noqa: SIM115 - closed below

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.integers(0, 2**48), st.sampled_from(sorted(MUTATIONS)))
    def fuzz(case_seed: int, name: str) -> None:
        log.write(f"hypothesis case seed={case_seed} mutation={name}\n")
        log.flush()
        run_case(case_seed, name, stats)
        stats["cases"] += 1

    try:
        fuzz()
    finally:
        log.close()
    return stats


def child_main(argv: list[str]) -> None:
    """Entry point of the child process: ``random SEED N PROGRESS`` or ``hypothesis N PROGRESS``.

    ``crash PROGRESS`` dies of a segmentation fault after logging a case (tests the harness).
    """
    if argv[0] == "crash":
        Path(argv[1]).write_text("crash case seed=0 mutation=none\n", encoding="utf-8")
        import signal

        os.kill(os.getpid(), signal.SIGSEGV)
    if argv[0] == "random":
        stats = child_random_loop(int(argv[1]), int(argv[2]), argv[3])
    else:
        stats = child_hypothesis(int(argv[1]), argv[2])
    print(json.dumps(stats))


# -- the tests -------------------------------------------------------------------------------------


def run_child(tmp_path: Path, *args: str) -> dict[str, int]:
    """Run the fuzzing in a child process; fail with the crashing case if it does not exit 0."""
    progress = tmp_path / "progress.txt"
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.run(  # this file run as a script: see child_main
        [sys.executable, __file__, *args, str(progress)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    last = progress.read_text(encoding="utf-8").splitlines()[-1:] if progress.exists() else []
    assert proc.returncode == 0, (
        f"the fuzzing child exited with {proc.returncode} "
        f"({'killed by signal ' + str(-proc.returncode) if proc.returncode < 0 else 'error'}) "
        f"at: {last}\n{proc.stderr[-4000:]}"
    )
    stats: dict[str, int] = json.loads(proc.stdout.strip().splitlines()[-1])
    return stats


def _check_stats(stats: dict[str, int], n: int) -> None:
    assert stats["cases"] == n
    # Both kinds of outcome were exercised, not just one.
    assert stats["raised"] > n // 4, stats
    assert stats["checked"] > n // 20, stats


@needs_kernel
def test_random_loop_never_crashes(tmp_path: Path) -> None:
    """10,000 seeded mutated calls across every entry point: clean errors or correct results."""
    stats = run_child(tmp_path, "random", "20240601", "10000")
    _check_stats(stats, 10000)


@needs_kernel
def test_hypothesis_never_crashes(tmp_path: Path) -> None:
    """Hypothesis-chosen cases and mutations (1,000 examples), in a child process."""
    stats = run_child(tmp_path, "hypothesis", "1000")
    _check_stats(stats, stats["cases"])
    assert stats["cases"] >= 500


@pytest.mark.slow
@needs_kernel
def test_long_random_loop_never_crashes(tmp_path: Path) -> None:
    """The slow variant: 60,000 seeded cases."""
    stats = run_child(tmp_path, "random", "7", "60000")
    _check_stats(stats, 60000)


def test_a_crash_in_the_child_fails_the_test(tmp_path: Path) -> None:
    """The harness itself: a child killed by a signal fails the test, naming its last case."""
    with pytest.raises(AssertionError, match=r"killed by signal \d+\) at: \['crash case seed=0"):
        run_child(tmp_path, "crash")


# -- the numpy path raises what the kernel path raises ---------------------------------------------


BAD_K: list[Any] = [0, -1, -(2**70), 1.5, "3", None, True]


@pytest.fixture(scope="module")
def small() -> Any:
    """Yield a three-document in-memory index (rank_bm25's facade) and a term spec for "b"."""
    from bm25desk.engine.rank import BM25
    from bm25desk.engine.scoring.variants import get_variant

    bm25 = BM25([["a", "b"], ["b", "c"], ["c"]], "lucene")
    yield bm25.index, [("b", 1, bm25.searcher.weight("b", get_variant("lucene")))]
    bm25.close()


@pytest.mark.parametrize("k", BAD_K, ids=repr)
def test_numpy_path_raises_the_same_errors_for_k(small: Any, k: Any) -> None:
    """top_k with a bad k: the same exception and message with and without the kernel."""
    index, terms = small
    errors = []
    for use in (True, False):
        with pytest.raises(CLEAN) as info:
            topk.top_k(index, terms, k, kernel=use)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


ALLOWED: list[Callable[[int], Any]] = [
    lambda n: np.ones(n + 1, dtype=bool),
    lambda n: np.ones(max(n - 1, 0), dtype=bool),
    lambda n: np.ones(n, dtype=np.int64),
    lambda n: np.ones((n, 1), dtype=bool),
    lambda n: "mask",
]


@pytest.mark.parametrize("make_mask", ALLOWED)
def test_numpy_path_raises_the_same_errors_for_masks(small: Any, make_mask: Any) -> None:
    """top_k and count_matches with a bad mask: the same error with and without the kernel."""
    index, terms = small
    mask = make_mask(index.n_slots)
    errors = []
    for use in (True, False):
        with pytest.raises(CLEAN) as a:
            topk.top_k(index, terms, 3, mask, kernel=use)
        with pytest.raises(CLEAN) as b:
            topk.count_matches(index, terms, mask, kernel=use)
        errors.append((type(a.value), str(a.value), type(b.value), str(b.value)))
    assert errors[0] == errors[1]


if __name__ == "__main__":  # pragma: no cover - the child process
    child_main(sys.argv[1:])
