"""Issue 16.6 and 16.10: odd names, links, stray bytes and huge lines never cost a build or a file.

Each case goes through the engine's public entry points (build_index, update_index) the way the CLI
and the app use them, with real files in ``tmp_path``:

- an empty file named with a non-UTF-8 byte crashed ``index`` (UnicodeEncodeError writing the skip
  report) and no index was created; a non-UTF-8 name that was indexed was "removed" again on every
  update;
- a ``.txt`` link to a file outside the folder (``/etc/passwd``) was followed and indexed;
- one NUL byte in record 21 made a whole TSV "binary";
- a one-line TSV gave a 1 MB error message;
- a folder named ``docs`` became the index "rel" (its parent's name).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bm25desk.engine import IndexStore, Searcher, build_index, update_index
from bm25desk.engine.index.source import read_skips
from bm25desk.engine.readers.corpus import ColumnMap, CorpusError


@pytest.fixture
def store(tmp_path: Path) -> IndexStore:
    return IndexStore(tmp_path / "indexes")


def _name(raw: bytes) -> str:
    """A file name as the OS gives it to Python: undecodable bytes as lone surrogates."""
    return os.fsdecode(raw)


def test_names_that_are_not_utf8_survive_build_and_update(
    tmp_path: Path, store: IndexStore
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / _name(b"empty\xff.txt")).write_bytes(b"")
    (folder / _name(b"caf\xe9.txt")).write_bytes(b"espresso and more espresso")
    (folder / "plain.txt").write_bytes(b"plain words")

    report = build_index(folder, name="names", store=store)  # crashed with UnicodeEncodeError
    assert report.indexed == 2
    assert [(os.fsencode(Path(s.where).name), s.reason) for s in report.skipped] == [
        (b"empty\xff.txt", "no text")
    ]
    index = store.open("names")
    (kept,) = read_skips(index.path, index.manifest)  # the index keeps the skip list ...
    assert os.fsencode(kept["where"]).endswith(b"/empty\xff.txt")  # ... with the name's own bytes
    assert os.fsencode(kept["rel"]) == b"empty\xff.txt"

    hit = Searcher(index).search("espresso").hits[0]
    assert os.fsencode(hit.docid) == b"caf\xe9.txt"
    assert Path(hit.location).read_bytes().startswith(b"espresso")  # the location opens it

    again = update_index("names", store=store)  # removed and re-added it every time
    assert (again.added, again.changed, again.removed) == (0, 0, 0)
    assert store.open("names").n_docs == 2


def test_a_link_to_a_file_outside_the_folder_is_not_indexed(
    tmp_path: Path, store: IndexStore
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    outside = tmp_path / "elsewhere" / "passwd"
    outside.parent.mkdir()
    outside.write_text("root:x:0:0:secretword:/root:/bin/bash\n")
    (folder / "passwd.txt").symlink_to(outside)
    (folder / "inside.txt").symlink_to(folder / "notes.txt")
    (folder / "notes.txt").write_text("my own notes")
    (folder / "loop.txt").symlink_to(folder / "loop.txt")

    report = build_index(folder, name="links", store=store)
    searcher = Searcher(store.open("links"))
    assert searcher.search("secretword").n_matches == 0
    assert searcher.search("notes").n_matches == 2  # a link inside the folder is fine
    reasons = {Path(s.where).name: s.reason for s in report.skipped}
    assert reasons["passwd.txt"] == "link to a file outside the folder (not followed)"
    assert reasons["loop.txt"] == "link loop (not followed)"


def test_one_nul_byte_does_not_make_a_corpus_binary(tmp_path: Path, store: IndexStore) -> None:
    lines = [f"p{i}\tpassage number {i} about tides\n" for i in range(40)]
    lines[20] = "p20\tpassage number 20\x00 about tides\n"
    corpus = tmp_path / "passages.tsv"
    corpus.write_text("".join(lines))
    report = build_index(corpus, name="nul", store=store)  # "binary file, not a corpus" before
    assert report.indexed == 40


def test_a_one_line_tsv_gives_a_one_line_message(tmp_path: Path, store: IndexStore) -> None:
    wide = "w" * 1_000_000
    corpus = tmp_path / "one.tsv"
    corpus.write_text(f"{wide}\t{wide}\n")
    with pytest.raises(CorpusError) as info:
        build_index(corpus, name="one", fmt="tsv-header", store=store)
    assert len(str(info.value)) < 500
    with pytest.raises(CorpusError) as info:
        build_index(
            corpus, name="one", fmt="tsv-header", columns=ColumnMap(wide, ("x",)), store=store
        )
    assert len(str(info.value)) < 500


def test_a_folder_named_docs_is_indexed_under_its_own_name(
    tmp_path: Path, store: IndexStore
) -> None:
    folder = tmp_path / "rel" / "docs"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text("some words")
    assert build_index(folder, store=store).name == "docs"  # "rel" before
