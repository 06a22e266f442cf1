"""Search as you type: query box, chips, variant and parameters, results, and the detail area.

Typing is debounced (200 ms); variant and parameter changes re-rank at once. Searches and
explanations run in the background through :class:`LatestOnly`, so the window never waits and a
stale ranking never replaces a fresh one. The selected document stays selected across re-rankings,
so its ledger and plots follow the sliders.
"""

from __future__ import annotations

import re
import time

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QObject,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import QueryError, Searcher, Variant
from bm25desk.ui.colors import TermColors, muted_text
from bm25desk.ui.delegates import ContributionBarDelegate, SnippetDelegate
from bm25desk.ui.detail_panel import DetailPanel
from bm25desk.ui.jobs import JobRunner
from bm25desk.ui.latest_only import LatestOnly
from bm25desk.ui.messages import readable
from bm25desk.ui.query_chips import QueryChips
from bm25desk.ui.results_model import HIT_ROLE, SORT_ROLE, Column, ResultsModel
from bm25desk.ui.search_work import DetailOutcome, SearchOutcome, run_detail, run_search
from bm25desk.ui.variant_picker import VariantPicker, variant_summary

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
    """

    results_shown = Signal(object)
    query_cleared = Signal()
    variant_changed = Signal(object)
    failed = Signal(object)

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
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.resizeSection(Column.RANK, 40)
        header.resizeSection(Column.SCORE, 70)
        header.resizeSection(Column.PARTS, 170)
        header.resizeSection(Column.TITLE, 300)
        header.setSectionResizeMode(Column.SNIPPET, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(Column.SOURCE, 120)
        self.view.verticalHeader().setDefaultSectionSize(
            max(24, self.view.fontMetrics().height() + 8)
        )
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
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
        self.searches.invalidate()
        self.details.invalidate()
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

    def set_query(self, text: str, *, now: bool = True) -> None:
        """Put ``text`` in the query box and search (at once, or after the debounce)."""
        self.query_edit.setText(text)
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
        self._requested_at = time.perf_counter()
        self.searches.request(lambda: run_search(searcher, query, variant, RESULTS_K))

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
        self.model.set_rows(outcome.rows, self._colors)
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
            row = self.model.row_of_docno(keep) if keep is not None else -1
            proxy_row = self.proxy.mapFromSource(self.model.index(max(row, 0), 0)).row()
            self.view.selectRow(proxy_row)
            if row >= 0:
                self.request_detail()  # same document, new ranking: refresh its ledger
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

    def request_detail(self) -> None:
        """Explain the selected document under the current variant (in the background)."""
        searcher, outcome, docno = self.searcher, self._outcome, self._selected_docno
        if searcher is None or outcome is None or docno is None:
            return
        parsed = outcome.result.analysis.parsed
        variant = outcome.result.variant
        self.details.request(lambda: run_detail(searcher, parsed, docno, variant))

    @Slot(object)
    def _on_details_succeeded(self, outcome: DetailOutcome) -> None:
        if outcome.explanation.docno != self._selected_docno:
            return
        self.detail.show_outcome(outcome, self._colors)

    @Slot(object)
    def _on_details_failed(self, exc: BaseException) -> None:
        self.failed.emit(exc)

    # -- helpers ---------------------------------------------------------------------------------

    def _show_empty(self, text: str) -> None:
        self.empty_label.setText(text)
        self.empty_label.setVisible(bool(text))
        self.view.setVisible(not text)

    def _show_formula(self, variant: Variant) -> None:
        cls = type(variant)
        muted = muted_text(self.palette()).name()
        self.formula.setText(
            f"<span style='color:{muted}'><small>{variant_summary(variant)}: "
            f"idf = {cls.idf_formula} · tf part = {cls.tf_formula}</small></span>"
        )

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
