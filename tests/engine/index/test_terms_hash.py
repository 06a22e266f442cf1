"""The lexicon's hash (``terms.hash.npy``): the same ids as the binary search, damage never a
wrong id, written alike by the compiled and the numpy writer and wherever a lexicon is written.

Every term and many strings that are not terms (empty, NUL, very long, lone surrogates encoded
with "replace", non-ASCII, prefixes and extensions of terms) are looked up through the hash,
compiled and in Python, and through the terms index of the same lexicon without its hash; on
lexicons of 0, 1, 2 and many terms, and on tables whose every key collides. Damaged tables
(random slots, ids out of range, no empty slot, the wrong size or type) give misses or
:class:`IndexCorruptError`, never another term's id. Indexes: every lexicon a build, an update,
an edit and a merge write has its hash, listed in the manifest and verified; an index written
before the hash (no such file) opens, searches and is updated as before.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine import IndexStore, build_index, update_index
from bm25desk.engine.index import blocks, termhash
from bm25desk.engine.index.arrays import IndexCorruptError, save_array
from bm25desk.engine.index.check import check_index
from bm25desk.engine.index.edit import add_documents, remove_documents
from bm25desk.engine.index.integrity import checksum_entries
from bm25desk.engine.index.lexicon import Lexicon, sort_terms, write_lexicon
from bm25desk.engine.index.manifest import manifest_checksum
from bm25desk.engine.index.merge import merge_segments
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import get_variant

CODECS = ["compiled", "python"] if blocks.compiled() else ["python"]

ODD = ["", "\x00", "a" * 5000, "\ud800", "a\udfff", "?", "é", "日本語", "\U0010ffff", "A", "~~"]
"""Keys that are odd, and terms of some lexicons below."""

CHARS = st.sampled_from(["a", "b", "z", "\x00", "é", "ÿ", "€", "中", "\ud800", "𝔘", "😀", "?"])


def _write(directory: Path, terms: list[str]) -> list[str]:
    """Write ``terms`` as a lexicon (distinct by their UTF-8 bytes); return them in id order."""
    seen: dict[bytes, str] = {}
    for t in terms:
        seen.setdefault(t.encode("utf-8", "replace"), t)
    distinct = list(seen.values())
    ordered = [distinct[i] for i in sort_terms(distinct).tolist()]
    directory.mkdir(parents=True, exist_ok=True)
    write_lexicon(directory, ordered)
    return ordered


def _keys(terms: list[str]) -> list[str]:
    """The terms, then strings around them (most not terms), then the odd keys."""
    near = []
    for t in terms[:300]:
        near += [t + "\x00", t + "a", t[:-1], t.upper(), t + "\ud800", t * 3]
    return terms + near + ODD


def _without_hash(directory: Path) -> Lexicon:
    """The same lexicon as written before the hash (its terms index searched)."""
    plain = directory.with_name(directory.name + "-plain")
    shutil.copytree(directory, plain)
    (plain / "terms.hash.npy").unlink()
    lex = Lexicon(plain)
    assert lex.hash_table is None
    return lex


def _ids(lex: Lexicon, keys: list[str], codec: str, mp: pytest.MonkeyPatch) -> list[int]:
    """Each key's id, looked up afresh (nothing remembered), one by one and in one call."""
    with mp.context() as m:
        if codec == "python":
            m.setattr(blocks, "_blocks", None)
        one = [lex._search(k) for k in keys]
        lex._found.clear()
        many = lex.find_many(list(keys))
        lex._found.clear()
    assert many == one
    return one


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 100, 3000])
def test_the_hash_gives_the_binary_search_s_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: str, size: int
) -> None:
    words = [f"w{i * 7919 % 10007}" for i in range(size)]
    if size >= 100:
        words += ODD[2:]  # odd strings as terms too (a lone surrogate's bytes: "?")
    terms = _write(tmp_path / "lex", words)
    lex = Lexicon(tmp_path / "lex")
    assert lex.hash_table is not None
    keys = _keys(terms)
    want = [_ids(_without_hash(tmp_path / "lex"), keys, "python", monkeypatch)][0]
    assert want[: len(terms)] == list(range(len(terms)))
    assert _ids(lex, keys, codec, monkeypatch) == want
    assert lex._index is None  # the terms index (every 128th term of the file) never read


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    terms=st.lists(st.text(CHARS, min_size=1, max_size=6), max_size=60),
    absent=st.lists(st.text(CHARS, max_size=8), max_size=30),
)
def test_any_lexicon_and_any_key(
    tmp_path_factory: pytest.TempPathFactory, terms: list[str], absent: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("lex")
    ordered = _write(tmp / "lex", terms)
    keys = ordered + absent + ODD
    mp = pytest.MonkeyPatch()
    try:
        want = _ids(_without_hash(tmp / "lex"), keys, "python", mp)
        for codec in CODECS:
            assert _ids(Lexicon(tmp / "lex"), keys, codec, mp) == want
    finally:
        mp.undo()


@settings(max_examples=40, deadline=None)
@given(
    terms=st.lists(st.binary(min_size=0, max_size=40), max_size=80, unique=True),
    long=st.lists(st.binary(min_size=30, max_size=300), max_size=40, unique=True),
)
def test_the_numpy_writer_writes_the_compiled_writer_s_bytes(
    terms: list[bytes], long: list[bytes]
) -> None:
    """Any bytes (empty records, long ones hashed in numpy's tail loop), in any order."""
    records = terms + long
    data = b"".join(records)
    off = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in records], out=off[1:])
    table = termhash.build_table_numpy(data, off)
    assert len(table) >= termhash.home_slots(len(records))
    assert (table != 0).sum() == len(records)
    h = [termhash.term_hash(r) for r in records]
    if blocks.compiled():
        assert table.tobytes() == blocks._blocks.terms_hash(data, off)
        assert table.tobytes() == blocks._blocks.terms_hash(data, off.astype(np.uint32))
        assert h == [blocks._blocks.term_hash(r) for r in records]


