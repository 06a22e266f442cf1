"""The single query's fixed costs: its analysis, its new terms' weightings, its hits' arrays.

Each shortcut of the per-query path is compared with the plain computation it replaces: the
query analysis with one made with ``_replace`` (random queries: punctuation, unicode,
CJK, stop words, unknown words, syntax), the idfs computed a chunk of dfs at a time with
``Variant.weigh`` bit for bit (every variant weighed by df, small and large collections), the bag
of words' counts with a ``Counter``.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.stats import CollectionStats, TermStats
from bm25desk.engine.scoring import by_df
from bm25desk.engine.scoring.hits import Hits
from bm25desk.engine.scoring.query import ParsedQuery, parse_bag, parse_query, parse_terms
from bm25desk.engine.scoring.results import QueryAnalysis
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variant import Variant
from bm25desk.engine.scoring.variants import all_variants, get_variant

WORDS = [
    "the", "of", "and", "library", "libraries", "information", "retrieval", "index",
    "zzqx", "nosuchword", "ünïcödé", "東京", "日本語", "naïve", "e-mail", "c++", "state-of-the-art",
    "what's", "5-3", "x:y", "AND", "OR", "NOT", "+science", "-the", '"information retrieval"',
    "title:library", "(cat", "dog)", "...", "—", "a", "I", "Library", "LIBRARY",
]  # fmt: skip


def _reference_analysis(searcher: Searcher, parsed: ParsedQuery) -> QueryAnalysis:
    """The analysis as the searcher made it before (each term looked up, tokens replaced)."""
    missing = {
        t
        for t in {tok.term for tok in parsed.tokens}
        if t is not None and searcher.index.term_id(t) < 0
    }
    tokens = parsed.tokens
    unknown: list[str] = []
    if missing:
        tokens = tuple(
            tok._replace(status="unknown") if tok.term in missing else tok for tok in tokens
        )
        unknown = [tok.term for tok in tokens if tok.term in missing]  # type: ignore[misc]
    stopped = [t.surface for t in parsed.tokens if t.status == "stop"]
    return QueryAnalysis(
        parsed, tokens, tuple(dict.fromkeys(unknown)), tuple(dict.fromkeys(stopped))
    )


def _random_queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    seps = [" ", "  ", ", ", "; ", "\t", "!", "?"]
    out = []
    for _ in range(n):
        words = rng.choices(WORDS, k=rng.randint(0, 9))
        out.append("".join(w + rng.choice(seps) for w in words).strip())
    return out


STOP = frozenset({"the", "of", "and", "a", "i"})


@pytest.mark.parametrize(
    ("tokenizer", "stop", "stemmer"),
    [("word", frozenset(), "none"), ("word", STOP, "porter"), ("cjk", STOP, "none")],
)
def test_analysis_equals_the_plain_one_on_random_queries(
    make_index, tokenizer: str, stop: frozenset[str], stemmer: str
) -> None:
    analyzer = Analyzer(tokenizer=tokenizer, stopwords=stop, stoplist_name="test", stemmer=stemmer)
    index = make_index(
        [
            "The library of information retrieval.",
            "Libraries index information; 東京 and 日本語.",
            "A naïve e-mail about state-of-the-art c++.",
        ],
        analyzer=analyzer,
    )
    searcher = Searcher(index)
    for query in _random_queries(300, seed=len(stop) + len(tokenizer)):
        for syntax in (False, True):
            parsed = searcher.parse(query, syntax=syntax)
            want = _reference_analysis(searcher, parsed)
            got = searcher.analyze(parsed)
            assert got == want, (query, syntax)
            assert [t.status for t in got.tokens] == [t.status for t in want.tokens]


def test_an_unknown_token_is_shared_and_equal_to_a_replaced_one(tiny_index: Index) -> None:
    searcher = Searcher(tiny_index)
    a = searcher.analyze("nosuchword nosuchword fox", syntax=False)
    b = searcher.analyze("nosuchword", syntax=False)
    assert a.unknown == ("nosuchword",)
    assert b.unknown == ("nosuchword",)
    assert a.tokens[0] is a.tokens[1] is b.tokens[0]  # made once
    assert a.tokens[0] == a.parsed.tokens[0]._replace(status="unknown")
    assert a.tokens[2].status == "ok"


def test_analysis_of_a_hand_made_parsed_query(tiny_index: Index) -> None:
    # A ParsedQuery built by a caller may have tokens that are not scored terms.
    parsed = parse_terms(["fox"])._replace(tokens=parse_terms(["fox", "zzz"]).tokens)
    searcher = Searcher(tiny_index)
    assert searcher.analyze(parsed) == _reference_analysis(searcher, parsed)


def test_bag_of_words_counts_equal_a_counter() -> None:
    analyzer = Analyzer(stopwords=STOP, stoplist_name="test")
    for query in _random_queries(300, seed=7):
        parsed = parse_bag(query, analyzer)
        fates = analyzer.query_fates(query)
        want = Counter([f[1] for f in fates if f[1] is not None])
        assert parsed.scored == tuple(want.items()), query
        assert parse_query(query, analyzer, syntax=False) == parsed


def _by_df_variants() -> list[Variant]:
    """Every registered variant the searcher weighs by df (bm25f and BM25Adpt have own paths)."""
    return [v for v in all_variants() if v.key != "bm25f" and type(v).weigh is Variant.weigh]


def _no_postings() -> tuple[np.ndarray, np.ndarray]:
    raise AssertionError("not read")


@pytest.mark.parametrize("n_docs", [1, 2, 7, 255, 256, 257, 1460, 65536, 65537, 1_000_000])
def test_idfs_computed_together_equal_weigh(n_docs: int) -> None:
    stats = CollectionStats(n_docs, 12.5, n_docs * 12, lambda: np.zeros(0))
    rng = np.random.default_rng(n_docs)
    top = min(n_docs, by_df.IDF_RANGE)
    edges = {1, 255, 256, 257, 512, top, top + 1, n_docs}
    dfs = sorted(d for d in {*edges, *rng.integers(1, n_docs + 1, 60).tolist()} if d <= n_docs)
    assert _by_df_variants()
    for v in _by_df_variants():
        chunks: dict[int, np.ndarray] = {}
        got = by_df.weigh_dfs(v, stats, dfs, chunks)
        assert list(got) == dfs
        assert all(c * by_df.IDF_CHUNK < top for c in chunks)
        again = by_df.weigh_dfs(v, stats, dfs[::-1], chunks)  # from the kept chunks
        for df in dfs:
            want = v.weigh(TermStats("", df, 0, _no_postings), stats)
            for w in (got[df], again[df]):
                assert np.float64(w.idf).tobytes() == np.float64(want.idf).tobytes(), (v.key, df)
                assert type(w.idf) is float
                assert (w.idf_text, w.k1, w.notes, w.variant, w.stats) == (
                    want.idf_text,
                    want.k1,
                    want.notes,
                    want.variant,
                    want.stats,
                )


def test_every_df_of_a_collection_weighs_as_alone(cisi_index: Index) -> None:
    """Every df of CISI (all within the range) through a search's path, against weigh."""
    dfs = sorted({cisi_index.term_df(t) for t in cisi_index.vocabulary()})
    stats = cisi_index.stats
    for v in _by_df_variants():
        got = by_df.weigh_dfs(v, stats, dfs, {})
        for df in dfs:
            want = v.weigh(TermStats("", df, 0, _no_postings), stats)
            assert np.float64(got[df].idf).tobytes() == np.float64(want.idf).tobytes()


