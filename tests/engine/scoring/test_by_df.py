"""``by_df.remember_weighing``: a query's new terms' weightings, by df, into a search's tables.

The compiled call (``_topk.remember_weighing``) and the Python one must leave the same table,
memo and weightings by df, and name the same missing dfs; a search through either ranks alike.
A new df whose chunk of idfs is computed is weighed there (a copy of the variant's prototype).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.index.stats import CollectionStats, TermStats
from bm25desk.engine.scoring import by_df
from bm25desk.engine.scoring.topk import _topk
from bm25desk.engine.scoring.variant import TermWeight
from bm25desk.engine.scoring.variants import get_variant

needs_kernel = pytest.mark.skipif(
    _topk is None, reason="the C kernel is not loaded (the compiled remember_weighing)"
)

WEIGHTS = {df: f"w{df}" for df in range(1, 9)}  # (any objects: without a prototype, only moved)


def _run(fn: Any, terms: list[str], dfs: list[int], known: list[int]) -> tuple[Any, ...]:
    """Run ``fn`` without a prototype: ``known`` dfs weighed (by WEIGHTS), nothing made."""
    by = {df: WEIGHTS[df] for df in known}
    table: dict[str, Any] = {"old": "kept"}
    memo: dict[str, int] = {"old": 1}
    missing = fn(terms, dfs, by, table, memo, {}, 4, 8, None)
    return missing, table, memo


def _distinct_terms_with(values: Any) -> Any:
    """Return a strategy of a query's distinct terms, each with one of ``values``."""
    return st.lists(
        st.tuples(st.sampled_from("abcdefgh"), values), max_size=8, unique_by=lambda p: p[0]
    )


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(
    pairs=_distinct_terms_with(st.integers(0, 8)),
    known=st.lists(st.integers(1, 8), max_size=8),
)
def test_the_compiled_call_moves_weightings_as_the_python_one(
    pairs: list[tuple[str, int]], known: list[int]
) -> None:
    terms = [t for t, _ in pairs]
    dfs = [d for _, d in pairs]
    got = _run(_topk.remember_weighing, terms, dfs, known)
    want = _run(by_df.remember_weighing_python, terms, dfs, known)
    assert got == want
    missing, table, memo = got
    if missing:  # nothing written
        assert table == {"old": "kept"}
        assert memo == {"old": 1}
    else:
        for t, d in pairs:
            assert table[t] == (WEIGHTS[d] if d > 0 else None)


def test_missing_dfs_are_distinct_in_order_and_weighed_ones_land() -> None:
    for fn in {by_df.remember_weighing_python, by_df.remember_weighing}:
        missing, table, memo = _run(fn, ["a", "b", "c", "d"], [3, 0, 5, 3], [1])
        assert missing == [3, 5]
        assert table == {"old": "kept"}
        missing, table, memo = _run(fn, ["a", "b", "c"], [3, 0, 5], [3, 5])
        assert missing == []
        assert table == {"old": "kept", "a": "w3", "b": None, "c": "w5"}
        assert memo == {"old": 1, "a": 3, "c": 5}


def _weighed_case(
    terms: list[tuple[str, int]], weighed: dict[str, int | None], dfs: dict[str, int]
) -> tuple[tuple[tuple[str, int], ...], dict[str, Any], dict[str, int]]:
    table = {t: (None if v is None else f"w{v}") for t, v in weighed.items()}
    return tuple(terms), table, dfs


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(
    terms=_distinct_terms_with(st.integers(1, 3)),
    weighed=st.dictionaries(st.sampled_from("abcdefgh"), st.none() | st.integers(1, 8)),
    dfs=st.dictionaries(st.sampled_from("abcdefgh"), st.integers(0, 10**12)),
)
def test_the_compiled_weighed_is_the_python_one(
    terms: list[tuple[str, int]], weighed: dict[str, int | None], dfs: dict[str, int]
) -> None:
    args = _weighed_case(terms, weighed, dfs)
    got = _topk.weighed(*args)
    assert got == by_df.weighed_python(*args)
    if any(t not in weighed for t, _ in terms):  # the terms without an entry, in query order
        assert got == [t for t, _ in terms if t not in weighed]
    else:
        out, unknown, postings = got
        order = [t for t, _ in terms]
        assert [t for t, _, _ in out] == [t for t in order if weighed[t] is not None]
        assert unknown == [t for t in order if weighed[t] is None]
        assert postings == sum(dfs.get(t, 0) for t, _, _ in out)


