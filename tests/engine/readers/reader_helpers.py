"""Helpers shared by the reader tests: write a file, read it all, the skips, the progress calls."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from bm25desk.engine.readers.api import read_corpus
from bm25desk.engine.readers.document import Document, ReadReport

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "data" / "corpus"


def write(path: Path, data: str | bytes, *, gz: bool = False) -> Path:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def read_all(path: Path, fmt: str | None = None, **kw: object) -> tuple[list[Document], ReadReport]:
    report = ReadReport()
    docs = list(read_corpus(path, fmt, report=report, **kw))  # type: ignore[arg-type]
    assert report.read == len(docs)
    return docs, report


def skips(report: ReadReport) -> list[tuple[str, str]]:
    """(where without the directory, reason) pairs."""
    return [(os.path.basename(s.where), s.reason) for s in report.skipped]


def progress_log(path: Path, fmt: str | None = None) -> tuple[list[tuple[int, int]], int]:
    calls: list[tuple[int, int]] = []
    n = sum(1 for _ in read_corpus(path, fmt, progress=lambda d, t: calls.append((d, t))))
    return calls, n


def assert_progress_ok(calls: list[tuple[int, int]], total: int) -> None:
    assert calls, "no progress reported"
    dones = [d for d, _ in calls]
    assert dones == sorted(dones), "progress went backwards"
    assert all(t == total for _, t in calls)
    assert calls[-1] == (total, total)
