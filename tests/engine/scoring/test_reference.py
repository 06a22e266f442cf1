"""Differential tests against the libraries people migrate from: rank_bm25 and bm25s.

All on the real CISI collection with the whitespace tokenizer and case kept: our index is built
with ``Analyzer(tokenizer="whitespace", lowercase=False)`` and the libraries get ``text.split()``
of each document's stored text, so both sides see identical tokens. Queries are the ``.W`` texts of
CISI.QRY, also ``split()``: unknown tokens (punctuation attached...) are ignored by all sides.

Adapters for the documented differences (docs/scoring.md, "Reference libraries"):

- rank_bm25 ``BM25Okapi`` = ``okapi`` exactly (same k1, b, ε).
- rank_bm25 ``BM25L`` multiplies every term's weight by tf once more:
  rank_bm25(d) = Σ_t qtf·tf(t,d)·w(t,d).
- rank_bm25 ``BM25Plus`` adds idf·δ for every query term absent from the document (also for
  documents matching nothing): rank_bm25(d) = ours(d) + Σ_{t ∈ q, t ∉ d} qtf·idf(t)·δ.
- bm25s ``lucene`` omits (k1+1): ours = bm25s × (k1+1). ``atire``: identical.
- bm25s ``bm25l``/``bm25+`` give every absent query term its tf = 0 weight ("non-occurrence"):
  bm25s(d) = ours(d) + Σ_{t ∈ q, t ∉ d} qtf·idf(t)·tf_part(0) with tf_part(0) = (k1+1)δ/(k1+δ)
  for BM25L and δ for BM25+ (neither depends on the document length).
- bm25s ``robertson`` omits (k1+1) and clips negative idf to 0 (instead of the ε floor):
  ours(q without its negative-idf terms) = bm25s(q) × (k1+1).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import Variant, get_variant

pytestmark = pytest.mark.reference

rank_bm25 = pytest.importorskip("rank_bm25")

N_QUERIES = 15
RTOL = 1e-9


@pytest.fixture(scope="module")
def corpus(cisi_ws_index: Index) -> list[list[str]]:
    """Every CISI document's stored text, split on whitespace (in internal document order)."""
    index = cisi_ws_index
    docs = [index.text(d).split() for d in range(index.n_docs)]
    assert index.doclen.tolist() == [len(d) for d in docs]  # identical tokens on both sides
    return docs


@pytest.fixture(scope="module")
def queries(cisi_queries) -> list[list[str]]:
    return [text.split() for _, text in cisi_queries[:N_QUERIES]]


def _ours(index: Index, query: list[str], v: Variant) -> tuple[np.ndarray, np.ndarray]:
    return Searcher(index).scores(parse_terms(query), v)


def _absent_terms_constant(
    index: Index, query: list[str], v: Variant, per_term: float | None
) -> np.ndarray:
    """Σ over query terms in the vocabulary but absent from d of qtf·idf(t)·per_term."""
    s = Searcher(index)
    extra = np.zeros(index.n_docs)
    for term, qtf in Counter(query).items():
        w = s.weight(term, v)
        if w is None:
            continue
        present = np.zeros(index.n_docs, dtype=bool)
        present[index.postings(term)[0]] = True
        extra[~present] += qtf * w.idf * per_term
    return extra


# -- rank_bm25 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k1", "b", "eps"), [(1.5, 0.75, 0.25), (1.2, 0.75, 0.25), (0.9, 0.4, 0.1)]
)
def test_okapi_equals_rank_bm25_okapi(cisi_ws_index, corpus, queries, k1, b, eps) -> None:
    ref = rank_bm25.BM25Okapi(corpus, k1=k1, b=b, epsilon=eps)
    v = get_variant("okapi", k1=k1, b=b, epsilon=eps)
    from bm25desk.engine.scoring.variants import Okapi

    assert Okapi().mean_idf(cisi_ws_index.stats) == pytest.approx(ref.average_idf, rel=1e-12)
    n_compared = 0
    for q in queries:
        ours, ok = _ours(cisi_ws_index, q, v)
        theirs = np.asarray(ref.get_scores(q))
        # On every document matching at least one query term, the same score...
        np.testing.assert_allclose(ours[ok], theirs[ok], rtol=RTOL, atol=0)
        # ...and rank_bm25 gives the others 0, as we do.
        assert not theirs[~ok].any()
        n_compared += int(ok.sum())
        # Our top 10 are rank_bm25's best 10 (the same scores; documents up to exact ties).
        top = Searcher(cisi_ws_index).search_terms(q, v, k=10).hits
        best = np.sort(theirs[ok])[::-1][:10]
        assert [theirs[h.docno] for h in top] == pytest.approx(best.tolist(), rel=RTOL)
    assert n_compared > 1000


