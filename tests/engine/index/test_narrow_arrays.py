"""Format 4 stores offsets and counts as uint32 where they fit, int64 otherwise; both read alike.

The int64 case (a segment of over 4 G postings, tokens or bytes) is simulated by widening every
narrow array of a small index: it must open, pass ``check`` and answer exactly as the narrow one,
through the kernel and the exhaustive path.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine.index.arrays import U32_MAX, index_dtype, narrow
from bm25desk.engine.index.build import build_index
from bm25desk.engine.index.check import check_index
from bm25desk.engine.index.integrity import file_checksum
from bm25desk.engine.index.manifest import manifest_checksum
from bm25desk.engine.index.npyio import NpyReader
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import IndexCorruptError
from bm25desk.engine.index.store import IndexStore
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import get_variant

NARROW = ("ptr", "cf", "bptr", "blk_off", "tptr", "terms.off", "docid.off", "title.off", "loc.off")


def test_narrow_picks_uint32_while_every_value_fits() -> None:
    assert narrow(np.array([0, 5, U32_MAX], dtype=np.int64)).dtype == np.uint32
    assert narrow(np.array([0, U32_MAX + 1], dtype=np.int64)).dtype == np.int64
    assert narrow(np.array([-1, 3], dtype=np.int64)).dtype == np.int64
    assert narrow(np.zeros(0, dtype=np.int64)).dtype == np.uint32
    assert narrow(np.array([7, 9], dtype=np.int64)).tolist() == [7, 9]
    assert index_dtype(U32_MAX) is np.uint32
    assert index_dtype(U32_MAX + 1) is np.int64


def test_npy_reader_widens_narrow_offsets_and_refuses_other_types(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.array([0, 3, U32_MAX], dtype=np.uint32))
    r = NpyReader(tmp_path / "a.npy", np.int64)
    got = r.read(1, 3)
    r.close()
    assert got.dtype == np.int64
    assert got.tolist() == [3, U32_MAX]
    np.save(tmp_path / "b.npy", np.array([0, 3], dtype=np.int32))
    with pytest.raises(IndexCorruptError, match="wrong type"):
        NpyReader(tmp_path / "b.npy", np.int64)


@pytest.fixture
def narrow_store(tmp_path: Path, synth_tsv: Path) -> IndexStore:
    store = IndexStore(tmp_path / "store")
    build_index(synth_tsv, name="n", store=store)
    return store


def _segment_dirs(path: Path) -> list[Path]:
    m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    return [path / e["name"] for e in m["segments"]]


def test_a_built_segment_stores_its_offsets_and_counts_narrow(narrow_store: IndexStore) -> None:
    for seg in _segment_dirs(narrow_store.path("n")):
        assert json.loads((seg / "meta.json").read_text(encoding="utf-8"))["format"] == 4
        for name in NARROW:
            assert np.load(seg / f"{name}.npy").dtype == np.uint32, name
        assert np.load(seg / "text.off.npy").dtype == np.int64  # compressed text: unchanged


def _widen(path: Path) -> None:
    """Rewrite every narrow array as int64 (what a segment over 4 G writes), checksums updated."""
    m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    for seg in _segment_dirs(path):
        for name in NARROW:
            f = seg / f"{name}.npy"
            np.save(f, np.load(f).astype(np.int64), allow_pickle=False)
            rel = f.relative_to(path).as_posix()
            m["files"][rel] = {"size": f.stat().st_size, "xxh3": file_checksum(f)}
    m["checksum"] = manifest_checksum(m)
    for name in ("manifest.json", f"manifest-{m['generation']}.json"):  # and its copy
        (path / name).write_text(json.dumps(m), encoding="utf-8")


def _ranking(index: Index, query: str, kernel: bool) -> list[tuple[int, str]]:
    searcher = Searcher(index)
    variant = get_variant("lucene")
    terms = []
    for term in index.analyzer.terms(query):
        w = searcher.weight(term, variant)
        if w is not None:
            terms.append((term, 1, w))
    top = topk.top_k(index, terms, 20, kernel=kernel)
    return [(int(d), float(s).hex()) for d, s in zip(top.docnos, top.scores, strict=True)]


def test_wide_offsets_answer_exactly_like_narrow_ones(narrow_store: IndexStore) -> None:
    queries = ["w1 w7 w300", "w599", "w0 w1 w2 w3", "w42 w420 nothing"]
    with narrow_store.open("n") as index:
        want = {q: _ranking(index, q, kernel=True) for q in queries}
        assert all(_ranking(index, q, kernel=False) == want[q] for q in queries)
        terms = index.top_terms(20)
    _widen(narrow_store.path("n"))
    for seg in _segment_dirs(narrow_store.path("n")):
        assert np.load(seg / "ptr.npy").dtype == np.int64
    assert check_index("n", store=narrow_store).ok
    with narrow_store.open("n") as index:
        for q in queries:
            assert _ranking(index, q, kernel=True) == want[q]
            assert _ranking(index, q, kernel=False) == want[q]
        assert index.top_terms(20) == terms
