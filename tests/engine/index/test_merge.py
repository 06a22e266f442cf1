"""Segment merging: a merge of segments is byte-identical to one segment written in one go
(the compressed text: the same documents).

Random small corpora (hypothesis) are written once with a single :class:`SegmentWriter` and once
split over several writers; merging the parts, with tiny and default postings blocks, must give
the same files, byte for byte. Also: one-source merges, cancellation and failures leave no
destination behind, the merged segment opens and answers like the single one, and memory stays
bounded by the block size rather than the number of postings.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import tracemalloc
from array import array
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.index import blocks
from bm25desk.engine.index.merge import merge_segments
from bm25desk.engine.index.segment import IndexCorruptError, Segment, SegmentWriter, TermIds
from bm25desk.engine.index.textstore import ZBlob
from bm25desk.engine.progress import Cancelled, CancelToken

# (terms, title terms, docid, title, location, text, mtime, size)
Doc = tuple[list[str], list[str], str, str, str, str, float, int]

# Multi-byte characters (2, 3 and 4 UTF-8 bytes), NUL and prefixes of one another: the lexicon
# and docid order are by UTF-8 bytes, which the merge must reproduce exactly.
ALPHABET = st.sampled_from(["a", "b", "z", "\x00", "é", "ÿ", "€", "中", "\uffef", "𝔘", "😀"])
TERM = st.text(alphabet=ALPHABET, min_size=1, max_size=3)
DOCID = st.sampled_from(["d1", "d2", "d10", "é", "e", "", "𝔘x", "中"])  # few: duplicates


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[Doc], list[int]]:
    """Draw documents and cut points splitting them into 2-4 non-empty segments."""
    vocab = draw(st.lists(TERM, min_size=1, max_size=14, unique=True))
    term = st.sampled_from(vocab)
    doc = st.tuples(
        st.lists(term, max_size=12),  # may be empty
        st.lists(term, max_size=4),
        DOCID,
        st.text(max_size=6),
        st.text(max_size=6),
        st.text(max_size=10),
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(min_value=0, max_value=2**40),
    )
    docs = draw(st.lists(doc, min_size=2, max_size=14))
    n_parts = draw(st.integers(min_value=2, max_value=min(4, len(docs))))
    cuts = sorted(draw(st.sets(st.integers(1, len(docs) - 1), min_size=n_parts - 1,
                               max_size=n_parts - 1)))  # fmt: skip
    return docs, cuts


def write_segment(directory: Path, docs: list[Doc]) -> Path:
    """Write ``docs`` with one SegmentWriter."""
    writer = SegmentWriter(directory)
    for terms, title_terms, docid, title, loc, text, mtime, size in docs:
        writer.add(
            terms,
            title_terms,
            docid=docid,
            title=title,
            location=loc,
            text=text,
            mtime=mtime,
            size=size,
        )
    writer.finish()
    return directory


def write_parts(root: Path, docs: list[Doc], cuts: list[int]) -> list[Path]:
    """Write ``docs`` split at ``cuts`` as several segments under ``root``."""
    bounds = [0, *cuts, len(docs)]
    return [
        write_segment(root / f"part{i}", docs[a:b])
        for i, (a, b) in enumerate(itertools.pairwise(bounds))
    ]


def assert_same_segment(a: Path, b: Path) -> None:
    """Assert two segment directories hold the same files with the same bytes (the compressed
    text: the same documents; a merge copies the sources' zstd frames rather than recompress)."""
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert json.loads((a / "meta.json").read_text("utf-8")) == json.loads(
        (b / "meta.json").read_text("utf-8")
    )
    frames = {"text.zst", "text.zoff.npy", "text.zdoc.npy"}
    for name in names:
        if name not in frames:
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ta, tb = ZBlob(a, "text"), ZBlob(b, "text")
    assert list(ta.iter_bytes()) == list(tb.iter_bytes())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora(),
    block=st.integers(min_value=1, max_value=7),
    piece=st.integers(min_value=1, max_value=3),
)
def test_merge_equals_single_writer(
    corpus: tuple[list[Doc], list[int]], block: int, piece: int
) -> None:
    """Tiny postings blocks, and tiny pieces in the vocabulary and docid k-way merges."""
    docs, cuts = corpus
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        single = write_segment(root / "single", docs)
        parts = write_parts(root, docs, cuts)
        with mock.patch("bm25desk.engine.index.merge._piece_size", return_value=piece):
            meta = merge_segments(parts, root / "small", block_postings=block)
        assert_same_segment(single, root / "small")
        assert meta == json.loads((single / "meta.json").read_text("utf-8"))
        merge_segments(parts, root / "default")
        assert_same_segment(single, root / "default")


