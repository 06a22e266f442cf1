"""What the search jobs compute on pool threads (Qt-free).

Ranked rows with snippets, suggestions, and the details of one document (explanation,
highlighted text, plot data).

With relevance feedback (documents marked relevant, by id), a search ranks twice: with the
Robertson/Sparck Jones weight in place of the idf, and without it, so every row can say where it
ranked before.

Everything returned is immutable, so it can cross to the GUI thread by signal as it is.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import unicodedata
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from bm25desk.engine import Explanation, Hit, Index, Searcher, SearchResult, Variant
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.scoring.query import ParsedQuery
from bm25desk.engine.scoring.search import Feedback
from bm25desk.ui.search.plot_data import PlotData, Point, plot_data

PREVIEW_CHARS = 50_000
"""Longer documents are previewed up to this many characters (the rest is elided, and said so).

Laying out and highlighting the preview happens on the GUI thread: 200,000 characters took
100–500 ms there (measured on synthetic MS MARCO documents), 50,000 about 30 ms. Files open in
full with Open; Lucene's highlighter analyses 51,200 characters by default for the same reason.
"""

Span = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class Snippet:
    """A short window of a document around its first query-term occurrence, with term spans."""

    text: str
    spans: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One result row: the engine's hit, its snippet and, with feedback, its rank without it."""

    hit: Hit
    snippet: Snippet
    before: int | None = None  # rank without feedback (None: the ranking has no feedback)


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """A finished search: the ranking, its rows and "did you mean" suggestions per unknown term.

    With feedback, ``result.feedback`` holds the docnos used and ``plain`` the same query ranked
    without feedback (the "before"); ``missing`` lists marked or judged ids not in the index.
    """

    result: SearchResult
    rows: tuple[ResultRow, ...]
    suggestions: tuple[tuple[str, tuple[str, ...]], ...]  # (unknown term, suggestions)
    plain: SearchResult | None = None
    missing: frozenset[str] = frozenset()
    pending: tuple[int, ...] = ()  # docnos whose snippets are still to be cut (blank meanwhile)

    @property
    def feedback(self) -> Feedback | None:
        """Return the relevance feedback this ranking used (None: plain ranking)."""
        return self.result.feedback

    @property
    def dropped(self) -> tuple[Hit, ...]:
        """Return the plain ranking's hits that feedback pushed out of the list."""
        if self.plain is None:
            return ()
        shown = {r.hit.docno for r in self.rows}
        return tuple(h for h in self.plain.hits if h.docno not in shown)


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
    feedback: Feedback | None = None  # the relevance feedback the explanation used


_MARKUP = re.compile(r"(?m)^[ \t]{0,3}(?:#{1,6}[ \t]+|[-*+][ \t]+|>[ \t]?)")
"""Markdown heading, list and quote markers at the start of a line (not words: kept out of
snippets, where lines run together)."""

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")


