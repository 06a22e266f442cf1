"""The fixed-formula ranking functions: TF-IDF, the BM25 family and the BIM teaching steps.

Each class states its idf and tf part once (numpy, plus a template for the formula text); the
pieces several of them share — BM25's saturation, the RSJ idf, Lv & Zhai's normalised tf — live in
:mod:`~bm25desk.engine.scoring.formulas` and in the three small bases below. BM25Adpt, whose k1 is
fitted per term, is in :mod:`~bm25desk.engine.scoring.adpt`. The registry (and the order the
variants are listed in) is :mod:`~bm25desk.engine.scoring.variants`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from bm25desk.engine.index.stats import CollectionStats
from bm25desk.engine.scoring.formulas import (
    NORMALISED_TF,
    RSJ_IDF,
    SATURATION,
    FloatArray,
    fmt,
    normalised_tf,
    saturation,
)
from bm25desk.engine.scoring.variant import (
    Variant,
    b_field,
    delta_field,
    k1_field,
    param,
)


def rsj_idf(df: FloatArray, n: float) -> FloatArray:
    """Return ``ln((N − df + 0.5)/(df + 0.5))`` (negative when df > N/2)."""
    return np.log((n - df + 0.5) / (df + 0.5))


class Saturating(Variant):
    """A variant whose tf part is BM25's saturation ``tf·(k1+1)/(tf + k1·norm)`` (its k1 and b)."""

    tf_template: ClassVar[str] = SATURATION
    k1: float
    b: float

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1+1)/(tf + K), K = k1·(1 − b + b·L/Lavg)."""
        return saturation(tf, dl, self.k1, self.b, stats)


class RSJWeighted(Variant):
    """A teaching variant whose idf is the RSJ weight without relevance information."""

    idf_template: ClassVar[str] = RSJ_IDF
    citation: ClassVar[str] = "Robertson & Zaragoza, FnTIR 2009, § 3.4"

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N − df + 0.5)/(df + 0.5))."""
        return rsj_idf(df, stats.n_docs)


class SmoothedIdf(Variant):
    """A variant whose idf is ``ln((N + 1)/df)`` (BM25+ and TF₁∘δ∘p×IDF)."""

    idf_template: ClassVar[str] = "ln(({N} + 1)/{df})"

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N + 1)/df)."""
        return np.log((stats.n_docs + 1.0) / df)


@dataclass(frozen=True, slots=True)
class TFIDF(Variant):
    """TF-IDF with log-scaled tf: the baseline the BM25 family improves on.

    idf = log10(N/df);  tf part = ln(1 + tf).
    """

    key: ClassVar[str] = "tfidf"
    label: ClassVar[str] = "TF-IDF (log tf · log idf)"
    idf_template: ClassVar[str] = "log10({N}/{df})"
    tf_template: ClassVar[str] = "ln(1 + {tf})"

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return log10(N/df)."""
        return np.log10(stats.n_docs / df)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return ln(1 + tf)."""
        return np.log1p(tf)


@dataclass(frozen=True, slots=True)
class Okapi(Saturating):
    """Okapi BM25 as in rank_bm25's ``BM25Okapi`` (Robertson et al.; Kamphuis et al. ECIR 2020).

    idf = ln((N − df + 0.5)/(df + 0.5)), replaced where negative by ε · (mean idf over the
    vocabulary); tf part = tf·(k1+1)/(tf + K), K = k1·(1 − b + b·L/Lavg).
    """

    key: ClassVar[str] = "okapi"
    label: ClassVar[str] = "Okapi BM25 (Robertson; rank_bm25)"
    idf_template: ClassVar[str] = RSJ_IDF
    idf_formula: ClassVar[str] = "ln((N − df + 0.5)/(df + 0.5)), or ε·mean idf where negative"
    citation: ClassVar[str] = "Robertson et al., TREC-3 (1994); Kamphuis et al., ECIR 2020"
    k1: float = k1_field()
    b: float = b_field()
    epsilon: float = field(
        default=0.25, metadata=param(0.0, 1.0, 0.05, "floor for negative idf, × mean idf", "ε")
    )

    def mean_idf(self, stats: CollectionStats) -> float:
        """Return the mean raw idf over the vocabulary (negative ones included, as rank_bm25)."""

        def compute() -> float:
            df = stats.df_all().astype(np.float64)
            return float(rsj_idf(df, stats.n_docs).mean()) if df.size else 0.0

        return float(stats.cached(("okapi-mean-idf",), compute))

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return the raw idf with negative values replaced by ε·mean idf."""
        raw = rsj_idf(df, stats.n_docs)
        negative = raw < 0
        if negative.any():
            raw = np.where(negative, self.epsilon * self.mean_idf(stats), raw)
        return raw

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers (and the floor when it applies)."""
        text = Variant.idf_numbers(self, df, stats)
        raw = float(rsj_idf(np.array([df]), stats.n_docs)[0])
        if raw < 0:
            mean = self.mean_idf(stats)
            text += f" = {fmt(raw)} < 0 → ε·mean idf = {fmt(self.epsilon)}·{fmt(mean)}"
        return text


@dataclass(frozen=True, slots=True)
class Lucene(Saturating):
    """BM25 as Lucene ≥ 8 and Elasticsearch compute it (Kamphuis et al., ECIR 2020).

    idf = ln(1 + (N − df + 0.5)/(df + 0.5)), never negative; tf part = tf·(k1+1)/(tf + K).
    The (k1+1) factor is kept so that scores equal Elasticsearch's explained scores.
    """

    key: ClassVar[str] = "lucene"
    label: ClassVar[str] = "BM25 (Lucene / Elasticsearch)"
    idf_template: ClassVar[str] = "ln(1 + ({N} − {df} + 0.5)/({df} + 0.5))"
    citation: ClassVar[str] = "Kamphuis et al., ECIR 2020, doi:10.1007/978-3-030-45442-5_4"
    k1: float = k1_field()
    b: float = b_field()

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln(1 + (N − df + 0.5)/(df + 0.5))."""
        return np.log1p((stats.n_docs - df + 0.5) / (df + 0.5))


