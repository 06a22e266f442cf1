"""A query's new terms looked up together: the same ids, dfs and read-ahead as one by one.

``Lexicon.find_many`` (``_blocks.find_many``: the terms index's bisection and the stride's binary
search in C for a list of terms), ``Segment.prefetch_many`` and ``Index.term_dfs`` replace a
Python loop of several calls per term on a query's first use of its words; these tests compare
them with the per-term path on every term of a vocabulary, on terms absent from it (before the
first, after the last, between two), on odd strings (lone surrogates, non-ASCII, empty), and on
damaged lexicons (an error, never a read past the data).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest

from bm25desk.engine import IndexStore, add_documents, build_index, remove_documents
from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.segment import Segment

_needs_codec = pytest.mark.skipif(
    blocks._blocks is None, reason="the C kernel is not loaded (the codec's find_many)"
)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of 400 documents over ~900 words (ASCII, accented, CJK, digits)."""
    tmp = tmp_path_factory.mktemp("find_many")
    rng = np.random.default_rng(11)
    stems = ["w", "a", "zz", "é", "naïve", "日本", "x9", "q"]
    words = [f"{stems[i % len(stems)]}{i}" for i in range(900)]
    lines = []
    for d in range(400):
        n = int(rng.integers(2, 30))
        text = " ".join(words[int(i)] for i in rng.zipf(1.2, size=n) % len(words))
        lines.append(f"d{d}\t{text}")
    src = tmp / "docs.tsv"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_index(src, name="s", fmt="msmarco-passages", store=IndexStore(tmp / "store"))
    return tmp / "store"


def _probes(vocab: list[str]) -> list[str]:
    """Every term, and strings around them that are not terms."""
    odd = ["", "\x00", "0", "~", "\U0010ffff", "w1\ud800", "\udcff", "a" * 300, "日本語"]
    near = [t + "\x00" for t in vocab[::7]] + [t[:-1] for t in vocab[::5] if len(t) > 1]
    return vocab + odd + near + [t.upper() for t in vocab[::3]]


@_needs_codec
@pytest.mark.parametrize("stride", [1, 2, 3, 7, 128, 100_000])
def test_find_many_gives_the_python_search_s_ids(store_dir: Path, stride: int) -> None:
    with IndexStore(store_dir).open("s") as index:
        lex = index.segments[0].lexicon
        vocab = lex.terms()
        lex.STRIDE = stride  # the instance's: its terms index is sampled at this stride
        lex._index = None
        probes = _probes(vocab)
        want = [_python_search(lex, t) for t in probes]
        got = blocks._blocks.find_many(lex._data, lex._offsets, lex.terms_index(), stride, probes)
        assert got == want
        assert [got[i] for i in range(len(vocab))] == list(range(len(vocab)))


def _python_search(lex, term: str) -> int:
    """Lexicon._search's answer without the compiled codec."""
    with mock.patch.object(blocks, "_blocks", None):
        return lex._search(term)


@_needs_codec
def test_find_many_remembers_like_find(store_dir: Path) -> None:
    with IndexStore(store_dir).open("s") as a, IndexStore(store_dir).open("s") as b:
        la, lb = a.segments[0].lexicon, b.segments[0].lexicon
        probes = _probes(la.terms())
        assert la.find_many(probes) == [lb.find(t) for t in probes]
        assert la._found == lb._found
        with mock.patch.object(type(la), "_search", side_effect=AssertionError("searched")):
            assert la.find_many(probes) == [lb.find(t) for t in probes]  # all remembered


@_needs_codec
def test_term_dfs_gives_term_df_and_asks_for_the_same_blocks(store_dir: Path) -> None:
    with IndexStore(store_dir).open("s") as a, IndexStore(store_dir).open("s") as b:
        probes = list(dict.fromkeys(_probes(a.segments[0].lexicon.terms())))
        asked_one: list[int] = []
        asked_many: list[int] = []
        real_one = Segment.prefetch
        with (
            mock.patch.object(
                Segment,
                "prefetch",
                lambda self, t, end=None: asked_one.append(t) or real_one(self, t, end),
            ),
            mock.patch.object(Segment, "prefetch_many", lambda self, ids: asked_many.extend(ids)),
        ):
            want = [b.term_df(t) for t in probes]
            got = a.term_dfs(probes)
        assert got == want
        assert asked_many == asked_one  # each found term's blocks, once, in order
        assert asked_one
        assert a._tid_cache == b._tid_cache
        assert a.term_dfs(probes) == want  # remembered: nothing new


