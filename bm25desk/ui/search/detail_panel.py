"""Why this document: the preview beside the score ledger and the live plots."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.common.widgets import splitter
from bm25desk.ui.search.ledger_panel import LedgerPanel
from bm25desk.ui.search.plots import PlotsPanel
from bm25desk.ui.search.preview import PreviewPanel
from bm25desk.ui.search.work import DetailOutcome


class DetailPanel(QWidget):
    """Preview | ledger | plots (stacked), in splitters whose sizes the window remembers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preview = PreviewPanel()
        self.ledger = LedgerPanel()
        self.plots = PlotsPanel()
        self.right = splitter(
            Qt.Orientation.Horizontal,
            self.ledger,
            self.plots,
            stretch=(3, 2),
            sizes=(600, 400),
            collapsible=False,
        )
        self.splitter = splitter(
            Qt.Orientation.Horizontal,
            self.preview,
            self.right,
            stretch=(1, 3),
            sizes=(250, 750),
            collapsible=False,
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self._outcome: DetailOutcome | None = None
        self._colors = TermColors()

    def outcome(self) -> DetailOutcome | None:
        """Return what is shown."""
        return self._outcome

    def show_outcome(self, outcome: DetailOutcome, colors: TermColors) -> None:
        """Show one document's preview, ledger and plots."""
        self._outcome = outcome
        doc = self.preview.document()
        if (
            doc is None
            or doc.docno != outcome.document.docno
            or doc.spans != outcome.document.spans
            or colors != self._colors
        ):
            self.preview.set_document(outcome.document, colors)
        self._colors = colors
        self.ledger.set_explanation(outcome.explanation, colors)
        self.plots.set_data(outcome.plots, colors)

    def clear(self) -> None:
        """Show nothing."""
        self._outcome = None
        self.preview.clear()
        self.ledger.set_explanation(None, TermColors())
        self.plots.set_data(None, TermColors())
