"""A term's first use: weightings shared by df equal Variant.weigh's, bit for bit."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.stats import CollectionStats
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import all_variants, get_variant


def _same_df_terms(index: Index) -> list[list[str]]:
    """Return groups of vocabulary terms sharing a df (a few dfs, rare to frequent)."""
    by_df: dict[int, list[str]] = defaultdict(list)
    for term in index.vocabulary():
        by_df[index.term_df(term)].append(term)
    groups = [g for _, g in sorted(by_df.items()) if len(g) >= 3]
    return [g[:3] for g in groups[:: max(1, len(groups) // 6)]]


def test_terms_of_one_df_are_weighed_as_each_alone(cisi_index: Index) -> None:
    groups = _same_df_terms(cisi_index)
    assert len(groups) >= 4
    first = [g[0] for g in groups]  # weighed by a first query; the others then share them
    later = [t for g in groups for t in g[1:]] + ["nosuchword"]
    for v in all_variants():
        if v.key == "bm25f":  # fields: weighed by its own path, term by term
            continue
        searcher = Searcher(cisi_index)
        searcher._weighted(parse_terms(first), v, None)
        got = searcher._weighted(parse_terms(later), v, None)
        assert [t for t, _, _ in got] == later[:-1]
        for term, _qtf, w in got:
            stats = cisi_index.term_stats(term)
            assert stats is not None
            want = v.weigh(stats, cisi_index.stats)
            assert np.float64(w.idf).tobytes() == np.float64(want.idf).tobytes(), (v, term)
            assert (w.idf_text, w.k1, w.notes) == (want.idf_text, want.k1, want.notes)
            assert searcher._dfs[term] == stats.df
        # Rankings too: the later query alone, from a fresh searcher, ranks the same.
        query = " ".join(later)
        a = searcher.search(query, v, 10, syntax=False)
        b = Searcher(cisi_index).search(query, v, 10, syntax=False)
        assert a.hits.docnos.tolist() == b.hits.docnos.tolist()
        assert a.hits.scores.tobytes() == b.hits.scores.tobytes()


def test_weightings_by_df_are_kept_per_collection_statistics(cisi_index: Index) -> None:
    searcher = Searcher(cisi_index)
    v = get_variant("lucene")
    mine = searcher._by_df(v, cisi_index.stats)
    assert searcher._by_df(v, cisi_index.stats) is mine
    other = CollectionStats(cisi_index.n_docs + 1, cisi_index.avgdl, 10, lambda: np.zeros(0))
    assert searcher._by_df(v, other) is not mine  # other statistics: other weightings
    assert searcher._by_df(get_variant("lucene", k1=1.5), cisi_index.stats) is not mine


def test_weightings_stay_right_when_their_caches_fill(cisi_index: Index) -> None:
    groups = _same_df_terms(cisi_index)
    v = get_variant("lucene")
    searcher = Searcher(cisi_index)
    searcher.CACHE_SIZE = 3  # both caches (by term, by df) are cleared again and again
    for group in groups * 2:
        for term, _qtf, w in searcher._weighted(parse_terms([*group, groups[0][0]]), v, None):
            stats = cisi_index.term_stats(term)
            assert stats is not None
            assert w.idf_text == v.weigh(stats, cisi_index.stats).idf_text
            assert (
                np.float64(w.idf).tobytes()
                == np.float64(v.weigh(stats, cisi_index.stats).idf).tobytes()
            )
        assert len(searcher._by_df(v, cisi_index.stats)) <= 3 + len(group) + 1


def test_only_variants_weighing_by_df_alone_take_the_by_df_path() -> None:
    """BM25Adpt fits k1 per term and BM25F counts dfs over fields: neither is weighed by df."""
    from bm25desk.engine.scoring.search import _weighs_by_df

    for v in all_variants():
        want = v.key not in ("bm25adpt", "bm25f")
        assert _weighs_by_df(v) is want, v.key
        assert _weighs_by_df(v) is want, v.key  # (the memo's answer too)
