"""Tests for the MS MARCO readers (documents and passages TSV)."""

from __future__ import annotations

from pathlib import Path

from reader_helpers import read_all, skips, write

from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    Document,
)

# ------------------------------------------------------------------------------------------------
# MS MARCO documents


DOCS_TSV = (
    "D1\thttp://a.example/1\tThe  Title\tFirst body.\n"
    "D2\thttp://a.example/2\t\tNo title here.\r\n"
    "\n"
    "D3\thttp://a.example/3\tonly three columns\n"
    "D1\thttp://a.example/dup\tDup\tDuplicate body.\n"
    "\thttp://a.example/4\tT\tno id\n"
    "D5\thttp://a.example/5\t \t  \n"
    "D6\thttp://a.example/6\tHeadline only\t\n"
    "D7\tu\tt\tbody\textra\n"
    "D8\thttp://a.example/8\tLast\tno newline at the end"
)


def test_msmarco_docs(tmp_path: Path) -> None:
    f = write(tmp_path / "docs.tsv", DOCS_TSV)
    docs, report = read_all(f, "msmarco-docs")
    assert [d.docid for d in docs] == ["D1", "D2", "D6", "D8"]
    d1 = docs[0]
    assert d1 == Document("D1", "The Title\nFirst body.", "The Title", "http://a.example/1")
    assert docs[1].text == "No title here."
    assert docs[1].title == ""
    assert docs[2].text == "Headline only"
    assert docs[3].text == "Last\nno newline at the end"
    assert skips(report) == [
        ("docs.tsv:4", "expected 4 tab-separated columns, found 3"),
        ("docs.tsv:5", "duplicate id 'D1' (first seen at line 1)"),
        ("docs.tsv:6", "empty id"),
        ("docs.tsv:7", "empty document"),
        ("docs.tsv:9", "expected 4 tab-separated columns, found 5"),
    ]


def test_msmarco_docs_gz_equals_plain(tmp_path: Path) -> None:
    plain = write(tmp_path / "docs.tsv", DOCS_TSV)
    packed = write(tmp_path / "docs.tsv.gz", DOCS_TSV, gz=True)
    assert detect_format(packed) == "msmarco-docs"
    a, ra = read_all(plain)
    b, rb = read_all(packed)
    assert a == b
    assert skips(ra) == [(w.replace(".gz", ""), r) for w, r in skips(rb)]


def test_undecodable_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    data = b"D1\tu\tCaf\xe9\tna\xefve \xff\xfe body\nD2\tu\tok\tfine \xc3\xa9t\xc3\xa9\n"
    docs, report = read_all(write(tmp_path / "d.tsv", data), "msmarco-docs")
    assert [d.docid for d in docs] == ["D1", "D2"]
    assert docs[0].title == "Caf\ufffd"
    assert docs[0].text == "Caf\ufffd\nna\ufffdve \ufffd\ufffd body"
    assert docs[1].text == "ok\nfine été"
    assert report.skipped == []


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    f = write(tmp_path / "p.tsv", b"\xef\xbb\xbf7\tbom first\n8\tsecond\n")
    assert detect_format(f) == "msmarco-passages"
    docs, _ = read_all(f)
    assert docs[0].docid == "7"


# ------------------------------------------------------------------------------------------------
# MS MARCO passages


def test_msmarco_passages(tmp_path: Path) -> None:
    data = "0\tfirst passage\n1\tsecond\twith a tab\n2\n3\t   \n0\tagain\n  \n4\tlast passage"
    docs, report = read_all(write(tmp_path / "p.tsv", data), "msmarco-passages")
    assert docs == [Document("0", "first passage"), Document("4", "last passage")]
    assert skips(report) == [
        ("p.tsv:2", "expected 2 tab-separated columns, found 3"),
        ("p.tsv:3", "expected 2 tab-separated columns, found 1"),
        ("p.tsv:4", "empty document"),
        ("p.tsv:5", "duplicate id '0' (first seen at line 1)"),
    ]
