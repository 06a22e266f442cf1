"""``skip_repeats=False``: the line readers yield a repeated id instead of skipping it.

A parallel build's workers read this way and leave repeats to the driver (which resolves them
over all parts, from the segments' ids); every other check still applies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bm25desk.engine.readers import CorpusError, ReadReport, read_corpus

CASES = {
    "msmarco-passages": ("p.tsv", "a\tone\nb\ttwo\na\tthree\nc\t \n"),
    "msmarco-docs": ("d.tsv", "a\tu\tt\tone\nb\tu\tt\ttwo\na\tu\tt\tthree\nc\tu\t\t \n"),
    "tsv-header": ("h.tsv", "id\ttext\na\tone\nb\ttwo\na\tthree\nc\t \n"),
    "beir": (
        "corpus.jsonl",
        "".join(
            json.dumps({"_id": i, "text": t}) + "\n"
            for i, t in (("a", "one"), ("b", "two"), ("a", "three"), ("c", " "))
        ),
    ),
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_repeats_are_yielded_and_other_skips_kept(tmp_path: Path, fmt: str) -> None:
    name, content = CASES[fmt]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    checked, kept = ReadReport(), ReadReport()
    first = [d.docid for d in read_corpus(path, fmt, report=checked)]
    second = [d.docid for d in read_corpus(path, fmt, report=kept, skip_repeats=False)]
    assert first == ["a", "b"]
    assert second == ["a", "b", "a"]
    assert [s.reason for s in checked.skipped] == [
        "duplicate id 'a' (first seen at line " + ("2)" if fmt == "tsv-header" else "1)"),
        "empty document",
    ]
    assert [s.reason for s in kept.skipped] == ["empty document"]
    assert (checked.read, kept.read) == (2, 3)


def test_formats_that_are_not_line_based_refuse_to_keep_repeats(tmp_path: Path) -> None:
    path = tmp_path / "docs.trec"
    path.write_text("<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>x</TEXT>\n</DOC>\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="always skips repeated ids"):
        read_corpus(path, "trec", skip_repeats=False)
