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


@given(
    terms=st.lists(
        st.text(alphabet="a\x7f\x80\xe9\u07ff\u0800\u4e00\uffff\U00010000\U0001f642\ud800\udcff"),
        max_size=120,
    ),
    data=st.data(),
)
@settings(max_examples=150, deadline=None)
def test_sorted_utf8_sorts_a_vocabulary_as_its_utf8_sorts(terms: list[str], data) -> None:
    """A segment's lexicon: the chosen terms by ``encode("utf-8", "replace")``, ties by id."""
    np = pytest.importorskip("numpy")
    table = _seen.FirstSeen(assign=True)
    for t in terms:
        table[t]
    keys = [table.key(i) for i in range(len(table))]
    chosen = sorted(data.draw(st.sets(st.integers(0, max(len(keys) - 1, 0)))) if keys else [])
    got, lens, order = table.sorted_utf8(np.asarray(chosen, dtype=np.int64))
    expected = sorted(chosen, key=lambda i: (keys[i].encode("utf-8", "replace"), i))
    assert np.frombuffer(order, dtype=np.int64).tolist() == expected
    encoded = [keys[i].encode("utf-8", "replace") for i in expected]
    assert got == b"".join(encoded)
    assert np.frombuffer(lens, dtype=np.int64).tolist() == [len(e) for e in encoded]


def test_sorted_utf8_takes_bytes_keys_and_refuses_bad_ids() -> None:
    np = pytest.importorskip("numpy")
    table = _seen.FirstSeen()
    for key in (b"b\xff", "a", b"a", "\u4e00"):
        table.setdefault(key, 0)
    got, _, order = table.sorted_utf8(np.arange(4, dtype=np.int64))
    assert np.frombuffer(order, dtype=np.int64).tolist() == [1, 2, 0, 3]  # "a" before b"a": id
    assert got == b"aab\xff\xe4\xb8\x80"
    with pytest.raises(IndexError):
        table.sorted_utf8(np.array([4], dtype=np.int64))
    with pytest.raises(ValueError, match="int64"):
        table.sorted_utf8(b"\x00" * 5)
