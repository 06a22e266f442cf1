"""Checks that an experiment's inputs fit together and that its numbers can be right.

A misread file rarely fails by itself: it yields judgements whose ids match nothing, or queries that
retrieve their own text, and every metric comes out too low or 0 with an exit status of success.
These checks turn what can be told apart into a note, a hint or an error:

- judged documents the index does not hold (a note; an error when no relevant one is there);
- a topic set where every metric is 0 although queries retrieved documents
  (:class:`~bm25desk.evaluation.results.ImplausibleResultError`);
- queries that find themselves first (ArguAna, Quora: a hint to drop self hits);
- SMART query numbers where the judgements count queries by position (Cranfield: a hint).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bm25desk.evaluation.data import EvalInputError, Queries, Query
from bm25desk.evaluation.interfaces import IndexLike
from bm25desk.evaluation.results import ExperimentResult, ImplausibleResultError

__all__ = [
    "MIN_QUERIES_FOR_ZERO_CHECK",
    "SearchStats",
    "check_nonzero",
    "missing_judged",
    "missing_note",
    "ordinal_ids_hint",
    "require_findable",
    "self_hit_hint",
]

MIN_QUERIES_FOR_ZERO_CHECK = 5
"""Every metric 0 over fewer queries with hits can be honest (hard queries); over more, not."""

_SELF_HIT_SHARE = 0.2  # of the queries with hits, ranking their own id first (ArguAna: most)

Judgements = Mapping[str, Mapping[str, int]]


@dataclass(slots=True)
class SearchStats:
    """What one configuration's searches retrieved, for the checks (filled while searching)."""

    with_hits: int = 0  # judged queries whose ranking is not empty
    judged_retrieved: int = 0  # retrieved documents that are judged for their query
    self_first: int = 0  # queries whose first hit has the query's own id
    self_first_qids: list[str] = field(default_factory=list)

    def add(self, qid: str, docids: Sequence[str], judged: Mapping[str, int] | None) -> None:
        """Count one query's ranking (before self hits are dropped)."""
        if docids and docids[0] == qid:
            self.self_first += 1
            self.self_first_qids.append(qid)
        if judged is None or not docids:
            return
        self.with_hits += 1
        self.judged_retrieved += sum(1 for d in docids if d in judged)


def _sample(ids: Sequence[str], n: int = 3) -> str:
    return ", ".join(repr(i) for i in ids[:n])


def _index_ids(index: IndexLike, n: int = 3) -> list[str]:
    """Return a few document ids of the index, when it can list them (the engine's can)."""
    docid = getattr(index, "docid", None)
    slots = getattr(index, "n_slots", 0)
    is_live = getattr(index, "is_live", None)
    if docid is None or not isinstance(slots, int):
        return []
    out: list[str] = []
    for docno in range(min(slots, 1000)):
        if is_live is None or is_live(docno):
            out.append(str(docid(docno)))
            if len(out) == n:
                break
    return out


# --------------------------------------------------------------------------------------------
# Before searching
# --------------------------------------------------------------------------------------------


def missing_judged(
    index: IndexLike, judged: Sequence[str], judgements: Judgements
) -> tuple[dict[str, tuple[str, ...]], int]:
    """Return per judged query its judged documents absent from the index; how many are relevant."""
    missing: dict[str, tuple[str, ...]] = {}
    relevant = 0
    for qid in judged:
        absent = tuple(d for d in judgements[qid] if index.docno(d) is None)
        if absent:
            missing[qid] = absent
            relevant += sum(1 for d in absent if judgements[qid][d] > 0)
    return missing, relevant


def missing_note(missing: Mapping[str, tuple[str, ...]], relevant: int) -> str | None:
    """Say what the judged documents absent from the index do to the metrics (None if none are)."""
    if not missing:
        return None
    n = sum(len(v) for v in missing.values())
    where = f"{n} judged documents in {len(missing)} queries are not in the index"
    if relevant == 0:
        return f"{where}; all are judged non-relevant, so they change no metric"
    if relevant == n:
        return (
            f"{where}, all {n} judged relevant: they count as relevant and unretrieved "
            "(in recall and in nDCG's ideal ranking)"
        )
    return (
        f"{where}; the {relevant} judged relevant count as relevant and unretrieved (in recall "
        f"and in nDCG's ideal ranking), the other {n - relevant} change no metric"
    )


