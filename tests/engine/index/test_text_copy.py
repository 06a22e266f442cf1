"""A merge copies a compressed text blob's frames from its file, and notices a damaged file."""

from __future__ import annotations

from pathlib import Path

import pytest

from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.textstore import ZBlob, ZBlobWriter


def _blob(directory: Path, texts: list[str]) -> ZBlob:
    directory.mkdir()
    w = ZBlobWriter(directory, "text")
    for t in texts:
        w.add_text(t)
    w.close()
    return ZBlob(directory, "text")


def test_frames_are_copied_document_for_document(tmp_path: Path) -> None:
    first = [f"document {n} " * (n % 50) for n in range(3000)]  # several frames
    second = ["", "caf\xe9", "last"]
    (tmp_path / "out").mkdir()
    out = ZBlobWriter(tmp_path / "out", "text")
    out.add_text("before")
    out.add_blob(_blob(tmp_path / "a", first))
    out.add_blob(_blob(tmp_path / "b", second))
    out.close()
    merged = ZBlob(tmp_path / "out", "text")
    assert [merged.get(i) for i in range(len(merged))] == ["before", *first, *second]


def test_a_text_file_shorter_than_when_opened_is_an_error(tmp_path: Path) -> None:
    src = _blob(tmp_path / "a", [f"document {n} " * 20 for n in range(500)])
    with open(src.path, "r+b") as fh:
        fh.truncate(src.size // 2)
    (tmp_path / "out").mkdir()
    out = ZBlobWriter(tmp_path / "out", "text")
    with pytest.raises(IndexCorruptError, match=r"text\.zst"):
        out.add_blob(src)
    out.abort()
