"""The list of files or records a build skipped, with the reason for each."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import BuildReport
from bm25desk.ui.common.rows_model import RowsModel


class SkipReportDialog(QDialog):
    """Shows :attr:`BuildReport.skipped` as a table (where, reason)."""

    def __init__(self, report: BuildReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Skipped while indexing {report.name!r}")
        counts = "; ".join(f"{n:,} × {reason}" for reason, n in report.skip_reasons.items())
        summary = QLabel(
            f"{len(report.skipped):,} skipped: {counts}"
            if report.skipped
            else "Nothing was skipped."
        )
        summary.setWordWrap(True)
        self.model = RowsModel(self)
        self.model.set_table(("Where", "Reason"), [(s.where, s.reason) for s in report.skipped])
        view = QTableView()
        view.setModel(self.model)
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        view.setWordWrap(False)
        view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        view.horizontalHeader().resizeSection(0, 420)
        view.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(view, 1)
        layout.addWidget(buttons)
        self.resize(760, 420)
