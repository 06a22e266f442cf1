"""Shared oracle helpers of the exhaustive-path tests (the decoded-postings cache, the windows)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st

from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import postings_cache, topk
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import Variant


def reference(
    searcher: Searcher, query: Sequence[str], variant: Variant, k: int, allowed: object = None
) -> tuple[list[int], list[int], int]:
    """Return the dense ranking's docnos, scores (as int64 bits) and match count."""
    scores, ok = searcher.scores(parse_terms(list(query)), variant)
    if allowed is not None:
        ok = ok & allowed
    cand = np.flatnonzero(ok)
    order = np.lexsort((cand, -scores[cand]))[:k]
    return cand[order].tolist(), scores[cand][order].view(np.int64).tolist(), int(cand.size)


def specs(searcher: Searcher, query: Sequence[str], variant: Variant) -> list[topk.TermSpec]:
    """Return the weighted distinct terms of ``query``, as search.py hands them to topk."""
    out = []
    for term, qtf in parse_terms(list(query)).scored:
        w = searcher.weight(term, variant)
        if w is not None:
            out.append((term, qtf, w))
    return out


def cache_of(index: Index) -> postings_cache.PartsCache:
    """Return the index's cache of decoded postings."""
    cache = topk._state(index).parts
    assert cache is not None
    return cache


def draw_mask(data: st.DataObject, n: int) -> np.ndarray | None:
    """Draw no mask (None) or an allowed-documents mask of ``n`` booleans."""
    if not data.draw(st.booleans()):
        return None
    return np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)


def damaged(arrays: tuple[object, ...], rng: np.random.Generator) -> tuple[object, ...]:
    """Return a segment's kernel arrays with one bit flipped in one of its blocks' bytes."""
    out = list(arrays)
    stream = np.array(arrays[0], copy=True)
    lo, hi = int(np.min(arrays[1])), int(np.max(arrays[1]))  # type: ignore[call-overload]
    j = int(rng.integers(lo, max(lo + 1, hi)))
    stream[j] ^= np.uint8(1 << int(rng.integers(0, 8)))
    out[0] = stream
    return tuple(out)
