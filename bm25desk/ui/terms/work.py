"""The Terms tab's background work: pages of terms and postings, a document's terms (Qt-free).

Thin over :mod:`bm25desk.engine.scoring.browse`, which sorts and pages on arrays: only the rows
of one page become Python objects. Postings get their documents' titles here, off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bm25desk.engine.scoring.browse import (
    DocumentTerms,
    PostingRow,
    PostingsPage,
    TermPage,
    document_terms,
    list_terms,
    term_postings,
)

PAGE = 500
"""Rows fetched at a time (a view asks for the next page when scrolled to its end)."""


@dataclass(frozen=True, slots=True)
class TermsRequest:
    """Which terms are listed: a prefix and a sort (``cf``, ``df`` or ``term``)."""

    prefix: str = ""
    sort: str = "cf"


@dataclass(frozen=True, slots=True)
class TermsLoad:
    """A page of terms for ``request`` (``page.offset`` says where it goes)."""

    request: TermsRequest
    page: TermPage


@dataclass(frozen=True, slots=True)
class PostingsRequest:
    """Which postings are listed: a term, a variant with its parameters, a sort and direction."""

    term: str
    variant: Any
    sort: str = "contribution"
    ascending: bool | None = None


@dataclass(frozen=True, slots=True)
class PostingItem:
    """One posting with its document's title."""

    posting: PostingRow
    title: str


@dataclass(frozen=True, slots=True)
class PostingsLoad:
    """A page of postings for ``request``, with the titles of their documents."""

    request: PostingsRequest
    page: PostingsPage
    items: tuple[PostingItem, ...]


def load_terms(index: Any, request: TermsRequest, offset: int, limit: int = PAGE) -> TermsLoad:
    """Return the page of terms at ``offset``."""
    page = list_terms(index, sort=request.sort, prefix=request.prefix, offset=offset, limit=limit)
    return TermsLoad(request, page)


def load_postings(
    searcher: Any, request: PostingsRequest, offset: int, limit: int = PAGE
) -> PostingsLoad:
    """Return the page of postings at ``offset`` (KeyError: the term is in no document)."""
    page = term_postings(
        searcher,
        request.term,
        request.variant,
        sort=request.sort,
        ascending=request.ascending,
        offset=offset,
        limit=limit,
    )
    index = searcher.index
    items = tuple(PostingItem(r, index.doc(r.docno).title) for r in page.rows)
    return PostingsLoad(request, page, items)


def load_document_terms(searcher: Any, docno: int, variant: Any) -> DocumentTerms:
    """Return the terms of document ``docno`` with tf, df, idf and weight, heaviest first."""
    return document_terms(searcher, "", variant, docno=docno)
