"""A window listing one document's terms: tf there, df, idf and weight under the current variant.

Opened from a result's right-click menu (Search) or a posting (Terms). The terms come from the
document's stored text analysed as at build (see :func:`~bm25desk.engine.scoring.browse.
document_terms`), in the background; a note says so when they no longer add up to its length.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Searcher, Variant
from bm25desk.engine.scoring.browse import DocumentTerms
from bm25desk.ui.common.colors import muted_text, status_colors
from bm25desk.ui.common.export_writers import doc_terms_writer
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.messages import readable
from bm25desk.ui.common.table_view import make_table
from bm25desk.ui.common.widgets import text_label
from bm25desk.ui.terms.models import DocTermsModel
from bm25desk.ui.terms.work import load_document_terms


class DocTermsDialog(QDialog):
    """Shows a document's terms, heaviest first (sortable by any column).

    Signals
    -------
    export_requested(str, str, object)
        ``(what, suggested file name, writer)``: save the list (the window asks where).
    """

    export_requested = Signal(str, str, object)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Document's terms")
        self.resize(640, 560)
        self._doc: DocumentTerms | None = None
        self.jobs = LatestOnly(runner, "document terms", self)
        self.jobs.succeeded.connect(self._on_jobs_succeeded)
        self.jobs.failed.connect(self._on_jobs_failed)
        self.head = text_label(rich=True, selectable=True)
        self.model = DocTermsModel(self)
        self.view, self.proxy = make_table(self.model, compact=True)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.view.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save these terms with tf, df, idf and weight (CSV or JSON)")
        self.export_button.clicked.connect(self.export)
        self.export_button.setEnabled(False)
        buttons.addButton(self.export_button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(self.head)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)

    def show_document(self, searcher: Searcher, docno: int, variant: Variant) -> None:
        """Load and show document ``docno``'s terms weighed under ``variant``."""
        self._doc = None
        self.model.clear()
        self.export_button.setEnabled(False)
        self.head.setText("Loading…")
        self.jobs.request(lambda: load_document_terms(searcher, docno, variant))

    def document(self) -> DocumentTerms | None:
        """Return the document shown."""
        return self._doc

    @Slot(object)
    def _on_jobs_succeeded(self, doc: DocumentTerms) -> None:
        self._doc = doc
        self.model.set_rows(doc.rows)
        self.export_button.setEnabled(bool(doc.rows))
        self.setWindowTitle(f"Terms of {doc.docid}")
        muted = muted_text(self.palette()).name()
        note = ""
        if not doc.exact:
            bad = status_colors(self.palette())["warn"].name()
            note = (
                f"<br><span style='color:{bad}'>⚠ The analyser no longer reproduces this "
                "document's stored length (its library changed since the build): the counts "
                "may differ from the index's.</span>"
            )
        self.head.setText(
            f"<b>{escape(doc.docid)}</b> {escape(doc.title)}<br>"
            f"{doc.length:,} tokens, {len(doc.rows):,} distinct terms "
            f"<span style='color:{muted}'>· weights under {escape(doc.variant)}</span>{note}"
        )

    @Slot(object)
    def _on_jobs_failed(self, exc: BaseException) -> None:
        text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else readable(exc)
        self.head.setText(escape(text))

    @Slot()
    def export(self) -> None:
        """Save the document's terms to CSV or JSON."""
        doc = self._doc
        if doc is not None:
            self.export_requested.emit(
                f"the terms of {doc.docid}", f"terms-of-{doc.docid}.csv", doc_terms_writer(doc)
            )
