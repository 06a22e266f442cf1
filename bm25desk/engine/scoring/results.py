"""What a search returns: ranked hits with their per-term contributions, and the query as analysed.

Ranking: score descending; **ties are broken by index order** (:data:`TIE_RULE`). Hits that tie
on score with a neighbour carry a :attr:`Hit.tie_group` so a view can mark them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from bm25desk.engine.index.arrays import F64
from bm25desk.engine.scoring.feedback import Feedback
from bm25desk.engine.scoring.query import ParsedQuery, QueryToken
from bm25desk.engine.scoring.variant import Variant

TIE_RULE = (
    "Documents with equal scores are listed in index order: the order they were indexed in "
    "(file order for a corpus file, sorted path order for a folder, then later updates)."
)
"""The tie rule in words, for a tooltip or a report (the CLI, the app and evaluation use it)."""


@dataclass(frozen=True, slots=True)
class Contribution:
    """One query term's part of one document's score: ``weight = qtf · idf · tf_part``."""

    term: str
    qtf: int
    tf: int
    df: int
    idf: float
    tf_part: float
    weight: float


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked document with its per-term contributions (in query-term order).

    ``tie_group`` is None when no neighbour has the same score; otherwise it is the rank of the
    first hit of the run of equal scores this hit belongs to (so hits with the same ``tie_group``
    tie). A last hit that ties with the next document, beyond the list, has one too.
    """

    rank: int
    docno: int
    docid: str
    score: float
    title: str
    location: str
    length: int
    contributions: tuple[Contribution, ...]
    tie_group: int | None = None


class QueryAnalysis(NamedTuple):
    """The query as the searcher understood it: tokens with status and role, terms, constraints.

    Immutable; a named tuple, as :class:`SearchResult` is (every search makes one).
    """

    parsed: ParsedQuery
    tokens: tuple[QueryToken, ...]  # with status "unknown" for terms in no document
    unknown: tuple[str, ...]
    stopped: tuple[str, ...]

    @property
    def terms(self) -> tuple[str, ...]:
        """Return the distinct scored terms."""
        return self.parsed.terms


class SearchResult(NamedTuple):
    """A ranking: the top hits, how many documents matched, and the query as analysed.

    Immutable (it crosses threads by signal); a named tuple rather than a frozen dataclass
    because every search makes one: ~0.3 µs against ~0.95 for nine fields.
    """

    query: str
    analysis: QueryAnalysis
    variant: Variant
    hits: Sequence[Hit]  # a lazy Hits (engine/scoring/hits.py) from the searcher; any sequence
    n_matches: int
    n_docs: int
    avgdl: float
    seconds: float
    feedback: Feedback | None = None

    @property
    def tie_rule(self) -> str:
        """Return how hits with equal scores are ordered (:data:`TIE_RULE`)."""
        return TIE_RULE

    @property
    def has_ties(self) -> bool:
        """Return whether any hit ties on score with a neighbour."""
        groups = getattr(self.hits, "tie_groups", None)  # Hits knows without building a Hit
        if groups is not None:
            return any(g is not None for g in groups)
        return any(h.tie_group is not None for h in self.hits)


def tie_groups(scores: Sequence[float] | F64, next_score: float | None = None) -> list[int | None]:
    """Return each ranked score's tie group: the rank of the first of its run of equal scores.

    ``scores`` are in rank order; ``next_score`` is the score of the document after the last one
    (None when there is none). A score equal to neither neighbour gets None.
    """
    arr = np.asarray(scores, dtype=np.float64)
    n = int(arr.size)
    if n == 0:
        return []
    starts = np.flatnonzero(np.r_[True, arr[1:] != arr[:-1]])
    lengths = np.diff(np.r_[starts, n])
    tied = lengths > 1
    if next_score is not None and arr[-1] == next_score:
        tied[-1] = True
    if not tied.any():
        return [None] * n
    group: list[int] = np.repeat(np.where(tied, starts + 1, 0), lengths).tolist()
    return [g or None for g in group]


def variant_dict(v: Variant) -> dict[str, Any]:
    """Return ``{"key", **parameters}`` (the JSON shape of a variant)."""
    return {"key": v.key, **v.values()}