def require_findable(
    index: IndexLike,
    judged: Sequence[str],
    judgements: Judgements,
    missing: Mapping[str, tuple[str, ...]],
    qrels_said: str,
) -> None:
    """Refuse judgements none of whose relevant documents is in the index (ids that never match).

    Raises
    ------
    EvalInputError
        Every relevant judged document is missing from the index.
    """
    relevant = [d for q in judged for d, r in judgements[q].items() if r > 0]
    absent = {d for q, docs in missing.items() for d in docs}
    if not relevant or any(d not in absent for d in relevant):
        return
    indexed = _index_ids(index)
    like = f"; indexed ids look like {_sample(indexed)}" if indexed else ""
    raise EvalInputError(
        f"none of the {len(relevant)} relevant judged documents is in the index (judged ids look "
        f"like {_sample(relevant)}{like}): the judgements ({qrels_said}) and the index use "
        "different document ids, or the judgement file is read in the wrong format "
        "(--qrels-format)"
    )


def ordinal_ids_hint(queries: Queries | Sequence[Query], judgements: Judgements) -> str | None:
    """Hint at ``smart_ids="ordinal"`` when the judgements number SMART queries by position."""
    if not isinstance(queries, Queries) or queries.format != "smart":
        return None
    declared = set(queries.ids())
    ordinal = {str(i) for i in range(1, len(queries) + 1)}
    if declared == ordinal:
        return None
    judged = set(judgements)
    by_position, by_number = len(judged & ordinal), len(judged & declared)
    if by_position <= by_number:
        return None
    return (
        f"the judgements' query ids fit positions in the query file (1, 2, 3...) better than its "
        f".I numbers ({by_position} against {by_number} judged queries): read the queries with "
        "--smart-ids ordinal (Cranfield's convention)"
    )


# --------------------------------------------------------------------------------------------
# After searching
# --------------------------------------------------------------------------------------------


def self_hit_hint(
    stats: Sequence[SearchStats], searched: Sequence[str], index: IndexLike, drop_self_hits: bool
) -> str | None:
    """Hint at dropping self hits when queries find a document with their own id first.

    In collections whose queries are documents too (ArguAna, Quora) every query retrieves itself;
    BEIR removes those hits. Query ids that merely coincide with document ids (CISI numbers both
    1, 2, 3...) are no sign: only a query that *ranks* its own id first is.
    """
    if drop_self_hits or not stats:
        return None
    worst = max(stats, key=lambda s: s.self_first)
    with_hits = max(s.with_hits for s in stats)
    if worst.self_first < max(2, _SELF_HIT_SHARE * with_hits):
        return None
    are_docs = sum(1 for q in searched if index.docno(q) is not None)
    return (
        f"{worst.self_first} of {len(searched)} queries rank a document with the query's own id "
        f"first ({are_docs} query ids are document ids, e.g. {_sample(worst.self_first_qids)}): "
        "if the queries are documents of the collection (ArguAna, Quora), drop self hits "
        "(--drop-self-hits, BEIR's rule), or every query is credited with finding itself"
    )


def check_nonzero(
    result: ExperimentResult, stats: Sequence[SearchStats], queries_said: str, qrels_said: str
) -> str | None:
    """Refuse an experiment where every metric is 0 although queries retrieved documents.

    Judged@k counts judged documents, not relevant ones, so it is not asked to be above 0: every
    *other* metric of every configuration being 0 over :data:`MIN_QUERIES_FOR_ZERO_CHECK` or more
    queries with hits means the judgements and the runs do not meet.

    Returns
    -------
    str or None
        A note when every metric is 0 over fewer queries (it may be honest), else None.

    Raises
    ------
    ImplausibleResultError
        Every metric is 0 over enough queries; the error carries ``result``.
    """
    relevance = [m for m in result.metrics if not m.startswith("Judged")]
    if not relevance or not stats:
        return None
    if any(c.aggregate[m] != 0.0 for c in result.configs for m in relevance):
        return None
    with_hits = max(s.with_hits for s in stats)
    if with_hits == 0:
        return None
    judged = max(s.judged_retrieved for s in stats)
    seen = (
        f"{judged} retrieved documents are judged, none relevant"
        if judged
        else "none of the retrieved documents is judged"
    )
    message = (
        f"every metric is 0 for every configuration although {with_hits} judged queries "
        f"retrieved documents ({seen}): queries {queries_said}, judgements {qrels_said}; check "
        "that each file is read in its format (--queries-format, --qrels-format) and that their "
        "ids are the index's"
    )
    if with_hits < MIN_QUERIES_FOR_ZERO_CHECK:
        return message
    raise ImplausibleResultError(message, result)