@_needs_codec
def test_prefetch_many_asks_for_each_term_s_blocks(store_dir: Path) -> None:
    with IndexStore(store_dir).open("s") as index:
        seg = index.segments[0]
        n = len(seg.bptr) - 1
        ids = [*range(n), -1, n, 10**9, 3, 3]
        want = sum(
            blocks._blocks.prefetch(seg.blocks, seg.blk_off, seg.bptr, t, t + 1) for t in ids
        )
        assert blocks._blocks.prefetch_many(seg.blocks, seg.blk_off, seg.bptr, ids) == want
        with pytest.raises(TypeError):
            blocks._blocks.prefetch_many(seg.blocks, seg.blk_off, seg.bptr, ["a"])


@_needs_codec
def test_find_many_on_a_damaged_lexicon_is_an_error_never_a_crash(store_dir: Path) -> None:
    with IndexStore(store_dir).open("s") as index:
        lex = index.segments[0].lexicon
        data, off = lex._data, np.array(lex._offsets, dtype=np.int64)
        probes = _probes(lex.terms())
        sample = lex.terms_index()
        rng = np.random.default_rng(5)
        errors = 0
        for _ in range(200):
            bad = off.copy()
            i = int(rng.integers(1, bad.size - 1))
            bad[i] = int(rng.choice([-3, len(data) + 5, 2**40, int(bad[i + 1]) + 1, 0]))
            try:
                got = blocks._blocks.find_many(data, bad, sample, lex.STRIDE, probes)
            except ValueError:
                errors += 1
                continue
            assert all(-1 <= g < bad.size - 1 for g in got)
        assert errors > 0
        with pytest.raises(ValueError, match="do not fit"):  # the map must hold the records
            blocks._blocks.find_many(data, np.array([0, len(data) + 1]), sample, 1, ["w1"])
        with pytest.raises(TypeError):
            blocks._blocks.find_many(data, off, [1, 2], 1, ["w1"])
        with pytest.raises(TypeError):
            blocks._blocks.find_many(data, off, sample, 128, [b"w1", "w2"])
        with pytest.raises(ValueError, match="stride"):
            blocks._blocks.find_many(data, off, sample, 0, ["w1"])
        damaged = mock.patch.object(lex, "_offsets", np.array([0, len(data) + 1]))
        with damaged, pytest.raises(IndexCorruptError):
            lex.find_many(["w1", "w2"])


@_needs_codec
@pytest.mark.parametrize("find", ["find", "find_many"])
def test_a_negative_record_start_is_refused_not_read(find: str) -> None:
    """A damaged offset below 0 where the search probes: the old check (ascending, within the
    data) let it through and memcmp read before the map, which crashed CI once."""
    data = np.frombuffer(b"aaaaabbbbb", np.uint8)
    bad = np.array([0, -3, 10], dtype=np.int64)
    call = {
        "find": lambda: blocks._blocks.find(data, bad, b"bbbbb", 0, 2),
        "find_many": lambda: blocks._blocks.find_many(data, bad, [b"aaaaa"], 2, ["bbbbb"]),
    }[find]
    with pytest.raises(ValueError, match="out of order"):
        call()


def test_kernel_arrays_are_views_of_the_segment_s_arrays(store_dir: Path) -> None:
    """The kernel's tuple hands over the very maps (no copy), as memoryviews."""
    with IndexStore(store_dir).open("s") as index:
        seg = index.segments[0]
        own = (seg.blocks, seg.blk_off, seg.blk_last, seg.ptr, seg.bptr, seg.ovf)
        for view, arr in zip(seg.kernel_arrays, own, strict=False):
            assert isinstance(view, memoryview)
            assert view.nbytes == memoryview(arr).nbytes
            raw = np.frombuffer(arr, dtype=np.uint8)
            assert not view.nbytes or np.shares_memory(np.asarray(view), raw)


