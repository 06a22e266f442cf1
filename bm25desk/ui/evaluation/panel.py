"""The Evaluation tab: measure ranking functions against relevance judgements.

Load queries and judgements (formats detected, skipped lines shown), choose configurations,
metrics and conventions, and run the experiment in the background with progress and Cancel
(:mod:`~bm25desk.ui.evaluation.setup_pane`). Results
(:mod:`~bm25desk.ui.evaluation.results_tab`): a configuration × metric table, a grouped bar
chart, paired tests against a chosen baseline, and export. Per query
(:mod:`~bm25desk.ui.evaluation.per_query_tab`): the per-query values, one query's relevant
documents with their ranks, and the "why not" of one outside the top k. A k1 × b (× δ) sweep
(:mod:`~bm25desk.ui.evaluation.sweep_tab`) draws a heatmap; clicking a cell asks the Search tab
to use its parameters.

This module assembles the parts and passes the open index and each result between them. Every
engine call runs in the background; errors are shown as sentences in the tab's message bar.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from bm25desk.engine import Index, Searcher, Variant
from bm25desk.evaluation.evaluate import EvalOptions, ExperimentResult
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.messages import MessageBar
from bm25desk.ui.common.widgets import splitter
from bm25desk.ui.evaluation.per_query_tab import PerQueryTab
from bm25desk.ui.evaluation.results_tab import ResultsTab
from bm25desk.ui.evaluation.setup_pane import SetupPane
from bm25desk.ui.evaluation.sweep_tab import SweepTab
from bm25desk.ui.evaluation.work import EvalInputs


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
        self.message_bar = MessageBar()
        self.setup = SetupPane(runner, self.message_bar)
        self.results = ResultsTab(runner, self.message_bar)
        self.per_query = PerQueryTab(runner, self.message_bar)
        self.sweep = SweepTab(runner, self.message_bar)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.results, "Results")
        self.tabs.addTab(self.per_query, "Per query")
        self.tabs.addTab(self.sweep, "Parameter sweep")
        self.splitter = splitter(
            Qt.Orientation.Horizontal, self.setup, self.tabs, stretch=(0, 1), sizes=(430, 930)
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.splitter, 1)

        self.setup.inputs_box.inputs_loaded.connect(self.inputs_loaded)
        self.setup.changed.connect(self._on_setup_changed)
        self.setup.experiments.started.connect(lambda _job: self.results.set_running(True))
        self.setup.experiments.finished.connect(lambda: self.results.set_running(False))
        self.setup.experiment_finished.connect(self._on_setup_experiment_finished)
        self.per_query.open_query_requested.connect(self.open_query_requested)
        self.sweep.run_requested.connect(self.run_sweep)
        self.sweep.sweep_finished.connect(self.sweep_finished)
        self.sweep.apply_parameters_requested.connect(self.apply_parameters_requested)
        self._on_setup_changed()

    # -- the open index --------------------------------------------------------------------------

    def set_index(self, index: Index | None, searcher: Searcher | None) -> None:
        """Evaluate on ``index`` (searched with ``searcher``); None: no index is open.

        Results of another index are cleared, and running work for it is dropped. Loaded
        queries and judgements stay.
        """
        if searcher is not None and index is None:
            index = searcher.index
        if searcher is self.searcher and index is self.index:
            return
        self.index, self.searcher = index, searcher
        self.setup.set_index(index, searcher)
        self.sweep.sweeps.drop()
        self.per_query.set_searcher(searcher)
        self.results.tests_jobs.invalidate()
        self._show_result(None)
        self.sweep.show_sweep(None)
        self._on_setup_changed()

    # -- inputs and choices ----------------------------------------------------------------------

    @property
    def inputs(self) -> EvalInputs:
        """Return the queries and judgements loaded."""
        return self.setup.inputs

    def set_files(self, queries: str | Path | None, qrels: str | Path | None) -> Job | None:
        """Read a query file and/or a judgement file in the background (None: keep as is)."""
        return self.setup.inputs_box.set_files(queries, qrels)

    def configs(self) -> tuple[Variant, ...]:
        """Return the checked configurations."""
        return self.setup.configs_box.configs()

    def set_configs(self, variants: list[Variant] | tuple[Variant, ...]) -> None:
        """Check exactly ``variants`` (rows are added for extra parameter settings)."""
        self.setup.configs_box.set_configs(variants)

    def metrics(self) -> tuple[str, ...]:
        """Return the checked metrics, in the offered order."""
        return self.setup.options_box.metrics()

    def set_metrics(self, metrics: list[str] | tuple[str, ...]) -> None:
        """Check exactly ``metrics``."""
        self.setup.options_box.set_metrics(metrics)

    def options(self) -> EvalOptions:
        """Return the conventions chosen."""
        return self.setup.options_box.options()

    # -- experiments -----------------------------------------------------------------------------

    def run(self) -> Job | None:
        """Run the experiment in the background (with progress and Cancel)."""
        return self.setup.run()

    def cancel(self) -> None:
        """Stop the running experiment."""
        self.setup.cancel()

    def result(self) -> ExperimentResult | None:
        """Return the experiment shown."""
        return self.results.result()

    @Slot(object)
    def _on_setup_experiment_finished(self, result: ExperimentResult) -> None:
        self._show_result(result)
        self.tabs.setCurrentIndex(0)
        self.experiment_finished.emit(result)

    def _show_result(self, result: ExperimentResult | None) -> None:
        name = self.index.name if self.index is not None else ""
        self.results.show_result(result, name)
        self.per_query.show_result(result, self.setup.run_inputs)

    # -- sweeps ----------------------------------------------------------------------------------

    @Slot()
    def run_sweep(self) -> Job | None:
        """Run the sweep chosen on the Parameter-sweep tab (with progress and Cancel)."""
        searcher, inputs = self.searcher, self.inputs
        if searcher is None or not inputs.ready:
            self.message_bar.show_message(
                "Open an index and load a query file and a judgement file first.", "info"
            )
            return None
        return self.sweep.run(searcher, inputs, self.options())

    @Slot()
    def _on_setup_changed(self) -> None:
        self.sweep.set_ready(self.setup.ready())
        self.results.set_next_step(self.setup.next_step())

    def busy(self) -> bool:
        """Return whether an experiment, a sweep, a file read or an export is running."""
        controllers = (
            self.setup.experiments,
            self.sweep.sweeps,
            self.setup.inputs_box.loads,
            self.results.exports,
        )
        return any(c.busy() for c in controllers)