def test_unicode_terms_across_segments(tmp_path: Path) -> None:
    """Terms only in one segment, a one-document segment, empty documents and titles."""
    docs: list[Doc] = [
        (["zeta", "é", "a"], ["a", "a"], "x", "A", "l1", "t1", 1.5, 10),
        ([], [], "x", "", "", "", 0.0, 0),
        (["€", "😀", "a", "a"], ["😀"], "b", "T", "l", "t", 2.0, 3),
        (["\uffef", "aé", "a\x00"], [], "é", "", "", "", 0.0, 0),
        (["é", "zeta", "only-here"], ["title-only"], "a", "x", "y", "z", 3.0, 4),
    ]
    single = write_segment(tmp_path / "single", docs)
    parts = write_parts(tmp_path, docs, [1, 2, 4])
    for block in (1, 2, 3, 100):
        merge_segments(parts, tmp_path / f"m{block}", block_postings=block)
        assert_same_segment(single, tmp_path / f"m{block}")


def test_merged_segment_opens_and_answers(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(300)] + ["é", "中文", "😀"]
    docs: list[Doc] = []
    for i in range(400):
        terms = [vocab[j] for j in rng.integers(0, len(vocab), size=int(rng.integers(0, 30)))]
        title = [vocab[j] for j in rng.integers(0, len(vocab), size=int(rng.integers(0, 4)))]
        docs.append((terms, title, f"doc-{i % 350}", f"T{i}", f"/p/{i}", f"text {i}", i / 3, i))
    single = Segment(write_segment(tmp_path / "single", docs))
    parts = write_parts(tmp_path, docs, [1, 150, 151, 399])
    merge_segments(parts, tmp_path / "merged", block_postings=50)
    merged = Segment(tmp_path / "merged")
    assert merged.n_docs == single.n_docs == 400
    assert merged.lexicon.terms() == single.lexicon.terms()
    for tid, term in enumerate(single.lexicon.terms()):
        assert merged.lexicon.find(term) == tid
        for got, want in zip(merged.postings(tid), single.postings(tid), strict=True):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(merged.title_postings(tid), single.title_postings(tid))
    for i in (0, 5, 349, 399):
        docid = f"doc-{i % 350}"
        assert merged.find_docid(docid) == single.find_docid(docid)
        assert merged.texts.get(i) == f"text {i}"
    np.testing.assert_array_equal(merged.doclen, single.doclen)


def test_one_source_is_a_copy(tmp_path: Path) -> None:
    docs: list[Doc] = [
        (["b", "a", "b"], ["a"], "2", "t", "l", "x", 1.0, 1),
        (["c"], [], "1", "", "", "", 0.0, 0),
    ]
    src = write_segment(tmp_path / "src", docs)
    merge_segments([src], tmp_path / "copy", block_postings=1)
    assert_same_segment(src, tmp_path / "copy")


def test_empty_sources(tmp_path: Path) -> None:
    """Segments without documents contribute nothing; no sources give an empty segment."""
    docs: list[Doc] = [(["a"], ["b"], "1", "t", "l", "x", 1.0, 1)]
    empty = write_segment(tmp_path / "empty", [])
    src = write_segment(tmp_path / "src", docs)
    merge_segments([empty, src, empty], tmp_path / "m")
    assert_same_segment(src, tmp_path / "m")
    merge_segments([], tmp_path / "none")
    assert_same_segment(empty, tmp_path / "none")


def test_existing_dest_is_refused(tmp_path: Path) -> None:
    src = write_segment(tmp_path / "src", [(["a"], [], "1", "", "", "", 0.0, 0)])
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep").write_text("x")
    with pytest.raises(FileExistsError):
        merge_segments([src], dest)
    assert (dest / "keep").read_text() == "x"


def test_bad_block_size(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="block_postings"):
        merge_segments([], tmp_path / "m", block_postings=0)
    assert not (tmp_path / "m").exists()


