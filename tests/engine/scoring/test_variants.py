"""The scoring contract (docs/scoring.md), checked against numbers worked out by hand.

Every variant is checked on the same three-document corpus; BM25Adpt's fit is also checked on a
ten-document corpus built so that its information-gain curve has T = 3.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Feedback, Searcher
from bm25desk.engine.scoring.variants import (
    BM25Adpt,
    Okapi,
    VariantError,
    adpt_fit,
    all_variants,
    get_variant,
    iter_param_grid,
    rsj_text,
    rsj_weight,
    variant_classes,
    variant_from_name,
)

KEYS = (
    "tfidf",
    "okapi",
    "lucene",
    "atire",
    "bm25l",
    "bm25plus",
    "bm25adpt",
    "tfldp",
    "bm25f",
    "bim",
    "bim-tf",
    "bim-tf-len",
)

THREE_DOCS = ("apple apple banana", "apple cherry", "banana durian elder fig")
QUERY = ("apple", "cherry", "durian")

# Worked out in the docstring of test_hand_computed. Per variant:
#   idf of (apple, cherry, durian);
#   tf part of (apple in d0, apple in d1, cherry in d1, durian in d2);
#   total score of (d0, d1, d2) for the query "apple cherry durian".
_LN_06 = math.log(0.6)  # ln((3 − 2 + 0.5)/(2 + 0.5)): the RSJ idf of a df-2 term
_LN_53 = math.log(5 / 3)  # ln((3 − 1 + 0.5)/(1 + 0.5)): the RSJ idf of a df-1 term
_MEAN_IDF = (2 * _LN_06 + 4 * _LN_53) / 6  # 2 terms with df 2, 4 with df 1: = ln(5/3)/3
_SAT = (
    2.2 * 2 / (2 + 1.2),
    2.2 / (1 + 0.9),
    2.2 / (1 + 0.9),
    2.2 / (1 + 1.5),
)  # 1.375, 1.1578.., .88
_C = (2 / 1.0, 1 / 0.75, 1 / 0.75, 1 / 1.25)  # c = tf/(1 − b + b·L/Lavg)

HAND: dict[str, tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]] = {
    "tfidf": (
        (math.log10(1.5), math.log10(3), math.log10(3)),
        (math.log(3), math.log(2), math.log(2), math.log(2)),
        (0.19345602112561097, 0.45277241222985387, 0.3307152524941575),
    ),
    "okapi": (
        (0.25 * _MEAN_IDF, _LN_53, _LN_53),
        _SAT,
        (0.05853210272318644, 0.64077249296962, 0.4495265489140719),
    ),
    "lucene": (
        (math.log(1.6), math.log(8 / 3), math.log(8 / 3)),
        _SAT,
        (0.6462549902128865, 1.6799117584033771, 0.8631297426503193),
    ),
    "atire": (
        (math.log(1.5), math.log(3), math.log(3)),
        _SAT,
        (0.557514523648726, 1.7415633015304226, 0.9667788140279368),
    ),
    "bm25l": (
        (math.log(4 / 2.5), math.log(4 / 1.5), math.log(4 / 1.5)),
        tuple(2.2 * (c + 0.5) / (1.2 + c + 0.5) for c in _C),  # 1.48648.., 1.32967.., 1.144
        (0.6986540434733908, 1.9291294368478336, 1.1220686654454148),
    ),
    "bm25plus": (
        (math.log(2), math.log(4), math.log(4)),
        tuple(s + 1 for s in _SAT),
        (1.64622455382987, 4.487215958361752, 2.6062333989053945),
    ),
    "tfldp": (
        (math.log(2), math.log(4), math.log(4)),
        tuple(1 + math.log(1 + math.log(c + 1)) for c in _C),
        (1.2069607658054133, 3.3556446295460542, 2.0272350986913987),
    ),
    # No titles or fields here: the text alone, t̃f = c, and c·2.2/(1.2 + c) is the saturation
    # above (2·2.2/3.2 = 1.375, (4/3)·2.2/(1.2 + 4/3) = 1.157894…, 0.8·2.2/2 = 0.88): lucene.
    "bm25f": (
        (math.log(1.6), math.log(8 / 3), math.log(8 / 3)),
        _SAT,
        (0.6462549902128865, 1.6799117584033771, 0.8631297426503193),
    ),
    "bim": ((_LN_06, _LN_53, _LN_53), (1.0, 1.0, 1.0, 1.0), (_LN_06, 0.0, _LN_53)),
    "bim-tf": (
        (_LN_06, _LN_53, _LN_53),
        (2 / 3.2, 1 / 2.2, 1 / 2.2, 1 / 2.2),
        (-0.3192660148537442, 0.0, 0.23219346534817759),
    ),
    "bim-tf-len": (
        (_LN_06, _LN_53, _LN_53),
        tuple(c / (1.2 + c) for c in _C),  # 0.625, 0.526315.., 0.526315.., 0.4
        (-0.3192660148537442, 0.0, 0.2043302495063963),
    ),
}
# (docno, term) of each tf part above, with tf and L.
POSTINGS = ((0, "apple", 2, 3), (1, "apple", 1, 2), (1, "cherry", 1, 2), (2, "durian", 1, 4))


@pytest.fixture
def three(make_index) -> Index:
    """d0 = "apple apple banana" (L 3), d1 = "apple cherry" (L 2), d2 = "banana durian elder fig"
    (L 4)."""
    return make_index(THREE_DOCS)


def test_registry_has_exactly_the_contract_keys() -> None:
    assert tuple(c.key for c in variant_classes()) == KEYS
    assert tuple(v.key for v in all_variants()) == KEYS


def test_three_doc_corpus_statistics(three: Index) -> None:
    assert three.n_docs == 3
    assert three.avgdl == 3.0
    assert three.doclen.tolist() == [3, 2, 4]
    assert {t: three.term_stats(t).df for t in ("apple", "banana", "cherry", "durian")} == {
        "apple": 2,
        "banana": 2,
        "cherry": 1,
        "durian": 1,
    }
    assert three.stats.n_terms == 6
    assert sorted(three.stats.df_all().tolist()) == [1, 1, 1, 1, 2, 2]


@pytest.mark.parametrize("key", [k for k in KEYS if k != "bm25adpt"])
def test_hand_computed(three: Index, key: str) -> None:
    """Idf, tf part and total of every variant with k1 = 1.2, b = 0.75 and the default δ, ε.

    Corpus (word tokens, lowercased): d0 = "apple apple banana" (L = 3), d1 = "apple cherry"
    (L = 2), d2 = "banana durian elder fig" (L = 4). N = 3, Lavg = 9/3 = 3.
    df: apple 2, banana 2, cherry 1, durian 1, elder 1, fig 1. Query "apple cherry durian".

    Length normaliser 1 − b + b·L/Lavg = 0.25 + 0.25·L: d0 1.0, d1 0.75, d2 1.25;
    K = 1.2 × that: d0 1.2, d1 0.9, d2 1.5. c = tf/normaliser: apple/d0 2, apple/d1 4/3,
    cherry/d1 4/3, durian/d2 0.8.

    BM25 saturation tf·(k1+1)/(tf + K): apple/d0 4.4/3.2 = 1.375; apple/d1 and cherry/d1
    2.2/1.9 = 1.157894…; durian/d2 2.2/2.5 = 0.88.

    tfidf: idf log10(3/2) = 0.176091…, log10(3/1) = 0.477121…; tf part ln(1 + tf): ln 3, ln 2.
      d0 = 0.176091·ln 3 = 0.193456…; d1 = 0.176091·ln 2 + 0.477121·ln 2 = 0.452772…;
      d2 = 0.477121·ln 2 = 0.330715….
    okapi: RSJ idf ln((N − df + 0.5)/(df + 0.5)): df 2 → ln(1.5/2.5) = ln 0.6 = −0.510825… < 0,
      df 1 → ln(2.5/1.5) = ln(5/3) = 0.510825…. Mean over the 6 vocabulary terms
      (2·ln 0.6 + 4·ln(5/3))/6 = ln(5/3)/3 = 0.170275…, so apple's idf is the floor
      ε·mean = 0.25·0.170275 = 0.042568…. d0 = 0.042568·1.375 = 0.058532…;
      d1 = 0.042568·1.157894 + 0.510825·1.157894 = 0.640772…; d2 = 0.510825·0.88 = 0.449526….
    lucene: idf ln(1 + (N − df + 0.5)/(df + 0.5)): ln(1 + 0.6) = ln 1.6 = 0.470003…,
      ln(1 + 5/3) = ln(8/3) = 0.980829…. d0 = 0.470003·1.375 = 0.646254…;
      d1 = (0.470003 + 0.980829)·1.157894 = 1.679911…; d2 = 0.980829·0.88 = 0.863129….
    atire: idf ln(N/df) = ln 1.5 = 0.405465…, ln 3 = 1.098612…. d0 = 0.557514…;
      d1 = (0.405465 + 1.098612)·1.157894 = 1.741563…; d2 = 1.098612·0.88 = 0.966778….
    bm25l: idf ln((N+1)/(df+0.5)) = ln(4/2.5) = ln 1.6, ln(4/1.5) = ln(8/3) (as lucene);
      tf part (k1+1)(c+δ)/(k1+c+δ), δ = 0.5: apple/d0 2.2·2.5/3.7 = 1.486486…;
      c = 4/3: 2.2·(11/6)/(18.2/6) = 1.329670…; durian/d2 2.2·1.3/2.5 = 1.144.
      d0 = 0.470003·1.486486 = 0.698654…; d1 = (0.470003 + 0.980829)·1.329670 = 1.929129…;
      d2 = 0.980829·1.144 = 1.122068….
    bm25plus: idf ln((N+1)/df) = ln 2, ln 4; tf part = saturation + δ (δ = 1): 2.375, 2.157894…,
      1.88. d0 = ln 2·2.375 = 1.646224…; d1 = (ln 2 + ln 4)·2.157894 = 4.487215…;
      d2 = ln 4·1.88 = 2.606233….
    tfldp: idf ln((N+1)/df) = ln 2, ln 4; tf part 1 + ln(1 + ln(c + 1)) (δ = 1): c = 2 →
      1 + ln(1 + ln 3) = 1.741276…; c = 4/3 → 1.613723…; c = 0.8 → 1.462341….
      d0 = ln 2·1.741276 = 1.206960…; d1 = (ln 2 + ln 4)·1.613723 = 3.355644…;
      d2 = ln 4·1.462341 = 2.027235….
    bim: idf ln 0.6 = −0.510825… (apple is in 2 of 3 documents: negative, shown so), ln(5/3);
      tf part 1. d0 = −0.510825…; d1 = −0.510825 + 0.510825 = 0 exactly; d2 = 0.510825….
    bim-tf: tf part tf/(k1 + tf): 2/3.2 = 0.625, 1/2.2 = 0.454545…. d0 = ln 0.6·0.625 =
      −0.319266…; d1 = 0 (same tf part for both terms); d2 = ln(5/3)/2.2 = 0.232193….
    bim-tf-len: tf part c/(k1 + c): 2/3.2 = 0.625, (4/3)/(1.2 + 4/3) = 0.526315…,
      0.8/2.0 = 0.4. d0 = −0.319266…; d1 = 0; d2 = ln(5/3)·0.4 = 0.204330….
    """
    variant = get_variant(key)
    searcher = Searcher(three)
    idfs, parts, totals = HAND[key]
    for term, expected in zip(QUERY, idfs, strict=True):
        w = searcher.weight(term, variant)
        assert w is not None
        assert w.idf == pytest.approx(expected, rel=1e-12, abs=1e-15), term
    for (docno, term, tf, dl), expected in zip(POSTINGS, parts, strict=True):
        w = searcher.weight(term, variant)
        got = w.tf_part(np.array([float(tf)]), np.array([float(dl)]))[0]
        assert got == pytest.approx(expected, rel=1e-12), (term, docno)
        assert three.postings(term)[1][three.postings(term)[0].tolist().index(docno)] == tf
    scores, ok = searcher.scores(parse_terms(list(QUERY)), variant)
    assert ok.tolist() == [True, True, True]
    for docno, expected in enumerate(totals):
        assert scores[docno] == pytest.approx(expected, rel=1e-12, abs=1e-15), docno
        explanation = searcher.explain_docno(parse_terms(list(QUERY)), docno, variant)
        assert explanation.score == scores[docno]


def test_bm25adpt_hand_computed_three_docs(three: Index) -> None:
    """BM25Adpt on the three-document corpus: every term stops at T = 0, so k1* = 0.001.

    apple: N = 3, df = 2, c = (2, 4/3), so df₂ = |{c ≥ 1.5}| = 1 and df₃ = 0.
    base = log2((df + 0.5)/(N + 1)) = log2(2.5/4) = log2 0.625.
    G⁰ = log2((df₁ + 0.5)/(df₀ + 1)) − base = log2(2.5/4) − log2(2.5/4) = 0 (always).
    G¹ = log2((df₂ + 0.5)/(df₁ + 1)) − base = log2(1.5/3) − log2 0.625 = log2 0.8 = −0.321928….
    G⁰ > G¹: stop at T = 0; no unique optimum, k1* = 0.001. idf = G¹ (negative: kept, as
    the module documents — docs/scoring.md, "Where a weight can be negative").
    tf part for apple in d0 (tf 2, normaliser 1): 2·1.001/(2 + 0.001) = 1.000499…;
    in d1 (tf 1, normaliser 0.75): 1.001/(1 + 0.00075) = 1.000249….
    cherry (df 1, c = 4/3 → df₂ = 0) and durian (df 1, c = 0.8): base = log2(1.5/4),
    G¹ = log2(0.5/2) − log2(1.5/4) = log2(2/3) = −0.584962…; T = 0, k1* = 0.001.
    """
    searcher = Searcher(three)
    v = get_variant("bm25adpt")
    fit = v.fit(three.term_stats("apple"), three.stats)
    assert fit.gains == (0.0,)
    assert fit.df_r == (3,)
    assert fit.g1 == pytest.approx(math.log2(0.8), rel=1e-12)
    assert (fit.k1, fit.unique) == (0.001, False)
    w = searcher.weight("apple", v)
    assert w.idf == fit.g1
    assert w.k1 == 0.001
    parts = w.tf_part(np.array([2.0, 1.0]), np.array([3.0, 2.0]))
    assert parts[0] == pytest.approx(2 * 1.001 / (2 + 0.001 * 1.0), rel=1e-12)
    assert parts[1] == pytest.approx(1.001 / (1 + 0.001 * 0.75), rel=1e-12)
    for term in ("cherry", "durian"):
        w = searcher.weight(term, v)
        assert w.idf == pytest.approx(math.log2(2 / 3), rel=1e-12)
        assert w.k1 == 0.001
    scores, _ = searcher.scores(parse_terms(list(QUERY)), v)
    g_apple, g_rare = math.log2(0.8), math.log2(2 / 3)
    expected = (
        g_apple * 2 * 1.001 / 2.001,
        g_apple * 1.001 / 1.00075 + g_rare * 1.001 / 1.00075,
        g_rare * 1.001 / (1 + 0.001 * 1.25),
    )
    assert scores.tolist() == pytest.approx(expected, rel=1e-12)


# Ten documents of length 4 (so L = Lavg and c = tf exactly): x occurs in three of them.
ADPT_DOCS = (
    "x x x x",
    "x x x x",
    "x a1 a2 a3",
    *(f"f{i}a f{i}b f{i}c f{i}d" for i in range(7)),
)


def _k1_star(rho2: float, rho3: float) -> float:
    """Solve d/dk Σ_r (G^r/G¹ − (k+1)r/(k+r))² = 0 by bisection (r = 0 and r = 1 terms vanish)."""

    def slope(k: float) -> float:
        return (
            -4 * (rho2 - 2 * (k + 1) / (k + 2)) / (k + 2) ** 2
            - 12 * (rho3 - 3 * (k + 1) / (k + 3)) / (k + 3) ** 2
        )

    lo, hi = 0.001, 2.5
    assert slope(lo) < 0 < slope(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if slope(mid) > 0 else (mid, hi)
    return lo


def test_bm25adpt_hand_computed_fit(make_index) -> None:
    """BM25Adpt's G⁰..G^T, G¹ and k1* on a corpus where T = 3.

    N = 10 documents of 4 tokens each, so Lavg = 4, the normaliser is 1 and c = tf.
    x: tf 4, 4, 1 → df = 3, df₂ = |{c ≥ 1.5}| = 2, df₃ = |{c ≥ 2.5}| = 2, df₄ = |{c ≥ 3.5}| = 2,
    df₅ = |{c ≥ 4.5}| = 0. base = log2((3 + 0.5)/(10 + 1)) = log2(3.5/11).
    G⁰ = 0.
    G¹ = log2((df₂ + 0.5)/(df + 1)) − base = log2(2.5/4 · 11/3.5) = log2(27.5/14) = 0.974004….
    G² = log2((df₃ + 0.5)/(df₂ + 1)) − base = log2(2.5/3 · 11/3.5) = log2(27.5/10.5) = 1.389042….
    G³ = log2((df₄ + 0.5)/(df₃ + 1)) − base = G² (not a decrease: continue).
    G⁴ = log2((df₅ + 0.5)/(df₄ + 1)) − base = log2(0.5/3 · 11/3.5) = −0.933… < G³: stop, T = 3.
    k1* minimises Σ_{r=0..3} (G^r/G¹ − (k1+1)·r/(k1+r))². The r = 0 and r = 1 terms are 0 for every
    k1; with ρ = G²/G¹ = G³/G¹ = 1.426114…, the r = 2 term alone is 0 at k1 = (2ρ − 2)/(2 − ρ) =
    1.485… and the r = 3 term at k1 = 3(ρ − 1)/(3 − ρ) = 0.812…; the minimum of their sum lies
    between, where the derivative vanishes: k1* = 0.963773… (solved here by bisection).
    Weight of x in a "x x x x" document: G¹·4(k1*+1)/(4 + k1*) = 1.541347…; in "x a1 a2 a3":
    G¹·1·(k1*+1)/(1 + k1*) = G¹.
    """
    index = make_index(ADPT_DOCS)
    assert index.avgdl == 4.0
    searcher = Searcher(index)
    v = get_variant("bm25adpt")
    fit = v.fit(index.term_stats("x"), index.stats)
    g1 = math.log2(27.5 / 14)
    g2 = math.log2(27.5 / 10.5)
    assert fit.df_r == (10, 3, 2, 2)
    assert fit.gains == pytest.approx((0.0, g1, g2, g2), rel=1e-12, abs=1e-15)
    assert len(fit.gains) - 1 == 3  # T
    assert fit.g1 == pytest.approx(g1, rel=1e-12)
    k_star = _k1_star(g2 / g1, g2 / g1)
    assert k_star == pytest.approx(0.963773294904927, rel=1e-12)
    assert fit.unique
    assert fit.k1 == pytest.approx(k_star, abs=1e-6)
    # The fitted k1 is a minimum of the stated objective.
    rs = np.arange(4.0)

    def loss(k: float) -> float:
        return float(((np.array(fit.gains) / fit.g1 - (k + 1) * rs / (k + rs)) ** 2).sum())

    assert loss(fit.k1) <= min(loss(fit.k1 - 1e-3), loss(fit.k1 + 1e-3))
    w = searcher.weight("x", v)
    assert (w.idf, w.k1) == (fit.g1, fit.k1)
    assert any("k1* = 0.96377" in n for n in w.notes)
    assert any("T = 3" in n for n in w.notes)
    scores, ok = searcher.scores(parse_terms(["x"]), v)
    assert ok.tolist() == [True, True, True] + [False] * 7
    assert scores[0] == scores[1] == pytest.approx(g1 * 4 * (k_star + 1) / (4 + k_star), rel=1e-7)
    assert scores[0] == pytest.approx(1.541347265440801, rel=1e-7)
    assert scores[2] == pytest.approx(g1, rel=1e-12)
    explanation = searcher.explain("x", "d0", v)
    (row,) = explanation.terms
    assert row.status == "matched"
    assert row.weight == explanation.score == scores[0]
    assert row.idf_text.startswith("log2((2 + 0.5)/(3 + 1)) − log2((3 + 0.5)/(10 + 1))")


def test_adpt_fit_stops_where_no_document_reaches_the_next_count() -> None:
    """A term seen once (tf 1) in N = 10: df = 1, df₂ = 0. base = log2(1.5/11).

    G⁰ = 0; G¹ = log2(0.5/2) − log2(1.5/11) = log2(11/6) = 0.874469… > G⁰, but df₂ = 0: every
    later G^r equals log2(0.5/1) − base and never decreases, so the curve is cut at T = 1
    (documented in ``adpt_fit``). T < 2: no unique optimum, k1* = 0.001.
    """
    fit = adpt_fit(np.array([1.0]), 1, 10)
    assert fit.gains == pytest.approx((0.0, math.log2(11 / 6)), rel=1e-12, abs=1e-15)
    assert fit.df_r == (10, 1)
    assert fit.g1 == pytest.approx(math.log2(11 / 6), rel=1e-12)
    assert (fit.k1, fit.unique) == (0.001, False)


def test_adpt_fit_zero_gain_has_no_unique_optimum() -> None:
    """G¹ = 0 makes G^r/G¹ undefined: k1* = 0.001 (docs/scoring.md: "no unique optimum")."""
    # N = 3, df = 3, c = (2, 2, 2): base = log2(3.5/4), G¹ = log2((3 + 0.5)/(3 + 1)) − base = 0.
    fit = adpt_fit(np.array([2.0, 2.0, 2.0]), 3, 3)
    assert fit.g1 == 0.0
    assert (fit.k1, fit.unique) == (0.001, False)


def test_repeated_query_term_counts_qtf_times(three: Index) -> None:
    """score = Σ qtf·w: "apple apple cherry" on d1 is 2·w(apple) + w(cherry)."""
    searcher = Searcher(three)
    for v in all_variants():
        once, _ = searcher.scores(parse_terms(["apple", "cherry"]), v)
        twice, _ = searcher.scores(parse_terms(["apple", "apple", "cherry"]), v)
        w_apple = searcher.explain_docno(parse_terms(["apple"]), 1, v).score
        assert twice[1] == pytest.approx(once[1] + w_apple, rel=1e-12, abs=1e-15), v.key
        row = searcher.explain_docno(parse_terms(["apple", "apple", "cherry"]), 1, v).terms[0]
        assert row.qtf == 2
        assert row.weight == pytest.approx(2 * w_apple, rel=1e-12, abs=1e-15)


def test_okapi_floor_can_be_negative_like_rank_bm25(make_index) -> None:
    """With few distinct terms the mean idf is negative, and so is Okapi's ε floor.

    N = 2, d0 = "a b", d1 = "a c": raw idf of a (df 2) = ln(0.5/2.5) = −1.609437…, of b and c
    (df 1) = ln(1.5/1.5) = 0. Mean = −0.536479…; floor = 0.25 × mean = −0.134119…: a present term
    lowers the score. rank_bm25 does the same (the contract is "BM25Okapi exactly").
    """
    index = make_index(["a b", "a c"])
    w = Searcher(index).weight("a", get_variant("okapi"))
    mean = math.log(0.5 / 2.5) / 3
    assert Okapi().mean_idf(index.stats) == pytest.approx(mean, rel=1e-12)
    assert w.idf == pytest.approx(0.25 * mean, rel=1e-12)
    assert w.idf < 0
    assert "ε·mean idf" in w.idf_text


def test_relevance_feedback_replaces_idf_with_rsj(three: Index) -> None:
    """R = 1 (d1 marked relevant), apple: df 2, r = 1, N = 3:
    ln[(1 + 0.5)(3 − 1 − 2 + 1 + 0.5) / ((2 − 1 + 0.5)(1 − 1 + 0.5))]
    = ln(1.5·1.5/(1.5·0.5)) = ln 3.
    durian: df 1, r = 0: ln[(0.5)(3 − 1 − 1 + 0.5)/((1.5)(1.5))] = ln(0.75/2.25) = ln(1/3).
    """
    assert rsj_weight(1, 1, 2, 3) == pytest.approx(math.log(3), rel=1e-12)
    assert rsj_weight(0, 1, 1, 3) == pytest.approx(math.log(1 / 3), rel=1e-12)
    assert rsj_text(1, 1, 2, 3).endswith(f"= {math.log(3):.6g}")
    searcher = Searcher(three)
    fb = Feedback(frozenset({1}))
    for v in all_variants():
        w = searcher.weight("apple", v, fb)
        assert w.idf == pytest.approx(math.log(3), rel=1e-12), v.key
        assert w.idf_text.startswith("RSJ (R = 1 marked relevant, r = 1 contain it)")
        assert searcher.weight("durian", v, fb).idf == pytest.approx(math.log(1 / 3), rel=1e-12)
        plain = searcher.weight("apple", v)
        assert plain.idf != w.idf or v.key == "bm25adpt"


def test_parameters_take_effect_without_reindexing(three: Index) -> None:
    searcher = Searcher(three)
    q = parse_terms(["apple"])
    base, _ = searcher.scores(q, get_variant("lucene"))
    no_len, _ = searcher.scores(q, get_variant("lucene", b=0.0))
    # b = 0: K = k1 for every document: apple/d1 = ln 1.6 · 2.2/(1 + 1.2) = ln 1.6.
    assert no_len[1] == pytest.approx(math.log(1.6), rel=1e-12)
    assert no_len[1] != base[1]
    k0, _ = searcher.scores(q, get_variant("lucene", k1=0.0))
    # k1 = 0: tf part tf·1/(tf + 0) = 1 for any tf: binary.
    assert k0[0] == k0[1] == pytest.approx(math.log(1.6), rel=1e-12)
    replaced = dataclasses.replace(get_variant("bm25plus"), delta=0.0)
    assert searcher.scores(q, replaced)[0][0] == pytest.approx(math.log(2) * 1.375, rel=1e-12)


@pytest.mark.parametrize("key", KEYS)
def test_parameter_metadata_is_consistent(key: str) -> None:
    v = get_variant(key)
    assert v.key == key
    assert v.label
    assert v.idf_formula
    assert v.tf_formula
    assert v.describe().startswith("idf = ")
    for p in v.params():
        assert p.lo <= p.default <= p.hi, p
        assert p.step > 0
        assert p.help
        assert p.symbol
        assert v.values()[p.name] == p.default
        # Both ends of every range are accepted.
        assert getattr(get_variant(key, **{p.name: p.lo}), p.name) == p.lo
        assert getattr(get_variant(key, **{p.name: p.hi}), p.name) == p.hi
        with pytest.raises(VariantError, match="out of range"):
            get_variant(key, **{p.name: p.hi + 1.0})
        with pytest.raises(VariantError, match="out of range"):
            get_variant(key, **{p.name: float("nan")})
    assert eval(repr(v), {type(v).__name__: type(v)}) == v  # repr is the canonical name


def test_contract_defaults() -> None:
    """docs/scoring.md: k1 = 1.2, b = 0.75, δ as shown per variant, ε = 0.25."""
    assert get_variant("okapi").values() == {"k1": 1.2, "b": 0.75, "epsilon": 0.25}
    assert get_variant("bm25l").values() == {"k1": 1.2, "b": 0.75, "delta": 0.5}
    assert get_variant("bm25plus").values() == {"k1": 1.2, "b": 0.75, "delta": 1.0}
    assert get_variant("tfldp").values() == {"b": 0.75, "delta": 1.0}
    assert get_variant("bm25adpt").values() == {"b": 0.75}
    assert get_variant("tfidf").values() == {}
    assert get_variant("bim").values() == {}
    assert get_variant("bim-tf").values() == {"k1": 1.2}
    assert get_variant("bim-tf-len").values() == {"k1": 1.2, "b": 0.75}


def test_variant_errors_are_clear() -> None:
    with pytest.raises(VariantError, match=r"unknown variant 'bm26'.*okapi"):
        get_variant("bm26")
    with pytest.raises(VariantError, match="has no parameter 'k1'"):
        get_variant("tfidf", k1=1.0)
    assert get_variant("lucene", k1=None).k1 == 1.2  # None means the default
    assert variant_from_name("bm25l:k1=0.9, delta=1") == get_variant("bm25l", k1=0.9, delta=1.0)
    assert variant_from_name("atire") == get_variant("atire")
    with pytest.raises(VariantError, match="write name=value"):
        variant_from_name("okapi:k1")
    with pytest.raises(VariantError, match="write name=value"):
        variant_from_name("okapi:k1=high")


def test_formula_texts_show_the_numbers(three: Index) -> None:
    searcher = Searcher(three)
    w = searcher.weight("apple", get_variant("lucene"))
    assert w.idf_text == f"ln(1 + (3 − 2 + 0.5)/(2 + 0.5)) = {math.log(1.6):.6g}"
    assert w.tf_text(2.0, 3.0) == "2·(1.2+1)/(2 + 1.2·(1 − 0.75 + 0.75·3/3)) = 1.375"
    assert searcher.weight("apple", get_variant("okapi")).idf_text.startswith(
        "ln((3 − 2 + 0.5)/(2 + 0.5)) = -0.510826 < 0 → ε·mean idf = 0.25·0.170275"
    )
    assert BM25Adpt().idf(np.array([1.0]), three.stats).tolist() == [
        pytest.approx(np.nan, nan_ok=True)
    ]


def test_tfldp_floor_keeps_scores_finite() -> None:
    """δ = 0 and a tiny c: ln(c) ≤ −1, so ln(1 + ln c) is undefined; the floor at 0 applies."""
    v = get_variant("tfldp", delta=0.0, b=1.0)
    from bm25desk.engine.index.stats import CollectionStats

    stats = CollectionStats(10, 100.0, 5, lambda: np.array([1, 2]))
    parts = v.tf_part(np.array([1.0, 1.0, 50.0]), np.array([1000.0, 250.0, 100.0]), stats)
    # c = 0.1 (ln c < −1) → 0; c = 0.4: 1 + ln(1 + ln 0.4) = 1 + ln(0.0837…) < 0 → 0; c = 50 > 0.
    assert parts[0] == 0.0
    assert parts[1] == 0.0
    assert parts[2] == pytest.approx(1 + math.log(1 + math.log(50)), rel=1e-12)
    assert np.isfinite(parts).all()


def test_param_grid_is_row_major() -> None:
    assert list(iter_param_grid({"k1": [1.0, 2.0], "b": [0.5, 0.75]})) == [
        {"k1": 1.0, "b": 0.5},
        {"k1": 1.0, "b": 0.75},
        {"k1": 2.0, "b": 0.5},
        {"k1": 2.0, "b": 0.75},
    ]


def test_analyzer_is_irrelevant_to_the_formulas(make_index) -> None:
    """Sanity: the same tokens through the whitespace tokenizer give the same statistics."""
    index = make_index(THREE_DOCS, Analyzer(tokenizer="whitespace", lowercase=False))
    s = Searcher(index)
    scores, _ = s.scores(parse_terms(list(QUERY)), get_variant("lucene"))
    assert scores.tolist() == pytest.approx(HAND["lucene"][2], rel=1e-12)


@pytest.mark.parametrize("key", KEYS)
def test_weighing_many_terms_at_once_equals_one_by_one(key: str, cisi_index: Index) -> None:
    """One vectorised idf call per query gives every term the weighting weigh() gives it alone
    (the idf's bits, its text, k1* and notes), whatever df, under default and other parameters."""
    terms = [
        t
        for t in ("the", "of", "library", "retrieval", "zygote", "index", "a")
        if cisi_index.term_stats(t)
    ]
    stats = [cisi_index.term_stats(t) for t in terms]
    cls = type(get_variant(key))
    others = {p.name: p.lo + (p.hi - p.lo) / 3 for p in cls.params()}
    for v in (get_variant(key), get_variant(key, **others)):
        many = v.weigh_many(stats, cisi_index.stats)
        for st_, w in zip(stats, many, strict=True):
            want = v.weigh(st_, cisi_index.stats)
            assert np.float64(w.idf).tobytes() == np.float64(want.idf).tobytes(), (v, st_.term)
            assert (w.idf_text, w.k1, w.notes) == (want.idf_text, want.k1, want.notes)


def test_a_searcher_weighs_a_query_like_one_term_at_a_time(cisi_index: Index) -> None:
    """The searcher weighs a query's new terms together; each equals weight() on a fresh one."""
    query = parse_terms(["library", "the", "nosuchword", "retrieval", "library"])
    for key in KEYS:
        v = get_variant(key)
        together = Searcher(cisi_index)._weighted(query, v, None)
        alone = Searcher(cisi_index)
        assert [t for t, _, _ in together] == ["library", "the", "retrieval"]
        for term, qtf, w in together:
            want = alone.weight(term, v)
            assert want is not None
            assert (w.idf, w.idf_text, w.k1) == (want.idf, want.idf_text, want.k1)
            assert qtf == (2 if term == "library" else 1)
