"""Issue 15 (opening): an index checked before opens without reading its arrays through.

A stamp in ``.stamps.json`` stands for a file's checksum *and* its segment's full structural
check; it is saved only once both have passed. These tests show what an open trusts, that it
trusts nothing a failed check saw, and that whatever changes is checked again; and that the
``.npy`` header fast path reads exactly what numpy does, leaving anything else to numpy.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine import IndexStore, Searcher, add_documents, build_index
from bm25desk.engine.index import arrays, blocks, integrity
from bm25desk.engine.index import reader as reader_mod
from bm25desk.engine.index import segment as segment_mod
from bm25desk.engine.index.arrays import IndexCorruptError, load_array, parse_header
from bm25desk.engine.index.check import check_index
from bm25desk.engine.index.integrity import checksum_entries
from bm25desk.engine.index.manifest import manifest_checksum


@pytest.fixture
def stamp_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stamp files however recently they changed (tests cannot wait out the racy window)."""
    monkeypatch.setattr(integrity, "RACY_SECONDS", -1.0)
    monkeypatch.setattr(integrity, "FINE_RACY_SECONDS", -1.0)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the full structural checks and statistics checks an open runs."""
    seen = {"full": 0, "stats": 0}
    full, stats = integrity._full_check, reader_mod.check_statistics

    def counted_full(*args, **kwargs):
        seen["full"] += 1
        return full(*args, **kwargs)

    def counted_stats(*args, **kwargs):
        seen["stats"] += 1
        return stats(*args, **kwargs)

    monkeypatch.setattr(integrity, "_full_check", counted_full)
    monkeypatch.setattr(reader_mod, "check_statistics", counted_stats)
    return seen


def _hits(index, query: str = "w1 w2 w7 w30") -> list[tuple[str, float]]:
    return [(h.docid, h.score) for h in Searcher(index).search(query, k=20).hits]


@pytest.fixture
def built(store: IndexStore, synth_tsv: Path) -> Path:
    build_index(synth_tsv, name="s", store=store)
    return store.path("s")


def _rehash(index_dir: Path, rels: list[str]) -> None:
    """Make the manifest agree with crafted files (only the structural checks stand)."""
    path = index_dir / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    m["files"].update(checksum_entries(index_dir, rels))
    m["checksum"] = manifest_checksum(m)
    path.write_text(json.dumps(m), encoding="utf-8")


def _segment(index_dir: Path) -> str:
    return json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))["segments"][0][
        "name"
    ]


def test_a_checked_index_opens_without_reading_arrays_through(
    store: IndexStore, synth_tsv: Path, calls: dict[str, int]
) -> None:
    build_index(synth_tsv, name="s", store=store)
    # The build checked its files once and stamped them (the real racy window: it waits it out).
    assert calls == {"full": 1, "stats": 1}
    with store.open("s") as first:
        expected = _hits(first)
        n_terms, df = first.n_terms, first.term_df("w1")
    assert calls == {"full": 1, "stats": 1}  # the user's first open reads nothing through
    with store.open("s") as second:
        assert calls == {"full": 1, "stats": 1}  # nothing read through again
        assert "_df" not in second.__dict__  # no per-term array differenced at open
        assert _hits(second) == expected
        tid = second._lexicon.find("w1")
        assert second.term_df("w1") == df == int(np.diff(second.segments[0].ptr)[tid])
        assert second.n_terms == n_terms == second._count_terms()


def test_a_failed_structural_check_leaves_nothing_trusted(
    store: IndexStore, built: Path, stamp_now: None
) -> None:
    """Before: the files were stamped once their checksums matched, before the structural
    check; a crafted (re-hashed) file refused at the first open was trusted at the second."""
    seg = _segment(built)
    rel = f"{seg}/docid_order.npy"
    np.save(built / rel, np.zeros_like(np.load(built / rel)), allow_pickle=False)
    _rehash(built, [rel])
    for _ in range(2):
        with pytest.raises(IndexCorruptError, match="permutation"):
            store.open("s")


def test_a_file_changed_after_its_check_is_checked_again(
    store: IndexStore, built: Path, stamp_now: None
) -> None:
    store.open("s").close()
    seg = _segment(built)
    rel = f"{seg}/ptr.npy"
    ptr = np.load(built / rel)
    ptr[1], ptr[2] = ptr[2] + 3, ptr[1]  # decreasing: only a read-through sees it
    np.save(built / rel, ptr, allow_pickle=False)
    _rehash(built, [rel])
    with pytest.raises(IndexCorruptError, match=r"ptr\.npy is not in order"):
        store.open("s")


def test_changed_manifest_statistics_are_checked_again(
    store: IndexStore, built: Path, stamp_now: None
) -> None:
    store.open("s").close()
    m = json.loads((built / "manifest.json").read_text(encoding="utf-8"))
    m["stats"]["n_terms"] += 1
    m["checksum"] = manifest_checksum(m)
    (built / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(IndexCorruptError, match="vocabulary size"):
        store.open("s")


def test_stamps_are_a_cache(store: IndexStore, built: Path, stamp_now: None, calls) -> None:
    """Lost or garbled stamps cost a re-check, nothing else; a copy of the index trusts nothing."""
    with store.open("s") as index:
        expected = _hits(index)
    assert calls["full"] == 0  # the build stamped what it checked
    (built / integrity.STAMPS).write_text("{not json", encoding="utf-8")
    with store.open("s") as index:
        assert _hits(index) == expected
    assert calls["full"] == 1
    copy = built.with_name("copy")
    shutil.copytree(built, copy)  # new inodes: the stamps do not match
    with store.open("copy") as index:
        assert _hits(index) == expected
    assert calls["full"] == 2


def test_check_stamps_what_it_checked(
    store: IndexStore, built: Path, stamp_now: None, calls: dict[str, int]
) -> None:
    """``bm25desk check`` reads everything; the opens after it need not read it again."""
    assert not check_index("s", store=store).problems
    full_after_check = calls["full"]
    store.open("s").close()
    assert calls["full"] == full_after_check


def test_check_of_a_damaged_index_stamps_nothing(
    store: IndexStore, built: Path, stamp_now: None
) -> None:
    seg = _segment(built)
    rel = f"{seg}/docid_order.npy"
    np.save(built / rel, np.zeros_like(np.load(built / rel)), allow_pickle=False)
    _rehash(built, [rel])
    assert check_index("s", store=store).problems
    with pytest.raises(IndexCorruptError, match="permutation"):
        store.open("s")


# -- the .npy header fast path --------------------------------------------------------------------


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(1000, dtype=np.uint32),
        np.arange(1000, dtype=np.int64) - 500,
        np.arange(1000, dtype=np.int32),
        np.linspace(0, 1, 1000),
        np.arange(1000) % 3 == 0,
        np.zeros(0, dtype=np.int64),
        np.arange(5, dtype=np.uint8),
    ],
    ids=["u4", "i8", "i4", "f8", "b1", "empty", "tiny"],
)
def test_arrays_load_as_numpy_reads_them(tmp_path: Path, arr: np.ndarray) -> None:
    path = tmp_path / "a.npy"
    np.save(path, arr, allow_pickle=False)
    got = load_array(path)
    want = np.load(path, allow_pickle=False)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert np.array_equal(got, want)
    assert not got.flags.writeable  # mapped read-only
    assert load_array(path, mmap=False).flags.writeable  # a private copy
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    header = parse_header(buf.getvalue()[:256])
    assert header is not None
    assert header[:2] == (arr.dtype, arr.size)


def test_other_headers_are_left_to_numpy(tmp_path: Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.arange(12, dtype=np.int32).reshape(3, 4), allow_pickle=False)
    assert parse_header(path.read_bytes()[:256]) is None
    with pytest.raises(IndexCorruptError, match="wrong shape"):
        load_array(path)
    with open(path, "wb") as fh:
        np.save(fh, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    assert parse_header(path.read_bytes()[:256]) is None
    with pytest.raises(IndexCorruptError, match="damaged"):
        load_array(path)
    big_endian = np.arange(1000, dtype=">i8")
    np.save(path, big_endian, allow_pickle=False)
    got = load_array(path)  # read as stored: its dtype then fails the index's type checks
    assert got.dtype == np.dtype(">i8")
    assert np.array_equal(got, big_endian)


def test_a_truncated_array_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.arange(1000, dtype=np.int64), allow_pickle=False)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 8])
    with pytest.raises(IndexCorruptError, match=r"a\.npy is truncated"):
        load_array(path)
    path.write_bytes(data[:40])  # inside the header
    with pytest.raises(IndexCorruptError, match=r"a\.npy"):
        load_array(path)
    path.unlink()
    with pytest.raises(IndexCorruptError, match=r"missing: a\.npy"):
        load_array(path)


def test_prefetch_is_only_a_hint(store: IndexStore, built: Path) -> None:
    """A term's blocks are asked for at its first look-up; ids out of range ask for nothing."""
    with store.open("s") as index:
        expected = _hits(index)
        seg = index.segments[0]
        for tid in (-1, 0, len(seg.lexicon) - 1, len(seg.lexicon), 10**9):
            seg.prefetch(tid)
        assert _hits(index) == expected


