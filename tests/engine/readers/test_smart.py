"""Tests for the SMART reader (CISI, Cranfield)."""

from __future__ import annotations

from pathlib import Path

import pytest
from reader_helpers import read_all, skips, write

from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    CorpusError,
    Document,
)

SMART = (
    "stray text before any record\r\n"
    ".I 1\r\n"
    ".T\r\n"
    "A  Title\r\n"
    "on two lines\r\n"
    ".A\r\n"
    "Author, A.\r\n"
    ".A \r\n"
    "Author, B.\r\n"
    ".W\r\n"
    "   Body text\r\n"
    "continues.\r\n"
    ".X\r\n"
    "1\t5\t1\r\n"
    "92\t1\t1\r\n"
    ".B\r\n"
    "1970\r\n"
    ".I 2\r\n"
    ".T Inline title\r\n"
    ".W Inline body\r\n"
    ".K \r\n"
    "keyword one\r\n"
    ".I\r\n"
    ".W\r\n"
    "no id\r\n"
    ".I 3\r\n"
    ".X\r\n"
    "1\t1\t1\r\n"
    ".I 1\r\n"
    ".W\r\n"
    "duplicate\r\n"
    ".I 4\r\n"
    "text before any field\r\n"
    ".W\r\n"
    "last one, no newline"
)


def test_smart(tmp_path: Path) -> None:
    f = write(tmp_path / "TEST.ALL", SMART)
    with pytest.raises(CorpusError):  # the stray first line hides the .I
        detect_format(f)
    docs, report = read_all(f, "smart")
    assert [d.docid for d in docs] == ["1", "2", "4"]
    assert docs[0].title == "A Title on two lines"
    assert docs[0].text == (
        "A Title on two lines\nAuthor, A.\nAuthor, B.\nBody text\ncontinues.\n1970"
    )
    assert docs[1] == Document("2", "Inline title\nInline body\nkeyword one", "Inline title")
    assert docs[2].text == "text before any field\nlast one, no newline"
    assert skips(report) == [
        ("TEST.ALL:1", "text before the first .I record"),
        ("TEST.ALL:23", "missing id after .I"),
        ("TEST.ALL:26", "empty document"),
        ("TEST.ALL:29", "duplicate id '1' (first seen at line 2)"),
    ]


def test_smart_detect_and_gz(tmp_path: Path) -> None:
    text = SMART.split("\r\n", 1)[1]
    f = write(tmp_path / "t.all.gz", text, gz=True)
    assert detect_format(f) == "smart"
    docs, _ = read_all(f)
    assert [d.docid for d in docs] == ["1", "2", "4"]
