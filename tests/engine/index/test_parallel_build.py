"""A corpus file built in several processes scores exactly like a one-process build."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from bm25desk.engine import IndexStore, Searcher, all_variants, build_index
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index import ingest as ingest_mod
from bm25desk.engine.readers.corpus import read_corpus, split_ranges

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
]


def _corpus(path: Path, n: int = 400) -> None:
    lines = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * j) % len(WORDS)] for j in range(3 + i % 17)]
        lines.append(json.dumps({"_id": f"d{i}", "title": WORDS[i % 5], "text": " ".join(words)}))
    lines.insert(300, lines[5])  # a duplicate id in a later byte range
    lines.insert(250, "{not json")  # a malformed line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_split_ranges_cover_the_file_at_line_starts(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    _corpus(path)
    ranges = split_ranges(path, 3)
    data = path.read_bytes()
    assert ranges[0][0] == 0
    assert ranges[-1][1] == len(data)
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert end == start
        assert data[start - 1 : start] == b"\n"
    ids = [d.docid for r in ranges for d in read_corpus(path, "beir", byte_range=r)]
    assert len(ids) == len(set(ids)) + 1  # the duplicate is only visible across ranges


@pytest.mark.slow
@pytest.mark.parametrize("merge", [True, False])
def test_parallel_build_equals_serial_build(tmp_path: Path, monkeypatch, merge: bool) -> None:
    """The workers' segments are merged into one (or, below MERGE_POSTINGS, kept apart): either
    way the index scores exactly like a one-process build."""
    if not merge:
        monkeypatch.setattr(ingest_mod, "MERGE_POSTINGS", 1)
    path = tmp_path / "corpus.jsonl"
    _corpus(path)
    store = IndexStore(tmp_path / "indexes")
    analyzer = Analyzer.create(stopwords="none", stemmer="none")
    one = build_index(path, name="one", analyzer=analyzer, store=store, workers=1)
    two = build_index(path, name="two", analyzer=analyzer, store=store, workers=3)
    assert (one.read, one.indexed, len(one.skipped)) == (two.read, two.indexed, len(two.skipped))
    assert next(s.where for s in one.skipped) == next(s.where for s in two.skipped)  # line numbers
    s1, s2 = Searcher(store.open("one")), Searcher(store.open("two"))
    assert len(s2.index.segments) == (1 if merge else 3)
    assert (s1.index.n_docs, s1.index.avgdl, s1.index.n_terms) == (
        s2.index.n_docs,
        s2.index.avgdl,
        s2.index.n_terms,
    )
    for variant in all_variants():
        for query in ("alpha beta", "gamma gamma kappa", "omicron xi nu mu"):
            h1 = [(h.docid, h.score) for h in s1.search(query, variant, 50).hits]
            h2 = [(h.docid, h.score) for h in s2.search(query, variant, 50).hits]
            assert h1 == h2, (variant, query)


@pytest.mark.slow
def test_a_script_without_a_main_guard_is_told_why_its_workers_die(tmp_path: Path) -> None:
    """Spawn imports the calling script again in every worker; unguarded, each worker builds
    again instead of working, and dies. The error must say so, not only that workers died."""
    import subprocess
    import sys
    import textwrap

    _corpus(tmp_path / "corpus.jsonl")
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from bm25desk.engine import IndexStore, build_index
            build_index({str(tmp_path / "corpus.jsonl")!r}, name="x",
                        store=IndexStore({str(tmp_path / "indexes")!r}), workers=2)
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "died 3 times" in last
    assert 'if __name__ == "__main__":' in last, last
