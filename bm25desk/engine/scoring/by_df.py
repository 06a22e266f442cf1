"""A variant that weighs by df alone gives terms of the same df the same weighting.

So a search keeps its weightings by df (``Searcher._by_df``): a query's new term costs a df
look-up, and its weighting comes from idfs computed :data:`IDF_CHUNK` at a time
(:meth:`Variant.weigh`'s numbers bit for bit). :func:`remember_weighing` puts each new term's
weighting in the search's weight table and its df in the search's memo, making the weighting of
a df met for the first time as a copy of the variant's :func:`prototype` with its idf, in one
compiled call when the kernel is there (``_topk_src/weights.c``), else here, term by term; only a
df whose chunk of idfs is not computed yet goes through :func:`weigh_dfs` first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bm25desk.engine.index.arrays import F64
from bm25desk.engine.index.stats import CollectionStats, TermStats
from bm25desk.engine.scoring.topk import _topk
from bm25desk.engine.scoring.variant import TermWeight, Variant

IDF_RANGE = 65536
"""Dfs up to this (and N) are weighed from idfs computed :data:`IDF_CHUNK` at a time."""

IDF_CHUNK = 256
"""Consecutive dfs whose idfs one vectorised call computes when the first of them is met: a
query's new rare term then usually costs no numpy call of its own (a call costs ~10 µs whatever
its length up to a few hundred). At most 2 KB per chunk, 512 KB per variant."""


def idf_chunk(variant: Variant, stats: CollectionStats, c: int) -> Any:
    """Return the idfs of dfs ``c·IDF_CHUNK + 1`` ... (at most N) under ``variant``.

    The idf of an element of a float64 array does not depend on the other elements (what
    :meth:`Variant.weigh_many` rests on, tested for every variant), so each is
    :meth:`Variant.weigh`'s number for that df, bit for bit.
    """
    lo = c * IDF_CHUNK + 1
    hi = min(lo + IDF_CHUNK - 1, int(stats.n_docs))
    dfs = np.arange(lo, hi + 1, dtype=np.float64)
    return np.asarray(variant.idf(dfs, stats), dtype=np.float64)


def weigh_dfs(
    variant: Variant, stats: CollectionStats, dfs: list[int], chunks: dict[int, Any]
) -> dict[int, TermWeight]:
    """Return the weightings of ``dfs`` (positive) under a variant that weighs by df alone.

    ``chunks`` (chunk number -> its idfs, a list of floats) is the variant's, filled here as
    needed; dfs above :data:`IDF_RANGE` or N are weighed by :meth:`Variant.weigh_many` as before.
    """
    out: dict[int, TermWeight] = {}
    rest = []
    with_text_later = TermWeight.with_text_later
    top = min(IDF_RANGE, int(stats.n_docs))
    for df in dfs:
        if df > top:
            rest.append(df)
            continue
        c = (df - 1) // IDF_CHUNK
        idfs = chunks.get(c)  # read once: another search may be filling it
        if idfs is None:  # kept as floats: reading one is a list index, not a numpy scalar
            idfs = chunks[c] = idf_chunk(variant, stats, c).tolist()
        out[df] = with_text_later(variant, stats, idfs[df - 1 - c * IDF_CHUNK], df)
    if rest:
        fresh = [TermStats("", df, 0, no_postings) for df in rest]
        out.update(zip(rest, variant.weigh_many(fresh, stats), strict=True))
    return out


def no_postings() -> tuple[F64, F64]:
    """Refuse: a :class:`TermStats` made for its df alone has no postings (none are asked)."""
    raise AssertionError("a variant weighed by df asked for postings")


_NONE: Any = object()


def prototype(variant: Variant, stats: CollectionStats) -> TermWeight:
    """Return the weighting every new df's copies (:func:`remember_weighing_python`)."""
    return TermWeight.with_text_later(variant, stats, 0.0, 0)


def remember_weighing_python(
    terms: list[str],
    dfs: list[int],
    by_df: dict[int, TermWeight],
    table: dict[str, TermWeight | None],
    memo: dict[str, int],
    chunks: dict[int, Any],
    size: int,
    top: int,
    proto: TermWeight | None,
) -> list[int]:
    """Return the dfs (> 0, distinct, in order) no weighting was found or made for.

    When there are none, each term's weighting (its df's; None for df 0: in no document) is put
    in ``table``, and its df in ``memo`` (df > 0); else nothing is written there. A df (up to
    ``top``) that ``by_df`` lacks, whose chunk of ``size`` idfs is in ``chunks`` (see
    :func:`weigh_dfs`), gets ``proto``'s weighting with that idf and df
    (:meth:`TermWeight.with_text_later`'s, bit for bit), kept in ``by_df`` (None: none is made).
    So a query's new terms usually cost this one call, compiled when the kernel is there.
    """
    weights: list[TermWeight | None] = []
    missing: dict[int, None] = {}
    for df in dfs:
        w = None
        if df > 0:
            w = by_df.get(df)
            if w is None and proto is not None and df <= top:
                c = (df - 1) // size
                idfs = chunks.get(c)
                at = df - 1 - c * size
                if idfs is not None and at < len(idfs):
                    w = TermWeight.with_text_later(proto.variant, proto.stats, idfs[at], df)
                    by_df[df] = w
            if w is None:
                missing[df] = None
        weights.append(w)
    if missing:
        return list(missing)
    for term, df, w in zip(terms, dfs, weights, strict=True):
        table[term] = w
        if w is not None:
            memo[term] = df
    return []


remember_weighing: Callable[..., list[int]] = (
    getattr(_topk, "remember_weighing", None) or remember_weighing_python
)
"""What a search calls for a query's new terms (see :func:`remember_weighing_python`)."""


def weighed_python(
    scored: Sequence[tuple[str, int]],
    table: dict[str, TermWeight | None],
    dfs: dict[str, int],
) -> list[str] | tuple[list[tuple[str, int, TermWeight]], list[str], int]:
    """Return a query's scored terms with their weightings from ``table``, or what it lacks.

    The terms of ``scored`` (term, qtf) that ``table`` has no entry for, as a list, when there
    are some (nothing else is made); else (term, qtf, weighting) of each weighed term in query
    order, the terms weighed None (in no document), and the sum of the weighed terms' dfs in
    ``dfs`` (0 for a term it lacks): what the ranking reads (``impacts.prefer``).
    """
    missing = [term for term, _ in scored if term not in table]
    if missing:
        return missing
    out = []
    unknown = []
    postings = 0
    for term, qtf in scored:
        w = table.get(term, _NONE)
        if w is _NONE:  # (another search cleared the bounded table meanwhile: weigh again)
            return [t for t, _ in scored if t not in table]
        if w is None:
            unknown.append(term)
        else:
            out.append((term, qtf, w))
            postings += dfs.get(term, 0)
    return out, unknown, postings


weighed: Callable[..., Any] = getattr(_topk, "weighed", None) or weighed_python
"""What a search calls for every query (see :func:`weighed_python`): compiled when it can be."""