def test_rankings_with_and_without_the_idf_range(
    cisi_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = ["library", "information", "retrieval", "the", "of", "classification", "index"]
    for v in [get_variant("lucene"), get_variant("okapi"), get_variant("tfidf"), *all_variants()]:
        if v.key == "bm25f":
            continue
        with_range = Searcher(cisi_index).search(" ".join(words), v, 20)
        monkeypatch.setattr(by_df, "IDF_RANGE", 0)
        without = Searcher(cisi_index).search(" ".join(words), v, 20)
        monkeypatch.undo()
        assert with_range.hits.docnos.tolist() == without.hits.docnos.tolist()
        assert with_range.hits.scores.tobytes() == without.hits.scores.tobytes()
        assert [c.idf for c in with_range.hits[0].contributions] == [
            c.idf for c in without.hits[0].contributions
        ]


def test_hits_arrays_are_read_only_and_leave_the_callers_alone(tiny_index: Index) -> None:
    docnos = np.array([0, 1], dtype=np.int64)
    scores = np.array([2.0, 1.0])
    hits = Hits(tiny_index, docnos, scores)
    assert not hits.docnos.flags.writeable
    assert not hits.scores.flags.writeable
    assert docnos.flags.writeable
    assert scores.flags.writeable
    frozen = np.frombuffer(np.array([0, 1], dtype=np.int64).tobytes(), dtype=np.int64)
    assert Hits(tiny_index, frozen, hits.scores).docnos is frozen  # already read-only: as is
    with pytest.raises(ValueError, match="read-only"):
        hits.docnos[0] = 5


def test_top_k_without_rows_ranks_the_same(cisi_index: Index) -> None:
    from bm25desk.engine.scoring import topk

    searcher = Searcher(cisi_index)
    for v in (get_variant("lucene"), get_variant("bm25plus"), get_variant("tfidf")):
        for query in ("library information retrieval", "classification of the index", "zzz"):
            parsed = searcher.parse(query, syntax=False)
            terms = searcher._weighted(parsed, v, None)
            if not terms:
                continue
            for k in (1, 10, 2000):
                a = topk.top_k(cisi_index, terms, k)
                b = topk.top_k(cisi_index, terms, k, rows=False)
                assert a.docnos.tolist() == b.docnos.tolist()
                assert a.scores.tobytes() == b.scores.tobytes()
                assert b.tfs.shape == a.tfs.shape
            full = searcher.search(query, v, 10, syntax=False)
            bare = searcher.search(query, v, 10, syntax=False, contributions=False)
            assert full.hits.docnos.tolist() == bare.hits.docnos.tolist()
            assert full.hits.scores.tobytes() == bare.hits.scores.tobytes()
            assert all(h.contributions for h in full.hits)
            assert all(h.contributions == () for h in bare.hits)


def test_rankings_without_rows_share_read_only_zeros_within_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Zero tfs and parts are kept by shape, read-only, and no more bytes than the bound."""
    from bm25desk.engine.scoring import topk

    monkeypatch.setattr(topk, "_ZEROS", {})
    monkeypatch.setattr(topk, "_zeros_kept", 0)
    monkeypatch.setattr(topk, "ZEROS_BYTES", 11 * 3 * 12)  # one 11 × 3 shape
    tfs, parts = topk._zeros(11, 3)
    assert tfs.shape == parts.shape == (11, 3)
    assert not tfs.any()
    assert not parts.any()
    assert (tfs.dtype, parts.dtype) == (np.int32, np.float64)
    assert not tfs.flags.writeable
    assert not parts.flags.writeable
    assert topk._zeros(11, 3)[0] is tfs  # kept
    other = topk._zeros(11, 4)  # over the bound: made, not kept
    assert other[0].shape == (11, 4)
    assert topk._zeros(11, 4)[0] is not other[0]
    assert topk._zeros_kept == 11 * 3 * 12
