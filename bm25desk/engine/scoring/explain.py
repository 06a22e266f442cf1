"""Explanations: why a document scored what it did, term by term — the score ledger.

The ledger runs the same :class:`~bm25desk.engine.scoring.variant.TermWeight` on the same numbers
in the same order as the ranking, so its parts sum to the score bit for bit. It also carries the
query's constraints (``+``/``-``, phrases, ``title:``) with whether each held for this document,
and, per term, a plain sentence where the weight needs one (BM25Adpt's k1*).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bm25desk.engine.scoring import bm25f, explain_text
from bm25desk.engine.scoring.bm25f import BM25F
from bm25desk.engine.scoring.constraints import ConstraintCheck, check_document, constraints_of
from bm25desk.engine.scoring.feedback import Feedback
from bm25desk.engine.scoring.filters import FILTERED_NOTE
from bm25desk.engine.scoring.query import ParsedQuery
from bm25desk.engine.scoring.variant import Variant

if TYPE_CHECKING:
    from bm25desk.engine.scoring.search import Searcher

NOT_A_MATCH = "contains none of the query terms"
FAILS_CONSTRAINTS = "fails the query's constraints (+, -, phrase or title:)"


@dataclass(frozen=True, slots=True)
class TermExplanation:
    """A ledger row: one query term against one document, with formulas and numbers.

    ``plain`` is one plain sentence about the weight where the numbers need one (BM25Adpt says
    why its k1* is what it is), else "".
    """

    surface: str
    term: str | None
    status: str  # matched | unmatched | unknown | stop | short | prohibited
    qtf: int
    tf: int
    df: int
    cf: int
    idf: float
    idf_text: str
    tf_part: float
    tf_text: str
    weight: float
    share: float  # weight / score (0 when the score is 0)
    notes: tuple[str, ...] = ()
    plain: str = ""
    fields: tuple[bm25f.FieldPart, ...] = ()  # bm25f: each scored field's share of the pseudo-tf
    pseudo_tf: float = 0.0  # bm25f: t̃f, the fields' shares summed


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a document scored what it did under one variant: the score ledger.

    ``constraints`` has one entry per ``+word``, ``-word``, phrase or ``title:`` of the query, in
    query order, saying whether this document satisfied it and why.
    """

    docno: int
    docid: str
    title: str
    score: float
    variant: Variant
    length: int
    avgdl: float
    n_docs: int
    terms: tuple[TermExplanation, ...]
    matches: bool  # contains a scored term and satisfies the constraints
    reason: str  # why it does not match, if it does not
    rank: int | None = None
    constraints: tuple[ConstraintCheck, ...] = ()

    @property
    def parts_sum(self) -> float:
        """Return the sum of the term weights, in the order the score adds them."""
        total = 0.0
        for t in self.terms:
            if t.status == "matched":
                total += t.weight
        return total

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the CLI's ``explain --json`` shape)."""
        return explain_text.as_dict(self)

    def as_json(self) -> str:
        """Return :meth:`as_dict` as indented JSON."""
        return explain_text.as_json(self)

    def as_text(self) -> str:
        """Return a Lucene-style indented tree (``score = sum of: …``)."""
        return explain_text.as_text(self)

    def as_markdown(self) -> str:
        """Return the ledger as a Markdown table."""
        return explain_text.as_markdown(self)


def explain_document(
    searcher: Searcher,
    parsed: ParsedQuery,
    docno: int,
    variant: Variant,
    feedback: Feedback | None,
    with_rank: bool,
) -> Explanation:
    """Explain the score of ``docno`` for ``parsed`` (see :meth:`Searcher.explain`)."""
    index = searcher.index
    rec = index.doc(docno)
    rows = _rows(searcher, parsed, docno, float(rec.length), variant, feedback)
    # Sum in the scoring order (distinct terms in query order) so the ledger adds up exactly.
    by_term = {r.term: r for r in rows if r.status == "matched"}
    score = 0.0
    for term, _ in parsed.scored:
        if term in by_term:
            score += by_term[term].weight
    rows = [
        dataclasses.replace(r, share=(r.weight / score if score else 0.0))
        if r.status == "matched"
        else r
        for r in rows
    ]
    if searcher.filters:  # the filters' note beside each term's df and N (engine/scoring/filters)
        rows = [dataclasses.replace(r, notes=(*r.notes, FILTERED_NOTE)) for r in rows]
    checks = tuple(check_document(index, c, docno) for c in constraints_of(parsed))
    matches, reason = _verdict(bool(by_term), checks)
    rank = searcher.rank_of(parsed, variant, feedback, docno) if with_rank and matches else None
    return Explanation(
        docno,
        rec.docid,
        rec.title,
        score,
        variant,
        rec.length,
        searcher.statistics.stats.avgdl,
        searcher.statistics.stats.n_docs,
        tuple(rows),
        matches,
        reason,
        rank,
        checks,
    )


