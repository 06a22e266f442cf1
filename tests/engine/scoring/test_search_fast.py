"""The fast query path: bag-of-words parsing equal to the parser's, exhaustive scoring equal to the
kernel's for every variant, and lazy array-backed hits equal to the hits built eagerly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import impacts, topk
from bm25desk.engine.scoring import query as query_module
from bm25desk.engine.scoring.hits import Hits
from bm25desk.engine.scoring.query import (
    _Collector,
    has_syntax,
    parse_bag,
    parse_query,
    parse_terms,
    parse_with_parser,
)
from bm25desk.engine.scoring.results import Contribution, Hit, SearchResult, tie_groups
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import get_variant, variant_classes

KEYS = [c.key for c in variant_classes()]
MANY = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
SWEEP = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Words that look like syntax to some parser: field-like words, whoosh's other operators, range and
# boost characters, apostrophes, hyphens inside words, accents, numbers, stop words, case.
TRICKY = [
    "cat", "cats", "Dog", "the", "running", "e-mail", "c++", "don't", "body:dog", "x:y", "a:b:c",
    "ANDNOT", "ANDMAYBE", "REQUIRE", "and", "or", "not", "Title", "title", "mytitle:x",
    "x-title:y", "café", "naïve", "1.5", "2,000", "a/b", "x*y", "foo^2", "~a", "a~2", "[a",
    "b]", "{x}", "<y>", "@z", "#t", "TO", "to", "mat.", "fox,", "QUICK", "Brown", "it's",
    "x+y", "x-", "!", "?", ":", "*", "^", "'", "a'b'", "_", "δ", "ω-3",
]  # fmt: skip
SEPARATORS = st.sampled_from([" ", "  ", "\t", " \n "])
texts = st.lists(st.tuples(st.sampled_from(TRICKY), SEPARATORS), min_size=0, max_size=12).map(
    lambda parts: "".join(w + sep for w, sep in parts).strip()
)
ANALYZERS = [Analyzer(), Analyzer.create(stopwords="en", stemmer="porter", min_length=2)]


def _shape(p):  # what a ParsedQuery means (its text, syntax flag and warnings aside)
    return (
        p.tokens, p.scored, p.required, p.prohibited, p.phrases, p.prohibited_phrases,
        p.title_required, p.title_prohibited, p.constraints,
    )  # fmt: skip


# -- the bag-of-words fast path ----------------------------------------------------------------


@MANY
@given(text=texts, which=st.sampled_from(range(len(ANALYZERS))))
def test_fast_path_equals_the_parser_on_plain_words(text, which) -> None:
    """A query without syntax means the same through the fast path, whoosh's parser and the
    collector's own bag of words (what every plain query went through before)."""
    analyzer = ANALYZERS[which]
    if has_syntax(text):
        return
    fast = parse_query(text, analyzer)
    assert not fast.syntax
    assert not fast.warnings
    assert _shape(fast) == _shape(parse_with_parser(text, analyzer)), text
    old = _Collector(analyzer)
    scored = old.words(text, "optional")
    assert fast.tokens == tuple(old.tokens)
    assert fast.terms == tuple(dict.fromkeys(scored))
    assert dict(fast.scored) == {t: scored.count(t) for t in scored}


@MANY
@given(text=texts)
def test_fast_path_is_the_bag_of_words_of_any_text(text) -> None:
    """``syntax=False`` takes the fast path for any text, and it equals the analyser's terms."""
    analyzer = ANALYZERS[1]
    p = parse_query(text, analyzer, syntax=False)
    assert p == parse_bag(text, analyzer)
    terms = analyzer.terms(text)
    assert [t.term for t in p.tokens if t.term is not None] == terms
    assert p.scored == tuple((t, terms.count(t)) for t in dict.fromkeys(terms))
    assert [(t.surface, t.term, t.status) for t in p.tokens] == [
        (t.surface, t.term, t.status) for t in analyzer.analyze(text)
    ]


def test_syntax_means_the_same_beside_other_syntax(tiny_index: Index) -> None:
    """Words that are plain in a plain query stay plain when other syntax is around them:
    whoosh's ANDNOT/ANDMAYBE/REQUIRE and field names other than title: are words."""
    an = tiny_index.analyzer
    for plain in (
        "cat ANDNOT dog",
        "cat ANDMAYBE dog",
        "cat REQUIRE dog",
        "body:cat",
        "xtitle:dog",
    ):
        assert not has_syntax(plain)
        bag = parse_query(plain, an)
        mixed = parse_query(f"+mat {plain}", an)
        assert mixed.scored == (("mat", 1), *bag.scored), plain
        assert [c.label for c in mixed.constraints] == ["+mat"], plain
    assert [c.label for c in parse_query("+mat -title:dog", an).constraints] == [
        "+mat",
        "-title:dog",
    ]


