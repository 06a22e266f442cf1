"""Search and explain: the registry sweep over random tiny corpora (hypothesis), the tie rule,
top-k against brute force, explanations of any document, and the query report."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.build import build_index
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Feedback, QueryError, Searcher
from bm25desk.engine.scoring.variants import Variant, get_variant, variant_classes

KEYS = [c.key for c in variant_classes()]
NON_NEGATIVE = {"tfidf", "lucene", "atire", "bm25l", "bm25plus", "tfldp"}
"""Variants whose weights can never be negative. okapi (ε·mean idf with a negative mean, as
rank_bm25), bm25adpt (G¹ < 0) and the bim* teaching weights can be."""

WORDS = ["a", "b", "c", "d", "e", "f", "g"]
SWEEP = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

corpora = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=9).map(" ".join), min_size=1, max_size=7
)
queries = st.lists(st.sampled_from([*WORDS, "zz"]), min_size=1, max_size=4)


# -- an independent float64 implementation of docs/scoring.md's formulas ---------------------------


def _adpt(cs: list[float], df: int, n: int, b_unused: float) -> tuple[float, float]:
    """(G¹, k1*) following docs/scoring.md, with adpt_fit's documented cut where df_{r+1} = 0."""

    def df_r(r: int) -> int:
        if r == 0:
            return n
        if r == 1:
            return df
        return sum(1 for c in cs if c >= r - 0.5)

    base = math.log2((df + 0.5) / (n + 1))

    def g(r: int) -> float:
        return math.log2((df_r(r + 1) + 0.5) / (df_r(r) + 1)) - base

    gains = [g(0)]
    r = 0
    while df_r(r + 1) > 0 and g(r) <= g(r + 1):
        gains.append(g(r + 1))
        r += 1
    g1 = g(1)
    if len(gains) < 3 or g1 == 0:
        return g1, 0.001

    def loss(k: float) -> float:
        return sum((gr / g1 - (k + 1) * i / (k + i)) ** 2 for i, gr in enumerate(gains))

    grid = [0.001 + i * (2.5 - 0.001) / 4999 for i in range(5000)]
    vals = [loss(k) for k in grid]
    if max(vals) - min(vals) <= 1e-15:
        return g1, 0.001
    best = vals.index(min(vals))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    for _ in range(100):  # ternary search
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (lo, m2) if loss(m1) <= loss(m2) else (m1, hi)
    return g1, (lo + hi) / 2


def reference_scores(
    v: Variant, docs: Sequence[Sequence[str]], query: Sequence[str]
) -> list[float]:
    """Score every document for ``query`` straight from docs/scoring.md's table (plain Python)."""
    n = len(docs)
    lens = [len(d) for d in docs]
    avgdl = sum(lens) / n if n else 0.0
    tfs = [Counter(d) for d in docs]
    df = Counter(t for c in tfs for t in c)
    p = v.values()
    k1, b = p.get("k1", 1.2), p.get("b", 0.75)

    def norm(L: float) -> float:
        return 1 - b + b * L / (avgdl if avgdl > 0 else 1.0)

    def rsj(d: int) -> float:
        return math.log((n - d + 0.5) / (d + 0.5))

    def sat(tf: float, L: float, k: float = k1) -> float:
        return tf * (k + 1) / (tf + k * norm(L))

    mean_rsj = sum(rsj(x) for x in df.values()) / len(df) if df else 0.0
    key = v.key
    out = []
    for i in range(n):
        total = 0.0
        for t, qtf in Counter(query).items():
            tf = tfs[i].get(t, 0)
            if tf == 0:
                continue
            L, d = lens[i], df[t]
            c = tf / norm(L)
            if key == "tfidf":
                w = math.log10(n / d) * math.log(1 + tf)
            elif key == "okapi":
                idf = rsj(d) if rsj(d) >= 0 else p["epsilon"] * mean_rsj
                w = idf * sat(tf, L)
            elif key == "lucene":
                w = math.log(1 + (n - d + 0.5) / (d + 0.5)) * sat(tf, L)
            elif key == "atire":
                w = math.log(n / d) * sat(tf, L)
            elif key == "bm25l":
                dl = p["delta"]
                w = math.log((n + 1) / (d + 0.5)) * (k1 + 1) * (c + dl) / (k1 + c + dl)
            elif key == "bm25plus":
                w = math.log((n + 1) / d) * (sat(tf, L) + p["delta"])
            elif key == "bm25adpt":
                cs = [tfs[j][t] / norm(lens[j]) for j in range(n) if tfs[j].get(t)]
                g1, ks = _adpt(cs, d, n, b)
                w = g1 * sat(tf, L, ks)
            elif key == "tfldp":
                inner = math.log(c + p["delta"]) if c + p["delta"] > 0 else -math.inf
                part = 1 + math.log(1 + inner) if inner > -1 else 0.0
                w = math.log((n + 1) / d) * max(part, 0.0)
            elif key == "bm25f":  # no titles or fields here: the text alone
                bt = p["b_text"]
                ptf = p["w_text"] * tf / (1 - bt + bt * L / (avgdl if avgdl > 0 else 1.0))
                part = ptf * (k1 + 1) / (k1 + ptf) if ptf > 0 else 0.0
                w = math.log(1 + (n - d + 0.5) / (d + 0.5)) * part
            elif key == "bim":
                w = rsj(d)
            elif key == "bim-tf":
                w = rsj(d) * tf / (k1 + tf)
            elif key == "bim-tf-len":
                w = rsj(d) * c / (k1 + c)
            else:  # pragma: no cover - a new variant needs a reference here
                raise AssertionError(f"no reference formula for {key}")
            total += qtf * w
        out.append(total)
    return out


