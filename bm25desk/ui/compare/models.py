"""Models of the Compare tab: the two rankings side by side, a document's change by term, and
the term × document heatmap."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.engine.scoring.variants import _g
from bm25desk.ui.common.colors import TermColors, highlight_background, status_colors
from bm25desk.ui.compare.work import CompareRow, DocDelta, HeatColumn

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_ROLE = Qt.ItemDataRole.UserRole + 2

_Index = QModelIndex | QPersistentModelIndex
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_CENTER = int(Qt.AlignmentFlag.AlignCenter)


class _TableModel(QAbstractTableModel):
    """Shared row/column counting over a tuple of rows."""

    _rows: tuple[Any, ...] = ()

    def _n_columns(self) -> int:
        raise NotImplementedError

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of rows (QAbstractTableModel.rowCount)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of columns (QAbstractTableModel.columnCount)."""
        return 0 if parent.isValid() else self._n_columns()


class CompareColumn(IntEnum):
    """Columns of :class:`CompareModel`."""

    RANK_A = 0
    RANK_B = 1
    MOVE = 2
    SCORE_A = 3
    SCORE_B = 4
    TITLE = 5


_COMPARE_HEADERS = ("A #", "B #", "Move", "Score A", "Score B", "Title")


def movement_text(row: CompareRow) -> str:
    """Return the arrow text for a row's movement from A to B."""
    move = row.movement
    if move == "entered":
        return "● entered" + (f" (was #{row.rank_a})" if row.rank_a else "")
    if move == "left":
        return "✕ left" + (f" (now #{row.rank_b})" if row.rank_b else "")
    if move == "up":
        return f"▲ {row.shift}"
    if move == "down":
        return f"▼ {-row.shift}"
    return "="


