"""Search as you type: query box, chips, variant and parameters, results, and the detail area.

Typing is debounced (200 ms); variant and parameter changes re-rank at once. Searches and
explanations run in the background through :class:`LatestOnly`, so the window never waits and a
stale ranking never replaces a fresh one. The selected document stays selected across re-rankings,
so its ledger and plots follow the sliders.

Relevance feedback: a star marks a result relevant (click it, press Space, or use the context
menu); "Re-rank with feedback" ranks with the RSJ weight in place of the idf, and each row then
shows its rank without feedback and how it moved (see :mod:`bm25desk.ui.search.feedback`).
"""

from __future__ import annotations

import itertools
import re
import time

from PySide6.QtCore import QItemSelection, Qt, Signal, Slot
from PySide6.QtWidgets import QLabel, QMenu, QVBoxLayout, QWidget

from bm25desk.engine import Hit, QueryAnalysis, QueryError, Searcher, Variant
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.messages import readable
from bm25desk.ui.common.variant_picker import VariantPicker
from bm25desk.ui.search.detail_panel import DetailPanel
from bm25desk.ui.search.query_bar import QueryBar
from bm25desk.ui.search.relevance import RelevanceMarks
from bm25desk.ui.search.result_menu import add_document_actions
from bm25desk.ui.search.results_splitter import ResultsSplitter
from bm25desk.ui.search.results_view import ResultsView
from bm25desk.ui.search.snippet_filler import SnippetFiller
from bm25desk.ui.search.work import (
    DetailOutcome,
    SearchOutcome,
    run_detail,
    run_search,
)

RESULTS_K = 100


def empty_index_text(name: str) -> str:
    """Return what the Search tab says for an index without documents."""
    return (
        f"“{name}” has no documents: nothing was indexed from its source. Add documents to it "
        "and Update, or build another index (Ctrl+N)."
    )


def no_results_text(analysis: QueryAnalysis, filtered: bool) -> str:
    """Return why a search listed nothing: what the query asked that no document has.

    "No document contains any of the query terms" only when none does: a query whose terms
    occur but whose phrases, ``+``, ``-`` or ``title:`` parts (or the filters) leave nothing
    says so, naming those parts.
    """
    parsed = analysis.parsed
    if not set(parsed.terms) - set(analysis.unknown):
        return "No document contains any of the query terms."
    parts = ", ".join(c.label for c in parsed.constraints)
    if parts and filtered:
        return f"No document among those the filters keep meets the query's conditions: {parts}."
    if parts:
        return f"No document meets the query's conditions: {parts}."
    if filtered:
        return "No document among those the filters keep contains the query terms."
    return "No document matches the query."


