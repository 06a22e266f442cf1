"""The single query's fixed costs, round 8: each shortcut against the computation it replaces.

- the bag of words' tokens, kept per analyser and surface word (``Analyzer.surface_memo``),
  against tokens made from :meth:`Analyzer.analyze` (random text: punctuation, unicode, CJK,
  operator-looking words, case), for every tokenizer and with stop words, stemming, a minimum
  length and case kept; also once the memo is full;
- the weightings of a query whose terms were all weighed before (one dict read per term),
  against those of the same query weighed afresh, under every variant;
- the exhaustive path's inline cache read, against the dense ranking, warm and cold, with
  BM25Adpt's per-term tables;
- the index searched last, remembered without keeping its state alive;
- a bag-of-words search, its analysis read off its weightings, against the parsed path (random
  queries, with and without syntax, every variant, contributions and counts or not).
"""

from __future__ import annotations

import gc
import random
import re
import weakref
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis import analyzer as analyzer_module
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.query import ParsedQuery, QueryToken, parse_bag, parse_query
from bm25desk.engine.scoring.results import SearchResult
from bm25desk.engine.scoring.search import QueryError, Searcher
from bm25desk.engine.scoring.variants import all_variants, get_variant

PIECES = [
    "the", "The", "THE", "of", "library", "Libraries", "information", "retrieval", "zzqx",
    "ünïcödé", "東京", "日本語", "naïve", "e-mail", "c++", "state-of-the-art", "what's", "5-3",
    "x:y", "AND", "OR", "NOT", "+science", "-the", '"a phrase"', "title:library", "(cat", "dog)",
    "...", "—", "a", "I", "ß", "İstanbul", "x_y", "١٢٣", "\u00a0", "a\u0301",
]  # fmt: skip
SEPARATORS = [" ", "  ", ", ", "; ", "\t", "!", "?", "\n", ""]
texts = st.one_of(
    st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=10).map(
        lambda parts: "".join(w + s for w, s in parts)
    ),
    st.text(max_size=40),
)
ANALYZERS = [
    Analyzer(),
    Analyzer(stopwords=frozenset({"the", "of", "a", "i"}), stoplist_name="t", stemmer="porter"),
    Analyzer(tokenizer="whitespace", lowercase=False),
    Analyzer(tokenizer="cjk", min_length=2),
    Analyzer(tokenizer="treebank", stemmer="snowball", language="en"),
    Analyzer(lowercase=False, stopwords=frozenset({"the"}), stoplist_name="t", min_length=3),
]
SWEEP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reference_bag(text: str, analyzer: Analyzer) -> ParsedQuery:
    """The bag of words made from the analyser's full analysis (offsets and all)."""
    tokens = [Token(t.surface, t.term, t.status) for t in analyzer.analyze(text)]
    counts = Counter(t.term for t in tokens if t.term is not None)
    return ParsedQuery(
        text,
        tuple(QueryToken(t.surface, t.term, t.status, "optional") for t in tokens),
        tuple(counts.items()),
    )


class Token:
    """What the reference keeps of an analysed token."""

    def __init__(self, surface: str, term: str | None, status: str) -> None:
        self.surface, self.term, self.status = surface, term, status


@pytest.mark.parametrize("which", range(len(ANALYZERS)))
@SWEEP
@given(text=texts)
def test_the_bag_of_words_equals_the_full_analysis(which: int, text: str) -> None:
    analyzer = ANALYZERS[which]
    want = _reference_bag(text, analyzer)
    for _ in range(2):  # new words, then every word from the memo
        got = parse_bag(text, analyzer)
        assert got == want
        assert parse_query(text, analyzer, syntax=False) == want
        assert [t.status for t in got.tokens] == [t.status for t in want.tokens]
    assert analyzer.query_fates(text) == [(t.surface, t.term, t.status) for t in want.tokens]


def test_a_surface_word_is_one_shared_token_per_analyser() -> None:
    lower, kept = Analyzer(), Analyzer(lowercase=False)
    a = parse_bag("Library library Library", lower)
    b = parse_bag("Library", lower)
    assert a.tokens[0] is a.tokens[2] is b.tokens[0]
    assert a.scored == (("library", 3),)
    # Another analyser's memo is its own: the same surface word can become another term.
    c = parse_bag("Library", kept)
    assert c.tokens[0].term == "Library"
    assert lower.surface_memo["Library"].term == "library"
    assert kept.surface_memo["Library"].term == "Library"


def test_a_full_memo_still_gives_every_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from bm25desk.engine.scoring import query as query_module

    monkeypatch.setattr(query_module, "SURFACE_MEMO", 2)
    monkeypatch.setattr(analyzer_module, "SURFACE_MEMO", 2)
    analyzer = Analyzer(stopwords=frozenset({"the"}), stoplist_name="t")
    text = "the cat sat on the mat with the other cat"
    want = _reference_bag(text, analyzer)
    for _ in range(3):
        assert parse_bag(text, analyzer) == want
    assert len(analyzer.surface_memo) == 2


