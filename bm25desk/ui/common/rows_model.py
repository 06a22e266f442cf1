"""A read-only table of strings: the first rows of a TSV file, skip reports, and the like."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

_Index = QModelIndex | QPersistentModelIndex


class RowsModel(QAbstractTableModel):
    """Rows of strings under a header (ragged rows are padded with empty cells)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._header: tuple[str, ...] = ()
        self._rows: tuple[tuple[str, ...], ...] = ()

    def set_rows(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """Replace the contents."""
        self.beginResetModel()
        width = max([len(header), *(len(r) for r in rows)]) if (header or rows) else 0
        self._header = tuple(header) + tuple(f"column {i + 1}" for i in range(len(header), width))
        self._rows = tuple(tuple(r) + ("",) * (width - len(r)) for r in rows)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of rows (QAbstractTableModel.rowCount)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of columns (QAbstractTableModel.columnCount)."""
        return 0 if parent.isValid() else len(self._header)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return the column names (QAbstractTableModel.headerData)."""
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._header[section] if 0 <= section < len(self._header) else None
        return str(section + 1)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return a cell (QAbstractTableModel.data)."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            text = self._rows[index.row()][index.column()]
            if role == Qt.ItemDataRole.DisplayRole and len(text) > 120:
                return text[:119] + "…"
            return text
        return None
