"""Tests for format detection."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from reader_helpers import read_all, write

from bm25desk.engine.readers.api import read_corpus
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    CorpusError,
)


def test_detect_format(tmp_path: Path) -> None:
    cases = {
        "docs.tsv": ("D1\thttp://u\tT\tbody words\nD2\thttp://v\tT2\tmore\n", "msmarco-docs"),
        "pass.tsv": ("0\tsome passage\n1\tanother passage\n", "msmarco-passages"),
        "pass-ids.tsv": ("doc-a\tsome passage\ndoc-b\tanother one\n", "msmarco-passages"),
        "hdr.tsv": ("id\ttext\n0\tsome passage\n", "tsv-header"),
        "hdr2.tsv": ("key\tcontent_en\nk1\tsome words\n", "tsv-header"),
        "smart.txt": ("\n.I 1\n.W\nhello\n", "smart"),
        "trec.sgml": ("  <DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n", "trec"),
        "c.jsonl": ('{"_id": "1", "text": "x"}\n', "beir"),
    }
    for name, (content, fmt) in cases.items():
        assert detect_format(write(tmp_path / name, content)) == fmt, name
    folder = tmp_path / "folder"
    folder.mkdir()
    assert detect_format(folder) == "folder"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.tsv", "", "is empty"),
        ("blank.tsv", "\n\n  \n", "is empty"),
        ("three.tsv", "1\t2\t3\n4\t5\t6\n", "3 tab-separated columns and no header row"),
        ("bin.dat", b"\x00\x01\x02abc", "binary"),
        ("wide.tsv", "id\ttext\n".encode("utf-16"), "save it as UTF-8"),
        ("q.jsonl", '{"id": "1", "text": "x"}\n', 'without an "_id" field'),
        ("arr.json", '[{"_id": "1"}]', "JSON array"),
        ("note.txt", "Just a note.\nNothing else.\n", "choose the folder"),
        ("my.notes.md.gz", "# Notes\n", "choose the folder"),
        ("words.csv", "a,b,c\n", "not TSV, JSON lines, SMART, TREC, NPL, LISA or TIME"),
        ("sentence.tsv", "hello there\tfriend\n", "2 tab-separated columns"),
    ],
)
def test_detect_format_refuses(tmp_path: Path, name: str, content: str, message: str) -> None:
    f = write(tmp_path / name, content)
    with pytest.raises(CorpusError, match=re.escape(message)):
        detect_format(f)
    with pytest.raises(CorpusError):
        read_corpus(f)


def test_detect_missing(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file or folder"):
        detect_format(tmp_path / "nothing")


def test_a_stray_nul_does_not_make_a_corpus_binary(tmp_path: Path) -> None:
    """One NUL byte in record 21 (issue 16.10): detection goes by a sample, not by one byte."""
    lines = [f"{i}\tpassage number {i}\n" for i in range(40)]
    lines[20] = "20\tpassage\x00 number 20\n"
    f = write(tmp_path / "p.tsv", "".join(lines))
    assert detect_format(f) == "msmarco-passages"
    docs, report = read_all(f)
    assert len(docs) == 40
    assert report.skipped == []


def test_a_binary_file_says_how_to_read_it_as_a_corpus(tmp_path: Path) -> None:
    f = write(tmp_path / "blob.dat", bytes(range(256)) * 40)
    with pytest.raises(CorpusError) as info:
        detect_format(f)
    message = str(info.value)
    assert "binary" in message
    assert "--format" in message
    pdf = write(tmp_path / "paper.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 40)
    with pytest.raises(CorpusError, match="choose the folder that holds them"):
        detect_format(pdf)