def brute_force_ranking(scores: Sequence[float], matches: Sequence[bool]) -> list[int]:
    """The documented rule: matching documents by score descending, ties by internal order."""
    return sorted((d for d in range(len(scores)) if matches[d]), key=lambda d: (-scores[d], d))


# -- the registry sweep ---------------------------------------------------------------------------


@pytest.mark.slow
@SWEEP
@given(data=st.data(), texts=corpora, query=queries)
def test_sweep_every_variant(make_index, variants, data, texts, query) -> None:
    """Every registered variant on random tiny corpora (with default or random parameters):
    finite scores equal to docs/scoring.md's formulas, explanations (also of non-matching documents)
    that sum to the score, top-k equal to a brute-force float64 ranking with the documented tie
    rule, and a ranking invariant to the order of the corpus (up to ties)."""
    perm = data.draw(st.permutations(range(len(texts))), label="permutation")
    ids = [f"d{i}" for i in range(len(texts))]
    index = make_index(texts, docids=ids)
    permuted = make_index([texts[i] for i in perm], docids=[ids[i] for i in perm])
    for key in KEYS:
        v = data.draw(variants(key), label=key)
        _check_scores_explanations_and_top_k(index, texts, query, v)
        _check_order_invariance(index, permuted, query, v)


def _check_scores_explanations_and_top_k(
    index: Index, texts: list[str], query: list[str], v: Variant
) -> None:
    key = v.key
    searcher = Searcher(index)
    parsed = parse_terms(query)
    scores, ok = searcher.scores(parsed, v)
    n = index.n_docs
    assert scores.shape == (n,)
    assert np.isfinite(scores).all(), key

    ref = reference_scores(v, [t.split() for t in texts], query)
    tol = 1e-6 if key == "bm25adpt" else 1e-9  # k1* is a numerical optimum
    assert scores.tolist() == pytest.approx(ref, rel=tol, abs=1e-12), key

    vocab = {w for t in texts for w in t.split()}
    for d in range(n):
        e = searcher.explain_docno(parsed, d, v)
        assert e.docid == f"d{d}"
        assert e.score == scores[d], key  # same functions, same order: bit for bit
        assert e.parts_sum == e.score or math.isclose(e.parts_sum, e.score, rel_tol=1e-12)
        assert math.isclose(
            math.fsum(t.weight for t in e.terms), e.score, rel_tol=1e-12, abs_tol=1e-12
        )
        assert e.matches == bool(ok[d])
        statuses = {t.term: t.status for t in e.terms}
        for term in set(query):
            tf = texts[d].split().count(term)
            expected = "matched" if tf else ("unmatched" if term in vocab else "unknown")
            assert statuses[term] == expected
        if not e.matches:
            assert e.score == 0.0
            assert e.reason == "contains none of the query terms"
            assert all(t.weight == 0.0 for t in e.terms)
        if key in NON_NEGATIVE:
            assert all(t.weight >= 0.0 for t in e.terms), key
        matched = [t for t in e.terms if t.status == "matched"]
        if e.score and all(t.weight > 0 for t in matched):
            assert math.isclose(sum(t.share for t in matched), 1.0, rel_tol=1e-9)

    expected_order = brute_force_ranking(scores.tolist(), ok.tolist())
    if not any(t in vocab for t in query):
        assert not expected_order
        return
    result = searcher.search_terms(query, v, k=n + 3)
    assert [h.docno for h in result.hits] == expected_order, key
    assert result.n_matches == len(expected_order)
    for rank, hit in enumerate(result.hits, 1):
        assert hit.rank == rank
        assert hit.score == scores[hit.docno]
        assert math.isclose(
            math.fsum(c.weight for c in hit.contributions), hit.score, rel_tol=1e-12, abs_tol=1e-12
        )
        e = searcher.explain_docno(parsed, hit.docno, v, with_rank=True)
        assert e.rank == rank
        rows = {t.term: t for t in e.terms if t.status == "matched"}
        for c in hit.contributions:
            row = rows[c.term]
            assert (c.weight, c.tf, c.df, c.idf, c.tf_part) == (
                row.weight, row.tf, row.df, row.idf, row.tf_part
            )  # fmt: skip
    for k in range(1, n + 1):
        top = searcher.search_terms(query, v, k=k)
        assert [h.docno for h in top.hits] == expected_order[:k]


