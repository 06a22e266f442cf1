"""Facets: how many of the documents a query matches have each file type, folder, year, value.

:func:`facets` counts, for every metadata key of the index (``type``, ``folder`` and ``year`` for
folders; the ``--meta-column`` keys of a corpus file), the documents that match the query, its
constraints and every filter *but that key's own* — the usual faceted search, where choosing
``pdf`` still shows how many Markdown files there are. Per key, the (document, value ordinal)
pairs are read once from the metadata postings and cached with the index; each count is then a
masked ``bincount``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.reserved import meta_term
from bm25desk.engine.scoring.constraints import allowed_mask
from bm25desk.engine.scoring.filters import (
    Filters,
    filter_mask,
    index_cache,
    meta_keys,
    values_of,
)
from bm25desk.engine.scoring.query import ParsedQuery

__all__ = ["Facets", "facets", "matching_mask"]


@dataclass(frozen=True, slots=True)
class Facets:
    """Counts per metadata key: ``facets["type"] == (("pdf", 12), ("md", 3), ...)``.

    Immutable. Keys keep the index's order (declared ones first); each key's values are sorted
    by count (descending), then value; values no matching document has are left out.
    """

    counts: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()

    def __getitem__(self, key: str) -> tuple[tuple[str, int], ...]:
        """Return the (value, count) pairs of ``key``."""
        for k, pairs in self.counts:
            if k == key:
                return pairs
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        """Iterate over the keys."""
        return (k for k, _ in self.counts)

    def __len__(self) -> int:
        """Return the number of keys."""
        return len(self.counts)

    def keys(self) -> tuple[str, ...]:
        """Return the keys in order."""
        return tuple(self)

    def as_dict(self, limit: int | None = None) -> dict[str, list[dict[str, Any]]]:
        """Return the JSON shape: key → ``[{"value", "count"}, ...]`` (at most ``limit`` each)."""
        return {k: [{"value": v, "count": c} for v, c in pairs[:limit]] for k, pairs in self.counts}


def matching_mask(index: Index, parsed: ParsedQuery | None) -> Any:
    """Return the mask (by docno) of the live documents a query matches.

    A match contains at least one scored term and satisfies the query's constraints, as in a
    ranking; a query of nothing (None, or no scored term) matches every live document.
    """
    n = index.n_slots
    if parsed is None or not parsed.scored:
        live = index.live
        return np.ones(n, dtype=bool) if live is None else np.array(live, dtype=bool)
    ok = np.zeros(n, dtype=bool)
    for term, _ in parsed.scored:
        ok[index.postings(term)[0]] = True  # live postings only
    if parsed.has_constraints:
        ok &= allowed_mask(index, parsed)
    return ok


def facets(
    index: Index,
    parsed: ParsedQuery | None,
    filters: Filters | None = None,
    *,
    keys: Sequence[str] | None = None,
) -> Facets:
    """Return the facet counts of ``parsed`` (None: every document) under ``filters``.

    Each key counts the documents that match the query and every filter but the key's own
    (:meth:`Filters.without`; ``year`` also leaves out the modified-date range). ``keys``
    chooses which keys (default: every metadata key of the index, :func:`~.filters.meta_keys`).

    Raises
    ------
    FilterError
        When ``filters`` name a key the index does not have (as :func:`~.filters.filter_mask`).
    """
    filters = filters or Filters()
    if filters:
        filter_mask(index, filters)  # a bad filter fails here, whatever keys are counted
    matched = matching_mask(index, parsed)
    out = []
    for key in keys if keys is not None else meta_keys(index):
        values, docnos, ordinals = _pairs(index, key)
        others = filters.without(key)
        within = matched & filter_mask(index, others) if others else matched
        counts = np.bincount(ordinals[within[docnos]], minlength=len(values))
        nonzero = np.flatnonzero(counts)
        pairs = sorted(((values[i], int(counts[i])) for i in nonzero), key=lambda p: (-p[1], p[0]))
        out.append((key, tuple(pairs)))
    return Facets(tuple(out))


def _pairs(index: Index, key: str) -> tuple[list[str], Any, Any]:
    """Return ``key``'s values and, for every (document, value) posting, its docno and ordinal."""
    cache = index_cache(index).facets
    got = cache.get(key)
    if got is None:
        values = values_of(index, key)
        docs = [index.postings(meta_term(key, v))[0] for v in values]
        docnos = np.concatenate(docs) if docs else np.zeros(0, dtype=np.int64)
        sizes = [d.size for d in docs]
        ordinals = np.repeat(np.arange(len(values), dtype=np.int64), sizes)
        got = cache[key] = (values, docnos, ordinals)
    return got
