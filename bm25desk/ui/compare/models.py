"""Models of the Compare tab.

The two rankings side by side, a document's change by term, and the term × document heatmap.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.engine.scoring.variants import _g
from bm25desk.ui.common.colors import TermColors, highlight_background, status_colors
from bm25desk.ui.common.plain_text import plain_tooltip
from bm25desk.ui.common.table_model import ROW_ROLE, SORT_ROLE, RowTableModel
from bm25desk.ui.compare.work import CompareRow, DocDelta, HeatColumn, TermDelta

__all__ = ["ROW_ROLE", "SORT_ROLE", "CompareModel", "HeatmapModel", "TermDeltaModel"]


class CompareColumn(IntEnum):
    """Columns of :class:`CompareModel`."""

    RANK_A = 0
    RANK_B = 1
    MOVE = 2
    SCORE_A = 3
    SCORE_B = 4
    TITLE = 5


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


class CompareModel(RowTableModel[CompareRow]):
    """Documents in either top k with their ranks under A and B."""

    headers = ("A #", "B #", "Move", "Score A", "Score B", "Title")
    header_tips = (
        None,
        None,
        "How B moved the document relative to A: ▲ up, ▼ down, ● entered B's top k, ✕ left it",
    )
    numeric = frozenset(set(CompareColumn) - {CompareColumn.MOVE, CompareColumn.TITLE})
    centered = frozenset({CompareColumn.MOVE})

    def set_rows(self, rows: Any) -> None:
        """Show new rows (sorted by B's rank, documents that left at the end)."""
        super().set_rows(
            sorted(rows, key=lambda r: (not r.in_b, r.rank_b or 10**12, r.rank_a or 10**12))
        )

    def compare_row(self, row: int) -> CompareRow:
        """Return the row ``row``."""
        return self.row(row)

    def display(self, row: CompareRow, column: int) -> str:
        """Return a cell's text."""
        r = row
        return {
            CompareColumn.RANK_A: (str(r.rank_a) if r.rank_a else "—"),
            CompareColumn.RANK_B: (str(r.rank_b) if r.rank_b else "—"),
            CompareColumn.MOVE: movement_text(r),
            CompareColumn.SCORE_A: f"{r.score_a:.3f}",
            CompareColumn.SCORE_B: f"{r.score_b:.3f}",
            CompareColumn.TITLE: r.title or r.docid,
        }[CompareColumn(column)]

    def sort_key(self, row: CompareRow, column: int) -> Any:
        """Return a cell's raw value."""
        r = row
        return {
            CompareColumn.RANK_A: r.rank_a or 10**12,
            CompareColumn.RANK_B: r.rank_b or 10**12,
            CompareColumn.MOVE: r.shift,
            CompareColumn.SCORE_A: r.score_a,
            CompareColumn.SCORE_B: r.score_b,
            CompareColumn.TITLE: (r.title or r.docid).lower(),
        }[CompareColumn(column)]

    def tooltip(self, row: CompareRow, column: int) -> str:
        """Return the document's title and id."""
        return f"{row.title or row.docid}\nid {row.docid}"

    def cell_data(self, row: CompareRow, column: int, role: int) -> Any:
        """Colour the movement; mute documents that left B's top k."""
        if role != Qt.ItemDataRole.ForegroundRole:
            return None
        if column == CompareColumn.MOVE:
            colors = status_colors(QApplication.palette())
            return {
                "up": colors["good"],
                "entered": colors["good"],
                "down": colors["bad"],
                "left": colors["bad"],
            }.get(row.movement)
        if not row.in_b:
            return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        return None


class DeltaColumn(IntEnum):
    """Columns of :class:`TermDeltaModel`."""

    TERM = 0
    A = 1
    B = 2
    DELTA = 3


class TermDeltaModel(RowTableModel[TermDelta]):
    """One document's contribution per term under A and B, and the change."""

    headers = ("Term", "A", "B", "B − A")
    numeric = frozenset({DeltaColumn.A, DeltaColumn.B, DeltaColumn.DELTA})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._delta: DocDelta | None = None
        self._colors = TermColors()

    def set_delta(self, delta: DocDelta | None, colors: TermColors) -> None:
        """Show ``delta`` (None: empty)."""
        self._delta = delta
        self._colors = colors
        self.set_rows(delta.terms if delta is not None else ())

    def display(self, row: TermDelta, column: int) -> str:
        """Return a cell's text."""
        if column == DeltaColumn.TERM:
            return row.term
        if column == DeltaColumn.DELTA:
            return f"{row.delta:+.4f}"
        return f"{self.sort_key(row, column):.4f}"

    def sort_key(self, row: TermDelta, column: int) -> Any:
        """Return a cell's raw value."""
        return (row.term, row.weight_a, row.weight_b, row.delta)[column]

    def tooltip(self, row: TermDelta, column: int) -> str:
        """Return the change in numbers."""
        return f"{row.term}: {_g(row.weight_a)} → {_g(row.weight_b)} ({row.delta:+.4g})"

    def cell_data(self, row: TermDelta, column: int, role: int) -> Any:
        """Show the term's colour; colour the change."""
        if role == Qt.ItemDataRole.DecorationRole and column == DeltaColumn.TERM:
            return self._colors.color(row.term)
        if role == Qt.ItemDataRole.ForegroundRole and column == DeltaColumn.DELTA and row.delta:
            return status_colors(QApplication.palette())["good" if row.delta > 0 else "bad"]
        return None


class HeatmapModel(RowTableModel[str]):
    """Query terms × top-k documents, each cell a term's contribution, shaded in its colour."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._columns: tuple[HeatColumn, ...] = ()
        self._colors = TermColors()
        self._max = 1.0

    def set_heat(
        self, terms: tuple[str, ...], columns: tuple[HeatColumn, ...], colors: TermColors
    ) -> None:
        """Show the contributions of ``terms`` to each document column."""
        self._columns = tuple(columns)
        self._colors = colors
        self._max = max((abs(w) for c in self._columns for w in c.weights), default=0.0) or 1.0
        self.set_rows(terms)

    def titles(self) -> tuple[str, ...]:
        """Return the documents' ranks, one column each."""
        return tuple(f"#{c.rank}" for c in self._columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return the documents across and the terms down (QAbstractTableModel.headerData)."""
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and role == Qt.ItemDataRole.ToolTipRole and 0 <= section < len(self._columns):
            c = self._columns[section]
            return plain_tooltip(f"#{c.rank} {c.title or c.docid}\nscore {sum(c.weights):.4f}")
        if horizontal and role == Qt.ItemDataRole.TextAlignmentRole:
            return None
        return super().headerData(section, orientation, role)

    def row_header(self, section: int, role: int) -> Any:
        """Return the term of a row, with its colour."""
        if role == Qt.ItemDataRole.DisplayRole:
            return self._rows[section]
        if role == Qt.ItemDataRole.DecorationRole:
            return self._colors.color(self._rows[section])
        return None

    def _weight(self, term: str, column: int) -> float:
        return self._columns[column].weights[self._rows.index(term)]

    def display(self, row: str, column: int) -> str:
        """Return a contribution (blank where the term is absent)."""
        w = self._weight(row, column)
        return f"{w:.2f}" if w else ""

    def sort_key(self, row: str, column: int) -> float:
        """Return a contribution."""
        return self._weight(row, column)

    def tooltip(self, row: str, column: int) -> str:
        """Return the term, the document and the contribution."""
        col = self._columns[column]
        return f"{row} in #{col.rank} {col.title or col.docid}: {_g(self._weight(row, column))}"

    def cell_data(self, row: str, column: int, role: int) -> Any:
        """Shade a cell by its contribution in the term's colour; keep its text readable."""
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignCenter)
        w = self._weight(row, column)
        if not w or role not in (Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole):
            return None
        pal = QApplication.palette()
        strength = 0.15 + 0.8 * min(1.0, abs(w) / self._max)
        bg = highlight_background(self._colors.color(row), pal, strength)
        if role == Qt.ItemDataRole.BackgroundRole:
            return bg
        a, b = pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base)
        dark, light = (a, b) if a.lightnessF() < b.lightnessF() else (b, a)
        return dark if bg.lightnessF() > 0.5 else light
