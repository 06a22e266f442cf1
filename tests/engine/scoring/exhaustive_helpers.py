"""Shared oracle helpers of the exhaustive-path tests (the decoded-postings cache, the windows)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import postings_cache, topk
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import Variant, variant_classes

# The sweeps' material: corpora where w0 is in most documents (a query with it is dense) and the
# other words thin out, queries that always have w0, every variant the kernel takes.
KERNEL_KEYS = [c.key for c in variant_classes() if c.key != "bm25f"]
WORDS = [f"w{i}" for i in range(40)]
word = st.integers(0, 39).map(lambda i: WORDS[min(i, (i * i) // 40)])
corpora = st.lists(st.lists(word, min_size=0, max_size=14).map(" ".join), min_size=1, max_size=150)
queries = st.lists(st.sampled_from([*WORDS, "zz"]), min_size=0, max_size=8).map(
    lambda q: ["w0", *q]
)
SWEEP = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
VariantsOf = Callable[[str], st.SearchStrategy[Variant]]


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


class Case(NamedTuple):
    """One drawn search: variant, query, k, allowed mask, the kernel's terms, the dense ranking."""

    variant: Variant
    query: list[str]
    k: int
    allowed: np.ndarray | None
    terms: list[topk.TermSpec]
    ref: tuple[list[int], list[int], int]


def draw_segmented(data: st.DataObject, groups: list[list[str]], make_segmented: Any) -> Index:
    """Return an index of one segment per group, up to half of each group's documents deleted."""
    deleted = [
        data.draw(st.lists(st.integers(0, len(g) - 1), max_size=len(g) // 2, unique=True))
        for g in groups
    ]
    return make_segmented(groups, deleted)  # type: ignore[no-any-return]


def draw_case(
    data: st.DataObject,
    searcher: Searcher,
    variants: VariantsOf,
) -> Case | None:
    """Draw a search (k 1 to 12, 65 or 1000) and rank it densely; None if the kernel declines."""
    index = searcher.index
    variant = data.draw(variants(data.draw(st.sampled_from(KERNEL_KEYS))))
    query = data.draw(queries)
    k = data.draw(st.integers(1, 12) | st.sampled_from([65, 1000]))
    allowed = draw_mask(data, index.n_slots)
    ref = reference(searcher, query, variant, k, allowed)
    terms = specs(searcher, query, variant)
    if not terms or topk._top_k_kernel(index, terms, 1, None) is None:
        return None  # weights the kernel declines (the numpy path ranks them)
    return Case(variant, query, k, allowed, terms, ref)


def cold_warm_evicted(
    data: st.DataObject,
    cache: postings_cache.PartsCache,
    rank: Callable[[], Any],
    ref: Any,
    why: object = None,
) -> None:
    """Check ``rank()`` gives ``ref`` with the parts cold, warm, and evicted by a tiny cache."""
    cache.clear()
    cold = rank()  # fills the parts
    warm = rank()  # reads them
    assert cold == warm == ref, why
    cache.clear()
    cache.max_bytes = data.draw(st.sampled_from([1, 64, 600]))
    try:
        assert rank() == ref
    finally:
        cache.max_bytes = postings_cache.MAX_BYTES