def test_bm25l_equals_rank_bm25_bm25l_times_tf(cisi_ws_index, corpus, queries) -> None:
    """rank_bm25's BM25L multiplies by tf once more (a bug): compare Σ qtf·tf·w per document."""
    k1, b, delta = 1.5, 0.75, 0.5
    ref = rank_bm25.BM25L(corpus, k1=k1, b=b, delta=delta)
    v = get_variant("bm25l", k1=k1, b=b, delta=delta)
    s = Searcher(cisi_ws_index)
    doclen = cisi_ws_index.doclen.astype(np.float64)
    for i, q in enumerate(queries):
        theirs = np.asarray(ref.get_scores(q))
        expected = np.zeros(cisi_ws_index.n_docs)
        for term, qtf in Counter(q).items():
            w = s.weight(term, v)
            if w is not None:
                docnos, tfs = cisi_ws_index.postings(term)
                part = w.tf_part(tfs.astype(np.float64), doclen[docnos])
                expected[docnos] += qtf * w.idf * part * tfs
        np.testing.assert_allclose(theirs, expected, rtol=RTOL, atol=0)
        if i < 3:  # the same from the hits' contributions
            for hit in s.search_terms(q, v, k=50).hits:
                by_hit = math.fsum(c.weight * c.tf for c in hit.contributions)
                assert theirs[hit.docno] == pytest.approx(by_hit, rel=RTOL)


def test_bm25plus_equals_rank_bm25_bm25plus_minus_absent_terms(
    cisi_ws_index, corpus, queries
) -> None:
    """rank_bm25's BM25Plus adds idf·δ for every absent query term, matching or not."""
    k1, b, delta = 1.5, 0.75, 1.0
    ref = rank_bm25.BM25Plus(corpus, k1=k1, b=b, delta=delta)
    v = get_variant("bm25plus", k1=k1, b=b, delta=delta)
    for q in queries:
        ours, _ = _ours(cisi_ws_index, q, v)
        expected = ours + _absent_terms_constant(cisi_ws_index, q, v, delta)
        np.testing.assert_allclose(np.asarray(ref.get_scores(q)), expected, rtol=RTOL, atol=1e-12)


def test_facade_reproduces_rank_bm25(corpus, queries) -> None:
    """bm25desk's rank_bm25-style facade with rank_bm25's own defaults."""
    from bm25desk.engine.rank import BM25

    ref = rank_bm25.BM25Okapi(corpus)
    ours = BM25(corpus, "okapi", k1=1.5, b=0.75, epsilon=0.25)
    try:
        for q in queries[:5]:
            theirs = np.asarray(ref.get_scores(q))
            np.testing.assert_allclose(ours.get_scores(q), theirs, rtol=RTOL, atol=0)
            ids = [0, 5, 17]
            np.testing.assert_allclose(
                ours.get_batch_scores(q, ids), ref.get_batch_scores(q, ids), rtol=RTOL, atol=0
            )
            top = ours.get_top_n(q, list(range(len(corpus))), n=5)
            assert [theirs[i] for i in top] == pytest.approx(sorted(theirs, reverse=True)[:5])
    finally:
        ours.close()


# -- bm25s --------------------------------------------------------------------------------------

bm25s_methods = {
    "lucene": "lucene",
    "atire": "atire",
    "bm25l": "bm25l",
    "bm25plus": "bm25+",
    "okapi": "robertson",
}


