"""The Evaluation tab: measure ranking functions against relevance judgements.

Load queries and judgements (formats detected, skipped lines shown), choose configurations,
metrics and conventions, and run the experiment in the background with progress and Cancel.
Results: a configuration × metric table (best value of each metric bold), a grouped bar chart,
paired tests against a chosen baseline, the per-query values, and for one query its relevant
documents with their ranks and the "why not" of one outside the top k: its rank, the score gap to
the cut-off, and its score ledger. A k1 × b (× δ) sweep draws a heatmap; clicking a cell asks the
Search tab to use its parameters. Runs, run cards and a per-query CSV can be exported.

Every engine call runs in a :class:`~bm25desk.ui.common.jobs.Job`; results arrive as immutable
engine objects by signal. Errors are shown as sentences in the tab's message bar, never as
tracebacks.
"""

from __future__ import annotations

import dataclasses
import logging
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelection, QModelIndex, QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Index, Searcher, Variant, VariantError, all_variants
from bm25desk.evaluation.evaluate import (
    EvalInputError,
    EvalOptions,
    ExperimentResult,
    SweepResult,
    metric_cutoff,
)
from bm25desk.ui.common.colors import TermColors, muted_text
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.ledger_model import LedgerModel
from bm25desk.ui.common.messages import MessageBar, readable
from bm25desk.ui.common.params_form import ParamsForm
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.evaluation.models import (
    ROW_ROLE,
    SORT_ROLE,
    ConfigColumn,
    ConfigRow,
    ConfigsModel,
    DocColumn,
    PerQueryModel,
    RelevantDocsModel,
    SummaryModel,
    TestColumn,
    TestsModel,
)
from bm25desk.ui.evaluation.plots import MetricBars, SweepHeatmap, axis_label
from bm25desk.ui.evaluation.work import (
    METRIC_HELP,
    METRICS,
    BaselineTests,
    EvalInputs,
    ExperimentRequest,
    QueryDetail,
    SweepRequest,
    WhyNot,
    axis_values,
    baseline_tests,
    companion_files,
    export_runs,
    load_qrels,
    load_queries,
    query_detail,
    run_eval,
    run_sweep,
    sweep_axes,
    why_not,
)

log = logging.getLogger(__name__)

DEFAULT_CHECKED = ("lucene", "okapi", "bm25l", "bm25plus")
"""Configurations checked when the tab opens."""

DEFAULT_METRICS = ("RR@10", "nDCG@10", "AP", "P@10", "R@100")
"""Metrics checked when the tab opens."""

_QUERY_FORMATS = (("Detect", "auto"), ("TREC topics", "trec"), ("BEIR jsonl", "beir"))
_QUERY_FORMATS += (("TSV (id, text)", "tsv"), ("SMART (.QRY)", "smart"))
_QRELS_FORMATS = (("Detect", "auto"), ("TREC qrels", "trec"), ("BEIR tsv", "beir"))
_QRELS_FORMATS += (("SMART (.REL)", "smart"), ("Cranfield", "cranfield"))
_FORMAT_NAMES = {
    "trec": "TREC",
    "beir": "BEIR",
    "tsv": "TSV",
    "smart": "SMART",
    "cranfield": "Cranfield",
}

# Default sweep ranges (start, stop, step) per parameter.
_SWEEP_DEFAULTS = {"k1": (0.6, 1.8, 0.3), "b": (0.2, 1.0, 0.2), "delta": (0.0, 1.0, 0.5)}


def eval_readable(exc: BaseException) -> str:
    """Return a sentence for an evaluation error (the engine's own words when it has them)."""
    if isinstance(exc, EvalInputError | VariantError):
        text = str(exc)
        return text[:1].upper() + text[1:]
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        text = exc.args[0]
        return text[:1].upper() + text[1:]
    if isinstance(exc, UnicodeError):
        return f"The file is not text in a known encoding ({exc})."
    return readable(exc)


def _table(model: Any, *, sortable: bool = True) -> tuple[QTableView, QSortFilterProxyModel]:
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    view = QTableView()
    view.setModel(proxy)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setSortingEnabled(sortable)
    view.verticalHeader().hide()
    _compact_rows(view)
    view.setWordWrap(False)
    view.setShowGrid(False)
    view.setAlternatingRowColors(True)
    return view, proxy


def _compact_rows(view: QTableView) -> None:
    header = view.verticalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    header.setDefaultSectionSize(view.fontMetrics().height() + 8)


def _stacked(content: QWidget) -> tuple[QStackedWidget, QLabel]:
    """Return a stack of a placeholder text (page 0) and ``content`` (page 1)."""
    stack = QStackedWidget()
    placeholder = QLabel()
    placeholder.setWordWrap(True)
    placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
    placeholder.setMargin(40)
    placeholder.setEnabled(False)  # drawn in the muted text colour
    stack.addWidget(placeholder)
    stack.addWidget(content)
    return stack, placeholder


def _small(text: str, widget: QWidget) -> str:
    return f"<small style='color:{muted_text(widget.palette()).name()}'>{text}</small>"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _range_spin(lo: float, hi: float, step: float, value: float) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(lo, hi)
    spin.setDecimals(2)
    spin.setSingleStep(step)
    spin.setValue(value)
    spin.setKeyboardTracking(False)
    return spin


