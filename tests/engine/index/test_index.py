"""Index store, build, incremental update and segments: exact statistics, atomic writes, crash
safety and clear errors for damaged indexes."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index import ingest as ingest_mod
from bm25desk.engine.index.build import build_index, update_index
from bm25desk.engine.index.reader import FORMAT, Index
from bm25desk.engine.index.segment import IndexCorruptError, SegmentWriter
from bm25desk.engine.index.store import IndexStore, StoreError, default_name, slugify
from bm25desk.engine.progress import Cancelled, CancelToken
from bm25desk.engine.readers.corpus import CorpusError
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import Okapi, all_variants, get_variant

QUERIES = [
    "red sweet",
    "apple banana cherry",
    "berry wine",
    "the",
    "fig zucchini",
    "sweet sweet red",
]
VARIANTS = [*all_variants(), get_variant("okapi", k1=0.5, b=0.3), get_variant("bm25adpt", b=0.2)]


def _snapshot(index: Index) -> dict[tuple[str, str], dict[str, tuple[float, bool]]]:
    """Score of every live document (by docid) for every query and variant."""
    s = Searcher(index)
    out = {}
    for q in QUERIES:
        parsed = s.parse(q)
        for v in VARIANTS:
            scores, ok = s.scores(parsed, v)
            out[(q, repr(v))] = {
                index.docid(d): (float(scores[d]), bool(ok[d]))
                for d in range(index.n_slots)
                if index.is_live(d)
            }
    return out


def assert_same_collection(updated: Index, fresh: Index) -> None:
    """Every statistic and every score of ``updated`` equals that of ``fresh``, per docid."""
    assert updated.n_docs == fresh.n_docs
    assert updated.total_len == fresh.total_len
    assert updated.avgdl == fresh.avgdl
    assert updated.n_terms == fresh.n_terms
    assert updated.vocabulary() == fresh.vocabulary()
    assert updated.stats.df_all().tolist() == fresh.stats.df_all().tolist()
    assert Okapi().mean_idf(updated.stats) == Okapi().mean_idf(fresh.stats)
    live_u = {docid for _, docid, _, _ in updated.iter_live()}
    live_f = {docid for _, docid, _, _ in fresh.iter_live()}
    assert live_u == live_f
    for docid in live_f:
        du, df_ = updated.docno(docid), fresh.docno(docid)
        ru, rf = updated.doc(du), fresh.doc(df_)
        assert (ru.title, ru.length, ru.mtime, ru.size) == (rf.title, rf.length, rf.mtime, rf.size)
        assert updated.text(du) == fresh.text(df_)
    for term in fresh.vocabulary():
        su, sf = updated.term_stats(term), fresh.term_stats(term)
        assert (su.df, su.cf) == (sf.df, sf.cf), term
        pu = dict(zip(map(updated.docid, updated.postings(term)[0].tolist()),
                      updated.postings(term)[1].tolist(), strict=True))  # fmt: skip
        pf = dict(zip(map(fresh.docid, fresh.postings(term)[0].tolist()),
                      fresh.postings(term)[1].tolist(), strict=True))  # fmt: skip
        assert pu == pf, term
        assert sorted(map(updated.docid, updated.title_docnos(term).tolist())) == sorted(
            map(fresh.docid, fresh.title_docnos(term).tolist())
        )
    assert _snapshot(updated) == _snapshot(fresh)  # exact float equality, per docid


def _files_named_by_manifest(index_dir: Path) -> set[str]:
    m = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))
    names = {"manifest.json", f"manifest-{m['generation']}.json", m["skips"]}
    for e in m["segments"]:
        names.add(e["name"])
        if e["deleted"]:
            names.add(e["deleted"])
    if m["lexicon"]:
        names.add(m["lexicon"])
    return names


def _content(index_dir: Path) -> set[str]:
    """The index's own entries: dot-names are bookkeeping (reader leases, verification stamps)."""
    return {p.name for p in index_dir.iterdir() if not p.name.startswith(".")}


