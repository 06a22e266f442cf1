"""BM25Adpt: BM25 with a per-term k1* fitted to the term's information gain (Lv & Zhai 2011).

The fit (:func:`adpt_fit`) reads the term's length-normalised tfs ``c``, one per posting, draws
its information-gain curve G⁰..G^T and picks the k1* whose saturation curve matches it best. Where
no k1* can be fitted it falls back to 0.001, and :meth:`BM25Adpt.plain_words` says why in one plain
sentence (the ledger's "in plain words" line).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from bm25desk.engine.index.stats import CollectionStats, TermStats
from bm25desk.engine.scoring.formulas import (
    SATURATION,
    FloatArray,
    fmt,
    normalised_tf,
    saturation,
)
from bm25desk.engine.scoring.variant import TermWeight, Variant, b_field

K1_FALLBACK = 0.001
"""k1* where no unique optimum exists (also the lower end of the search range)."""

K1_RANGE = (K1_FALLBACK, 2.5)
"""Where k1* is searched for."""

DEFAULT_CURVE_K1 = 1.2
"""The k1 of a term-less curve (plots of the tf part with no term chosen)."""

_ADPT_DIRECT = 8
"""How many df_r BM25Adpt counts by one comparison pass each before it builds a histogram."""

_ADPT_BINS = 1 << 16
"""The histogram's size cap: counts for r beyond it come from a sorted copy of those postings."""


class _CountAtLeast:
    """``r ↦ df_r = |{c ≥ r − 0.5}|`` for r ≥ 2, exactly, without sorting ``c``.

    The gain curve usually stops after a few r, so the first :data:`_ADPT_DIRECT` counts are one
    comparison pass each; a curve that goes on switches to one histogram of the keys
    ``⌊c + 0.5⌋`` (clipped to its size), whose suffix sums are the counts. The keys count exactly:
    for a double c and an integer 2 ≤ r < 2⁵², fl(c + 0.5) ≥ r ⟺ c ≥ r − 0.5, because r − 0.5 is
    a double and the largest double below it, plus 0.5, is exactly the double r − ulp (so no c
    below the threshold rounds up to r). Every count is cached: the fit asks for some twice.
    """

    __slots__ = ("_big", "_c", "_hist", "_known", "_limit")

    def __init__(self, c: FloatArray, limit: int) -> None:
        self._c = c
        self._limit = limit  # the fit asks for no r beyond limit + 1
        self._known: dict[int, int] = {}
        self._hist: list[int] | None = None
        self._big: FloatArray | None = None

    def __call__(self, r: int) -> int:
        value = self._known.get(r)
        if value is None:
            value = self._known[r] = self._count(r)
        return value

    def _count(self, r: int) -> int:
        if self._hist is None:
            if len(self._known) < _ADPT_DIRECT:
                return int(np.count_nonzero(self._c >= r - 0.5))
            self._hist = self._histogram()
        if r < len(self._hist):
            return self._hist[r]
        if self._big is None:  # c ≥ _ADPT_BINS − 0.5: a few postings at most
            self._big = np.sort(self._c[self._c >= _ADPT_BINS - 0.5])
        return int(self._big.size - np.searchsorted(self._big, r - 0.5, side="left"))

    def _histogram(self) -> list[int]:
        """Return ``h`` with ``h[r] = |{c ≥ r − 0.5}|`` for 2 ≤ r < len(h)."""
        # min(x, top) ≥ r ⟺ x ≥ r for every r ≤ top; the fit asks for r = 2 whatever the limit.
        top = max(min(self._limit + 1, _ADPT_BINS - 1), 2)
        keys = np.add(self._c, 0.5, dtype=np.float64)
        np.clip(keys, 0.0, top, out=keys)  # c < −0.5 counts for no r ≥ 2: any key below 2 will do
        counts = np.bincount(keys.astype(np.intp), minlength=top + 1)
        return [int(n) for n in np.cumsum(counts[::-1])[::-1]]


@dataclass(frozen=True, slots=True)
class AdptFit:
    """BM25Adpt's fit for one term: the information gains G⁰..G^T, G¹ and the fitted k1*."""

    gains: tuple[float, ...]
    df_r: tuple[int, ...]
    g1: float
    k1: float
    unique: bool


