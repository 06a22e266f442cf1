"""One base for the app's read-only table models: rows, counts, headers, alignment and sorting.

A model shows a tuple of immutable rows (engine objects or small dataclasses). A subclass names its
columns and says what a cell shows; the base answers Qt's questions the same way everywhere:

- ``rowCount``/``columnCount`` are 0 under a valid parent (a table, not a tree);
- ``headerData`` gives the column titles and their tooltips;
- tooltips are plain text, shown literally (they show document titles, snippets and paths: see
  :mod:`~bm25desk.ui.common.plain_text`) unless :attr:`rich_tooltips` says otherwise;
- ``data`` checks the index, right-aligns the numeric columns, and asks :meth:`display`,
  :meth:`sort_key`, :meth:`tooltip` or :meth:`cell_data` for the rest;
- :data:`SORT_ROLE` returns raw values for a :class:`QSortFilterProxyModel` (set its sort role);
- :data:`ROW_ROLE` returns what a row stands for (the row object itself, unless a subclass says
  otherwise in :meth:`row_data`), so that views and proxies can hand it back.

Subclasses
----------
Set :attr:`headers` (and optionally :attr:`header_tips`, :attr:`numeric` and :attr:`centered`),
implement :meth:`display`, and override the other hooks where a column needs more. Replace the
rows with :meth:`set_rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from bm25desk.ui.common.plain_text import plain_tooltip

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
"""The raw value of a cell (a number or a string), for sorting."""
ROW_ROLE = Qt.ItemDataRole.UserRole + 2
"""What a row stands for (its row object by default; see :meth:`RowTableModel.row_data`)."""

ModelIndex = QModelIndex | QPersistentModelIndex
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
CENTER = int(Qt.AlignmentFlag.AlignCenter)

R = TypeVar("R")


class RowTableModel(QAbstractTableModel, Generic[R]):
    """A read-only table over a tuple of rows of type ``R`` (see the module docstring)."""

    headers: ClassVar[tuple[str, ...]] = ()
    """Column titles, in column order."""
    header_tips: ClassVar[tuple[str | None, ...]] = ()
    """Column header tooltips (may be shorter than :attr:`headers`)."""
    numeric: ClassVar[frozenset[int]] = frozenset()
    """Columns whose values are numbers: right-aligned."""
    centered: ClassVar[frozenset[int]] = frozenset()
    """Columns of symbols (arrows, marks): centred."""
    rich_tooltips: ClassVar[bool] = False
    """Whether :meth:`tooltip` returns HTML; by default it is plain text, shown as such."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple[R, ...] = ()

    # -- rows ------------------------------------------------------------------------------------

    def set_rows(self, rows: Sequence[R]) -> None:
        """Replace every row (a model reset: views keep no stale selection)."""
        self.beginResetModel()
        self._rows = tuple(rows)
        self.endResetModel()

    def clear(self) -> None:
        """Show no rows."""
        self.set_rows(())

    def rows(self) -> tuple[R, ...]:
        """Return every row."""
        return self._rows

    def row(self, i: int) -> R:
        """Return row ``i``."""
        return self._rows[i]

    def titles(self) -> tuple[str, ...]:
        """Return the column titles (default: :attr:`headers`; override for dynamic columns)."""
        return self.headers

    def column_count(self) -> int:
        """Return the number of columns (the number of titles)."""
        return len(self.titles())

    # -- hooks for subclasses --------------------------------------------------------------------

    def display(self, row: R, column: int) -> Any:
        """Return the text of a cell (DisplayRole)."""
        raise NotImplementedError

    def sort_key(self, row: R, column: int) -> Any:
        """Return the raw value of a cell for sorting (default: its text)."""
        return self.display(row, column)

    def tooltip(self, row: R, column: int) -> Any:
        """Return a cell's tooltip (plain text), or None."""
        return None

    def cell_data(self, row: R, column: int, role: int) -> Any:
        """Return any other role of a cell (colours, fonts, check states, custom roles)."""
        return None

    def header_data(self, section: int, role: int) -> Any:
        """Return a horizontal header's value for roles other than display and tooltip."""
        return None

    def is_numeric(self, column: int) -> bool:
        """Return whether ``column`` holds numbers (default: listed in :attr:`numeric`)."""
        return column in self.numeric

    def row_header(self, section: int, role: int) -> Any:
        """Return a vertical (row) header's value (default: the row number)."""
        return str(section + 1) if role == Qt.ItemDataRole.DisplayRole else None

    def row_data(self, row: R) -> Any:
        """Return what :data:`ROW_ROLE` gives for ``row`` (default: the row itself)."""
        return row

    # -- Qt overrides ----------------------------------------------------------------------------

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        """Return the number of rows (QAbstractTableModel.rowCount)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        """Return the number of columns (QAbstractTableModel.columnCount)."""
        return 0 if parent.isValid() else self.column_count()

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles and tooltips, and row numbers (QAbstractTableModel.headerData)."""
        if orientation != Qt.Orientation.Horizontal:
            return self.row_header(section, role) if 0 <= section < len(self._rows) else None
        if not 0 <= section < self.column_count():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.titles()[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.header_tips[section] if section < len(self.header_tips) else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return self._alignment(section)
        return self.header_data(section, role)

    def emit_column_changed(self, column: int, roles: Sequence[int] = ()) -> None:
        """Tell views that ``column`` changed in every row (e.g. marks or a baseline)."""
        if self._rows:
            self.dataChanged.emit(
                self.index(0, column), self.index(len(self._rows) - 1, column), list(roles)
            )

    def valid(self, index: ModelIndex) -> bool:
        """Return whether ``index`` points at a cell of this model."""
        return (
            index.isValid()
            and 0 <= index.row() < len(self._rows)
            and 0 <= index.column() < self.column_count()
        )

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return a cell's value for ``role`` (QAbstractTableModel.data)."""
        if not self.valid(index):
            return None
        row, column = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.display(row, column)
        if role == SORT_ROLE:
            return self.sort_key(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = self.tooltip(row, column)
            return tip if self.rich_tooltips else plain_tooltip(tip)
        if role == ROW_ROLE:
            return self.row_data(row)
        if role == Qt.ItemDataRole.TextAlignmentRole and (
            self.is_numeric(column) or column in self.centered
        ):
            return self._alignment(column)
        return self.cell_data(row, column, role)

    def _alignment(self, column: int) -> int:
        if self.is_numeric(column):
            return RIGHT
        return CENTER if column in self.centered else LEFT