@dataclass(frozen=True, slots=True)
class ATIRE(Saturating):
    """BM25 as in the ATIRE engine (Trotman et al. 2014; Kamphuis et al., ECIR 2020).

    idf = ln(N/df); tf part = tf·(k1+1)/(tf + K).
    """

    key: ClassVar[str] = "atire"
    label: ClassVar[str] = "BM25 (ATIRE)"
    idf_template: ClassVar[str] = "ln({N}/{df})"
    citation: ClassVar[str] = "Trotman et al., ADCS 2014; Kamphuis et al., ECIR 2020"
    k1: float = k1_field()
    b: float = b_field()

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln(N/df)."""
        return np.log(stats.n_docs / df)


@dataclass(frozen=True, slots=True)
class BM25L(Variant):
    """BM25L (Lv & Zhai, SIGIR 2011), as in Kamphuis et al. (ECIR 2020).

    idf = ln((N + 1)/(df + 0.5)); c = tf/(1 − b + b·L/Lavg);
    tf part = (k1 + 1)(c + δ)/(k1 + c + δ).
    """

    key: ClassVar[str] = "bm25l"
    label: ClassVar[str] = "BM25L (Lv & Zhai 2011)"
    idf_template: ClassVar[str] = "ln(({N} + 1)/({df} + 0.5))"
    tf_template: ClassVar[str] = "({k1}+1)·({c}+{delta})/({k1} + {c} + {delta}),  " + NORMALISED_TF
    citation: ClassVar[str] = "Lv & Zhai, SIGIR 2011 (short paper); Kamphuis et al., ECIR 2020"
    k1: float = k1_field()
    b: float = b_field()
    delta: float = delta_field(0.5, 2.0, "lower-bound shift δ")

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N + 1)/(df + 0.5))."""
        return np.log((stats.n_docs + 1.0) / (df + 0.5))

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return (k1 + 1)(c + δ)/(k1 + c + δ)."""
        c = normalised_tf(tf, dl, self.b, stats)
        return (self.k1 + 1.0) * (c + self.delta) / (self.k1 + c + self.delta)


@dataclass(frozen=True, slots=True)
class BM25Plus(Saturating, SmoothedIdf):
    """BM25+ (Lv & Zhai, CIKM 2011), as in Kamphuis et al. (ECIR 2020).

    idf = ln((N + 1)/df); tf part = tf·(k1+1)/(tf + K) + δ (only for documents containing t).
    """

    key: ClassVar[str] = "bm25plus"
    label: ClassVar[str] = "BM25+ (Lv & Zhai 2011)"
    tf_template: ClassVar[str] = SATURATION + " + {delta}"
    citation: ClassVar[str] = "Lv & Zhai, CIKM 2011; Kamphuis et al., ECIR 2020"
    k1: float = k1_field()
    b: float = b_field()
    delta: float = delta_field(1.0, 3.0, "lower bound δ")

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1+1)/(K + tf) + δ."""
        return saturation(tf, dl, self.k1, self.b, stats) + self.delta