def test_damaged_source_leaves_no_dest(tmp_path: Path) -> None:
    docs: list[Doc] = [(["a", "b"], ["c"], "1", "t", "l", "x", 1.0, 1)]
    a = write_segment(tmp_path / "a", docs)
    b = write_segment(tmp_path / "b", docs)
    good = (b / "blk_off.npy").read_bytes()
    (b / "blk_off.npy").write_bytes(good[:-4])  # truncated
    with pytest.raises(IndexCorruptError):
        merge_segments([a, b], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    (b / "blk_off.npy").write_bytes(good)
    (b / "blocks.bin").write_bytes(b"\xff" * (b / "blocks.bin").stat().st_size)  # garbled
    with pytest.raises(IndexCorruptError, match="postings damaged"):
        merge_segments([a, b], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    (b / "blocks.bin").unlink()
    with pytest.raises(IndexCorruptError):
        merge_segments([a, b], tmp_path / "m")
    assert not (tmp_path / "m").exists()


class _Countdown:
    """An event for :class:`CancelToken` that becomes set after ``n`` polls."""

    def __init__(self, n: int) -> None:
        self.n = n

    def set(self) -> None:
        self.n = 0

    def is_set(self) -> bool:
        self.n -= 1
        return self.n < 0


def test_cancel_at_every_check_leaves_no_dest(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    docs: list[Doc] = [
        ([f"t{j}" for j in rng.integers(0, 40, size=8)], ["x"], str(i), "", "", "", 0.0, 0)
        for i in range(30)
    ]
    single = write_segment(tmp_path / "single", docs)
    parts = write_parts(tmp_path, docs, [10, 20])
    dest = tmp_path / "m"
    for polls in range(10_000):
        try:
            merge_segments(parts, dest, cancel=CancelToken(_Countdown(polls)), block_postings=5)
        except Cancelled:
            assert not dest.exists()
            continue
        break
    assert polls > 10  # it was cancelled at many points before completing
    assert_same_segment(single, dest)


@pytest.mark.slow
def test_memory_is_bounded_by_the_block(tmp_path: Path) -> None:
    """Merging ~2 M postings in blocks of 100 k allocates far less than the postings' size."""
    rng = np.random.default_rng(0)
    vocab = [f"term{i}" for i in range(20_000)]
    parts = []
    for p in range(4):
        writer = SegmentWriter(tmp_path / f"p{p}")
        ids = rng.integers(0, len(vocab), size=(5_000, 100)).tolist()
        for d, row in enumerate(ids):
            writer.add(
                [vocab[j] for j in row], [], docid=f"{p}-{d}", title="", location="", text=""
            )
        writer.finish()
        parts.append(tmp_path / f"p{p}")
    tracemalloc.start()
    try:
        # Smaller pieces than the default ~256 k keys (a constant ~25 MB), for scale.
        with mock.patch("bm25desk.engine.index.merge._piece_size", return_value=4096):
            meta: dict[str, Any] = merge_segments(parts, tmp_path / "m", block_postings=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    postings_bytes = meta["nnz"] * 8  # docs + tfs, int32 each
    assert meta["nnz"] > 1_900_000
    # The numpy codec (no compiled extension) holds ~110 bytes per posting of a block while it
    # encodes one (its layout arrays), the compiled one ~20: still bounded by the block.
    bound = postings_bytes / 4 if blocks.compiled() else 120 * 100_000
    assert peak < bound, (peak, postings_bytes)
    merged = Segment(tmp_path / "m")
    assert int(merged.cf.sum(dtype=np.int64)) == int(merged.doclen.sum(dtype=np.int64))
    _docs, tfs = merged.postings_range(0, len(merged.lexicon))
    assert int(tfs.sum(dtype=np.int64)) == int(merged.doclen.sum(dtype=np.int64))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=corpora())
def test_shared_vocabulary_and_dropped_tokens(corpus: tuple[list[Doc], list[int]]) -> None:
    """Parts written like a build writes them: one shared TermIds, ids, -1 for dropped tokens."""
    docs, cuts = corpus
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vocabulary = TermIds()
        # Terms of the first document are dropped (id -1) wherever they occur.
        dropped = set(docs[0][0])
        for t in sorted(dropped):
            vocabulary[t]

        def ids(terms: list[str]) -> array[int]:
            return array("i", (-1 if t in dropped else vocabulary[t] for t in terms))

        def write(directory: Path, part: list[Doc]) -> Path:
            writer = SegmentWriter(directory, vocabulary)
            for terms, title_terms, docid, title, loc, text, mtime, size in part:
                writer.add_ids(
                    ids(terms),
                    set(ids(title_terms)),
                    docid=docid,
                    title=title,
                    location=loc,
                    text=text,
                    mtime=mtime,
                    size=size,
                )
            writer.finish()
            return directory

        single = write(root / "single", docs)
        bounds = [0, *cuts, len(docs)]
        parts = [write(root / f"p{a}", docs[a:b]) for a, b in itertools.pairwise(bounds)]
        merge_segments(parts, root / "m", block_postings=2)
        assert_same_segment(single, root / "m")