def adpt_fit(c: FloatArray, df: int, n_docs: int) -> AdptFit:
    """Fit BM25Adpt's per-term k1* from the term's length-normalised tfs ``c`` (one per posting).

    df₀ = N, df₁ = df, df_r = |{d : c ≥ r − 0.5}| for r > 1;
    G^r = log2((df_{r+1} + 0.5)/(df_r + 1)) − log2((df + 0.5)/(N + 1)), for r = 0..T, stopping at
    the first r where G^r > G^{r+1} (T = r), or where no document reaches count r + 1 (df_{r+1} = 0,
    after which G carries no information). k1* minimises
    Σ_{r=0..T} (G^r/G¹ − (k1+1)·r/(k1+r))² over [0.001, 2.5]; with no unique optimum (T < 2, or
    G¹ = 0, or a flat objective) k1* = 0.001.

    df_r is counted without sorting ``c`` (see :class:`_CountAtLeast`): a fit is a few passes over
    the postings.
    """
    return _adpt_fit(c, df, n_docs)[0]


def _adpt_fit(c: FloatArray, df: int, n_docs: int) -> tuple[AdptFit, int]:
    """Return :func:`adpt_fit`'s fit and df₂ (which the fit always counts, for G¹)."""
    c = np.asarray(c)
    limit = int(c.max()) + 2 if c.size else 1
    count = _CountAtLeast(c, limit)

    def df_r(r: int) -> int:
        return n_docs if r == 0 else df if r == 1 else count(r)

    base = math.log2((df + 0.5) / (n_docs + 1.0))

    def gain(r: int) -> float:
        return math.log2((df_r(r + 1) + 0.5) / (df_r(r) + 1.0)) - base

    gains = [gain(0)]
    dfs = [df_r(0)]
    r = 0
    while r < limit:
        nxt = gain(r + 1)
        if gains[r] > nxt or df_r(r + 1) == 0:
            break
        gains.append(nxt)
        dfs.append(df_r(r + 1))
        r += 1
    g1 = gain(1)
    k1, unique = _fit_k1(gains, g1)
    return AdptFit(tuple(gains), tuple(dfs), g1, k1, unique), df_r(2)


def _fit_k1(gains: list[float], g1: float) -> tuple[float, bool]:
    """Return (k1*, unique): the k1 whose curve (k1+1)·r/(k1+r) best matches G^r/G¹."""
    if len(gains) < 3 or g1 == 0.0:
        return K1_FALLBACK, False
    ratios = np.array(gains) / g1
    rs = np.arange(len(gains), dtype=np.float64)

    def loss(k: FloatArray) -> FloatArray:
        model = (k[:, None] + 1.0) * rs[None, :] / (k[:, None] + rs[None, :])
        return np.asarray(((ratios[None, :] - model) ** 2).sum(axis=1), dtype=np.float64)

    grid = np.linspace(K1_RANGE[0], K1_RANGE[1], 2500)
    values = loss(grid)
    best = int(np.argmin(values))
    if not values.max() - values.min() > 1e-15:
        return K1_FALLBACK, False
    # Golden-section refinement between the grid neighbours of the best grid point.
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(60):
        a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
        fa, fb = loss(np.array([a, b]))
        if fa <= fb:
            hi = b
        else:
            lo = a
    return float((lo + hi) / 2.0), True


def fit_in_plain_words(fit: AdptFit, df: int, df2: int) -> str:
    """Return one plain sentence saying why BM25Adpt's k1* for a term is what it is.

    ``df`` is the term's document frequency and ``df2`` the number of its documents where it
    occurs at least twice after length normalisation (df₂ = |{c ≥ 1.5}|).
    """
    t = len(fit.gains) - 1
    fallback = f"so its saturation cannot be fitted; k1 falls back to {fmt(K1_FALLBACK)}"
    if fit.unique:
        return (
            f"k1* = {fmt(round(fit.k1, 4))} is the saturation that best follows how much this "
            f"term's information gain grows from 0 to {t} occurrences in a document (after length "
            "normalisation); the smaller k1*, the sooner further occurrences stop adding weight"
        )
    if df2 == 0:
        return (
            "this term never occurs twice in any document (after length normalisation), " + fallback
        )
    if fit.g1 < 0:
        return (
            f"this term occurs twice in only {df2} of its {df} documents (after length "
            "normalisation), so a second occurrence says less about a document than the first "
            f"(G¹ = {fmt(round(fit.g1, 4))} < 0), {fallback}"
        )
    if t < 2:
        return (
            "this term's information gain stops growing after its second occurrence, which "
            f"leaves too few points for a curve, {fallback}"
        )
    if fit.g1 == 0.0:
        return (
            "a second occurrence of this term adds no information (G¹ = 0), which leaves the gain "
            f"curve without a scale, {fallback}"
        )
    return (
        f"every k1 between {fmt(K1_RANGE[0])} and {fmt(K1_RANGE[1])} follows this term's "
        f"information gain equally well, so none is preferred and k1 falls back to "
        f"{fmt(K1_FALLBACK)}"
    )


