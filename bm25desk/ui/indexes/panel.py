"""The index list with New, Update, Rebuild, Delete and Show in folder."""

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
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import IndexStore
from bm25desk.ui.indexes.list_model import (
    NAME_ROLE,
    SORT_ROLE,
    Column,
    IndexListModel,
    IndexRow,
    source_status,
)


class IndexPanel(QWidget):
    """Lists the indexes of a store and asks the window to act on them.

    Signals
    -------
    open_requested(str)
        The user selected an index to search.
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
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(Column.NAME, Qt.SortOrder.AscendingOrder)
        self.view.verticalHeader().hide()
        self.view.setWordWrap(False)
        self.view.setShowGrid(False)
        self.view.setAlternatingRowColors(True)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.view.selectionModel().currentRowChanged.connect(self._on_selection_current_row_changed)
        self.view.activated.connect(self._on_view_activated)

        self.new_button = QPushButton("New…")
        self.new_button.setToolTip("Index a folder or a corpus file (Ctrl+N)")
        self.update_button = QPushButton("Update")
        self.update_button.setToolTip(
            "Catch up with the source: new, changed and deleted files of a folder are indexed "
            "incrementally; a changed corpus file is re-read (F5)"
        )
        self.rebuild_button = QPushButton("Rebuild")
        self.rebuild_button.setToolTip(
            "Build the index again from its source, with the same options"
        )
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the index (the source files are not touched)")
        self.folder_button = QPushButton("Show in folder")
        self.folder_button.setToolTip("Open the folder holding the index files")
        self.new_button.clicked.connect(self.new_requested)
        self.update_button.clicked.connect(lambda: self._emit_for_current(self.update_requested))
        self.rebuild_button.clicked.connect(lambda: self._emit_for_current(self.rebuild_requested))
        self.delete_button.clicked.connect(lambda: self._emit_for_current(self.delete_requested))
        self.folder_button.clicked.connect(self.show_in_folder)

        self.empty_label = QLabel("No indexes yet. Click New… or build the sample collection.")
        self.empty_label.setWordWrap(True)

        buttons = QHBoxLayout()
        for b in (
            self.new_button,
            self.update_button,
            self.rebuild_button,
            self.delete_button,
            self.folder_button,
        ):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(buttons)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty_label)
        self._busy = False
        self._refreshing = False
        self._current_open = ""
        self._update_buttons()

    # -- state -----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the store (cheap: manifests and a stat per source)."""
        keep = self.current_name()
        self._refreshing = True
        rows = []
        for name in self.store.names():
            info = self.store.info(name)
            status, detail = source_status(info)
            rows.append(IndexRow(info, status, detail))
        self.model.set_rows(tuple(rows))
        self.empty_label.setVisible(not rows)
        self.view.setVisible(bool(rows))
        if keep or self._current_open:
            self.select(keep or self._current_open, emit=False)
        self._refreshing = False
        self._update_buttons()

    def names(self) -> list[str]:
        """Return the listed index names."""
        return [self.model.index_row(r).info.name for r in range(self.model.rowCount())]

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

    def select(self, name: str, *, emit: bool = True) -> None:
        """Select index ``name`` (and ask to open it when ``emit``)."""
        row = self.model.row_of(name)
        if row < 0:
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        model = self.view.selectionModel()
        model.blockSignals(not emit)
        try:
            self.view.setCurrentIndex(index)
        finally:
            model.blockSignals(False)
        self.view.viewport().update()
        self._update_buttons()

    def set_open_index(self, name: str) -> None:
        """Mark which index the window has open (selected without re-emitting)."""
        self._current_open = name
        self.select(name, emit=False)

    def set_busy(self, busy: bool) -> None:
        """Disable the write actions while a build, update or delete runs."""
        self._busy = busy
        self._update_buttons()

    def _update_buttons(self) -> None:
        row = self.current_row()
        has = row is not None
        self.new_button.setEnabled(not self._busy)
        can_source = has and row is not None and row.status != "missing"
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
    def _on_selection_current_row_changed(
        self, current: QModelIndex, previous: QModelIndex
    ) -> None:
        self._update_buttons()
        name = str(current.data(NAME_ROLE) or "") if current.isValid() else ""
        if name and name != self._current_open and not self._refreshing:
            self.open_requested.emit(name)

    @Slot(QModelIndex)
    def _on_view_activated(self, index: QModelIndex) -> None:
        name = str(index.data(NAME_ROLE) or "")
        if name:
            self.open_requested.emit(name)
