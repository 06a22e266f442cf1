"""Models of the Statistics tab: most frequent terms, and a term's idf under every variant."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QApplication

from bm25desk.ui.common.colors import status_colors
from bm25desk.ui.statistics.work import IdfRow

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
TERM_ROLE = Qt.ItemDataRole.UserRole + 2

_Index = QModelIndex | QPersistentModelIndex
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class TermsColumn(IntEnum):
    """Columns of :class:`TopTermsModel`."""

    RANK = 0
    TERM = 1
    DF = 2
    CF = 3
    DF_SHARE = 4


class TopTermsModel(QAbstractTableModel):
    """The most frequent terms: (term, df, cf) with df as a share of the documents."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple[tuple[str, int, int], ...] = ()
        self._n_docs = 1

    def set_terms(self, rows: tuple[tuple[str, int, int], ...], n_docs: int) -> None:
        """Show ``rows`` (term, df, cf) of a collection of ``n_docs`` documents."""
        self.beginResetModel()
        self._rows = tuple(rows)
        self._n_docs = max(1, n_docs)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of terms (QAbstractTableModel.rowCount)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of columns (QAbstractTableModel.columnCount)."""
        return 0 if parent.isValid() else len(TermsColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(TermsColumn):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return ("#", "Term", "df", "cf", "in % of docs")[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                "rank by collection frequency",
                "the term as indexed (after stemming)",
                "documents containing the term",
                "collection frequency: occurrences in all documents",
                "df / N",
            )[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        term, df, cf = self._rows[index.row()]
        col = TermsColumn(index.column())
        values = (index.row() + 1, term, df, cf, df / self._n_docs)
        if role == Qt.ItemDataRole.DisplayRole:
            if col == TermsColumn.DF_SHARE:
                return f"{values[col]:.1%}"
            if col in (TermsColumn.DF, TermsColumn.CF):
                return f"{values[col]:,}"
            return str(values[col])
        if role == SORT_ROLE:
            return values[col]
        if role == TERM_ROLE:
            return term
        if role == Qt.ItemDataRole.TextAlignmentRole and col != TermsColumn.TERM:
            return _RIGHT
        if (
            role == Qt.ItemDataRole.ForegroundRole
            and col == TermsColumn.DF_SHARE
            and df * 2 > self._n_docs
        ):
            return status_colors(QApplication.palette())["warn"]
        if role == Qt.ItemDataRole.ToolTipRole and df * 2 > self._n_docs:
            return f"{term!r} is in more than half the documents: its RSJ/BIM idf is negative"
        return None


class IdfColumn(IntEnum):
    """Columns of :class:`IdfModel`."""

    VARIANT = 0
    IDF = 1
    FORMULA = 2


class IdfModel(QAbstractTableModel):
    """One term's idf under every variant; negative or zero values are flagged."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple[IdfRow, ...] = ()

    def set_rows(self, rows: tuple[IdfRow, ...]) -> None:
        """Show ``rows``."""
        self.beginResetModel()
        self._rows = tuple(rows)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of variants (QAbstractTableModel.rowCount)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of columns (QAbstractTableModel.columnCount)."""
        return 0 if parent.isValid() else len(IdfColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(IdfColumn)
        ):
            return ("Variant", "idf", "idf = … (with this term's numbers)")[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r = self._rows[index.row()]
        col = IdfColumn(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            if col == IdfColumn.VARIANT:
                return r.label
            if col == IdfColumn.IDF:
                flag = "  ⚠ negative" if r.idf < 0 else ("  ⚠ zero" if r.idf == 0 else "")
                return f"{r.idf:.4f}{flag}"
            return r.idf_text
        if role == SORT_ROLE:
            return (r.label, r.idf, r.idf_text)[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col == IdfColumn.IDF:
            return _RIGHT
        if role == Qt.ItemDataRole.ForegroundRole and col == IdfColumn.IDF and r.idf <= 0:
            return status_colors(QApplication.palette())["bad" if r.idf < 0 else "warn"]
        if role == Qt.ItemDataRole.ToolTipRole:
            notes = "\n".join(r.notes)
            if col == IdfColumn.IDF and r.idf < 0:
                return "Negative: a document containing this term scores lower for it.\n" + notes
            if col == IdfColumn.IDF and r.idf == 0:
                return "Zero: this term does not affect the ranking.\n" + notes
            return f"{r.label}\nidf = {r.idf_text}" + (f"\n{notes}" if notes else "")
        return None
