"""Models of the Terms tab: terms, a term's postings, a document's terms.

The first two hold one page after another (:class:`PagedModel`): a vocabulary of 400,000 terms
is never put in a view at once. The view asks for more (``canFetchMore``/``fetchMore``) when it
is scrolled to the end; the model then says so by :attr:`PagedModel.more_wanted`, the panel loads
the next page in the background and :meth:`PagedModel.add_page` appends it. Sorting is the
engine's (over every row, not only those loaded): a header click asks for a new first page.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from PySide6.QtCore import QModelIndex, Signal

from bm25desk.engine.scoring.browse import DocTermRow, TermRow
from bm25desk.ui.common.table_model import ModelIndex, RowTableModel
from bm25desk.ui.terms.work import PostingItem

R = TypeVar("R")


class PagedModel(RowTableModel[R]):
    """Rows loaded page by page, ``total`` in all.

    Signals
    -------
    more_wanted(int)
        The view wants the rows from this offset on.
    """

    more_wanted = Signal(int)
    sort_keys: ClassVar[tuple[str | None, ...]] = ()
    """The engine's sort key of each column (None: the column does not sort)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.total = 0
        self.generation = 0  # bumped by reset: a late page of an older listing is dropped
        self._waiting = False

    def reset(self, rows: tuple[R, ...] = (), total: int = 0) -> int:
        """Show the first page ``rows`` of ``total``; return the new generation."""
        self.generation += 1
        self.total = total
        self._waiting = False
        self.set_rows(rows)
        return self.generation

    def add_page(self, generation: int, offset: int, rows: tuple[R, ...], total: int) -> bool:
        """Append a page loaded for ``generation`` at ``offset``; return whether it was used."""
        if generation != self.generation or offset != len(self._rows):
            return False
        self._waiting = False
        self.total = total
        if rows:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
            self._rows = self._rows + tuple(rows)
            self.endInsertRows()
        return True

    def page_failed(self) -> None:
        """Let the view ask again (the last request failed)."""
        self._waiting = False

    def canFetchMore(self, parent: ModelIndex = QModelIndex()) -> bool:  # noqa: B008
        """Return whether rows remain to load (QAbstractItemModel.canFetchMore)."""
        return not parent.isValid() and not self._waiting and len(self._rows) < self.total

    def fetchMore(self, parent: ModelIndex = QModelIndex()) -> None:  # noqa: B008
        """Ask for the next page (QAbstractItemModel.fetchMore)."""
        if self.canFetchMore(parent):
            self._waiting = True
            self.more_wanted.emit(len(self._rows))

    def sort_key_of(self, column: int) -> str | None:
        """Return the engine's sort key of ``column`` (None: it does not sort)."""
        return self.sort_keys[column] if 0 <= column < len(self.sort_keys) else None


class TermsModel(PagedModel[TermRow]):
    """Vocabulary terms with their document and collection frequencies."""

    headers = ("Term", "df", "cf")
    header_tips = (
        "the term as indexed (after stemming); click to sort alphabetically",
        "documents containing the term; click to sort by it",
        "collection frequency: occurrences in all documents; click to sort by it",
    )
    numeric = frozenset({1, 2})
    sort_keys = ("term", "df", "cf")

    def display(self, row: TermRow, column: int) -> Any:
        """Return the term or a count with thousands separators."""
        return row.term if column == 0 else f"{(row.df, row.cf)[column - 1]:,}"

    def sort_key(self, row: TermRow, column: int) -> Any:
        """Return the raw value."""
        return (row.term, row.df, row.cf)[column]

    def row_data(self, row: TermRow) -> str:
        """Return the term."""
        return row.term


class PostingsModel(PagedModel[PostingItem]):
    """A term's documents: id, title, tf, length and the term's score contribution."""

    headers = ("Document", "Title", "tf", "Length", "Contribution")
    header_tips = (
        "the document's id; click to list in index order",
        "the document's title",
        "how often the term occurs in the document",
        "the document's length in analysed tokens",
        "what the term adds to the document's score in a one-word query, under the current "
        "ranking function and parameters (idf × tf part)",
    )
    numeric = frozenset({2, 3, 4})
    sort_keys = ("docno", None, "tf", "length", "contribution")

    def display(self, row: PostingItem, column: int) -> Any:
        """Return a cell's text."""
        p = row.posting
        if column == 0:
            return p.docid
        if column == 1:
            return row.title or "—"
        if column == 4:
            return f"{p.contribution:.4f}"
        return f"{(p.tf, p.length)[column - 2]:,}"

    def sort_key(self, row: PostingItem, column: int) -> Any:
        """Return the raw value."""
        p = row.posting
        return (p.docno, row.title, p.tf, p.length, p.contribution)[column]

    def tooltip(self, row: PostingItem, column: int) -> Any:
        """Return the whole title, or the exact contribution."""
        if column == 1:
            return row.title or None
        if column == 4:
            return repr(row.posting.contribution)
        return None

    def row_data(self, row: PostingItem) -> int:
        """Return the docno."""
        return row.posting.docno


class DocTermsModel(RowTableModel[DocTermRow]):
    """A document's terms: tf there, df, idf and weight (the term's score contribution)."""

    headers = ("Term", "tf", "df", "idf", "Weight")
    header_tips = (
        "the term as indexed",
        "how often it occurs in this document",
        "documents containing it",
        "its idf under the current ranking function",
        "what it adds to this document's score in a one-word query (idf × tf part)",
    )
    numeric = frozenset({1, 2, 3, 4})

    def display(self, row: DocTermRow, column: int) -> Any:
        """Return a cell's text."""
        if column == 0:
            return row.term
        if column in (1, 2):
            return f"{(row.tf, row.df)[column - 1]:,}"
        return f"{(row.idf, row.weight)[column - 3]:.4f}"

    def sort_key(self, row: DocTermRow, column: int) -> Any:
        """Return the raw value."""
        return (row.term, row.tf, row.df, row.idf, row.weight)[column]

    def row_data(self, row: DocTermRow) -> str:
        """Return the term."""
        return row.term