def _check_order_invariance(a: Index, b: Index, query: list[str], v: Variant) -> None:
    """Permuting the corpus changes no document's score, and the ranking only within ties
    (where the documented rule — internal document order — decides)."""
    parsed = parse_terms(query)
    sa, oka = Searcher(a).scores(parsed, v)
    sb, okb = Searcher(b).scores(parsed, v)
    by_id_a = {a.docid(d): (float(sa[d]), bool(oka[d])) for d in range(a.n_docs)}
    by_id_b = {b.docid(d): (float(sb[d]), bool(okb[d])) for d in range(b.n_docs)}
    assert by_id_a.keys() == by_id_b.keys()
    for docid, (score, match) in by_id_a.items():
        other, other_match = by_id_b[docid]
        assert match == other_match
        assert score == other or math.isclose(score, other, rel_tol=1e-12), v.key
    if not oka.any():
        return
    ra = Searcher(a).search_terms(query, v, k=a.n_docs).hits
    rb = Searcher(b).search_terms(query, v, k=b.n_docs).hits
    assert [by_id_a[h.docid][0] for h in ra] == pytest.approx(
        [by_id_a[h.docid][0] for h in rb], rel=1e-12, abs=1e-300
    )
    groups_a: dict[float, set[str]] = {}
    groups_b: dict[float, set[str]] = {}
    for hits, groups in ((ra, groups_a), (rb, groups_b)):
        for h in hits:
            groups.setdefault(by_id_a[h.docid][0], set()).add(h.docid)
        for h1, h2 in itertools.pairwise(hits):  # within a tie: internal order
            if h1.score == h2.score:
                assert h1.docno < h2.docno
    assert groups_a == groups_b


# -- ties, top-k and the search API on fixed corpora ----------------------------------------------


def test_ties_are_broken_by_internal_document_order(make_index) -> None:
    index = make_index(["x y", "z", "x y", "y x", "x y"], docids=["e", "d", "c", "b", "a"])
    for v in (get_variant(k) for k in KEYS):
        hits = Searcher(index).search("x", v, k=10).hits
        assert [h.docid for h in hits] == ["e", "c", "b", "a"], v.key
        assert len({h.score for h in hits}) == 1


