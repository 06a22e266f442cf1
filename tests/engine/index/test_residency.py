"""Read-ahead asks only for what the page cache lacks (``resident``, ``Segment._resident_map``).

A large index's terms' blocks are asked for (MADV_WILLNEED) at each term's first look-up; on an
index the page cache already holds, the call reads nothing and costs ~1.5 µs. The segment takes a
map of which pages of blocks.bin are in memory (mincore) at open and now and then after, and a
term of at most 16 pages the map shows in memory is not asked for. Longer ones always are (were
they dropped since, faulting them back a page at a time would cost far more than the call).
These tests hand the kernel crafted maps, and check when a segment takes one.
"""

from __future__ import annotations

import mmap
import time
from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine import IndexStore, build_index
from bm25desk.engine.index import arrays, blocks
from bm25desk.engine.index import segment as segment_mod

pytestmark = pytest.mark.skipif(
    blocks._blocks is None or arrays.WILLNEED is None,
    reason="the C kernel is not loaded (or the system has no read-ahead advice)",
)

PAGE = mmap.PAGESIZE


def _arrays() -> tuple[np.ndarray, np.ndarray]:
    """Offsets of three terms: 0 in page 0 (100 bytes), 1 over 40 pages, 2 over 16 pages."""
    blk_off = np.array([0, 100, 40 * PAGE, 56 * PAGE], dtype=np.int64)
    bptr = np.array([0, 1, 2, 3], dtype=np.int64)
    return blk_off, bptr


def test_resident_maps_every_page_of_the_map(mapped: mmap.mmap) -> None:
    _ = mapped[5 * PAGE]  # read: in memory now
    got = blocks._blocks.resident(mapped)
    if got is None:  # (a system that cannot tell: every term is asked for)
        pytest.skip("mincore is not available here")
    assert len(got) == 64
    assert got[5] & 1
    # Not a page-aligned map: no map (nothing skipped), never an error.
    assert blocks._blocks.resident(memoryview(mapped)[1:]) is None
    assert blocks._blocks.resident(b"") is None


def test_a_short_range_the_map_shows_in_memory_is_not_asked_for(mapped: mmap.mmap) -> None:
    blk_off, bptr = _arrays()
    prefetch = blocks._blocks.prefetch
    all_in, none_in = b"\x01" * 64, b"\x00" * 64
    # (the bytes asked for run from the first page's start to the range's end)
    assert prefetch(mapped, blk_off, bptr, 0, 1) == 100  # no map: asked
    assert prefetch(mapped, blk_off, bptr, 0, 1, None) == 100
    assert prefetch(mapped, blk_off, bptr, 0, 1, none_in) == 100
    assert prefetch(mapped, blk_off, bptr, 0, 1, all_in) == 0
    assert prefetch(mapped, blk_off, bptr, 0, 1, b"\x03\x00") == 0  # only bit 0 counts
    assert prefetch(mapped, blk_off, bptr, 0, 1, b"\x02" * 64) == 100
    # 16 pages: skipped when all are in; one page out asks for the whole range.
    assert prefetch(mapped, blk_off, bptr, 2, 3, all_in) == 0
    one_out = bytearray(all_in)
    one_out[55] = 0
    assert prefetch(mapped, blk_off, bptr, 2, 3, bytes(one_out)) == 16 * PAGE


def test_a_long_range_is_asked_for_whatever_the_map_says(mapped: mmap.mmap) -> None:
    blk_off, bptr = _arrays()
    all_in = b"\x01" * 64
    got = blocks._blocks.prefetch(mapped, blk_off, bptr, 1, 2, all_in)
    assert got == 40 * PAGE  # pages 0..39: 40 > 16
    assert blocks._blocks.prefetch(mapped, blk_off, bptr, 0, 3, all_in) == 56 * PAGE


def test_a_map_too_short_or_of_the_wrong_type(mapped: mmap.mmap) -> None:
    blk_off, bptr = _arrays()
    assert blocks._blocks.prefetch(mapped, blk_off, bptr, 2, 3, b"\x01" * 55) == 16 * PAGE
    with pytest.raises(TypeError, match="resident must be bytes"):
        blocks._blocks.prefetch(mapped, blk_off, bptr, 0, 1, "\x01")
    with pytest.raises(TypeError, match="resident must be bytes"):
        blocks._blocks.prefetch_many(mapped, blk_off, bptr, [0], bytearray(64))


def test_prefetch_many_uses_the_map_term_by_term(mapped: mmap.mmap) -> None:
    blk_off, bptr = _arrays()
    all_in = b"\x01" * 64
    many = blocks._blocks.prefetch_many
    assert many(mapped, blk_off, bptr, [0, 1, 2], all_in) == 40 * PAGE
    assert many(mapped, blk_off, bptr, [0, 1, 2], None) == 100 + 40 * PAGE + 16 * PAGE
    assert many(mapped, blk_off, bptr, [0, 2]) == 100 + 16 * PAGE


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("residency")
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(600)]
    lines = [
        f"d{d}\t" + " ".join(words[int(i)] for i in rng.zipf(1.3, size=20) % 600)
        for d in range(300)
    ]
    (tmp / "docs.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_index(tmp / "docs.tsv", name="s", fmt="msmarco-passages", store=IndexStore(tmp / "x"))
    return tmp / "x"


class _Counted:
    """The compiled codec, counting the maps taken and the maps each prefetch is given."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.taken = 0
        self.given: list[object] = []

    def resident(self, data: object) -> object:
        self.taken += 1
        return self.real.resident(data)  # type: ignore[attr-defined]

    def prefetch(self, *args: object) -> int:
        self.given.append(args[5])
        return self.real.prefetch(*args)  # type: ignore[attr-defined, no-any-return]

    def prefetch_many(self, *args: object) -> int:
        self.given.append(args[4])
        return self.real.prefetch_many(*args)  # type: ignore[attr-defined, no-any-return]

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def test_a_large_index_takes_the_map_at_open_and_again_when_due(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segment_mod, "WHOLE_READ_AHEAD", 0)
    fake = _Counted(blocks._blocks)
    monkeypatch.setattr(blocks, "_blocks", fake)
    with IndexStore(store_dir).open("s") as index:
        seg = index.segments[0]
        assert fake.taken == 1  # at open
        kept = seg._resident
        assert kept is None or len(kept) == -(-len(seg.blocks) // PAGE)
        seg.prefetch(0)
        seg.prefetch_many([1, 2])
        assert fake.taken == 1  # not due yet: the same map
        assert fake.given == [kept, kept]
        seg._resident_until = 0.0  # due
        seg.prefetch(3)
        assert fake.taken == 2
        lo, hi = segment_mod.RESIDENT_EVERY
        assert fake.given[-1] is seg._resident
        assert lo <= seg._resident_until - time.monotonic() + 0.05
        assert seg._resident_until - time.monotonic() <= hi


def test_a_small_index_read_ahead_whole_takes_no_map(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _Counted(blocks._blocks)
    monkeypatch.setattr(blocks, "_blocks", fake)
    with IndexStore(store_dir).open("s") as index:
        seg = index.segments[0]
        assert seg.read_ahead_whole
        seg.prefetch(0)
        seg.prefetch_many([1, 2])
        assert fake.taken == 0
        assert fake.given == []
