"""Tests for TSV files with a header row: column guessing, mapping, previews, the reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from reader_helpers import read_all, skips, write

from bm25desk.engine.readers.api import read_corpus
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    ColumnMap,
    CorpusError,
    Document,
)
from bm25desk.engine.readers.tsv import guess_columns, preview_rows, read_tsv_header

HEADER_TSV = (
    "doc_id\tTitle\tabstract\tbody\tyear\n"
    "a\tFirst  paper\tShort abstract.\tLong body.\t2001\n"
    "b\t\tOnly abstract.\t\t2002\n"
    "c\tbroken row\n"
    "\tno id\tx\ty\t2003\n"
    "d\t\t\t\t2004\n"
    "a\tAgain\tx\ty\t2005\n"
)


def test_guess_columns() -> None:
    assert guess_columns(["doc_id", "Title", "abstract", "body", "year"]) == ColumnMap(
        "doc_id", ("abstract", "body"), "Title"
    )
    assert guess_columns(["_id", "text"]) == ColumnMap("_id", ("text",))
    assert guess_columns(["PID", "Passage"]) == ColumnMap("PID", ("Passage",))
    assert guess_columns(["id", "id", "contents"]) == ColumnMap("id", ("contents",))
    assert guess_columns(["name", "text"]) is None
    assert guess_columns(["id", "year"]) is None


def test_tsv_header_guessed(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv", HEADER_TSV)
    assert detect_format(f) == "tsv-header"
    assert read_tsv_header(f) == ["doc_id", "Title", "abstract", "body", "year"]
    docs, report = read_all(f)
    assert docs == [
        Document("a", "First paper\nShort abstract.\nLong body.", "First paper"),
        Document("b", "Only abstract."),
    ]
    assert skips(report) == [
        ("h.tsv:4", "expected 5 tab-separated columns as in the header, found 2"),
        ("h.tsv:5", "empty id"),
        ("h.tsv:6", "empty document"),
        ("h.tsv:7", "duplicate id 'a' (first seen at line 2)"),
    ]


def test_tsv_header_explicit_columns(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv", HEADER_TSV)
    cols = ColumnMap(docid="year", text=("body",))
    docs, _ = read_all(f, "tsv-header", columns=cols)
    assert [(d.docid, d.text) for d in docs] == [
        ("2001", "Long body."),
        ("2003", "y"),
        ("2005", "y"),
    ]


def test_tsv_header_unusable_mapping(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv", "key\tvalue\nk1\tsome words here\n")
    with pytest.raises(CorpusError, match=r"which columns .* hold the id .*columns: key, value"):
        read_corpus(f, "tsv-header")
    with pytest.raises(CorpusError, match="column 'text' is not in the header"):
        read_corpus(f, "tsv-header", columns=ColumnMap("key", ("text",)))
    with pytest.raises(CorpusError, match="no text column"):
        read_corpus(f, "tsv-header", columns=ColumnMap("key", ()))
    docs, _ = read_all(f, "tsv-header", columns=ColumnMap("key", ("value",)))
    assert docs == [Document("k1", "some words here")]


def test_preview_rows(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv.gz", "\nid\ttext\n1\t" + "x" * 1000 + "\n2\tb\n3\tc\n", gz=True)
    rows = preview_rows(f, 3)
    assert rows[0] == ["id", "text"]
    assert rows[1][0] == "1"
    assert len(rows[1][1]) == 500
    assert rows[1][1].endswith("…")
    assert rows[2] == ["2", "b"]
    assert len(preview_rows(f, 10)) == 4
    with pytest.raises(CorpusError):
        preview_rows(tmp_path / "nope.tsv")


def test_messages_quote_at_most_a_line_of_content(tmp_path: Path) -> None:
    """A one-line TSV of a megabyte once gave a megabyte of error message (issue 16.10)."""
    wide = "w" * 500_000
    f = write(tmp_path / "one.tsv", f"{wide}\t{wide}\n")
    with pytest.raises(CorpusError) as info:
        read_corpus(f, "tsv-header")
    assert len(str(info.value)) < 400 + len(str(f))
    with pytest.raises(CorpusError) as info:
        read_corpus(f, "tsv-header", columns=ColumnMap(wide + "x", (wide,)))
    assert len(str(info.value)) < 400 + len(str(f))
    dup = write(tmp_path / "dup.tsv", f"{wide}\tone\n{wide}\ttwo\n")
    _, report = read_all(dup, "msmarco-passages")
    (skip,) = report.skipped
    assert skip.reason.startswith("duplicate id 'www")
    assert len(skip.reason) < 150
