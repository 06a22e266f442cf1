"""What the search jobs compute on pool threads (Qt-free): ranked rows with snippets, suggestions,
and the details of one document (explanation, highlighted text, plot data).

Everything returned is immutable, so it can cross to the GUI thread by signal as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from bm25desk.engine import Explanation, Hit, SearchResult, Searcher, Variant
from bm25desk.engine.analysis import Analyzer
from bm25desk.engine.query import ParsedQuery
from bm25desk.ui.plot_data import PlotData, plot_data

PREVIEW_CHARS = 200_000
"""Longer documents are previewed up to this many characters (the rest is elided, and said so)."""

Span = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class Snippet:
    """A short window of a document around its first query-term occurrence, with term spans."""

    text: str
    spans: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One result row: the engine's hit and its snippet."""

    hit: Hit
    snippet: Snippet


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """A finished search: the ranking, its rows and "did you mean" suggestions per unknown term."""

    result: SearchResult
    rows: tuple[ResultRow, ...]
    suggestions: tuple[tuple[str, tuple[str, ...]], ...]  # (unknown term, suggestions)


@dataclass(frozen=True, slots=True)
class DocumentView:
    """A document's text as previewed, with the query terms' spans."""

    docno: int
    docid: str
    title: str
    location: str
    text: str
    spans: tuple[Span, ...]
    truncated: bool


@dataclass(frozen=True, slots=True)
class DetailOutcome:
    """Everything the detail area shows for one selected document."""

    explanation: Explanation
    document: DocumentView
    plots: PlotData


def make_snippet(analyzer: Analyzer, text: str, terms: frozenset[str], width: int = 220) -> Snippet:
    """Return a window of ``text`` around the first occurrence of a query term.

    The window starts at a word boundary a little before the first hit; whitespace is collapsed.
    Spans index into the snippet's own text.
    """
    head = text[: max(width * 40, 20_000)]  # enough to find a hit in all but huge documents
    spans = analyzer.spans(head, terms) if terms else []
    start = 0
    if spans:
        first = spans[0][0]
        if first > width // 3:
            start = head.rfind(" ", 0, first - width // 4) + 1
    end = min(len(head), start + width)
    if end < len(head):
        cut = head.rfind(" ", start + width // 2, end)
        end = cut if cut > 0 else end
    window = head[start:end]
    # Collapse whitespace while remapping offsets.
    out: list[str] = []
    mapping: list[int] = []
    prev_space = False
    for i, ch in enumerate(window):
        if ch.isspace():
            if prev_space:
                continue
            ch = " "
            prev_space = True
        else:
            prev_space = False
        mapping.append(i)
        out.append(ch)
    clean = "".join(out)
    pos = {orig: new for new, orig in enumerate(mapping)}
    local = []
    for s, e, term in spans:
        if s >= start and e <= end:
            ls, le = pos.get(s - start), pos.get(e - 1 - start)
            if ls is not None and le is not None:
                local.append((ls, le + 1, term))
    lead = len(clean) - len(clean.lstrip())
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(text) else ""
    shift = len(prefix) - lead
    return Snippet(
        prefix + clean.strip() + suffix,
        tuple((s + shift, e + shift, t) for s, e, t in local if s >= lead),
    )


def run_search(searcher: Searcher, query: str, variant: Variant, k: int) -> SearchOutcome:
    """Rank, cut snippets for the hits and suggest spellings for unknown terms."""
    result = searcher.search(query, variant, k)
    index = searcher.index
    terms = frozenset(result.analysis.terms)
    rows = tuple(
        ResultRow(hit, make_snippet(index.analyzer, index.text(hit.docno), terms))
        for hit in result.hits
    )
    suggestions = tuple(
        (term, tuple(searcher.suggest(term, 3))) for term in result.analysis.unknown[:5]
    )
    return SearchOutcome(result, rows, suggestions)


def document_view(searcher: Searcher, docno: int, terms: frozenset[str]) -> DocumentView:
    """Return the document's text (up to :data:`PREVIEW_CHARS`) with the terms' spans."""
    index = searcher.index
    rec = index.doc(docno)
    text = index.text(docno)
    truncated = len(text) > PREVIEW_CHARS
    if truncated:
        text = text[:PREVIEW_CHARS]
    spans = tuple(index.analyzer.spans(text, terms)) if terms else ()
    return DocumentView(docno, rec.docid, rec.title, rec.location, text, spans, truncated)


def run_detail(
    searcher: Searcher, parsed: ParsedQuery, docno: int, variant: Variant
) -> DetailOutcome:
    """Explain one document and prepare its preview and plots."""
    explanation = searcher.explain_docno(parsed, docno, variant, with_rank=True)
    document = document_view(searcher, docno, frozenset(parsed.terms))
    plots = plot_data(searcher, variant, parsed.terms, explanation)
    return DetailOutcome(explanation, document, plots)
