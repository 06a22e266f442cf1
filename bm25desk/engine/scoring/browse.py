"""Look inside an index (the Luke part): its terms, a term's postings, a document's terms.

Everything here reads the public :class:`~bm25desk.engine.index.reader.Index` and
:class:`~bm25desk.engine.scoring.search.Searcher` API (``term_table``, ``postings``, ``doclen``,
``text``, ``Searcher.weight``), so a change of the on-disk format does not reach it, and every
number is the one the ranking and the ledger use:

- a posting's **contribution** is ``idf · tf_part(tf, L)`` from the same
  :class:`~bm25desk.engine.scoring.variant.TermWeight` the search uses, i.e. exactly what the term
  adds to that document's score in a one-word query (``qtf`` = 1); under ``bm25f`` the postings
  are the documents with the term in any scored field, tf summed over them, and the tf part is
  computed from every field as the ranking does;
- a document's terms are derived from its **stored text** with the index's own analyser (the
  index keeps no forward index, and needs none for this): the same analysis that built it, so
  the counts are exact — :attr:`DocumentTerms.exact` checks that they add up to the stored length
  (they would not if the analyser's library changed since the build; ``info`` warns then).

Sorting and paging work on numpy arrays of the term's postings (12 bytes a posting); only the
rows of the requested page (or of each chunk, when :func:`iter_postings` streams them all to an
export) become Python objects and have their ids looked up. Ties go by docno (index order), as
in the ranking.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from bm25desk.engine.scoring import bm25f
from bm25desk.engine.scoring.bm25f import BM25F
from bm25desk.engine.scoring.variant import TermWeight, Variant

if TYPE_CHECKING:
    from bm25desk.engine.index.reader import Index
    from bm25desk.engine.scoring.search import Searcher

__all__ = [
    "POSTING_SORTS",
    "TERM_SORTS",
    "BrowseError",
    "DocTermRow",
    "DocumentTerms",
    "PostingRow",
    "PostingsPage",
    "TermPage",
    "TermRow",
    "document_terms",
    "iter_postings",
    "list_terms",
    "term_postings",
]

TermSort = Literal["cf", "df", "term"]
PostingSort = Literal["contribution", "tf", "length", "docno"]
TERM_SORTS: tuple[str, ...] = ("cf", "df", "term")
"""``cf`` and ``df`` sort the most frequent first; ``term`` by UTF-8 bytes (ties: by term)."""
POSTING_SORTS: tuple[str, ...] = ("contribution", "tf", "length", "docno")
"""The first three sort the largest first unless ``ascending``; ``docno`` in index order."""

_CHUNK = 4096


class BrowseError(ValueError):
    """A bad request (unknown sort, negative page): its message is for users."""


@dataclass(frozen=True, slots=True)
class TermRow:
    """One vocabulary term: how many live documents hold it, and how often it occurs."""

    term: str
    df: int
    cf: int


@dataclass(frozen=True, slots=True)
class TermPage:
    """A page of :func:`list_terms`: ``total`` terms matched the prefix."""

    total: int
    offset: int
    rows: tuple[TermRow, ...]


@dataclass(frozen=True, slots=True)
class PostingRow:
    """One document holding the term: its tf, its length and the term's score contribution."""

    docno: int
    docid: str
    tf: int
    length: int
    contribution: float


@dataclass(frozen=True, slots=True)
class PostingsPage:
    """A page of a term's postings under one variant (``total`` = the term's df)."""

    term: str
    df: int
    cf: int
    idf: float
    idf_text: str
    variant: str
    sort: str
    ascending: bool
    total: int
    offset: int
    rows: tuple[PostingRow, ...]
    fields: tuple[str, ...] = ("text",)
    """The fields df and cf count: the text, or under bm25f every scored field."""


@dataclass(frozen=True, slots=True)
class DocTermRow:
    """One term of a document: its tf there, its df, idf and weight (score contribution)."""

    term: str
    tf: int
    df: int
    idf: float
    weight: float


@dataclass(frozen=True, slots=True)
class DocumentTerms:
    """A document's body terms under one variant, the heaviest first (ties: by term).

    ``exact`` is True when the terms' tfs add up to the length stored at build (the analyser
    reproduces the build); ``length`` is the stored length.
    """

    docno: int
    docid: str
    title: str
    length: int
    variant: str
    exact: bool
    rows: tuple[DocTermRow, ...]


