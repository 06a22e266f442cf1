"""Fixtures of the evaluation tests: the fake searcher and a query/judgement file pair."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit import DOCS, JUDGED, QUERIES, FakeSearcher


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``scifact`` marker (pyproject declares it too once the skip policy is in)."""
    config.addinivalue_line(
        "markers", "scifact: needs BEIR SciFact (optional data) beside the clone"
    )


@pytest.fixture
def searcher() -> FakeSearcher:
    return FakeSearcher(DOCS)


@pytest.fixture
def cli_files(tmp_path: Path) -> tuple[Path, Path]:
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, docs in JUDGED.items() for d, r in docs.items())
    )
    return queries, qrels