class _Asked:
    """Stands in for the compiled codec's read-ahead calls, recording what is asked for."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.asked: list[tuple[str, int]] = []

    def prefetch(
        self, data: object, off: object, bptr: object, t: int, end: int, resident: object = None
    ) -> int:
        self.asked.append(("prefetch", t))
        return 0

    def prefetch_many(
        self, data: object, off: object, bptr: object, ids: list[int], resident: object = None
    ) -> int:
        self.asked.extend(("prefetch_many", t) for t in ids)
        return 0

    def resident(self, data: object) -> None:
        return None  # no residency map: every term is asked for

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


@pytest.mark.parametrize("small", [True, False])
def test_a_small_index_s_postings_are_asked_for_whole_at_open_and_not_per_term(
    store: IndexStore, built: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    """Up to WHOLE_READ_AHEAD, one WILLNEED over blocks.bin at open and no request per term;
    above it, none at open and each term's blocks asked for. The same hits either way."""
    with store.open("s") as index:
        expected = _hits(index)
    if not small:
        monkeypatch.setattr(segment_mod, "WHOLE_READ_AHEAD", 0)
    advised: list[tuple[int, int | None]] = []
    real_advise = segment_mod.advise
    monkeypatch.setattr(
        segment_mod,
        "advise",
        lambda data, advice: advised.append((len(data), advice)) or real_advise(data, advice),
    )
    with store.open("s") as index:
        seg = index.segments[0]
        assert seg.read_ahead_whole is small
        whole = (len(seg.blocks), arrays.WILLNEED)
        assert (whole in advised) is (small and arrays.WILLNEED is not None)
        fake = _Asked(blocks._blocks)
        monkeypatch.setattr(blocks, "_blocks", fake)
        seg.prefetch(0)
        seg.prefetch_many([1, 2])
        if arrays.WILLNEED is not None:  # (elsewhere nothing is ever asked for)
            assert fake.asked == ([] if small else [("prefetch", 0), ("prefetch_many", 1),
                                                    ("prefetch_many", 2)])  # fmt: skip
        monkeypatch.setattr(blocks, "_blocks", fake.real)
        assert _hits(index) == expected


