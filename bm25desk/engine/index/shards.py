"""Exact statistics of several indexes taken together: searching shards as one collection.

A collection split into shards (indexes built from consecutive parts of it) is ranked exactly as
one merged index when every shard is scored with the statistics of the whole collection — N, the
total length (hence the average length), and each term's df and cf summed over the shards, which
is what Elasticsearch's ``dfs_query_then_fetch`` sums per query. :class:`GlobalStatistics` gives a
:class:`~bm25desk.engine.scoring.search.Searcher` those sums (``Searcher(shard, statistics=…)``);
each shard's top k, merged by score and then by shard order and docno, is the merged index's top
k, score for score (``docs/scale.md``). A term's postings, which BM25Adpt's fit reads, are the
shards' postings in order; Okapi's ε floor reads the dfs of the union vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bm25desk.engine.index.lexicon import sort_terms
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.stats import CollectionStats, FloatArray, IntArray, TermStats

__all__ = ["GlobalStatistics"]


class GlobalStatistics:
    """The statistics of ``shards`` taken together, in order (a :class:`Statistics` provider).

    Parameters
    ----------
    shards
        The open indexes, in the order their documents would have in a merged index.

    Raises
    ------
    ValueError
        When there is no shard, or two shards were analysed differently (another analyser, or
        other nltk or whoosh versions behind it): their terms would not be one vocabulary.
    """

    def __init__(self, shards: Sequence[Index]) -> None:
        if not shards:
            raise ValueError("give at least one shard")
        self.shards = tuple(shards)
        first = self.shards[0].manifest.get("analyzer")
        for i, shard in enumerate(self.shards[1:], start=1):
            if shard.manifest.get("analyzer") != first:
                raise ValueError(f"shard {i} was analysed differently from shard 0")
        n_docs = sum(s.n_docs for s in self.shards)
        total = sum(s.total_len for s in self.shards)
        self._union: tuple[list[str], IntArray] | None = None
        self.stats = CollectionStats(
            n_docs, total / n_docs if n_docs else 0.0, len(self._vocabulary()[0]), self._df_all
        )

    def term_stats(self, term: str) -> TermStats | None:
        """Return ``term``'s df and cf summed over the shards, and its postings in shard order."""
        parts = [(s, t) for s in self.shards if (t := s.term_stats(term)) is not None]
        if not parts:
            return None

        def postings() -> tuple[FloatArray, FloatArray]:
            pairs = [t.postings() for _, t in parts]
            return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])

        df = sum(t.df for _, t in parts)
        cf = sum(t.cf for _, t in parts)
        return TermStats(term, df, cf, postings)

    def _vocabulary(self) -> tuple[list[str], IntArray]:
        """Return the union vocabulary in lexicon order (UTF-8 bytes) and its summed dfs."""
        if self._union is None:
            dfs: dict[str, int] = {}
            for shard in self.shards:
                # Both in the shard's lexicon order, restricted to terms with a live document.
                terms, df = shard.vocabulary(), shard.stats.df_all()
                for term, n in zip(terms, df.tolist(), strict=True):
                    dfs[term] = dfs.get(term, 0) + n
            union = list(dfs)
            order = sort_terms(union).tolist()
            terms = [union[i] for i in order]
            self._union = terms, np.array([dfs[t] for t in terms], dtype=np.int64)
        return self._union

    def _df_all(self) -> IntArray:
        """Return the df of every term of the union vocabulary, in lexicon order."""
        return self._vocabulary()[1]
