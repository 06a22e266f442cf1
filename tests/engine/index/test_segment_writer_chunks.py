"""A segment is written byte for byte the same whatever its chunk sizes and vocabulary table.

The writer sorts its postings in chunks and places them in pieces (sizes chosen for memory),
and sorts its lexicon in the compiled vocabulary or in the dict one it replaces: none of these
choices may show in the files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bm25desk.engine.index import segment_writer
from bm25desk.engine.index.segment_writer import DictTermIds, SegmentWriter, TermIds

# Terms of every str kind, some that sort differently by code point and by UTF-16, and lone
# surrogates (written as "?", sorted by those bytes).
WORDS = ["b", "a", "caf\xe9", "\uffff", "\U0001f642", "\u4e00", "a\ud800", "a?", "zz", "\x7f"]


def _write(directory: Path, vocabulary: object) -> dict[str, bytes]:
    writer = SegmentWriter(directory, vocabulary)  # type: ignore[arg-type]
    for n in range(300):
        terms = [WORDS[(n * k + k) % len(WORDS)] for k in range(1 + n % 9)] + [f"w{n % 37}"]
        writer.add(
            terms,
            terms[:2] if n % 3 else [],
            docid=f"d{n}",
            title="t" if n % 3 else "",
            location="",
            text=" ".join(terms),
            extra={"\x00m:x": 1 + n % 2} if n % 5 == 0 else None,
        )
    writer.finish()
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_chunk_and_piece_sizes_and_the_vocabulary_table_leave_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = _write(tmp_path / "dict", DictTermIds())
    assert reference["terms.bin"]  # the lexicon was written
    assert _write(tmp_path / "compiled", TermIds()) == reference
    monkeypatch.setattr(segment_writer.SegmentWriter, "FLUSH_TOKENS", 7)
    monkeypatch.setattr(segment_writer.SegmentWriter, "PLACE_POSTINGS", 3)
    assert _write(tmp_path / "small-dict", DictTermIds()) == reference
    assert _write(tmp_path / "small-compiled", TermIds()) == reference
