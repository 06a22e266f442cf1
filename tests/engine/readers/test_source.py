"""Tests for opening corpus files: gzip members, padding, damage."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from reader_helpers import read_all, skips, write

from bm25desk.engine.readers import source
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    CorpusError,
)


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    body = "".join(f'{{"_id": "{i}", "text": "document number {i}"}}\n' for i in range(3000))
    packed = gzip.compress(body.encode())
    f = write(tmp_path / "corpus.jsonl.gz", packed[: len(packed) // 2])
    docs, report = read_all(f, "beir")
    assert 0 < len(docs) < 3000
    assert [d.docid for d in docs] == [str(i) for i in range(len(docs))]
    (skip,) = report.skipped
    assert skip.reason.startswith("damaged compressed data, reading stopped here")


def test_gzip_members_padding_and_corruption(tmp_path: Path) -> None:
    # Concatenated members (pigz, bgzip, `cat a.gz b.gz`) are one stream; zero padding is ignored.
    members = gzip.compress(b"1\tone\n2\ttw") + gzip.compress(b"o\n3\tthree\n") + bytes(8)
    docs, report = read_all(write(tmp_path / "m.tsv.gz", members), "msmarco-passages")
    assert [d.text for d in docs] == ["one", "two", "three"]
    assert report.skipped == []
    broken = bytearray(gzip.compress(b"1\tone\n2\ttwo\n"))
    broken[-8] ^= 0xFF  # the CRC no longer matches
    docs, report = read_all(write(tmp_path / "crc.tsv.gz", bytes(broken)), "msmarco-passages")
    (skip,) = report.skipped
    assert "incorrect data check" in skip.reason
    with pytest.raises(CorpusError, match="not a readable gzip file"):
        detect_format(write(tmp_path / "fake.gz", b"\x1f\x8bnot really gzip"))


def test_a_gzip_bomb_stops_without_filling_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "GZIP_GRACE", 1 << 20)
    # 64 MB of one line of zeros in ~64 kB: a ratio no text has.
    packed = gzip.compress(b"1\t" + b"0" * (64 << 20) + b"\n", compresslevel=9)
    f = write(tmp_path / "bomb.tsv.gz", packed)
    docs, report = read_all(f, "msmarco-passages")
    assert docs == []
    (skip,) = report.skipped
    assert "expands more than 200 times its compressed size" in skip.reason


def test_a_line_longer_than_the_limit_is_skipped_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "MAX_LINE_BYTES", 1000)
    body = "1\tshort\n2\t" + "x" * 5000 + "\n3\tafter the long one\n"
    for name, gz in (("l.tsv", False), ("l.tsv.gz", True)):
        docs, report = read_all(write(tmp_path / name, body, gz=gz), "msmarco-passages")
        assert [d.docid for d in docs] == ["1", "3"]
        assert skips(report) == [(f"{name}:2", "line longer than 0 MB (not read)")]
