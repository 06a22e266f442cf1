"""Relevance feedback: with documents marked relevant, every variant's idf becomes the RSJ weight.

Robertson & Sparck Jones (1976): with R documents marked relevant, r of them containing the term,
``w = ln[(r + 0.5)(N − R − df + r + 0.5) / ((df − r + 0.5)(R − r + 0.5))]``. Only the idf is
replaced; each variant's tf part (and BM25Adpt's k1*) stays as it is.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from bm25desk.engine.index.arrays import I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.formulas import fmt
from bm25desk.engine.scoring.variant import TermWeight


@dataclass(frozen=True, slots=True)
class Feedback:
    """Relevance information: documents the user marked relevant (docnos).

    With feedback, every variant's idf is replaced by the Robertson/Sparck Jones weight.
    """

    relevant: frozenset[int]


def rsj_weight(r: float, big_r: float, df: float, n: float) -> float:
    """Return the Robertson/Sparck Jones relevance weight (natural log).

    ``ln[(r + 0.5)(N − R − df + r + 0.5) / ((df − r + 0.5)(R − r + 0.5))]`` with R documents
    marked relevant, r of them containing the term.
    """
    return math.log(((r + 0.5) * (n - big_r - df + r + 0.5)) / ((df - r + 0.5) * (big_r - r + 0.5)))


def rsj_text(r: float, big_r: float, df: float, n: float) -> str:
    """Return the RSJ weight's formula with the numbers filled in (and its value)."""
    value = rsj_weight(r, big_r, df, n)
    return (
        f"ln[({fmt(r)} + 0.5)({fmt(n)} − {fmt(big_r)} − {fmt(df)} + {fmt(r)} + 0.5) / "
        f"(({fmt(df)} − {fmt(r)} + 0.5)({fmt(big_r)} − {fmt(r)} + 0.5))] = {fmt(value)}"
    )


def with_feedback(
    index: Index,
    term: str,
    w: TermWeight,
    df: int,
    feedback: Feedback,
    containing: I64 | None = None,
) -> TermWeight:
    """Return ``w`` with its idf replaced by the RSJ weight for the live relevant documents.

    ``containing`` are the documents that count as containing the term (default: its postings;
    bm25f passes those with it in any scored field).
    """
    rel = np.array(sorted(d for d in feedback.relevant if index.is_live(d)), dtype=np.int64)
    docnos = index.postings(term)[0] if containing is None else containing
    r = int(np.isin(rel, docnos, assume_unique=True).sum()) if rel.size else 0
    n, big_r = index.n_docs, int(rel.size)
    value = rsj_weight(r, big_r, df, n)
    text = f"RSJ (R = {big_r} marked relevant, r = {r} contain it): {rsj_text(r, big_r, df, n)}"
    return dataclasses.replace(w, idf=value, idf_text=text)
