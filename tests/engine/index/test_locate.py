"""``Index._locate`` bisects a Python list of segment bases: the same answers as the
``np.searchsorted`` it replaced, for every docno of a multi-segment index (with deletions) and for
any segment sizes, empty segments included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bm25desk.engine.index.reader import Index


def searchsorted_locate(index: Index, docno: Any) -> tuple[Any, Any]:
    """``Index._locate`` as it was (np.searchsorted over the bases array), after the range check."""
    s = int(np.searchsorted(index.bases, docno, side="right")) - 1
    return index.segments[s], docno - int(index.bases[s])


SIZES = (3, 1, 5, 2, 7, 1)
DELETED: tuple[tuple[int, ...], ...] = ((1,), (), (0, 4), (), (6,), (0,))


@pytest.fixture(scope="module")
def multi(make_segmented: object) -> Index:
    groups, n = [], 0
    for size in SIZES:
        groups.append([f"word w{(n + i) % 4} doc{n + i}" for i in range(size)])
        n += size
    index: Index = make_segmented(groups, DELETED, titles=True)  # type: ignore[operator]
    assert len(index.segments) == len(SIZES)
    return index


def test_locate_matches_searchsorted_for_every_docno(multi: Index) -> None:
    assert multi.n_slots == int(multi.bases[-1]) == sum(SIZES)
    assert type(multi.n_slots) is int
    for docno in range(multi.n_slots):
        seg, local = multi._locate(docno)
        old_seg, old_local = searchsorted_locate(multi, docno)
        assert seg is old_seg
        assert (local, type(local)) == (old_local, type(old_local))
        # numpy integers (docnos taken from arrays) locate the same, as numpy integers again.
        seg64, local64 = multi._locate(np.int64(docno))  # type: ignore[arg-type]
        old64 = searchsorted_locate(multi, np.int64(docno))
        assert seg64 is old64[0]
        assert (local64, type(local64)) == (old64[1], type(old64[1]))


def test_documents_read_through_locate(multi: Index) -> None:
    """doc/docid/text/docno/is_live agree with the segment layout (the docids are d0, d1, …)."""
    deleted = {sum(SIZES[:g]) + i for g, dels in enumerate(DELETED) for i in dels}
    for docno in range(multi.n_slots):
        rec = multi.doc(docno)
        assert (rec.docno, rec.docid, rec.title) == (docno, f"d{docno}", f"title {docno}")
        assert multi.docid(docno) == rec.docid
        assert multi.text(docno).startswith("word ")
        assert rec.length == int(multi.doclen[docno]) == 3
        assert multi.is_live(docno) == (docno not in deleted)
        assert multi.docno(f"d{docno}") == (None if docno in deleted else docno)


@pytest.mark.parametrize("bad", [-1, sum(SIZES), sum(SIZES) + 10])
def test_out_of_range_docnos(multi: Index, bad: int) -> None:
    with pytest.raises(IndexError, match="out of range"):
        multi._locate(bad)
    with pytest.raises(IndexError):
        multi.doc(bad)
    assert not multi.is_live(bad)


@given(st.lists(st.integers(0, 6), min_size=1, max_size=8))
def test_locate_with_any_segment_sizes(sizes: list[int]) -> None:
    """Empty segments repeat a base: both lookups pick the last segment starting at docno."""
    bases = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=bases[1:])
    fake: Any = Index.__new__(Index)
    fake.segments = [object() for _ in sizes]
    fake.bases = bases
    fake._base_list = bases.tolist()
    for docno in range(int(bases[-1])):
        seg, local = Index._locate(fake, docno)
        old = searchsorted_locate(fake, docno)
        assert seg is old[0]
        assert local == old[1]
        assert 0 <= local < sizes[fake.segments.index(seg)]
    with pytest.raises(IndexError):
        Index._locate(fake, int(bases[-1]))