def _verdict(any_term: bool, checks: tuple[ConstraintCheck, ...]) -> tuple[bool, str]:
    if not any_term:
        return False, NOT_A_MATCH
    failed = [c for c in checks if not c.held]
    if not failed:
        return True, ""
    return False, FAILS_CONSTRAINTS + ": " + "; ".join(
        f"{c.constraint.label} ({c.reason})" for c in failed
    )


def _rows(
    searcher: Searcher,
    parsed: ParsedQuery,
    docno: int,
    dl: float,
    variant: Variant,
    feedback: Feedback | None,
) -> list[TermExplanation]:
    """Return one ledger row per query token (a repeated term once, with its qtf)."""
    rows: list[TermExplanation] = []
    qtfs = dict(parsed.scored)
    seen: set[str] = set()
    for tok in parsed.tokens:
        if tok.term is None:
            rows.append(_row(tok.surface, None, tok.status, qtf=0))
        elif tok.role == "prohibited":
            rows.append(_row(tok.surface, tok.term, "prohibited", qtf=0))
        elif tok.term not in seen:
            seen.add(tok.term)
            qtf = qtfs.get(tok.term, 1)
            rows.append(
                _term_row(searcher, tok.surface, tok.term, qtf, docno, dl, variant, feedback)
            )
    return rows


def _term_row(
    searcher: Searcher,
    surface: str,
    term: str,
    qtf: int,
    docno: int,
    dl: float,
    variant: Variant,
    feedback: Feedback | None,
) -> TermExplanation:
    w = searcher.weight(term, variant, feedback)
    stats = searcher.term_stats_for(term, variant, feedback)
    if w is None or stats is None:
        return _row(surface, term, "unknown", qtf=qtf)
    plain = variant.plain_words(stats, searcher.statistics.stats)
    fields: tuple[bm25f.FieldPart, ...] = ()
    if isinstance(variant, BM25F):
        fields = tuple(bm25f.field_detail(searcher, term, docno, variant))
        tf = sum(f.tf for f in fields)
    else:
        docnos, tfs = searcher.index.postings(term)
        i = int(np.searchsorted(docnos, docno))
        tf = int(tfs[i]) if i < docnos.size and docnos[i] == docno else 0
    if tf == 0:
        return _row(
            surface,
            term,
            "unmatched",
            qtf=qtf,
            df=stats.df,
            cf=stats.cf,
            idf=w.idf,
            idf_text=w.idf_text,
            notes=w.notes,
            plain=plain,
        )
    if isinstance(variant, BM25F):
        ptf = bm25f.pseudo_tf(fields)
        part = float(bm25f.saturate(np.array([ptf]), variant.k1)[0])
        tf_text = bm25f.tf_text(fields, variant.k1)
    else:
        ptf = 0.0
        part = float(w.tf_part(np.array([float(tf)]), np.array([dl]))[0])
        tf_text = w.tf_text(float(tf), dl)
    return TermExplanation(
        surface,
        term,
        "matched",
        qtf,
        tf,
        stats.df,
        stats.cf,
        w.idf,
        w.idf_text,
        part,
        tf_text,
        (qtf * w.idf) * part,
        0.0,
        w.notes,
        plain,
        fields,
        ptf,
    )


def _row(
    surface: str,
    term: str | None,
    status: str,
    *,
    qtf: int,
    df: int = 0,
    cf: int = 0,
    idf: float = 0.0,
    idf_text: str = "",
    notes: tuple[str, ...] = (),
    plain: str = "",
) -> TermExplanation:
    return TermExplanation(
        surface, term, status, qtf, 0, df, cf, idf, idf_text, 0.0, "", 0.0, 0.0, notes, plain
    )
