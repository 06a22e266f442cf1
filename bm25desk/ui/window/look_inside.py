"""Looking inside the index from the window: the Terms tab's links, a document's terms, exports.

The Terms tab weighs postings under the Search tab's variant and sends a posting to Search; a
result's right-click menu opens the document's terms and exports the results or the ledger; the
File menu exports what the current tab shows. Every export goes through one
:class:`~bm25desk.ui.common.export_files.Exporter`, whose outcome shows in the message bar.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QMenu

from bm25desk.engine import Hit
from bm25desk.ui.common.export_files import Exporter
from bm25desk.ui.common.export_writers import Writer, ledger_writer, results_writer
from bm25desk.ui.terms.doc_terms_dialog import DocTermsDialog


class LookInside(QObject):
    """Wires the Terms tab, the document-terms window and the exports of the main window ``w``."""

    def __init__(self, w: Any) -> None:
        super().__init__(w)
        self.w = w
        self.exporter = Exporter(w.runner, w)
        self.exporter.saved.connect(self._on_exporter_saved)
        self.exporter.failed.connect(self._on_exporter_failed)
        self.doc_terms = DocTermsDialog(w.runner, w)
        self.doc_terms.export_requested.connect(self.export)
        terms = w.terms_panel
        terms.show_in_search.connect(self._on_terms_show_in_search)
        terms.doc_terms_requested.connect(self.show_doc_terms)
        terms.export_requested.connect(self.export)
        terms.failed.connect(w.show_error)
        search = w.search_panel
        terms.set_variant(search.variant())
        search.variant_changed.connect(terms.set_variant)
        # After the panel's own entries (connected first): the document's terms and the exports.
        search.view.menu_requested.connect(self._on_results_menu_requested)
        copy_menu = search.detail.ledger.copy_button.menu()
        copy_menu.addSeparator()
        self.save_ledger_action = copy_menu.addAction("Save as CSV or JSON…", self.export_ledger)

    # -- exports ---------------------------------------------------------------------------------

    @Slot(str, str, object)
    def export(self, what: str, suggested: str, writer: Writer) -> bool:
        """Ask where, then save ``what`` with ``writer`` in the background (with a Cancel link)."""
        started = self.exporter.export(what, suggested, writer)
        if started:
            self.w.message_bar.show_message(
                f"Saving {what}…", "info", action=("cancel-export", "Cancel")
            )
        return started

    def export_results(self) -> bool:
        """Save the Search tab's results (the current query) to CSV or JSON."""
        outcome = self.w.search_panel.outcome()
        if outcome is None:
            self._say("There are no results to export: type a query first.", "info")
            return False
        result = outcome.result
        name = f"results-{result.query}.csv"
        return self.export(f"the results for “{result.query}”", name, results_writer(result))

    def export_ledger(self) -> bool:
        """Save the selected document's score ledger to CSV or JSON."""
        explanation = self.w.search_panel.detail.ledger.explanation()
        if explanation is None:
            self._say("No document is explained: select a result first.", "info")
            return False
        docid = explanation.docid
        return self.export(
            f"the ledger of {docid}", f"ledger-{docid}.csv", ledger_writer(explanation)
        )

    def export_current(self) -> bool:
        """Save what the current tab shows: the results (Search) or the term list (Terms)."""
        w = self.w
        if w.tabs.currentWidget() is w.terms_panel:
            w.terms_panel.export_terms()
            return True
        return self.export_results()

    @Slot(str)
    def _on_exporter_saved(self, text: str) -> None:
        self._say(text, "info", timeout_ms=10000)

    @Slot(str)
    def _on_exporter_failed(self, text: str) -> None:
        self._say(text, "error")

    def _say(self, text: str, kind: str, timeout_ms: int = 0) -> None:
        self.w.message_bar.show_message(text, kind, timeout_ms=timeout_ms)

    # -- a document's terms, the Terms tab's jump to Search --------------------------------------

    @Slot(int)
    def show_doc_terms(self, docno: int) -> None:
        """Open the window listing document ``docno``'s terms."""
        searcher = self.w.searcher
        if searcher is None:
            return
        self.doc_terms.show_document(searcher, docno, self.w.search_panel.variant())
        self.doc_terms.show()
        self.doc_terms.raise_()

    @Slot(str, int)
    def _on_terms_show_in_search(self, term: str, docno: int) -> None:
        w = self.w
        w.search_panel.show_document(term, docno)
        w.show_tab(w.tabs.indexOf(w.search_panel))

    @Slot(QMenu, object)
    def _on_results_menu_requested(self, menu: QMenu, hit: Hit | None) -> None:
        menu.addSeparator()
        if hit is not None:
            docno = hit.docno
            menu.addAction("Show the document's terms…", lambda: self.show_doc_terms(docno))
            action = menu.addAction("Export its score ledger…", self.export_ledger)
            action.setEnabled(self.w.search_panel.detail.ledger.explanation() is not None)
        menu.addAction("Export the results…", self.export_results)