def _tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.relative_to(path).parts[0].startswith(".")
    }


# -- store ----------------------------------------------------------------------------------------


def test_build_and_open_tiny_tsv(
    store: IndexStore, tiny_tsv: Path, data_dir: Path, tiny_docs
) -> None:
    report = build_index(tiny_tsv, store=store)
    assert report.name == "tiny"  # default name from the file name
    assert (report.read, report.indexed, report.n_docs) == (6, 6, 6)
    assert report.skipped == ()
    assert "Indexed 6 of 6 records into 'tiny'" in report.summary()
    assert (data_dir / "indexes" / "tiny" / "manifest.json").is_file()
    assert store.names() == ["tiny"]
    assert store.exists("tiny")
    index = store.open("tiny")
    analyzer = Analyzer()
    lengths = [len(analyzer.terms(f"{t}\n{b}")) for _, t, b in tiny_docs]
    assert index.doclen.tolist() == lengths  # exact lengths in analysed tokens
    assert index.avgdl == sum(lengths) / 6
    assert index.n_terms == len({w for _, t, b in tiny_docs for w in analyzer.terms(f"{t}\n{b}")})
    for docno, (docid, title, body) in enumerate(tiny_docs):
        rec = index.doc(docno)
        assert (rec.docid, rec.title, rec.location) == (
            docid,
            title,
            f"https://example.org/{docid}",
        )
        assert index.text(docno) == f"{title}\n{body}"
        assert index.docno(docid) == docno
    assert index.docno("missing") is None
    docs, tfs = index.postings("cat")
    assert index.docid(int(docs[0])) == "tiny-1"
    assert tfs.tolist() == [2, 1]
    assert docs.tolist() == sorted(docs.tolist())
    assert index.term_id("nonexistent") == -1
    assert index.term_stats("nonexistent") is None
    assert index.top_terms(1)[0][0] == "the"
    info = store.info("tiny")
    assert (info.n_docs, info.segments, info.error) == (6, 1, "")
    assert info.analyzer == index.manifest["analyzer"]


def test_manifest_contents(tiny_index: Index, tiny_tsv: Path) -> None:
    m = tiny_index.manifest
    assert m["format"] == FORMAT
    assert m["name"] == "tiny"
    assert m["source"]["path"] == str(tiny_tsv.resolve())
    assert m["source"]["format"] == "msmarco-docs"
    assert Analyzer.from_spec(m["analyzer"]) == Analyzer()
    assert {"nltk", "whoosh"} <= set(m["analyzer"])
    assert m["stats"]["n_docs"] == 6
    assert len(m["fingerprint"]) == 16
    assert (m["report"]["read"], m["report"]["indexed"], m["report"]["skipped"]) == (6, 6, 0)


def test_arrays_are_npy_without_pickle_and_memory_mapped(synth_index: Index) -> None:
    """No pickle anywhere; postings are memory-mapped, not read into memory."""
    for p in synth_index.path.rglob("*.npy"):
        arr = np.load(p, allow_pickle=False)  # raises on any object array
        assert arr.dtype != object
    seg = synth_index.segments[0]
    for arr in (seg.blk_last, seg.blk_off, seg.ptr, seg.doclen):
        base = arr
        while isinstance(base, np.ndarray) and not isinstance(base, np.memmap):
            base = base.base
        if isinstance(base, memoryview):  # np.frombuffer over a map
            base = base.obj
        assert isinstance(base, (np.memmap, mmap.mmap)), "postings must be memory-mapped"
    assert isinstance(seg.blocks, mmap.mmap), "the blocks must be memory-mapped"
    assert not list(synth_index.path.rglob("*.pkl"))
    assert not list(synth_index.path.rglob("*.pickle"))