@pytest.fixture(scope="module")
def bm25s_index(corpus):
    """Build bm25s retrievers lazily, one per (method, k1, b, δ), in float64."""
    bm25s = pytest.importorskip("bm25s")
    built: dict[tuple[str, float, float, float], object] = {}

    def get(method: str, k1: float, b: float, delta: float):
        key = (method, k1, b, delta)
        if key not in built:
            r = bm25s.BM25(method=method, k1=k1, b=b, delta=delta, dtype="float64")
            r.index(corpus, show_progress=False)
            built[key] = r
        return built[key]

    return get


def _bm25s_scores(retriever, query: list[str]) -> np.ndarray:
    known = [t for t in query if t in retriever.vocab_dict]
    if not known:
        return np.zeros(retriever.scores["num_docs"])
    return np.asarray(retriever.get_scores(known), dtype=np.float64)


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (1.5, 0.3)])
def test_lucene_equals_bm25s_times_k1_plus_1(cisi_ws_index, queries, bm25s_index, k1, b) -> None:
    r = bm25s_index("lucene", k1, b, 0.5)
    v = get_variant("lucene", k1=k1, b=b)
    for q in queries:
        ours, _ = _ours(cisi_ws_index, q, v)
        np.testing.assert_allclose(ours, _bm25s_scores(r, q) * (k1 + 1), rtol=RTOL, atol=1e-12)


def test_atire_equals_bm25s(cisi_ws_index, queries, bm25s_index) -> None:
    r = bm25s_index("atire", 1.2, 0.75, 0.5)
    v = get_variant("atire")
    for q in queries:
        ours, _ = _ours(cisi_ws_index, q, v)
        np.testing.assert_allclose(ours, _bm25s_scores(r, q), rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize(
    ("key", "delta"), [("bm25l", 0.5), ("bm25l", 1.0), ("bm25plus", 1.0), ("bm25plus", 0.5)]
)
def test_bm25l_and_bm25plus_equal_bm25s_minus_non_occurrence(
    cisi_ws_index, queries, bm25s_index, key, delta
) -> None:
    k1, b = 1.2, 0.75
    r = bm25s_index(bm25s_methods[key], k1, b, delta)
    v = get_variant(key, k1=k1, b=b, delta=delta)
    zero = float(v.tf_part(np.zeros(1), np.ones(1), cisi_ws_index.stats)[0])
    assert zero == pytest.approx((k1 + 1) * delta / (k1 + delta) if key == "bm25l" else delta)
    for q in queries:
        ours, ok = _ours(cisi_ws_index, q, v)
        expected = ours + _absent_terms_constant(cisi_ws_index, q, v, zero)
        theirs = _bm25s_scores(r, q)
        np.testing.assert_allclose(theirs, expected, rtol=RTOL, atol=1e-9)
        # Hence the same ranking differences among matching documents.
        m = np.flatnonzero(ok)
        if m.size > 1:
            np.testing.assert_allclose(np.diff(theirs[m]) - np.diff(expected[m]), 0.0, atol=1e-9)


def test_okapi_equals_bm25s_robertson_on_positive_idf_terms(
    cisi_ws_index, queries, bm25s_index
) -> None:
    k1, b = 1.2, 0.75
    r = bm25s_index("robertson", k1, b, 0.5)
    v = get_variant("okapi", k1=k1, b=b)
    n = cisi_ws_index.n_docs
    dropped = 0
    for q in queries:
        keep = []
        for t in q:
            st = cisi_ws_index.term_stats(t)
            if st is not None and (n - st.df + 0.5) / (st.df + 0.5) < 1:
                dropped += 1  # bm25s: idf clipped to 0; okapi: ε·mean idf
                continue
            keep.append(t)
        ours, _ = _ours(cisi_ws_index, keep, v) if keep else (np.zeros(n), None)
        np.testing.assert_allclose(ours, _bm25s_scores(r, q) * (k1 + 1), rtol=RTOL, atol=1e-12)
    assert dropped > 0  # the adapter was exercised ("the", "of"... are in most documents)
