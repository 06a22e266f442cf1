"""Comparing two configurations on one query (Qt-free, runs in a worker).

For configurations A and B (variant + parameters) the same query is ranked twice. Every document
in either top k gets its rank under both (its full rank, not only within the top k), so a
document that left B's top k still shows where it went. Ties are broken as everywhere else: by
internal document order.

- overlap@k: documents in both top-k lists;
- Kendall τ (τ-b): rank agreement between A and B over the documents in either top k;
- a moved document's score change, split by query term.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bm25desk.engine import Searcher, SearchResult, Variant
from bm25desk.engine.scoring.query import ParsedQuery


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One document in either top k, with its rank and score under A and B."""

    docno: int
    docid: str
    title: str
    rank_a: int | None  # None when it does not match at all
    rank_b: int | None
    score_a: float
    score_b: float
    in_a: bool  # within A's top k
    in_b: bool

    @property
    def movement(self) -> str:
        """Return ``entered``, ``left``, ``up``, ``down`` or ``same`` (B relative to A)."""
        if self.in_b and not self.in_a:
            return "entered"
        if self.in_a and not self.in_b:
            return "left"
        if self.rank_a is None or self.rank_b is None or self.rank_a == self.rank_b:
            return "same"
        return "up" if self.rank_b < self.rank_a else "down"

    @property
    def shift(self) -> int:
        """Return how many places the document moved up under B (negative: down)."""
        if self.rank_a is None or self.rank_b is None:
            return 0
        return self.rank_a - self.rank_b


@dataclass(frozen=True, slots=True)
class HeatColumn:
    """One document column of the term × document heatmap."""

    rank: int
    docno: int
    docid: str
    title: str
    weights: tuple[float, ...]  # one per heatmap term (0 where absent)


@dataclass(frozen=True, slots=True)
class CompareOutcome:
    """Two rankings of one query, their agreement, and the heatmaps of both top k."""

    query: str
    variant_a: Variant
    variant_b: Variant
    k: int
    rows: tuple[CompareRow, ...]
    overlap: int
    tau: float | None
    terms: tuple[str, ...]
    heat_a: tuple[HeatColumn, ...]
    heat_b: tuple[HeatColumn, ...]
    result_a: SearchResult
    result_b: SearchResult


@dataclass(frozen=True, slots=True)
class TermDelta:
    """One term's contribution to a document under A and B."""

    term: str
    weight_a: float
    weight_b: float

    @property
    def delta(self) -> float:
        """Return B − A."""
        return self.weight_b - self.weight_a


@dataclass(frozen=True, slots=True)
class DocDelta:
    """A document's score change from A to B, split by term."""

    docno: int
    docid: str
    title: str
    score_a: float
    score_b: float
    rank_a: int | None
    rank_b: int | None
    terms: tuple[TermDelta, ...]


def kendall_tau_b(xs: list[float], ys: list[float]) -> float | None:
    """Return Kendall's τ-b of two paired lists (None with fewer than two pairs or no variance)."""
    n = len(xs)
    if n < 2:
        return None
    concordant = discordant = ties_x = ties_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = xs[i] - xs[j]
            dy = ys[i] - ys[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denom = ((concordant + discordant + ties_x) * (concordant + discordant + ties_y)) ** 0.5
    if denom == 0:
        return None
    return (concordant - discordant) / denom


def _ranks(scores: np.ndarray, ok: np.ndarray, docnos: list[int]) -> dict[int, int | None]:
    """Return each docno's full rank (score desc, ties by docno), None when it does not match."""
    out: dict[int, int | None] = {}
    idx = np.arange(scores.size)
    for d in docnos:
        if not ok[d]:
            out[d] = None
            continue
        s = scores[d]
        better = ok & ((scores > s) | ((scores == s) & (idx < d)))
        out[d] = int(better.sum()) + 1
    return out


def _heat(result: SearchResult, terms: tuple[str, ...]) -> tuple[HeatColumn, ...]:
    cols = []
    for hit in result.hits:
        by_term = {c.term: c.weight for c in hit.contributions}
        cols.append(
            HeatColumn(
                hit.rank,
                hit.docno,
                hit.docid,
                hit.title,
                tuple(by_term.get(t, 0.0) for t in terms),
            )
        )
    return tuple(cols)


def run_compare(
    searcher: Searcher, parsed: ParsedQuery, variant_a: Variant, variant_b: Variant, k: int
) -> CompareOutcome:
    """Rank ``parsed`` under A and B and compare the two top-k lists."""
    result_a = searcher.search_parsed(parsed, variant_a, k)
    result_b = searcher.search_parsed(parsed, variant_b, k)
    top_a = [h.docno for h in result_a.hits]
    top_b = [h.docno for h in result_b.hits]
    union = list(dict.fromkeys(top_a + top_b))
    scores_a, ok_a = searcher.scores(parsed, variant_a)
    scores_b, ok_b = searcher.scores(parsed, variant_b)
    ranks_a = _ranks(scores_a, ok_a, union)
    ranks_b = _ranks(scores_b, ok_b, union)
    set_a, set_b = set(top_a), set(top_b)
    index = searcher.index
    rows = []
    for d in union:
        rec = index.doc(d)
        rows.append(
            CompareRow(
                d,
                rec.docid,
                rec.title,
                ranks_a[d],
                ranks_b[d],
                float(scores_a[d]),
                float(scores_b[d]),
                d in set_a,
                d in set_b,
            )
        )
    worst = index.n_slots + 1
    xs = [float(ranks_a[d] or worst) for d in union]
    ys = [float(ranks_b[d] or worst) for d in union]
    terms = parsed.terms
    return CompareOutcome(
        parsed.text,
        variant_a,
        variant_b,
        k,
        tuple(rows),
        len(set_a & set_b),
        kendall_tau_b(xs, ys),
        terms,
        _heat(result_a, terms),
        _heat(result_b, terms),
        result_a,
        result_b,
    )


def compare_row(
    searcher: Searcher,
    parsed: ParsedQuery,
    docno: int,
    variant_a: Variant,
    variant_b: Variant,
    k: int,
) -> CompareRow:
    """Return the comparison of one document wherever it ranks (asked about, outside both top k)."""
    scores_a, ok_a = searcher.scores(parsed, variant_a)
    scores_b, ok_b = searcher.scores(parsed, variant_b)
    rank_a = _ranks(scores_a, ok_a, [docno])[docno]
    rank_b = _ranks(scores_b, ok_b, [docno])[docno]
    rec = searcher.index.doc(docno)
    return CompareRow(
        docno,
        rec.docid,
        rec.title,
        rank_a,
        rank_b,
        float(scores_a[docno]),
        float(scores_b[docno]),
        rank_a is not None and rank_a <= k,
        rank_b is not None and rank_b <= k,
    )


def doc_delta(
    searcher: Searcher, parsed: ParsedQuery, row: CompareRow, variant_a: Variant, variant_b: Variant
) -> DocDelta:
    """Return ``row``'s document score change from A to B, term by term."""
    ea = searcher.explain_docno(parsed, row.docno, variant_a)
    eb = searcher.explain_docno(parsed, row.docno, variant_b)
    wa = {t.term: t.weight for t in ea.terms if t.status == "matched"}
    wb = {t.term: t.weight for t in eb.terms if t.status == "matched"}
    terms = tuple(
        TermDelta(t, wa.get(t, 0.0), wb.get(t, 0.0)) for t in parsed.terms if t in wa or t in wb
    )
    return DocDelta(
        row.docno, row.docid, row.title, ea.score, eb.score, row.rank_a, row.rank_b, terms
    )
