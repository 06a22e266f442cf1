"""The first rows of a TSV corpus file and, for a file with a header, its column mapping."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QListWidget,
    QListWidgetItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine.readers.corpus import ColumnMap, CorpusError, guess_columns, preview_rows
from bm25desk.ui.common.rows_model import RowsModel

TSV_FORMATS = ("tsv-header", "msmarco-docs", "msmarco-passages")
PREVIEW_ROWS = 6
# Column names of the TSV formats without a header row.
_FIXED_COLUMNS = {
    "msmarco-docs": ["docid", "url", "title", "body"],
    "msmarco-passages": ["id", "text"],
}


class TsvMapping(QGroupBox):
    """Shows a TSV file's first rows; for ``tsv-header``, which columns are id, title and text.

    Hidden for every other format. ``changed`` is emitted when the user changes the mapping.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("First rows", parent)
        self.rows_model = RowsModel(self)
        self.rows_view = QTableView()
        self.rows_view.setModel(self.rows_model)
        self.rows_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.rows_view.setWordWrap(False)
        self.rows_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.rows_view.horizontalHeader().setDefaultSectionSize(160)
        self.rows_view.setMinimumHeight(110)
        self.rows_view.setMaximumHeight(170)
        self.id_combo = QComboBox()
        self.title_combo = QComboBox()
        self.text_list = QListWidget()
        self.text_list.setMaximumHeight(90)
        self.text_list.setToolTip("Checked columns are indexed as the text, in this order")
        self.id_combo.currentIndexChanged.connect(self.changed)
        self.title_combo.currentIndexChanged.connect(self.changed)
        self.text_list.itemChanged.connect(self.changed)
        mapping = QFormLayout()
        mapping.addRow("Id column", self.id_combo)
        mapping.addRow("Title column", self.title_combo)
        mapping.addRow("Text columns", self.text_list)
        self.mapping_widget = QWidget()
        self.mapping_widget.setLayout(mapping)
        layout = QVBoxLayout(self)
        layout.addWidget(self.rows_view)
        layout.addWidget(self.mapping_widget)
        self.hide()

    def show_file(self, path: Path | None, fmt: str) -> str:
        """Show ``path``'s first rows when ``fmt`` is a TSV format (else hide).

        Returns why the file cannot be read ("" when it can, or when it is not TSV).
        """
        if path is None or fmt not in TSV_FORMATS or not path.is_file():
            self.hide()
            return ""
        try:
            rows = preview_rows(path, PREVIEW_ROWS)
        except CorpusError as exc:
            self.hide()
            return str(exc)
        if fmt == "tsv-header" and rows:
            header, body = rows[0], rows[1:]
        else:
            header, body = _FIXED_COLUMNS.get(fmt, []), rows
        self.rows_model.set_table(header, body)
        self.mapping_widget.setVisible(fmt == "tsv-header")
        if fmt == "tsv-header":
            self._fill_mapping([h.strip() for h in header])
        self.setTitle("First rows and column mapping" if fmt == "tsv-header" else "First rows")
        self.show()
        return ""

    def columns(self, fmt: str) -> ColumnMap | None:
        """Return the column mapping (``tsv-header`` only; None otherwise)."""
        if fmt != "tsv-header" or self.id_combo.count() == 0:
            return None
        text = tuple(
            self.text_list.item(i).text()
            for i in range(self.text_list.count())
            if self.text_list.item(i).checkState() == Qt.CheckState.Checked
        )
        title = self.title_combo.currentData()
        return ColumnMap(str(self.id_combo.currentData()), text, title)

    def _fill_mapping(self, header: list[str]) -> None:
        """Offer ``header``'s columns with the guessed mapping chosen (``changed`` not emitted)."""
        guess = guess_columns(header)
        for widget in (self.id_combo, self.title_combo, self.text_list):
            widget.blockSignals(True)
        self.id_combo.clear()
        self.title_combo.clear()
        self.title_combo.addItem("(none)", None)
        self.text_list.clear()
        for h in header:
            self.id_combo.addItem(h, h)
            self.title_combo.addItem(h, h)
            item = QListWidgetItem(h)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = guess is not None and h in guess.text
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            self.text_list.addItem(item)
        if guess is not None:
            self.id_combo.setCurrentIndex(self.id_combo.findData(guess.docid))
            self.title_combo.setCurrentIndex(max(0, self.title_combo.findData(guess.title)))
        for widget in (self.id_combo, self.title_combo, self.text_list):
            widget.blockSignals(False)
