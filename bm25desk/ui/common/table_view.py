"""The app's read-only table views, set up one way: whole rows selected, sorted by raw value."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QSortFilterProxyModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from bm25desk.ui.common.table_model import SORT_ROLE


def compact_rows(view: QTableView) -> None:
    """Give ``view`` fixed rows one line of text high (more rows fit)."""
    header = view.verticalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    header.setDefaultSectionSize(view.fontMetrics().height() + 8)


def setup_view(view: QTableView, *, compact: bool = False) -> QTableView:
    """Make ``view`` a read-only list of whole rows: one selected at a time, no grid, banded."""
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    if compact:
        compact_rows(view)
    view.setWordWrap(False)
    view.setShowGrid(False)
    view.setAlternatingRowColors(True)
    return view


def make_table(
    model: QAbstractItemModel,
    *,
    sortable: bool = True,
    compact: bool = False,
    sort_column: int = -1,
) -> tuple[QTableView, QSortFilterProxyModel]:
    """Return a view of ``model`` through a proxy that sorts by :data:`SORT_ROLE`, and the proxy.

    Parameters
    ----------
    model
        The source model (a :class:`~bm25desk.ui.common.table_model.RowTableModel` usually).
    sortable
        Whether clicking a header sorts.
    compact
        Fixed one-line rows (see :func:`compact_rows`).
    sort_column
        The column sorted first (-1: the model's own order).
    """
    proxy = QSortFilterProxyModel(model)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    view = setup_view(QTableView(), compact=compact)
    view.setModel(proxy)
    view.setSortingEnabled(sortable)
    if sortable:
        view.sortByColumn(sort_column, Qt.SortOrder.AscendingOrder)
    return view, proxy


def paged_table(model: QAbstractItemModel) -> QTableView:
    """Return a view of a model that loads page by page and is sorted by whoever loads it.

    No proxy (it would sort only the rows loaded so far): header clicks are the caller's to
    turn into a new first page; the header shows the sort indicator the caller sets.
    """
    view = setup_view(QTableView(), compact=True)
    view.setModel(model)
    header = view.horizontalHeader()
    header.setSectionsClickable(True)
    header.setSortIndicatorShown(True)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(False)
    return view
