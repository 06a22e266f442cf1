"""The Evaluation view's Parameter-sweep tab: a metric over k1 × b (× δ) as a heatmap.

One ranking function over the loaded queries, run in the background; a clicked cell's parameters go
to the Search tab.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Searcher, Variant, all_variants
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.evaluation.evaluate import EvalInputError, EvalOptions, SweepResult, metric_cutoff
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.job_controller import JobController
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.messages import MessageBar
from bm25desk.ui.common.placeholder import PlaceholderStack
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.common.widgets import text_label
from bm25desk.ui.evaluation.labels import eval_readable, small
from bm25desk.ui.evaluation.plots import SweepHeatmap, axis_label
from bm25desk.ui.evaluation.work import (
    METRIC_HELP,
    METRICS,
    EvalInputs,
    SweepRequest,
    axis_values,
    run_sweep,
    sweep_axes,
)

SWEEP_DEFAULTS = {"k1": (0.6, 1.8, 0.3), "b": (0.2, 1.0, 0.2), "delta": (0.0, 1.0, 0.5)}
"""Default sweep ranges (start, stop, step) per parameter."""

EMPTY = (
    "Choose a ranking function, the ranges of its parameters and a metric, then Run sweep: the "
    "metric of every combination appears here as a heatmap."
)

RangeSpins = tuple[QLabel, QDoubleSpinBox, QDoubleSpinBox, QDoubleSpinBox]


def _range_spin(lo: float, hi: float, step: float, value: float) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(lo, hi)
    spin.setDecimals(2)
    spin.setSingleStep(step)
    spin.setValue(value)
    spin.setKeyboardTracking(False)
    return spin


class SweepTab(QWidget):
    """Sweep controls beside the heatmap.

    Signals
    -------
    run_requested()
        Run was clicked (the view supplies the index, the inputs and the conventions).
    sweep_finished(object)
        A :class:`SweepResult` is shown.
    apply_parameters_requested(object)
        A :class:`Variant` (a clicked cell's parameters) to use in the Search tab.
    """

    run_requested = Signal()
    sweep_finished = Signal(object)
    apply_parameters_requested = Signal(object)

    def __init__(
        self, runner: JobRunner, messages: MessageBar, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.messages = messages
        self._sweep: SweepResult | None = None
        self._ready = False
        self.sweeps = JobController(runner, "sweep", parent=self)
        self.sweeps.succeeded.connect(self._on_sweeps_succeeded)
        self.sweeps.failed.connect(self._on_failed)
        self.sweeps.cancelled.connect(self._on_sweeps_cancelled)
        self.sweeps.finished.connect(self._update_buttons)
        self.heatmap = SweepHeatmap()
        self.heatmap.cell_clicked.connect(self._on_heatmap_cell_clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self._make_controls())
        layout.addWidget(self._make_map(), 1)
        self._on_variant_changed()
        self.show_sweep(None)

    def _make_controls(self) -> QWidget:
        self.variant_combo = QComboBox()
        for v in all_variants():
            if sweep_axes(v):
                self.variant_combo.addItem(type(v).display_name(), v.key)
        self.variant_combo.setCurrentIndex(max(0, self.variant_combo.findData("lucene")))
        self.variant_combo.currentIndexChanged.connect(self._on_variant_changed)
        self.variant_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.variant_combo.setMinimumContentsLength(14)
        self.metric_combo = QComboBox()
        for m in METRICS:
            self.metric_combo.addItem(m, m)
            self.metric_combo.setItemData(
                self.metric_combo.count() - 1, METRIC_HELP[m], Qt.ItemDataRole.ToolTipRole
            )
        self.metric_combo.setCurrentIndex(self.metric_combo.findData("nDCG@10"))
        self.metric_combo.currentIndexChanged.connect(self._on_range_changed)
        self.size_label = QLabel()
        self.run_button = QPushButton("Run sweep")
        self.run_button.clicked.connect(self.run_requested)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.sweeps.attach_progress(self.progress, "searches")
        self.best_label = text_label(rich=True)
        self.apply_best_button = QPushButton("Use the best in Search")
        self.apply_best_button.clicked.connect(self._on_apply_best_button_clicked)
        controls = QFormLayout()
        controls.addRow("Function", self.variant_combo)
        controls.addRow("Metric", self.metric_combo)
        controls.addRow(self._make_ranges())
        controls.addRow(self.size_label)
        run_row = QHBoxLayout()
        run_row.addWidget(self.run_button, 1)
        run_row.addWidget(self.cancel_button)
        controls.addRow(run_row)
        controls.addRow(self.progress)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(controls)
        left_layout.addWidget(self.best_label)
        left_layout.addWidget(self.apply_best_button)
        left_layout.addStretch(1)
        left.setMinimumWidth(300)
        left.setMaximumWidth(340)
        return left

    def _make_ranges(self) -> QGridLayout:
        self.spins: dict[str, RangeSpins] = {}
        ranges = QGridLayout()
        ranges.setHorizontalSpacing(6)
        for i, text in enumerate(("from", "to", "step"), start=1):
            ranges.addWidget(QLabel(text), 0, i)
        for row, name in enumerate(("k1", "b", "delta"), start=1):
            start, stop, step = SWEEP_DEFAULTS[name]
            label = QLabel(axis_label(name))
            spins = (
                _range_spin(0.0, 3.0, 0.05, start),
                _range_spin(0.0, 3.0, 0.05, stop),
                _range_spin(0.01, 3.0, 0.05, step),
            )
            ranges.addWidget(label, row, 0)
            for i, s in enumerate(spins):
                s.valueChanged.connect(self._on_range_changed)
                ranges.addWidget(s, row, i + 1)
            self.spins[name] = (label, *spins)
        return ranges

    def _make_map(self) -> QWidget:
        self.slice_combo = QComboBox()
        self.slice_combo.currentIndexChanged.connect(self._on_slice_combo_changed)
        self.slice_label = QLabel()
        slice_row = QHBoxLayout()
        slice_row.addWidget(self.slice_label)
        slice_row.addWidget(self.slice_combo)
        slice_row.addStretch(1)
        hint = QLabel(
            small(
                "Click a cell to use its parameters in the Search tab. The white outline marks "
                "the best cell.",
                self,
            )
        )
        self.heatmap_stack = PlaceholderStack(self.heatmap)
        self.heatmap_stack.placeholder.setText(EMPTY)
        right = QWidget()
        layout = QVBoxLayout(right)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(slice_row)
        layout.addWidget(self.heatmap_stack, 1)
        layout.addWidget(hint)
        return right

    # -- the request -----------------------------------------------------------------------------

    def _base(self) -> Variant:
        key = str(self.variant_combo.currentData())
        return next(v for v in all_variants() if v.key == key)

    def request(self, options: EvalOptions | None = None) -> SweepRequest:
        """Return the sweep chosen (raises :class:`EvalInputError` for a bad range)."""
        variant = self._base()
        grid = []
        for name in sweep_axes(variant):
            _, start, stop, step = self.spins[name]
            grid.append((name, axis_values(start.value(), stop.value(), step.value())))
        metric = str(self.metric_combo.currentData())
        return SweepRequest(variant, tuple(grid), metric, options or EvalOptions())

    def set_ranges(self, key: str, **ranges: tuple[float, float, float]) -> None:
        """Choose the sweep's variant and ranges, e.g. ``k1=(0.6, 1.2, 0.3)``."""
        self.variant_combo.setCurrentIndex(self.variant_combo.findData(key))
        for name, values in ranges.items():
            for spin, value in zip(self.spins[name][1:], values, strict=True):
                spin.setValue(value)

    @Slot()
    def _on_variant_changed(self, *_args: object) -> None:
        variant = self._base()
        axes = sweep_axes(variant)
        specs = {p.name: p for p in type(variant).params()}
        for name, (label, start, stop, step) in self.spins.items():
            on = name in axes
            for w in (label, start, stop, step):
                w.setEnabled(on)
            if on:
                spec = specs[name]
                for s in (start, stop):
                    s.blockSignals(True)
                    s.setRange(spec.lo, spec.hi)
                    s.blockSignals(False)
        self._on_range_changed()

    @Slot()
    def _on_range_changed(self, *_args: object) -> None:
        try:
            request = self.request()
        except EvalInputError as exc:
            self.size_label.setText(
                f"<span style='color:#c62828'>{escape(eval_readable(exc))}</span>"
            )
            return
        sizes = " × ".join(f"{len(v)} {axis_label(a)}" for a, v in request.grid)
        # The sweep searches as deep as its metric looks (10 for nDCG@10; 1000 without a cutoff).
        depth = metric_cutoff(request.metric) or 1000
        self.size_label.setText(
            small(f"{sizes} = {plural(request.n_cells, 'run')}, {depth:,} hits deep", self)
        )

    # -- running ---------------------------------------------------------------------------------

    def set_ready(self, ready: bool) -> None:
        """Enable Run when an index is open and both files are loaded."""
        self._ready = ready
        self._update_buttons()

    def _update_buttons(self) -> None:
        sweeping = self.sweeps.busy()
        self.run_button.setEnabled(self._ready and not sweeping)
        self.cancel_button.setEnabled(sweeping)

    def run(self, searcher: Searcher, inputs: EvalInputs, options: EvalOptions) -> Job | None:
        """Run the sweep chosen on ``searcher``'s index in the background."""
        if self.sweeps.busy():
            return None
        try:
            request = self.request(options)
        except EvalInputError as exc:
            self.messages.show_message(eval_readable(exc), "error")
            return None

        def work(progress: ProgressFn, cancel: CancelToken) -> SweepResult:
            return run_sweep(searcher, inputs, request, progress, cancel)

        self.messages.hide()
        job = self.sweeps.start(work)
        self._update_buttons()
        return job

    @Slot()
    def cancel(self) -> None:
        """Stop the running sweep."""
        if self.sweeps.busy():
            self.sweeps.cancel()
            self.cancel_button.setEnabled(False)

    @Slot(object)
    def _on_sweeps_succeeded(self, result: SweepResult) -> None:
        self.show_sweep(result)
        self.sweep_finished.emit(result)

    @Slot()
    def _on_sweeps_cancelled(self) -> None:
        self.messages.show_message("Sweep cancelled.", "info", timeout_ms=8000)

    @Slot(object)
    def _on_failed(self, exc: BaseException) -> None:
        self.messages.show_message(eval_readable(exc), "error")

    # -- the result ------------------------------------------------------------------------------

    def result(self) -> SweepResult | None:
        """Return the sweep shown."""
        return self._sweep

    def show_sweep(self, result: SweepResult | None) -> None:
        """Draw ``result`` (None: the empty state)."""
        self._sweep = result
        three = result is not None and len(result.axes) > 2
        best_slice = result.best[result.metrics[0]].index[2] if three and result else 0
        self.slice_combo.blockSignals(True)
        self.slice_combo.clear()
        if three and result is not None:
            for v in result.values[2]:
                self.slice_combo.addItem(f"{v:g}")
            self.slice_combo.setCurrentIndex(best_slice)
            self.slice_label.setText(f"Showing {axis_label(result.axes[2])} =")
        self.slice_combo.blockSignals(False)
        self.slice_combo.setVisible(three)
        self.slice_label.setVisible(three)
        self.heatmap.set_sweep(result, slice_index=best_slice)
        self.heatmap_stack.setCurrentIndex(0 if result is None else 1)
        self.apply_best_button.setEnabled(result is not None)
        self.best_label.setText(self._describe(result))

    def _describe(self, result: SweepResult | None) -> str:
        if result is None:
            return small(
                "Sweep k1 and b (and δ) of one ranking function over the loaded queries, "
                "with the conventions chosen on the left.",
                self,
            )
        metric = result.metrics[0]
        best = result.best[metric]
        params = ", ".join(f"{axis_label(a)} = {v:g}" for a, v in best.params.items())
        text = f"Best {escape(metric)}: <b>{best.value:.4f}</b> at <b>{escape(params)}</b>"
        edge = result.on_edge(metric)
        if edge:
            axes = ", ".join(axis_label(a) for a in edge)
            text += "<br>" + small(
                f"The best cell is on the edge of the {escape(axes)} range: a value beyond it "
                "may be better still.",
                self,
            )
        return (
            text
            + "<br>"
            + small(
                f"{plural(len(result.experiment.configs), 'run')}; other parameters as in "
                f"{escape(variant_summary(result.base))}.",
                self,
            )
        )

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
        self.messages.show_message(
            f"Using {variant_summary(cell.variant)} ({cell.value:.4f} {self._sweep.metrics[0]}) "
            "in the Search tab.",
            "info",
            timeout_ms=6000,
        )

    @Slot()
    def _on_apply_best_button_clicked(self) -> None:
        if self._sweep is not None:
            self._on_heatmap_cell_clicked(self._sweep.best[self._sweep.metrics[0]].index)
