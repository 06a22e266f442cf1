"""The shared table-model base: counts, headers, alignment, sort role and hooks."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, Qt

from bm25desk.ui.common.table_model import RIGHT, SORT_ROLE, RowTableModel


@dataclass(frozen=True)
class _Row:
    name: str
    count: int


class _Model(RowTableModel[_Row]):
    headers = ("Name", "Count")
    header_tips = ("the name",)
    numeric = frozenset({1})

    def display(self, row: _Row, column: int) -> str:
        return row.name if column == 0 else f"{row.count:,}"

    def sort_key(self, row: _Row, column: int) -> object:
        return row.name if column == 0 else row.count

    def tooltip(self, row: _Row, column: int) -> str | None:
        return f"{row.name} has {row.count}" if column == 1 else None


def test_rows_headers_and_roles(qtmodeltester, shown) -> None:
    model = _Model()
    qtmodeltester.check(model)
    assert model.rowCount() == 0
    model.set_rows([_Row("a", 1200), _Row("b", 3)])
    qtmodeltester.check(model)
    assert (model.rowCount(), model.columnCount()) == (2, 2)
    assert model.rowCount(model.index(0, 0)) == 0  # a table, not a tree
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Name"
    assert model.headerData(0, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole) == "the name"
    assert model.headerData(1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole) is None
    assert model.data(model.index(0, 1)) == "1,200"
    assert model.data(model.index(0, 1), SORT_ROLE) == 1200
    assert model.data(model.index(0, 1), Qt.ItemDataRole.TextAlignmentRole) == RIGHT
    assert model.data(model.index(0, 0), Qt.ItemDataRole.TextAlignmentRole) is None
    assert shown(model.data(model.index(1, 1), Qt.ItemDataRole.ToolTipRole)) == "b has 3"
    assert model.data(QModelIndex()) is None
    assert model.row(1) == _Row("b", 3)
    model.clear()
    assert model.rowCount() == 0


def test_tooltips_show_document_text_as_text(qapp, shown) -> None:
    """Issue 16.7: a title ``<img src=file:///etc/passwd>`` is shown as those characters."""
    model = _Model()
    title = "<img src=file:///etc/passwd> & <b>bold</b>\nsecond line"
    model.set_rows([_Row(title, 1)])
    tip = model.data(model.index(0, 1), Qt.ItemDataRole.ToolTipRole)
    assert shown(tip) == f"{title} has 1"
    assert "<img" not in tip  # escaped: nothing for Qt to load
