"""Opening an index maps in what the page cache holds of the maps queries read (``map_in``).

A query's first touch of a mapped page costs a page fault even when the page is in memory (a few
µs in a VM). At open, the pages of the lexicon, the per-term arrays and the blocks that are in
memory are put in the page tables in one call per run (MADV_POPULATE_READ); pages not in memory
are left alone, so nothing is read from the device and a cold open costs as before.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import pytest

from bm25desk.engine import IndexStore, build_index
from bm25desk.engine.index import blocks
from bm25desk.engine.index import reader as reader_mod
from bm25desk.engine.index import segment as segment_mod

pytestmark = pytest.mark.skipif(blocks._blocks is None, reason="the C kernel is not loaded")

PAGE = mmap.PAGESIZE


def _map_in(data: object, limit: int) -> int:
    got = int(blocks._blocks.map_in(data, limit))
    if got < 0:
        pytest.skip("this system cannot map pages in (MADV_POPULATE_READ)")
    return got


def test_pages_in_memory_are_mapped_in_up_to_the_limit(mapped: mmap.mmap) -> None:
    resident = blocks._blocks.resident(mapped)
    if resident is None or not all(b & 1 for b in resident):
        pytest.skip("the file just written is not all in the page cache here")
    assert _map_in(mapped, 1 << 30) == 64 * PAGE
    assert _map_in(mapped, 3 * PAGE) == 3 * PAGE
    assert _map_in(mapped, 3 * PAGE + 1) == 3 * PAGE  # whole pages only
    assert _map_in(mapped, 0) == 0
    assert mapped[: 2 * PAGE] == bytes(range(256)) * (2 * PAGE // 256)  # the bytes unchanged


def test_pages_not_in_memory_are_not_read(tmp_path: Path) -> None:
    path = tmp_path / "cold.bin"
    path.write_bytes(b"\x07" * (32 * PAGE))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)  # (written back, so that the page cache may drop the pages)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    try:
        resident = blocks._blocks.resident(m)
        if resident is None or any(b & 1 for b in resident):
            pytest.skip("the page cache kept the file's pages here")
        assert _map_in(m, 1 << 30) == 0
        after = blocks._blocks.resident(m)
        assert after is not None
        assert not any(b & 1 for b in after)
    finally:
        m.close()


def test_buffers_that_are_not_page_aligned_maps_are_left_alone(mapped: mmap.mmap) -> None:
    if _map_in(mapped, PAGE) != PAGE:
        pytest.skip("the file just written is not in the page cache here")
    assert _map_in(memoryview(mapped)[1:], 1 << 30) == 0
    assert _map_in(b"", 1 << 30) == 0
    assert _map_in(bytearray(4 * PAGE), 1 << 30) == 0


def _build(tmp_path: Path, n_docs: int = 400) -> IndexStore:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(n_docs):
        (src / f"d{i}.txt").write_text(f"alpha beta gamma{i % 17} delta{i % 5} word{i}")
    store = IndexStore(tmp_path / "store")
    build_index(src, name="x", store=store, workers=1)
    return store


def test_opening_an_index_maps_in_what_queries_read_blocks_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _build(tmp_path)
    calls: list[list[object]] = []
    real = segment_mod.map_in

    def spy(maps: list[object], limit: int = segment_mod.MAP_IN_LIMIT) -> int:
        calls.append(list(maps))
        return real(maps, limit)

    monkeypatch.setattr(reader_mod, "map_in", spy)
    index = store.open("x")
    assert len(calls) == 1
    maps = calls[0]
    seg = index.segments[0]
    ids = {id(m) for m in maps}
    assert all(isinstance(m, (mmap.mmap, bytes)) for m in maps)
    for m in seg.lexicon.maps():  # the look-up's: the terms, their offsets, the hash
        assert id(m) in ids
    for arr in seg.kernel_arrays:  # everything the kernel reads for a term
        under = arr.obj
        if isinstance(under, mmap.mmap):
            assert id(under) in ids
    assert maps[-1] is seg.blocks  # the largest, last: the limit leaves it out first
    assert index.term_dfs(["alpha", "word7", "nothing"]) == [400, 1, 0]


def test_map_in_keeps_to_its_limit_and_its_scan(mapped: mmap.mmap, tmp_path: Path) -> None:
    if _map_in(mapped, PAGE) != PAGE:
        pytest.skip("the file just written is not in the page cache here")
    assert segment_mod.map_in([mapped], 100 * PAGE) == 64 * PAGE
    assert segment_mod.map_in([mapped, mapped], 20 * PAGE) == 20 * PAGE
    # A map larger than four times the limit is not even looked at.
    assert segment_mod.map_in([mapped], 15 * PAGE) == 0
    assert segment_mod.map_in([b"not a map", mapped], 16 * PAGE) == 16 * PAGE