@dataclass(frozen=True, slots=True)
class TFlDpIDF(SmoothedIdf):
    """TF_l∘δ∘p×IDF (Rousseau & Vazirgiannis, SIGIR 2013).

    idf = ln((N + 1)/df); tf part = 1 + ln(1 + ln(c + δ)), c = tf/(1 − b + b·L/Lavg); floored at 0.
    """

    key: ClassVar[str] = "tfldp"
    label: ClassVar[str] = "TF₁∘δ∘p×IDF (Rousseau & Vazirgiannis 2013)"
    tf_template: ClassVar[str] = "max(0, 1 + ln(1 + ln({c} + {delta}))),  " + NORMALISED_TF
    citation: ClassVar[str] = "Rousseau & Vazirgiannis, SIGIR 2013, doi:10.1145/2484028.2484159"
    b: float = b_field()
    delta: float = delta_field(1.0, 2.0, "lower-bound shift δ")

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return max(0, 1 + ln(1 + ln(c + δ)))."""
        c = normalised_tf(tf, dl, self.b, stats)
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.log(c + self.delta)
            # ln(1 + x) is undefined for x ≤ −1 (tiny c + δ): the floor at 0 applies there.
            value = 1.0 + np.log1p(np.where(inner > -1.0, inner, -1.0 + 1e-300))
        return np.maximum(value, 0.0)


@dataclass(frozen=True, slots=True)
class BIM(RSJWeighted):
    """Binary independence model: the RSJ weight without relevance information (teaching).

    idf = ln((N − df + 0.5)/(df + 0.5)) (negative when df > N/2, and shown so); tf part = 1.
    """

    key: ClassVar[str] = "bim"
    label: ClassVar[str] = "BIM (binary independence; teaching)"
    tf_template: ClassVar[str] = "1"
    tf_formula: ClassVar[str] = "1 (presence only)"
    citation: ClassVar[str] = "Robertson & Sparck Jones, JASIS 1976"

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return 1 for every posting."""
        return np.ones_like(tf, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class BIMTF(RSJWeighted):
    """BIM with tf saturation: the second step from BIM towards BM25 (teaching).

    idf = ln((N − df + 0.5)/(df + 0.5)); tf part = tf/(k1 + tf).
    """

    key: ClassVar[str] = "bim-tf"
    label: ClassVar[str] = "BIM + tf saturation (teaching)"
    tf_template: ClassVar[str] = "{tf}/({k1} + {tf})"
    k1: float = k1_field()

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf/(k1 + tf)."""
        return tf / (self.k1 + tf)


@dataclass(frozen=True, slots=True)
class BIMTFLen(RSJWeighted):
    """BIM with tf saturation and length normalisation: BM25 without (k1+1) (teaching).

    idf = ln((N − df + 0.5)/(df + 0.5)); tf part = tf'/(k1 + tf'), tf' = tf/(1 − b + b·L/Lavg).
    """

    key: ClassVar[str] = "bim-tf-len"
    label: ClassVar[str] = "BIM + tf saturation + length (teaching)"
    tf_template: ClassVar[str] = "{tfp}/({k1} + {tfp}),  tf' = {tf}/{norm}"
    k1: float = k1_field()
    b: float = b_field()

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf'/(k1 + tf')."""
        tfp = normalised_tf(tf, dl, self.b, stats)
        return tfp / (self.k1 + tfp)