def make_snippet(
    analyzer: Analyzer,
    text: str,
    terms: frozenset[str],
    width: int = 220,
    *,
    markdown: bool = False,
) -> Snippet:
    """Return a window of ``text`` around the first occurrence of a query term.

    The window starts at a word boundary a little before the first hit; whitespace is collapsed.
    Spans index into the snippet's own text. Only the start of the document is analysed to find
    the first hit (then more, if needed), and only the window to place the highlights. With
    ``markdown``, line-start markers (``#``, ``-``, ``>``) are left out.
    """
    if markdown:
        text = _MARKUP.sub("", text)
    first = -1
    if terms:
        for limit in (400, 2_000, 20_000):
            if limit < len(text):
                # Cut at whitespace: a word cut in two could stem to a query term.
                cut = text.rfind(" ", 0, limit)
                limit = cut if cut > 0 else limit
            found = analyzer.spans(text[:limit], terms)
            if found:
                first = found[0][0]
                break
            if limit >= len(text):
                break
    # Widths are in columns, a Chinese, Japanese or Korean character taking two (as on screen),
    # and the cuts fall at spaces where there are any near: text without spaces (CJK) is cut
    # between characters, a little before the hit rather than at the document's start.
    start = 0
    if first >= 0 and _columns(text, 0, first) > width // 3:
        lead = _back(text, first, width // 4)
        space = text.rfind(" ", max(0, lead - 40), lead)
        start = space + 1 if space >= 0 else lead
    end = _forward(text, start, width)
    if end < len(text):
        cut = text.rfind(" ", _forward(text, start, width // 2), end)
        end = cut if cut > 0 else end
    window = " ".join(text[start:end].split())
    spans = analyzer.spans(window, terms) if terms and first >= 0 else []
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(text) else ""
    shift = len(prefix)
    return Snippet(prefix + window + suffix, tuple((s + shift, e + shift, t) for s, e, t in spans))


def _wide(c: str) -> bool:
    return c >= "\u1100" and unicodedata.east_asian_width(c) in "WF"


def _columns(text: str, start: int, end: int) -> int:
    """Return the columns ``text[start:end]`` takes (wide characters count two)."""
    return sum(2 if _wide(c) else 1 for c in text[start:end])


def _back(text: str, pos: int, columns: int) -> int:
    """Return the position ``columns`` columns before ``pos`` (0 at most)."""
    while pos > 0 and columns > 0:
        pos -= 1
        columns -= 2 if _wide(text[pos]) else 1
    return pos


def _forward(text: str, pos: int, columns: int) -> int:
    """Return the position ``columns`` columns after ``pos`` (the text's end at most)."""
    n = len(text)
    while pos < n and columns > 0:
        columns -= 2 if _wide(text[pos]) else 1
        pos += 1
    return pos


_SNIPPETS: weakref.WeakKeyDictionary[Index, OrderedDict[tuple[int, frozenset[str]], Snippet]] = (
    weakref.WeakKeyDictionary()
)
_SNIPPETS_LOCK = threading.Lock()
_SNIPPETS_PER_INDEX = 2000


SNIPPETS_FIRST = 20
"""Snippets cut before a ranking is shown; the other rows get theirs from :func:`cut_snippets`
right after. Cutting one analyses up to 20,000 characters of the document, and on a large
index most documents are new to the analyser (a Porter stem costs ~20 µs a word): cutting all
100 first made results on a 3.2 M-document index take ~300 ms instead of ~100 ms."""

BLANK = Snippet("", ())


def _cached(index: Index, docno: int, terms: frozenset[str]) -> Snippet | None:
    key = (docno, terms)
    with _SNIPPETS_LOCK:
        cache = _SNIPPETS.setdefault(index, OrderedDict())
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
        return hit


def cached_snippet(index: Index, docno: int, terms: frozenset[str]) -> Snippet:
    """Return the snippet of ``docno`` for ``terms`` (re-rankings reuse them: same words)."""
    key = (docno, terms)
    hit = _cached(index, docno, terms)
    if hit is not None:
        return hit
    markdown = index.doc(docno).location.lower().endswith(MARKDOWN_SUFFIXES)
    snippet = make_snippet(index.analyzer, index.text(docno), terms, markdown=markdown)
    with _SNIPPETS_LOCK:
        cache = _SNIPPETS.setdefault(index, OrderedDict())
        cache[key] = snippet
        if len(cache) > _SNIPPETS_PER_INDEX:
            cache.popitem(last=False)
    return snippet


def docnos_of(index: Index, docids: Iterable[str]) -> tuple[frozenset[int], frozenset[str]]:
    """Return the live docnos of ``docids`` and the ids that name no live document."""
    found: set[int] = set()
    missing: set[str] = set()
    for docid in docids:
        docno = index.docno(docid)
        if docno is None:
            missing.add(docid)
        else:
            found.add(docno)
    return frozenset(found), frozenset(missing)


def plain_ranks(
    searcher: Searcher, parsed: ParsedQuery, variant: Variant, docnos: Iterable[int]
) -> dict[int, int]:
    """Return the rank of each of ``docnos`` in the full ranking without feedback.

    Same order as :meth:`Searcher.search`: score descending, ties by docno. A document that does
    not match gets no rank.
    """
    scores, ok = searcher.scores(parsed, variant)
    cand = np.flatnonzero(ok)
    neg = np.sort(-scores[cand])  # ascending, so "higher score" is "smaller negated score"
    ranks: dict[int, int] = {}
    for d in docnos:
        if not ok[d]:
            continue
        s = scores[d]
        better = int(np.searchsorted(neg, -s, side="left"))
        equal = int(np.searchsorted(neg, -s, side="right")) - better
        if equal > 1:  # ties are broken by internal document order
            better += int(np.count_nonzero((scores[cand] == s) & (cand < d)))
        ranks[d] = better + 1
    return ranks


def run_search(
    searcher: Searcher,
    query: str,
    variant: Variant,
    k: int,
    *,
    relevant: frozenset[str] = frozenset(),
    judged: frozenset[str] = frozenset(),
    snippets_first: int | None = None,
) -> SearchOutcome:
    """Rank, cut snippets for the hits and suggest spellings for unknown terms.

    Only the first ``snippets_first`` (default :data:`SNIPPETS_FIRST`) rows' snippets are cut
    here (and any cut before); the others are blank and listed in ``pending``, for
    :func:`cut_snippets`.

    ``relevant`` (document ids) turns relevance feedback on: the ranking uses the RSJ weight with
    those documents as the relevant set, and each row also carries its rank without feedback.
    ``judged`` ids are only checked against the index (missing ones are reported).
    """
    index = searcher.index
    marked, missing = docnos_of(index, relevant)
    missing |= docnos_of(index, judged - relevant)[1]
    parsed = searcher.parse(query)
    plain: SearchResult | None = None
    if marked:
        result = searcher.search_parsed(parsed, variant, k, feedback=Feedback(marked))
        plain = searcher.search_parsed(parsed, variant, k)
        before = {h.docno: h.rank for h in plain.hits}
        unranked = [h.docno for h in result.hits if h.docno not in before]
        if unranked:
            before.update(plain_ranks(searcher, parsed, variant, unranked))
    else:
        result = searcher.search_parsed(parsed, variant, k)
        before = None
    terms = frozenset(result.analysis.terms)
    first = SNIPPETS_FIRST if snippets_first is None else snippets_first
    rows: list[ResultRow] = []
    pending: list[int] = []
    for i, hit in enumerate(result.hits):
        if i < first:
            snippet: Snippet | None = cached_snippet(index, hit.docno, terms)
        else:
            snippet = _cached(index, hit.docno, terms)
        if snippet is None:
            snippet = BLANK
            pending.append(hit.docno)
        rows.append(ResultRow(hit, snippet, None if before is None else before.get(hit.docno)))
    suggestions = tuple(
        (term, tuple(searcher.suggest(term, 3))) for term in result.analysis.unknown[:5]
    )
    return SearchOutcome(result, tuple(rows), suggestions, plain, missing, tuple(pending))


def cut_snippets(index: Index, docnos: Iterable[int], terms: frozenset[str]) -> dict[int, Snippet]:
    """Return the snippets of ``docnos`` for ``terms`` (the rows a ranking left blank)."""
    return {d: cached_snippet(index, d, terms) for d in docnos}


def document_view(searcher: Searcher, docno: int, terms: frozenset[str]) -> DocumentView:
    """Return the document's text (up to :data:`PREVIEW_CHARS`) with the terms' spans."""
    index = searcher.index
    rec = index.doc(docno)
    text = index.text(docno)
    truncated = len(text) > PREVIEW_CHARS
    if truncated:
        text = text[:PREVIEW_CHARS]
    # QTextDocument counts a CRLF as one position and indexes in UTF-16 code units: normalise
    # line ends before finding the spans, and convert offsets where the text needs surrogates.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not rec.location or "://" in rec.location:
        # Corpus records (SMART, TSV, JSON) carry hard line breaks from the source file: reflow
        # single ones into spaces (same length, so offsets are unchanged); keep paragraph breaks.
        text = _SINGLE_NEWLINE.sub(" ", text)
    spans = tuple(index.analyzer.spans(text, terms)) if terms else ()
    if any(ord(c) > 0xFFFF for c in text):
        spans = tuple((_utf16(text, s), _utf16(text, e), t) for s, e, t in spans)
    return DocumentView(docno, rec.docid, rec.title, rec.location, text, spans, truncated)


_SINGLE_NEWLINE = re.compile(r"(?<=[^\n])\n(?=[^\n])")


def _utf16(text: str, offset: int) -> int:
    """Return the UTF-16 offset of code-point ``offset`` in ``text``."""
    return offset + sum(1 for c in text[:offset] if ord(c) > 0xFFFF)


def run_detail(
    searcher: Searcher,
    parsed: ParsedQuery,
    docno: int,
    variant: Variant,
    feedback: Feedback | None = None,
) -> DetailOutcome:
    """Explain one document and prepare its preview and plots (with feedback: RSJ idf)."""
    explanation = searcher.explain_docno(parsed, docno, variant, feedback=feedback, with_rank=True)
    document = document_view(searcher, docno, frozenset(parsed.terms))
    plots = plot_data(searcher, variant, parsed.terms, explanation)
    if feedback is not None:
        plots = _with_rsj_points(searcher, variant, parsed, feedback, plots)
    return DetailOutcome(explanation, document, plots, feedback)


def _with_rsj_points(
    searcher: Searcher,
    variant: Variant,
    parsed: ParsedQuery,
    feedback: Feedback,
    plots: PlotData,
) -> PlotData:
    """Put the query terms at their RSJ weights on the idf plot (the curve stays the variant's)."""
    points = []
    for p in plots.idf_points:
        w = searcher.weight(p.term, variant, feedback)
        points.append(Point(p.term, p.x, w.idf) if w is not None else p)
    note = (
        "idf points: RSJ weights from the documents marked relevant; "
        "the curve is the idf without relevance information."
    )
    return dataclasses.replace(plots, idf_points=tuple(points), notes=(*plots.notes, note))
