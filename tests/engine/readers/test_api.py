"""Tests for bm25desk.engine.readers.api: formats, progress, cancel, fixtures, real collections."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from reader_helpers import FIXTURES, REPO, assert_progress_ok, progress_log, read_all, write

from bm25desk.engine.progress import Cancelled, CancelToken
from bm25desk.engine.readers.api import FOLDER_FORMATS, FORMATS, read_corpus
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    CorpusError,
    ReadReport,
)

SAMPLE = REPO / "bm25desk" / "data" / "sample"  # CISI, shipped with the package
OPTIONAL_DATA = REPO.parent / "shared" / "data"  # SciFact, when it is beside the clone


# ------------------------------------------------------------------------------------------------
# Registry of formats


def test_formats_have_labels_and_readers(tmp_path: Path) -> None:
    assert set(FORMATS) == {
        "folder",
        "msmarco-docs",
        "msmarco-passages",
        "tsv-header",
        "beir",
        "smart",
        "trec",
        "npl",
        "lisa",
        "time",
    }
    assert all(label for label in FORMATS.values())


def test_folder_formats_read_a_folder(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "a.txt", "a document")
    write(tmp_path / "beir" / "corpus.jsonl", '{"_id": "b", "text": "a record"}\n')
    write(tmp_path / "lisa" / "LISA0.001", "Document 1\nA TITLE.\n\nTEXT.\n" + "*" * 44 + "\n")
    for fmt in sorted(FOLDER_FORMATS):
        folder = tmp_path / {"folder": "docs"}.get(fmt, fmt)
        assert detect_format(folder) == fmt
        assert len(read_all(folder, fmt)[0]) == 1, fmt
    for fmt in set(FORMATS) - FOLDER_FORMATS:
        with pytest.raises(CorpusError, match="is a folder, not a corpus file"):
            read_corpus(tmp_path / "docs", fmt)


def test_unknown_format_and_missing_path(tmp_path: Path) -> None:
    f = write(tmp_path / "a.tsv", "1\thello\n")
    with pytest.raises(CorpusError, match="unknown corpus format 'csv'"):
        read_corpus(f, "csv")
    with pytest.raises(CorpusError, match="no such file or folder"):
        read_corpus(tmp_path / "missing.tsv")
    with pytest.raises(CorpusError, match="no such file or folder"):
        read_corpus(tmp_path / "missing.tsv", "msmarco-passages")
    with pytest.raises(CorpusError, match="is a folder"):
        read_corpus(tmp_path, "smart")
    with pytest.raises(CorpusError, match="not a folder"):
        read_corpus(f, "folder")


# ------------------------------------------------------------------------------------------------
# Progress and cancellation


def test_progress_is_monotone_and_complete(tmp_path: Path) -> None:
    body = "".join(f"{i}\tpassage number {i}\n" for i in range(5000))
    for name, gz in (("p.tsv", False), ("p.tsv.gz", True)):
        f = write(tmp_path / name, body, gz=gz)
        calls, n = progress_log(f)
        assert n == 5000
        assert_progress_ok(calls, f.stat().st_size)
    trec = "".join(f"<DOC><DOCNO>{i}</DOCNO>text {i}</DOC>\n" for i in range(2000))
    f = write(tmp_path / "t.trec", trec)
    calls, n = progress_log(f)
    assert n == 2000
    assert_progress_ok(calls, f.stat().st_size)


@pytest.mark.parametrize("fmt", ["msmarco-passages", "beir", "smart", "trec", "folder"])
def test_cancel(tmp_path: Path, fmt: str) -> None:
    n = 1000
    if fmt == "msmarco-passages":
        src = write(tmp_path / "p.tsv", "".join(f"{i}\tword {i}\n" for i in range(n)))
    elif fmt == "beir":
        src = write(
            tmp_path / "c.jsonl", "".join(f'{{"_id": "{i}", "text": "w"}}\n' for i in range(n))
        )
    elif fmt == "smart":
        src = write(tmp_path / "s.all", "".join(f".I {i}\n.W\nword\n" for i in range(n)))
    elif fmt == "trec":
        src = write(
            tmp_path / "t.trec", "".join(f"<DOC><DOCNO>{i}</DOCNO>w</DOC>\n" for i in range(n))
        )
    else:
        src = tmp_path / "folder"
        for i in range(20):
            write(src / f"{i:02}.txt", f"word {i}")
    token = CancelToken()
    report = ReadReport()
    docs = read_corpus(src, fmt, report=report, cancel=token)
    next(docs)
    token.set()
    with pytest.raises(Cancelled):
        for _ in docs:
            pass
    assert report.read < (20 if fmt == "folder" else n)


def test_cancel_before_start(tmp_path: Path) -> None:
    f = write(tmp_path / "p.tsv", "1\tx\n")
    token = CancelToken()
    token.set()
    with pytest.raises(Cancelled):
        list(read_corpus(tmp_path, "folder", cancel=token))
    # A short file may finish before the first periodic check; it must not yield more than it has.
    assert len(list(read_corpus(f, cancel=CancelToken()))) == 1


# ------------------------------------------------------------------------------------------------
# Fixture files kept in the repository


def test_fixture_files() -> None:
    expected = {
        "cranfield-like.all": ("smart", 3),
        "news.trec.gz": ("trec", 2),
        "papers.tsv": ("tsv-header", 2),
    }
    for name, (fmt, n) in expected.items():
        f = FIXTURES / name
        assert detect_format(f) == fmt, name
        docs, report = read_all(f)
        assert len(docs) == n, name
        assert report.skipped == [], name


# ------------------------------------------------------------------------------------------------
# The real collections


def test_cisi() -> None:
    f = SAMPLE / "CISI.ALL"
    assert detect_format(f) == "smart"
    calls, _ = progress_log(f)
    assert_progress_ok(calls, f.stat().st_size)
    docs, report = read_all(f)
    assert len(docs) == 1460
    assert report.skipped == []
    assert [d.docid for d in docs] == [str(i) for i in range(1, 1461)]
    assert docs[0].title == "18 Editions of the Dewey Decimal Classifications"
    assert docs[0].text.startswith(
        "18 Editions of the Dewey Decimal Classifications\nComaromi, J.P."
    )
    assert docs[0].text.endswith("librarianship in this country and abroad.")
    xref = re.compile(r"^\d+\s+\d+\s+\d+$", re.M)
    assert not any(xref.search(d.text) for d in docs), ".X cross-references leaked into text"
    assert not any("\r" in d.text for d in docs)
    assert all(d.title for d in docs)


@pytest.mark.scifact
def test_scifact() -> None:
    f = OPTIONAL_DATA / "scifact" / "corpus.jsonl"
    if not f.exists():
        pytest.skip(f"optional data not found: {f}")
    assert detect_format(f) == "beir"
    assert detect_format(f.parent) == "beir"
    docs, report = read_all(f)
    assert len(docs) == 5183
    assert report.skipped == []
    assert len({d.docid for d in docs}) == 5183
    first = docs[0]
    assert first.docid == "4983"
    assert first.text.startswith(first.title + "\n")


def test_msmarco_passage_sample() -> None:
    """A file shaped like MS MARCO's first 101 passages (whose licence keeps them out of the
    repository): no newline after the last line, and double-encoded UTF-8 kept as it is."""
    f = FIXTURES / "msmarco-like-passages.tsv"
    assert not f.read_bytes().endswith(b"\n")
    assert detect_format(f) == "msmarco-passages"
    calls, _ = progress_log(f)
    assert_progress_ok(calls, f.stat().st_size)
    docs, report = read_all(f)
    assert len(docs) == 101
    assert report.skipped == []
    assert [d.docid for d in docs] == [str(i) for i in range(101)]
    assert any("Ã" in d.text for d in docs), "mojibake should be kept as it is"
    assert docs[-1].text == f.read_bytes().rsplit(b"\n", 1)[1].split(b"\t", 1)[1].decode()
    assert all(not d.text.endswith(("\n", "\r")) for d in docs)
