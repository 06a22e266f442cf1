"""Tests for listing a folder without opening its files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from reader_helpers import write

from bm25desk.engine.readers.document import (
    CorpusError,
    FileStat,
    ReadReport,
)
from bm25desk.engine.readers.folder import read_folder
from bm25desk.engine.readers.scan import LINK_OUTSIDE, scan_folder


def test_scan_folder(tree: Path) -> None:
    report = ReadReport()
    stats = scan_folder(tree, report=report)
    assert list(stats) == [
        "a.txt",
        "bin.txt",
        "bom.txt",
        "cp1252.txt",
        "empty.md",
        "latin1.txt",
        "long.txt",
        "page.HTML",
        "sub/b.md",
        "sub/deeper/c.rst",
        "utf16.txt",
    ]
    st = (tree / "a.txt").stat()
    assert stats["a.txt"] == FileStat(st.st_mtime, st.st_size)
    reasons = sorted((os.path.relpath(s.where, tree), s.reason) for s in report.skipped)
    assert reasons == [
        (".", "unsupported type (no extension) (1 file)"),
        (".", "unsupported type .png (2 files)"),
        (".", "unsupported type .xlsx (1 file)"),
        (".git", "tool or cache folder"),
        (".hidden.txt", "hidden file"),
        (".notes", "hidden folder"),
        ("__pycache__", "tool or cache folder"),
        ("node_modules", "tool or cache folder"),
    ]


def test_scan_folder_include_exclude(tree: Path) -> None:
    assert list(scan_folder(tree, include=["*.md"])) == ["empty.md", "sub/b.md"]
    assert list(scan_folder(tree, include=["sub/*"], exclude=["*.rst"])) == ["sub/b.md"]
    assert "sub/b.md" not in scan_folder(tree, exclude=["sub"])
    assert list(scan_folder(tree, include=["sub/"])) == ["sub/b.md", "sub/deeper/c.rst"]
    assert list(scan_folder(tree, include=["sub"], exclude=["sub/deeper"])) == ["sub/b.md"]
    assert list(scan_folder(tree, exclude=["*"])) == []


def test_read_folder_missing_root(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such folder"):
        read_folder(tmp_path / "absent")
    with pytest.raises(CorpusError, match="no such folder"):
        scan_folder(tmp_path / "absent")


# ------------------------------------------------------------------------------------------------
# Links (issue 16.10): inside the folder followed, out of it not (unless asked), loops never hang


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root / "real.txt", "real text")
    write(tmp_path / "outside" / "secret.txt", "not in the folder")
    write(tmp_path / "outside" / "more" / "x.txt", "x")
    (root / "inside.txt").symlink_to(root / "real.txt")
    (root / "passwd.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (root / "relative.txt").symlink_to(Path("..") / "outside" / "secret.txt")
    (root / "dir").symlink_to(tmp_path / "outside" / "more", target_is_directory=True)
    (root / "loop1.txt").symlink_to(root / "loop2.txt")
    (root / "loop2.txt").symlink_to(root / "loop1.txt")
    (root / "self").symlink_to(root, target_is_directory=True)
    return root


def test_links_out_of_the_folder_are_not_followed(linked: Path) -> None:
    report = ReadReport()
    assert list(scan_folder(linked, report=report)) == ["inside.txt", "real.txt"]
    reasons = {os.path.basename(s.where): s.reason for s in report.skipped}
    assert reasons == {
        "passwd.txt": LINK_OUTSIDE,
        "relative.txt": LINK_OUTSIDE,
        "dir": "link to a folder (not followed)",
        "self": "link to a folder (not followed)",
        "loop1.txt": "link loop (not followed)",
        "loop2.txt": "link loop (not followed)",
    }
    assert LINK_OUTSIDE == "link to a file outside the folder (not followed)"


def test_links_out_of_the_folder_can_be_followed(linked: Path) -> None:
    listed = scan_folder(linked, follow_external_links=True)
    assert list(listed) == ["inside.txt", "passwd.txt", "real.txt", "relative.txt"]


def test_a_folder_reached_through_a_link_is_the_root(tmp_path: Path) -> None:
    write(tmp_path / "real" / "a.txt", "a")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "real" / "b.txt").symlink_to(tmp_path / "real" / "a.txt")
    assert list(scan_folder(tmp_path / "alias")) == ["a.txt", "b.txt"]


def test_names_that_are_not_utf8_are_listed_as_the_os_gives_them(tmp_path: Path) -> None:
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"coffee")
    (name,) = scan_folder(tmp_path)
    assert os.fsencode(name) == b"caf\xe9.txt"
