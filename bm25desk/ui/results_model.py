"""The ranked results: rank, score, the stacked contribution bar, title, snippet and source."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.engine import Hit
from bm25desk.engine.variants import _g
from bm25desk.ui.colors import TermColors
from bm25desk.ui.search_work import ResultRow

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
HIT_ROLE = Qt.ItemDataRole.UserRole + 2
PARTS_ROLE = Qt.ItemDataRole.UserRole + 3  # tuple[(term, QColor, weight)], in query order
SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 4  # (Snippet, TermColors)
SCALE_ROLE = Qt.ItemDataRole.UserRole + 5  # the largest bar total in the list (for bar lengths)

_Index = QModelIndex | QPersistentModelIndex


class Column(IntEnum):
    """Columns of :class:`ResultsModel`."""

    RANK = 0
    SCORE = 1
    PARTS = 2
    TITLE = 3
    SNIPPET = 4
    SOURCE = 5


HEADERS = {
    Column.RANK: "#",
    Column.SCORE: "Score",
    Column.PARTS: "Contributions",
    Column.TITLE: "Title",
    Column.SNIPPET: "Snippet",
    Column.SOURCE: "Source",
}


def hit_source(hit: Hit) -> str:
    """Return where a hit lives: its file path or URL, else its id in the corpus."""
    return hit.location or f"id {hit.docid}"


class ResultsModel(QAbstractTableModel):
    """Adapts a ranking (``tuple[ResultRow, ...]``) for a table view; owns no logic."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple[ResultRow, ...] = ()
        self._colors = TermColors()
        self._scale = 1.0

    def set_rows(self, rows: tuple[ResultRow, ...], colors: TermColors) -> None:
        """Show a new ranking (model reset)."""
        self.beginResetModel()
        self._rows = tuple(rows)
        self._colors = colors
        totals = [sum(abs(c.weight) for c in r.hit.contributions) for r in self._rows]
        self._scale = max(totals, default=0.0) or 1.0
        self.endResetModel()

    def clear(self) -> None:
        """Show no results."""
        self.set_rows((), TermColors())

    @property
    def colors(self) -> TermColors:
        """Return the term colours of the current query."""
        return self._colors

    def hit(self, row: int) -> Hit:
        """Return the hit of ``row``."""
        return self._rows[row].hit

    def hits(self) -> tuple[Hit, ...]:
        """Return every hit, in rank order."""
        return tuple(r.hit for r in self._rows)

    def row_of_docno(self, docno: int) -> int:
        """Return the row showing ``docno`` (-1 when absent)."""
        return next((i for i, r in enumerate(self._rows) if r.hit.docno == docno), -1)

    # -- Qt model API ----------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of hits (QAbstractTableModel.rowCount)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of columns (QAbstractTableModel.columnCount)."""
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(Column):
            return None
        col = Column(section)
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[col]
        if role == Qt.ItemDataRole.ToolTipRole and col == Column.PARTS:
            return (
                "Each coloured segment is one query term's share of the score "
                "(colours as in the query chips)"
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (Column.RANK, Column.SCORE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        hit = row.hit
        col = Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            if col == Column.RANK:
                return str(hit.rank)
            if col == Column.SCORE:
                return f"{hit.score:.3f}"
            if col == Column.PARTS:
                return ""
            if col == Column.TITLE:
                return hit.title or hit.docid
            if col == Column.SNIPPET:
                return row.snippet.text
            return hit_source(hit)
        if role == SORT_ROLE:
            return {
                Column.RANK: hit.rank,
                Column.SCORE: hit.score,
                Column.PARTS: hit.score,
                Column.TITLE: (hit.title or hit.docid).lower(),
                Column.SNIPPET: row.snippet.text.lower(),
                Column.SOURCE: hit_source(hit).lower(),
            }[col]
        if role == HIT_ROLE:
            return hit
        if role == PARTS_ROLE:
            return tuple((c.term, self._colors.color(c.term), c.weight) for c in hit.contributions)
        if role == SCALE_ROLE:
            return self._scale
        if role == SNIPPET_ROLE:
            return (row.snippet, self._colors)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (Column.RANK, Column.SCORE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, col)
        if role == Qt.ItemDataRole.ForegroundRole and col in (Column.SOURCE, Column.RANK):
            return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        return None

    def _tooltip(self, row: ResultRow, col: Column) -> str | None:
        hit = row.hit
        if col == Column.PARTS or col == Column.SCORE:
            lines = [f"score {_g(hit.score)} = sum of:"]
            for c in hit.contributions:
                share = c.weight / hit.score if hit.score else 0.0
                lines.append(
                    f"  {c.term}: {_g(c.weight)} ({share:.0%})  "
                    f"tf {c.tf}, df {c.df}, idf {c.idf:.3f}"
                )
            return "\n".join(lines)
        if col == Column.TITLE:
            return f"{hit.title or hit.docid}\nid {hit.docid} · {hit.length} terms"
        if col == Column.SOURCE:
            return hit_source(hit)
        if col == Column.SNIPPET:
            return row.snippet.text
        return None