def list_terms(
    index: Index,
    *,
    sort: TermSort | str = "cf",
    prefix: str = "",
    offset: int = 0,
    limit: int | None = None,
) -> TermPage:
    """Return the vocabulary terms starting with ``prefix``, sorted and paged.

    ``limit`` None returns every term from ``offset`` on (a vocabulary may hold millions: page
    it in a UI). Only the page's terms are read from the lexicon.
    """
    _check_page(offset, limit)
    if sort not in TERM_SORTS:
        raise BrowseError(f"cannot sort terms by {sort!r}: use one of {', '.join(TERM_SORTS)}")
    ids, df, cf = index.term_table(prefix)
    total = int(ids.size)
    stop = total if limit is None else min(total, offset + limit)
    if sort == "term":
        chosen = ids[offset:stop]
        dfs, cfs = df[offset:stop], cf[offset:stop]
    else:
        key = cf if sort == "cf" else df
        order = _top_order(-key, ids, stop)[offset:stop]
        chosen, dfs, cfs = ids[order], df[order], cf[order]
    rows = tuple(
        TermRow(index.term_name(t), d, c)
        for t, d, c in zip(chosen.tolist(), dfs.tolist(), cfs.tolist(), strict=True)
    )
    return TermPage(total, offset, rows)


def term_postings(
    searcher: Searcher,
    term: str,
    variant: Variant,
    *,
    sort: PostingSort | str = "contribution",
    ascending: bool | None = None,
    offset: int = 0,
    limit: int | None = 50,
) -> PostingsPage:
    """Return a page of ``term``'s postings with each document's tf, length and contribution.

    ``term`` is an index term (as :func:`list_terms` lists it); a word that is not is analysed
    with the index's analyser, so ``running`` finds ``run``. ``ascending`` defaults to False
    except for ``docno``. Raises :class:`KeyError` when the term is in no document.
    """
    _check_page(offset, limit)
    p = _Postings.load(searcher, term, variant, sort, ascending)
    total = int(p.docnos.size)
    stop = total if limit is None else min(total, offset + limit)
    order = _top_order(p.key, p.docnos, stop)[offset:stop]
    return PostingsPage(
        p.term,
        p.df,
        p.cf,
        p.weight.idf,
        p.weight.idf_text,
        variant.display_with_params(),
        sort,
        p.ascending,
        total,
        offset,
        tuple(p.rows(searcher.index, order)),
        p.fields,
    )


def iter_postings(
    searcher: Searcher,
    term: str,
    variant: Variant,
    *,
    sort: PostingSort | str = "contribution",
    ascending: bool | None = None,
) -> Iterator[PostingRow]:
    """Return an iterator over every posting of ``term`` in the chosen order, chunk by chunk.

    For exports of a whole postings list: the order is computed once over the arrays, the rows
    are built (and their ids looked up) only as they are consumed. Errors (an unknown term, a
    bad sort) are raised by this call, before anything is yielded.
    """
    p = _Postings.load(searcher, term, variant, sort, ascending)
    order = np.lexsort((p.docnos, p.key))

    def chunks() -> Iterator[PostingRow]:
        for start in range(0, order.size, _CHUNK):
            yield from p.rows(searcher.index, order[start : start + _CHUNK])

    return chunks()


def document_terms(
    searcher: Searcher, docid: str, variant: Variant, *, docno: int | None = None
) -> DocumentTerms:
    """Return the body terms of document ``docid`` with tf, df, idf and weight, heaviest first.

    Derived from the stored text with the index's analyser (see the module docstring). Pass
    ``docno`` instead of ``docid`` (``docid`` then ignored) when the number is at hand. Raises
    :class:`KeyError` when no live document has that id.
    """
    index = searcher.index
    if docno is None:
        docno = index.docno(docid)
        if docno is None:
            raise KeyError(f"no document with id {docid!r} in {index.name!r}")
    elif not index.is_live(docno):
        raise KeyError(f"no live document number {docno} in {index.name!r}")
    record = index.doc(docno)
    counts = Counter(index.analyzer.terms(index.text(docno)))
    length = float(record.length)
    rows = []
    for term, tf in counts.items():
        weight = searcher.weight(term, variant)
        stats = searcher.term_stats_for(term, variant)
        if weight is None or stats is None:
            continue  # only when the analyser changed since the build (then exact is False)
        if isinstance(variant, BM25F):  # every scored field of this document, as ranked
            ptf = bm25f.pseudo_tf(bm25f.field_detail(searcher, term, docno, variant))
            part = float(bm25f.saturate(np.array([ptf]), variant.k1)[0])
        else:
            part = float(weight.tf_part(np.array([float(tf)]), np.array([length]))[0])
        rows.append(DocTermRow(term, tf, stats.df, weight.idf, weight.idf * part))
    rows.sort(key=lambda r: (-r.weight, r.term))
    exact = sum(counts.values()) == record.length and len(rows) == len(counts)
    return DocumentTerms(
        docno,
        record.docid,
        record.title,
        record.length,
        variant.display_with_params(),
        exact,
        tuple(rows),
    )


