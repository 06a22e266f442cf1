"""Index statistics and term look-ups (Qt-free, run in a worker)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bm25desk.engine import Searcher, all_variants


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What the Statistics tab shows about a whole index."""

    name: str
    n_docs: int
    n_terms: int
    avgdl: float
    min_length: int
    median_length: float
    max_length: int
    total_tokens: int
    edges: tuple[float, ...]  # histogram bin edges (len = bins + 1)
    counts: tuple[int, ...]
    clipped: int  # documents longer than the last edge (folded into the last bin)
    top_terms: tuple[tuple[str, int, int], ...]  # (term, df, cf)


@dataclass(frozen=True, slots=True)
class IdfRow:
    """A term's idf under one variant."""

    key: str
    label: str
    idf: float
    idf_text: str
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TermLookup:
    """A looked-up word: its analysed term, df, cf and the idf under every variant."""

    text: str
    term: str | None
    status: str  # ok | stop | short | unknown | empty
    df: int
    cf: int
    n_docs: int
    rows: tuple[IdfRow, ...]
    suggestions: tuple[str, ...] = ()


def index_stats(searcher: Searcher, *, bins: int = 40, top: int = 100) -> IndexStats:
    """Return the collection's numbers, a length histogram and its most frequent terms."""
    index = searcher.index
    lengths = np.asarray(index.live_lengths(), dtype=np.int64)
    if lengths.size == 0:
        return IndexStats(index.name, 0, index.n_terms, 0.0, 0, 0.0, 0, 0, (0.0, 1.0), (0,), 0, ())
    # Long tails squash a histogram: bin up to the 99.5th percentile, fold the rest into the
    # last bin.
    hi = float(max(np.percentile(lengths, 99.5), 1.0))
    clipped = int((lengths > hi).sum())
    counts, edges = np.histogram(np.minimum(lengths, hi), bins=bins, range=(0.0, hi))
    return IndexStats(
        index.name,
        int(index.n_docs),
        int(index.n_terms),
        float(index.avgdl),
        int(lengths.min()),
        float(np.median(lengths)),
        int(lengths.max()),
        int(lengths.sum()),
        tuple(float(e) for e in edges),
        tuple(int(c) for c in counts),
        clipped,
        tuple(index.top_terms(top)),
    )


def term_lookup(searcher: Searcher, text: str) -> TermLookup:
    """Analyse ``text`` as the index does and return its df, cf and idf under every variant."""
    index = searcher.index
    text = text.strip()
    if not text:
        return TermLookup(text, None, "empty", 0, 0, index.n_docs, ())
    tokens = index.analyzer.analyze(text)
    tok = next((t for t in tokens if t.term is not None), tokens[0] if tokens else None)
    if tok is None:
        return TermLookup(text, None, "empty", 0, 0, index.n_docs, ())
    if tok.term is None:
        return TermLookup(text, None, tok.status, 0, 0, index.n_docs, ())
    stats = index.term_stats(tok.term)
    if stats is None:
        return TermLookup(
            text,
            tok.term,
            "unknown",
            0,
            0,
            index.n_docs,
            (),
            tuple(searcher.suggest(tok.term, 5)),
        )
    rows = []
    for variant in all_variants():
        w = searcher.weight(tok.term, variant)
        if w is None:  # pragma: no cover - term_stats said it exists
            continue
        rows.append(IdfRow(variant.key, variant.label, float(w.idf), w.idf_text, w.notes))
    return TermLookup(text, tok.term, "ok", stats.df, stats.cf, index.n_docs, tuple(rows))
