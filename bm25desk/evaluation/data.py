"""The evaluation's data: queries, judgements, ranked lists, and the error bad input raises.

Every object is immutable. Readers fill ``skipped`` with each malformed line as a
:class:`~bm25desk.engine.readers.corpus.Skip` (``where`` = ``"<source>:<line>"``, 1-based) and
``notes`` with informational messages, so nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from bm25desk.engine.readers.corpus import Skip

__all__ = ["EvalInputError", "FloatArray", "Qrels", "Queries", "Query", "Ranking", "Run"]

FloatArray: TypeAlias = npt.NDArray[np.float64]


class EvalInputError(ValueError):
    """An evaluation input (queries, judgements, run, metric, option) cannot be used.

    The message is one line meant for the user: it names the file and what is wrong.
    """


@dataclass(frozen=True, slots=True)
class Query:
    """One query: its id (as the judgements spell it) and its text."""

    qid: str
    text: str


@dataclass(frozen=True, slots=True)
class Queries:
    """Queries in file order, with what the reader could not use.

    Attributes
    ----------
    items
        The queries, in the order of the file; ids are unique (later duplicates are skipped).
    format
        The format that was read (one of :data:`QUERY_FORMATS`).
    source
        File path, or ``"<string>"``.
    skipped
        Malformed or duplicate records, ``where`` = ``"source:line"``.
    notes
        Informational messages (ordinal ids used, encoding fallback...).
    """

    items: tuple[Query, ...]
    format: str
    source: str = "<string>"
    skipped: tuple[Skip, ...] = ()
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        """Return the number of queries."""
        return len(self.items)

    def __iter__(self) -> Iterator[Query]:
        """Iterate over the queries in file order."""
        return iter(self.items)

    def ids(self) -> tuple[str, ...]:
        """Return the query ids in file order."""
        return tuple(q.qid for q in self.items)

    def text(self, qid: str) -> str | None:
        """Return the text of query ``qid``, or None when there is no such query."""
        for q in self.items:
            if q.qid == qid:
                return q.text
        return None


@dataclass(frozen=True, slots=True)
class Qrels:
    """Relevance judgements: ``judgements[qid][docid] = relevance`` (an int; > 0 is relevant).

    Attributes
    ----------
    judgements
        Per query (in order of first appearance), the judged documents and their relevance.
    format, source, skipped, notes
        As for :class:`Queries`.
    """

    judgements: Mapping[str, Mapping[str, int]]
    format: str
    source: str = "<string>"
    skipped: tuple[Skip, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def n_queries(self) -> int:
        """Number of queries with at least one judgement."""
        return len(self.judgements)

    @property
    def n_judgements(self) -> int:
        """Number of (query, document) judgements."""
        return sum(len(d) for d in self.judgements.values())

    @property
    def n_relevant(self) -> int:
        """Number of judgements with a relevance above 0."""
        return sum(1 for d in self.judgements.values() for r in d.values() if r > 0)

    def qids(self) -> tuple[str, ...]:
        """Return the judged query ids, in order of first appearance."""
        return tuple(self.judgements)

    def relevant(self, qid: str, min_rel: int = 1) -> frozenset[str]:
        """Return the documents judged at least ``min_rel`` for ``qid`` (empty if unjudged)."""
        return frozenset(d for d, r in self.judgements.get(qid, {}).items() if r >= min_rel)

    @classmethod
    def from_mapping(
        cls, judgements: Mapping[str, Mapping[str, int]], *, source: str = "<mapping>"
    ) -> Qrels:
        """Wrap a plain ``{qid: {docid: relevance}}`` mapping (copied)."""
        return cls(
            {str(q): {str(d): int(r) for d, r in docs.items()} for q, docs in judgements.items()},
            format="mapping",
            source=source,
        )


@dataclass(frozen=True, slots=True)
class Ranking:
    """One query's ranked list: ``docids[i]`` is at rank ``i + 1`` with score ``scores[i]``.

    ``scores`` is a read-only float64 array (8 bytes a hit: an experiment over many variants
    keeps many runs in memory).
    """

    docids: tuple[str, ...]
    scores: FloatArray

    def __len__(self) -> int:
        """Return the number of hits."""
        return len(self.docids)

    @classmethod
    def of(cls, docids: Sequence[str], scores: Sequence[float] | FloatArray) -> Ranking:
        """Build a ranking from parallel sequences (scores are copied and frozen)."""
        arr = np.array(scores, dtype=np.float64)
        if arr.shape != (len(docids),):
            raise ValueError(f"{len(docids)} docids but {arr.size} scores")
        arr.flags.writeable = False
        return cls(tuple(docids), arr)


@dataclass(frozen=True, slots=True)
class Run:
    """Ranked lists per query, as in a TREC run file.

    Attributes
    ----------
    rankings
        Per query id (in run order), its :class:`Ranking`.
    tag
        The run tag (last column of a run file; no whitespace).
    source, skipped, notes
        As for :class:`Queries` (empty for runs produced in memory).
    """

    rankings: Mapping[str, Ranking]
    tag: str = "bm25desk"
    source: str = ""
    skipped: tuple[Skip, ...] = ()
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        """Return the number of queries with a ranking."""
        return len(self.rankings)

    @property
    def n_hits(self) -> int:
        """Total number of (query, document) lines."""
        return sum(len(r) for r in self.rankings.values())
