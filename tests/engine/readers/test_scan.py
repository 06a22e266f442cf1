"""Tests for listing a folder without opening its files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bm25desk.engine.readers.document import (
    CorpusError,
    FileStat,
    ReadReport,
)
from bm25desk.engine.readers.folder import read_folder
from bm25desk.engine.readers.scan import scan_folder


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
