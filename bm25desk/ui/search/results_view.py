"""The results table of the Search tab, with its painted cells and right-click menu.

Columns in their visual order, painted cells (relevance mark, contribution bar, highlighted snippet)
and sorting by raw value.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView, QWidget

from bm25desk.engine import Hit
from bm25desk.ui.common.table_view import setup_view
from bm25desk.ui.search.delegates import (
    ContributionBarDelegate,
    MarkDelegate,
    MiddleElideDelegate,
    SnippetDelegate,
)
from bm25desk.ui.search.results_model import (
    FEEDBACK_COLUMNS,
    HIT_ROLE,
    SORT_ROLE,
    VISUAL_ORDER,
    Column,
    ResultsModel,
)

COLUMN_WIDTHS = {
    Column.RANK: 40,
    Column.SCORE: 70,
    Column.PARTS: 170,
    Column.TITLE: 300,
    Column.SOURCE: 120,
    Column.BEFORE: 56,
    Column.MOVE: 56,
}
TITLE_SHARE, TITLE_MAX = 0.3, 560
"""On a wide window the title gets 30 % of the width (at most 560 px), not a fixed 300."""


class ResultsView(QTableView):
    """A :class:`ResultsModel` through a sorting proxy, with its delegates and menu.

    Signals
    -------
    mark_toggled(str)
        The user clicked a result's star, or chose (un)mark in the menu: the document id.
    menu_requested(QMenu, object)
        A context menu is about to open for a :class:`Hit` (None: on empty space); add actions.
    """

    mark_toggled = Signal(str)
    menu_requested = Signal(QMenu, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results = ResultsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.results)
        self.proxy.setSortRole(SORT_ROLE)
        setup_view(self)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.sortByColumn(Column.RANK, Qt.SortOrder.AscendingOrder)
        self.setItemDelegateForColumn(Column.PARTS, ContributionBarDelegate(self))
        self.setItemDelegateForColumn(Column.SNIPPET, SnippetDelegate(self))
        self.setItemDelegateForColumn(Column.MARK, MarkDelegate(self))
        self.setItemDelegateForColumn(Column.SOURCE, MiddleElideDelegate(self))
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        for column, width in COLUMN_WIDTHS.items():
            header.resizeSection(column, width)
        header.setSectionResizeMode(Column.SNIPPET, QHeaderView.ResizeMode.Stretch)
        self.arrange_columns()
        self.verticalHeader().setDefaultSectionSize(max(24, self.fontMetrics().height() + 8))
        self.clicked.connect(self._on_clicked)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._on_custom_context_menu_requested)
        self.mark_action = QAction("Mark as relevant", self)
        self.mark_action.setShortcut(QKeySequence(Qt.Key.Key_Space))
        self.mark_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.addAction(self.mark_action)
        self._title_fitted = False

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Widen the title column on the first real width (QWidget.resizeEvent).

        Not when the user's own width was restored (it differs from the default then).
        """
        super().resizeEvent(event)
        width = self.viewport().width()
        if self._title_fitted or not self.isVisible() or width <= 0:
            return
        self._title_fitted = True
        header = self.horizontalHeader()
        default = COLUMN_WIDTHS[Column.TITLE]
        if header.sectionSize(Column.TITLE) == default:
            wide = min(TITLE_MAX, int(width * TITLE_SHARE))
            header.resizeSection(Column.TITLE, max(default, wide))

    def selected_hit(self) -> Hit | None:
        """Return the hit of the selected row."""
        rows = self.selectionModel().selectedRows()
        return rows[0].data(HIT_ROLE) if rows else None

    def proxy_row_of_docno(self, docno: int) -> int:
        """Return the visible row of ``docno`` (-1 when it is not listed)."""
        row = self.results.row_of_docno(docno)
        if row < 0:
            return -1
        return self.proxy.mapFromSource(self.results.index(row, 0)).row()

    def show_row(self, row: int) -> None:
        """Scroll visible row ``row`` into view; the list shows its top when the row is on it."""
        if (row + 1) * max(self.rowHeight(0), 1) <= self.viewport().height():
            self.scrollToTop()
        else:
            self.scrollTo(self.proxy.index(row, 0))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Home and End go to the first and last result, not column (QWidget.keyPressEvent)."""
        key = event.key()
        rows = self.proxy.rowCount()
        plain = event.modifiers() in (
            Qt.KeyboardModifier.NoModifier,
            Qt.KeyboardModifier.KeypadModifier,
        )
        if rows and plain and key in (Qt.Key.Key_Home, Qt.Key.Key_End):
            row = 0 if key == Qt.Key.Key_Home else rows - 1
            self.selectRow(row)
            self.show_row(row)
            return
        super().keyPressEvent(event)

    def arrange_columns(self) -> None:
        """Put the columns in their visual order and show "before" only with feedback.

        Also after a header layout saved by an earlier version (fewer columns) was restored.
        """
        header = self.horizontalHeader()
        for visual, col in enumerate(VISUAL_ORDER):
            if header.visualIndex(col) != visual:
                header.moveSection(header.visualIndex(col), visual)
        width = self.fontMetrics().height() * 2 + 8
        if header.sectionResizeMode(Column.MARK) != QHeaderView.ResizeMode.Fixed:
            header.setSectionResizeMode(Column.MARK, QHeaderView.ResizeMode.Fixed)
        if header.sectionSize(Column.MARK) != width:
            header.resizeSection(Column.MARK, width)
        on = self.results.has_feedback
        for col in FEEDBACK_COLUMNS:
            if self.isColumnHidden(col) == on:
                self.setColumnHidden(col, not on)

    @Slot(QModelIndex)
    def _on_clicked(self, index: QModelIndex) -> None:
        if index.column() == Column.MARK:
            hit = index.data(HIT_ROLE)
            if hit is not None:
                self.mark_toggled.emit(hit.docid)

    def context_menu(self, pos: QPoint) -> QMenu:
        """Return the menu for a right-click at ``pos`` (the row there is selected first)."""
        index = self.indexAt(pos)
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        hit = index.data(HIT_ROLE) if index.isValid() else None
        if hit is not None:
            self.selectRow(index.row())
        self.menu_requested.emit(menu, hit)
        return menu

    @Slot(QPoint)
    def _on_custom_context_menu_requested(self, pos: QPoint) -> None:
        self.context_menu(pos).popup(self.viewport().mapToGlobal(pos))