class EvalPanel(QWidget):
    """Evaluate ranking functions on the open index against queries and judgements.

    Parameters
    ----------
    runner
        Runs every engine call in the background.

    Signals
    -------
    apply_parameters_requested(object)
        A :class:`Variant` (a clicked sweep cell's parameters) to use in the Search tab.
    open_query_requested(str, object)
        A query text and the ``frozenset`` of its judged-relevant document ids, to open in the
        Search tab with those documents marked.
    inputs_loaded(object)
        Queries or judgements were read: the current :class:`EvalInputs`.
    experiment_finished(object)
        An experiment's :class:`ExperimentResult` is shown.
    sweep_finished(object)
        A sweep's :class:`SweepResult` is shown.
    """

    apply_parameters_requested = Signal(object)
    open_query_requested = Signal(str, object)
    inputs_loaded = Signal(object)
    experiment_finished = Signal(object)
    sweep_finished = Signal(object)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.index: Index | None = None
        self.searcher: Searcher | None = None
        self.inputs = EvalInputs()
        self._paths: dict[str, Path | None] = {"queries": None, "qrels": None}
        self._result: ExperimentResult | None = None
        self._run_inputs = EvalInputs()
        self._sweep: SweepResult | None = None
        self._load_job: Job | None = None
        self._eval_job: Job | None = None
        self._sweep_job: Job | None = None
        self._export_job: Job | None = None
        self._detail: QueryDetail | None = None
        self._why: WhyNot | None = None
        self._companions = None

        self.tests_jobs = LatestOnly(runner, "eval baseline", self)
        self.tests_jobs.succeeded.connect(self._on_tests_jobs_succeeded)
        self.tests_jobs.failed.connect(self._on_job_failed)
        self.detail_jobs = LatestOnly(runner, "eval query", self)
        self.detail_jobs.succeeded.connect(self._on_detail_jobs_succeeded)
        self.detail_jobs.failed.connect(self._on_job_failed)
        self.why_jobs = LatestOnly(runner, "eval why-not", self)
        self.why_jobs.succeeded.connect(self._on_why_jobs_succeeded)
        self.why_jobs.failed.connect(self._on_job_failed)

        self.message_bar = MessageBar()

        setup = self._make_setup()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._make_results_tab(), "Results")
        self.tabs.addTab(self._make_per_query_tab(), "Per query")
        self.tabs.addTab(self._make_sweep_tab(), "Parameter sweep")

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(setup)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([430, 930])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.splitter, 1)

        self._show_inputs()
        self._update_buttons()
        self._show_result(None)
        self._on_sweep_variant_changed()
        self.configs_view.selectRow(
            next((i for i, r in enumerate(self.configs_model.rows()) if r.checked), 0)
        )
        self._on_configs_view_selection_changed()

    # ============================================================================================
    # Building the widgets
    # ============================================================================================

    def _make_setup(self) -> QWidget:
        # -- queries and judgements --------------------------------------------------------------
        files = QGroupBox("Queries and judgements")
        grid = QGridLayout(files)
        grid.setColumnStretch(1, 1)
        self.queries_label = QLabel("no file")
        self.qrels_label = QLabel("no file")
        for label in (self.queries_label, self.qrels_label):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.queries_format = QComboBox()
        for text, key in _QUERY_FORMATS:
            self.queries_format.addItem(text, key)
        self.queries_format.setToolTip("The query file's format (Detect reads its first lines)")
        self.qrels_format = QComboBox()
        for text, key in _QRELS_FORMATS:
            self.qrels_format.addItem(text, key)
        self.qrels_format.setToolTip("The judgement file's format (Detect reads its first lines)")
        self.queries_button = QPushButton("Queries…")
        self.queries_button.setToolTip(
            "TREC topics, BEIR queries.jsonl, id<TAB>text TSV, or a SMART query file (CISI.QRY)"
        )
        self.qrels_button = QPushButton("Judgements…")
        self.qrels_button.setToolTip(
            "TREC qrels, BEIR qrels TSV, CISI.REL or Cranfield cranqrel (relevance judgements)"
        )
        self.queries_button.clicked.connect(self._on_queries_button_clicked)
        self.qrels_button.clicked.connect(self._on_qrels_button_clicked)
        self.queries_format.currentIndexChanged.connect(self._on_queries_format_changed)
        self.qrels_format.currentIndexChanged.connect(self._on_qrels_format_changed)
        grid.addWidget(self.queries_button, 0, 0)
        grid.addWidget(self.queries_label, 0, 1)
        grid.addWidget(self.queries_format, 0, 2)
        grid.addWidget(self.qrels_button, 1, 0)
        grid.addWidget(self.qrels_label, 1, 1)
        grid.addWidget(self.qrels_format, 1, 2)
        self.sample_button = QPushButton()
        self.sample_button.clicked.connect(self._on_sample_button_clicked)
        self.sample_button.hide()
        grid.addWidget(self.sample_button, 2, 0, 1, 3)
        self.inputs_summary = QLabel()
        self.inputs_summary.setWordWrap(True)
        self.inputs_summary.setTextFormat(Qt.TextFormat.RichText)
        grid.addWidget(self.inputs_summary, 3, 0, 1, 3)
        self.skipped_view = QPlainTextEdit()
        self.skipped_view.setReadOnly(True)
        self.skipped_view.setMaximumHeight(90)
        self.skipped_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.skipped_view.hide()
        grid.addWidget(self.skipped_view, 4, 0, 1, 3)

        # -- configurations ----------------------------------------------------------------------
        configs = QGroupBox("Ranking functions")
        box = QVBoxLayout(configs)
        self.configs_model = ConfigsModel(self)
        self.configs_model.set_rows(
            [ConfigRow(v, v.key in DEFAULT_CHECKED) for v in all_variants()]
        )
        self.configs_view = QTableView()
        self.configs_view.setModel(self.configs_model)
        self.configs_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.configs_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.configs_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.configs_view.verticalHeader().hide()
        _compact_rows(self.configs_view)
        self.configs_view.setShowGrid(False)
        self.configs_view.setWordWrap(False)
        header = self.configs_view.horizontalHeader()
        header.setSectionResizeMode(ConfigColumn.VARIANT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(ConfigColumn.PARAMS, QHeaderView.ResizeMode.ResizeToContents)
        self.configs_view.setMinimumHeight(150)
        self.configs_view.selectionModel().selectionChanged.connect(
            self._on_configs_view_selection_changed
        )
        self.configs_model.dataChanged.connect(self._on_configs_model_changed)
        self.configs_model.rowsInserted.connect(self._on_configs_model_changed)
        self.configs_model.rowsRemoved.connect(self._on_configs_model_changed)
        self.params_title = QLabel()
        self.params_form = ParamsForm()
        self.params_form.values_changed.connect(self._on_params_form_values_changed)
        self.copy_button = QToolButton()
        self.copy_button.setText("Add a copy")
        self.copy_button.setToolTip(
            "Evaluate the selected ranking function a second time, with other parameters"
        )
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.remove_button = QToolButton()
        self.remove_button.setText("Remove")
        self.remove_button.setToolTip("Remove this copy")
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.all_button = QToolButton()
        self.all_button.setText("All")
        self.all_button.clicked.connect(lambda: self.configs_model.check_all(True))
        self.none_button = QToolButton()
        self.none_button.setText("None")
        self.none_button.clicked.connect(lambda: self.configs_model.check_all(False))
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        buttons.addWidget(QLabel("Check:"))
        buttons.addWidget(self.all_button)
        buttons.addWidget(self.none_button)
        box.addWidget(self.configs_view, 1)
        box.addLayout(buttons)
        box.addWidget(self.params_title)
        box.addWidget(self.params_form)

        # -- metrics and conventions -------------------------------------------------------------
        measures = QGroupBox("Metrics and conventions")
        form = QFormLayout(measures)
        metric_grid = QGridLayout()
        metric_grid.setHorizontalSpacing(10)
        metric_grid.setVerticalSpacing(2)
        self.metric_checks: dict[str, QCheckBox] = {}
        for i, m in enumerate(METRICS):
            check = QCheckBox(m)
            check.setChecked(m in DEFAULT_METRICS)
            check.setToolTip(METRIC_HELP[m])
            check.toggled.connect(self._on_metric_toggled)
            self.metric_checks[m] = check
            metric_grid.addWidget(check, i // 4, i % 4)
        for c in range(4):
            metric_grid.setColumnStretch(c, 1)
        form.addRow(metric_grid)
        self.k_spin = QSpinBox()
        self.k_spin.setRange(1, 10_000)
        self.k_spin.setValue(1000)
        self.k_spin.setSingleStep(100)
        self.k_spin.setToolTip(
            "How many hits of each query to evaluate (TREC runs are 1000 deep; R@1000 needs "
            "1000). Fewer is faster."
        )
        form.addRow("Ranking depth", self.k_spin)
        self.average_combo = QComboBox()
        self.average_combo.addItem("judged queries (trec_eval -c)", "judged")
        self.average_combo.addItem("all queries, unjudged count 0", "all")
        self.average_combo.setToolTip(
            "Which queries the mean is taken over: queries without judgements are usually left "
            "out; some tutorials count them as 0"
        )
        form.addRow("Average over", self.average_combo)
        self.ties_combo = QComboBox()
        self.ties_combo.addItem("engine order (score, then index order)", "engine")
        self.ties_combo.addItem("trec_eval (score, then document id)", "trec_eval")
        self.ties_combo.setToolTip("How documents with equal scores are ordered when evaluated")
        form.addRow("Equal scores", self.ties_combo)
        self.self_hits_check = QCheckBox("Drop a hit whose id is the query's id (BEIR)")
        self.self_hits_check.setToolTip(
            "For collections whose queries are also documents (ArguAna, Quora)"
        )
        form.addRow(self.self_hits_check)

        # -- run -------------------------------------------------------------------------------
        self.run_button = QPushButton("Run evaluation")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.run_status = QLabel()
        self.run_status.setWordWrap(True)
        run_row = QHBoxLayout()
        run_row.addWidget(self.run_button, 1)
        run_row.addWidget(self.cancel_button)

        inner = QWidget()
        col = QVBoxLayout(inner)
        col.setContentsMargins(6, 6, 6, 6)
        col.addWidget(files)
        col.addWidget(configs, 1)
        col.addWidget(measures)
        col.addLayout(run_row)
        col.addWidget(self.progress)
        col.addWidget(self.run_status)
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(420)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return scroll

    def _make_results_tab(self) -> QWidget:
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.result_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_model = SummaryModel(self)
        self.summary_view, self.summary_proxy = _table(self.summary_model)
        self.summary_view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        header = self.summary_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.bars = MetricBars()

        self.baseline_combo = QComboBox()
        self.baseline_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.baseline_combo.setToolTip("Every other configuration is compared with this one")
        self.baseline_combo.currentIndexChanged.connect(self._on_baseline_combo_changed)
        self.tests_model = TestsModel(self)
        self.tests_view, self.tests_proxy = _table(self.tests_model)
        self.tests_view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.tests_view.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )
        self.tests_view.horizontalHeader().setSectionResizeMode(
            TestColumn.CONFIG, QHeaderView.ResizeMode.Stretch
        )
        self.tests_note = QLabel()
        self.tests_note.setWordWrap(True)
        self.export_button = QPushButton("Export runs…")
        self.export_button.setToolTip(
            "Write a TREC run file and a run card (JSON) per configuration, a per-query CSV and "
            "experiment.json into a folder"
        )
        self.export_button.clicked.connect(self._on_export_button_clicked)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.result_label)
        top_layout.addWidget(self.summary_view, 1)
        base_row = QHBoxLayout()
        base_row.addWidget(QLabel("Baseline:"))
        base_row.addWidget(self.baseline_combo)
        base_row.addStretch(1)
        base_row.addWidget(self.export_button)
        tests = QWidget()
        tests_layout = QVBoxLayout(tests)
        tests_layout.setContentsMargins(0, 0, 0, 0)
        tests_layout.addLayout(base_row)
        tests_layout.addWidget(self.tests_view, 1)
        tests_layout.addWidget(self.tests_note)
        self.results_splitter = QSplitter(Qt.Orientation.Vertical)
        self.results_splitter.addWidget(top)
        self.results_splitter.addWidget(self.bars)
        self.results_splitter.addWidget(tests)
        self.results_splitter.setStretchFactor(0, 2)
        self.results_splitter.setStretchFactor(1, 3)
        self.results_splitter.setStretchFactor(2, 3)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.results_splitter)
        self.results_stack, self.results_placeholder = _stacked(content)
        return self.results_stack

    def _make_per_query_tab(self) -> QWidget:
        self.pq_metric = QComboBox()
        self.pq_metric.currentIndexChanged.connect(self._on_pq_metric_changed)
        self.pq_config = QComboBox()
        self.pq_config.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.pq_config.setToolTip("The configuration whose ranking the drill-down explains")
        self.pq_config.currentIndexChanged.connect(self._on_pq_drill_changed)
        self.cutoff_spin = QSpinBox()
        self.cutoff_spin.setRange(1, 1000)
        self.cutoff_spin.setValue(10)
        self.cutoff_spin.setPrefix("top k = ")
        self.cutoff_spin.setToolTip("A relevant document below this rank gets a “why not”")
        self.cutoff_spin.setKeyboardTracking(False)
        self.cutoff_spin.valueChanged.connect(self._on_pq_drill_changed)
        self.pq_model = PerQueryModel(self)
        self.pq_view, self.pq_proxy = _table(self.pq_model)
        self.pq_view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        pq_header = self.pq_view.horizontalHeader()
        pq_header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        pq_header.setStretchLastSection(False)
        self.pq_view.setToolTip("Double-click a query to open it in the Search tab")
        self.pq_view.doubleClicked.connect(self._on_pq_view_double_clicked)
        self.pq_view.selectionModel().selectionChanged.connect(self._on_pq_view_selection_changed)
        self.open_query_button = QPushButton("Open in Search")
        self.open_query_button.setToolTip(
            "Search for the selected query with its judged-relevant documents marked"
        )
        self.open_query_button.clicked.connect(self._on_open_query_button_clicked)

        self.docs_model = RelevantDocsModel(self)
        self.docs_view, self.docs_proxy = _table(self.docs_model)
        self.docs_view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.docs_view.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )
        self.docs_view.horizontalHeader().setStretchLastSection(True)
        self.docs_view.selectionModel().selectionChanged.connect(
            self._on_docs_view_selection_changed
        )
        self.docs_title = QLabel()
        self.docs_title.setWordWrap(True)
        self.docs_title.setTextFormat(Qt.TextFormat.RichText)

        self.why_title = QLabel()
        self.why_title.setWordWrap(True)
        self.why_title.setTextFormat(Qt.TextFormat.RichText)
        self.why_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.ledger_model = LedgerModel(self)
        self.ledger_view = QTableView()
        self.ledger_view.setModel(self.ledger_model)
        self.ledger_view.verticalHeader().hide()
        _compact_rows(self.ledger_view)
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

        head = QHBoxLayout()
        head.addWidget(QLabel("Metric:"))
        head.addWidget(self.pq_metric)
        head.addSpacing(16)
        head.addWidget(QLabel("Drill down into:"))
        head.addWidget(self.pq_config)
        head.addWidget(self.cutoff_spin)
        head.addStretch(1)
        head.addWidget(self.open_query_button)
        docs = QWidget()
        docs_layout = QVBoxLayout(docs)
        docs_layout.setContentsMargins(0, 0, 0, 0)
        docs_layout.addWidget(self.docs_title)
        docs_layout.addWidget(self.docs_view, 1)
        why = QWidget()
        why_layout = QVBoxLayout(why)
        why_layout.setContentsMargins(0, 0, 0, 0)
        why_layout.addWidget(self.why_title)
        why_layout.addWidget(self.ledger_tabs, 1)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(docs)
        bottom.addWidget(why)
        bottom.setStretchFactor(0, 1)
        bottom.setStretchFactor(1, 1)
        self.pq_splitter = QSplitter(Qt.Orientation.Vertical)
        self.pq_splitter.addWidget(self.pq_view)
        self.pq_splitter.addWidget(bottom)
        self.pq_splitter.setStretchFactor(0, 1)
        self.pq_splitter.setStretchFactor(1, 1)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(head)
        layout.addWidget(self.pq_splitter, 1)
        self.pq_stack, self.pq_placeholder = _stacked(content)
        self.pq_placeholder.setText(
            "Run an evaluation: every query's values appear here. Double-click a query to open "
            "it in the Search tab with its relevant documents marked; select one to see where "
            "its relevant documents ranked, and why a relevant document missed the top k."
        )
        return self.pq_stack

    def _make_sweep_tab(self) -> QWidget:
        self.sweep_variant = QComboBox()
        for v in all_variants():
            if sweep_axes(v):
                self.sweep_variant.addItem(type(v).label, v.key)
        self.sweep_variant.setCurrentIndex(max(0, self.sweep_variant.findData("lucene")))
        self.sweep_variant.currentIndexChanged.connect(self._on_sweep_variant_changed)
        self.sweep_metric = QComboBox()
        for m in METRICS:
            self.sweep_metric.addItem(m, m)
            self.sweep_metric.setItemData(
                self.sweep_metric.count() - 1, METRIC_HELP[m], Qt.ItemDataRole.ToolTipRole
            )
        self.sweep_metric.setCurrentIndex(self.sweep_metric.findData("nDCG@10"))
        self.sweep_metric.currentIndexChanged.connect(self._on_sweep_range_changed)
        self.sweep_spins: dict[str, tuple[QLabel, QDoubleSpinBox, QDoubleSpinBox, QDoubleSpinBox]]
        self.sweep_spins = {}
        ranges = QGridLayout()
        ranges.setHorizontalSpacing(6)
        ranges.addWidget(QLabel("from"), 0, 1)
        ranges.addWidget(QLabel("to"), 0, 2)
        ranges.addWidget(QLabel("step"), 0, 3)
        for row, name in enumerate(("k1", "b", "delta"), start=1):
            start, stop, step = _SWEEP_DEFAULTS[name]
            label = QLabel(axis_label(name))
            spins = (
                _range_spin(0.0, 3.0, 0.05, start),
                _range_spin(0.0, 3.0, 0.05, stop),
                _range_spin(0.01, 3.0, 0.05, step),
            )
            for s in spins:
                s.valueChanged.connect(self._on_sweep_range_changed)
            ranges.addWidget(label, row, 0)
            for i, s in enumerate(spins):
                ranges.addWidget(s, row, i + 1)
            self.sweep_spins[name] = (label, *spins)
        self.sweep_size = QLabel()
        self.sweep_button = QPushButton("Run sweep")
        self.sweep_button.clicked.connect(self.run_sweep)
        self.sweep_cancel = QPushButton("Cancel")
        self.sweep_cancel.clicked.connect(self.cancel_sweep)
        self.sweep_progress = QProgressBar()
        self.sweep_progress.hide()
        self.heatmap = SweepHeatmap()
        self.heatmap.cell_clicked.connect(self._on_heatmap_cell_clicked)
        self.slice_combo = QComboBox()
        self.slice_combo.currentIndexChanged.connect(self._on_slice_combo_changed)
        self.slice_label = QLabel()
        self.best_label = QLabel()
        self.best_label.setWordWrap(True)
        self.best_label.setTextFormat(Qt.TextFormat.RichText)
        self.apply_best_button = QPushButton("Use the best in Search")
        self.apply_best_button.clicked.connect(self._on_apply_best_button_clicked)

        controls = QFormLayout()
        self.sweep_variant.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.sweep_variant.setMinimumContentsLength(14)
        controls.addRow("Function", self.sweep_variant)
        controls.addRow("Metric", self.sweep_metric)
        controls.addRow(ranges)
        controls.addRow(self.sweep_size)
        run_row = QHBoxLayout()
        run_row.addWidget(self.sweep_button, 1)
        run_row.addWidget(self.sweep_cancel)
        controls.addRow(run_row)
        controls.addRow(self.sweep_progress)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(controls)
        left_layout.addWidget(self.best_label)
        left_layout.addWidget(self.apply_best_button)
        left_layout.addStretch(1)
        left.setMinimumWidth(300)
        left.setMaximumWidth(340)
        slice_row = QHBoxLayout()
        slice_row.addWidget(self.slice_label)
        slice_row.addWidget(self.slice_combo)
        slice_row.addStretch(1)
        hint = QLabel(
            _small(
                "Click a cell to use its parameters in the Search tab. The white outline marks "
                "the best cell.",
                self,
            )
        )
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(slice_row)
        self.heatmap_stack, self.heatmap_placeholder = _stacked(self.heatmap)
        self.heatmap_placeholder.setText(
            "Choose a ranking function, the ranges of its parameters and a metric, then Run "
            "sweep: the metric of every combination appears here as a heatmap."
        )
        right_layout.addWidget(self.heatmap_stack, 1)
        right_layout.addWidget(hint)
        page = QWidget()
        layout = QHBoxLayout(page)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(left)
        layout.addWidget(right, 1)
        return page

    # ============================================================================================
    # Inputs
    # ============================================================================================

    def set_index(self, index: Index | None, searcher: Searcher | None) -> None:
        """Evaluate on ``index`` (searched with ``searcher``); None: no index is open.

        Results of another index are cleared, and running work for it is cancelled. Loaded
        queries and judgements stay.
        """
        if searcher is not None and index is None:
            index = searcher.index
        same = searcher is self.searcher and index is self.index
        self.index, self.searcher = index, searcher
        if same:
            return
        for job in (self._eval_job, self._sweep_job):
            if job is not None:
                job.cancel.set()
        self._eval_job = None
        self._sweep_job = None
        for latest in (self.tests_jobs, self.detail_jobs, self.why_jobs):
            latest.invalidate()
        self._show_result(None)
        self._show_sweep(None)
        self._companions = companion_files(index)
        if self._companions is not None:
            self.sample_button.setText(self._companions.label)
            self.sample_button.setToolTip(f"{self._companions.queries}\n{self._companions.qrels}")
            self.sample_button.show()
        else:
            self.sample_button.hide()
        self.progress.hide()
        self.sweep_progress.hide()
        self._show_inputs()
        self._update_buttons()

    def set_files(self, queries: str | Path | None, qrels: str | Path | None) -> Job | None:
        """Read a query file and/or a judgement file in the background (None: keep as is)."""
        jobs = {}
        if queries is not None:
            jobs["queries"] = (Path(queries), str(self.queries_format.currentData()))
        if qrels is not None:
            jobs["qrels"] = (Path(qrels), str(self.qrels_format.currentData()))
        if not jobs:
            return None
        for which, (path, _) in jobs.items():
            self._paths[which] = path

        def work(_progress: Any, cancel: Any) -> dict[str, object]:
            out: dict[str, object] = {}
            for which, (path, fmt) in jobs.items():
                cancel.check()
                try:
                    out[which] = (load_queries if which == "queries" else load_qrels)(path, fmt)
                except Exception as exc:  # reported per file: the other one may still load
                    out[which] = exc
            return out

        if self._load_job is not None:
            self._load_job.cancel.set()
        job = Job(work, "eval inputs")
        job.signals.succeeded.connect(self._on_load_job_succeeded)
        job.signals.failed.connect(self._on_job_failed)
        job.signals.finished.connect(self._on_load_job_finished)
        self._load_job = job
        for which in jobs:
            (self.queries_label if which == "queries" else self.qrels_label).setText("reading…")
        self.runner.start(job)
        return job

    @Slot(object)
    def _on_load_job_succeeded(self, loaded: dict[str, object]) -> None:
        if self.sender() is not (self._load_job.signals if self._load_job else None):
            return
        self._load_job = None
        errors = []
        inputs = self.inputs
        for which, value in loaded.items():
            path = self._paths.get(which)
            if isinstance(value, BaseException):
                kind = "queries" if which == "queries" else "judgements"
                text = eval_readable(value)
                # The engine's messages start with the file's path: say it once.
                for prefix in (f"{path}: ", f"{str(path)[:1].upper()}{str(path)[1:]}: "):
                    if path is not None and text.startswith(prefix):
                        text = text[len(prefix) :]
                        text = text[:1].upper() + text[1:]
                name = path.name if path is not None else "the file"
                errors.append(f"Could not read the {kind} from {name}: {text}")
                inputs = dataclasses.replace(inputs, **{which: None})
                self._paths[which] = None
            else:
                inputs = dataclasses.replace(inputs, **{which: value})
        self.inputs = inputs
        if errors:
            self.message_bar.show_message(" ".join(errors), "error")
        else:
            self.message_bar.hide()
        self._show_inputs()
        self._update_buttons()
        self.inputs_loaded.emit(self.inputs)

    @Slot()
    def _on_load_job_finished(self) -> None:
        if self._load_job is not None and self.sender() is self._load_job.signals:
            self._load_job = None

    def _show_inputs(self) -> None:
        q, r = self.inputs.queries, self.inputs.qrels
        for label, path, obj in (
            (self.queries_label, self._paths["queries"], q),
            (self.qrels_label, self._paths["qrels"], r),
        ):
            if path is None or obj is None:
                label.setText(_small("no file", self))
                label.setToolTip("")
            else:
                label.setText(escape(path.name))
                label.setToolTip(str(path))
        lines = []
        if q is not None:
            detected = " (detected)" if self.queries_format.currentData() == "auto" else ""
            lines.append(
                f"<b>{_plural(len(q), 'query', 'queries')}</b> · "
                f"{_FORMAT_NAMES.get(q.format, q.format)}{detected} · "
                f"{_plural(len(q.skipped), 'line')} skipped"
            )
        if r is not None:
            detected = " (detected)" if self.qrels_format.currentData() == "auto" else ""
            lines.append(
                f"<b>{_plural(r.n_judgements, 'judgement')}</b> for "
                f"{_plural(r.n_queries, 'query', 'queries')} · "
                f"{_FORMAT_NAMES.get(r.format, r.format)}{detected} · "
                f"{_plural(len(r.skipped), 'line')} skipped"
            )
        if q is not None and r is not None:
            judged = self.inputs.judged_queries()
            text = f"{judged:,} of the {len(q):,} queries have judgements."
            if judged == 0:
                text = (
                    "<span style='color:#c62828'>None of the queries has judgements: are these "
                    "the files of the same collection?</span>"
                )
            lines.append(text)
        notes = [n for obj in (q, r) if obj is not None for n in obj.notes]
        if notes:
            lines.append(_small("<br>".join(escape(n) for n in notes), self))
        if not lines:
            lines.append(
                _small(
                    "Choose a query file and a judgement file (TREC, BEIR, TSV, SMART or "
                    "Cranfield; the format is detected).",
                    self,
                )
            )
        self.inputs_summary.setText("<br>".join(lines))
        skipped = [s for obj in (q, r) if obj is not None for s in obj.skipped]
        if skipped:
            shown = [f"{Path(s.where).name}: {s.reason}" for s in skipped[:200]]
            if len(skipped) > 200:
                shown.append(f"… and {len(skipped) - 200:,} more")
            self.skipped_view.setPlainText("\n".join(shown))
            self.skipped_view.setToolTip("Lines that could not be read, with the reason")
            self.skipped_view.show()
        else:
            self.skipped_view.clear()
            self.skipped_view.hide()

    def _choose_file(self, title: str) -> str:
        start = ""
        for p in self._paths.values():
            if p is not None:
                start = str(p.parent)
        path, _ = QFileDialog.getOpenFileName(self, title, start, "All files (*)")
        return path

    @Slot()
    def _on_queries_button_clicked(self) -> None:
        path = self._choose_file("Choose a query file")
        if path:
            self.set_files(path, None)

    @Slot()
    def _on_qrels_button_clicked(self) -> None:
        path = self._choose_file("Choose a judgement file")
        if path:
            self.set_files(None, path)

    @Slot()
    def _on_queries_format_changed(self, *_args: object) -> None:
        if self._paths["queries"] is not None:
            self.set_files(self._paths["queries"], None)

    @Slot()
    def _on_qrels_format_changed(self, *_args: object) -> None:
        if self._paths["qrels"] is not None:
            self.set_files(None, self._paths["qrels"])

    @Slot()
    def _on_sample_button_clicked(self) -> None:
        if self._companions is not None:
            self.queries_format.blockSignals(True)
            self.qrels_format.blockSignals(True)
            self.queries_format.setCurrentIndex(0)
            self.qrels_format.setCurrentIndex(0)
            self.queries_format.blockSignals(False)
            self.qrels_format.blockSignals(False)
            self.set_files(self._companions.queries, self._companions.qrels)

    # ============================================================================================
    # Configurations, metrics, conventions
    # ============================================================================================

    def configs(self) -> tuple[Variant, ...]:
        """Return the checked configurations."""
        return self.configs_model.checked()

    def set_configs(self, variants: list[Variant] | tuple[Variant, ...]) -> None:
        """Check exactly ``variants`` (rows are added for extra parameter settings)."""
        rows: list[ConfigRow] = []
        wanted = list(variants)
        for v in all_variants():
            mine = [w for w in wanted if w.key == v.key]
            if mine:
                rows.extend(ConfigRow(w, True) for w in mine)
            else:
                rows.append(ConfigRow(v, False))
        self.configs_model.set_rows(rows)
        self._on_configs_view_selection_changed()
        self._update_buttons()

    def metrics(self) -> tuple[str, ...]:
        """Return the checked metrics, in the offered order."""
        return tuple(m for m in METRICS if self.metric_checks[m].isChecked())

    def set_metrics(self, metrics: list[str] | tuple[str, ...]) -> None:
        """Check exactly ``metrics``."""
        for m, check in self.metric_checks.items():
            check.setChecked(m in metrics)

    def options(self) -> EvalOptions:
        """Return the conventions chosen."""
        return EvalOptions(
            average=self.average_combo.currentData(),
            ties=self.ties_combo.currentData(),
            drop_self_hits=self.self_hits_check.isChecked(),
        )

    def _selected_config_row(self) -> int:
        rows = self.configs_view.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    @Slot()
    def _on_configs_view_selection_changed(self, *_args: object) -> None:
        row = self._selected_config_row()
        if row < 0:
            self.params_title.setText(
                _small("Select a ranking function to edit its parameters.", self)
            )
            self.params_form.hide()
            self.copy_button.setEnabled(False)
            self.remove_button.setEnabled(False)
            return
        variant = self.configs_model.variant(row)
        self.params_title.setText(f"Parameters of <b>{escape(type(variant).label)}</b>:")
        self.params_form.set_variant(variant)
        self.params_form.show()
        self.copy_button.setEnabled(True)
        self.remove_button.setEnabled(self.configs_model.removable(row))

    @Slot(dict)
    def _on_params_form_values_changed(self, values: dict[str, float]) -> None:
        row = self._selected_config_row()
        if row < 0:
            return
        try:
            variant = dataclasses.replace(self.configs_model.variant(row), **values)  # type: ignore[type-var]
        except (TypeError, ValueError):
            return
        self.configs_model.set_variant(row, variant)

    @Slot()
    def _on_copy_button_clicked(self) -> None:
        row = self._selected_config_row()
        if row >= 0:
            new = self.configs_model.duplicate(row)
            self.configs_view.selectRow(new)

    @Slot()
    def _on_remove_button_clicked(self) -> None:
        row = self._selected_config_row()
        if row >= 0:
            self.configs_model.remove(row)
            self._on_configs_view_selection_changed()

    @Slot()
    def _on_configs_model_changed(self, *_args: object) -> None:
        self._update_buttons()

    @Slot(bool)
    def _on_metric_toggled(self, _checked: bool) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self._eval_job is not None
        sweeping = self._sweep_job is not None
        ready = self.searcher is not None and self.inputs.ready
        n_configs = len(self.configs_model.checked())
        n_metrics = len(self.metrics())
        self.run_button.setEnabled(ready and not running and n_configs > 0 and n_metrics > 0)
        self.cancel_button.setEnabled(running)
        self.sweep_button.setEnabled(ready and not sweeping)
        self.sweep_cancel.setEnabled(sweeping)
        self.export_button.setEnabled(self._result is not None and self._export_job is None)
        if running:
            return
        if self.searcher is None:
            why = "Open an index to evaluate it."
        elif not self.inputs.ready:
            why = "Load a query file and a judgement file."
        elif n_configs == 0:
            why = "Check at least one ranking function."
        elif n_metrics == 0:
            why = "Check at least one metric."
        else:
            n_queries = self.inputs.judged_queries()
            why = (
                f"{_plural(n_configs, 'configuration')} × "
                f"{_plural(n_queries, 'judged query', 'judged queries')} on "
                f"“{escape(self.index.name if self.index is not None else '')}”."
            )
        self.run_status.setText(_small(why, self))

    # ============================================================================================
    # Running an experiment
    # ============================================================================================

    @Slot()
    def run(self) -> Job | None:
        """Run the experiment in the background (with progress and Cancel)."""
        searcher, inputs = self.searcher, self.inputs
        if self._eval_job is not None:
            return None
        if searcher is None:
            self.message_bar.show_message("Open an index first.", "info")
            return None
        if not inputs.ready:
            self.message_bar.show_message("Load a query file and a judgement file first.", "info")
            return None
        configs = self.configs()
        names = [repr(v) for v in configs]
        dupes = sorted(
            {variant_summary(v) for v, n in zip(configs, names, strict=True) if names.count(n) > 1}
        )
        if dupes:
            self.message_bar.show_message(
                f"{dupes[0]} is checked twice with the same parameters: change the parameters "
                "of the copy or uncheck it.",
                "error",
            )
            return None
        try:
            request = ExperimentRequest(
                configs, self.metrics(), self.k_spin.value(), self.options()
            )
        except EvalInputError as exc:
            self.message_bar.show_message(eval_readable(exc), "error")
            return None

        def work(progress: Any, cancel: Any) -> ExperimentResult:
            return run_eval(searcher, inputs, request, progress, cancel)

        job = Job(work, "evaluation")
        job.signals.progressed.connect(self._on_eval_job_progressed)
        job.signals.succeeded.connect(self._on_eval_job_succeeded)
        job.signals.failed.connect(self._on_eval_job_failed)
        job.signals.cancelled.connect(self._on_eval_job_cancelled)
        job.signals.finished.connect(self._on_eval_job_finished)
        self._eval_job = job
        self._run_inputs = inputs
        self.message_bar.hide()
        self.progress.setRange(0, 0)
        self.progress.setFormat("Starting…")
        self.progress.show()
        self.run_status.setText(_small("Searching every query with every configuration…", self))
        if self._result is None:
            self.results_placeholder.setText(
                "Evaluating… the results appear when every configuration has searched every "
                "judged query."
            )
        self._update_buttons()
        self.runner.start(job)
        return job

    @Slot()
    def cancel(self) -> None:
        """Stop the running experiment."""
        if self._eval_job is not None:
            self._eval_job.cancel.set()
            self.progress.setFormat("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _is_eval_job(self) -> bool:
        return self._eval_job is not None and self.sender() is self._eval_job.signals

    @Slot(int, int)
    def _on_eval_job_progressed(self, done: int, total: int) -> None:
        if not self._is_eval_job():
            return
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat("%v / %m searches")

    @Slot(object)
    def _on_eval_job_succeeded(self, result: ExperimentResult) -> None:
        if not self._is_eval_job():
            return
        self._show_result(result)
        self.tabs.setCurrentIndex(0)
        self.experiment_finished.emit(result)

    @Slot(object)
    def _on_eval_job_failed(self, exc: BaseException) -> None:
        if self._is_eval_job():
            self.message_bar.show_message(eval_readable(exc), "error")

    @Slot()
    def _on_eval_job_cancelled(self) -> None:
        if self._is_eval_job():
            self.message_bar.show_message("Evaluation cancelled.", "info", timeout_ms=8000)

    @Slot()
    def _on_eval_job_finished(self) -> None:
        if not self._is_eval_job():
            return
        self._eval_job = None
        self.progress.hide()
        self._update_buttons()

    def result(self) -> ExperimentResult | None:
        """Return the experiment shown."""
        return self._result

    def _show_result(self, result: ExperimentResult | None) -> None:
        self._result = result
        self.summary_model.set_result(result, 0)
        self.summary_view.resizeColumnsToContents()
        self.bars.set_result(result)
        self.tests_model.set_tests((), {})
        self._detail = None
        self.docs_model.set_detail(None)
        self._show_why(None)
        for combo in (self.baseline_combo, self.pq_config, self.pq_metric):
            combo.blockSignals(True)
            combo.clear()
        if result is None:
            for combo in (self.baseline_combo, self.pq_config, self.pq_metric):
                combo.blockSignals(False)
            self.pq_model.set_result(None, {}, {})
            self.result_label.setText("")
            self.results_placeholder.setText(
                "Load a query file and a judgement file, check ranking functions and metrics, "
                "then Run evaluation: a table and a chart of the results, and paired tests "
                "against a baseline, appear here."
            )
            self.results_stack.setCurrentIndex(0)
            self.pq_stack.setCurrentIndex(0)
            self.tests_note.setText("")
            self.docs_title.setText(
                _small("Select a query to see where its relevant documents ranked.", self)
            )
            self._update_buttons()
            return
        for c in result.configs:
            label = variant_summary(c.variant)
            self.baseline_combo.addItem(label)
            self.pq_config.addItem(label)
        for m in result.metrics:
            self.pq_metric.addItem(m, m)
        for combo in (self.baseline_combo, self.pq_config, self.pq_metric):
            combo.blockSignals(False)
        inputs = self._run_inputs
        texts = {q.qid: q.text for q in inputs.queries.items} if inputs.queries else {}
        relevant = {q: len(inputs.qrels.relevant(q)) for q in result.qids} if inputs.qrels else {}
        self.pq_model.set_result(result, texts, relevant)
        self.pq_view.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        opts = result.options
        averaged = (
            "judged queries" if opts.average == "judged" else "all queries (unjudged count 0)"
        )
        parts = [
            f"<b>{_plural(len(result.configs), 'configuration')}</b> on "
            f"<b>{escape(self.index.name if self.index is not None else '')}</b>, "
            f"mean over {_plural(len(result.qids), 'query', 'queries')} ({averaged}), "
            f"{result.k:,} hits deep; equal scores in "
            f"{'engine order' if opts.ties == 'engine' else 'trec_eval order'}"
            f"{'; self-hits dropped' if opts.drop_self_hits else ''}. Best value of each "
            "metric in bold."
        ]
        notes = list(result.notes)
        if result.unjudged and opts.average == "judged":
            notes.append(f"{len(result.unjudged):,} queries without judgements are not counted")
        if notes:
            parts.append(_small("<br>".join(escape(n[:1].upper() + n[1:]) for n in notes), self))
        self.result_label.setText("<br>".join(parts))
        self.results_stack.setCurrentIndex(1)
        self.pq_stack.setCurrentIndex(1)
        self._fit_summary()
        self._request_tests()
        self._update_buttons()

    def _fit_summary(self) -> None:
        """Give the results table the height of its rows (up to 10), the rest to chart and tests."""
        view = self.summary_view
        rows = min(10, self.summary_model.rowCount())
        table_h = (
            view.horizontalHeader().sizeHint().height()
            + rows * view.verticalHeader().defaultSectionSize()
            + 2 * view.frameWidth()
            + 4
        )
        # The label is a sentence or two and the notes; its height hint is unreliable before the
        # first layout, so count lines.
        lines = self.result_label.text().count("<br>") + 2
        top = table_h + lines * self.result_label.fontMetrics().lineSpacing() + 8
        total = sum(self.results_splitter.sizes()) or 800
        rest = max(200, total - top)
        self.results_splitter.setSizes([top, rest // 2, rest - rest // 2])

    # -- baseline --------------------------------------------------------------------------------

    def set_baseline(self, i: int) -> None:
        """Compare every configuration with configuration ``i``."""
        self.baseline_combo.setCurrentIndex(i)

    @Slot()
    def _on_baseline_combo_changed(self, *_args: object) -> None:
        self._request_tests()

    def _request_tests(self) -> None:
        result = self._result
        if result is None:
            return
        baseline = max(0, self.baseline_combo.currentIndex())
        self.summary_model.set_baseline(baseline)
        self.tests_model.set_tests((), {})
        if len(result.configs) < 2:
            self.tests_note.setText(
                _small("Evaluate two or more configurations to compare them.", self)
            )
            return
        self.tests_note.setText(_small("Testing against the baseline…", self))
        self.tests_jobs.request(lambda: baseline_tests(result, baseline))

    @Slot(object)
    def _on_tests_jobs_succeeded(self, tests: BaselineTests) -> None:
        result = self._result
        if result is None or tests.baseline != max(0, self.baseline_combo.currentIndex()):
            return
        labels = {c.name: variant_summary(c.variant) for c in result.configs}
        self.tests_model.set_tests(tests.tests, labels)
        self.tests_view.resizeColumnsToContents()
        n = tests.tests[0].n if tests.tests else 0
        self.tests_note.setText(
            _small(
                f"Paired over {_plural(n, 'query', 'queries')}. Wins, losses and ties count "
                "queries. p: two-sided paired randomisation test (10,000 sign flips, seed 0) "
                "and t-test; values below 0.05 are coloured. Many comparisons at once: expect "
                "some small p-values by chance.",
                self,
            )
        )

    # -- export ----------------------------------------------------------------------------------

    @Slot()
    def _on_export_button_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export runs into a folder")
        if folder:
            self.export_to(folder)

    def export_to(self, folder: str | Path) -> Job | None:
        """Write the runs, run cards and per-query CSV of the shown experiment into ``folder``."""
        result = self._result
        if result is None or self._export_job is not None:
            return None
        target = Path(folder)

        def work(_progress: Any, _cancel: Any) -> tuple[Path, ...]:
            return export_runs(result, target)

        job = Job(work, "export runs")
        job.signals.succeeded.connect(self._on_export_job_succeeded)
        job.signals.failed.connect(self._on_job_failed)
        job.signals.finished.connect(self._on_export_job_finished)
        self._export_job = job
        self._update_buttons()
        self.runner.start(job)
        return job

    @Slot(object)
    def _on_export_job_succeeded(self, written: tuple[Path, ...]) -> None:
        folder = written[0].parent if written else ""
        self.message_bar.show_message(
            f"Wrote {_plural(len(written), 'file')} (run files, run cards, per_query.csv, "
            f"experiment.json) to {folder}.",
            "info",
            timeout_ms=12000,
        )

    @Slot()
    def _on_export_job_finished(self) -> None:
        self._export_job = None
        self._update_buttons()

    # ============================================================================================
    # Per query
    # ============================================================================================

    @Slot()
    def _on_pq_metric_changed(self, *_args: object) -> None:
        metric = self.pq_metric.currentData()
        if metric:
            self.pq_model.set_metric(str(metric))

    def _selected_qid_row(self) -> int:
        rows = self.pq_view.selectionModel().selectedRows()
        if not rows:
            return -1
        return self.pq_proxy.mapToSource(rows[0]).row()

    def select_query(self, qid: str) -> None:
        """Select query ``qid`` in the per-query table (its drill-down follows)."""
        for row in range(self.pq_proxy.rowCount()):
            if self.pq_proxy.index(row, 0).data(ROW_ROLE) == qid:
                self.pq_view.selectRow(row)
                return

    @Slot(QItemSelection, QItemSelection)
    def _on_pq_view_selection_changed(self, *_args: object) -> None:
        self._request_detail()

    @Slot()
    def _on_pq_drill_changed(self, *_args: object) -> None:
        self._request_detail()

    def _request_detail(self) -> None:
        result, searcher, qrels = self._result, self.searcher, self._run_inputs.qrels
        row = self._selected_qid_row()
        if result is None or searcher is None or qrels is None or row < 0:
            return
        qid = self.pq_model.qid(row)
        text = self.pq_model.text(row)
        config = result.configs[max(0, self.pq_config.currentIndex())]
        variant = config.variant
        cutoff = self.cutoff_spin.value()
        judgements = dict(qrels.judgements.get(qid, {}))
        self.docs_title.setText(_small(f"Ranking the relevant documents of query {qid}…", self))
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
        n = len(detail.docs)
        text = (
            f"Query <b>{escape(detail.qid)}</b> under <b>{escape(variant_summary(detail.variant))}"
            f"</b>: {in_top} of its {_plural(n, 'relevant document')} in the top {detail.cutoff}"
            f" ({detail.n_matches:,} documents match)."
        )
        self.docs_title.setText(
            text + "<br>" + _small("Select a document to see its rank and its score ledger.", self)
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
        text, variant, cutoff, score = (
            detail.text,
            detail.variant,
            detail.cutoff,
            detail.cutoff_score,
        )
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
            self.why_title.setText(
                _small(
                    escape(message)
                    or "A relevant document outside the top k is explained here: its rank, how "
                    "far its score is from the cut-off, and its score ledger.",
                    self,
                )
            )
            return
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
            shown = ", ".join(missing[:8]) + (" …" if len(missing) > 8 else "")
            detail += f"; missing: {shown}"
        self.why_title.setText(
            head + "<br>" + _small(escape(detail) + f" (under {variant_summary(e.variant)}).", self)
        )
        terms = [t.term for t in e.terms if t.term and t.status == "matched"]
        self.ledger_model.set_explanation(e, TermColors(terms))
        self.ledger_view.resizeColumnsToContents()
        self.ledger_text.setPlainText(e.as_text())

    def _open_query(self, source_row: int) -> None:
        qrels = self._run_inputs.qrels
        if source_row < 0 or qrels is None:
            return
        qid = self.pq_model.qid(source_row)
        self.open_query_requested.emit(self.pq_model.text(source_row), qrels.relevant(qid))

    @Slot(QModelIndex)
    def _on_pq_view_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self._open_query(self.pq_proxy.mapToSource(index).row())

    @Slot()
    def _on_open_query_button_clicked(self) -> None:
        self._open_query(self._selected_qid_row())

    # ============================================================================================
    # Sweep
    # ============================================================================================

    def _sweep_base(self) -> Variant:
        key = str(self.sweep_variant.currentData())
        return next(v for v in all_variants() if v.key == key)

    @Slot()
    def _on_sweep_variant_changed(self, *_args: object) -> None:
        variant = self._sweep_base()
        axes = sweep_axes(variant)
        specs = {p.name: p for p in type(variant).params()}
        for name, (label, start, stop, step) in self.sweep_spins.items():
            on = name in axes
            for w in (label, start, stop, step):
                w.setEnabled(on)
            if on:
                spec = specs[name]
                for s in (start, stop):
                    s.blockSignals(True)
                    s.setRange(spec.lo, spec.hi)
                    s.blockSignals(False)
        self._on_sweep_range_changed()

    def sweep_request(self) -> SweepRequest:
        """Return the sweep chosen (raises :class:`EvalInputError` for a bad range)."""
        variant = self._sweep_base()
        grid = []
        for name in sweep_axes(variant):
            _, start, stop, step = self.sweep_spins[name]
            values = axis_values(start.value(), stop.value(), step.value())
            grid.append((name, values))
        return SweepRequest(
            variant, tuple(grid), str(self.sweep_metric.currentData()), self.options()
        )

    def set_sweep_ranges(self, key: str, **ranges: tuple[float, float, float]) -> None:
        """Choose the sweep's variant and ranges, e.g. ``k1=(0.6, 1.2, 0.3)``."""
        self.sweep_variant.setCurrentIndex(self.sweep_variant.findData(key))
        for name, (start, stop, step) in ranges.items():
            _, a, b, c = self.sweep_spins[name]
            a.setValue(start)
            b.setValue(stop)
            c.setValue(step)

    @Slot()
    def _on_sweep_range_changed(self, *_args: object) -> None:
        try:
            request = self.sweep_request()
        except EvalInputError as exc:
            self.sweep_size.setText(
                f"<span style='color:#c62828'>{escape(eval_readable(exc))}</span>"
            )
            return
        sizes = " × ".join(f"{len(v)} {axis_label(a)}" for a, v in request.grid)
        # The sweep searches as deep as its metric looks (10 for nDCG@10; 1000 without a cutoff).
        depth = metric_cutoff(request.metric) or 1000
        self.sweep_size.setText(
            _small(f"{sizes} = {_plural(request.n_cells, 'run')}, {depth:,} hits deep", self)
        )

    @Slot()
    def run_sweep(self) -> Job | None:
        """Run the sweep in the background (with progress and Cancel)."""
        searcher, inputs = self.searcher, self.inputs
        if self._sweep_job is not None:
            return None
        if searcher is None or not inputs.ready:
            self.message_bar.show_message(
                "Open an index and load a query file and a judgement file first.", "info"
            )
            return None
        try:
            request = self.sweep_request()
        except EvalInputError as exc:
            self.message_bar.show_message(eval_readable(exc), "error")
            return None

        def work(progress: Any, cancel: Any) -> SweepResult:
            return run_sweep(searcher, inputs, request, progress, cancel)

        job = Job(work, "sweep")
        job.signals.progressed.connect(self._on_sweep_job_progressed)
        job.signals.succeeded.connect(self._on_sweep_job_succeeded)
        job.signals.failed.connect(self._on_sweep_job_failed)
        job.signals.cancelled.connect(self._on_sweep_job_cancelled)
        job.signals.finished.connect(self._on_sweep_job_finished)
        self._sweep_job = job
        self.message_bar.hide()
        self.sweep_progress.setRange(0, 0)
        self.sweep_progress.setFormat("Starting…")
        self.sweep_progress.show()
        self._update_buttons()
        self.runner.start(job)
        return job

    @Slot()
    def cancel_sweep(self) -> None:
        """Stop the running sweep."""
        if self._sweep_job is not None:
            self._sweep_job.cancel.set()
            self.sweep_progress.setFormat("Cancelling…")
            self.sweep_cancel.setEnabled(False)

    def _is_sweep_job(self) -> bool:
        return self._sweep_job is not None and self.sender() is self._sweep_job.signals

    @Slot(int, int)
    def _on_sweep_job_progressed(self, done: int, total: int) -> None:
        if self._is_sweep_job():
            self.sweep_progress.setRange(0, max(total, 1))
            self.sweep_progress.setValue(done)
            self.sweep_progress.setFormat("%v / %m searches")

    @Slot(object)
    def _on_sweep_job_succeeded(self, result: SweepResult) -> None:
        if not self._is_sweep_job():
            return
        self._show_sweep(result)
        self.sweep_finished.emit(result)

    @Slot(object)
    def _on_sweep_job_failed(self, exc: BaseException) -> None:
        if self._is_sweep_job():
            self.message_bar.show_message(eval_readable(exc), "error")

    @Slot()
    def _on_sweep_job_cancelled(self) -> None:
        if self._is_sweep_job():
            self.message_bar.show_message("Sweep cancelled.", "info", timeout_ms=8000)

    @Slot()
    def _on_sweep_job_finished(self) -> None:
        if not self._is_sweep_job():
            return
        self._sweep_job = None
        self.sweep_progress.hide()
        self._update_buttons()

    def sweep_result(self) -> SweepResult | None:
        """Return the sweep shown."""
        return self._sweep

    def _show_sweep(self, result: SweepResult | None) -> None:
        self._sweep = result
        self.slice_combo.blockSignals(True)
        self.slice_combo.clear()
        best_slice = 0
        if result is not None and len(result.axes) > 2:
            best_slice = result.best[result.metrics[0]].index[2]
            for v in result.values[2]:
                self.slice_combo.addItem(f"{v:g}")
            self.slice_combo.setCurrentIndex(best_slice)
        self.slice_combo.blockSignals(False)
        three = result is not None and len(result.axes) > 2
        self.slice_combo.setVisible(three)
        self.slice_label.setVisible(three)
        if three:
            self.slice_label.setText(f"Showing {axis_label(result.axes[2])} =")
        self.heatmap.set_sweep(result, slice_index=best_slice)
        self.heatmap_stack.setCurrentIndex(0 if result is None else 1)
        self.apply_best_button.setEnabled(result is not None)
        if result is None:
            self.best_label.setText(
                _small(
                    "Sweep k1 and b (and δ) of one ranking function over the loaded queries, "
                    "with the conventions chosen on the left.",
                    self,
                )
            )
            return
        metric = result.metrics[0]
        best = result.best[metric]
        params = ", ".join(f"{axis_label(a)} = {v:g}" for a, v in best.params.items())
        text = f"Best {escape(metric)}: <b>{best.value:.4f}</b> at <b>{escape(params)}</b>"
        edge = result.on_edge(metric)
        if edge:
            axes = ", ".join(axis_label(a) for a in edge)
            text += "<br>" + _small(
                f"The best cell is on the edge of the {escape(axes)} range: a value beyond it "
                "may be better still.",
                self,
            )
        default = result.base
        text += "<br>" + _small(
            f"{_plural(len(result.experiment.configs), 'run')}; other parameters as in "
            f"{escape(variant_summary(default))}.",
            self,
        )
        self.best_label.setText(text)

    @Slot()
    def _on_slice_combo_changed(self, *_args: object) -> None:
        if self._sweep is not None:
            self.heatmap.set_sweep(self._sweep, slice_index=self.slice_combo.currentIndex())

    @Slot(object)
    def _on_heatmap_cell_clicked(self, index: tuple[int, ...]) -> None:
        if self._sweep is None:
            return
        cell = self._sweep.cell(index)
        self.apply_parameters_requested.emit(cell.variant)
        self.message_bar.show_message(
            f"Using {variant_summary(cell.variant)} ({cell.value:.4f} {self._sweep.metrics[0]}) "
            "in the Search tab.",
            "info",
            timeout_ms=6000,
        )

    @Slot()
    def _on_apply_best_button_clicked(self) -> None:
        if self._sweep is not None:
            best = self._sweep.best[self._sweep.metrics[0]]
            self._on_heatmap_cell_clicked(best.index)

    # ============================================================================================
    # Shared
    # ============================================================================================

    @Slot(object)
    def _on_job_failed(self, exc: BaseException) -> None:
        self.message_bar.show_message(eval_readable(exc), "error")

    def busy(self) -> bool:
        """Return whether an experiment, a sweep, a file read or an export is running."""
        return any(
            j is not None
            for j in (self._eval_job, self._sweep_job, self._load_job, self._export_job)
        )