def _no_read_ahead() -> Any:
    """Patch the segments' read-ahead to fail the test: look_up asks for none."""
    fail = AssertionError("read ahead")
    return (
        mock.patch.object(Segment, "prefetch", side_effect=fail),
        mock.patch.object(Segment, "prefetch_many", side_effect=fail),
    )


def test_look_up_remembers_term_id_s_ids_without_reading_ahead(store_dir: Path) -> None:
    """Index.look_up (an evaluation run's new terms, in one compiled call where it can be)."""
    with IndexStore(store_dir).open("s") as a, IndexStore(store_dir).open("s") as b:
        probes = _probes(a.segments[0].lexicon.terms())
        one, many = _no_read_ahead()
        with one, many:
            a.look_up([*probes, *probes[:50]])  # repeated terms: looked up once
        assert a._tid_cache == {t: b.term_id(t) for t in probes}
        assert any(v >= 0 for v in a._tid_cache.values())
        assert any(v < 0 for v in a._tid_cache.values())


def test_look_up_keeps_its_cache_bounded_and_right(store_dir: Path) -> None:
    with IndexStore(store_dir).open("s") as a, IndexStore(store_dir).open("s") as b:
        probes = _probes(a.segments[0].lexicon.terms())
        a._tid_cache.update((f"filler{i}", -1) for i in range(99_990))
        a.look_up(probes)
        assert len(a._tid_cache) <= 100_000
        assert {t: a._tid_cache[t] for t in probes} == {t: b.term_id(t) for t in probes}


def test_look_up_of_a_term_only_deleted_documents_hold(tmp_path: Path) -> None:
    """A term whose documents were all removed is in no document: -1, as term_id says, in one
    segment (its lexicon still lists the term) and after a second segment is added."""
    src = tmp_path / "docs.tsv"
    src.write_text("d0\talpha beta\nd1\tbeta gamma\nd2\tgamma solo\n", encoding="utf-8")
    store = IndexStore(tmp_path / "store")
    build_index(src, name="e", fmt="msmarco-passages", store=store)
    remove_documents("e", ["d2"], store=store)
    terms = ["alpha", "beta", "gamma", "solo", "delta", "absent"]
    for step in ("removed", "added"):
        if step == "added":
            more = tmp_path / "more.tsv"
            more.write_text("d3\tdelta alpha\n", encoding="utf-8")
            add_documents("e", more, store=store)  # a second segment
        with store.open("e") as a, store.open("e") as b:
            if step == "removed":
                assert a.segments[0].lexicon.find("solo") >= 0  # listed, in no live document
            one, many = _no_read_ahead()
            with one, many:
                a.look_up(terms)
            want = {t: b.term_id(t) for t in terms}
            assert {t: a._tid_cache[t] for t in terms} == want
            assert [want[t] for t in ("solo", "absent")] == [-1, -1]
            assert want["alpha"] >= 0


def test_look_up_counts_a_listed_term_of_df_0_as_absent(store_dir: Path) -> None:
    """As _look_up does: a term the lexicon lists but no live document holds is -1."""
    with IndexStore(store_dir).open("s") as a, IndexStore(store_dir).open("s") as b:
        vocab = a.segments[0].lexicon.terms()
        gone = {a.segments[0].lexicon.find(t) for t in vocab[::4]}
        for index in (a, b):
            real = index._term_df
            index._term_df = lambda tid, real=real: 0 if tid in gone else real(tid)
        # The one-call look-up reads dfs off ptr: the same listed terms made empty there.
        dfs = np.diff(np.asarray(a._ptr, dtype=np.int64))
        dfs[sorted(gone)] = 0
        a._ptr = np.concatenate([[0], np.cumsum(dfs)]).astype(np.int64)
        a.look_up(vocab)
        want = {t: b.term_id(t) for t in vocab}
        assert a._tid_cache == want
        assert sum(v == -1 for v in want.values()) == len(gone)
