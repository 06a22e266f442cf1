"""The compact first-seen table of document ids behaves as a dict's ``setdefault`` does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.index.segment_writer import DictTermIds, TermIds
from bm25desk.engine.readers import document

# Imported even when BM25DESK_NO_EXTENSIONS=1 switches it off for the engine (then the engine's
# dict paths are what test_first_seen_equals_dict_setdefault checks).
_seen = pytest.importorskip("bm25desk.engine.readers._seen")

# Ids of every str kind (ASCII, Latin-1, BMP, astral, a lone surrogate) and bytes.
KEYS = st.one_of(
    st.text(alphabet="ab\xe9\u4e00\U0001f642\udcff", max_size=6),
    st.binary(max_size=6),
)


@given(ops=st.lists(st.tuples(KEYS, st.integers(-(2**62), 2**62)), max_size=300))
@settings(max_examples=200, deadline=None)
def test_first_seen_equals_dict_setdefault(ops: list[tuple[str | bytes, int]]) -> None:
    check, ref = document.first_seen(), {}
    for key, value in ops:
        assert check(key, value) == ref.setdefault(key, value)


def test_table_grows_past_many_ids_and_keeps_them_apart() -> None:
    """200,000 ids (the arrays and the index grow many times); "a" and b"a" are two ids."""
    table = _seen.FirstSeen()
    for n in range(200_000):
        assert table.setdefault(f"p{n}", n) == n
    assert all(table.setdefault(f"p{n}", -1) == n for n in range(0, 200_000, 997))
    assert table.setdefault(b"p5", 7) == 7
    assert len(table) == 200_001
    with pytest.raises(TypeError, match="str or bytes"):
        table.setdefault(5, 1)
    with pytest.raises(KeyError):
        table["never seen"]


@given(terms=st.lists(st.text(alphabet="ab\xe9\u4e00\U0001f642\udcff", max_size=5), max_size=200))
@settings(max_examples=100, deadline=None)
def test_compact_vocabulary_assigns_ids_like_the_dict_one(terms: list[str]) -> None:
    """The build's vocabulary (compact or not) and the table it is made of give a dict's ids."""
    compact, plain, table = TermIds(), DictTermIds(), _seen.FirstSeen(assign=True)
    expected = [plain[t] for t in terms]
    assert [compact[t] for t in terms] == expected == [table[t] for t in terms]
    assert list(compact) == list(plain)
    assert len(compact) == len(plain) == len(table)
    assert [table.key(i) for i in range(len(table))] == list(plain)
    with pytest.raises(IndexError):
        table.key(len(table))
