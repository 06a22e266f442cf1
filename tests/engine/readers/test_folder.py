"""Tests for reading a folder's documents."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from reader_helpers import assert_progress_ok, write

from bm25desk.engine.extract.registry import EXTRACTORS
from bm25desk.engine.readers import folder
from bm25desk.engine.readers.api import read_corpus
from bm25desk.engine.readers.document import (
    Document,
    ExtractError,
    ReadReport,
    Skip,
)
from bm25desk.engine.readers.folder import read_folder
from bm25desk.engine.readers.scan import LINK_OUTSIDE, scan_folder


def test_read_folder(tree: Path) -> None:
    report = ReadReport()
    docs = {d.docid: d for d in read_corpus(tree, report=report)}
    assert report.read == len(docs)
    assert list(docs) == [
        "a.txt",
        "bom.txt",
        "cp1252.txt",
        "latin1.txt",
        "long.txt",
        "page.HTML",
        "sub/b.md",
        "sub/deeper/c.rst",
        "utf16.txt",
    ]
    a = docs["a.txt"]
    st = (tree / "a.txt").stat()
    assert (a.title, a.text) == ("Short first line", "Short first line\n\nThe body of a.\n")
    assert (a.location, a.mtime, a.size) == (str(tree / "a.txt"), st.st_mtime, st.st_size)
    assert os.path.isabs(a.location)
    assert docs["long.txt"].title == "long.txt"
    assert docs["sub/b.md"].title == "Real Title"
    assert docs["sub/deeper/c.rst"].title == "Top"
    assert (docs["page.HTML"].title, docs["page.HTML"].text) == ("Page", "Page\nHello")
    assert docs["cp1252.txt"].text == "Price: 5 \u20ac and na\u00efve\n"
    assert docs["latin1.txt"].text == "caf\u00e9 \x81 done\n"
    assert docs["bom.txt"].text == "With BOM\nline two\n"
    assert docs["utf16.txt"].text == "UTF-16 text\n"
    by_file = {os.path.relpath(s.where, tree): s.reason for s in report.skipped}
    assert by_file["bin.txt"] == "binary file"
    assert by_file["empty.md"] == "no text"
    assert by_file[".hidden.txt"] == "hidden file"


def test_read_folder_relpaths(tree: Path) -> None:
    report = ReadReport()
    docs = list(
        read_folder(tree, ["sub/b.md", "a.txt", "gone.txt", "image.png", "a.txt"], report=report)
    )
    assert [d.docid for d in docs] == ["a.txt", "sub/b.md"]
    assert [(os.path.basename(s.where), s.reason) for s in report.skipped] == [
        ("docs", "unsupported type .png (1 file)"),
        ("gone.txt", "file not found (deleted since the folder was scanned?)"),
    ]


def test_read_folder_too_large(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folder, "MAX_FILE_SIZE", 40)
    report = ReadReport()
    docs = [d.docid for d in read_folder(tree, report=report)]
    assert "long.txt" not in docs
    assert "a.txt" in docs
    reasons = {os.path.basename(s.where): s.reason for s in report.skipped}
    assert re.fullmatch(r"too large \(0\.0 MB; the limit is [0-9.e-]+ MB\)", reasons["long.txt"])


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs a POSIX user without root rights"
)
def test_read_folder_unreadable(tmp_path: Path) -> None:
    f = write(tmp_path / "locked.txt", "secret")
    write(tmp_path / "ok.txt", "fine")
    f.chmod(0)
    try:
        report = ReadReport()
        assert [d.docid for d in read_folder(tmp_path, report=report)] == ["ok.txt"]
        assert report.skipped[0].reason == "unreadable: permission denied"
    finally:
        f.chmod(0o600)


def test_read_folder_permission_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "locked.txt", "secret")
    write(tmp_path / "ok.txt", "fine")
    real = Path.open

    def open_(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "locked.txt":
            raise PermissionError(13, "Permission denied")
        return real(self, *args, **kwargs)

    # Text files are read through Path.open (at most the size limit), not Path.read_bytes.
    monkeypatch.setattr(Path, "open", open_)
    report = ReadReport()
    assert [d.docid for d in read_folder(tmp_path, report=report)] == ["ok.txt"]
    assert [s.reason for s in report.skipped] == ["unreadable: permission denied"]


def test_read_folder_progress(tree: Path) -> None:
    calls: list[tuple[int, int]] = []
    list(read_folder(tree, progress=lambda d, t: calls.append((d, t))))
    total = sum(fs.size for fs in scan_folder(tree).values())
    assert_progress_ok(calls, total)


def test_extractor_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def extract_csv(path: Path) -> tuple[str, str]:
        return "", path.read_text().replace(",", " ")

    def extract_broken(path: Path) -> tuple[str, str]:
        raise ValueError("corrupt archive")

    def extract_refuses(path: Path) -> tuple[str, str]:
        raise ExtractError("encrypted document")

    monkeypatch.setitem(EXTRACTORS, ".csv", extract_csv)
    monkeypatch.setitem(EXTRACTORS, ".zip", extract_broken)
    monkeypatch.setitem(EXTRACTORS, ".pdf", extract_refuses)
    write(tmp_path / "t.csv", "a,b,c")
    write(tmp_path / "z.zip", "PK")
    write(tmp_path / "p.pdf", "%PDF")
    report = ReadReport()
    docs = list(read_folder(tmp_path, report=report))
    mtime = (tmp_path / "t.csv").stat().st_mtime
    assert docs == [
        Document(
            "t.csv",
            "a b c",
            "t.csv",
            str(tmp_path / "t.csv"),
            mtime,
            5,
            fields=(("name", "t"),),
            meta=(
                ("type", "csv"),
                ("folder", "."),
                ("year", time.strftime("%Y", time.localtime(mtime))),
            ),
        )
    ]
    assert [s.reason for s in report.skipped] == [
        "encrypted document",
        "could not extract text: ValueError: corrupt archive",
    ]


def test_skipped_files_carry_their_state_for_change_detection(tree: Path) -> None:
    """Files found but not indexed report mtime and size, so an index can leave them be."""
    report = ReadReport()
    list(read_folder(tree, report=report))
    by_file = {os.path.relpath(s.where, tree): s for s in report.skipped}
    for rel in ("bin.txt", "empty.md"):
        st = (tree / rel).stat()
        skip = by_file[rel]
        assert (skip.relpath, skip.mtime, skip.size) == (rel, st.st_mtime, st.st_size)
    # Entries that are not files the scan lists carry no state.
    assert by_file[".hidden.txt"].mtime is None
    assert by_file["."].relpath is None  # "unsupported type .png (2 files)"
    assert Skip("a", "b") == Skip("a", "b", None, None, None)  # the old two-field form still works


def test_a_link_out_of_the_folder_is_not_read_even_when_asked_for(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(root / "ok.txt", "fine")
    write(tmp_path / "secret.txt", "not in the folder")
    (root / "passwd.txt").symlink_to(tmp_path / "secret.txt")
    report = ReadReport()
    docs = list(read_folder(root, ["ok.txt", "passwd.txt"], report=report))
    assert [d.docid for d in docs] == ["ok.txt"]
    assert [(os.path.basename(s.where), s.reason) for s in report.skipped] == [
        ("passwd.txt", LINK_OUTSIDE)
    ]
    docs = list(read_folder(root, ["passwd.txt"], follow_external_links=True))
    assert [d.text for d in docs] == ["not in the folder"]


def test_names_that_are_not_utf8_are_read_and_kept(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    text = b"coffee " * 20  # a first line too long for a title: the file name is the title
    (tmp_path / os.fsdecode(b"empty\xff.txt")).write_bytes(b"")
    (tmp_path / name).write_bytes(text)
    report = ReadReport()
    (doc,) = read_folder(tmp_path, report=report)
    assert os.fsencode(doc.docid) == b"caf\xe9.txt"
    assert Path(doc.location).read_bytes() == text  # the location opens the file
    assert doc.title == "caf\ufffd.txt"  # a title is text to show: the stray byte is replaced
    (skip,) = report.skipped
    assert os.fsencode(skip.where).endswith(b"empty\xff.txt")
    assert skip.reason == "no text"
