"""Models of the Evaluation view's results: configuration × metric, and paired tests.

They adapt :class:`ExperimentResult` and :class:`PairedTest` (tests against a baseline); they own no
logic beyond formatting.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from bm25desk.evaluation.evaluate import ConfigResult, ExperimentResult, PairedTest
from bm25desk.ui.common.colors import status_colors
from bm25desk.ui.common.table_model import RowTableModel
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.evaluation.labels import SIGNIFICANT, bold_font, config_color, fmt_p, fmt_value
from bm25desk.ui.evaluation.work import METRIC_HELP, best_indices

SummaryRow = tuple[int, ConfigResult]  # position in the experiment, the configuration's result


class SummaryModel(RowTableModel[SummaryRow]):
    """One row per configuration, one column per metric; the best value of each metric bold.

    Column 0 is the configuration (with its chart colour), then the metrics, then the time.
    :data:`~bm25desk.ui.common.table_model.ROW_ROLE` gives the configuration's position.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._result: ExperimentResult | None = None
        self._best: dict[str, frozenset[int]] = {}
        self._baseline = 0

    def set_result(self, result: ExperimentResult | None, baseline: int = 0) -> None:
        """Show ``result`` (None: empty)."""
        self._result = result
        self._baseline = baseline
        self._best = {}
        if result is not None:
            for m in result.metrics:
                self._best[m] = best_indices([c.aggregate[m] for c in result.configs])
        self.set_rows(list(enumerate(result.configs)) if result is not None else ())

    def set_baseline(self, baseline: int) -> None:
        """Mark configuration ``baseline`` as the baseline."""
        self._baseline = baseline
        self.emit_column_changed(0)

    def best(self, metric: str) -> frozenset[int]:
        """Return the rows holding the best value of ``metric``."""
        return self._best.get(metric, frozenset())

    def titles(self) -> tuple[str, ...]:
        """Return "Configuration", the metrics and "Time"."""
        r = self._result
        return ("Configuration", *r.metrics, "Time") if r is not None else ()

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return the metric names and their meaning (QAbstractTableModel.headerData)."""
        titles = self.titles()
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and role == Qt.ItemDataRole.ToolTipRole and 0 <= section < len(titles):
            if section == len(titles) - 1:
                return "time spent searching (evaluation excluded)"
            return METRIC_HELP.get(titles[section])
        return super().headerData(section, orientation, role)

    def is_numeric(self, column: int) -> bool:
        """Return whether ``column`` holds numbers (every column but the configuration)."""
        return column > 0

    def row_data(self, row: SummaryRow) -> int:
        """Return the configuration's position."""
        return row[0]

    def _metric(self, column: int) -> str:
        assert self._result is not None
        return self._result.metrics[column - 1]

    def _is_time(self, column: int) -> bool:
        return column == self.column_count() - 1

    def display(self, row: SummaryRow, column: int) -> str:
        """Return the configuration's label, a metric's value or the time."""
        i, c = row
        if column == 0:
            text = variant_summary(c.variant)
            return f"{text}  (baseline)" if i == self._baseline else text
        if self._is_time(column):
            return f"{c.seconds:.1f} s"
        return fmt_value(c.aggregate[self._metric(column)])

    def sort_key(self, row: SummaryRow, column: int) -> Any:
        """Return a cell's raw value (undefined values last)."""
        i, c = row
        if column == 0:
            return i
        if self._is_time(column):
            return c.seconds
        value = c.aggregate[self._metric(column)]
        return value if math.isfinite(value) else -math.inf

    def tooltip(self, row: SummaryRow, column: int) -> str | None:
        """Return the configuration's full name, or a value with its metric."""
        i, c = row
        if column == 0:
            return c.name
        if self._is_time(column):
            return None
        assert self._result is not None
        metric = self._metric(column)
        best = " (best)" if i in self._best.get(metric, ()) else ""
        value = c.aggregate[metric]
        return f"{metric} of {c.name}: {value!r}{best}, over {len(self._result.qids)} queries"

    def cell_data(self, row: SummaryRow, column: int, role: int) -> Any:
        """Show the configuration's colour; make the best value of each metric bold."""
        i = row[0]
        if column == 0:
            return config_color(i) if role == Qt.ItemDataRole.DecorationRole else None
        if role == Qt.ItemDataRole.FontRole and not self._is_time(column):
            return bold_font() if i in self._best.get(self._metric(column), ()) else None
        return None


