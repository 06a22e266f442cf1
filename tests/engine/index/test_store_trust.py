"""Issue 16 for the store: snapshots, locks, names, empty builds, skipped files and damage.

Each test reproduces a failure of the store before issue 16 (named in its docstring) and checks
the fix.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine import IndexStore, Searcher, build_index, update_index
from bm25desk.engine.index.changes import folder_changes
from bm25desk.engine.index.check import check_index
from bm25desk.engine.index.lock import WriterLock
from bm25desk.engine.index.manifest import FORMAT as MANIFEST_FORMAT
from bm25desk.engine.index.segment import IndexCorruptError
from bm25desk.engine.index.store import EmptyBuildError, IndexLockedError, StoreError

FILES = {
    "a.txt": "Apple\nA red apple, a sweet apple.\n",
    "b.txt": "Banana\nA yellow banana.\n",
    "c.md": "# Cherry\n\nA dark cherry pie.\n",
}


def _hits(index, query: str = "apple banana cherry") -> list[tuple[str, float]]:
    return [(h.docid, h.score) for h in Searcher(index).search(query, k=10).hits]


@pytest.fixture
def folder(tmp_path: Path, folder_writer) -> Path:
    root = tmp_path / "docs"
    folder_writer(root, FILES)
    return root


def test_a_reader_keeps_its_generation_through_update_and_rebuild(
    store: IndexStore, folder: Path
) -> None:
    """Before: an update deleted the files of the generation a reader had open (searches in
    another process failed with "index file missing: del-seg-…"); a rebuild removed the folder."""
    build_index(folder, name="f", store=store)
    old = store.open("f")
    before = _hits(old)
    files = {p for seg in old.segments for p in seg.path.iterdir()}
    (folder / "a.txt").unlink()
    (folder / "d.txt").write_text("Date\nA date and an apple.\n", encoding="utf-8")
    update_index("f", store=store)
    build_index(folder, name="f", store=store)  # a rebuild: a new generation in place
    assert all(p.exists() for p in files), "a live reader's files were deleted"
    assert _hits(old) == before
    assert store.current_generation("f") == old.generation + 2
    new = old.reopen_if_changed()
    assert new is not None
    assert new.generation == old.generation + 2
    assert new.reopen_if_changed() is None
    assert "a.txt" not in dict(_hits(new))
    old.close()
    update_index("f", store=store)  # nothing changed, so no commit and no collection
    (folder / "d.txt").write_text("Date\nchanged\n", encoding="utf-8")
    update_index("f", store=store)  # the next writer collects what no reader holds
    assert not any(p.exists() for p in files)
    new.close()


def test_a_second_writer_is_told_who_holds_the_index(store: IndexStore, folder: Path) -> None:
    """Before: the loser of two concurrent builds said "[Errno 2] No such file …"."""
    build_index(folder, name="f", store=store)
    with WriterLock(store.root, "f"):
        for write in (
            lambda: build_index(folder, name="f", store=store),
            lambda: update_index("f", store=store),
            lambda: store.delete("f"),
        ):
            with pytest.raises(
                IndexLockedError, match=rf"'f' is being updated by process {os.getpid()}"
            ):
                write()
    assert not (store.root / ".lock-f").exists()  # released and removed
    update_index("f", store=store)


def test_temporary_directories_do_not_collide_across_names(store: IndexStore, folder: Path) -> None:
    """Before: building "a" removed the in-progress build of "a-b" (.tmp-a-b-…)."""
    store.root.mkdir(parents=True)
    other = store.root / ".tmp-a-b-12345678"
    other.mkdir()
    stale = store.root / ".tmp-a-87654321"
    stale.mkdir()
    build_index(folder, name="a", store=store)
    assert other.exists()
    assert not stale.exists()


def test_another_source_needs_replace(store: IndexStore, folder: Path, tiny_tsv: Path) -> None:
    """Before: `index` silently replaced an index built from another source."""
    build_index(folder, name="x", store=store)
    with pytest.raises(StoreError, match=r"already exists, built from .*docs.*--replace"):
        build_index(tiny_tsv, name="x", store=store)
    assert store.open("x").n_docs == 3
    build_index(tiny_tsv, name="x", store=store, replace=True)
    assert store.open("x").n_docs == 6
    build_index(tiny_tsv, name="x", store=store)  # the same source: a plain rebuild


def test_an_empty_name_is_refused(store: IndexStore, folder: Path) -> None:
    """Before: --name "" built an index named after the folder."""
    with pytest.raises(StoreError, match="name is empty"):
        build_index(folder, name="", store=store)
    assert store.names() == []


def test_an_empty_folder_is_refused_unless_allowed(store: IndexStore, tmp_path: Path) -> None:
    """Before: an empty folder "succeeded" with a 0-document index."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "a.bin").write_bytes(b"\x00\x01\x02\x03")
    (empty / "b.txt").write_bytes(b"")
    with pytest.raises(EmptyBuildError) as err:
        build_index(empty, name="e", store=store)
    message = str(err.value)
    assert message.startswith(f"no documents found in {empty}; 2 files skipped: ")
    assert "b.txt (" in message
    assert "--allow-empty" in message
    assert store.names() == []
    assert not list(store.root.iterdir())
    report = build_index(empty, name="e", store=store, allow_empty=True)
    assert report.n_docs == 0
    index = store.open("e")
    result = Searcher(index).search("anything", k=10)
    assert (result.hits, result.n_matches, index.n_docs, index.n_terms) == ((), 0, 0, 0)