def test_analyser_is_stored_and_reused(store: IndexStore, tiny_tsv: Path) -> None:
    a = Analyzer.create(stopwords="en", stemmer="porter", min_length=2)
    build_index(tiny_tsv, name="stemmed", store=store, analyzer=a)
    index = store.open("stemmed")
    assert index.analyzer == a
    r = Searcher(index).search("watching birds", k=3)
    assert r.analysis.terms == ("watch", "bird")
    assert r.hits[0].docid == "tiny-3"


def test_store_names_and_errors(store: IndexStore, tiny_tsv: Path) -> None:
    with pytest.raises(StoreError, match=r"no index named 'nope' \(indexes: none yet\)"):
        store.open("nope")
    build_index(tiny_tsv, name="one", store=store)
    with pytest.raises(StoreError, match=r"no index named 'nope' \(indexes: one\)"):
        store.open("nope")
    for bad in (".hidden", "a/b", "x" * 65, "spaces here", "-dash"):
        with pytest.raises(StoreError, match="invalid index name"):
            build_index(tiny_tsv, name=bad, store=store)
    with pytest.raises(CorpusError, match="no such file or folder"):
        build_index(tiny_tsv.parent / "missing.tsv", store=store)
    store.delete("one")
    assert store.names() == []
    assert not store.exists("one")
    with pytest.raises(StoreError, match="no index named 'one'"):
        store.delete("one")
    assert not list(store.root.iterdir())  # nothing left behind


def test_default_names(tmp_path: Path) -> None:
    assert slugify("CISI.ALL") == "cisi"
    assert slugify("My Docs!") == "my-docs"
    assert default_name(Path("/data/scifact/corpus.jsonl")) == "scifact"
    assert default_name(Path("/data/notes")) == "notes"
    docs = tmp_path / "rel" / "docs"
    docs.mkdir(parents=True)
    assert default_name(docs) == "docs"  # a folder keeps its own name, however generic


def test_rebuild_replaces_the_old_index(store: IndexStore, tiny_tsv: Path) -> None:
    build_index(tiny_tsv, name="t", store=store)
    tiny_tsv.write_text("x1\thttp://x\tNew\tonly new words\n", encoding="utf-8")
    build_index(tiny_tsv, name="t", store=store)
    index = store.open("t")
    assert index.n_docs == 1
    assert index.docid(0) == "x1"
    assert sorted(p.name for p in store.root.iterdir()) == ["t"]


def test_folder_index_keeps_paths_titles_and_mtimes(
    store: IndexStore, tiny_folder: Path, tiny_docs
) -> None:
    build_index(tiny_folder, name="folder", store=store)
    index = store.open("folder")
    assert [index.docid(d) for d in range(index.n_docs)] == [f"{d}.txt" for d, _, _ in tiny_docs]
    rec = index.doc(0)
    assert rec.title == "Cats and dogs"
    assert rec.location == str(tiny_folder / "tiny-1.txt")
    assert rec.mtime == 1_600_000_000.0
    assert rec.size == (tiny_folder / "tiny-1.txt").stat().st_size
    assert index.source["kind"] == "folder"


