"""What an experiment measures and how: metrics, ranking depth and conventions.

The conventions: which queries the mean is over, how equal scores are ordered, BEIR self-hits.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGridLayout, QGroupBox, QSpinBox

from bm25desk.evaluation.evaluate import EvalOptions
from bm25desk.ui.common.widgets import combo_box
from bm25desk.ui.evaluation.work import METRIC_HELP, METRICS

DEFAULT_METRICS = ("RR@10", "nDCG@10", "AP", "P@10", "R@100")
"""Metrics checked when the view opens."""


class OptionsBox(QGroupBox):
    """Metric check boxes, ranking depth and conventions.

    Signals
    -------
    metrics_changed()
        A metric was checked or unchecked.
    """

    metrics_changed = Signal()

    def __init__(self) -> None:
        super().__init__("Metrics and conventions")
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
        self.k_spin = QSpinBox()
        self.k_spin.setRange(1, 10_000)
        self.k_spin.setValue(1000)
        self.k_spin.setSingleStep(100)
        self.k_spin.setToolTip(
            "How many hits of each query to evaluate (TREC runs are 1000 deep; R@1000 needs "
            "1000). Fewer is faster."
        )
        self.average_combo = combo_box(
            (
                ("judged queries (trec_eval -c)", "judged"),
                ("all queries, unjudged count 0", "all"),
            ),
            "Which queries the mean is taken over: queries without judgements are usually left "
            "out; some tutorials count them as 0",
        )
        self.ties_combo = combo_box(
            (
                ("engine order (score, then index order)", "engine"),
                ("trec_eval (score, then document id)", "trec_eval"),
            ),
            "How documents with equal scores are ordered when evaluated",
        )
        self.self_hits_check = QCheckBox("Drop a hit whose id is the query's id (BEIR)")
        self.self_hits_check.setToolTip(
            "For collections whose queries are also documents (ArguAna, Quora)"
        )
        form = QFormLayout(self)
        form.addRow(metric_grid)
        form.addRow("Ranking depth", self.k_spin)
        form.addRow("Average over", self.average_combo)
        form.addRow("Equal scores", self.ties_combo)
        form.addRow(self.self_hits_check)

    def metrics(self) -> tuple[str, ...]:
        """Return the checked metrics, in the offered order."""
        return tuple(m for m in METRICS if self.metric_checks[m].isChecked())

    def set_metrics(self, metrics: Sequence[str]) -> None:
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

    @Slot(bool)
    def _on_metric_toggled(self, _checked: bool) -> None:
        self.metrics_changed.emit()