def test_skipped_files_do_not_count_as_changes(
    store: IndexStore, folder: Path, tmp_path: Path
) -> None:
    """Before: files skipped by a build (binary, empty) counted as new forever, so "N files
    changed · Update" never went away, not even after Update."""
    (folder / "empty.txt").write_bytes(b"")
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02\x03" * 100)
    build_index(folder, name="f", store=store)
    assert folder_changes(store.open("f")).count == 0
    report = update_index("f", store=store)
    assert (report.added, report.changed, report.removed) == (0, 0, 0)
    (folder / "empty.txt").write_text("Now\nwith words\n", encoding="utf-8")
    assert folder_changes(store.open("f")).added == ("empty.txt",)
    report = update_index("f", store=store)
    assert report.added == 1
    assert folder_changes(store.open("f")).count == 0
    (folder / "binary.txt").write_bytes(b"\x00\x01" * 10)  # changed, still binary
    assert folder_changes(store.open("f")).added == ("binary.txt",)
    update_index("f", store=store)
    assert folder_changes(store.open("f")).count == 0  # the notice goes after Update


def test_a_lost_manifest_is_listed_as_damaged(store: IndexStore, folder: Path) -> None:
    """Before: a deleted manifest made the index silently vanish from `list`."""
    build_index(folder, name="f", store=store)
    (store.path("f") / "manifest.json").unlink()
    assert store.names() == ["f"]
    assert "manifest.json" in store.info("f").error
    with pytest.raises(IndexCorruptError, match="rebuild it"):
        store.open("f")
    report = check_index("f", store=store, repair=True)
    assert report.ok
    assert "restored" in report.repaired[0]
    assert store.open("f").n_docs == 3


@pytest.mark.parametrize(
    "target",
    [
        *("cf.npy", "ptr.npy", "terms.off.npy", "text.off.npy", "docid.bin", "doclen.npy"),
        *("blocks.bin", "blk_off.npy", "blk_last.npy", "bptr.npy", "tfront.bin", "text.zst"),
    ],
)
def test_silent_damage_is_detected(store: IndexStore, synth_index, target: str) -> None:
    """Before: a flipped cf/ptr/terms.off/text.off/docid.bin or a zeroed doclen gave a different
    answer with exit 0; a damaged docs.npy raised ValueError."""
    import shutil

    shutil.copytree(synth_index.path, store.root / "s")
    seg = next(p for p in store.path("s").iterdir() if p.name.startswith("seg-"))
    path = seg / target
    data = bytearray(path.read_bytes())
    if target == "doclen.npy":
        data[128:] = bytes(len(data) - 128)
    else:
        data[len(data) * 3 // 4] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match=r"damaged \(.*rebuild it"):
        store.open("s")
    report = check_index("s", store=store)
    assert not report.ok
    assert report.segments[0].error


def test_check_repair_drops_a_damaged_segment_and_says_what_is_lost(
    store: IndexStore, folder: Path
) -> None:
    build_index(folder, name="f", store=store)
    (folder / "d.txt").write_text("Date\nA date.\n", encoding="utf-8")
    update_index("f", store=store)
    index = store.open("f")
    newest = index.segments[-1].path
    index.close()
    (newest / "text.zst").write_bytes(b"X" * (newest / "text.zst").stat().st_size)
    assert not check_index("f", store=store).ok
    report = check_index("f", store=store, repair=True)
    assert report.ok
    assert "1 documents lost" in report.repaired[0]
    assert store.open("f").n_docs == 3


def test_an_index_without_checksums_still_opens(store: IndexStore, folder: Path) -> None:
    """A format-1 index (as written before issue 16: no checksums, skipped.tsv) opens and
    answers the same; check says it has no checksums."""
    build_index(folder, name="f", store=store)
    path = store.path("f") / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    expected = _hits(store.open("f"))
    for key in ("files", "checksum", "skips"):
        m.pop(key)
    m["format"] = 1
    for p in store.path("f").glob("manifest-*.json"):
        p.unlink()
    path.write_text(json.dumps(m), encoding="utf-8")
    (store.path("f") / "skipped.tsv").write_text("", encoding="utf-8")
    assert _hits(store.open("f")) == expected
    report = check_index("f", store=store)
    assert report.ok
    assert not report.checksums
    (folder / "a.txt").unlink()
    update_index("f", store=store)  # the update writes the current format, with checksums
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == MANIFEST_FORMAT
    assert check_index("f", store=store).checksums


def test_crafted_manifest_statistics_are_refused(store: IndexStore, folder: Path) -> None:
    """A manifest whose numbers disagree with the arrays is refused even with a valid checksum."""
    from bm25desk.engine.index.manifest import manifest_checksum

    build_index(folder, name="f", store=store)
    path = store.path("f") / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    m["stats"]["total_len"] += 7
    m["checksum"] = manifest_checksum(m)
    path.write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(IndexCorruptError, match="statistics do not match"):
        store.open("f")


def test_deletion_mask_of_the_wrong_type(store: IndexStore, folder: Path) -> None:
    build_index(folder, name="f", store=store)
    (folder / "a.txt").unlink()
    update_index("f", store=store)
    m = json.loads((store.path("f") / "manifest.json").read_text(encoding="utf-8"))
    dele = next(e["deleted"] for e in m["segments"] if e["deleted"])
    np.save(store.path("f") / dele, np.ones(3, dtype=np.int8))
    with pytest.raises(IndexCorruptError):
        store.open("f")
