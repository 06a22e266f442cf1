"""The Evaluation view's Results tab: the results table, chart, tests and export.

Configuration × metric (best values bold), a grouped bar chart, paired tests against a chosen
baseline, and the export of runs and run cards.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.evaluation.evaluate import ExperimentResult
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.job_controller import JobController
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.messages import MessageBar
from bm25desk.ui.common.placeholder import PlaceholderStack
from bm25desk.ui.common.table_view import make_table
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.common.widgets import column, splitter, text_label
from bm25desk.ui.evaluation.labels import eval_readable, small
from bm25desk.ui.evaluation.plots import MetricBars
from bm25desk.ui.evaluation.result_models import SummaryModel, TestColumn, TestsModel
from bm25desk.ui.evaluation.work import BaselineTests, baseline_tests, export_runs

EMPTY = (
    "The results of an evaluation (a table, a chart, and paired tests against a baseline) "
    "appear here."
)
RUNNING = "Evaluating… the results appear when every configuration has searched every judged query."


class ResultsTab(PlaceholderStack):
    """Shows an :class:`ExperimentResult` (a placeholder sentence until there is one)."""

    def __init__(
        self, runner: JobRunner, messages: MessageBar, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.messages = messages
        self._result: ExperimentResult | None = None
        self._index_name = ""
        self._next_step = ""
        self._running = False
        self.tests_jobs = LatestOnly(runner, "eval baseline", self)
        self.tests_jobs.succeeded.connect(self._on_tests_jobs_succeeded)
        self.tests_jobs.failed.connect(self._on_failed)
        self.exports = JobController(runner, "export runs", parent=self)
        self.exports.succeeded.connect(self._on_exports_succeeded)
        self.exports.failed.connect(self._on_failed)
        self.exports.finished.connect(self._update_export)

        self.result_label = text_label(rich=True)
        self.summary_model = SummaryModel(self)
        self.summary_view, self.summary_proxy = make_table(self.summary_model, compact=True)
        header = self.summary_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.bars = MetricBars()
        self.splitter = splitter(
            Qt.Orientation.Vertical,
            self._make_top(),
            self.bars,
            self._make_tests(),
            stretch=(2, 3, 3),
        )
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.splitter)
        self.set_content(content)
        self.show_result(None)

    def _make_top(self) -> QWidget:
        return column(self.result_label, self.summary_view)

    def _make_tests(self) -> QWidget:
        self.baseline_combo = QComboBox()
        self.baseline_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.baseline_combo.setToolTip("Every other configuration is compared with this one")
        self.baseline_combo.currentIndexChanged.connect(self._on_baseline_combo_changed)
        self.tests_model = TestsModel(self)
        self.tests_view, self.tests_proxy = make_table(self.tests_model, compact=True)
        header = self.tests_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TestColumn.CONFIG, QHeaderView.ResizeMode.Stretch)
        self.tests_note = text_label(rich=True)
        self.export_button = QPushButton("Export runs…")
        self.export_button.setToolTip(
            "Write a TREC run file and a run card (JSON) per configuration, a per-query CSV and "
            "experiment.json into a folder"
        )
        self.export_button.clicked.connect(self._on_export_button_clicked)
        base_row = QHBoxLayout()
        base_row.addWidget(QLabel("Baseline:"))
        base_row.addWidget(self.baseline_combo)
        base_row.addStretch(1)
        base_row.addWidget(self.export_button)
        return column(base_row, self.tests_view, self.tests_note, stretch=1)

    # -- the result ------------------------------------------------------------------------------

    def result(self) -> ExperimentResult | None:
        """Return the experiment shown."""
        return self._result

    def set_next_step(self, text: str) -> None:
        """Say what comes next (what is missing, or that Run is ready) while no result is shown."""
        self._next_step = text
        if self._result is None and not self._running:
            self.placeholder.setText(f"{text}\n\n{EMPTY}")

    def set_running(self, running: bool) -> None:
        """Say that an experiment runs (while no result is shown), or no longer."""
        self._running = running
        if self._result is None:
            self.placeholder.setText(RUNNING if running else f"{self._next_step}\n\n{EMPTY}")

    def show_result(self, result: ExperimentResult | None, index_name: str = "") -> None:
        """Show ``result`` of an experiment on index ``index_name`` (None: the empty state)."""
        self._result = result
        self._index_name = index_name
        self.summary_model.set_result(result, 0)
        if self.summary_model.columnCount():
            # The configuration's name elides (whole in its tooltip): every metric stays in view.
            # Set once the columns exist: a mode for a section not there yet is ignored.
            header = self.summary_view.horizontalHeader()
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.bars.set_result(result)
        self.tests_model.set_tests((), {})
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        for c in result.configs if result is not None else ():
            self.baseline_combo.addItem(variant_summary(c.variant))
        self.baseline_combo.blockSignals(False)
        self._update_export()
        if result is None:
            self.result_label.setText("")
            self.tests_note.setText("")
            self.show_placeholder(f"{self._next_step}\n\n{EMPTY}")
            return
        self.result_label.setText(self._describe(result))
        self.show_content()
        self._fit_summary()
        self._request_tests()

    def _describe(self, result: ExperimentResult) -> str:
        opts = result.options
        averaged = (
            "judged queries" if opts.average == "judged" else "all queries (unjudged count 0)"
        )
        parts = [
            f"<b>{plural(len(result.configs), 'configuration')}</b> on "
            f"<b>{escape(self._index_name)}</b>, "
            f"mean over {plural(len(result.qids), 'query', 'queries')} ({averaged}), "
            f"{result.k:,} hits deep; equal scores in "
            f"{'engine order' if opts.ties == 'engine' else 'trec_eval order'}"
            f"{'; self-hits dropped' if opts.drop_self_hits else ''}. Best value of each "
            "metric in bold."
        ]
        notes = list(result.notes)
        if result.unjudged and opts.average == "judged":
            notes.append(f"{len(result.unjudged):,} queries without judgements are not counted")
        if notes:
            parts.append(small("<br>".join(escape(n[:1].upper() + n[1:]) for n in notes), self))
        return "<br>".join(parts)

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
        total = sum(self.splitter.sizes()) or 800
        rest = max(200, total - top)
        self.splitter.setSizes([top, rest // 2, rest - rest // 2])

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
                small("Evaluate two or more configurations to compare them.", self)
            )
            return
        self.tests_note.setText(small("Testing against the baseline…", self))
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
            small(
                f"Paired over {plural(n, 'query', 'queries')}. Wins, losses and ties count "
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
        if result is None:
            return None
        target = Path(folder)

        def work(_progress: ProgressFn, _cancel: CancelToken) -> tuple[Path, ...]:
            return export_runs(result, target)

        job = self.exports.start(work)
        self._update_export()
        return job

    @Slot(object)
    def _on_exports_succeeded(self, written: tuple[Path, ...]) -> None:
        folder = written[0].parent if written else ""
        self.messages.show_message(
            f"Wrote {plural(len(written), 'file')} (run files, run cards, per_query.csv, "
            f"experiment.json) to {folder}.",
            "info",
            timeout_ms=12000,
        )

    def _update_export(self) -> None:
        self.export_button.setEnabled(self._result is not None and not self.exports.busy())

    @Slot(object)
    def _on_failed(self, exc: BaseException) -> None:
        self.messages.show_message(eval_readable(exc), "error")
