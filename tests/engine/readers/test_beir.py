"""Tests for the BEIR corpus.jsonl reader."""

from __future__ import annotations

import os
from pathlib import Path

from reader_helpers import read_all, skips, write

from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    Document,
)


def test_beir(tmp_path: Path) -> None:
    lines = [
        '{"_id": "a", "title": "A  title", "text": "Body a.", "metadata": {}}',
        '{"_id": "b", "title": "", "text": "Body b."}',
        "",
        '{"_id": "c", "title": "broken", ',
        '{"title": "no id", "text": "x"}',
        '["not", "an", "object"]',
        '{"_id": "a", "title": "dup", "text": "x"}',
        '{"_id": "e", "title": " ", "text": ""}',
        '{"_id": 17, "text": "numeric id"}',
        '{"_id": "f", "text": ["not", "a", "string"]}',
        '{"_id": "g", "title": "Title only"}',
    ]
    f = write(tmp_path / "corpus.jsonl", "\n".join(lines) + "\n")
    assert detect_format(f) == "beir"
    assert detect_format(tmp_path) == "beir"  # a BEIR dataset folder
    docs, report = read_all(f)
    assert docs == [
        Document("a", "A title\nBody a.", "A title"),
        Document("b", "Body b."),
        Document("17", "numeric id"),
        Document("g", "Title only", "Title only"),
    ]
    got = skips(report)
    assert got[0][0] == "corpus.jsonl:4"
    assert got[0][1].startswith("invalid JSON: ")
    assert got[1:] == [
        ("corpus.jsonl:5", "missing _id"),
        ("corpus.jsonl:6", "expected a JSON object, found list"),
        ("corpus.jsonl:7", "duplicate id 'a' (first seen at line 1)"),
        ("corpus.jsonl:8", "empty document"),
        ("corpus.jsonl:10", "text is not a string"),
    ]
    from_dir, _ = read_all(tmp_path)
    assert from_dir == docs


def test_beir_gz_and_bad_bytes(tmp_path: Path) -> None:
    data = b'{"_id": "x", "title": "T", "text": "caf\xe9 \xc3\xa9"}\n'
    f = write(tmp_path / "corpus.jsonl.gz", data, gz=True)
    assert detect_format(f) == "beir"
    docs, report = read_all(f)
    assert docs == [Document("x", "T\ncaf\ufffd é", "T")]
    assert report.skipped == []


def test_a_record_without_text_is_indexed_by_its_title_with_a_note(tmp_path: Path) -> None:
    """Issue 16.10: not silently. BEIR's BM25 indexes title + text, and TREC-COVID judges such
    records, so the title is indexed; the report notes it with the record's line."""
    lines = [
        '{"_id": "a", "title": "Full", "text": "Body."}',
        '{"_id": "b", "title": "Only a title"}',
        '{"_id": "c", "title": "Blank text", "text": "  "}',
        '{"_id": "b", "title": "Duplicate", "text": ""}',
    ]
    f = write(tmp_path / "corpus.jsonl", "\n".join(lines) + "\n")
    docs, report = read_all(f)
    assert [d.docid for d in docs] == ["a", "b", "c"]
    assert docs[1] == Document("b", "Only a title", "Only a title")
    assert [(os.path.basename(n.where), n.message) for n in report.notes] == [
        ("corpus.jsonl:2", "no text: indexed by its title only"),
        ("corpus.jsonl:3", "no text: indexed by its title only"),
    ]
    assert skips(report) == [("corpus.jsonl:4", "duplicate id 'b' (first seen at line 2)")]