@SWEEP
@given(text=texts)
def test_search_by_fast_path_equals_search_by_parser(make_index, text) -> None:
    index = make_index(
        ["cat dog e mail", "the running cats", "body dog x y", "caf\u00e9 na\u00efve 1 5", "andnot"]
    )
    s = Searcher(index)
    if has_syntax(text) or not index.analyzer.terms(text):
        return
    via_parser = s.search_parsed(parse_with_parser(text, index.analyzer), k=10)
    assert s.search(text, k=10).hits == via_parser.hits


# -- exhaustive scoring equals the kernel, for every variant -----------------------------------

WORDS = ["a", "b", "c", "d", "e", "f", "g"]
corpora = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=9).map(" ".join), min_size=1, max_size=8
)
queries = st.lists(st.sampled_from([*WORDS, "zz"]), min_size=1, max_size=6)


def _same_result(a: SearchResult, b: SearchResult) -> None:
    assert a.hits == b.hits
    assert [h.tie_group for h in a.hits] == [h.tie_group for h in b.hits]
    assert (a.n_matches, a.analysis) == (b.n_matches, b.analysis)


@pytest.mark.slow
@SWEEP
@given(data=st.data(), groups=st.lists(corpora, min_size=1, max_size=3), query=queries)
def test_exhaustive_equals_kernel_for_every_variant(make_segmented, variants, data, groups, query):
    """On random multi-segment corpora with deletions: the same hits (docnos, scores bit for bit,
    contributions, tie groups) and match counts from the pruning kernel, exhaustive scoring and
    the automatic choice, at every depth; and dense scores equal to topk.dense_scores."""
    deleted = [
        data.draw(st.lists(st.integers(0, len(g) - 1), max_size=2, unique=True), label="deleted")
        for g in groups
    ]
    index = make_segmented(groups, deleted)
    parsed = parse_terms(query)
    for key in KEYS:
        if key == "bm25f":  # fields: its own numpy path (bm25f.rank), neither kernel nor exhaustive
            continue
        v = data.draw(variants(key), label=key)
        by = {s: Searcher(index, strategy=s) for s in Searcher.STRATEGIES}
        specs = by["auto"]._weighted(parsed, v, None)
        dense, matched = topk.dense_scores(index, specs)
        mine, mine_matched = impacts.dense(index, specs)
        assert mine.tobytes() == dense.tobytes(), key
        assert (mine_matched == matched).all(), key
        if not specs:
            continue
        for k in sorted({1, 2, 3, index.n_docs, index.n_docs + 2}):
            kernel = by["kernel"].search_terms(query, v, k=k)
            for s in ("exhaustive", "auto"):
                _same_result(by[s].search_terms(query, v, k=k), kernel)
            lean = by["exhaustive"].search_terms(query, v, k=k, contributions=False, count=False)
            assert [(h.docno, h.score) for h in lean.hits] == [
                (h.docno, h.score) for h in kernel.hits
            ]


def test_exhaustive_honours_constraints_and_deletions(make_segmented) -> None:
    index = make_segmented([["a b", "a a c", "b c"], ["a", "c c a", "b"]], [[1], [2]])
    ids = {index.docid(d) for d in range(index.n_slots) if index.is_live(d)}
    for query in ("a c", "+a c", "a -b", '"c a" a', "c"):
        results = [
            Searcher(index, strategy=s).search(query, get_variant("bm25l"), k=10)
            for s in ("kernel", "exhaustive")
        ]
        _same_result(*results)
        assert {h.docid for h in results[0].hits} <= ids


def test_strategy_is_checked(tiny_index: Index) -> None:
    with pytest.raises(ValueError, match="strategy"):
        Searcher(tiny_index, strategy="fastest")


# -- lazy hits ------------------------------------------------------------------------------------


