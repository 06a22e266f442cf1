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


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 8)),
        max_size=8,
        unique_by=lambda p: p[0],
    ),  # (a query's distinct terms)
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
