"""The list of files or records a build skipped, with the whole reason for each.

Files are named relative to the folder they share (``sub/scan.pdf``, not the folder's long path
with the name cut off); the whole path is the tooltip.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import BuildReport
from bm25desk.engine.readers.corpus import Skip
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.table_model import RowTableModel
from bm25desk.ui.common.widgets import text_label


def short_places(skipped: tuple[Skip, ...]) -> list[str]:
    """Return where each skip happened, relative to the folder all of them share."""
    places = [s.where for s in skipped]
    paths = [p.rsplit(":", 1)[0] if _is_line(p) else p for p in places]
    try:
        base = os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""
    except ValueError:  # relative and absolute mixed, or different drives
        base = ""
    if not base:
        return places
    return [os.path.relpath(p, base) if os.path.isabs(p) else p for p in places]


def _is_line(where: str) -> bool:
    head, _, tail = where.rpartition(":")
    return bool(head) and tail.isdigit()


class SkipsModel(RowTableModel[tuple[str, str, str]]):
    """(short place, reason, full place) per skipped file or record."""

    headers = ("File or record", "Why it was skipped")

    def display(self, row: tuple[str, str, str], column: int) -> str:
        """Return the short place or the reason."""
        return row[column]

    def tooltip(self, row: tuple[str, str, str], column: int) -> str:
        """Return the full place, or the reason."""
        return row[2] if column == 0 else row[1]


class SkipReportDialog(QDialog):
    """Shows :attr:`BuildReport.skipped` as a table (where, reason)."""

    def __init__(self, report: BuildReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Skipped while indexing “{report.name}”")
        counts = "; ".join(f"{n:,} × {reason}" for reason, n in report.skip_reasons.items())
        summary = text_label(
            f"{plural(len(report.skipped), 'file or record', 'files or records')} skipped: {counts}"
            if report.skipped
            else "Nothing was skipped."
        )
        self.model = SkipsModel(self)
        places = short_places(report.skipped)
        self.model.set_rows(
            [(p, s.reason, s.where) for p, s in zip(places, report.skipped, strict=True)]
        )
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(True)
        self.view.setTextElideMode(Qt.TextElideMode.ElideLeft)  # keep the file name in view
        self.view.verticalHeader().hide()
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(0, min(340, max(160, self.view.sizeHintForColumn(0) + 16)))
        self.view.resizeRowsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        self.resize(760, 420)
