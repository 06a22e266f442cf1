"""Models of the Statistics tab: most frequent terms, and a term's idf under every variant."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from bm25desk.ui.common.colors import status_colors
from bm25desk.ui.common.table_model import ROW_ROLE, SORT_ROLE, RowTableModel
from bm25desk.ui.statistics.work import IdfRow

TERM_ROLE = ROW_ROLE  # the row's term
__all__ = ["SORT_ROLE", "TERM_ROLE", "IdfModel", "TopTermsModel"]

TermRow = tuple[int, str, int, int]  # rank, term, df, cf


class TermsColumn(IntEnum):
    """Columns of :class:`TopTermsModel`."""

    RANK = 0
    TERM = 1
    DF = 2
    CF = 3
    DF_SHARE = 4


class TopTermsModel(RowTableModel[TermRow]):
    """The most frequent terms: (term, df, cf) with df as a share of the documents."""

    headers = ("#", "Term", "df", "cf", "in % of docs")
    header_tips = (
        "rank by collection frequency",
        "the term as indexed (after stemming)",
        "documents containing the term",
        "collection frequency: occurrences in all documents",
        "df / N",
    )
    numeric = frozenset(set(TermsColumn) - {TermsColumn.TERM})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._n_docs = 1

    def set_terms(self, rows: tuple[tuple[str, int, int], ...], n_docs: int) -> None:
        """Show ``rows`` (term, df, cf) of a collection of ``n_docs`` documents."""
        self._n_docs = max(1, n_docs)
        self.set_rows([(i + 1, *row) for i, row in enumerate(rows)])

    def row_data(self, row: TermRow) -> str:
        """Return the term (:data:`TERM_ROLE`)."""
        return row[1]

    def sort_key(self, row: TermRow, column: int) -> Any:
        """Return a cell's raw value."""
        return (*row, row[2] / self._n_docs)[column]

    def display(self, row: TermRow, column: int) -> str:
        """Return a cell's text."""
        value = self.sort_key(row, column)
        if column == TermsColumn.DF_SHARE:
            return f"{value:.1%}"
        if column in (TermsColumn.DF, TermsColumn.CF):
            return f"{value:,}"
        return str(value)

    def tooltip(self, row: TermRow, column: int) -> str | None:
        """Warn about a term in more than half the documents."""
        if row[2] * 2 > self._n_docs:
            return f"{row[1]!r} is in more than half the documents: its RSJ/BIM idf is negative"
        return None

    def cell_data(self, row: TermRow, column: int, role: int) -> Any:
        """Colour the share of a term in more than half the documents."""
        if (
            role == Qt.ItemDataRole.ForegroundRole
            and column == TermsColumn.DF_SHARE
            and row[2] * 2 > self._n_docs
        ):
            return status_colors(QApplication.palette())["warn"]
        return None


class IdfColumn(IntEnum):
    """Columns of :class:`IdfModel`."""

    VARIANT = 0
    IDF = 1
    FORMULA = 2


class IdfModel(RowTableModel[IdfRow]):
    """One term's idf under every variant; negative or zero values are flagged."""

    headers = ("Variant", "idf", "idf = … (with this term's numbers)")
    numeric = frozenset({IdfColumn.IDF})

    def display(self, row: IdfRow, column: int) -> str:
        """Return a cell's text (a flag beside a negative or zero idf)."""
        if column == IdfColumn.VARIANT:
            return f"{row.label} [{row.key}]"
        if column == IdfColumn.IDF:
            flag = "  ⚠ negative" if row.idf < 0 else ("  ⚠ zero" if row.idf == 0 else "")
            return f"{row.idf:.4f}{flag}"
        return row.idf_text

    def sort_key(self, row: IdfRow, column: int) -> Any:
        """Return a cell's raw value."""
        return (row.label, row.idf, row.idf_text)[column]

    def tooltip(self, row: IdfRow, column: int) -> str:
        """Say what a negative or zero idf means, or show the formula."""
        notes = "\n".join(row.notes)
        if column == IdfColumn.IDF and row.idf < 0:
            return "Negative: a document containing this term scores lower for it.\n" + notes
        if column == IdfColumn.IDF and row.idf == 0:
            return "Zero: this term does not affect the ranking.\n" + notes
        return f"{row.label}\nidf = {row.idf_text}" + (f"\n{notes}" if notes else "")

    def cell_data(self, row: IdfRow, column: int, role: int) -> Any:
        """Colour a negative or zero idf."""
        if role == Qt.ItemDataRole.ForegroundRole and column == IdfColumn.IDF and row.idf <= 0:
            return status_colors(QApplication.palette())["bad" if row.idf < 0 else "warn"]
        return None