def test_a_python_build_writes_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the compiled extensions (BM25DESK_NO_EXTENSIONS=1), the same hash files."""
    src = _corpus(tmp_path)
    _corpus(tmp_path, 120, 40, "more.tsv")
    got = []
    for name in ("compiled", "python"):
        if name == "python":
            monkeypatch.setattr(blocks, "_blocks", None)
            monkeypatch.setenv("BM25DESK_NO_EXTENSIONS", "1")  # and in any worker
        store = IndexStore(tmp_path / name)
        build_index(src, name="c", fmt="msmarco-passages", store=store)
        add_documents("c", tmp_path / "more.tsv", fmt="msmarco-passages", store=store)
        with store.open("c") as index:
            got.append([(d / "terms.hash.npy").read_bytes() for d in _lexicon_dirs(index)])
    assert len(got[0]) == 3  # two segments and their merged lexicon
    assert got[0] == got[1]


@pytest.mark.parametrize("same", [0x0123456789ABCDEF, 0xFFFFFFFF89ABCDEF], ids=["start", "end"])
def test_colliding_keys_are_told_apart_by_their_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same: int
) -> None:
    """Every key hashed alike: one run of slots with the same check bits, searched through (from
    the last home slot: the run overflows into the slots past the homes)."""
    terms = _write(tmp_path / "lex", [f"t{i}" for i in range(300)] + ["é", "日本", "?"])
    data = (tmp_path / "lex" / "terms.bin").read_bytes()
    off = np.load(tmp_path / "lex" / "terms.off.npy")
    keys = _keys(terms)
    want = _truth(terms, keys)
    with monkeypatch.context() as m:
        m.setattr(termhash, "term_hash", lambda key: same)
        m.setattr(termhash, "_hashes", lambda d, o: np.full(len(o) - 1, same, np.uint64))
        table = termhash.build_table_numpy(data, off)
        home = ((same >> 32) * termhash.home_slots(len(terms))) >> 32
        assert len(table) == max(termhash.home_slots(len(terms)), home + len(terms))
        assert (table[home : home + len(terms)] != 0).all()  # one run, from the shared home
        save_array(tmp_path / "lex" / "terms.hash.npy", table)
        m.setattr(blocks, "_blocks", None)  # the Python look-up hashes with the patch
        lex = Lexicon(tmp_path / "lex")
        assert [lex._search(k) for k in keys] == want
    if blocks.compiled():  # its own hash: misses, never a wrong id
        got = _ids(Lexicon(tmp_path / "lex"), keys, "compiled", monkeypatch)
        assert all(g in (-1, w) for g, w in zip(got, want, strict=True))


def _truth(terms: list[str], keys: list[str]) -> list[int]:
    """The id of each key's UTF-8 bytes ("replace") among the terms', or -1."""
    ids = {t.encode("utf-8", "replace"): i for i, t in enumerate(terms)}
    return [ids.get(k.encode("utf-8", "replace"), -1) for k in keys]


def _damaged_tables(n: int, table: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Tables of the right size whose slots are damaged in several ways."""
    idbits = n.bit_length()
    ids = rng.integers(0, n + 1, size=table.size).astype(np.uint64)
    out = [
        rng.integers(0, 2**32, size=table.size, dtype=np.uint64).astype(np.uint32),  # random
        np.full(table.size, 2**32 - 1, dtype=np.uint32),  # no empty slot, ids out of range
        np.zeros(table.size, dtype=np.uint32),  # every slot empty
        np.roll(table, 1),  # shifted by a slot
        table[::-1].copy(),
        # Each slot's check bits kept, its id another term's (or past the end, or 0).
        ((table.astype(np.uint64) >> idbits << idbits) | ids).astype(np.uint32),
        ((table.astype(np.uint64) >> idbits << idbits) | (n + 1 + ids)).astype(np.uint32)
        if n + 1 + n < 2**idbits
        else table ^ 1,
    ]
    flip = table.copy()
    flip[rng.integers(0, table.size, size=max(1, table.size // 10))] ^= np.uint32(1 << 7)
    return [*out, flip]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("size", [1, 2, 50, 2000])
def test_a_damaged_table_misses_never_gives_a_wrong_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: str, size: int
) -> None:
    terms = _write(tmp_path / "lex", [f"d{i}" for i in range(size)])
    path = tmp_path / "lex" / "terms.hash.npy"
    good = np.load(path)
    keys = _keys(terms)
    truth = _truth(terms, keys)
    rng = np.random.default_rng(size)
    misses = 0
    for bad in _damaged_tables(len(terms), good, rng):
        save_array(path, bad)
        got = _ids(Lexicon(tmp_path / "lex"), keys, codec, monkeypatch)
        for k, g, w in zip(keys, got, truth, strict=True):
            assert g in (-1, w), k
        misses += sum(g != w for g, w in zip(got, truth, strict=True))
    assert misses  # the damage did make terms be missed


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros(0, dtype=np.uint32),  # too short
        np.zeros(10, dtype=np.uint32),
        np.zeros(10_000, dtype=np.uint32),  # too long
        np.zeros(76, dtype=np.int32),  # the right size, the wrong type
        np.zeros(76, dtype=np.uint64),
        np.zeros((2, 38), dtype=np.uint32),
    ],
)
def test_a_table_of_the_wrong_size_or_type_is_refused(tmp_path: Path, bad: np.ndarray) -> None:
    _write(tmp_path / "lex", [f"t{i}" for i in range(50)])  # 76 home slots
    path = tmp_path / "lex" / "terms.hash.npy"
    assert len(np.load(path)) >= 76
    np.save(path, bad)
    with pytest.raises(IndexCorruptError, match=r"terms\.hash\.npy"):
        Lexicon(tmp_path / "lex")
    path.write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(IndexCorruptError, match=r"terms\.hash\.npy"):
        Lexicon(tmp_path / "lex")