@pytest.mark.slow
@pytest.mark.parametrize("merged", ["in runs", "into one"])
def test_several_segments_score_like_one(
    monkeypatch, store: IndexStore, synth_index: Index, merged: str
) -> None:
    """A build split into several segments (memory budget) has a merged lexicon and the same
    scores; so does one whose postings were flushed in many chunks. Small segments are merged
    up to MERGE_POSTINGS: by default into one."""
    from bm25desk.engine.index import segment as segment_mod

    source = Path(synth_index.source["path"])
    total = sum(int(s.ptr[-1]) for s in synth_index.segments)
    monkeypatch.setattr(ingest_mod, "SEGMENT_POSTINGS", total // 12)
    if merged == "in runs":
        monkeypatch.setattr(ingest_mod, "MERGE_POSTINGS", total // 4)
    monkeypatch.setattr(segment_mod.SegmentWriter, "FLUSH_TOKENS", 3_000)
    build_index(source, name="split", store=store)
    split = store.open("split")
    if merged == "in runs":
        assert len(split.segments) >= 3
        assert split.manifest["lexicon"]
    else:
        assert len(split.segments) == 1
        assert int(split.segments[0].ptr[-1]) == total
    assert [split.docid(d) for d in range(split.n_docs)] == [
        synth_index.docid(d) for d in range(synth_index.n_docs)
    ]
    assert split.stats.df_all().tolist() == synth_index.stats.df_all().tolist()
    s1, s2 = Searcher(split), Searcher(synth_index)
    for q in ("w1 w17 w230", "w0 w0 w599 w3"):
        for v in all_variants():
            a, _ = s1.scores(s1.parse(q), v)
            b, _ = s2.scores(s2.parse(q), v)
            assert a.tolist() == b.tolist(), v.key


# -- incremental update == fresh build ------------------------------------------------------------

FILES_V0 = {
    "a.txt": "Alpha apple\nThe apple is red and the apple is sweet.\n",
    "b.txt": "Banana\nA banana is yellow; bananas grow in bunches.\n",
    "c.md": "# Cherry\n\nCherries are red. Cherry pie is sweet.\n",
    "sub/d.txt": "Durian\nThe durian smells strong but tastes sweet.\n",
    "e.txt": "Elderberry\nElderberry syrup, elderberry wine, red berries.\n",
}


def _set(folder: Path, rel: str, text: str, mtime: float) -> None:
    p = folder / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    os.utime(p, (mtime, mtime))


def test_incremental_update_equals_fresh_build(
    store: IndexStore, tmp_path: Path, folder_writer
) -> None:
    folder = tmp_path / "docs"
    folder_writer(folder, FILES_V0)
    build_index(folder, name="inc", store=store)
    t = 1_700_000_000.0
    steps = [
        # 1. two new files (one in a new sub-folder)
        lambda: (
            _set(folder, "f.txt", "Fig\nFig and zucchini, red and sweet.\n", t + 1),
            _set(folder, "sub2/g.md", "# Grape\n\nGrape wine is red wine.\n", t + 2),
        ),
        # 2. change a file of the first segment, delete another
        lambda: (
            _set(folder, "a.txt", "Apple\nGreen apple, sour apple, apple apple.\n", t + 3),
            (folder / "b.txt").unlink(),
        ),
        # 3. change a file of the second segment, delete one of the first, add one
        lambda: (
            _set(folder, "f.txt", "Fig\nDried fig: sweet sweet sweet.\n", t + 4),
            (folder / "sub" / "d.txt").unlink(),
            _set(folder, "h.txt", "Huckleberry\nA red berry, the huckleberry.\n", t + 5),
        ),
        # 4. delete the rest of the first segment: it is dropped from the manifest
        lambda: ((folder / "c.md").unlink(), (folder / "e.txt").unlink()),
        # 5. same content, new mtime: re-read, same scores
        lambda: os.utime(folder / "h.txt", (t + 9, t + 9)),
    ]
    expected = [(2, 0, 0), (0, 1, 1), (1, 1, 1), (0, 0, 2), (0, 1, 0)]
    for i, (step, (added, changed, removed)) in enumerate(zip(steps, expected, strict=True), 1):
        step()
        report = update_index("inc", store=store)
        assert not report.rebuilt
        assert (report.added, report.changed, report.removed) == (added, changed, removed), i
        build_index(folder, name=f"fresh-{i}", store=store)
        updated = store.open("inc")
        assert updated.manifest["generation"] == i + 1
        assert_same_collection(updated, store.open(f"fresh-{i}"))
        # Files the manifest no longer names are collected.
        assert _content(updated.path) == _files_named_by_manifest(updated.path)
        if i >= 2:
            assert updated.docno("b.txt") is None
        updated.close()  # a live reader would keep its generation's files (tested elsewhere)
    first_segment = store.open("fresh-1").segments[0].path.name
    assert first_segment not in {e["name"] for e in store.open("inc").manifest["segments"]}
    # Nothing changed: nothing is written.
    before = _tree(store.path("inc"))
    report = update_index("inc", store=store)
    assert (report.added, report.changed, report.removed, report.rebuilt) == (0, 0, 0, False)
    assert _tree(store.path("inc")) == before


def test_update_of_a_corpus_file_rebuilds_only_when_it_changed(
    store: IndexStore, tiny_tsv: Path
) -> None:
    build_index(tiny_tsv, name="tiny", store=store)
    before = _tree(store.path("tiny"))
    report = update_index("tiny", store=store)
    assert not report.rebuilt
    assert report.indexed == 0
    assert _tree(store.path("tiny")) == before
    with tiny_tsv.open("a", encoding="utf-8") as fh:
        fh.write("tiny-7\thttp://x\tSeven\tseven new words\n")
    report = update_index("tiny", store=store)
    assert not report.rebuilt
    assert report.added == 1
    assert report.n_docs == 7
    assert store.open("tiny").docno("tiny-7") == 6


def test_update_of_a_vanished_source_is_a_clear_error(
    store: IndexStore, tmp_path: Path, folder_writer
) -> None:
    folder = tmp_path / "gone"
    folder_writer(folder, {"x.txt": "x\n"})
    build_index(folder, name="gone", store=store)
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    with pytest.raises(StoreError, match="the source of 'gone' is gone"):
        update_index("gone", store=store)


# -- a build or update killed half-way leaves the previous index intact ---------------------------


@pytest.fixture
def built(store: IndexStore, tiny_tsv: Path) -> tuple[IndexStore, Path, dict[str, bytes], object]:
    """An existing index "tiny", its files, and its scores; the source then changes."""
    build_index(tiny_tsv, name="tiny", store=store)
    before = _tree(store.path("tiny"))
    snap = _snapshot(store.open("tiny"))
    tiny_tsv.write_text("n1\thttp://n\tNew\tbrand new text\n", encoding="utf-8")
    return store, tiny_tsv, before, snap


def _assert_intact(store: IndexStore, before: dict[str, bytes], snap: object) -> None:
    assert store.names() == ["tiny"]
    assert _tree(store.path("tiny")) == before
    assert _snapshot(store.open("tiny")) == snap
    leftovers = [p.name for p in store.root.iterdir() if p.name != "tiny"]
    assert leftovers == []


def test_build_failing_in_the_segment_writer(monkeypatch, built) -> None:
    store, tsv, before, snap = built

    def boom(self):
        raise RuntimeError("disk full")

    monkeypatch.setattr(SegmentWriter, "finish", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        build_index(tsv, name="tiny", store=store)
    _assert_intact(store, before, snap)


def test_build_failing_in_commit(monkeypatch, built) -> None:
    store, tsv, before, snap = built

    def boom(*args, **kwargs):
        raise OSError("no space left on device")

    monkeypatch.setattr(commit_mod, "commit", boom)
    with pytest.raises(OSError, match="no space"):
        build_index(tsv, name="tiny", store=store)
    _assert_intact(store, before, snap)


def test_build_failing_in_os_replace(monkeypatch, built) -> None:
    """STYLE.md § 7: monkeypatch os.replace to raise — no partial directory is left."""
    store, tsv, before, snap = built

    def boom(src, dst):
        raise OSError("simulated crash in os.replace")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="simulated crash"):
        build_index(tsv, name="tiny", store=store)
    monkeypatch.undo()
    _assert_intact(store, before, snap)


def test_build_cancelled_from_the_progress_callback(built) -> None:
    store, tsv, before, snap = built
    token = CancelToken()
    calls = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        token.set()

    with pytest.raises(Cancelled):
        build_index(tsv, name="tiny", store=store, progress=progress, cancel=token)
    assert calls
    _assert_intact(store, before, snap)


def test_build_cancelled_in_the_middle_of_reading(store: IndexStore, synth_tsv: Path) -> None:
    """Cancel while documents are still being read and analysed: nothing is left behind, no file
    is left open (a ResourceWarning would fail the test), and the existing index is untouched."""
    source = synth_tsv
    build_index(source, name="cisi", store=store)
    before = _tree(store.path("cisi"))
    token = CancelToken()
    seen = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        token.set()

    with pytest.raises(Cancelled):
        build_index(source, name="cisi", store=store, progress=progress, cancel=token)
    assert seen[0] < source.stat().st_size  # cancelled before the end of the file
    assert [p.name for p in store.root.iterdir()] == ["cisi"]
    assert _tree(store.path("cisi")) == before


def test_rebuild_failing_at_its_commit_point_leaves_the_old_generation(monkeypatch, built) -> None:
    """A rebuild writes its new generation beside the old one in the index folder and commits it
    by replacing manifest.json; failing exactly there leaves the old generation, and the new
    generation's files are removed. (This replaced the two-rename directory swap: a rebuild no
    longer moves the folder from under its readers.)"""
    store, tsv, before, snap = built
    real_replace = os.replace

    def replace(src, dst):
        if Path(dst).name == "manifest.json":
            raise OSError("killed at the commit point")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="killed at the commit point"):
        build_index(tsv, name="tiny", store=store)
    monkeypatch.undo()
    _assert_intact(store, before, snap)


def test_stale_temporary_directories_are_removed_by_the_next_build(store, tiny_tsv) -> None:
    store.root.mkdir(parents=True)
    (store.root / ".tmp-tiny-deadbeef").mkdir()
    (store.root / ".trash-old-12345678").mkdir()
    assert store.names() == []  # recover() removes trash, not temporary dirs (maybe in use)
    assert (store.root / ".tmp-tiny-deadbeef").exists()
    assert not (store.root / ".trash-old-12345678").exists()
    build_index(tiny_tsv, name="tiny", store=store)
    assert [p.name for p in store.root.iterdir()] == ["tiny"]


def test_update_failing_half_way_leaves_the_index_as_it_was(
    monkeypatch, store: IndexStore, tmp_path: Path, folder_writer
) -> None:
    folder = tmp_path / "docs"
    folder_writer(folder, FILES_V0)
    build_index(folder, name="inc", store=store)
    _set(folder, "a.txt", "changed\n", 1_800_000_000.0)
    _set(folder, "new.txt", "new file\n", 1_800_000_001.0)
    before = _tree(store.path("inc"))
    snap = _snapshot(store.open("inc"))

    def boom(*args, **kwargs):
        raise OSError("crash while committing")

    monkeypatch.setattr(commit_mod, "commit", boom)
    with pytest.raises(OSError, match="crash while committing"):
        update_index("inc", store=store)
    monkeypatch.undo()
    assert _tree(store.path("inc")) == before
    assert _snapshot(store.open("inc")) == snap

    token = CancelToken()
    with pytest.raises(Cancelled):
        update_index("inc", store=store, progress=lambda d, t: token.set(), cancel=token)
    assert _tree(store.path("inc")) == before

    update_index("inc", store=store)  # and then it works
    build_index(folder, name="fresh", store=store)
    assert_same_collection(store.open("inc"), store.open("fresh"))


_KILLER = textwrap.dedent(
    """
    import os, pathlib, signal, sys
    from bm25desk.engine.index.build import build_index, update_index
    from bm25desk.engine.index.store import IndexStore

    root, source, mode = sys.argv[1:4]
    store = IndexStore(pathlib.Path(root))

    def die(*args):
        os.kill(os.getpid(), signal.SIGKILL)

    if mode == "build":
        build_index(source, name="victim", store=store, progress=die)
    elif mode == "commit":
        real = os.replace
        def replace(src, dst):
            if pathlib.Path(dst).name == "manifest.json":
                die()
            return real(src, dst)
        os.replace = replace
        build_index(source, name="victim", store=store)
    elif mode == "update":
        import bm25desk.engine.index.commit as b
        real_commit = b.commit
        def commit(directory, **kw):
            (directory / f"lex-g{kw['generation']}").mkdir()  # half-written lexicon
            die()
        b.commit = commit
        update_index("victim", store=store)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["build", "commit", "update"])
def test_a_killed_process_leaves_the_previous_index_usable(
    mode: str, store: IndexStore, tmp_path: Path, folder_writer
) -> None:
    """SIGKILL in the middle of a rebuild (while reading), at a rebuild's commit point, or in
    an update just before its commit: the previous index is still there and searchable, and the
    next build or update succeeds."""
    folder = tmp_path / "docs"
    folder_writer(folder, FILES_V0)
    build_index(folder, name="victim", store=store)
    snap = _snapshot(store.open("victim"))
    _set(folder, "a.txt", "changed apple\n", 1_800_000_000.0)
    _set(folder, "z.txt", "zucchini\n", 1_800_000_001.0)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.run(
        [sys.executable, "-c", _KILLER, str(store.root), str(folder), mode],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr.decode()
    assert store.names() == ["victim"]
    assert _snapshot(store.open("victim")) == snap
    if mode == "update":
        update_index("victim", store=store)
    else:
        build_index(folder, name="victim", store=store)
    build_index(folder, name="fresh", store=store)
    assert_same_collection(store.open("victim"), store.open("fresh"))
    assert sorted(p.name for p in store.root.iterdir() if not p.name.startswith(".tmp-")) == [
        "fresh",
        "victim",
    ]


# -- a damaged index gives a clear error ----------------------------------------------------------


def _segment_dir(store: IndexStore, name: str) -> Path:
    return next(p for p in store.path(name).iterdir() if p.name.startswith("seg-"))


def _truncate(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


DAMAGE = {
    "truncated postings": (
        lambda s: _truncate(_segment_dir(s, "cisi") / "blocks.bin", 0.5),
        "blocks.bin",
    ),
    "emptied lengths": (
        lambda s: _truncate(_segment_dir(s, "cisi") / "doclen.npy", 0.0),
        "doclen.npy",
    ),
    "truncated header": (
        lambda s: _truncate(_segment_dir(s, "cisi") / "blk_off.npy", 0.01),
        "blk_off.npy",
    ),
    "deleted postings": (
        lambda s: (_segment_dir(s, "cisi") / "blk_off.npy").unlink(),
        "missing: blk_off.npy",
    ),
    "deleted text": (
        lambda s: (_segment_dir(s, "cisi") / "text.zst").unlink(),
        "missing: text.zst",
    ),
    "truncated text": (lambda s: _truncate(_segment_dir(s, "cisi") / "text.zst", 0.9), "text.zst"),
    "deleted segment meta": (
        lambda s: (_segment_dir(s, "cisi") / "meta.json").unlink(),
        "meta.json",
    ),
    "garbage manifest": (
        lambda s: (s.path("cisi") / "manifest.json").write_bytes(b"\x00{not json"),
        "manifest.json",
    ),
    "array swapped for a shorter one": (
        lambda s: np.save(_segment_dir(s, "cisi") / "doclen.npy", np.arange(3, dtype=np.int32)),
        "arrays disagree in size",
    ),
}


def _edit_manifest(store: IndexStore, change) -> None:
    path = store.path("cisi") / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    change(m)
    path.write_text(json.dumps(m), encoding="utf-8")


MANIFEST_DAMAGE = {
    "format too new": (
        lambda m: m.update(format=FORMAT + 1),
        "newer than this bm25desk understands",
    ),
    "no format": (lambda m: m.pop("format"), "no format version"),
    "no stats": (lambda m: m.pop("stats"), "incomplete"),
    "no analyser": (lambda m: m.pop("analyzer"), "incomplete"),
    "bad segment entry": (lambda m: m.update(segments=[{"nom": "x"}]), "bad segment entry"),
    "segments not a list": (lambda m: m.update(segments=7), "not a list"),
    "unknown segment": (
        lambda m: m["segments"][0].update(name="seg-nothere"),
        "missing: meta.json",
    ),
    "unknown tokenizer": (
        lambda m: m["analyzer"].update(tokenizer="nonsense"),
        "unknown tokenizer",
    ),
}


@pytest.fixture
def cisi_copy(store: IndexStore, synth_index: Index) -> IndexStore:
    """A private copy of an index (the synthetic corpus, named "cisi") to damage."""
    import shutil

    shutil.copytree(synth_index.path, store.root / "cisi")
    assert store.open("cisi").n_docs == synth_index.n_docs
    return store


@pytest.mark.parametrize("damage", list(DAMAGE) + list(MANIFEST_DAMAGE))
def test_damaged_index_gives_a_clear_error(damage: str, cisi_copy: IndexStore) -> None:
    store = cisi_copy
    if damage in DAMAGE:
        act, words = DAMAGE[damage]
        act(store)
    else:
        change, words = MANIFEST_DAMAGE[damage]
        _edit_manifest(store, change)
    with pytest.raises(IndexCorruptError) as err:
        store.open("cisi")
    message = str(err.value)
    assert message.startswith("index 'cisi' is damaged (")
    assert words in message
    assert "rebuild it with 'bm25desk index' or delete it" in message
    assert "\n" not in message
    # The index is still listed, its info shows the problem or its numbers, and it can be deleted.
    assert store.names() == ["cisi"]
    store.info("cisi")
    store.delete("cisi")
    assert store.names() == []


def test_info_of_a_damaged_manifest_reports_the_error(cisi_copy: IndexStore) -> None:
    (cisi_copy.path("cisi") / "manifest.json").write_text("[]", encoding="utf-8")
    info = cisi_copy.info("cisi")
    assert "not a JSON object" in info.error
    assert info.size_bytes > 0


def test_deletion_mask_of_the_wrong_size(store: IndexStore, tmp_path: Path, folder_writer) -> None:
    folder = tmp_path / "docs"
    folder_writer(folder, FILES_V0)
    build_index(folder, name="cisi", store=store)
    (folder / "b.txt").unlink()
    update_index("cisi", store=store)
    m = json.loads((store.path("cisi") / "manifest.json").read_text(encoding="utf-8"))
    dele = next(e["deleted"] for e in m["segments"] if e["deleted"])
    np.save(store.path("cisi") / dele, np.zeros(2, dtype=bool))
    with pytest.raises(IndexCorruptError, match="does not fit its segment"):
        store.open("cisi")


def test_folder_include_and_exclude_apply_to_build_and_update(
    store: IndexStore, tmp_path: Path, folder_writer
) -> None:
    folder = tmp_path / "docs"
    folder_writer(
        folder, {**FILES_V0, "drafts/x.txt": "draft apple\n", "notes.md": "# N\n\napple\n"}
    )
    build_index(folder, name="filtered", store=store, exclude=["drafts/*"], include=["*.txt"])
    index = store.open("filtered")
    assert sorted(d for _, d, _, _ in index.iter_live()) == ["a.txt", "b.txt", "e.txt", "sub/d.txt"]
    assert index.source["exclude"] == ["drafts/*"]
    assert index.source["include"] == ["*.txt"]
    report = update_index("filtered", store=store)  # the same filters: nothing to do
    assert (report.added, report.changed, report.removed) == (0, 0, 0)
    _set(folder, "drafts/y.txt", "another draft\n", 1_800_000_000.0)
    _set(folder, "f.txt", "fig\n", 1_800_000_001.0)
    report = update_index("filtered", store=store)
    assert (report.added, report.changed, report.removed) == (1, 0, 0)
    assert store.open("filtered").docno("f.txt") is not None