def test_warm_weightings_equal_fresh_ones(cisi_index: Index) -> None:
    query = "library information the retrieval zzqx library classification of"
    for variant in [get_variant("lucene"), *all_variants()]:
        warm = Searcher(cisi_index)
        parsed = warm.parse(query)
        first = warm._weighted(parsed, variant, None)
        again = warm._weighted(parsed, variant, None)  # every term from the table
        fresh = Searcher(cisi_index)._weighted(parsed, variant, None)
        assert [t for t, _, _ in first] == [t for t, _, _ in again] == [t for t, _, _ in fresh]
        assert "zzqx" not in [t for t, _, _ in again]
        assert [(q, w) for _, q, w in first] == [(q, w) for _, q, w in again]
        for (_, _, w), (_, _, f) in zip(again, fresh, strict=True):
            assert np.float64(w.idf).tobytes() == np.float64(f.idf).tobytes()
            assert (w.k1, w.idf_text) == (f.k1, f.idf_text)
        ranked = warm.search(query, variant, 15, contributions=False, count=False)
        alone = Searcher(cisi_index).search(query, variant, 15, contributions=False, count=False)
        assert ranked.hits.docnos.tolist() == alone.hits.docnos.tolist()
        assert ranked.hits.scores.tobytes() == alone.hits.scores.tobytes()


@pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")
@pytest.mark.parametrize("key", ["lucene", "bm25adpt", "okapi"])
def test_exhaustive_rankings_warm_and_cold_equal_the_dense_one(cisi_index: Index, key: str) -> None:
    variant = get_variant(key)
    queries = [
        "library information retrieval",
        "the of and library",
        "classification retrieval the index zzqx",
        "library information retrieval",  # every list from the cache
    ]
    searcher = Searcher(cisi_index, strategy="exhaustive")
    dense = Searcher(cisi_index)
    for query in queries * 2:
        parsed = searcher.parse(query)
        got = searcher.search(query, variant, 20, contributions=False, count=True)
        scores, matched = dense.scores(parsed, variant)
        order = np.lexsort((np.arange(scores.size), -scores))
        order = order[matched[order]][:20]
        assert got.hits.docnos.tolist() == order.tolist()
        assert got.hits.scores.tobytes() == scores[order].tobytes()
        assert got.n_matches == int(matched.sum())


def test_the_last_index_is_remembered_without_keeping_its_state(make_index) -> None:
    first = make_index(["a b", "b c"])
    second = make_index(["c d", "d e", "e"])
    a, b = topk._state(first), topk._state(second)
    assert a is not b
    for _ in range(3):  # alternating: each index gets its own state back
        assert topk._state(first) is a
        assert topk._state(second) is b
    gone = weakref.ref(b)
    del b, second
    gc.collect()
    assert gone() is None  # the remembered pair held neither the index nor its state
    third = make_index(["f"])
    assert topk._state(third) is not a
    assert topk._state(first) is a


QUERY_WORDS = [
    "library", "libraries", "information", "retrieval", "the", "of", "and", "a", "zzqx",
    "nosuchword", "classification", "ünïcödé", "東京", "e-mail", "c++", "AND", "NOT", "+index",
    "-the", '"information retrieval"', "title:library", "(cat", "...", "Library",
]  # fmt: skip


def _queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = ["", "the of", "zzqx", "-library", "library library LIBRARY"]
    for _ in range(n):
        words = rng.choices(QUERY_WORDS, k=rng.randint(1, 8))
        out.append(" ".join(words))
    return out


def _same_result(got: SearchResult, want: SearchResult) -> None:
    assert got.query == want.query
    assert got.analysis == want.analysis
    assert [t.status for t in got.analysis.tokens] == [t.status for t in want.analysis.tokens]
    assert got.hits.docnos.tolist() == want.hits.docnos.tolist()  # type: ignore[attr-defined]
    assert got.hits.scores.tobytes() == want.hits.scores.tobytes()  # type: ignore[attr-defined]
    assert (got.n_matches, got.n_docs, got.avgdl, got.feedback) == (
        want.n_matches, want.n_docs, want.avgdl, want.feedback,
    )  # fmt: skip
    assert got.variant == want.variant
    if len(want.hits):
        assert got.hits[0] == want.hits[0]


@pytest.mark.parametrize("key", [v.key for v in all_variants()])
def test_a_bag_of_words_search_equals_the_parsed_one(
    make_index, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    analyzer = Analyzer(stopwords=frozenset({"the", "of", "and", "a"}), stoplist_name="t")
    index = make_index(
        [
            "The library of information retrieval.",
            "Libraries: classification and information; 東京.",
            "An e-mail about c++ retrieval, retrieval and retrieval.",
            "library",
            "",
        ],
        analyzer=analyzer,
        titles=["Library", "", "Mail", "", ""],
    )
    variant = get_variant(key)
    fast, slow = Searcher(index), Searcher(index)
    taken = []
    bag = Searcher._search_bag
    monkeypatch.setattr(
        Searcher, "_search_bag", lambda self, *a: taken.append(a[0]) or bag(self, *a)
    )
    for query in _queries(60, seed=len(key)):
        for syntax in (False, True):
            for contributions, count in ((False, False), (True, True)):
                options = {"syntax": syntax, "contributions": contributions, "count": count}
                parsed = slow.parse(query, syntax=syntax)
                try:
                    want = slow.search_parsed(
                        parsed, variant, 3, contributions=contributions, count=count
                    )
                except QueryError as exc:
                    with pytest.raises(QueryError, match=re.escape(str(exc))):
                        fast.search(query, variant, 3, **options)  # type: ignore[arg-type]
                    continue
                before = len(taken)
                _same_result(fast.search(query, variant, 3, **options), want)  # type: ignore[arg-type]
                # The bag-of-words path is taken exactly for the queries without syntax.
                assert (len(taken) > before) == (key != "bm25f" and not parsed.syntax)
    with pytest.raises(QueryError, match="k must be at least 1"):
        fast.search("library", variant, 0)
    assert taken or key == "bm25f"
