"""Tests for the LISA reader: a folder of LISA0.001 … files as one source, or one file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from reader_helpers import FIXTURES, assert_progress_ok, progress_log, read_all, skips, write

from bm25desk.engine.readers import source
from bm25desk.engine.readers.api import read_corpus
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import CorpusError, Document, ReadReport
from bm25desk.engine.readers.lisa import is_lisa_header, lisa_files
from bm25desk.engine.readers.scan import LINK_OUTSIDE

LISA = FIXTURES / "lisa"
STARS = "*" * 44


def test_fixture_folder_is_one_source_in_name_order() -> None:
    assert detect_format(LISA) == "lisa"
    assert [p.name for p in lisa_files(LISA)] == ["LISA0.001", "LISA0.501", "LISA5.850"]
    docs, report = read_all(LISA)
    assert [d.docid for d in docs] == [str(n) for n in range(1, 10)]
    assert skips(report) == [
        ("lisa", "not a LISA file (1 file without a numbered extension like LISA0.001's: README)"),
        # numbers repeat across the real files: the first record of a number is kept
        ("LISA0.501:7", "duplicate id '3' (first seen at LISA0.001:14)"),
    ]
    assert report.notes == []
    by_id = {d.docid: d for d in docs}
    assert by_id["3"].title == "TEACHING ONLINE SEARCHING TO LIBRARIANS."  # the blank line is "   "
    two_lines = (
        "AUTOMATED CATALOGUING IN PUBLIC LIBRARIES: THE COUNTY EXPERIENCE, 1978-1981, "
        "LONDON (IN ENGLISH)."
    )
    assert by_id["2"].title == two_lines
    assert by_id["2"].text == (
        f"{two_lines}\nCOMPUTERS PRODUCE THE CATALOGUE OF A COUNTY PUBLIC LIBRARY SYSTEM ON\n"
        "MICROFICHE. THE CATALOGUING RULES AND THE COSTS ARE REPORTED."
    )
    assert all("*" not in d.text and "Document" not in d.text for d in docs)


def test_progress_runs_over_all_the_files() -> None:
    calls, n = progress_log(LISA)
    assert n == 9
    assert_progress_ok(calls, sum(p.stat().st_size for p in lisa_files(LISA)))


def test_one_file_alone() -> None:
    f = LISA / "LISA0.501"
    assert detect_format(f) == "lisa"
    docs, report = read_all(f)
    assert [d.docid for d in docs] == ["5", "3", "6", "7"]  # no other file: this 3 is the first
    assert report.skipped == []


BAD = (
    "stray text\n"  # line 1: before any record
    "more stray text\n"  # reported once per run
    "Document    1\n"  # line 3
    "A TITLE.\n"
    "\n"
    "AN ABSTRACT.\n"
    "Document    2\n"  # line 7: record 1 had no closing line of stars
    "A TITLE WITH NO ABSTRACT\n"
    "ON TWO LINES.\n"
    f"{STARS}\n"
    "Document    3\n"  # line 11: nothing in it
    f"{STARS}\n"
    f"{STARS}\n"  # a second line of stars outside a record says nothing
    "Document 1\r\n"  # line 14: CRLF, the number again
    "A REPEAT.\r\n"
    "\r\n"
    "TEXT.\r\n"
    f"{STARS}\r\n"
    "Document 4\n"  # line 19: the file ends inside it
    "\n"  # blank lines before the title are passed over
    "A TITLE AFTER A BLANK LINE.\n"
    "   \n"
    "AN ABSTRACT.\n"
)


def test_bad_records_are_skipped_or_noted_with_their_line(tmp_path: Path) -> None:
    f = write(tmp_path / "LISA9.001", BAD)
    with pytest.raises(CorpusError):  # the stray text hides the first record from detection
        detect_format(f)
    docs, report = read_all(f, "lisa")
    assert docs == [
        Document("1", "A TITLE.\nAN ABSTRACT.", "A TITLE."),
        Document(
            "2", "A TITLE WITH NO ABSTRACT ON TWO LINES.", "A TITLE WITH NO ABSTRACT ON TWO LINES."
        ),
        Document("4", "A TITLE AFTER A BLANK LINE.\nAN ABSTRACT.", "A TITLE AFTER A BLANK LINE."),
    ]
    assert skips(report) == [
        ("LISA9.001:1", "text outside a record (no 'Document N' line)"),
        ("LISA9.001:11", "empty document"),
        ("LISA9.001:14", "duplicate id '1' (first seen at line 3)"),
    ]
    notes = [(os.path.basename(n.where), n.message) for n in report.notes]
    assert notes == [
        ("LISA9.001:3", "no '****' line before the next record (indexed anyway)"),
        ("LISA9.001:19", "no '****' line after it before the end of the file (indexed anyway)"),
    ]


def test_folder_members_are_chosen_by_content(tmp_path: Path) -> None:
    folder = tmp_path / "LISA"
    record = f"Document    1\nTITLE.\n\nABSTRACT.\n{STARS}\n"
    write(folder / "LISA0.001", record)
    write(folder / "LISA0.501.gz", record.replace("1", "2"), gz=True)
    write(folder / "LISA1.001", "1\nI AM INTERESTED IN LIBRARIES. #\n")  # numbered, not records
    write(folder / "LISA.QUE", "1\nQUERY. #\n")
    write(folder / "notes.txt", record.replace("1", "3"))  # a document, not a LISA file
    write(folder / ".LISA2.001", record.replace("1", "4"))  # hidden
    write(folder / "sub" / "LISA3.001", record.replace("1", "5"))  # not looked into
    outside = write(tmp_path / "elsewhere" / "LISA4.001", record.replace("1", "6"))
    os.symlink(outside, folder / "LISA4.001")
    assert detect_format(folder) == "lisa"
    docs, report = read_all(folder)
    assert [d.docid for d in docs] == ["1", "2"]
    assert skips(report) == [
        ("LISA1.001", "not a LISA file: its first line is not 'Document N'"),
        ("LISA4.001", LINK_OUTSIDE),
        (
            "LISA",
            "not a LISA file (2 files without a numbered extension like LISA0.001's: "
            "LISA.QUE, notes.txt)",
        ),
    ]


def test_a_folder_without_lisa_files(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "a.txt", f"Document 1\nA NOTE.\n\nTEXT.\n{STARS}\n")  # not numbered
    write(folder / "data.001", "just numbers 1 2 3\n")
    assert detect_format(folder) == "folder"
    with pytest.raises(CorpusError, match=r"no LISA files in .*docs"):
        read_corpus(folder, "lisa")
    with pytest.raises(CorpusError, match="is a folder, not a corpus file"):
        read_corpus(folder, "npl")  # only LISA reads a folder of its files


def test_files_are_checked_before_any_document(tmp_path: Path) -> None:
    folder = tmp_path / "LISA"
    write(folder / "LISA0.001", f"Document 1\nT.\n\nA.\n{STARS}\n")
    report = ReadReport()
    docs = read_corpus(folder, "lisa", report=report)
    (folder / "LISA0.001").unlink()  # gone between the call and the reading
    with pytest.raises(CorpusError, match="cannot read"):
        list(docs)


def test_a_record_that_never_ends_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "MAX_LINE_BYTES", 100)
    body = "FORTY BYTES OF TEXT IN ONE LINE OF IT OK\n" * 5
    f = write(tmp_path / "LISA0.001", f"Document 1\nT.\n\n{body}{STARS}\nDocument 2\nT.\n{STARS}\n")
    docs, report = read_all(f)
    assert [d.docid for d in docs] == ["2"]
    assert skips(report) == [("LISA0.001:1", "record longer than 0 MB (not read)")]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Document    1", True),
        ("Document 5640\r\n", True),
        ("  Document 12  ", True),
        ("DOCUMENT 12", False),  # abstracts are in capitals: such a line is text
        ("Document", False),
        ("Document 12 of 13", False),
        ("Documents 1", False),
        ("Document one", False),
    ],
)
def test_record_header(line: str, expected: bool) -> None:
    assert is_lisa_header(line) is expected


def test_progress_ends_at_the_total_when_a_file_shrank(tmp_path: Path) -> None:
    folder = tmp_path / "LISA"
    record = f"Document    1\nTITLE.\n\nABSTRACT.\n{STARS}\n"
    write(folder / "LISA0.001", record)
    last = write(folder / "LISA0.501", record.replace("1", "2") * 3)
    calls: list[tuple[int, int]] = []
    docs = read_corpus(folder, progress=lambda d, t: calls.append((d, t)))
    total = sum(p.stat().st_size for p in lisa_files(folder))
    assert next(docs).docid == "1"  # the sizes are measured by now
    write(last, record.replace("1", "2"))  # the last file shrinks before it is read
    assert [d.docid for d in docs] == ["2"]
    assert_progress_ok(calls, total)
