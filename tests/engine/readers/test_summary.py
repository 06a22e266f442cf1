"""Tests for folder_summary: what an index of a folder would read and skip, before it is built."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from reader_helpers import write

from bm25desk.engine.progress import Cancelled, CancelToken
from bm25desk.engine.readers import folder, folder_summary
from bm25desk.engine.readers.document import CorpusError
from bm25desk.engine.readers.scan import scan_folder
from bm25desk.engine.readers.summary import FolderSummary


def test_counts_per_type_and_what_is_skipped(tree: Path) -> None:
    summary = folder_summary(tree)
    # Files that will be read (bin.txt and the blank empty.md too: only reading them tells).
    assert summary.to_index == {"txt": 7, "md": 2, "html": 1, "rst": 1}
    assert summary.n_files == 11
    assert summary.unsupported == {"png": 2, "xlsx": 1, "": 1}
    reasons = sorted((os.path.relpath(s.where, tree), s.reason) for s in summary.skipped)
    assert reasons == [
        (".git", "tool or cache folder"),
        (".hidden.txt", "hidden file"),
        (".notes", "hidden folder"),
        ("__pycache__", "tool or cache folder"),
        ("node_modules", "tool or cache folder"),
    ]
    assert summary.n_skipped == 4 + 5
    assert summary.describe() == "11 files: 7 txt, 2 md, 1 html, 1 rst; 9 skipped"
    listed = scan_folder(tree)
    assert summary.bytes == sum(fs.size for fs in listed.values())
    assert summary.n_files == len(listed)  # the same files an index build reads


def test_empty_and_too_large_files_are_known_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder, "MAX_FILE_SIZE", 10)
    write(tmp_path / "a.txt", "small")
    write(tmp_path / "big.pdf", "x" * 20)
    write(tmp_path / "empty.md", "")
    summary = folder_summary(tmp_path)
    assert summary.to_index == {"txt": 1}
    assert sorted((Path(s.where).name, s.reason, s.relpath) for s in summary.skipped) == [
        ("big.pdf", "too large (0.0 MB)", "big.pdf"),
        ("empty.md", "empty file", "empty.md"),
    ]
    assert summary.describe() == "1 file: 1 txt; 2 skipped"


def test_include_exclude_many_types_and_nothing_to_index(tmp_path: Path) -> None:
    for ext in ("txt", "md", "rst", "html", "pdf", "docx", "odt"):
        write(tmp_path / "sub" / f"a.{ext}", "x")
        write(tmp_path / f"b.{ext}", "x")
    write(tmp_path / "c.txt", "x")
    everything = folder_summary(tmp_path)
    assert everything.describe() == "15 files: 3 txt, 2 docx, 2 html, 2 md, 2 odt, 4 other"
    assert folder_summary(tmp_path, include=["sub"]).n_files == 7
    assert folder_summary(tmp_path, exclude=["sub", "*.txt"]).n_files == 6
    nothing = folder_summary(tmp_path, include=["*.csv"])
    assert nothing == FolderSummary(root=str(tmp_path))
    assert nothing.describe() == "no documents to index"


def test_progress_cancel_and_a_path_that_is_not_a_folder(tmp_path: Path) -> None:
    for i in range(600):
        write(tmp_path / f"{i:03}.txt", "x")
    calls: list[tuple[int, int]] = []
    folder_summary(tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls
    assert all(total == 0 for _, total in calls)  # the total is not known while scanning
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    token = CancelToken()
    token.set()
    with pytest.raises(Cancelled):
        folder_summary(tmp_path, cancel=token)
    with pytest.raises(CorpusError, match="not a folder"):
        folder_summary(tmp_path / "000.txt")