class SearchPanel(RelevanceMarks, QWidget):
    """The Search tab.

    Signals
    -------
    results_shown(object)
        A fresh :class:`SearchOutcome` is on screen.
    query_cleared()
        The query box is empty (or the query has nothing to search for).
    variant_changed(object)
        The chosen :class:`Variant` (with parameters) changed.
    failed(object)
        An unexpected error in a background search (the window reports it).
    marks_changed(object)
        The user changed the current query's :class:`~bm25desk.ui.search.feedback.Marks` (marked or
        unmarked documents, turned feedback on or off).
    status_hint(str)
        A hint for the status bar ("" to clear it).
    explain_requested(int)
        Explain this document (docno) in the Compare tab.
    """

    results_shown = Signal(object)
    query_cleared = Signal()
    variant_changed = Signal(object)
    failed = Signal(object)
    marks_changed = Signal(object)
    status_hint = Signal(str)
    explain_requested = Signal(int)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.searcher: Searcher | None = None
        self._outcome: SearchOutcome | None = None
        self._colors = TermColors()
        self._selected_docno: int | None = None
        self._wanted_docno: int | None = None  # to select when the next ranking arrives
        self._requested_at = 0.0
        self.last_latency = 0.0  # seconds from request to results on screen

        self.searches = LatestOnly(runner, "search", self)
        self.searches.succeeded.connect(self._on_searches_succeeded)
        self.searches.failed.connect(self._on_searches_failed)
        self.details = LatestOnly(runner, "explain", self)
        self.details.succeeded.connect(self._on_details_succeeded)
        self.details.failed.connect(self._on_details_failed)

        self.picker = VariantPicker(self, layout="detached")
        self.picker.combo.setToolTip(
            self.picker.combo.toolTip() + "<br>(Ctrl+] / Ctrl+[ : next / previous)"
        )
        self.picker.variant_changed.connect(self._on_picker_variant_changed)
        self.bar = QueryBar(self.picker)
        self.bar.search_requested.connect(self.search_now)
        self.bar.down_requested.connect(self._on_bar_down_requested)
        self.query_edit = self.bar.query_edit
        self.chips = self.bar.chips
        self.chips.suggestion_chosen.connect(self._on_chips_suggestion_chosen)
        self.debounce = self.bar.debounce
        self.detail = DetailPanel()
        self.splitter = ResultsSplitter(self._make_results(), self.detail)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.bar)
        layout.addWidget(self.splitter, 1)
        self.bar.show_formula(self.picker.variant())
        self._show_empty("Type a query to search.")
        self._chain_focus()

    def _make_results(self) -> QWidget:
        self.view = ResultsView()
        self.model, self.proxy = self.view.results, self.view.proxy
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        self.view.mark_toggled.connect(self.toggle_mark)
        self.view.menu_requested.connect(self._on_view_menu_requested)
        self.snippets = SnippetFiller(self.runner, self.model, self.outcome, self)
        self.snippets.jobs.failed.connect(self._on_details_failed)
        self.mark_action = self.view.mark_action
        self.mark_action.triggered.connect(self.toggle_selected_mark)
        self._make_relevance()
        self.empty_label = QLabel()
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.feedback_bar)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty_label)
        return box

    # -- public API ------------------------------------------------------------------------------

    def set_searcher(self, searcher: Searcher | None) -> None:
        """Search ``searcher``'s index from now on (None: no index open)."""
        self.searcher = searcher
        self.marks.set_index(searcher.index.name if searcher is not None else None)
        self.searches.invalidate()
        self.details.invalidate()
        self.snippets.cancel()
        self._outcome = None
        self._selected_docno = None
        self.model.clear()
        self.detail.clear()
        self.chips.show_hint("")
        self.bar.show_counts(None)
        self.status_hint.emit("")
        self.query_edit.setEnabled(searcher is not None)
        if searcher is None:
            self._show_empty("Open or build an index to search.")
            return
        self._show_empty("")  # the previous index's sentence ("has no documents") goes with it
        self.search_now()

    def variant(self) -> Variant:
        """Return the chosen variant with its parameters."""
        return self.picker.variant()

    def set_variant(self, variant: Variant) -> None:
        """Choose ``variant`` (re-ranks)."""
        self.picker.set_variant(variant)

    def query(self) -> str:
        """Return the query text."""
        return self.query_edit.text()

    def set_query(
        self, text: str, relevant_docids: frozenset[str] = frozenset(), *, now: bool = True
    ) -> None:
        """Put ``text`` in the query box and search (at once, or after the debounce).

        ``relevant_docids`` are documents judged relevant for this query (the Evaluation view's
        judgements): they show with a muted tick, apart from the user's own marks, and can be
        marked relevant in one click. Without them, judgements given earlier for the same query
        stay.
        """
        self.query_edit.setText(text)
        if relevant_docids:
            self.marks.switch(text)
            self._show_marks(self.marks.set_judged(frozenset(relevant_docids)))
        if now:
            self.search_now()

    def outcome(self) -> SearchOutcome | None:
        """Return the results on screen."""
        return self._outcome

    def colors(self) -> TermColors:
        """Return the colours of the current query's terms."""
        return self._colors

    def focus_query(self) -> None:
        """Focus the query box and select its text."""
        self.query_edit.setFocus()
        self.query_edit.selectAll()

    def show_document(self, query: str, docno: int) -> None:
        """Search for ``query`` and explain document ``docno`` (selected if it is listed)."""
        self._wanted_docno = docno
        self.set_query(query)

    def selected_docno(self) -> int | None:
        """Return the selected document."""
        return self._selected_docno

    def select_row(self, row: int) -> None:
        """Select the ``row``-th visible result."""
        if 0 <= row < self.proxy.rowCount():
            self.view.selectRow(row)

    @Slot()
    def search_now(self) -> None:
        """Search for the query box's text with the chosen variant (skipping the debounce)."""
        self.debounce.stop()
        searcher = self.searcher
        if searcher is None:
            return
        query = self.query_edit.text()
        if searcher.index.n_docs == 0:
            self._show_nothing(empty_index_text(searcher.index.name))
            return
        if not query.strip():
            self._show_nothing(
                f"Type a query to search {plural(searcher.index.n_docs, 'document')}."
            )
            return
        variant = self.picker.variant()
        marks = self.marks.peek(query)
        relevant = marks.marked if marks.active else frozenset()
        judged = marks.judged
        self._requested_at = time.perf_counter()
        self.searches.request(
            lambda: run_search(
                searcher, query, variant, RESULTS_K, relevant=relevant, judged=judged
            )
        )

    # -- slots -------------------------------------------------------------------------------

    def _chain_focus(self) -> None:
        """Tab goes query → ranking function → its parameters → results → document → ledger."""
        chain = [
            self.query_edit,
            self.picker.combo,
            *self.picker.params.focus_chain(),
            self.view,
            self.detail.preview.text,
            self.detail.ledger.view,
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    @Slot(object)
    def _on_picker_variant_changed(self, variant: Variant) -> None:
        self._chain_focus()
        self.bar.show_formula(variant)
        self.variant_changed.emit(variant)
        self.search_now()

    @Slot(str, str)
    def _on_chips_suggestion_chosen(self, surface: str, suggestion: str) -> None:
        text = self.query_edit.text()
        pattern = re.compile(rf"(?<!\w){re.escape(surface)}(?!\w)")
        new, n = pattern.subn(suggestion, text, count=1)
        self.set_query(new if n else f"{text} {suggestion}")

    @Slot(object)
    def _on_searches_succeeded(self, outcome: SearchOutcome) -> None:
        result = outcome.result
        previous, self._outcome = self._outcome, outcome
        self._colors = TermColors(result.analysis.terms)
        # A re-ranking of the same query (variant, parameters, feedback) keeps the selected
        # document; a new query starts at rank 1.
        same_query = previous is not None and previous.result.query == result.query
        keep = self._selected_docno if same_query else None
        wanted, self._wanted_docno = self._wanted_docno, None
        keep = keep if wanted is None else wanted
        marks = self.marks.switch(result.query)
        self.model.set_rows(outcome.rows, self._colors)
        self.snippets.fill(self.searcher, outcome)
        self.model.set_marks(marks.marked, marks.judged)
        self.view.arrange_columns()
        self._show_marks(marks)
        self._show_formula(outcome)
        self.chips.show_analysis(result.analysis, self._colors, outcome.suggestions)
        self.last_latency = time.perf_counter() - self._requested_at
        self.bar.show_counts(result, len(outcome.rows))
        if not outcome.rows:
            filtered = self.searcher is not None and self.searcher.filters is not None
            self._show_empty(no_results_text(result.analysis, filtered))
            self.detail.clear()
            self._selected_docno = None
        else:
            self.empty_label.hide()
            self.view.show()
            self.detail.show()
            self._show_feedback_bar()
            row = self.model.row_of_docno(keep) if keep is not None else -1
            index = self.proxy.mapFromSource(self.model.index(max(row, 0), 0))
            self.view.selectRow(index.row())
            self.view.show_row(index.row())
            if row >= 0:
                self.request_detail()  # same document, new ranking: refresh its ledger
            elif wanted is not None:  # asked for, below the listed ranks: explain it anyway
                self.view.clearSelection()
                self._selected_docno = wanted
                self.request_detail()
        self.results_shown.emit(outcome)

    @Slot(object)
    def _on_searches_failed(self, exc: BaseException) -> None:
        self._outcome = None
        self.model.clear()
        self.detail.clear()
        self._selected_docno = None
        if isinstance(exc, QueryError):
            self.chips.show_error(readable(exc))
            self._show_empty("")
            self.bar.show_counts(None)
            self.query_cleared.emit()
            return
        self.chips.show_error(readable(exc))
        self.failed.emit(exc)

    @Slot(QItemSelection, QItemSelection)
    def _on_view_selection_changed(
        self, _selected: QItemSelection, _deselected: QItemSelection
    ) -> None:
        hit = self.view.selected_hit()
        if hit is not None and hit.docno != self._selected_docno:
            self._selected_docno = hit.docno
            self.request_detail()

    @Slot(QMenu, object)
    def _on_view_menu_requested(self, menu: QMenu, hit: Hit | None) -> None:
        if hit is not None:
            marked = hit.docid in self.marks.current.marked
            self.mark_action.setText("Unmark as relevant" if marked else "Mark as relevant")
            menu.addAction(self.mark_action)
            menu.addSeparator()
            add_document_actions(menu, hit, lambda h: self.explain_requested.emit(h.docno))
            menu.addSeparator()
        menu.addAction(self.feedback_action)
        menu.addAction(self.clear_marks_action)

    @Slot()
    def _on_bar_down_requested(self) -> None:
        if self.proxy.rowCount():
            self.view.setFocus()
            if not self.view.selectionModel().hasSelection():
                self.view.selectRow(0)

    def request_detail(self) -> None:
        """Explain the selected document under the current variant (in the background)."""
        searcher, outcome, docno = self.searcher, self._outcome, self._selected_docno
        if searcher is None or outcome is None or docno is None:
            return
        parsed = outcome.result.analysis.parsed
        variant = outcome.result.variant
        feedback = outcome.feedback
        self.details.request(lambda: run_detail(searcher, parsed, docno, variant, feedback))

    @Slot(object)
    def _on_details_succeeded(self, outcome: DetailOutcome) -> None:
        if outcome.explanation.docno != self._selected_docno:
            return
        fb = outcome.feedback
        self.detail.ledger.set_remark(
            ""
            if fb is None
            else f"idf = Robertson/Sparck Jones weight, R = {len(fb.relevant)} marked relevant"
        )
        self.detail.show_outcome(outcome, self._colors)

    @Slot(object)
    def _on_details_failed(self, exc: BaseException) -> None:
        self.failed.emit(exc)

    # -- helpers ---------------------------------------------------------------------------------

    def _show_nothing(self, text: str) -> None:
        """Show no ranking and ``text`` instead (no query, or nothing to search)."""
        self.searches.invalidate()
        self.snippets.cancel()
        self._outcome = None
        self.model.clear()
        self.detail.clear()
        self._selected_docno = None
        self.chips.show_hint("")
        self.bar.show_counts(None)
        self._show_empty(text)
        self.query_cleared.emit()

    def _show_empty(self, text: str) -> None:
        self.empty_label.setText(text)
        self.empty_label.setVisible(bool(text))
        self.view.setVisible(not text)
        self.detail.setVisible(not text)  # no document to explain: the sentence gets the room
        self._show_feedback_bar()

    def _show_formula(self, outcome: SearchOutcome) -> None:
        # The chosen variant, not the ranking's: while a slider is dragged, a ranking of an
        # earlier position may arrive after the line showed the current one.
        feedback = outcome.feedback
        r = len(feedback.relevant) if feedback is not None else None
        self.bar.show_formula(self.picker.variant(), r)
