"""A read-only table of strings: the first rows of a TSV file, skip reports, and the like."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bm25desk.ui.common.table_model import RowTableModel

_LONG = 120  # characters shown in a cell; the tooltip has the whole text


class RowsModel(RowTableModel[tuple[str, ...]]):
    """Rows of strings under a header (ragged rows are padded with empty cells)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._header: tuple[str, ...] = ()

    def set_table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """Replace the header and the rows."""
        width = max([len(header), *(len(r) for r in rows)]) if (header or rows) else 0
        self._header = tuple(header) + tuple(f"column {i + 1}" for i in range(len(header), width))
        self.set_rows([tuple(r) + ("",) * (width - len(r)) for r in rows])

    def titles(self) -> tuple[str, ...]:
        """Return the padded header."""
        return self._header

    def display(self, row: tuple[str, ...], column: int) -> str:
        """Return a cell, cut to 120 characters."""
        text = row[column]
        return text[: _LONG - 1] + "…" if len(text) > _LONG else text

    def tooltip(self, row: tuple[str, ...], column: int) -> str:
        """Return the whole cell."""
        return row[column]
