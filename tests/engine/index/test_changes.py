"""folder_changes: the same added/changed/removed that update_index acts on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bm25desk.engine import IndexStore, build_index, update_index
from bm25desk.engine.index.changes import FolderChanges, folder_changes

FILES = {
    "a.txt": "Apple\nA red apple.\n",
    "b.txt": "Banana\nA yellow banana.\n",
    "sub/c.md": "# Cherry\n\nA dark cherry.\n",
}


def _set(folder: Path, rel: str, text: str, mtime: float) -> None:
    p = folder / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    os.utime(p, (mtime, mtime))


def test_no_changes_after_build(store: IndexStore, tmp_path: Path, folder_writer) -> None:
    folder = tmp_path / "docs"
    folder_writer(folder, FILES)
    build_index(folder, name="f", store=store)
    changes = folder_changes(store.open("f"))
    assert changes == FolderChanges()
    assert changes.count == 0
    assert not changes


def test_changes_match_update_index(store: IndexStore, tmp_path: Path, folder_writer) -> None:
    folder = tmp_path / "docs"
    folder_writer(folder, FILES)
    build_index(folder, name="f", store=store)
    t = 1_700_000_000.0
    _set(folder, "new/d.txt", "Date\nA sweet date.\n", t)
    _set(folder, "a.txt", "Apple\nA green apple.\n", t + 1)
    os.utime(folder / "b.txt", (t + 2, t + 2))  # same content, new mtime: changed
    (folder / "sub" / "c.md").unlink()
    (folder / "ignored.xyz").write_text("no extractor")
    changes = folder_changes(store.open("f"))
    assert changes.added == ("new/d.txt",)
    assert changes.changed == ("a.txt", "b.txt")
    assert changes.removed == ("sub/c.md",)
    assert changes.count == 4
    report = update_index("f", store=store)
    assert (report.added, report.changed, report.removed) == (1, 2, 1)
    assert folder_changes(store.open("f")).count == 0


def test_frozen() -> None:
    changes = FolderChanges(("a",))
    with pytest.raises(AttributeError):
        changes.added = ()  # type: ignore[misc]


def test_not_a_folder(store: IndexStore, tiny_tsv: Path) -> None:
    build_index(tiny_tsv, name="t", store=store)
    with pytest.raises(ValueError, match="not built from a folder"):
        folder_changes(store.open("t"))


def test_folder_gone(store: IndexStore, tmp_path: Path, folder_writer) -> None:
    folder = tmp_path / "docs"
    folder_writer(folder, FILES)
    build_index(folder, name="f", store=store)
    for p in sorted(folder.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    folder.rmdir()
    with pytest.raises(FileNotFoundError):
        folder_changes(store.open("f"))
