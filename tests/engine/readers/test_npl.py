"""Tests for the NPL (Vaswani) doc-text reader: records, skips with line numbers, progress."""

from __future__ import annotations

from pathlib import Path

import pytest
from reader_helpers import FIXTURES, assert_progress_ok, progress_log, read_all, skips, write

from bm25desk.engine.progress import Cancelled, CancelToken
from bm25desk.engine.readers import source
from bm25desk.engine.readers.api import read_corpus
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import Document
from bm25desk.engine.readers.npl import NO_TERMINATOR, npl_layout

DOC_TEXT = FIXTURES / "npl" / "doc-text"


def test_fixture_reads_every_record() -> None:
    assert detect_format(DOC_TEXT) == "npl"
    docs, report = read_all(DOC_TEXT)
    assert [d.docid for d in docs] == [str(n) for n in range(1, 13)]
    assert report.skipped == []
    assert report.notes == []
    # the text lines joined as they are (NPL's double spaces kept), no title, no terminator
    assert docs[11] == Document(
        "12", "a thermionic valve voltmeter for measurements at radio frequencies"
    )
    assert docs[0].text.splitlines()[0].endswith("band pass filters  the phase and")
    assert all("/" not in d.text for d in docs)


def test_progress_runs_to_the_file_size() -> None:
    calls, n = progress_log(DOC_TEXT)
    assert n == 12
    assert_progress_ok(calls, DOC_TEXT.stat().st_size)


BAD = (
    "\n"
    "7\n"
    "first record\n"
    "   /\n"
    "x12\n"  # line 5: not a number
    "text of a record without a number\n"
    "/\n"
    "8\n"  # line 8: no text
    "   /\n"
    "7\n"  # line 10: the number again
    "repeated\n"
    "   /\n"
    "\r\n"
    " 9 \r\n"  # line 14: CRLF, the number padded
    "crlf text  \r\n"
    "\r\n"
    "second paragraph\r\n"
    "   /\r\n"
    "10\n"  # line 19: the last record has no closing /
    "last words\n"
)


def test_bad_records_are_skipped_with_their_line(tmp_path: Path) -> None:
    f = write(tmp_path / "doc-text", BAD)
    assert detect_format(f) == "npl"
    docs, report = read_all(f)
    assert [(d.docid, d.text) for d in docs] == [
        ("7", "first record"),
        ("9", "crlf text\n\nsecond paragraph"),
        ("10", "last words"),
    ]
    assert skips(report) == [
        ("doc-text:5", "expected a document number on the record's first line: 'x12'"),
        ("doc-text:8", "empty document"),
        ("doc-text:10", "duplicate id '7' (first seen at line 2)"),
    ]
    assert [(n.where.rsplit("/", 1)[1], n.message) for n in report.notes] == [
        ("doc-text:19", NO_TERMINATOR)
    ]


def test_gzip_and_format_override(tmp_path: Path) -> None:
    f = write(tmp_path / "doc-text.gz", DOC_TEXT.read_bytes(), gz=True)
    assert detect_format(f) == "npl"
    docs, _ = read_all(f, "npl")
    assert len(docs) == 12


def test_cancel(tmp_path: Path) -> None:
    f = write(tmp_path / "big", "".join(f"{i}\nwords of record {i}\n   /\n" for i in range(2000)))
    token = CancelToken()
    docs = read_corpus(f, "npl", cancel=token)
    next(docs)
    token.set()
    with pytest.raises(Cancelled):
        list(docs)


def test_a_record_that_never_ends_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "MAX_LINE_BYTES", 100)
    f = write(
        tmp_path / "doc-text",
        "1\n" + "forty bytes of text in one line of it ok\n" * 5 + "/\n2\nshort\n/\n",
    )
    docs, report = read_all(f, "npl")
    assert [d.docid for d in docs] == ["2"]
    assert skips(report) == [("doc-text:1", "record longer than 0 MB (not read)")]


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        ("1\nsome words\n   /\n2\n", "docs"),
        ("\n\n1\nsome words\n/\n", "docs"),
        ("1\n   /\n2\nwords after an empty record\n   /\n", "docs"),
        ("1\n    3    4\n   /\n2\n  5\n   /\n", "judgements"),  # rlv-ass
        ("1\nwords but no terminator yet\n", None),
        ("1 2\nwords\n/\n", None),  # a vector file (doc-vecs) starts with several numbers
        ("one\nwords\n/\n", None),
        ("1\n/\n", None),
    ],
)
def test_layout_sniffing(text: str, layout: str | None) -> None:
    assert npl_layout(text.splitlines()) == layout