@pytest.mark.skipif(
    not blocks.compiled(), reason="the C kernel is not loaded (the compiled look-up's own checks)"
)
def test_the_compiled_look_up_checks_what_it_is_given(tmp_path: Path) -> None:
    terms = _write(tmp_path / "lex", [f"t{i}" for i in range(50)])
    lex = Lexicon(tmp_path / "lex")
    data, off, table = lex._data, lex.offsets, lex.hash_table
    find = blocks._blocks.hash_find
    assert find(data, off, table, terms) == list(range(50))
    with pytest.raises(ValueError, match="does not fit"):
        find(data, off, table[:-40], "t1")
    with pytest.raises(ValueError, match="do not fit"):
        find(data, np.array([0, len(data) + 1]), table, "t1")
    with pytest.raises(TypeError):
        find(data, off, table.astype(np.uint64), "t1")
    with pytest.raises(TypeError):
        find(data, off, table, b"t1")
    with pytest.raises(TypeError):
        find(data, off, table, ["t1", b"t2"])
    # A record the table names with offsets out of order: reported, never read.
    bad = np.array(off, dtype=np.int64)
    i = terms.index("t7")
    bad[i] = -5
    with pytest.raises(ValueError, match="out of order"):
        find(data, bad, table, "t7")
    bad[i] = bad[-1] + 3
    with pytest.raises(ValueError, match="out of order"):
        find(data, bad, table, "t7")
    lex._offsets = bad
    with pytest.raises(IndexCorruptError, match="terms"):
        lex.find_many(["t7", "t8"])
    with pytest.raises(IndexCorruptError, match="terms"):
        lex.find("t7")


