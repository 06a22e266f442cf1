"""The index list of the index manager: select an index, then Open, Update, Rebuild or Delete it.

A click only selects (so an index can be deleted without opening it); a double-click or Enter
opens it. The index open in the window is marked (bold, ●).
"""

from __future__ import annotations

from PySide6.QtCore import (
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    QUrl,
    Signal,
    SignalInstance,
    Slot,
)
from PySide6.QtGui import QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import IndexInfo, IndexStore
from bm25desk.ui.common.table_view import setup_view
from bm25desk.ui.indexes.list_model import (
    NAME_ROLE,
    SORT_ROLE,
    Column,
    IndexListModel,
    IndexRow,
    source_status,
)

BUTTONS = (
    ("new", "New…", "Index a folder or a corpus file (Ctrl+N)"),
    ("open", "Open", "Search the selected index (or double-click it, or press Enter)"),
    (
        "update",
        "Update",
        "Catch up with the source: new, changed and deleted files of a folder are indexed "
        "incrementally; a changed corpus file is re-read (F5)",
    ),
    ("rebuild", "Rebuild", "Build the index again from its source, with the same options"),
    ("delete", "Delete", "Delete the index (the source files are not touched)"),
    ("folder", "Show in folder", "Open the folder holding the index files"),
)


class IndexPanel(QWidget):
    """Lists the indexes of a store and asks the window to act on them.

    Signals
    -------
    open_requested(str)
        The user opened an index (double-click, Enter or Open).
    new_requested()
        New index.
    update_requested(str), rebuild_requested(str), delete_requested(str)
        Act on the named index.
    """

    open_requested = Signal(str)
    new_requested = Signal()
    update_requested = Signal(str)
    rebuild_requested = Signal(str)
    delete_requested = Signal(str)

    def __init__(self, store: IndexStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.model = IndexListModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.view = setup_view(QTableView())
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(Column.NAME, Qt.SortOrder.AscendingOrder)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.view.selectionModel().currentRowChanged.connect(self._on_current_row_changed)
        # Not ``activated``: some desktops activate on a single click, which must only select.
        self.view.doubleClicked.connect(self._on_view_activated)
        for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            enter = QShortcut(QKeySequence(key), self.view)
            enter.setContext(Qt.ShortcutContext.WidgetShortcut)
            enter.activated.connect(lambda: self._emit_for_current(self.open_requested))
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.view)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(lambda: self._emit_for_current(self.delete_requested))
        buttons = QHBoxLayout()
        for name, text, tip in BUTTONS:
            button = QPushButton(text)
            button.setToolTip(tip)
            setattr(self, f"{name}_button", button)
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.new_button.clicked.connect(self.new_requested)
        self.open_button.clicked.connect(lambda: self._emit_for_current(self.open_requested))
        self.update_button.clicked.connect(lambda: self._emit_for_current(self.update_requested))
        self.rebuild_button.clicked.connect(lambda: self._emit_for_current(self.rebuild_requested))
        self.delete_button.clicked.connect(lambda: self._emit_for_current(self.delete_requested))
        self.folder_button.clicked.connect(self.show_in_folder)
        self.empty_label = QLabel("No indexes yet. Click New… or build the sample collection.")
        self.empty_label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(buttons)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty_label)
        self._busy = False
        self._open = ""
        self._update_buttons()

    new_button: QPushButton
    open_button: QPushButton
    update_button: QPushButton
    rebuild_button: QPushButton
    delete_button: QPushButton
    folder_button: QPushButton

    # -- state -----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the store (cheap: manifests and a stat per source)."""
        keep = self.current_name()
        rows = []
        for name in self.store.names():
            info = self.store.info(name)
            status, detail = source_status(info)
            rows.append(IndexRow(info, status, detail))
        self.model.set_rows(tuple(rows))
        self.empty_label.setVisible(not rows)
        self.view.setVisible(bool(rows))
        if keep or self._open:
            self.select(keep or self._open)
        self._update_buttons()

    def names(self) -> list[str]:
        """Return the listed index names."""
        return [self.model.index_row(r).info.name for r in range(self.model.rowCount())]

    def infos(self) -> list[IndexInfo]:
        """Return the listed indexes' :class:`IndexInfo`, by name."""
        return [self.model.index_row(r).info for r in range(self.model.rowCount())]

    def current_name(self) -> str:
        """Return the selected index name ("" when none)."""
        current = self.view.currentIndex()
        if not current.isValid():
            return ""
        return str(current.data(NAME_ROLE) or "")

    def current_row(self) -> IndexRow | None:
        """Return the selected :class:`IndexRow`."""
        name = self.current_name()
        row = self.model.row_of(name) if name else -1
        return self.model.index_row(row) if row >= 0 else None

    def select(self, name: str) -> None:
        """Select index ``name`` (selecting never opens it)."""
        row = self.model.row_of(name)
        if row < 0:
            return
        self.view.setCurrentIndex(self.proxy.mapFromSource(self.model.index(row, 0)))
        self._update_buttons()

    def set_open_index(self, name: str) -> None:
        """Mark which index the window has open (and select it)."""
        self._open = name
        self.model.set_open(name)
        if name:
            self.select(name)
        self._update_buttons()

    def set_busy(self, busy: bool) -> None:
        """Disable the write actions while a build, update or delete runs."""
        self._busy = busy
        self._update_buttons()

    def _update_buttons(self) -> None:
        row = self.current_row()
        has = row is not None
        self.new_button.setEnabled(not self._busy)
        can_source = row is not None and row.status != "missing"
        self.open_button.setEnabled(has and row is not None and row.status != "damaged")
        self.update_button.setEnabled(not self._busy and can_source)
        self.rebuild_button.setEnabled(not self._busy and can_source)
        self.delete_button.setEnabled(not self._busy and has)
        self.folder_button.setEnabled(has)

    def _emit_for_current(self, signal: SignalInstance) -> None:
        name = self.current_name()
        if name:
            signal.emit(name)

    @Slot()
    def show_in_folder(self) -> None:
        """Open the selected index's folder in the system file manager."""
        name = self.current_name()
        if name:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.store.path(name))))

    @Slot(QModelIndex, QModelIndex)
    def _on_current_row_changed(self, _current: QModelIndex, _previous: QModelIndex) -> None:
        self._update_buttons()

    @Slot(QModelIndex)
    def _on_view_activated(self, index: QModelIndex) -> None:
        name = str(index.data(NAME_ROLE) or "")
        if name:
            self.open_requested.emit(name)