def _eager_hits(index, specs, docnos, scores, next_score):
    """The hits as the searcher built them before they became lazy (its old ``_hits``)."""
    parts = topk.tf_parts(index, specs, docnos)
    groups = tie_groups(scores.tolist(), next_score)
    hits = []
    for i, docno in enumerate(docnos.tolist()):
        contribs = tuple(
            Contribution(
                term, qtf, int(parts[t][0][i]), index.term_stats(term).df, w.idf,
                float(parts[t][1][i]), (qtf * w.idf) * float(parts[t][1][i]),
            )
            for t, (term, qtf, w) in enumerate(specs)
            if parts[t][0][i] > 0
        )  # fmt: skip
        rec = index.doc(docno)
        hits.append(
            Hit(i + 1, docno, rec.docid, float(scores[i]), rec.title, rec.location, rec.length,
                contribs, groups[i])
        )  # fmt: skip
    return tuple(hits)


@pytest.mark.parametrize("strategy", ["kernel", "exhaustive"])
def test_lazy_hits_equal_eager_hits(synth_index: Index, strategy: str) -> None:
    s = Searcher(synth_index, strategy=strategy)
    v = get_variant("okapi")
    for query in ("w1 w7 w300", "w0 w0 w2", "w599 w5", "w3"):
        for k in (1, 10, 200):
            res = s.search(query, v, k=k)
            specs = s._weighted(res.analysis.parsed, v, None)
            full = topk.top_k(synth_index, specs, k + 1, kernel=False)
            nxt = float(full.scores[k]) if full.scores.size > k else None
            eager = _eager_hits(synth_index, specs, full.docnos[:k], full.scores[:k], nxt)
            assert isinstance(res.hits, Hits)
            assert res.hits == eager
            assert eager == tuple(res.hits)
            assert res.has_ties == any(h.tie_group is not None for h in eager)
            lean = s.search(query, v, k=k, contributions=False, count=False).hits
            assert lean.docids() == [h.docid for h in eager]
            assert lean.scores.tolist() == [h.score for h in eager]
            assert [(h.docno, h.score, h.length, h.tie_group) for h in lean] == [
                (h.docno, h.score, h.length, h.tie_group) for h in eager
            ]
            assert all(h.title == "" and h.contributions == () for h in lean)


def test_hits_behave_like_a_tuple(tiny_index: Index) -> None:
    hits = Searcher(tiny_index).search("cat mat dog", k=4).hits
    eager = tuple(hits)
    assert len(hits) == 4
    assert hits[-1] == eager[-1]
    assert hits[1:3] == eager[1:3]
    assert hits[::-1] == eager[::-1]
    assert list(hits) == list(eager)
    assert hits == list(eager)
    assert hits != eager[:3]
    assert hits != "cats"
    assert hits[0] is hits[0]  # built once
    with pytest.raises(IndexError):
        hits[4]
    with pytest.raises(IndexError):
        hits[-5]
    with pytest.raises(TypeError):
        hash(hits)
    with pytest.raises(ValueError, match="read-only"):
        hits.scores[0] = 1.0  # the arrays are read-only
    assert repr(hits) == repr(eager)
    assert Searcher(tiny_index).search("zebra cat", k=3).hits != ()


def test_tie_groups_vectorised_equal_the_rule() -> None:
    rng = np.random.default_rng(7)
    for n, nxt in itertools.product(range(0, 9), (None, 0.0, 1.0, 2.0)):
        for _ in range(20):
            scores = np.sort(rng.integers(0, 4, n).astype(float))[::-1]
            expected: list[int | None] = [None] * n
            for i in range(n):
                run = [j for j in range(n) if scores[j] == scores[i]]
                ties_next = i == n - 1 or scores[n - 1] == scores[i]
                if len(run) > 1 or (ties_next and scores[i] == nxt):
                    expected[i] = run[0] + 1
            assert tie_groups(scores, nxt) == expected
            assert tie_groups(scores.tolist(), nxt) == expected


SYNTAX_PIECES = [
    "a", "AND", "OR", "NOT", "NOTE", "ORB", "xAND", "_OR", "title:", "xtitle:", "+", "-", "+a",
    "-b", "(", ")", '"', " ", "\t", "\n", "\u00a0", "\u2003", "\x1c", "é", "٣", "ǅ", "_", "1",
]  # fmt: skip


@MANY
@given(st.lists(st.sampled_from(SYNTAX_PIECES), max_size=10).map("".join))
def test_has_syntax_is_its_regex(text: str) -> None:
    """has_syntax tries the regex's parts only where their characters are: the same answer."""
    assert has_syntax(text) == (query_module._SYNTAX.search(text) is not None), repr(text)
