"""``by_df.remember``: a query's new terms' weightings, by df, into a search's tables.

The compiled call (``_topk.remember``) and the Python one must leave the same table and memo and
name the same missing dfs; a search through either ranks alike.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.scoring import by_df
from bm25desk.engine.scoring.topk import _topk

needs_kernel = pytest.mark.skipif(
    _topk is None, reason="the C kernel is not loaded (the compiled remember)"
)

WEIGHTS = {df: f"w{df}" for df in range(1, 9)}  # (any objects: remember only moves them)


def _run(fn: Any, terms: list[str], dfs: list[int], known: list[int], extra: list[int] | None):
    by = {df: WEIGHTS[df] for df in known}
    more = None if extra is None else {df: WEIGHTS[df] for df in extra}
    table: dict[str, Any] = {"old": "kept"}
    memo: dict[str, int] = {"old": 1}
    missing = fn(terms, dfs, by, more, table, memo)
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
    extra=st.none() | st.lists(st.integers(1, 8), max_size=8),
)
def test_the_compiled_remember_is_the_python_one(
    pairs: list[tuple[str, int]], known: list[int], extra: list[int] | None
) -> None:
    terms = [t for t, _ in pairs]
    dfs = [d for _, d in pairs]
    got = _run(_topk.remember, terms, dfs, known, extra)
    want = _run(by_df.remember_python, terms, dfs, known, extra)
    assert got == want
    missing, table, memo = got
    if missing:  # nothing written
        assert table == {"old": "kept"}
        assert memo == {"old": 1}
    else:
        for t, d in pairs:
            assert table[t] == (WEIGHTS[d] if d > 0 else None)


def test_missing_dfs_are_distinct_in_order_and_weighed_ones_land() -> None:
    for fn in {by_df.remember_python, by_df.remember}:
        missing, table, memo = _run(fn, ["a", "b", "c", "d"], [3, 0, 5, 3], [1], None)
        assert missing == [3, 5]
        missing, table, memo = _run(fn, ["a", "b", "c"], [3, 0, 5], [3], [5])
        assert missing == []
        assert table == {"old": "kept", "a": "w3", "b": None, "c": "w5"}
        assert memo == {"old": 1, "a": 3, "c": 5}


@needs_kernel
def test_bad_arguments_raise() -> None:
    with pytest.raises(TypeError):
        _topk.remember(["a"], [1, 2], {}, None, {}, {})
    with pytest.raises(TypeError):
        _topk.remember(["a"], ["1"], {}, None, {}, {})
    with pytest.raises(TypeError):
        _topk.remember(["a"], [1], {}, [], {}, {})


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
