"""Tests for the TIME.ALL reader: ids are record positions, the *TEXT line is the title."""

from __future__ import annotations

from pathlib import Path

import pytest
from reader_helpers import FIXTURES, assert_progress_ok, progress_log, read_all, skips, write

from bm25desk.engine.readers import source
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import CorpusError, Document
from bm25desk.engine.readers.time_magazine import is_time_header

TIME_ALL = FIXTURES / "time" / "TIME.ALL"


def test_fixture_ids_are_positions() -> None:
    assert detect_format(TIME_ALL) == "time"
    docs, report = read_all(TIME_ALL)
    # TIME.REL numbers documents 1, 2, 3 … by position; the *TEXT numbers are 017, 020 …
    assert [d.docid for d in docs] == ["1", "2", "3", "4", "5", "6", "7"]
    assert [d.title for d in docs[:2]] == [
        "TEXT 017 01/04/63 PAGE 020",
        "TEXT 020 01/04/63 PAGE 021",
    ]
    assert report.skipped == []
    assert report.notes == []
    # double spacing is dropped; the title is not part of the indexed text
    assert docs[2].text == (
        "DE GAULLE SAYS NO TO BRITISH ENTRY INTO THE COMMON MARKET, AND\n"
        "BRITAIN'S NEGOTIATORS LEAVE BRUSSELS ."
    )
    assert all("*" not in d.text and "PAGE" not in d.text for d in docs)


def test_progress_runs_to_the_file_size() -> None:
    calls, n = progress_log(TIME_ALL)
    assert n == 7
    assert_progress_ok(calls, TIME_ALL.stat().st_size)


BAD = (
    "A HEADER LINE\n"  # line 1: before any record
    "\n"
    "*TEXT 001 01/04/63 PAGE 001\n"  # line 3: position 1
    "\n"
    "FIRST .\n"
    "\n"
    "*TEXT 002 01/04/63 PAGE 002\n"  # line 7: position 2, empty: skipped, its position kept
    "\n"
    "\n"
    "*TEXT\r\n"  # line 10: position 3, no number, date or page; CRLF
    "\r\n"
    "  THIRD, INDENTED .  \r\n"
    "*TEXTBOOK PRICES RISE .\n"  # not a record line: body text of position 3
    "*STOP\n"
    "\n"
    "TRAILING NOTES\n"  # line 16: after *STOP
    "MORE NOTES\n"
)


def test_bad_records_keep_the_positions(tmp_path: Path) -> None:
    f = write(tmp_path / "TIME.ALL", BAD)
    with pytest.raises(CorpusError):  # the first line is not a *TEXT line
        detect_format(f)
    docs, report = read_all(f, "time")
    assert docs == [
        Document("1", "FIRST .", "TEXT 001 01/04/63 PAGE 001"),
        Document("3", "THIRD, INDENTED .\n*TEXTBOOK PRICES RISE .", "TEXT"),
    ]
    assert skips(report) == [
        ("TIME.ALL:1", "text before the first *TEXT record"),
        ("TIME.ALL:7", "empty document"),
        ("TIME.ALL:16", "text after *STOP (the end of the records)"),
    ]


def test_without_stop_the_last_record_ends_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "t.all.gz", "*TEXT 9 01/01/63 PAGE 1\n\nONE .\n\n*TEXT 10\nTWO .", gz=True)
    assert detect_format(f) == "time"
    docs, report = read_all(f)
    assert [(d.docid, d.text) for d in docs] == [("1", "ONE ."), ("2", "TWO .")]
    assert report.skipped == []


def test_a_record_that_never_ends_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "MAX_LINE_BYTES", 100)
    body = "FORTY BYTES OF TEXT IN ONE LINE OF IT OK\n\n" * 5
    f = write(tmp_path / "TIME.ALL", f"*TEXT 1\n\n{body}*TEXT 2\n\nSHORT .\n*STOP\n")
    docs, report = read_all(f)
    assert [(d.docid, d.text) for d in docs] == [("2", "SHORT .")]
    assert skips(report) == [("TIME.ALL:1", "record longer than 0 MB (not read)")]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("*TEXT 017 01/04/63 PAGE 020", True),
        ("*TEXT", True),
        ("  *TEXT 5\r\n", True),
        ("*TEXTS", False),
        ("*FIND 1", False),
        ("TEXT 017", False),
    ],
)
def test_record_header(line: str, expected: bool) -> None:
    assert is_time_header(line) is expected