class TestColumn(IntEnum):
    """Columns of :class:`TestsModel`."""

    METRIC = 0
    CONFIG = 1
    BASE_MEAN = 2
    MEAN = 3
    DELTA = 4
    WINS = 5
    LOSSES = 6
    TIES = 7
    P = 8
    P_T = 9


_TEST_TIPS = {
    TestColumn.WINS: "queries where the configuration scores higher than the baseline",
    TestColumn.LOSSES: "queries where it scores lower",
    TestColumn.TIES: "queries where both score the same",
    TestColumn.P: "two-sided paired randomisation (sign-flip) test of the mean difference; "
    "below 0.05 is shown in colour",
    TestColumn.P_T: "two-sided paired Student t-test",
}


class TestsModel(RowTableModel[PairedTest]):
    """One row per (metric, configuration): the paired comparison with the baseline."""

    __test__ = False  # not a pytest test class, despite the name

    headers = (
        "Metric",
        "Configuration",
        "Baseline",
        "Mean",
        "Δ",
        "Wins",
        "Losses",
        "Ties",
        "p (randomisation)",
        "p (t-test)",
    )
    header_tips = tuple(_TEST_TIPS.get(c) for c in TestColumn)
    numeric = frozenset(set(TestColumn) - {TestColumn.METRIC, TestColumn.CONFIG})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._labels: dict[str, str] = {}

    def set_tests(self, tests: Sequence[PairedTest], labels: Mapping[str, str]) -> None:
        """Show ``tests``; ``labels`` maps a configuration's name to its short label."""
        self._labels = dict(labels)
        self.set_rows(tests)

    def test(self, row: int) -> PairedTest:
        """Return the test of ``row``."""
        return self.row(row)

    def display(self, row: PairedTest, column: int) -> str:
        """Return a cell's text."""
        t, col = row, TestColumn(column)
        if col == TestColumn.METRIC:
            return t.metric
        if col == TestColumn.CONFIG:
            return self._labels.get(t.candidate, t.candidate)
        if col in (TestColumn.BASE_MEAN, TestColumn.MEAN):
            return fmt_value(t.baseline_mean if col == TestColumn.BASE_MEAN else t.candidate_mean)
        if col == TestColumn.DELTA:
            return f"{t.delta:+.4f}"
        if col in (TestColumn.WINS, TestColumn.LOSSES, TestColumn.TIES):
            return str(self.sort_key(t, column))
        return fmt_p(t.p_value if col == TestColumn.P else t.p_t)

    def sort_key(self, row: PairedTest, column: int) -> Any:
        """Return a cell's raw value."""
        t = row
        return {
            TestColumn.METRIC: t.metric,
            TestColumn.CONFIG: self._labels.get(t.candidate, t.candidate).lower(),
            TestColumn.BASE_MEAN: t.baseline_mean,
            TestColumn.MEAN: t.candidate_mean,
            TestColumn.DELTA: t.delta,
            TestColumn.WINS: t.wins,
            TestColumn.LOSSES: t.losses,
            TestColumn.TIES: t.ties,
            TestColumn.P: t.p_value,
            TestColumn.P_T: t.p_t if t.p_t is not None else math.inf,
        }[TestColumn(column)]

    def tooltip(self, row: PairedTest, column: int) -> str:
        """Return what was compared and how the p-value was computed."""
        t = row
        how = "exact" if t.exact else f"{t.permutations:,} random sign flips, seed {t.seed}"
        return (
            f"{t.candidate} against {t.baseline} on {t.metric}, {t.n} paired queries\n"
            f"randomisation test ({how}): p = {t.p_value:.4g}"
        )

    def cell_data(self, row: PairedTest, column: int, role: int) -> Any:
        """Colour a significant change by its direction; make a significant p bold."""
        significant = row.p_value < SIGNIFICANT
        if (
            role == Qt.ItemDataRole.ForegroundRole
            and column in (TestColumn.DELTA, TestColumn.P)
            and significant
            and row.delta
        ):
            return status_colors(QApplication.palette())["good" if row.delta > 0 else "bad"]
        if role == Qt.ItemDataRole.FontRole and column == TestColumn.P and significant:
            return bold_font()
        return None