def test_weighed_gives_terms_in_query_order_with_qtf_and_their_postings() -> None:
    for fn in {by_df.weighed_python, by_df.weighed}:
        args = _weighed_case([("b", 2), ("a", 1), ("z", 1)], {"a": 3, "b": 5, "z": None}, {"a": 7})
        assert fn(*args) == ([("b", 2, "w5"), ("a", 1, "w3")], ["z"], 7)
        args = _weighed_case([("b", 2), ("q", 1), ("r", 1)], {"b": 5}, {})
        assert fn(*args) == ["q", "r"]


@needs_kernel
def test_weighed_refuses_what_is_not_pairs() -> None:
    with pytest.raises(TypeError):
        _topk.weighed([("a", 1, 2)], {"a": None}, {})
    with pytest.raises(TypeError):
        _topk.weighed(["a"], {"a": None}, {})
    with pytest.raises(TypeError):
        _topk.weighed(5, {}, {})
    with pytest.raises(TypeError):
        _topk.weighed([("a", 1)], {"a": "w"}, {"a": "many"})


def test_weighed_python_asks_again_when_the_table_is_cleared_meanwhile() -> None:
    class Cleared(dict):  # (its terms were there when looked for, gone when read)
        def __contains__(self, key: object) -> bool:
            return True

    got = by_df.weighed_python((("a", 1), ("b", 2)), Cleared(), {})
    assert isinstance(got, list)  # weigh again, never a KeyError


# -- remember_weighing: new dfs weighed from their chunk of idfs, in the same call ----------------

_STATS = CollectionStats(40, 10.0, 100, lambda: np.arange(1, 101))
_VARIANT = get_variant("lucene")
_SIZE = 4  # dfs per chunk here (the search's: by_df.IDF_CHUNK)


def _weighing_case(
    fn: Any, pairs: list[tuple[str, int]], known: list[int], computed: list[int], proto: Any
) -> tuple[Any, ...]:
    """Run ``fn`` on a fresh by_df (``known`` dfs weighed) with chunks ``computed`` filled."""
    chunks = {c: _chunk(c) for c in computed}
    by = {df: TermWeight.with_text_later(_VARIANT, _STATS, float(df), df) for df in known}
    table: dict[str, Any] = {"old": None}
    memo: dict[str, int] = {"old": 1}
    terms, dfs = [t for t, _ in pairs], [d for _, d in pairs]
    missing = fn(terms, dfs, by, table, memo, chunks, _SIZE, 30, proto)
    return missing, table, memo, by, chunks


def _chunk(c: int) -> list[float]:
    """Return chunk ``c`` of idfs (dfs ``c·_SIZE + 1`` on, at most N), as ``by_df.idf_chunk``."""
    lo = c * _SIZE + 1
    dfs = np.arange(lo, min(lo + _SIZE - 1, _STATS.n_docs) + 1, dtype=np.float64)
    return [float(x) for x in _VARIANT.idf(dfs, _STATS)]


