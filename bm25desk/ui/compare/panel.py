"""The Compare tab: two configurations on the search tab's query, side by side."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QItemSelection, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Searcher, Variant, get_variant
from bm25desk.engine.scoring.query import ParsedQuery
from bm25desk.engine.scoring.variants import _g
from bm25desk.ui.common.colors import TermColors, muted_text
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.plain_text import plain_tooltip
from bm25desk.ui.common.table_model import ROW_ROLE
from bm25desk.ui.common.table_view import make_table
from bm25desk.ui.common.variant_picker import VariantPicker, variant_summary
from bm25desk.ui.common.widgets import column, combo_box, splitter, text_label
from bm25desk.ui.compare.models import CompareModel, HeatmapModel, TermDeltaModel
from bm25desk.ui.compare.work import (
    CompareOutcome,
    DocDelta,
    compare_row,
    doc_delta,
    run_compare,
)

TAU_TIP = (
    "Kendall's τ-b compares the order of the documents in either top k under A and under B, "
    "each at its full rank (a document that does not match at all ranks last). Pairs tied "
    "under A or under B (both not matching) count neither for nor against; τ-b divides by the "
    "pairs not tied in each ranking, so 1 means the same order and −1 the reverse."
)
TITLE_CHARS = 120  # the delta's title wraps onto two lines at most; the whole of it is its tooltip
DELTA_EMPTY = "Select a document to see its score change, term by term."


class ComparePanel(QWidget):
    """Ranks the current query under configurations A and B and explains the differences.

    Signals
    -------
    None; errors go to :attr:`failed` of its :class:`LatestOnly` jobs, which the window connects.
    """

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.searcher: Searcher | None = None
        self._parsed: ParsedQuery | None = None
        self._outcome: CompareOutcome | None = None
        self._colors = TermColors()
        self._active = False
        self._dirty = False
        self._wanted: int | None = None  # a document the user asked to explain (Search's menu)

        self.jobs = LatestOnly(runner, "compare", self)
        self.jobs.succeeded.connect(self._on_jobs_succeeded)
        self.delta_jobs = LatestOnly(runner, "compare-delta", self)
        self.delta_jobs.succeeded.connect(self._on_delta_jobs_succeeded)

        self.query_label = text_label(rich=True)
        self.summary = text_label(rich=True)
        self.summary.setToolTip(TAU_TIP)
        middle = splitter(
            Qt.Orientation.Horizontal, self._make_rankings(), self._make_delta(), stretch=(3, 2)
        )
        self.splitter = splitter(
            Qt.Orientation.Vertical, middle, self._make_heatmap(), stretch=(3, 2)
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.query_label)
        layout.addLayout(self._make_configs())
        layout.addWidget(self.summary)
        layout.addWidget(self.splitter, 1)
        self._show_query()

    def _make_configs(self) -> QHBoxLayout:
        self.k_spin = QSpinBox()
        self.k_spin.setRange(3, 100)
        self.k_spin.setValue(10)
        self.k_spin.setPrefix("top k = ")
        self.k_spin.setToolTip("How many results of each ranking to compare")
        self.k_spin.valueChanged.connect(self._on_config_changed)
        self.picker_a = VariantPicker(layout="row")
        self.picker_b = VariantPicker(layout="row")
        self.picker_a.set_variant(get_variant("lucene"))
        self.picker_b.set_variant(get_variant("bm25l"))
        configs = QHBoxLayout()
        for title, picker in (("A", self.picker_a), ("B", self.picker_b)):
            picker.variant_changed.connect(self._on_config_changed)
            box = QGroupBox(title)
            QVBoxLayout(box).addWidget(picker)
            configs.addWidget(box, 1)
        configs.addWidget(self.k_spin, 0, Qt.AlignmentFlag.AlignBottom)
        return configs

    def _make_rankings(self) -> QTableView:
        self.model = CompareModel(self)
        self.view, self.proxy = make_table(self.model)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        return self.view

    def _make_delta(self) -> QWidget:
        self.delta_model = TermDeltaModel(self)
        self.delta_view, _ = make_table(self.delta_model)  # unsorted: query order
        self.delta_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.delta_title = text_label(DELTA_EMPTY, rich=True)
        return column(self.delta_title, self.delta_view)

    def _make_heatmap(self) -> QWidget:
        self.heat_model = HeatmapModel(self)
        self.heat_view = QTableView()
        self.heat_view.setModel(self.heat_model)
        self.heat_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.heat_view.setShowGrid(True)
        self.heat_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.heat_view.horizontalHeader().setMinimumSectionSize(44)
        self.heat_which = combo_box((("A", "a"), ("B", "b")))
        self.heat_which.currentIndexChanged.connect(self._show_heat)
        head = QHBoxLayout()
        head.addWidget(
            QLabel(
                "Term × document heatmap: contribution of each query term to "
                "each of the top k documents of"
            )
        )
        head.addWidget(self.heat_which)
        head.addStretch(1)
        return column(head, self.heat_view)

    # -- inputs ----------------------------------------------------------------------------------

    def set_searcher(self, searcher: Searcher | None) -> None:
        """Compare on ``searcher``'s index."""
        self.searcher = searcher
        self._parsed = None
        self._wanted = None
        self.jobs.invalidate()
        self._clear()
        self._show_query()

    def set_query(self, parsed: ParsedQuery | None) -> None:
        """Compare on ``parsed`` (the search tab's query; None: no query)."""
        if parsed is None or self._parsed is None or parsed.text != self._parsed.text:
            self._wanted = None
        self._parsed = parsed
        self._show_query()
        self.refresh()

    def set_active(self, active: bool) -> None:
        """Compute only while the tab is visible (catch up when it is shown)."""
        self._active = active
        if active and self._dirty:
            self.refresh()

    def set_configs(self, a: Variant, b: Variant) -> None:
        """Choose the two configurations."""
        self.picker_a.set_variant(a)
        self.picker_b.set_variant(b)

    def outcome(self) -> CompareOutcome | None:
        """Return the comparison shown."""
        return self._outcome

    def refresh(self) -> None:
        """Recompute the comparison (deferred while the tab is hidden)."""
        if not self._active:
            self._dirty = True
            return
        self._dirty = False
        searcher, parsed = self.searcher, self._parsed
        if searcher is None or parsed is None or not parsed.scored or not searcher.index.n_docs:
            self.jobs.invalidate()
            self._clear()
            return
        a, b, k = self.picker_a.variant(), self.picker_b.variant(), self.k_spin.value()
        self.jobs.request(lambda: run_compare(searcher, parsed, a, b, k))

    # -- outputs ---------------------------------------------------------------------------------

    def _clear(self) -> None:
        self._outcome = None
        self.delta_jobs.invalidate()
        self.model.set_rows(())
        self.delta_model.set_delta(None, TermColors())
        # An empty index has no document to select: the query line says why, the pane is blank.
        searcher = self.searcher
        empty = searcher is None or searcher.index.n_docs == 0
        self.delta_title.setText("" if empty else DELTA_EMPTY)
        self.delta_title.setToolTip("")
        self.heat_model.set_heat((), (), TermColors())
        self.summary.setText("")

    def _show_query(self) -> None:
        muted = muted_text(self.palette()).name()
        searcher = self.searcher
        if searcher is not None and searcher.index.n_docs == 0:
            self.query_label.setText(
                f"<span style='color:{muted}'>“{escape(searcher.index.name)}” has no documents: "
                "there is nothing to compare.</span>"
            )
        elif self._parsed is None:
            self.query_label.setText(
                f"<span style='color:{muted}'>Type a query on the Search tab: it is ranked here "
                "under two configurations.</span>"
            )
        else:
            self.query_label.setText(f"Query: <b>{escape(self._parsed.text)}</b>")

    @Slot()
    def _on_config_changed(self, *_args: object) -> None:
        self.refresh()

    @Slot(object)
    def _on_jobs_succeeded(self, outcome: CompareOutcome) -> None:
        self._outcome = outcome
        self._colors = TermColors(outcome.terms)
        self.model.set_rows(outcome.rows)
        k = outcome.k
        n_a = len(outcome.result_a.hits)
        entered = sum(1 for r in outcome.rows if r.movement == "entered")
        left = sum(1 for r in outcome.rows if r.movement == "left")
        moved = sum(1 for r in outcome.rows if r.movement in ("up", "down"))
        tau = "—" if outcome.tau is None else f"{outcome.tau:.3f}"
        denom = max(1, min(k, n_a))
        self.summary.setText(
            f"<b>overlap@{k} = {outcome.overlap}/{denom}</b> ({outcome.overlap / denom:.0%}) · "
            f"<b>Kendall τ-b = {tau}</b> over the {len(outcome.rows)} documents in either top {k} "
            f"(ties counted as τ-b does) · {moved} moved, {entered} entered, {left} left"
            f"<br><small>A = {escape(variant_summary(outcome.variant_a))} &nbsp;·&nbsp; "
            f"B = {escape(variant_summary(outcome.variant_b))}</small>"
        )
        self._show_heat()
        moved_row = next(
            (
                i
                for i in range(self.proxy.rowCount())
                if self.proxy.index(i, 0).data(ROW_ROLE).movement != "same"
            ),
            0,
        )
        wanted = self._row_of(self._wanted) if self._wanted is not None else -1
        if wanted < 0 and self._wanted is not None:
            self._explain(self._wanted)  # asked for, outside both top k
        elif self.proxy.rowCount():
            self.view.selectRow(wanted if wanted >= 0 else moved_row)
        else:
            self.delta_model.set_delta(None, self._colors)

    def show_document(self, docno: int) -> None:
        """Explain document ``docno``'s change from A to B (selected if it is listed)."""
        self._wanted = docno
        row = self._row_of(docno)
        if row >= 0:
            self.view.selectRow(row)
        elif self._outcome is not None:
            self._explain(docno)
        else:
            self.refresh()  # the comparison will select it when it arrives

    def _row_of(self, docno: int) -> int:
        for i in range(self.proxy.rowCount()):
            if self.proxy.index(i, 0).data(ROW_ROLE).docno == docno:
                return i
        return -1

    def _explain(self, docno: int) -> None:
        """Explain a document that is in neither top k (its ranks are computed too)."""
        o, searcher, parsed = self._outcome, self.searcher, self._parsed
        if o is None or searcher is None or parsed is None:
            return
        self.view.clearSelection()
        a, b, k = o.variant_a, o.variant_b, o.k
        self.delta_jobs.request(
            lambda: doc_delta(searcher, parsed, compare_row(searcher, parsed, docno, a, b, k), a, b)
        )

    @Slot()
    def _show_heat(self, *_args: object) -> None:
        o = self._outcome
        if o is None:
            self.heat_model.set_heat((), (), TermColors())
            return
        cols = o.heat_a if self.heat_which.currentData() == "a" else o.heat_b
        self.heat_model.set_heat(o.terms, cols, self._colors)

    @Slot(QItemSelection, QItemSelection)
    def _on_view_selection_changed(self, *_args: object) -> None:
        rows = self.view.selectionModel().selectedRows()
        o, searcher, parsed = self._outcome, self.searcher, self._parsed
        if not rows or o is None or searcher is None or parsed is None:
            return
        row = rows[0].data(ROW_ROLE)
        self._wanted = row.docno  # kept selected when the configurations change
        a, b = o.variant_a, o.variant_b
        self.delta_jobs.request(lambda: doc_delta(searcher, parsed, row, a, b))

    @Slot(object)
    def _on_delta_jobs_succeeded(self, delta: DocDelta) -> None:
        self.delta_model.set_delta(delta, self._colors)
        ra = f"#{delta.rank_a}" if delta.rank_a else "no match"
        rb = f"#{delta.rank_b}" if delta.rank_b else "no match"
        change = delta.score_b - delta.score_a
        title = delta.title or delta.docid
        short = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
        self.delta_title.setToolTip(plain_tooltip(title) or "")
        self.delta_title.setText(
            f"<b>{escape(short)}</b><br>"
            f"A {ra}, score {_g(round(delta.score_a, 4))} → B {rb}, score "
            f"{_g(round(delta.score_b, 4))} (Δ {change:+.4f}), split by term:"
        )