class CompareModel(_TableModel):
    """Documents in either top k with their ranks under A and B."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple[CompareRow, ...] = ()

    def set_rows(self, rows: tuple[CompareRow, ...]) -> None:
        """Show new rows (sorted by B's rank, documents that left at the end)."""
        self.beginResetModel()
        self._rows = tuple(
            sorted(rows, key=lambda r: (not r.in_b, r.rank_b or 10**12, r.rank_a or 10**12))
        )
        self.endResetModel()

    def compare_row(self, row: int) -> CompareRow:
        """Return the row ``row``."""
        return self._rows[row]

    def _n_columns(self) -> int:
        return len(CompareColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(CompareColumn):
            if role == Qt.ItemDataRole.DisplayRole:
                return _COMPARE_HEADERS[section]
            if role == Qt.ItemDataRole.ToolTipRole and section == CompareColumn.MOVE:
                return (
                    "How B moved the document relative to A: ▲ up, ▼ down, "
                    "● entered B's top k, ✕ left it"
                )
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r = self._rows[index.row()]
        col = CompareColumn(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                CompareColumn.RANK_A: (str(r.rank_a) if r.rank_a else "—"),
                CompareColumn.RANK_B: (str(r.rank_b) if r.rank_b else "—"),
                CompareColumn.MOVE: movement_text(r),
                CompareColumn.SCORE_A: f"{r.score_a:.3f}",
                CompareColumn.SCORE_B: f"{r.score_b:.3f}",
                CompareColumn.TITLE: r.title or r.docid,
            }[col]
        if role == SORT_ROLE:
            return {
                CompareColumn.RANK_A: r.rank_a or 10**12,
                CompareColumn.RANK_B: r.rank_b or 10**12,
                CompareColumn.MOVE: r.shift,
                CompareColumn.SCORE_A: r.score_a,
                CompareColumn.SCORE_B: r.score_b,
                CompareColumn.TITLE: (r.title or r.docid).lower(),
            }[col]
        if role == ROW_ROLE:
            return r
        if role == Qt.ItemDataRole.TextAlignmentRole and col != CompareColumn.TITLE:
            return _CENTER if col == CompareColumn.MOVE else _RIGHT
        if role == Qt.ItemDataRole.ForegroundRole and col == CompareColumn.MOVE:
            colors = status_colors(QApplication.palette())
            return {
                "up": colors["good"],
                "entered": colors["good"],
                "down": colors["bad"],
                "left": colors["bad"],
            }.get(r.movement)
        if role == Qt.ItemDataRole.ForegroundRole and not r.in_b:
            return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{r.title or r.docid}\nid {r.docid}"
        return None


class DeltaColumn(IntEnum):
    """Columns of :class:`TermDeltaModel`."""

    TERM = 0
    A = 1
    B = 2
    DELTA = 3


class TermDeltaModel(_TableModel):
    """One document's contribution per term under A and B, and the change."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._delta: DocDelta | None = None
        self._rows = ()
        self._colors = TermColors()

    def set_delta(self, delta: DocDelta | None, colors: TermColors) -> None:
        """Show ``delta`` (None: empty)."""
        self.beginResetModel()
        self._delta = delta
        self._rows = delta.terms if delta is not None else ()
        self._colors = colors
        self.endResetModel()

    def _n_columns(self) -> int:
        return len(DeltaColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(DeltaColumn)
        ):
            return ("Term", "A", "B", "B − A")[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        t = self._rows[index.row()]
        col = DeltaColumn(index.column())
        if role in (Qt.ItemDataRole.DisplayRole, SORT_ROLE):
            values = (t.term, t.weight_a, t.weight_b, t.delta)
            if role == SORT_ROLE:
                return values[col]
            if col == DeltaColumn.TERM:
                return t.term
            if col == DeltaColumn.DELTA:
                return f"{t.delta:+.4f}"
            return f"{values[col]:.4f}"
        if role == Qt.ItemDataRole.DecorationRole and col == DeltaColumn.TERM:
            return self._colors.color(t.term)
        if role == Qt.ItemDataRole.TextAlignmentRole and col != DeltaColumn.TERM:
            return _RIGHT
        if role == Qt.ItemDataRole.ForegroundRole and col == DeltaColumn.DELTA and t.delta:
            return status_colors(QApplication.palette())["good" if t.delta > 0 else "bad"]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{t.term}: {_g(t.weight_a)} → {_g(t.weight_b)} ({t.delta:+.4g})"
        return None


class HeatmapModel(_TableModel):
    """Query terms × top-k documents, each cell a term's contribution, shaded in its colour."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._terms: tuple[str, ...] = ()
        self._columns: tuple[HeatColumn, ...] = ()
        self._rows = ()
        self._colors = TermColors()
        self._max = 1.0

    def set_heat(
        self, terms: tuple[str, ...], columns: tuple[HeatColumn, ...], colors: TermColors
    ) -> None:
        """Show the contributions of ``terms`` to each document column."""
        self.beginResetModel()
        self._terms = tuple(terms)
        self._rows = self._terms
        self._columns = tuple(columns)
        self._colors = colors
        self._max = max((abs(w) for c in self._columns for w in c.weights), default=0.0) or 1.0
        self.endResetModel()

    def _n_columns(self) -> int:
        return len(self._columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return document ranks across and terms down (QAbstractTableModel.headerData)."""
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self._columns):
            c = self._columns[section]
            if role == Qt.ItemDataRole.DisplayRole:
                return f"#{c.rank}"
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"#{c.rank} {c.title or c.docid}\nscore {sum(c.weights):.4f}"
        if orientation == Qt.Orientation.Vertical and 0 <= section < len(self._terms):
            if role == Qt.ItemDataRole.DisplayRole:
                return self._terms[section]
            if role == Qt.ItemDataRole.DecorationRole:
                return self._colors.color(self._terms[section])
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not index.isValid() or not 0 <= index.row() < len(self._terms):
            return None
        if not 0 <= index.column() < len(self._columns):
            return None
        term = self._terms[index.row()]
        col = self._columns[index.column()]
        w = col.weights[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{w:.2f}" if w else ""
        if role == SORT_ROLE:
            return w
        if role == Qt.ItemDataRole.BackgroundRole and w:
            strength = 0.15 + 0.8 * min(1.0, abs(w) / self._max)
            return highlight_background(self._colors.color(term), QApplication.palette(), strength)
        if role == Qt.ItemDataRole.ForegroundRole and w:
            pal = QApplication.palette()
            strength = 0.15 + 0.8 * min(1.0, abs(w) / self._max)
            bg = highlight_background(self._colors.color(term), pal, strength)
            a, b = pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base)
            dark, light = (a, b) if a.lightnessF() < b.lightnessF() else (b, a)
            return dark if bg.lightnessF() > 0.5 else light
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _CENTER
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{term} in #{col.rank} {col.title or col.docid}: {_g(w)}"
        return None
