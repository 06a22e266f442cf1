"""A corpus laid out as a folder (LISA's files, a BEIR dataset) is one corpus: ``update`` leaves it
alone until a file in it is added, removed or rewritten, then rebuilds it.

Before, the manifest recorded the directory's size as 0 and ``update`` compared it with the
directory's ``st_size``, so every update rebuilt an unchanged folder; and a file rewritten inside
changes nothing the directory's own mtime shows.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from bm25desk.engine.index.build import build_index, update_index
from bm25desk.engine.index.source import source_changed
from bm25desk.engine.index.store import IndexStore

LISA = Path(__file__).resolve().parents[2] / "data" / "corpus" / "lisa"


def _lisa(tmp_path: Path) -> Path:
    folder = tmp_path / "lisa"
    shutil.copytree(LISA, folder)
    return folder


def test_an_unchanged_corpus_folder_is_not_rebuilt(tmp_path: Path, store: IndexStore) -> None:
    folder = _lisa(tmp_path)
    built = build_index(folder, name="lisa", store=store)
    report = update_index("lisa", store=store)
    assert not report.rebuilt
    assert report.n_docs == built.n_docs
    assert not source_changed(store.open("lisa").source)


def test_a_file_rewritten_inside_the_folder_rebuilds_it(tmp_path: Path, store: IndexStore) -> None:
    folder = _lisa(tmp_path)
    build_index(folder, name="lisa", store=store)
    first = sorted(p for p in folder.iterdir() if p.name.startswith("LISA"))[0]
    text = first.read_text(encoding="utf-8", errors="replace")
    first.write_text(text.replace("Document", "Document", 1) + "\n", encoding="utf-8")
    st = first.stat()
    os.utime(first, (st.st_atime, st.st_mtime + 5))  # a coarse clock must not hide the change
    assert source_changed(store.open("lisa").source)
    report = update_index("lisa", store=store)
    assert report.rebuilt
    assert not source_changed(store.open("lisa").source)


def test_a_file_added_to_the_folder_rebuilds_it(tmp_path: Path, store: IndexStore) -> None:
    folder = _lisa(tmp_path)
    build_index(folder, name="lisa", store=store)
    (folder / "notes.txt").write_text("a file the LISA reader does not read\n", encoding="utf-8")
    assert source_changed(store.open("lisa").source)
    assert update_index("lisa", store=store).rebuilt
