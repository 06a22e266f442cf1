"""BM25F: a document's fields weighted and length-normalised apart, combined before saturation.

Robertson, Zaragoza & Taylor, "Simple BM25 extension to multiple weighted fields" (CIKM 2004), as
Pérez-Agüera, Arroyo, Greenberg, Perez-Iglesias & Fresno (2010) state it::

    t̃f(t, d) = Σ_f w_f · tf_f(t, d) / B_f(d),   B_f(d) = 1 − b_f + b_f · L_f(d) / Lavg_f
    score(q, d) = Σ_t qtf · idf(t) · t̃f·(k1+1)/(k1 + t̃f)

The fields: **text** (the document as every other variant scores it: the main postings and
lengths; for sources with a title the title is part of it), **title**, and whatever a reader
adds (file name, path, headings, chosen columns), stored as reserved terms
(:mod:`~bm25desk.engine.index.reserved`). Lavg_f is the field's total length over the live
documents divided by N; a document without the field has tf_f = 0. df counts the live documents
with t in any scored field (a field of weight 0 is not scored); idf is Lucene's
ln(1 + (N − df + 0.5)/(df + 0.5)) and the (k1+1) factor is kept, as for ``lucene``, so that
``bm25f`` with the text field alone equals ``lucene`` with the same k1 and b.

Scoring is exact float64 over the union of each query term's per-field postings: in C when the
compiled kernel is there (:mod:`~bm25desk.engine.scoring.bm25f_kernel`: every posting of the stored
blocks, no pruning), else numpy; per document the fields are added in the variant's field order
from 0.0 and the terms in query order, the same operations in the same order either way, and the
explanation (:func:`field_detail`) computes the same numbers the same way, bit for bit. The
index's fields and their lengths: :mod:`~bm25desk.engine.scoring.bm25f_fields`.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from bm25desk.engine.index.arrays import F64, I32, I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.stats import CollectionStats, TermStats
from bm25desk.engine.scoring import bm25f_kernel
from bm25desk.engine.scoring.bm25f_fields import TEXT as TEXT
from bm25desk.engine.scoring.bm25f_fields import TITLE as TITLE
from bm25desk.engine.scoring.bm25f_fields import ScoredField as ScoredField
from bm25desk.engine.scoring.bm25f_fields import describe_fields as describe_fields
from bm25desk.engine.scoring.bm25f_fields import field_lengths as field_lengths
from bm25desk.engine.scoring.bm25f_fields import field_postings as _field_postings
from bm25desk.engine.scoring.bm25f_fields import field_term_of as _field_term
from bm25desk.engine.scoring.bm25f_fields import index_fields as index_fields
from bm25desk.engine.scoring.bm25f_fields import scored_fields as scored_fields
from bm25desk.engine.scoring.constraints import allowed_mask
from bm25desk.engine.scoring.formulas import FloatArray, fmt
from bm25desk.engine.scoring.variant import ParamSpec, Variant, VariantError, k1_field, param

if TYPE_CHECKING:
    from bm25desk.engine.scoring.hits import Hits
    from bm25desk.engine.scoring.query import ParsedQuery
    from bm25desk.engine.scoring.search import Searcher
    from bm25desk.engine.scoring.topk import TermSpec

WEIGHT_RANGE = (0.0, 20.0)
B_RANGE = (0.0, 1.0)
EXTRA_B = 0.75
"""The b of a field other than text and title when only its weight is given."""


def _weight(default: float, name: str) -> Any:
    return field(
        default=default,
        metadata=param(*WEIGHT_RANGE, 0.1, f"weight of the {name} field", f"w_{name}"),
    )


def _b(default: float, name: str) -> Any:
    help = f"length normalisation of the {name} field"
    return field(default=default, metadata=param(*B_RANGE, 0.05, help, f"b_{name}"))


@dataclass(frozen=True, slots=True)
class BM25F(Variant):
    """BM25F (Robertson, Zaragoza & Taylor 2004): per-field weights and b, one saturation.

    idf = ln(1 + (N − df + 0.5)/(df + 0.5)), df over the scored fields; tf part =
    t̃f·(k1+1)/(k1 + t̃f), t̃f = Σ_f w_f·tf_f/(1 − b_f + b_f·L_f/Lavg_f). Fields other than text
    and title are given in ``extra`` as (name, w, b), or as parameters ``w_<name>``/``b_<name>``
    to :func:`~bm25desk.engine.scoring.variants.get_variant`.
    """

    key: ClassVar[str] = "bm25f"
    label: ClassVar[str] = "BM25F (fields weighted before saturation)"
    idf_template: ClassVar[str] = "ln(1 + ({N} − {df} + 0.5)/({df} + 0.5))"
    tf_formula: ClassVar[str] = "t̃f·(k1+1)/(k1 + t̃f),  t̃f = Σ_f w_f·tf_f/(1 − b_f + b_f·L_f/Lavg_f)"
    citation: ClassVar[str] = "Robertson, Zaragoza & Taylor, CIKM 2004; Pérez-Agüera et al. 2010"
    k1: float = k1_field()
    w_text: float = _weight(1.0, TEXT)
    b_text: float = _b(0.75, TEXT)
    w_title: float = _weight(2.0, TITLE)
    b_title: float = _b(0.3, TITLE)
    extra: tuple[tuple[str, float, float], ...] = ()

    def __post_init__(self) -> None:
        """Keep ``extra`` in one canonical order (by field name) so equal variants compare equal."""
        object.__setattr__(self, "extra", tuple(sorted(tuple(e) for e in self.extra)))

    # -- parameters beyond the dataclass fields --------------------------------------------------

    @classmethod
    def extra_param(cls, name: str) -> ParamSpec | None:
        """Return the spec of ``w_<field>`` / ``b_<field>`` for any field name (else None)."""
        kind, sep, fname = name.partition("_")
        if not sep or not fname or kind not in ("w", "b"):
            return None
        lo, hi = WEIGHT_RANGE if kind == "w" else B_RANGE
        what = "weight" if kind == "w" else "length normalisation"
        return ParamSpec(name, name, 1.0 if kind == "w" else EXTRA_B, lo, hi, 0.1, what)

    @classmethod
    def from_values(cls, **values: float) -> BM25F:
        """Build from parameters, ``w_<field>``/``b_<field>`` of other fields going to ``extra``."""
        own = {p.name for p in cls.params()}
        extra: dict[str, list[float]] = {}
        for name in [n for n in values if n not in own]:
            kind, _, fname = name.partition("_")
            slot = extra.setdefault(fname, [1.0, EXTRA_B])
            slot[0 if kind == "w" else 1] = float(values.pop(name))
        given = {name: float(v) for name, v in values.items()}
        return cls(**given, extra=tuple((f, w, b) for f, (w, b) in extra.items()))

    def values(self) -> dict[str, float]:
        """Return the parameter values by name, other fields' ``w_<f>``/``b_<f>`` included."""
        out = {p.name: float(getattr(self, p.name)) for p in self.params()}
        for name, w, b in self.extra:
            out[f"w_{name}"], out[f"b_{name}"] = float(w), float(b)
        return out

    def display_with_params(self) -> str:
        """Return the display name with every field's weight and b."""
        params = " ".join(f"{name}={fmt(v)}" for name, v in self.values().items())
        return f"{self.display_name()} {params}"

    def fields(self) -> list[tuple[str, float, float]]:
        """Return (field, w, b) in summation order: text, title, then the others by name."""
        return [(TEXT, self.w_text, self.b_text), (TITLE, self.w_title, self.b_title), *self.extra]

    # -- the Variant contract: a term in the text field alone --------------------------------------

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln(1 + (N − df + 0.5)/(df + 0.5)) (df over the scored fields)."""
        return np.log1p((stats.n_docs - df + 0.5) / (df + 0.5))

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return the tf part of a term found in the text field only (plots, term browser)."""
        avg = stats.avgdl if stats.avgdl > 0 else 1.0
        return saturate(field_part(self.w_text, tf, dl, self.b_text, avg), self.k1)

    def tf_text(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part text of a term found in the text field only."""
        avg = stats.avgdl if stats.avgdl > 0 else 1.0
        part = FieldPart(TEXT, self.w_text, self.b_text, int(tf), dl, avg)
        return tf_text([part], self.k1)


# -- fields named on a command line ------------------------------------------------------------


def field_params(weights: Sequence[str] = (), bs: Sequence[str] = ()) -> dict[str, float]:
    """Return ``w_<field>``/``b_<field>`` parameters from ``FIELD=VALUE`` items.

    ``weights`` are ``--field-weight title=2.5`` items, ``bs`` ``--field-b title=0.3`` ones.

    Raises
    ------
    VariantError
        For an item that is not ``FIELD=NUMBER``.
    """
    out: dict[str, float] = {}
    for kind, items, flag in (("w", weights, "--field-weight"), ("b", bs, "--field-b")):
        for item in items:
            name, eq, value = item.partition("=")
            name = name.strip()
            try:
                if not eq or not name or "\x1f" in name:
                    raise ValueError
                out[f"{kind}_{name}"] = float(value)
            except ValueError:
                raise VariantError(f"cannot read {flag} {item!r}: write FIELD=NUMBER") from None
    return out


def with_fields(variants: Sequence[Variant], params: dict[str, float]) -> list[Variant]:
    """Return ``variants`` with ``params`` (from :func:`field_params`) set on each bm25f one.

    Raises
    ------
    VariantError
        When ``params`` is not empty and no variant is bm25f.
    """
    if not params:
        return list(variants)
    if not any(isinstance(v, BM25F) for v in variants):
        raise VariantError("--field-weight and --field-b apply to the bm25f variant only")
    return [
        BM25F.from_values(**{**v.values(), **params}) if isinstance(v, BM25F) else v
        for v in variants
    ]


def check_named_fields(index: Any, params: dict[str, float]) -> None:
    """Check that every field ``params`` names (``w_<f>``/``b_<f>``) is one ``index`` has.

    ``index`` is an :class:`~bm25desk.engine.index.reader.Index` (typed loosely: evaluation
    hands over its searcher's index protocol).

    Raises
    ------
    VariantError
        Naming the first missing field and the fields the index has.
    """
    if not params:
        return
    have = index_fields(index)
    for name in params:
        fname = name.partition("_")[2]
        if fname not in have:
            raise VariantError(
                f"index {index.name!r} has no field {fname!r} (its fields: {', '.join(have)})"
            )


# -- arithmetic shared by ranking and explanation -------------------------------------------------


def field_part(w: float, tf: FloatArray, length: FloatArray, b: float, avg: float) -> FloatArray:
    """Return ``w·tf/(1 − b + b·L/Lavg)``: one field's share of the pseudo-tf."""
    return w * tf / (1.0 - b + b * length / avg)


def saturate(ptf: FloatArray, k1: float) -> FloatArray:
    """Return ``t̃f·(k1+1)/(k1 + t̃f)`` (0 where t̃f is 0: a weight so small it underflowed)."""
    out = np.zeros(ptf.shape, dtype=np.float64)
    return np.divide(ptf * (k1 + 1.0), k1 + ptf, out=out, where=ptf > 0)


@dataclass(frozen=True, slots=True)
class FieldPart:
    """One field's share of a term's pseudo-tf in one document (a ledger line)."""

    field: str
    weight: float
    b: float
    tf: int
    length: float
    avg_length: float

    @property
    def norm(self) -> float:
        """Return B_f = 1 − b + b·L/Lavg."""
        return 1.0 - self.b + self.b * self.length / self.avg_length

    @property
    def part(self) -> float:
        """Return w·tf/B_f, computed exactly as the ranking computes it."""
        one = np.array([float(self.tf)])
        return float(
            field_part(self.weight, one, np.array([self.length]), self.b, self.avg_length)[0]
        )

    def text(self) -> str:
        """Return ``w·tf/(1 − b + b·L/Lavg)`` with the numbers filled in."""
        w, b = fmt(self.weight), fmt(self.b)
        return f"{w}·{self.tf}/(1 − {b} + {b}·{fmt(self.length)}/{fmt(self.avg_length)})"

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON shape of one field line (``explain --json``)."""
        return {
            "field": self.field,
            "tf": self.tf,
            "length": self.length,
            "avg_length": self.avg_length,
            "weight": self.weight,
            "b": self.b,
            "norm": self.norm,
            "part": self.part,
            "formula": self.text(),
        }


def pseudo_tf(parts: Sequence[FieldPart]) -> float:
    """Return Σ w_f·tf_f/B_f over the fields with tf > 0, in field order from 0.0."""
    total = 0.0
    for p in parts:
        if p.tf > 0:
            total += p.part
    return total


def tf_text(parts: Sequence[FieldPart], k1: float) -> str:
    """Return the ledger's tf part: ``t̃f·(k1+1)/(k1 + t̃f) = v,  where t̃f = Σ (numbers)``."""
    ptf = pseudo_tf(parts)
    value = float(saturate(np.array([ptf]), k1)[0])
    k, t = fmt(k1), fmt(ptf)
    sums = " + ".join(p.text() for p in parts if p.tf > 0) or "0"
    return f"{t}·({k}+1)/({k} + {t}) = {fmt(value)},  where t̃f = {sums}"


_lock = threading.Lock()
_TERMS_KEPT = 4096  # terms' merged postings kept per index (an evaluation repeats its terms)
_LARGEST_KEPT = 1 << 20  # postings; longer lists are merged again when asked for
_terms: weakref.WeakKeyDictionary[Index, OrderedDict[Any, tuple[I64, I32, F64]]] = (
    weakref.WeakKeyDictionary()
)


def term_postings(index: Index, term: str, fields: Sequence[ScoredField]) -> tuple[I64, I32, F64]:
    """Return a term's documents over the scored fields: (docnos, summed tf, pseudo-tf).

    The arrays are shared (a bounded cache per index and field configuration): do not modify.
    """
    key = (term, tuple((f.name, f.weight, f.b) for f in fields))
    with _lock:
        cache = _terms.setdefault(index, OrderedDict())
        got = cache.get(key)
        if got is not None:
            cache.move_to_end(key)
    if got is None:
        got = _merge_postings(index, term, fields)
        if got[0].size <= _LARGEST_KEPT:
            with _lock:
                cache[key] = got
                while len(cache) > _TERMS_KEPT:
                    cache.popitem(last=False)
    return got


def _merge_postings(index: Index, term: str, fields: Sequence[ScoredField]) -> tuple[I64, I32, F64]:
    lists = [(f, *_field_postings(index, f, term)) for f in fields]
    lists = [(f, d, t) for f, d, t in lists if d.size]
    if len(lists) == 1:
        union = lists[0][1]
    else:  # each list ascends: a stable sort merges the runs, then duplicates go
        union = np.concatenate([d for _, d, _ in lists]) if lists else np.zeros(0, np.int64)
        union.sort(kind="stable")
        union = union[np.r_[True, union[1:] != union[:-1]]] if union.size else union
    tf = np.zeros(union.size, dtype=np.int32)
    ptf = np.zeros(union.size, dtype=np.float64)
    for f, docnos, tfs in lists:
        at = slice(None) if len(lists) == 1 else np.searchsorted(union, docnos)
        tf[at] += tfs
        ptf[at] += field_part(f.weight, tfs.astype(np.float64), f.lengths[docnos], f.b, f.avg)
    return union, tf, ptf


def term_stats(searcher: Searcher, term: str, variant: BM25F) -> TermStats | None:
    """Return ``term``'s df and cf over the scored fields (None when it is in none of them).

    df counts the union of the fields' lists in C when the kernel is there (no merge); cf is
    then the sum of the fields' own live cfs (each document's tf is the sum of its fields').
    """
    index = searcher.index
    fields = scored_fields(searcher, variant)
    df = bm25f_kernel.doc_frequency(index, [_field_term(f, term) for f in fields])
    if df is None:
        docnos, tf, _ = term_postings(index, term, fields)
        df, cf = int(docnos.size), int(tf.sum(dtype=np.int64))
    elif df:
        each = [index.term_stats(_field_term(f, term)) for f in fields]
        cf = sum(s.cf for s in each if s is not None)
    if df == 0:
        return None
    doclen = index.doclen

    def postings() -> tuple[FloatArray, FloatArray]:
        docnos, tf, _ = term_postings(index, term, fields)
        return tf.astype(np.float64), doclen[docnos].astype(np.float64)

    return TermStats(term, df, cf, postings)


class FieldStatistics:
    """The statistics a bm25f ranking's hits show: df over the scored fields."""

    def __init__(self, searcher: Searcher, variant: BM25F) -> None:
        """Give ``searcher``'s statistics with ``variant``'s df."""
        self._searcher = searcher
        self._variant = variant

    @property
    def stats(self) -> CollectionStats:
        """Return N, the average length and the vocabulary's dfs (the searcher's)."""
        return self._searcher.statistics.stats

    def term_stats(self, term: str) -> TermStats | None:
        """Return the term's df and cf over the scored fields."""
        return term_stats(self._searcher, term, self._variant)


def field_detail(searcher: Searcher, term: str, docno: int, variant: BM25F) -> list[FieldPart]:
    """Return the scored fields' lines of ``term`` in document ``docno`` (tf 0 included)."""
    out = []
    for f in scored_fields(searcher, variant):
        docnos, tfs = _field_postings(searcher.index, f, term)
        i = int(np.searchsorted(docnos, docno))
        tf = int(tfs[i]) if i < docnos.size and docnos[i] == docno else 0
        out.append(FieldPart(f.name, f.weight, f.b, tf, float(f.lengths[docno]), f.avg))
    return out


# -- ranking ---------------------------------------------------------------------------------------


def dense(
    searcher: Searcher, variant: BM25F, terms: Sequence[TermSpec]
) -> tuple[F64, Any, list[tuple[I64, I32, F64]]]:
    """Return (score by docno, match mask, per term (docnos, tf, tf part)): all scored."""
    index = searcher.index
    fields = scored_fields(searcher, variant)
    scores = np.zeros(index.n_slots, dtype=np.float64)
    matched = np.zeros(index.n_slots, dtype=bool)
    per = []
    for term, qtf, w in terms:
        docnos, tf, ptf = term_postings(index, term, fields)
        part = saturate(ptf, variant.k1)
        scores[docnos] += (qtf * w.idf) * part
        matched[docnos] = True
        per.append((docnos, tf, part))
    return scores, matched, per


def rank(
    searcher: Searcher,
    variant: BM25F,
    terms: Sequence[TermSpec],
    k: int,
    allowed: Any,
    contributions: bool,
    *,
    kernel: bool | None = None,
) -> tuple[Hits, int]:
    """Return the top ``k`` (score descending, docno ascending) as hits, and the match count.

    In C when the kernel is there (:mod:`~bm25desk.engine.scoring.bm25f_kernel`), else numpy:
    the same hits and scores bit for bit. ``kernel=False`` forces numpy (tests, benchmarks).
    """
    index = searcher.index
    fields = scored_fields(searcher, variant)
    names = [[_field_term(f, term) for f in fields] for term, _, _ in terms]
    got = None
    if kernel is not False:
        weighted = [(n, qtf * w.idf) for n, (_, qtf, w) in zip(names, terms, strict=True)]
        got = bm25f_kernel.top_k(index, fields, weighted, variant.k1, k + 1, allowed)
    if got is None:
        scores, matched, per = dense(searcher, variant, terms)
        if allowed is not None:
            matched &= allowed
        cand = np.flatnonzero(matched)
        top, top_scores = _top(scores, cand, k + 1)
        return _hits(searcher, variant, terms, k, top, top_scores, contributions, per), cand.size
    top, top_scores, n_matches = got

    def detail(top: I64) -> tuple[I32, F64]:
        return bm25f_kernel.detail(index, fields, names, variant.k1, top)

    return _hits(searcher, variant, terms, k, top, top_scores, contributions, detail), n_matches


def _hits(
    searcher: Searcher,
    variant: BM25F,
    terms: Sequence[TermSpec],
    k: int,
    top: I64,
    top_scores: F64,
    contributions: bool,
    detail: Any,
) -> Hits:
    """Return the first ``k`` of the best ``k + 1`` as hits (the last one's score is the next).

    ``detail`` is numpy's per-term (docnos, tf, tf part), or a function of the hits' docnos
    returning their (tf, tf part) matrices.
    """
    from bm25desk.engine.scoring.hits import Hits

    next_score = float(top_scores[k]) if top_scores.size > k else None
    top, top_scores = top[:k], top_scores[:k]
    per = detail
    rows = (lambda: per(top)) if callable(per) else (lambda: _detail(per, top))
    return Hits(
        searcher.index,
        top,
        top_scores,
        next_score,
        terms if contributions else None,
        rows if contributions else None,
        FieldStatistics(searcher, variant),
    )


def _detail(per: list[tuple[I64, I32, F64]], top: I64) -> tuple[I32, F64]:
    """Return the (tf, tf part) matrices of the ``top`` documents × the query terms."""
    tfs = np.zeros((top.size, len(per)), dtype=np.int32)
    parts = np.zeros((top.size, len(per)), dtype=np.float64)
    for t, (docnos, tf, part) in enumerate(per):
        if not docnos.size:
            continue
        at = np.minimum(np.searchsorted(docnos, top), docnos.size - 1)
        hit = docnos[at] == top
        tfs[hit, t] = tf[at[hit]]
        parts[hit, t] = part[at[hit]]
    return tfs, parts


def matched_mask(searcher: Searcher, parsed: ParsedQuery, variant: BM25F) -> Any:
    """Return the mask (by docno) of the documents bm25f matches, before any filter.

    A match has a query term in a scored field and satisfies the query's constraints (what
    facets count: :func:`~bm25desk.engine.scoring.facets.facets`).
    """
    index = searcher.index
    fields = scored_fields(searcher, variant)
    ok = np.zeros(index.n_slots, dtype=bool)
    for term, _ in parsed.scored:
        ok[term_postings(index, term, fields)[0]] = True
    if parsed.has_constraints:
        ok &= allowed_mask(index, parsed)
    return ok


def _top(scores: F64, cand: I64, k: int) -> tuple[I64, F64]:
    """Return the best ``k`` of ``cand`` by score descending, ties by docno ascending."""
    s = scores[cand]
    if cand.size > k:
        kth = np.partition(s, cand.size - k)[cand.size - k]  # the k-th largest score
        keep = s >= kth
        cand, s = cand[keep], s[keep]
    order = np.lexsort((cand, -s))[:k]
    return cand[order].astype(np.int64), s[order]
