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

import re
import time

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QModelIndex,
    QObject,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import QueryError, Searcher, Variant
from bm25desk.ui.common.colors import TermColors, muted_text
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.messages import readable
from bm25desk.ui.common.variant_picker import VariantPicker, variant_summary
from bm25desk.ui.search.delegates import ContributionBarDelegate, MarkDelegate, SnippetDelegate
from bm25desk.ui.search.detail_panel import DetailPanel
from bm25desk.ui.search.feedback import FeedbackBar, Marks, MarksMemory
from bm25desk.ui.search.query_chips import QueryChips
from bm25desk.ui.search.results_model import (
    FEEDBACK_COLUMNS,
    HIT_ROLE,
    SORT_ROLE,
    VISUAL_ORDER,
    Column,
    ResultsModel,
)
from bm25desk.ui.search.work import (
    DetailOutcome,
    SearchOutcome,
    Snippet,
    cut_snippets,
    run_detail,
    run_search,
)

RESULTS_K = 100
DEBOUNCE_MS = 200


class SearchPanel(QWidget):
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
    """

    results_shown = Signal(object)
    query_cleared = Signal()
    variant_changed = Signal(object)
    failed = Signal(object)
    marks_changed = Signal(object)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.searcher: Searcher | None = None
        self._outcome: SearchOutcome | None = None
        self._colors = TermColors()
        self._selected_docno: int | None = None
        self._requested_at = 0.0
        self.last_latency = 0.0  # seconds from request to results on screen

        self.searches = LatestOnly(runner, "search", self)
        self.searches.succeeded.connect(self._on_searches_succeeded)
        self.searches.failed.connect(self._on_searches_failed)
        self.details = LatestOnly(runner, "explain", self)
        self.details.succeeded.connect(self._on_details_succeeded)
        self.details.failed.connect(self._on_details_failed)
        self.snippets = LatestOnly(runner, "snippets", self)
        self.snippets.succeeded.connect(self._on_snippets_succeeded)
        self.snippets.failed.connect(self._on_details_failed)
        self.marks = MarksMemory()

        # -- query row ---------------------------------------------------------------------------
        self.query_edit = QLineEdit()
        self.query_edit.setPlaceholderText(
            'Search… words; +must  -not  "a phrase"  title:word   (Ctrl+L)'
        )
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.setMinimumWidth(280)
        font = self.query_edit.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.query_edit.setFont(font)
        self.query_edit.textChanged.connect(self._on_query_edit_text_changed)
        self.query_edit.returnPressed.connect(self.search_now)
        self.query_edit.installEventFilter(self)
        self.picker = VariantPicker(self, layout="detached")
        self.picker.combo.setToolTip(
            self.picker.combo.toolTip() + "<br>(Ctrl+] / Ctrl+[ : next / previous)"
        )
        self.picker.variant_changed.connect(self._on_picker_variant_changed)
        self.chips = QueryChips()
        self.chips.suggestion_chosen.connect(self._on_chips_suggestion_chosen)
        self.formula = QLabel()
        self.formula.setWordWrap(True)
        self.status = QLabel()
        self.status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(DEBOUNCE_MS)
        self.debounce.timeout.connect(self.search_now)

        # -- results -----------------------------------------------------------------------------
        self.model = ResultsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(Column.RANK, Qt.SortOrder.AscendingOrder)
        self.view.verticalHeader().hide()
        self.view.setWordWrap(False)
        self.view.setShowGrid(False)
        self.view.setAlternatingRowColors(True)
        self.view.setItemDelegateForColumn(Column.PARTS, ContributionBarDelegate(self.view))
        self.view.setItemDelegateForColumn(Column.SNIPPET, SnippetDelegate(self.view))
        self.view.setItemDelegateForColumn(Column.MARK, MarkDelegate(self.view))
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.resizeSection(Column.RANK, 40)
        header.resizeSection(Column.SCORE, 70)
        header.resizeSection(Column.PARTS, 170)
        header.resizeSection(Column.TITLE, 300)
        header.setSectionResizeMode(Column.SNIPPET, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(Column.SOURCE, 120)
        header.resizeSection(Column.BEFORE, 56)
        header.resizeSection(Column.MOVE, 56)
        self._arrange_columns()
        self.view.verticalHeader().setDefaultSectionSize(
            max(24, self.view.fontMetrics().height() + 8)
        )
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        self.view.clicked.connect(self._on_view_clicked)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._on_view_custom_context_menu_requested)
        self.mark_action = QAction("Mark as relevant", self.view)
        self.mark_action.setShortcut(QKeySequence(Qt.Key.Key_Space))
        self.mark_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.mark_action.triggered.connect(self.toggle_selected_mark)
        self.view.addAction(self.mark_action)
        self.feedback_action = QAction("Re-rank with feedback", self)
        self.feedback_action.setCheckable(True)
        self.feedback_action.triggered.connect(self.set_feedback)
        self.clear_marks_action = QAction("Clear relevance marks", self)
        self.clear_marks_action.triggered.connect(self.clear_marks)
        self.feedback_bar = FeedbackBar()
        self.feedback_bar.feedback_requested.connect(self.set_feedback)
        self.feedback_bar.clear_requested.connect(self.clear_marks)
        self.feedback_bar.judged_requested.connect(self.mark_judged)
        self.empty_label = QLabel()
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)

        self.detail = DetailPanel()

        top = QHBoxLayout()
        top.addWidget(self.query_edit, 1)
        top.addWidget(self.picker.combo, 0)
        info = QHBoxLayout()
        chips_column = QVBoxLayout()
        chips_column.addWidget(self.chips)
        under = QHBoxLayout()
        under.addWidget(self.formula, 1)
        under.addWidget(self.status, 0)
        chips_column.addLayout(under)
        info.addLayout(chips_column, 1)
        info.addWidget(self.picker.params, 0, Qt.AlignmentFlag.AlignTop)
        results_box = QWidget()
        results_layout = QVBoxLayout(results_box)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.setSpacing(2)
        results_layout.addWidget(self.feedback_bar)
        results_layout.addWidget(self.view, 1)
        results_layout.addWidget(self.empty_label)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(results_box)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([250, 560])
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addLayout(top)
        layout.addLayout(info)
        layout.addWidget(self.splitter, 1)
        self._show_formula(self.picker.variant())
        self._show_empty("Type a query to search.")

    # -- public API ------------------------------------------------------------------------------

    def set_searcher(self, searcher: Searcher | None) -> None:
        """Search ``searcher``'s index from now on (None: no index open)."""
        self.searcher = searcher
        self.marks.set_index(searcher.index.name if searcher is not None else None)
        self.searches.invalidate()
        self.details.invalidate()
        self.snippets.invalidate()
        self._outcome = None
        self._selected_docno = None
        self.model.clear()
        self.detail.clear()
        self.query_edit.setEnabled(searcher is not None)
        if searcher is None:
            self.chips.show_hint("")
            self._show_empty("Open or build an index to search.")
            return
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

    def current_marks(self) -> Marks:
        """Return the relevance marks of the query on screen."""
        return self.marks.current

    def toggle_mark(self, docid: str) -> None:
        """Mark document ``docid`` relevant for the current query, or unmark it."""
        self._apply_marks(self.marks.toggle(docid))

    @Slot()
    def toggle_selected_mark(self) -> None:
        """Mark the selected result relevant, or unmark it (Space)."""
        rows = self.view.selectionModel().selectedRows()
        hit = rows[0].data(HIT_ROLE) if rows else None
        if hit is not None:
            self.toggle_mark(hit.docid)

    def mark(self, docids: frozenset[str]) -> None:
        """Mark ``docids`` relevant for the current query."""
        self._apply_marks(self.marks.mark(frozenset(docids)))

    @Slot()
    def mark_judged(self) -> None:
        """Mark every document judged relevant for the current query (those in the index)."""
        missing = self._outcome.missing if self._outcome is not None else frozenset()
        self.mark(self.marks.current.judged - missing)

    @Slot(bool)
    def set_feedback(self, on: bool) -> None:
        """Rank with relevance feedback from the marked documents, or without it."""
        self._apply_marks(self.marks.set_enabled(on))

    @Slot()
    def clear_marks(self) -> None:
        """Remove the user's relevance marks of the current query (plain ranking)."""
        self._apply_marks(self.marks.clear())

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
        if not query.strip():
            self.searches.invalidate()
            self.snippets.invalidate()
            self._outcome = None
            self.model.clear()
            self.detail.clear()
            self._selected_docno = None
            self.chips.show_hint("")
            self.status.setText("")
            self._show_empty(f"Type a query to search {searcher.index.n_docs:,} documents.")
            self.query_cleared.emit()
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

    @Slot(str)
    def _on_query_edit_text_changed(self, _text: str) -> None:
        self.debounce.start()

    @Slot(object)
    def _on_picker_variant_changed(self, variant: Variant) -> None:
        self._show_formula(variant)
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
        self._outcome = outcome
        self._colors = TermColors(result.analysis.terms)
        keep = self._selected_docno
        marks = self.marks.switch(result.query)
        self.model.set_rows(outcome.rows, self._colors)
        self._cut_snippets(outcome)
        self.model.set_marks(marks.marked, marks.judged)
        self._arrange_columns()
        self._show_marks(marks)
        self._show_formula(result.variant)
        self.chips.show_analysis(result.analysis, self._colors, outcome.suggestions)
        self.last_latency = time.perf_counter() - self._requested_at
        shown = len(outcome.rows)
        self.status.setText(
            f"<span style='color:{muted_text(self.palette()).name()}'>"
            f"{result.n_matches:,} of {result.n_docs:,} documents match"
            + (f" · top {shown}" if result.n_matches > shown else "")
            + f" · {result.seconds * 1000:.0f} ms</span>"
        )
        if not outcome.rows:
            self._show_empty("No document contains any of the query terms.")
            self.detail.clear()
            self._selected_docno = None
        else:
            self.empty_label.hide()
            self.view.show()
            self.feedback_bar.show()
            row = self.model.row_of_docno(keep) if keep is not None else -1
            proxy_row = self.proxy.mapFromSource(self.model.index(max(row, 0), 0)).row()
            self.view.selectRow(proxy_row)
            if row >= 0:
                self.request_detail()  # same document, new ranking: refresh its ledger
        self.results_shown.emit(outcome)

    def _cut_snippets(self, outcome: SearchOutcome) -> None:
        """Cut the snippets the ranking left blank, in the background (see SNIPPETS_FIRST)."""
        searcher = self.searcher
        if not outcome.pending or searcher is None:
            self.snippets.invalidate()
            return
        index, pending = searcher.index, outcome.pending
        terms = frozenset(outcome.result.analysis.terms)
        self.snippets.request(lambda: (outcome, cut_snippets(index, pending, terms)))

    @Slot(object)
    def _on_snippets_succeeded(self, payload: tuple[SearchOutcome, dict[int, Snippet]]) -> None:
        outcome, snippets = payload
        if outcome is self._outcome:  # not a ranking replaced meanwhile
            self.model.set_snippets(snippets)

    @Slot(object)
    def _on_searches_failed(self, exc: BaseException) -> None:
        self._outcome = None
        self.model.clear()
        self.detail.clear()
        self._selected_docno = None
        if isinstance(exc, QueryError):
            self.chips.show_error(readable(exc))
            self._show_empty("")
            self.feedback_bar.hide()
            self.status.setText("")
            self.query_cleared.emit()
            return
        self.chips.show_error(readable(exc))
        self.failed.emit(exc)

    @Slot(QItemSelection, QItemSelection)
    def _on_view_selection_changed(
        self, _selected: QItemSelection, _deselected: QItemSelection
    ) -> None:
        rows = self.view.selectionModel().selectedRows()
        if not rows:
            return
        hit = rows[0].data(HIT_ROLE)
        if hit is None:
            return
        if hit.docno != self._selected_docno:
            self._selected_docno = hit.docno
            self.request_detail()

    @Slot(QModelIndex)
    def _on_view_clicked(self, index: QModelIndex) -> None:
        if index.column() == Column.MARK:
            hit = index.data(HIT_ROLE)
            if hit is not None:
                self.toggle_mark(hit.docid)

    @Slot(QPoint)
    def _on_view_custom_context_menu_requested(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        hit = index.data(HIT_ROLE) if index.isValid() else None
        if hit is not None:
            self.view.selectRow(index.row())
            marked = hit.docid in self.marks.current.marked
            self.mark_action.setText("Unmark as relevant" if marked else "Mark as relevant")
            menu.addAction(self.mark_action)
            menu.addSeparator()
        menu.addAction(self.feedback_action)
        menu.addAction(self.clear_marks_action)
        menu.popup(self.view.viewport().mapToGlobal(pos))

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
            else "Relevance feedback: idf = Robertson/Sparck Jones weight from the "
            f"R = {len(fb.relevant)} documents marked relevant"
        )
        self.detail.show_outcome(outcome, self._colors)

    @Slot(object)
    def _on_details_failed(self, exc: BaseException) -> None:
        self.failed.emit(exc)

    # -- helpers ---------------------------------------------------------------------------------

    def _show_empty(self, text: str) -> None:
        self.empty_label.setText(text)
        self.empty_label.setVisible(bool(text))
        self.view.setVisible(not text)
        self.feedback_bar.setVisible(not text)

    def _show_formula(self, variant: Variant) -> None:
        cls = type(variant)
        muted = muted_text(self.palette()).name()
        idf = f"idf = {cls.idf_formula}"
        tip = ""
        outcome = self._outcome
        if outcome is not None and outcome.feedback is not None:
            idf = f"idf → RSJ weight, R = {len(outcome.feedback.relevant)} marked relevant"
            tip = (
                "Relevance feedback: each term's idf is replaced by the Robertson/Sparck Jones "
                "weight ln[(r + 0.5)(N − R − df + r + 0.5) / ((df − r + 0.5)(R − r + 0.5))], "
                "R documents marked relevant, r of them containing the term"
            )
        self.formula.setToolTip(tip)
        self.formula.setText(
            f"<span style='color:{muted}'><small>{variant_summary(variant)}: "
            f"{idf} · tf part = {cls.tf_formula}</small></span>"
        )

    def _arrange_columns(self) -> None:
        """Put the columns in their visual order and show "before" only with feedback.

        Also after a header layout saved by an earlier version (fewer columns) was restored.
        """
        header = self.view.horizontalHeader()
        for visual, col in enumerate(VISUAL_ORDER):
            if header.visualIndex(col) != visual:
                header.moveSection(header.visualIndex(col), visual)
        width = self.view.fontMetrics().height() * 2 + 8
        if header.sectionResizeMode(Column.MARK) != QHeaderView.ResizeMode.Fixed:
            header.setSectionResizeMode(Column.MARK, QHeaderView.ResizeMode.Fixed)
        if header.sectionSize(Column.MARK) != width:
            header.resizeSection(Column.MARK, width)
        on = self.model.has_feedback
        for col in FEEDBACK_COLUMNS:
            if self.view.isColumnHidden(col) == on:
                self.view.setColumnHidden(col, not on)

    def _apply_marks(self, marks: Marks) -> None:
        """Show changed marks; re-rank when the ranking depends on them."""
        outcome = self._outcome
        used = outcome.feedback if outcome is not None else None
        self._show_marks(marks)
        self.marks_changed.emit(marks)
        if marks.active or used is not None:  # feedback turned on, off, or its set changed
            self.search_now()

    def _show_marks(self, marks: Marks) -> None:
        self.model.set_marks(marks.marked, marks.judged)
        self.feedback_bar.show_marks(marks, self._outcome)
        self.feedback_action.setChecked(marks.active)
        self.feedback_action.setEnabled(bool(marks.marked))
        self.clear_marks_action.setEnabled(bool(marks.marked))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Down moves from the query box to the results; Esc clears it (QObject.eventFilter)."""
        if watched is self.query_edit and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key == Qt.Key.Key_Down and self.proxy.rowCount():
                self.view.setFocus()
                if not self.view.selectionModel().hasSelection():
                    self.view.selectRow(0)
                return True
            if key == Qt.Key.Key_Escape and self.query_edit.text():
                self.query_edit.clear()
                return True
        return super().eventFilter(watched, event)
