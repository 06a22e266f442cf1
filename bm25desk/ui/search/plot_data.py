"""The numbers behind the live plots, computed off the GUI thread (Qt-free).

Three pictures the BM25 tutorials draw, for the current variant and parameters:

- **tf saturation**: the tf part over tf = 0…max at this document's length L, with the document's
  query terms as points (one curve per term only where they differ: BM25Adpt's per-term k1*); at
  tf = 0 the curve is 0 (an absent term adds nothing), so a lower bound δ shows as a step;
- **length normalisation**: the tf part over L at each term's tf in this document, with the
  document's L and the average length Lavg marked;
- **idf against df**: the variant's idf over df = 1…N (log scale), with the query terms marked.
  BM25Adpt's idf (G¹) depends on each term's postings, not on df alone: only its points are drawn.

Every value comes from the engine's :class:`~bm25desk.engine.scoring.variants.TermWeight`, the
object the scores themselves are computed with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bm25desk.engine import Explanation, Searcher, Variant
from bm25desk.engine.scoring.bm25f import BM25F
from bm25desk.engine.scoring.variant import TermWeight

FloatArray = npt.NDArray[np.float64]
_POINTS = 241


def _frozen(values: FloatArray) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64).copy()
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, slots=True)
class Series:
    """A curve; ``term`` None means "every query term" (drawn in a neutral colour)."""

    term: str | None
    xs: FloatArray
    ys: FloatArray


@dataclass(frozen=True, slots=True)
class Point:
    """A query term's position on a curve."""

    term: str
    x: float
    y: float


TF_AXIS = "tf (occurrences in the document)"
PSEUDO_TF_AXIS = "pseudo-tf t̃f = Σ w_f·tf_f / B_f"


@dataclass(frozen=True, slots=True)
class PlotData:
    """Curves and points for the three plots."""

    variant_label: str
    length: float | None  # this document's L (None: no document selected)
    avgdl: float
    n_docs: int
    tf_curves: tuple[Series, ...]
    tf_points: tuple[Point, ...]
    length_curves: tuple[Series, ...]
    length_points: tuple[Point, ...]
    idf_curve: Series | None
    idf_points: tuple[Point, ...]
    notes: tuple[str, ...] = ()
    tf_axis: str = TF_AXIS


def _dedupe(curves: list[Series]) -> tuple[Series, ...]:
    """Drop curves equal to an earlier one; one shared curve becomes a neutral one."""
    out: list[Series] = []
    for c in curves:
        if not any(np.allclose(c.ys, o.ys, equal_nan=True) for o in out):
            out.append(c)
    if len(out) == 1 and len(curves) > 1:
        return (Series(None, out[0].xs, out[0].ys),)
    return tuple(out)


def _tf_curve(weight: TermWeight, tf: FloatArray, length: float) -> FloatArray:
    """Return the tf part over ``tf`` at ``length``, 0 where tf = 0.

    A document without the term gets nothing from it: the tf part is applied to postings only.
    Without this, lower-bounded variants (BM25+, BM25L, TF₁∘δ∘p, BIM) would draw a curve that
    starts at δ (or 1) for a term that is absent.
    """
    ys = np.asarray(weight.tf_part(tf, np.full_like(tf, length)), dtype=np.float64)
    return np.where(tf > 0, ys, 0.0)


def plot_data(
    searcher: Searcher,
    variant: Variant,
    terms: Sequence[str],
    explanation: Explanation | None = None,
) -> PlotData:
    """Return the plots' data for ``terms`` under ``variant`` (for one document if explained)."""
    index = searcher.index
    stats = index.stats
    avgdl = float(index.avgdl) or 1.0
    length = float(explanation.length) if explanation is not None else None
    at_length = length if length is not None else avgdl
    rows = {
        t.term: t
        for t in (explanation.terms if explanation else ())
        if t.status == "matched" and t.term
    }
    weights = {}
    dfs = {}
    for term in dict.fromkeys(terms):
        w = searcher.weight(term, variant)
        st = index.term_stats(term)
        if w is not None and st is not None:
            weights[term] = w
            dfs[term] = st.df

    max_tf = max([r.tf for r in rows.values()] or [0])
    tf_hi = float(max(10, math.ceil(max_tf * 1.5)))
    tf_grid = np.linspace(0.0, tf_hi, _POINTS)
    tf_curves = [
        Series(t, _frozen(tf_grid), _frozen(_tf_curve(w, tf_grid, at_length)))
        for t, w in weights.items()
    ]
    tf_points = tuple(Point(t, float(r.tf), float(r.tf_part)) for t, r in rows.items())
    notes: list[str] = []
    tf_axis = TF_AXIS
    if isinstance(variant, BM25F):
        # bm25f saturates one pseudo-tf built from every field: plot that curve, the document's
        # terms at their t̃f (the ledger's field lines say how it is made).
        tf_axis = PSEUDO_TF_AXIS
        hi = float(max(10, math.ceil(max([r.pseudo_tf for r in rows.values()] or [0]) * 1.5)))
        grid = np.linspace(0.0, hi, _POINTS)
        k1 = float(variant.k1)
        tf_curves = [Series(None, _frozen(grid), _frozen(grid * (k1 + 1) / (k1 + grid)))]
        tf_points = tuple(Point(t, float(r.pseudo_tf), float(r.tf_part)) for t, r in rows.items())
        notes.append(
            "bm25f: the tf plot saturates the pseudo-tf t̃f of all fields; the length plot "
            "shows the text field's normalisation alone"
        )

    len_hi = max(3.0 * avgdl, 1.3 * (length or 0.0), 10.0)
    len_grid = np.linspace(1.0, len_hi, _POINTS)
    length_curves = []
    for t, w in weights.items():
        tf = float(rows[t].tf) if t in rows else 1.0
        ys = w.tf_part(np.full_like(len_grid, tf), len_grid)
        length_curves.append(Series(t, _frozen(len_grid), _frozen(ys)))
    length_points = (
        tuple(Point(t, float(length), float(r.tf_part)) for t, r in rows.items())
        if length is not None and not isinstance(variant, BM25F)  # t̃f mixes several lengths
        else ()
    )

    n = max(index.n_docs, 1)
    df_grid = np.unique(np.round(np.geomspace(1.0, float(n), _POINTS)))
    with np.errstate(divide="ignore", invalid="ignore"):
        idf_ys = np.asarray(variant.idf(df_grid.astype(np.float64), stats), dtype=np.float64)
    idf_curve: Series | None = Series(None, _frozen(df_grid), _frozen(idf_ys))
    if not np.isfinite(idf_ys).any():
        idf_curve = None
        notes.append(
            f"{variant.label}: idf (G¹) depends on each term's postings, not on df alone; "
            "only the query terms are shown"
        )
    idf_points = tuple(Point(t, float(dfs[t]), float(w.idf)) for t, w in weights.items())
    return PlotData(
        variant.label,
        length,
        avgdl,
        index.n_docs,
        _dedupe(tf_curves),
        tf_points,
        _dedupe(length_curves),
        length_points,
        idf_curve,
        idf_points,
        tuple(notes),
        tf_axis,
    )
