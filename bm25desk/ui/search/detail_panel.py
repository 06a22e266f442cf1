"""Why this document: the preview beside the score ledger and the live plots."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from bm25desk.ui.common.colors import TermColors
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
        self.right = QSplitter(Qt.Orientation.Horizontal)
        self.right.addWidget(self.ledger)
        self.right.addWidget(self.plots)
        self.right.setStretchFactor(0, 3)
        self.right.setStretchFactor(1, 2)
        self.right.setSizes([600, 400])
        self.right.setChildrenCollapsible(False)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.preview)
        self.splitter.addWidget(self.right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([250, 750])
        self.splitter.setChildrenCollapsible(False)
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
