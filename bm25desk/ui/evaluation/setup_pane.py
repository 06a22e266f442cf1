"""The left side of the Evaluation view: what to evaluate, and Run.

Files, ranking functions, metrics and conventions, and the Run button with its progress and Cancel.
It runs the experiment in the background.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Index, Searcher
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.evaluation.evaluate import EvalInputError, ExperimentResult
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.job_controller import JobController
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.messages import MessageBar
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.evaluation.configs_box import ConfigsBox
from bm25desk.ui.evaluation.inputs_box import InputsBox
from bm25desk.ui.evaluation.labels import eval_readable, small
from bm25desk.ui.evaluation.options_box import OptionsBox
from bm25desk.ui.evaluation.work import EvalInputs, ExperimentRequest, run_eval


class SetupPane(QWidget):
    """Chooses an experiment and runs it.

    Signals
    -------
    experiment_finished(object)
        An :class:`ExperimentResult`; :attr:`run_inputs` holds the inputs it was run on.
    changed()
        Something that decides whether an experiment or a sweep can run changed.
    """

    experiment_finished = Signal(object)
    changed = Signal()

    def __init__(
        self, runner: JobRunner, messages: MessageBar, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.messages = messages
        self.index: Index | None = None
        self.searcher: Searcher | None = None
        self.run_inputs = EvalInputs()
        self.experiments = JobController(runner, "evaluation", parent=self)
        self.experiments.succeeded.connect(self._on_experiments_succeeded)
        self.experiments.failed.connect(self._on_experiments_failed)
        self.experiments.cancelled.connect(self._on_experiments_cancelled)
        self.experiments.finished.connect(self.update_run)

        self.inputs_box = InputsBox(runner, messages)
        self.inputs_box.inputs_loaded.connect(self._on_changed)
        self.configs_box = ConfigsBox()
        self.configs_box.changed.connect(self._on_changed)
        self.options_box = OptionsBox()
        self.options_box.metrics_changed.connect(self._on_changed)
        self.run_button = QPushButton("Run evaluation")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.experiments.attach_progress(self.progress, "searches")
        self.run_status = QLabel()
        self.run_status.setWordWrap(True)

        inner = QWidget()
        column = QVBoxLayout(inner)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.inputs_box)
        column.addWidget(self.configs_box, 1)
        column.addWidget(self.options_box)
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Run, its progress and what it will do stay in view under the scrolling choices.
        run_row = QHBoxLayout()
        run_row.addWidget(self.run_button, 1)
        run_row.addWidget(self.cancel_button)
        self.progress.setMinimumHeight(self.progress.sizeHint().height())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 6)
        layout.setSpacing(4)
        layout.addWidget(scroll, 1)
        bottom = QVBoxLayout()
        bottom.setContentsMargins(6, 0, 6, 0)
        bottom.addLayout(run_row)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.run_status)
        layout.addLayout(bottom)
        self.setMinimumWidth(420)
        self.update_run()

    @property
    def inputs(self) -> EvalInputs:
        """Return the queries and judgements loaded."""
        return self.inputs_box.inputs

    def ready(self) -> bool:
        """Return whether an index is open and both files are loaded."""
        searcher = self.searcher
        return searcher is not None and searcher.index.n_docs > 0 and self.inputs.ready

    def set_index(self, index: Index | None, searcher: Searcher | None) -> None:
        """Evaluate on ``index`` from now on; a running experiment is dropped."""
        self.index, self.searcher = index, searcher
        self.experiments.drop()
        self.inputs_box.set_index(index)
        self.update_run()

    # -- running ---------------------------------------------------------------------------------

    @Slot()
    def run(self) -> Job | None:
        """Run the experiment in the background (with progress and Cancel)."""
        searcher, inputs = self.searcher, self.inputs
        if self.experiments.busy():
            return None
        if searcher is None or not searcher.index.n_docs:
            self.messages.show_message("Open an index with documents first.", "info")
            return None
        if not inputs.ready:
            self.messages.show_message("Load a query file and a judgement file first.", "info")
            return None
        request = self._request()
        if request is None:
            return None

        def work(progress: ProgressFn, cancel: CancelToken) -> ExperimentResult:
            return run_eval(searcher, inputs, request, progress, cancel)

        self.run_inputs = inputs
        self.messages.hide()
        job = self.experiments.start(work)
        self.run_status.setText(small("Searching every query with every configuration…", self))
        self.update_run()
        return job

    def _request(self) -> ExperimentRequest | None:
        """Return the experiment chosen, or say why it cannot run (None)."""
        configs = self.configs_box.configs()
        names = [repr(v) for v in configs]
        dupes = sorted(
            {variant_summary(v) for v, n in zip(configs, names, strict=True) if names.count(n) > 1}
        )
        if dupes:
            self.messages.show_message(
                f"{dupes[0]} is checked twice with the same parameters: change the parameters "
                "of the copy or uncheck it.",
                "error",
            )
            return None
        boxes = self.options_box
        try:
            return ExperimentRequest(
                configs, boxes.metrics(), boxes.k_spin.value(), boxes.options()
            )
        except EvalInputError as exc:
            self.messages.show_message(eval_readable(exc), "error")
            return None

    @Slot()
    def cancel(self) -> None:
        """Stop the running experiment."""
        if self.experiments.busy():
            self.experiments.cancel()
            self.cancel_button.setEnabled(False)

    @Slot(object)
    def _on_experiments_succeeded(self, result: ExperimentResult) -> None:
        self.experiment_finished.emit(result)

    @Slot(object)
    def _on_experiments_failed(self, exc: BaseException) -> None:
        self.messages.show_message(eval_readable(exc), "error")

    @Slot()
    def _on_experiments_cancelled(self) -> None:
        self.messages.show_message("Evaluation cancelled.", "info", timeout_ms=8000)

    @Slot()
    def _on_changed(self, *_args: object) -> None:
        self.update_run()
        self.changed.emit()

    def update_run(self) -> None:
        """Enable Run and Cancel, and say what a run would do or what it still needs."""
        running = self.experiments.busy()
        can_run = bool(self.configs_box.configs()) and bool(self.options_box.metrics())
        self.run_button.setEnabled(self.ready() and not running and can_run)
        self.cancel_button.setEnabled(running)
        if not running:
            self.run_status.setText(small(escape(self.next_step()), self))

    def next_step(self) -> str:
        """Return what a run would do, or what it still needs (one plain sentence)."""
        n_configs = len(self.configs_box.configs())
        if self.searcher is None:
            return "Open an index to evaluate it."
        if not self.searcher.index.n_docs:
            return f"“{self.searcher.index.name}” has no documents: nothing to evaluate."
        if self.inputs.queries is None and self.inputs.qrels is None:
            return "Load a query file and a judgement file."
        if self.inputs.queries is None:
            return "Load a query file (the judgements are loaded)."
        if self.inputs.qrels is None:
            return "Load a judgement file (the queries are loaded)."
        if n_configs == 0:
            return "Check at least one ranking function."
        if not self.options_box.metrics():
            return "Check at least one metric."
        n_queries = self.inputs.judged_queries()
        return (
            f"Ready: {plural(n_configs, 'configuration')} × "
            f"{plural(n_queries, 'judged query', 'judged queries')} on "
            f"“{self.index.name if self.index is not None else ''}”."
        )