# -- helpers --------------------------------------------------------------------------------------


def _check_page(offset: int, limit: int | None) -> None:
    if offset < 0:
        raise BrowseError(f"the offset must be 0 or more, not {offset}")
    if limit is not None and limit < 1:
        raise BrowseError(f"the limit must be at least 1, not {limit}")


def _index_term(searcher: Searcher, term: str) -> str:
    """Return ``term`` when the index has it, else the one term its analysis gives (if any)."""
    index = searcher.index
    if index.term_id(term) >= 0:
        return term
    analysed = index.analyzer.terms(term)
    if len(analysed) == 1 and index.term_id(analysed[0]) >= 0:
        return analysed[0]
    raise KeyError(f"{term!r} is in no document of {index.name!r}")


@dataclass(frozen=True, slots=True)
class _Postings:
    """A term's live postings as arrays, with the sort key (negated for largest first)."""

    term: str
    df: int
    cf: int
    weight: TermWeight
    docnos: np.ndarray
    tfs: np.ndarray
    lengths: np.ndarray
    contrib: np.ndarray
    key: np.ndarray
    ascending: bool
    fields: tuple[str, ...]

    @classmethod
    def load(
        cls, searcher: Searcher, term: str, variant: Variant, sort: str, ascending: bool | None
    ) -> _Postings:
        """Read ``term``'s postings and weigh them (KeyError: the term is in no document)."""
        if sort not in POSTING_SORTS:
            raise BrowseError(
                f"cannot sort postings by {sort!r}: use one of {', '.join(POSTING_SORTS)}"
            )
        found = _index_term(searcher, term)
        weight = searcher.weight(found, variant)
        stats = searcher.term_stats_for(found, variant)
        if weight is None or stats is None:
            raise KeyError(f"{term!r} is in no document of {searcher.index.name!r}")
        names: tuple[str, ...] = ("text",)
        if isinstance(variant, BM25F):  # the documents with it in any scored field, as ranked
            fields = bm25f.scored_fields(searcher, variant)
            names = tuple(f.name for f in fields)
            docnos, tfs, ptf = bm25f.term_postings(searcher.index, found, fields)
            part = bm25f.saturate(ptf, variant.k1)
            lengths = np.asarray(searcher.index.doclen[docnos], dtype=np.int64)
        else:
            docnos, tfs = searcher.index.postings(found)
            lengths = np.asarray(searcher.index.doclen[docnos], dtype=np.int64)
            part = weight.tf_part(tfs.astype(np.float64), lengths.astype(np.float64))
        contrib = np.asarray(weight.idf * part, dtype=np.float64)
        tfs = tfs.astype(np.int64)
        asc = sort == "docno" if ascending is None else ascending
        keys: dict[str, np.ndarray] = {"contribution": contrib, "tf": tfs, "length": lengths}
        key = keys.get(sort, docnos)
        return cls(
            found, stats.df, stats.cf, weight, docnos, tfs, lengths, contrib,
            key if asc else -key, asc, names,
        )  # fmt: skip

    def rows(self, index: Index, positions: np.ndarray) -> Iterator[PostingRow]:
        """Yield the rows at ``positions`` (their document ids looked up now)."""
        for i in positions.tolist():
            docno = int(self.docnos[i])
            yield PostingRow(
                docno,
                index.docid(docno),
                int(self.tfs[i]),
                int(self.lengths[i]),
                float(self.contrib[i]),
            )


def _top_order(key: np.ndarray, tiebreak: np.ndarray, stop: int) -> np.ndarray:
    """Return the positions of the ``stop`` smallest ``key`` values, ties by ``tiebreak``, sorted.

    Partitions first when the page is a small part of the array; every value equal to the
    boundary one is kept before sorting, so ties are broken by ``tiebreak`` exactly.
    """
    n = key.size
    if stop <= 0:
        return np.zeros(0, dtype=np.int64)
    if stop < n // 4:
        bound = np.partition(key, stop - 1)[stop - 1]
        candidates = np.flatnonzero(key <= bound)
    else:
        candidates = np.arange(n)
    order = candidates[np.lexsort((tiebreak[candidates], key[candidates]))]
    return order[:stop]