# -- indexes --------------------------------------------------------------------------------------


def _corpus(tmp: Path, first: int = 0, n: int = 120, name: str = "docs.tsv") -> Path:
    """A TSV of passages (ASCII, accented, CJK words), appended to when it exists."""
    rng = np.random.default_rng(3 + first)
    stems = ["w", "zz", "é", "naïve", "日本", "x9"]
    words = [f"{stems[i % len(stems)]}{i}" for i in range(400)]
    lines = []
    for d in range(first, first + n):
        k = int(rng.integers(2, 25))
        text = " ".join(words[int(i)] for i in rng.zipf(1.3, size=k) % 400)
        lines.append(f"d{d}\t{text}" + (" apple" if d % 50 == 7 else ""))
    src = tmp / name
    with open(src, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return src


def _lexicon_dirs(index: Index) -> list[Path]:
    lex = index.manifest.get("lexicon")
    return [s.path for s in index.segments] + ([index.path / lex] if lex else [])


def _assert_hashes_fit(index: Index) -> None:
    """Every lexicon of the index has the hash its terms give, listed in the manifest."""
    for d in _lexicon_dirs(index):
        lex = Lexicon(d)
        assert lex.hash_table is not None, d
        assert lex.check_hash()
        rel = f"{d.relative_to(index.path).as_posix()}/terms.hash.npy"
        assert rel in index.manifest["files"]
        terms = lex.terms()
        assert lex.find_many(terms) == list(range(len(terms)))
        assert lex.find_many(["", "absent", "w1\ud800"]) == [-1, -1, -1]


def _ranking(index: Index) -> list[list[tuple[str, float]]]:
    s = Searcher(index)
    variant = get_variant("lucene", k1=1.2, b=0.75)
    out = []
    for q in ["w6 zz1", "naïve3 日本4 x95", "apple", "w0 w6 w12 missing", "é2 nothing"]:
        hits = s.search(q, variant, 10, syntax=False, contributions=False, count=False).hits
        out.append([(index.docid(h.docno), h.score) for h in hits])
    return out


def test_a_build_an_update_an_edit_and_a_merge_write_hashes_that_fit(tmp_path: Path) -> None:
    src = _corpus(tmp_path)
    store = IndexStore(tmp_path / "store")
    build_index(src, name="i", fmt="msmarco-passages", store=store)
    with store.open("i") as index:
        assert index.manifest["lexicon"] is None  # one segment: its own lexicon
        _assert_hashes_fit(index)
    _corpus(tmp_path, 120, 40)  # the file grew: its new records appended as a segment
    update_index("i", store=store)
    with store.open("i") as index:
        assert len(index.segments) == 2
        assert index.manifest["lexicon"]
        _assert_hashes_fit(index)
    add_documents("i", _corpus(tmp_path, 5, 3, "edit.tsv"), fmt="msmarco-passages", store=store)
    remove_documents("i", ["d9", "d130"], store=store)
    with store.open("i") as index:
        assert any(d is not None for d in index.deleted)
        _assert_hashes_fit(index)
        segments = [s.path for s in index.segments]
    assert check_index("i", store=store).ok
    merge_segments(segments, tmp_path / "merged")
    merged = Lexicon(tmp_path / "merged")
    assert merged.hash_table is not None
    assert merged.check_hash()
    terms = merged.terms()
    assert merged.find_many(terms) == list(range(len(terms)))


def test_an_index_written_before_the_hash_opens_searches_and_updates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written as the code before the hash wrote it: the same files but for the hash's."""
    src = _corpus(tmp_path)
    store = IndexStore(tmp_path / "store")
    with monkeypatch.context() as m:
        m.setattr(termhash, "write_table", lambda *a, **k: None)
        build_index(src, name="old", fmt="msmarco-passages", store=store)
    old_dir = store.root / "old"
    assert not list(old_dir.rglob("terms.hash.npy"))
    listed = json.loads((old_dir / "manifest.json").read_text("utf-8"))["files"]
    assert not any("hash" in f for f in listed)
    build_index(src, name="new", fmt="msmarco-passages", store=store)
    with store.open("old") as old, store.open("new") as new:
        assert old.segments[0].lexicon.hash_table is None
        assert new.segments[0].lexicon.hash_table is not None
        assert _ranking(old) == _ranking(new)
        assert old.segments[0].lexicon._index is not None  # searched through its terms index
        terms = new.segments[0].lexicon.terms()
        assert old.segments[0].lexicon.find_many(terms) == list(range(len(terms)))
    assert check_index("old", store=store).ok
    # An update: its new segment and merged lexicon have their hash; the old segment is kept
    # as it is (no new format: nothing to rewrite).
    _corpus(tmp_path, 120, 40)
    update_index("old", store=store)
    build_index(src, name="fresh", fmt="msmarco-passages", store=store)
    with store.open("old") as old, store.open("fresh") as fresh:
        first, added = old.segments
        assert first.lexicon.hash_table is None
        assert added.lexicon.hash_table is not None
        assert Lexicon(old.path / old.manifest["lexicon"]).check_hash()
        assert _ranking(old) == _ranking(fresh)
    assert check_index("old", store=store).ok


def test_a_missing_an_unlisted_or_a_damaged_hash_file_is_reported(tmp_path: Path) -> None:
    """A segment's and a merged lexicon's hash alike: the checksums the manifest lists."""
    src = _corpus(tmp_path)
    store = IndexStore(tmp_path / "store")
    build_index(src, name="i", fmt="msmarco-passages", store=store)
    _corpus(tmp_path, 120, 40)
    update_index("i", store=store)
    with store.open("i") as index:
        lexicons = _lexicon_dirs(index)
    assert len(lexicons) == 3
    for d in lexicons:
        path = d / "terms.hash.npy"
        rel = f"{d.name}/terms.hash.npy"
        good = path.read_bytes()
        # Damaged in place (the same size, other slots): its checksum.
        bad = bytearray(good)
        bad[200:240] = bytes(40)
        path.write_bytes(bytes(bad))
        with pytest.raises(IndexCorruptError, match=re.escape(rel)):
            Index(store.root / "i")
        report = check_index("i", store=store)
        assert not report.ok
        assert rel in report.as_text()
        # Missing from an index whose manifest lists it.
        path.unlink()
        with pytest.raises(IndexCorruptError, match=f"missing: {re.escape(rel)}"):
            Index(store.root / "i")
        assert not check_index("i", store=store).ok
        # Present but not listed.
        path.write_bytes(good)
        _edit_manifest(store.root / "i", rel, drop=True)
        with pytest.raises(IndexCorruptError, match=f"does not list {re.escape(rel)}"):
            Index(store.root / "i")
        assert not check_index("i", store=store).ok
        _edit_manifest(store.root / "i", rel)
        assert check_index("i", store=store).ok


def _edit_manifest(directory: Path, rel: str, drop: bool = False) -> None:
    """Drop a file's checksum from the manifest, or list its current one; seal it again."""
    path = directory / "manifest.json"
    m = json.loads(path.read_text("utf-8"))
    if drop:
        del m["files"][rel]
    else:
        m["files"].update(checksum_entries(directory, [rel]))
    m["checksum"] = manifest_checksum(m)
    path.write_text(json.dumps(m), "utf-8")
    (directory / ".stamps.json").unlink(missing_ok=True)


def test_the_full_check_builds_the_hash_again(tmp_path: Path) -> None:
    """A table that is not its lexicon's (a valid one of other terms, its checksum listed) fails
    the structural check: at the first open and in ``bm25desk check``, segment and merged
    lexicon alike."""
    src = _corpus(tmp_path)
    store = IndexStore(tmp_path / "store")
    build_index(src, name="i", fmt="msmarco-passages", store=store)
    _corpus(tmp_path, 120, 40)
    update_index("i", store=store)
    with store.open("i") as index:
        lexicons = _lexicon_dirs(index)
    for d in lexicons:
        keep = (d / "terms.hash.npy").read_bytes()
        other = tmp_path / "other" / d.name
        _write(other, [f"o{i}" for i in range(len(Lexicon(d)))])
        shutil.copyfile(other / "terms.hash.npy", d / "terms.hash.npy")
        rel = f"{d.name}/terms.hash.npy"
        _edit_manifest(d.parent, rel)
        if d.name.startswith("seg-"):
            with pytest.raises(IndexCorruptError, match="does not match the lexicon"):
                Index(d.parent)
        assert "does not match the lexicon" in check_index("i", store=store).as_text()
        (d / "terms.hash.npy").write_bytes(keep)
        _edit_manifest(d.parent, rel)
        assert check_index("i", store=store).ok