def _fields(w: Any) -> Any:
    """A weighting as its fields (None stays None), the idf text written."""
    if w is None:
        return None
    return (w.variant, w.stats, w.idf, w.idf_text, w.k1, w.notes, repr(w))


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(
    pairs=_distinct_terms_with(st.integers(0, 40)),
    known=st.lists(st.integers(1, 40), max_size=6),
    computed=st.lists(st.integers(0, 9), max_size=10),
    with_proto=st.booleans(),
)
def test_the_compiled_remember_weighing_is_the_python_one(
    pairs: list[tuple[str, int]], known: list[int], computed: list[int], with_proto: bool
) -> None:
    proto = by_df.prototype(_VARIANT, _STATS) if with_proto else None
    got = _weighing_case(_topk.remember_weighing, pairs, known, computed, proto)
    want = _weighing_case(by_df.remember_weighing_python, pairs, known, computed, proto)
    assert got[0] == want[0]  # the same dfs missing, distinct, in order
    assert got[2] == want[2]  # the memo of dfs
    for mine, theirs in ((got[1], want[1]), (got[3], want[3])):  # the table and by_df
        assert {k: _fields(v) for k, v in mine.items()} == {
            k: _fields(v) for k, v in theirs.items()
        }
    missing, table, memo, by, _chunks = got
    if missing:  # nothing written to the search's tables
        assert table == {"old": None}
        assert memo == {"old": 1}
        assert all(df > 30 or proto is None or (df - 1) // _SIZE not in computed for df in missing)
    else:
        for t, d in pairs:
            assert (table[t] is None) == (d <= 0)
            assert table[t] is (by[d] if d > 0 else None)  # one weighting a df, shared


def test_a_new_df_is_weighed_as_weigh_dfs_weighs_it() -> None:
    """A weighting made from its chunk is :func:`by_df.weigh_dfs`'s, bit for bit."""
    for fn in {by_df.remember_weighing, by_df.remember_weighing_python}:
        proto = by_df.prototype(_VARIANT, _STATS)
        missing, table, memo, by, _ = _weighing_case(fn, [("a", 7), ("b", 0)], [], [1], proto)
        assert missing == []
        want = by_df.weigh_dfs(_VARIANT, _STATS, [7], {})[7]
        assert _fields(table["a"]) == _fields(want)
        assert table["a"].idf == _VARIANT.weigh(TermStats("a", 7, 9, _no_postings), _STATS).idf
        assert table["a"] == _VARIANT.weigh(TermStats("a", 7, 9, _no_postings), _STATS)
        assert memo == {"old": 1, "a": 7}
        assert by == {7: table["a"]}


def _no_postings() -> Any:
    raise AssertionError("weighed by df: no postings read")


def test_what_cannot_be_weighed_here_is_missing_and_nothing_is_written() -> None:
    for fn in {by_df.remember_weighing, by_df.remember_weighing_python}:
        proto = by_df.prototype(_VARIANT, _STATS)
        # df 9's chunk (2) is not computed; df 31 is above top (30); df 5's chunk (1) is
        got = _weighing_case(fn, [("a", 9), ("b", 31), ("c", 5), ("d", 9)], [], [1], proto)
        missing, table, memo, by, _chunks = got
        assert missing == [9, 31]
        assert table == {"old": None}
        assert memo == {"old": 1}
        assert set(by) <= {5}  # (a weighting made before a miss is kept: it is right)
        # no prototype: only what by_df weighs already
        missing = _weighing_case(fn, [("a", 5), ("b", 3)], [3], [0, 1], None)[0]
        assert missing == [5]


@needs_kernel
def test_a_prototype_the_kernel_cannot_copy_leaves_its_dfs_missing() -> None:
    class Loose:  # (instances with a __dict__: not a slotted weighting)
        idf = 0.0

    missing = _weighing_case(_topk.remember_weighing, [("a", 5)], [], [1], Loose())[0]
    assert missing == [5]
    with pytest.raises(TypeError):
        _topk.remember_weighing(["a"], [1, 2], {}, {}, {}, {}, 4, 30, None)
    with pytest.raises(TypeError):
        _topk.remember_weighing(["a"], [1], {}, {}, {}, {}, 0, 30, None)
    with pytest.raises(TypeError):
        _topk.remember_weighing(["a"], ["1"], {}, {}, {}, {}, 4, 30, None)