def test_folder_ties_follow_sorted_path_order(store, tmp_path) -> None:
    folder = tmp_path / "f"
    for name in ("b.txt", "a.txt", "sub/c.txt", "A.txt"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("same words here\n", encoding="utf-8")
    build_index(folder, name="ties", store=store)
    hits = Searcher(store.open("ties")).search("words", k=10).hits
    assert [h.docid for h in hits] == ["A.txt", "a.txt", "b.txt", "sub/c.txt"]


def test_top_k_with_many_equal_scores_at_the_cut(make_index) -> None:
    """The partition at the k-th score keeps every tied candidate, then takes the first by docno."""
    texts = ["x"] * 50 + ["x x"] * 3 + ["y"] * 5
    index = make_index(texts)
    s = Searcher(index)
    for k in (1, 3, 4, 10, 53, 60):
        hits = s.search("x", get_variant("lucene"), k=k).hits
        assert [h.docno for h in hits] == ([50, 51, 52, *list(range(50))])[:k]


def test_search_result_fields(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    r = s.search("cat mat", get_variant("bm25l"), k=2)
    assert r.query == "cat mat"
    assert r.variant == get_variant("bm25l")
    assert r.n_docs == 6
    assert r.avgdl == tiny_index.avgdl
    assert r.n_matches == 3  # tiny-1 (cat, mat), tiny-5 (cat), tiny-6 (mat)
    assert len(r.hits) == 2
    assert r.analysis.terms == ("cat", "mat")
    assert r.seconds >= 0
    hit = r.hits[0]
    assert hit.docid == "tiny-1"
    assert hit.title == "Cats and dogs"
    assert hit.location == "https://example.org/tiny-1"
    assert hit.length == tiny_index.doc(hit.docno).length
    assert [c.term for c in hit.contributions] == ["cat", "mat"]
    cat = hit.contributions[0]
    assert (cat.tf, cat.df, cat.qtf) == (2, 2, 1)
    assert Searcher(tiny_index).search("cat mat").variant == get_variant("lucene")  # default


def test_query_errors(tiny_index: Index, make_index) -> None:
    s = Searcher(tiny_index)
    with pytest.raises(QueryError, match="the query is empty"):
        s.search("   ")
    for text in ("!!! ??? ...", "— · ¿?", "+-- () *"):  # typed, but no word in it
        with pytest.raises(QueryError, match="no words, only punctuation or symbols"):
            s.search(text)
    with pytest.raises(QueryError, match="only excludes"):
        s.search("NOT cat")
    with pytest.raises(QueryError):  # whoosh drops a lone "-word": reported as an empty query
        s.search("-cat")
    with pytest.raises(QueryError, match="k must be at least 1"):
        s.search("cat", k=0)
    stopped = Searcher(make_index(["the cat"], Analyzer.create(stopwords="en")))
    with pytest.raises(QueryError, match="nothing to search for: the, of are stop words"):
        stopped.search("the of")
    # Unknown words are not an error: they simply match nothing.
    assert s.search("zebra").hits == ()


def test_unknown_and_stop_listed_terms_are_reported(make_index) -> None:
    index = make_index(["the cat sat", "a dog"], Analyzer.create(stopwords="en"))
    s = Searcher(index)
    r = s.search("The cat and the unicorn")
    assert r.analysis.stopped == ("The", "and", "the")
    assert r.analysis.unknown == ("unicorn",)
    assert [(t.surface, t.status) for t in r.analysis.tokens] == [
        ("The", "stop"),
        ("cat", "ok"),
        ("and", "stop"),
        ("the", "stop"),
        ("unicorn", "unknown"),
    ]
    assert r.analysis.terms == ("cat", "unicorn")
    e = s.explain("The cat and the unicorn", "d0")
    assert [(t.surface, t.status) for t in e.terms] == [
        ("The", "stop"),
        ("cat", "matched"),
        ("and", "stop"),
        ("the", "stop"),
        ("unicorn", "unknown"),
    ]
    assert s.suggest("dgo") == ["dog"]


def test_explain_any_document(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    v = get_variant("okapi")
    e = s.explain("quick fox", "tiny-2", v)
    assert not e.matches
    assert e.score == 0.0
    assert e.reason == "contains none of the query terms"
    assert [(t.term, t.status, t.df) for t in e.terms] == [
        ("quick", "unmatched", 1),
        ("fox", "unmatched", 1),
    ]
    assert all(t.idf > 0 and t.idf_text for t in e.terms)  # idf is shown even when absent
    assert "not a match" in e.as_text()
    e = s.explain("+dog cat", "tiny-5", v)  # has "cat" but not the required "dog"
    assert not e.matches
    assert e.score > 0
    assert e.reason.startswith("fails the query's constraints")
    with pytest.raises(KeyError, match="no document with id 'nope'"):
        s.explain("cat", "nope")


def test_explanation_outputs(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    v = get_variant("bm25adpt")
    top = s.search("the dog", v, k=1).hits[0]
    e = s.explain("the dog", top.docid, v, with_rank=True)
    assert e.rank == 1
    assert e.score == top.score
    d = e.as_dict()
    assert d["docid"] == top.docid
    assert d["score"] == top.score
    assert d["variant"]["key"] == "bm25adpt"
    assert {"term", "qtf", "tf", "df", "idf", "weight", "idf_formula", "tf_formula"} <= set(
        d["contributions"][0]
    )
    assert d["length"] == top.length
    assert d["avgdl"] == tiny_index.avgdl
    import json

    assert json.loads(e.as_json()) == json.loads(json.dumps(d))
    text = e.as_text()
    assert top.docid in text
    assert "k1*" in text


def test_feedback_changes_idf_and_ranking(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    v = get_variant("lucene")
    plain = s.search("cat dog", v, k=6)
    relevant = tiny_index.docno("tiny-5")
    fb = s.search("cat dog", v, k=6, feedback=Feedback(frozenset({relevant})))
    assert fb.feedback is not None
    cat = s.weight("cat", v, Feedback(frozenset({relevant})))
    # N = 6, R = 1, cat: df 2, r = 1 → ln[(1.5)(6 − 1 − 2 + 1 + 0.5)/((2 − 1 + 0.5)(0.5))] = ln 9
    assert cat.idf == pytest.approx(math.log(9), rel=1e-12)
    assert [h.docid for h in fb.hits] != [h.docid for h in plain.hits]
    assert fb.hits[0].docid in ("tiny-1", "tiny-5")


def test_searcher_weights_are_cached_per_variant_and_parameters(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    a = s.weight("cat", get_variant("lucene"))
    assert s.weight("cat", get_variant("lucene")) is a
    assert s.weight("cat", get_variant("lucene", k1=2.0)) is not a
    assert s.weight("zebra", get_variant("lucene")) is None