@dataclass(frozen=True, slots=True)
class BM25Adpt(Variant):
    """BM25Adpt: BM25 with a per-term k1 fitted to the term's information gain (Lv & Zhai 2011).

    idf = G¹ (information gain from 1 to 2 occurrences, log2); tf part =
    tf·(k1*+1)/(tf + k1*·(1 − b + b·L/Lavg)) with k1* fitted per term (see :func:`adpt_fit`).
    Lv & Zhai, "Adaptive term frequency normalization for BM25", CIKM 2011,
    doi:10.1145/2063576.2063871; as implemented by Kamphuis et al., ECIR 2020.
    """

    key: ClassVar[str] = "bm25adpt"
    label: ClassVar[str] = "BM25Adpt (Lv & Zhai 2011, per-term k1)"
    idf_formula: ClassVar[str] = (
        "G¹ = log2((df₂ + 0.5)/(df + 1)) − log2((df + 0.5)/(N + 1)), "
        "df₂ = |{d : tf/(1 − b + b·L/Lavg) ≥ 1.5}|"
    )
    tf_template: ClassVar[str] = SATURATION
    tf_formula: ClassVar[str] = "tf·(k1*+1)/(tf + k1*·(1 − b + b·L/Lavg)), k1* fitted per term"
    citation: ClassVar[str] = "Lv & Zhai, CIKM 2011, doi:10.1145/2063576.2063871"
    b: float = b_field()

    def fit(self, term: TermStats, stats: CollectionStats) -> AdptFit:
        """Return the term's fit (cached per collection, term and b)."""

        def compute() -> AdptFit:
            tf, dl = term.postings()
            fit, df2 = _adpt_fit(normalised_tf(tf, dl, self.b, stats), term.df, stats.n_docs)
            stats.cached(("adpt-df2", term.term, self.b), lambda: df2)  # for weigh's text
            return fit

        return stats.cached(("adpt", term.term, self.b), compute)  # type: ignore[no-any-return]

    def weigh(self, term: TermStats, stats: CollectionStats) -> TermWeight:
        """Fit k1* and G¹ for this term from its postings."""
        fit = self.fit(term, stats)
        df2 = self._df2(term, stats, fit)
        text = (
            f"log2(({fmt(df2)} + 0.5)/({fmt(term.df)} + 1)) − "
            f"log2(({fmt(term.df)} + 0.5)/({fmt(stats.n_docs)} + 1)) = {fmt(fit.g1)}"
        )
        gains = ", ".join(fmt(round(g, 4)) for g in fit.gains)
        notes = (
            f"G⁰..G^T = {gains} (T = {len(fit.gains) - 1})",
            f"k1* = {fmt(fit.k1)}" + ("" if fit.unique else " (no unique optimum: 0.001)"),
        )
        return TermWeight(self, stats, fit.g1, text, fit.k1, notes)

    def plain_words(self, term: TermStats, stats: CollectionStats) -> str:
        """Return why this term's k1* is what it is, in one plain sentence."""
        fit = self.fit(term, stats)
        return fit_in_plain_words(fit, term.df, self._df2(term, stats, fit))

    def _df2(self, term: TermStats, stats: CollectionStats, fit: AdptFit) -> int:
        """Return df₂ = |{c ≥ 1.5}| (counted by the fit: no second pass over the postings)."""
        if len(fit.df_r) > 2:
            return fit.df_r[2]

        def compute() -> int:
            tf, dl = term.postings()
            return int((normalised_tf(tf, dl, self.b, stats) >= 1.5).sum())

        return int(stats.cached(("adpt-df2", term.term, self.b), compute))

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Not a function of df alone (G¹ needs the postings): NaN, so plots can skip it."""
        return np.full(np.shape(df), np.nan)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the symbolic idf (numbers need the postings: see :meth:`weigh`)."""
        return self.idf_formula

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1*+1)/(tf + k1*·(1 − b + b·L/Lavg)) (k1* is 1.2 for a term-less curve)."""
        return saturation(tf, dl, DEFAULT_CURVE_K1 if k1 is None else k1, self.b, stats)

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers (k1* in place of k1)."""
        return Variant.tf_numbers(self, tf, dl, stats, DEFAULT_CURVE_K1 if k1 is None else k1)
