"""The Evaluation view's Per-query tab: per-query values and one query's drill-down.

Every query's value under every configuration, one query's relevant documents with their full ranks,
and the "why not" of one that missed the top k (its rank, its score's gap to the cut-off, and its
score ledger).
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QItemSelection, QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Searcher
from bm25desk.evaluation.evaluate import ExperimentResult
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.ledger_model import LedgerModel
from bm25desk.ui.common.messages import MessageBar
from bm25desk.ui.common.placeholder import PlaceholderStack
from bm25desk.ui.common.table_model import ROW_ROLE
from bm25desk.ui.common.table_view import compact_rows, make_table
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.common.widgets import column, splitter, text_label
from bm25desk.ui.evaluation.labels import eval_readable, small
from bm25desk.ui.evaluation.query_models import DocColumn, PerQueryModel, RelevantDocsModel
from bm25desk.ui.evaluation.work import EvalInputs, QueryDetail, WhyNot, query_detail, why_not

EMPTY = (
    "Run an evaluation: every query's values appear here. Double-click a query to open it in the "
    "Search tab with its relevant documents marked; select one to see where its relevant "
    "documents ranked, and why a relevant document missed the top k."
)
WHY_EMPTY = (
    "A relevant document outside the top k is explained here: its rank, how far its score is "
    "from the cut-off, and its score ledger."
)


class PerQueryTab(PlaceholderStack):
    """The per-query values and the drill-down into one query.

    Signals
    -------
    open_query_requested(str, object)
        A query text and the ``frozenset`` of its judged-relevant document ids, to open in the
        Search tab with those documents marked.
    """

    open_query_requested = Signal(str, object)

    def __init__(
        self, runner: JobRunner, messages: MessageBar, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent=parent)
        self.messages = messages
        self.searcher: Searcher | None = None
        self._result: ExperimentResult | None = None
        self._inputs = EvalInputs()
        self._detail: QueryDetail | None = None
        self._why: WhyNot | None = None
        self.detail_jobs = LatestOnly(runner, "eval query", self)
        self.detail_jobs.succeeded.connect(self._on_detail_jobs_succeeded)
        self.detail_jobs.failed.connect(self._on_failed)
        self.why_jobs = LatestOnly(runner, "eval why-not", self)
        self.why_jobs.succeeded.connect(self._on_why_jobs_succeeded)
        self.why_jobs.failed.connect(self._on_failed)

        bottom = splitter(Qt.Orientation.Horizontal, self._make_docs(), self._make_why())
        self.splitter = splitter(Qt.Orientation.Vertical, self._make_queries(), bottom)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(self._make_head())
        layout.addWidget(self.splitter, 1)
        self.set_content(content)
        self.show_result(None, EvalInputs())

    def _make_head(self) -> QHBoxLayout:
        self.metric_combo = QComboBox()
        self.metric_combo.currentIndexChanged.connect(self._on_metric_combo_changed)
        self.config_combo = QComboBox()
        self.config_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.config_combo.setToolTip("The configuration whose ranking the drill-down explains")
        self.config_combo.currentIndexChanged.connect(self._on_drill_changed)
        self.cutoff_spin = QSpinBox()
        self.cutoff_spin.setRange(1, 1000)
        self.cutoff_spin.setValue(10)
        self.cutoff_spin.setPrefix("top k = ")
        self.cutoff_spin.setToolTip("A relevant document below this rank gets a “why not”")
        self.cutoff_spin.setKeyboardTracking(False)
        self.cutoff_spin.valueChanged.connect(self._on_drill_changed)
        self.open_query_button = QPushButton("Open in Search")
        self.open_query_button.setToolTip(
            "Search for the selected query with its judged-relevant documents marked"
        )
        self.open_query_button.clicked.connect(self._on_open_query_button_clicked)
        head = QHBoxLayout()
        head.addWidget(QLabel("Metric:"))
        head.addWidget(self.metric_combo)
        head.addSpacing(16)
        head.addWidget(QLabel("Drill down into:"))
        head.addWidget(self.config_combo)
        head.addWidget(self.cutoff_spin)
        head.addStretch(1)
        head.addWidget(self.open_query_button)
        return head

    def _make_queries(self) -> QTableView:
        self.model = PerQueryModel(self)
        self.view, self.proxy = make_table(self.model, compact=True, sort_column=0)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.view.setToolTip("Double-click a query to open it in the Search tab")
        self.view.doubleClicked.connect(self._on_view_double_clicked)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        return self.view

    def _make_docs(self) -> QWidget:
        self.docs_model = RelevantDocsModel(self)
        self.docs_view, self.docs_proxy = make_table(self.docs_model, compact=True, sort_column=0)
        header = self.docs_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.docs_view.selectionModel().selectionChanged.connect(
            self._on_docs_view_selection_changed
        )
        self.docs_title = text_label(rich=True)
        return column(self.docs_title, self.docs_view)

    def _make_why(self) -> QWidget:
        self.why_title = text_label(rich=True, selectable=True)
        self.ledger_model = LedgerModel(self)
        self.ledger_view = QTableView()
        self.ledger_view.setModel(self.ledger_model)
        self.ledger_view.verticalHeader().hide()
        compact_rows(self.ledger_view)
        self.ledger_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.ledger_view.setWordWrap(False)
        self.ledger_view.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )
        self.ledger_text = QPlainTextEdit()
        self.ledger_text.setReadOnly(True)
        self.ledger_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.ledger_text.setFont(mono)
        self.ledger_tabs = QTabWidget()
        self.ledger_tabs.setDocumentMode(True)
        self.ledger_tabs.addTab(self.ledger_text, "Ledger (text)")
        self.ledger_tabs.addTab(self.ledger_view, "Ledger (table)")
        return column(self.why_title, self.ledger_tabs)

    # -- the result ------------------------------------------------------------------------------

    def set_searcher(self, searcher: Searcher | None) -> None:
        """Drill down with ``searcher`` (running look-ups of another index are dropped)."""
        self.searcher = searcher
        self.detail_jobs.invalidate()
        self.why_jobs.invalidate()

    def show_result(self, result: ExperimentResult | None, inputs: EvalInputs) -> None:
        """Show the per-query values of ``result``, run on ``inputs`` (None: the empty state)."""
        self._result, self._inputs = result, inputs
        self._detail = None
        self.docs_model.set_detail(None)
        self._show_why(None)
        for combo in (self.config_combo, self.metric_combo):
            combo.blockSignals(True)
            combo.clear()
        if result is not None:
            for c in result.configs:
                self.config_combo.addItem(variant_summary(c.variant))
            for m in result.metrics:
                self.metric_combo.addItem(m, m)
        for combo in (self.config_combo, self.metric_combo):
            combo.blockSignals(False)
        if result is None:
            self.model.set_result(None, {}, {})
            self.docs_title.setText(
                small("Select a query to see where its relevant documents ranked.", self)
            )
            self.show_placeholder(EMPTY)
            return
        texts = {q.qid: q.text for q in inputs.queries.items} if inputs.queries else {}
        relevant = {q: len(inputs.qrels.relevant(q)) for q in result.qids} if inputs.qrels else {}
        self.model.set_result(result, texts, relevant)
        self._fit_columns()
        self.show_content()

    def _fit_columns(self) -> None:
        """Keep every configuration's column in view: the query text takes what is left.

        A configuration's name is long ("Okapi BM25 (Robertson; rank_bm25)"): its column is as
        wide as its values and its colour, the name elided (whole in the header's tooltip).
        """
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        metrics = self.view.fontMetrics()
        cap = metrics.horizontalAdvance("0.0000") + metrics.horizontalAdvance("M") * 6
        for c in range(3, self.model.columnCount()):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            self.view.resizeColumnToContents(c)
            self.view.setColumnWidth(c, min(self.view.columnWidth(c), cap))

    @Slot()
    def _on_metric_combo_changed(self, *_args: object) -> None:
        metric = self.metric_combo.currentData()
        if metric:
            self.model.set_metric(str(metric))

    # -- one query -------------------------------------------------------------------------------

    def _selected_row(self) -> int:
        rows = self.view.selectionModel().selectedRows()
        return self.proxy.mapToSource(rows[0]).row() if rows else -1

    def select_query(self, qid: str) -> None:
        """Select query ``qid`` in the per-query table (its drill-down follows)."""
        for row in range(self.proxy.rowCount()):
            if self.proxy.index(row, 0).data(ROW_ROLE) == qid:
                self.view.selectRow(row)
                return

    @Slot(QItemSelection, QItemSelection)
    def _on_view_selection_changed(self, *_args: object) -> None:
        self._request_detail()

    @Slot()
    def _on_drill_changed(self, *_args: object) -> None:
        self._request_detail()

    def _request_detail(self) -> None:
        result, searcher, qrels = self._result, self.searcher, self._inputs.qrels
        row = self._selected_row()
        if result is None or searcher is None or qrels is None or row < 0:
            return
        qid, text = self.model.qid(row), self.model.text(row)
        variant = result.configs[max(0, self.config_combo.currentIndex())].variant
        cutoff = self.cutoff_spin.value()
        judgements = dict(qrels.judgements.get(qid, {}))
        self.docs_title.setText(small(f"Ranking the relevant documents of query {qid}…", self))
        self.detail_jobs.request(
            lambda: query_detail(searcher, qid, text, judgements, variant, cutoff)
        )

    @Slot(object)
    def _on_detail_jobs_succeeded(self, detail: QueryDetail) -> None:
        self._detail = detail
        self.docs_model.set_detail(detail)
        # Binary judgements (every grade 1) need no grade column.
        self.docs_view.setColumnHidden(
            DocColumn.RELEVANCE, all(d.relevance == 1 for d in detail.docs)
        )
        in_top = sum(1 for d in detail.docs if d.rank is not None and d.rank <= detail.cutoff)
        text = (
            f"Query <b>{escape(detail.qid)}</b> under <b>{escape(variant_summary(detail.variant))}"
            f"</b>: {in_top} of its {plural(len(detail.docs), 'relevant document')} in the top "
            f"{detail.cutoff} ({detail.n_matches:,} documents match)."
        )
        self.docs_title.setText(
            text + "<br>" + small("Select a document to see its rank and its score ledger.", self)
        )
        # Explain the best-ranked relevant document that missed the cut-off, if any.
        target = next(
            (
                i
                for i in range(self.docs_proxy.rowCount())
                if (d := self.docs_proxy.index(i, 0).data(ROW_ROLE)).in_index
                and (d.rank is None or d.rank > detail.cutoff)
            ),
            0 if self.docs_proxy.rowCount() else -1,
        )
        if target >= 0:
            self.docs_view.selectRow(target)
        else:
            self._show_why(None)

    @Slot(QItemSelection, QItemSelection)
    def _on_docs_view_selection_changed(self, *_args: object) -> None:
        rows = self.docs_view.selectionModel().selectedRows()
        detail, searcher = self._detail, self.searcher
        if not rows or detail is None or searcher is None:
            return
        doc = rows[0].data(ROW_ROLE)
        if not doc.in_index:
            self._show_why(
                None, f"Document {doc.docid} is judged relevant but is not in the index."
            )
            return
        text, variant = detail.text, detail.variant
        cutoff, score = detail.cutoff, detail.cutoff_score
        self.why_jobs.request(lambda: why_not(searcher, text, doc.docid, variant, cutoff, score))

    @Slot(object)
    def _on_why_jobs_succeeded(self, why: WhyNot) -> None:
        self._show_why(why)

    def why(self) -> WhyNot | None:
        """Return the "why not" shown."""
        return self._why

    def _show_why(self, why: WhyNot | None, message: str = "") -> None:
        self._why = why
        if why is None:
            self.ledger_model.set_explanation(None, TermColors())
            self.ledger_text.clear()
            self.why_title.setText(small(escape(message) or WHY_EMPTY, self))
            return
        e = why.explanation
        self.why_title.setText(why_heading(why, self))
        terms = [t.term for t in e.terms if t.term and t.status == "matched"]
        self.ledger_model.set_explanation(e, TermColors(terms))
        self.ledger_view.resizeColumnsToContents()
        self.ledger_text.setPlainText(e.as_text())

    # -- opening a query in Search ---------------------------------------------------------------

    def _open_query(self, source_row: int) -> None:
        qrels = self._inputs.qrels
        if source_row < 0 or qrels is None:
            return
        qid = self.model.qid(source_row)
        self.open_query_requested.emit(self.model.text(source_row), qrels.relevant(qid))

    @Slot(QModelIndex)
    def _on_view_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self._open_query(self.proxy.mapToSource(index).row())

    @Slot()
    def _on_open_query_button_clicked(self) -> None:
        self._open_query(self._selected_row())

    @Slot(object)
    def _on_failed(self, exc: BaseException) -> None:
        self.messages.show_message(eval_readable(exc), "error")


def why_heading(why: WhyNot, widget: QWidget) -> str:
    """Return the "why not" of a relevant document in words (rich text): rank, gap, terms."""
    e = why.explanation
    name = escape(f"{e.docid} “{e.title[:70]}”" if e.title else e.docid)
    k = why.cutoff
    if why.rank is None:
        head = f"<b>Why not {name}?</b> It does not match the query: {escape(e.reason)}."
    elif why.rank <= k:
        head = f"<b>{name}</b> is ranked <b>#{why.rank:,}</b>, inside the top {k}."
    else:
        head = f"<b>Why not {name}?</b> It is ranked <b>#{why.rank:,}</b>"
        if why.cutoff_score is not None and why.gap is not None:
            head += (
                f": its score {e.score:.4f} is <b>{why.gap:.4f}</b> below the "
                f"{k}th hit's {why.cutoff_score:.4f}."
            )
        else:
            head += "."
    if why.rank is None and why.cutoff_score is not None:
        head += f" The {k}th hit scores {why.cutoff_score:.4f}."
    matched = [t for t in e.terms if t.status == "matched"]
    missing = [t.term or t.surface for t in e.terms if t.status == "unmatched"]
    detail = f"{len(matched)} of its query terms occur in it"
    if missing:
        detail += "; missing: " + ", ".join(missing[:8]) + (" …" if len(missing) > 8 else "")
    under = f"{escape(detail)} (under {escape(variant_summary(e.variant))})."
    return f"{head}<br>{small(under, widget)}"
