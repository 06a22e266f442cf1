"""Repeated ids are skipped the same way in every build: across segments, parts and tables.

The first record of an id wins; each later one is reported with the line it was first seen at,
whether the build keeps one segment, writes many (a small segment size) or runs in worker
processes, and whether the compiled id table or the dict it replaces is used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bm25desk.engine import IndexStore, Searcher, build_index
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index import ingest as ingest_mod
from bm25desk.engine.index import segment_writer
from bm25desk.engine.readers import document

N = 3000
# (line of the repeat, line of the first record): in the same segment, segments apart, and in
# the other half of the file (another worker's byte range); ids of every str kind.
REPEATS = {12: 3, 900: 40, 2950: 7, 2990: 1500, 1700: 1699}
IDS = {3: "p3", 40: "caf\xe9", 7: "\u4e00\u4e8c", 1500: "\U0001f642x", 1699: "p1699"}


def _corpus(path: Path) -> list[str]:
    """Write the corpus; return the skip reasons a build must give, in line order."""
    lines, expected = [], []
    for line in range(1, N + 1):
        first = REPEATS.get(line)
        docid = IDS.get(first or line, f"p{line}") if first else IDS.get(line, f"p{line}")
        lines.append(f"{docid}\tword{line % 13} text{line % 7} row{line}")
        if first is not None:
            where = f"{path}:{line}"
            expected.append(f"{where}: duplicate id {docid!r} (first seen at line {first})")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return expected


def _build(store: IndexStore, path: Path, name: str, workers: int) -> list[str]:
    report = build_index(
        path, name=name, fmt="msmarco-passages", analyzer=Analyzer(), store=store, workers=workers
    )
    assert (report.read, report.indexed) == (N - len(REPEATS), N - len(REPEATS))
    return [f"{s.where}: {s.reason}" for s in report.skipped]


def _check_first_wins(store: IndexStore, name: str) -> None:
    searcher = Searcher(store.open(name))
    for first in REPEATS.values():
        hits = searcher.search(f"row{first}", k=5).hits
        assert [h.docid for h in hits] == [IDS.get(first, f"p{first}")]
    for repeat in REPEATS:
        assert searcher.search(f"row{repeat}", k=5).hits == []


@pytest.mark.parametrize("compiled", [True, False])
def test_repeats_across_segments_are_skipped_as_one_segment_skips_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    if not compiled:  # the dict paths, as without a compiler
        monkeypatch.setattr(document, "_seen", None)
        monkeypatch.setattr(segment_writer, "TermIds", segment_writer.DictTermIds)
    path = tmp_path / "passages.tsv"
    expected = _corpus(path)
    store = IndexStore(tmp_path / "indexes")
    assert _build(store, path, "one", 1) == expected
    monkeypatch.setattr(ingest_mod, "SEGMENT_POSTINGS", 500)  # ~100 documents a segment
    assert _build(store, path, "many", 1) == expected
    _check_first_wins(store, "one")
    _check_first_wins(store, "many")


@pytest.mark.slow
def test_repeats_across_worker_processes_are_reported_as_one_process_reports_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "passages.tsv"
    expected = _corpus(path)
    store = IndexStore(tmp_path / "indexes")
    assert _build(store, path, "two", 2) == expected
    _check_first_wins(store, "two")
