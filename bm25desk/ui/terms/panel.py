"""The Terms tab: the index's terms by df/cf with a prefix filter, and a term's postings.

Select a term to list its documents with tf, length and the term's score contribution under the
Search tab's ranking function and parameters; double-click a document (or press Enter) to see it
explained in Search. Both lists load a page at a time in the background (see
:mod:`bm25desk.ui.terms.models`); the engine sorts, so a header click sorts every row.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QItemSelection, QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Searcher, Variant
from bm25desk.ui.common.colors import muted_text
from bm25desk.ui.common.export_writers import postings_writer, terms_writer
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.hidden_tab import LoadsWhenShown
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.table_model import ROW_ROLE
from bm25desk.ui.common.table_view import paged_table
from bm25desk.ui.common.widgets import splitter, text_label
from bm25desk.ui.terms.models import PostingsModel, TermsModel
from bm25desk.ui.terms.work import (
    PostingsLoad,
    PostingsRequest,
    TermsLoad,
    TermsRequest,
    load_postings,
    load_terms,
)

DESCENDING, ASCENDING = Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder


class TermsPanel(LoadsWhenShown, QWidget):
    """Browses an index's vocabulary and postings.

    Signals
    -------
    show_in_search(str, int)
        Show document ``docno`` explained for the one-word query ``term`` in the Search tab.
    doc_terms_requested(int)
        Show the terms of document ``docno``.
    export_requested(str, str, object)
        ``(what, suggested file name, writer)``: save a list (the window asks where).
    failed(object)
        An unexpected error in a background load.
    """

    show_in_search = Signal(str, int)
    doc_terms_requested = Signal(int)
    export_requested = Signal(str, str, object)
    failed = Signal(object)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.searcher: Searcher | None = None
        self.variant: Variant | None = None
        self._terms = TermsRequest()
        self._postings: PostingsRequest | None = None
        self._index_term = ""  # the listed postings' term as indexed (a word is analysed)
        self._stale = False  # the variant changed while the tab was hidden
        self.term_jobs = LatestOnly(runner, "terms", self)
        self.term_jobs.succeeded.connect(self._on_term_jobs_succeeded)
        self.term_jobs.failed.connect(self._on_term_jobs_failed)
        self.posting_jobs = LatestOnly(runner, "postings", self)
        self.posting_jobs.succeeded.connect(self._on_posting_jobs_succeeded)
        self.posting_jobs.failed.connect(self._on_posting_jobs_failed)
        self.splitter = splitter(
            Qt.Orientation.Horizontal,
            self._make_terms(),
            self._make_postings(),
            stretch=(2, 3),
            sizes=(520, 780),
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.splitter)

    def _make_terms(self) -> QGroupBox:
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Terms starting with…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_timer = QTimer(self, singleShot=True, interval=200)
        self.filter_timer.timeout.connect(self._on_filter_timer_timeout)
        self.filter_edit.textChanged.connect(lambda _t: self.filter_timer.start())
        self.terms_count = QLabel()
        self.terms_model = TermsModel(self)
        self.terms_model.more_wanted.connect(self._load_terms)
        self.terms_view = paged_table(self.terms_model)
        self.terms_view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.terms_view.horizontalHeader().setSortIndicator(2, DESCENDING)
        self.terms_view.horizontalHeader().sectionClicked.connect(self._on_terms_header_clicked)
        self.terms_view.selectionModel().selectionChanged.connect(self._on_terms_selection_changed)
        self.export_terms_button = QPushButton("Export…")
        self.export_terms_button.setToolTip("Save every listed term with df and cf (CSV or JSON)")
        self.export_terms_button.clicked.connect(self.export_terms)
        foot = QHBoxLayout()
        foot.addWidget(self.terms_count, 1)
        foot.addWidget(self.export_terms_button)
        box = QGroupBox("Terms")
        layout = QVBoxLayout(box)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.terms_view, 1)
        layout.addLayout(foot)
        return box

    def _make_postings(self) -> QGroupBox:
        self.postings_head = text_label(rich=True, selectable=True)
        self.postings_model = PostingsModel(self)
        self.postings_model.more_wanted.connect(self._load_postings)
        self.postings_view = paged_table(self.postings_model)
        header = self.postings_view.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSortIndicator(4, DESCENDING)
        header.sectionClicked.connect(self._on_postings_header_clicked)
        self.postings_view.activated.connect(self._on_postings_view_activated)
        self.postings_view.setToolTip("Double-click or press Enter: see the document in Search")
        self.postings_count = QLabel()
        self.doc_terms_button = QPushButton("Document's terms")
        self.doc_terms_button.setToolTip("The selected document's terms with tf and weight")
        self.doc_terms_button.clicked.connect(self._on_doc_terms_button_clicked)
        self.search_button = QPushButton("Show in Search")
        self.search_button.setToolTip("Search for the term and explain the selected document")
        self.search_button.clicked.connect(self._on_search_button_clicked)
        self.export_postings_button = QPushButton("Export…")
        self.export_postings_button.setToolTip(
            "Save every posting of the term in this order (CSV or JSON)"
        )
        self.export_postings_button.clicked.connect(self.export_postings)
        foot = QHBoxLayout()
        foot.addWidget(self.postings_count, 1)
        for button in (self.doc_terms_button, self.search_button, self.export_postings_button):
            foot.addWidget(button)
        self.postings_box = QGroupBox("Postings")
        layout = QVBoxLayout(self.postings_box)
        layout.addWidget(self.postings_head)
        layout.addWidget(self.postings_view, 1)
        layout.addLayout(foot)
        self.postings_head.setText("Select a term to list the documents that contain it.")
        return self.postings_box

    # -- inputs ----------------------------------------------------------------------------------

    def set_searcher(self, searcher: Searcher | None) -> None:
        """Browse ``searcher``'s index (loaded when the tab is visible)."""
        self.searcher = searcher
        self.term_jobs.invalidate()
        self.terms_model.reset()
        self.terms_count.setText("")
        self._clear_postings("Select a term to list the documents that contain it.")
        self.refresh()

    def _clear_postings(self, message: str) -> None:
        """Show no term's postings, ``message`` in their place."""
        self._postings = None
        self._index_term = ""
        self.posting_jobs.invalidate()
        self.postings_model.reset()
        self.postings_count.setText("")
        self.postings_head.setText(message)
        self._update_buttons()

    def set_variant(self, variant: Variant) -> None:
        """Weigh postings under ``variant`` (the Search tab's choice) from now on."""
        self.variant = variant
        if self._postings is not None:
            self._postings = PostingsRequest(
                self._postings.term, variant, self._postings.sort, self._postings.ascending
            )
            # Dragging a slider in Search re-weighs nothing here until the tab is shown.
            self._stale = not self._active
            if self._active:
                self._reload_postings()

    def set_active(self, active: bool) -> None:
        """Load only while the tab is visible (postings of a changed variant included)."""
        super().set_active(active)
        if active and self._stale:
            self._stale = False
            self._reload_postings()

    def refresh(self) -> None:
        """List the terms again from the first page (deferred while the tab is hidden)."""
        if self.deferred():
            return
        if self.searcher is None:
            return
        self.terms_model.reset()
        self.terms_count.setText("Loading…")
        self._load_terms(0)

    def show_term(self, term: str) -> None:
        """List ``term``'s postings (the word is analysed if it is not an index term)."""
        if self.variant is None or self.searcher is None:
            return
        old = self._postings
        sort, asc = (old.sort, old.ascending) if old is not None else ("contribution", None)
        self._postings = PostingsRequest(term, self.variant, sort, asc)
        self._reload_postings()

    def term(self) -> str:
        """Return the term whose postings are listed ("" when none)."""
        return self._postings.term if self._postings is not None else ""

    def selected_docno(self) -> int | None:
        """Return the selected posting's document."""
        index = self.postings_view.currentIndex()
        return int(index.data(ROW_ROLE)) if index.isValid() else None

    # -- loading ---------------------------------------------------------------------------------

    @Slot(int)
    def _load_terms(self, offset: int) -> None:
        searcher, request = self.searcher, self._terms
        if searcher is None:
            return
        generation = self.terms_model.generation
        index = searcher.index
        self.term_jobs.request(lambda: (generation, load_terms(index, request, offset)))

    @Slot(int)
    def _load_postings(self, offset: int) -> None:
        searcher, request = self.searcher, self._postings
        if searcher is None or request is None:
            return
        generation = self.postings_model.generation
        self.posting_jobs.request(lambda: (generation, load_postings(searcher, request, offset)))

    def _reload_postings(self) -> None:
        self.postings_model.reset()
        self._index_term = ""
        self.postings_count.setText("Loading…")
        self._update_buttons()
        self._load_postings(0)

    @Slot()
    def _on_filter_timer_timeout(self) -> None:
        self._terms = TermsRequest(self.filter_edit.text().strip(), self._terms.sort)
        self.refresh()

    @Slot(object)
    def _on_term_jobs_succeeded(self, result: tuple[int, TermsLoad]) -> None:
        generation, load = result
        page = load.page
        if not self.terms_model.add_page(generation, page.offset, page.rows, page.total):
            return
        prefix = load.request.prefix
        what = plural(page.total, "term")
        if not page.total and not prefix and self.searcher is not None:
            name = escape(self.searcher.index.name)
            self.postings_head.setText(f"“{name}” has no documents: there are no terms to list.")
        elif not page.total and self._postings is not None:
            # The list is empty: postings of a term no longer listed would look like its answer.
            self._clear_postings(
                f"No term starts with “{escape(prefix)}”: change or clear the filter above."
            )
        self.terms_count.setText(
            f"{what} starting with “{prefix}”" if prefix else f"{what} in the index"
        )
        self._update_buttons()
        if page.offset == 0 and page.rows:  # keep the listed term if it is here, else the first
            listed = [r.term for r in page.rows]
            term = self._index_term or self.term()
            self.terms_view.selectRow(listed.index(term) if term in listed else 0)

    @Slot(object)
    def _on_term_jobs_failed(self, exc: BaseException) -> None:
        self.terms_model.page_failed()
        self.terms_count.setText("")
        self.failed.emit(exc)

    @Slot(object)
    def _on_posting_jobs_succeeded(self, result: tuple[int, PostingsLoad]) -> None:
        generation, load = result
        page = load.page
        if not self.postings_model.add_page(generation, page.offset, load.items, page.total):
            return
        if page.offset == 0:
            self._index_term = page.term
            self.postings_head.setText(self._describe(load))
            if load.items:
                self.postings_view.selectRow(0)
        shown = self.postings_model.rowCount()
        self.postings_count.setText(
            f"{shown:,} of {plural(page.total, 'document')} loaded (scroll for more)"
            if shown < page.total
            else plural(page.total, "document")
        )
        self._update_buttons()

    @Slot(object)
    def _on_posting_jobs_failed(self, exc: BaseException) -> None:
        self.postings_model.page_failed()
        self.postings_count.setText("")
        if isinstance(exc, KeyError):  # a word that is in no document: say so, not an error
            self.postings_head.setText(escape(str(exc.args[0])))
            self._update_buttons()
            return
        self.failed.emit(exc)

    def _describe(self, load: PostingsLoad) -> str:
        p = load.page
        muted = muted_text(self.palette()).name()
        # bm25f counts df and cf over its scored fields, not the text alone as the term list does
        scope = f" over {escape(' + '.join(p.fields))}" if p.fields != ("text",) else ""
        return (
            f"<b>{escape(p.term)}</b>: df = {p.df:,}, cf = {p.cf:,}{scope}, idf = {p.idf:.4f} "
            f"<span style='color:{muted}'>({escape(p.idf_text)})</span><br>"
            f"<span style='color:{muted}'>contributions under {escape(p.variant)}</span>"
        )

    def _update_buttons(self) -> None:
        has_doc = self.postings_model.rowCount() > 0
        self.doc_terms_button.setEnabled(has_doc)
        self.search_button.setEnabled(has_doc)
        self.export_postings_button.setEnabled(has_doc)
        self.export_terms_button.setEnabled(self.terms_model.rowCount() > 0)

    # -- user actions ----------------------------------------------------------------------------

    @Slot(QItemSelection, QItemSelection)
    def _on_terms_selection_changed(self, _sel: QItemSelection, _desel: QItemSelection) -> None:
        index = self.terms_view.currentIndex()
        rows = self.terms_view.selectionModel().selectedRows()
        if rows:
            index = rows[0]
        term = index.data(ROW_ROLE) if index.isValid() else None
        if term and term != self.term():
            self.show_term(str(term))

    @Slot(int)
    def _on_terms_header_clicked(self, column: int) -> None:
        key = self.terms_model.sort_key_of(column) or "cf"
        self.terms_view.horizontalHeader().setSortIndicator(
            ("term", "df", "cf").index(key), ASCENDING if key == "term" else DESCENDING
        )
        if key != self._terms.sort:
            self._terms = TermsRequest(self._terms.prefix, key)
            self.refresh()

    @Slot(int)
    def _on_postings_header_clicked(self, column: int) -> None:
        request = self._postings
        header = self.postings_view.horizontalHeader()
        key = self.postings_model.sort_key_of(column)
        if request is None or key is None:  # the title column does not sort: keep the order
            keys = self.postings_model.sort_keys
            old = request.sort if request is not None else "contribution"
            asc = request is not None and request.ascending
            header.setSortIndicator(keys.index(old), ASCENDING if asc else DESCENDING)
            return
        default_asc = key == "docno"
        current = request.ascending if request.ascending is not None else request.sort == "docno"
        ascending = (not current) if key == request.sort else default_asc
        header.setSortIndicator(column, ASCENDING if ascending else DESCENDING)
        self._postings = PostingsRequest(request.term, request.variant, key, ascending)
        self._reload_postings()

    @Slot(QModelIndex)
    def _on_postings_view_activated(self, index: QModelIndex) -> None:
        if index.isValid() and self._postings is not None:
            self.show_in_search.emit(self._index_term, int(index.data(ROW_ROLE)))

    @Slot()
    def _on_search_button_clicked(self) -> None:
        self._on_postings_view_activated(self.postings_view.currentIndex())

    @Slot()
    def _on_doc_terms_button_clicked(self) -> None:
        docno = self.selected_docno()
        if docno is not None:
            self.doc_terms_requested.emit(docno)

    @Slot()
    def export_terms(self) -> None:
        """Save every listed term (the prefix and sort shown) to CSV or JSON."""
        searcher, request = self.searcher, self._terms
        if searcher is None:
            return
        stem = f"{searcher.index.name}-terms" + (f"-{request.prefix}" if request.prefix else "")
        self.export_requested.emit(
            "the term list",
            f"{stem}.csv",
            terms_writer(searcher.index, request.sort, request.prefix),
        )

    @Slot()
    def export_postings(self) -> None:
        """Save every posting of the listed term (in the order shown) to CSV or JSON."""
        searcher, request = self.searcher, self._postings
        if searcher is None or request is None or not self.postings_model.rowCount():
            return
        term = self._index_term
        self.export_requested.emit(
            f"the postings of “{term}”",
            f"{searcher.index.name}-postings-{term}.csv",
            postings_writer(searcher, term, request.variant, request.sort, request.ascending),
        )