def test_many_small_segments_are_read_ahead_only_if_small_together(
    store: IndexStore, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget is the index's: segments small one by one but not together are read a term
    at a time (a cold open would otherwise read them all); opening a segment alone (builds,
    checks, merges) asks for nothing."""
    more = tmp_path / "more.tsv"
    more.write_text("x1\tw1 w2 extra words\nx2\tw7 w30 more words\n", encoding="utf-8")
    add_documents("s", more, store=store)
    with store.open("s") as index:
        sizes = [len(s.blocks) for s in index.segments]
        assert len(sizes) == 2
        assert all(s.read_ahead_whole for s in index.segments)
    monkeypatch.setattr(segment_mod, "WHOLE_READ_AHEAD", sum(sizes) - 1)  # each fits, not both
    with store.open("s") as index:
        assert not any(s.read_ahead_whole for s in index.segments)
        assert max(sizes) <= segment_mod.WHOLE_READ_AHEAD
    first = next(p for p in store.path("s").iterdir() if p.name.startswith("seg"))
    assert not segment_mod.Segment(first).read_ahead_whole


class _FakeMap:
    """Records madvise calls (an mmap's C methods cannot be patched)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.calls: list[tuple[int, int, int]] = []

    def __len__(self) -> int:
        return self.size

    def madvise(self, advice: int, start: int = 0, length: int = 0) -> None:
        self.calls.append((advice, start, length))


def test_willneed_is_given_in_steps_the_kernel_honours(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linux reads at most its read-ahead window per MADV_WILLNEED and drops the rest."""
    monkeypatch.setattr(arrays, "WILLNEED", 3)  # Linux's values, on any platform
    monkeypatch.setattr(arrays, "RANDOM", 1)
    fake = _FakeMap(1 << 20)
    arrays.advise_range(fake, arrays.WILLNEED, 4096, 10 << 20)  # type: ignore[arg-type]
    starts = [a for _, a, _ in fake.calls]
    assert starts[0] == 4096
    assert all(n <= arrays._WILLNEED_STEP for _, _, n in fake.calls)
    covered = sum(n for _, _, n in fake.calls)
    assert covered == (1 << 20) - 4096  # to the end of the map, not past it
    fake.calls.clear()
    arrays.advise_range(fake, arrays.RANDOM, 0, 1 << 20)  # type: ignore[arg-type]
    assert fake.calls == [(arrays.RANDOM, 0, 1 << 20)]


def test_read_through_takes_any_array(tmp_path: Path) -> None:
    """Mapped, read and plain arrays alike (a hint: only maps are advised)."""
    path = tmp_path / "a.npy"
    np.save(path, np.arange(10_000, dtype=np.int64), allow_pickle=False)
    arrays.read_through(load_array(path), load_array(path, mmap=False), np.zeros(3))


def test_version_warnings_are_worked_out_when_asked(store: IndexStore, built: Path) -> None:
    """Reading package metadata costs ~10 ms: an open that only searches never does it."""
    m = json.loads((built / "manifest.json").read_text(encoding="utf-8"))
    m["analyzer"]["whoosh"] = "0.0.1"
    m["checksum"] = manifest_checksum(m)
    (built / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with store.open("s") as index:
        assert "warnings" not in index.__dict__
        assert any("whoosh 0.0.1" in w for w in index.warnings)


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_streamed_arrays_read_as_numpy_reads_them(tmp_path: Path, version) -> None:
    """Merges stream arrays in ranges: the same header parsing (2.0 headers: numpy's)."""
    from bm25desk.engine.index.npyio import NpyReader

    path = tmp_path / "a.npy"
    arr = np.arange(5000, dtype=np.uint32) * 3
    with open(path, "wb") as fh:
        np.lib.format.write_array(fh, arr, version=version, allow_pickle=False)
    reader = NpyReader(path, np.int64)  # an offset array stored narrow is read widened
    try:
        assert reader.n == arr.size
        got = reader.read(17, 4000)
        assert got.dtype == np.int64
        assert np.array_equal(got, arr[17:4000])
    finally:
        reader.close()
