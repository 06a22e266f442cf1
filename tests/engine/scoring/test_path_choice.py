"""The searcher's choice between exhaustive scoring and the pruning kernel (impacts.prefer)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from bm25desk.engine.scoring import impacts

N = 100_000  # above SMALL_DOCS: the postings decide


def index(n: int = N) -> Any:
    """Return what prefer reads of an index: its number of document slots."""
    return SimpleNamespace(n_slots=n)


@pytest.mark.parametrize(
    ("postings", "k", "n_terms", "want"),
    [
        (int(1.5 * N), 11, 4, False),  # few terms, 1.5 a document: the kernel
        (int(2.5 * N), 11, 4, False),  # few terms, 2.5 a document: still the kernel
        (int(2.5 * N), 11, 0, True),  # term count unknown: the old switch (2 a document)
        (int(2.5 * N), 11, 50, True),  # many terms: exhaustive from 2 a document
        (int(2.5 * N), 11, impacts.FEW_TERMS, True),
        (int(4.5 * N), 11, 3, True),  # few terms, above 4 a document: exhaustive
        (int(0.05 * N), 1001, 3, True),  # deep k: the rule for few terms does not apply
        (int(0.01 * N), 1001, 3, False),
    ],
)
def test_compiled_switch(postings: int, k: int, n_terms: int, want: bool) -> None:
    assert impacts.prefer(index(), postings, k, True, n_terms) is want


def test_small_collections_always_exhaustive_when_compiled() -> None:
    assert impacts.prefer(index(impacts.SMALL_DOCS), 1, 11, True, 2)
    assert not impacts.prefer(index(impacts.SMALL_DOCS), 0, 11, True, 2)  # nothing to score


def test_numpy_path_ignores_the_term_count() -> None:
    for n_terms in (0, 2, 100):
        assert impacts.prefer(index(), N // 4, 11, False, n_terms)
        assert not impacts.prefer(index(), N // 8, 11, False, n_terms)


def test_searcher_passes_its_term_count(monkeypatch: pytest.MonkeyPatch, tiny_index: Any) -> None:
    from bm25desk.engine import Searcher

    seen: list[int] = []
    real = impacts.prefer

    def spy(ix: Any, postings: int, k: int, compiled: bool = False, n_terms: int = 0) -> bool:
        seen.append(n_terms)
        return real(ix, postings, k, compiled, n_terms)

    monkeypatch.setattr(impacts, "prefer", spy)
    Searcher(tiny_index).search("cat mat cat dog", k=5)  # three distinct terms
    assert seen == [3]
