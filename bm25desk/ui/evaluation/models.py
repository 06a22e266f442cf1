"""Models of the Evaluation view: the configurations to run, the results, the paired tests, the
per-query values and one query's relevant documents.

They adapt engine objects (:class:`ExperimentResult`, :class:`PairedTest`) and the view's own
immutable rows; they own no logic beyond formatting.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.engine import Variant
from bm25desk.evaluation.evaluate import ExperimentResult, PairedTest
from bm25desk.ui.common.colors import PALETTE, highlight_background, status_colors
from bm25desk.ui.common.variant_picker import variant_summary, variant_tooltip
from bm25desk.ui.evaluation.work import METRIC_HELP, QueryDetail, RelevantDoc, best_indices

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_ROLE = Qt.ItemDataRole.UserRole + 2

_Index = QModelIndex | QPersistentModelIndex
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_SIGNIFICANT = 0.05


def config_color(i: int) -> QColor:
    """Return the colour of configuration ``i`` (the same in the table and the bar chart)."""
    return QColor(PALETTE[i % len(PALETTE)])


def params_text(variant: Variant) -> str:
    """Return ``k1 = 1.2, b = 0.75`` (or ``no parameters``)."""
    specs = type(variant).params()
    if not specs:
        return "no parameters"
    values = variant.values()
    return ", ".join(f"{p.symbol} = {values[p.name]:g}" for p in specs)


def short_label(variant: Variant) -> str:
    """Return the key and the parameters that differ from the defaults (``lucene k1=0.9``)."""
    changed = [
        f"{p.symbol}={getattr(variant, p.name):g}"
        for p in type(variant).params()
        if getattr(variant, p.name) != p.default
    ]
    return " ".join([variant.key, *changed])


def _bold() -> QFont:
    font = QFont(QApplication.font())
    font.setBold(True)
    return font


def _qid_key(qid: str) -> str:
    """Return a sort key that orders numeric ids numerically (``2`` before ``10``)."""
    return f"0{int(qid):020d}" if re.fullmatch(r"\d{1,18}", qid) else f"1{qid.lower()}"


def _fmt(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "—"


class _TableModel(QAbstractTableModel):
    """Shared row/column counting."""

    def _n_rows(self) -> int:
        raise NotImplementedError

    def _n_columns(self) -> int:
        raise NotImplementedError

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of rows (QAbstractTableModel.rowCount)."""
        return 0 if parent.isValid() else self._n_rows()

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        """Return the number of columns (QAbstractTableModel.columnCount)."""
        return 0 if parent.isValid() else self._n_columns()

    def _valid(self, index: _Index) -> bool:
        return (
            index.isValid()
            and 0 <= index.row() < self._n_rows()
            and 0 <= index.column() < self._n_columns()
        )


# ------------------------------------------------------------------------------------------------
# Configurations to evaluate
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigRow:
    """One configuration in the list: a variant with its parameters, and whether to run it."""

    variant: Variant
    checked: bool


class ConfigColumn(IntEnum):
    """Columns of :class:`ConfigsModel`."""

    VARIANT = 0
    PARAMS = 1


class ConfigsModel(_TableModel):
    """Every variant (and copies with other parameters), checkable, with its parameters."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[ConfigRow] = []

    def set_rows(self, rows: Sequence[ConfigRow]) -> None:
        """Replace the list."""
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rows(self) -> tuple[ConfigRow, ...]:
        """Return every row."""
        return tuple(self._rows)

    def checked(self) -> tuple[Variant, ...]:
        """Return the checked configurations, in list order."""
        return tuple(r.variant for r in self._rows if r.checked)

    def variant(self, row: int) -> Variant:
        """Return the configuration of ``row``."""
        return self._rows[row].variant

    def set_variant(self, row: int, variant: Variant) -> None:
        """Change the parameters (or variant) of ``row``."""
        self._rows[row] = replace(self._rows[row], variant=variant)
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(ConfigColumn) - 1))

    def set_checked(self, row: int, checked: bool) -> None:
        """Check or uncheck ``row``."""
        self._rows[row] = replace(self._rows[row], checked=checked)
        idx = self.index(row, ConfigColumn.VARIANT)
        self.dataChanged.emit(idx, idx, [Qt.ItemDataRole.CheckStateRole])

    def check_all(self, checked: bool) -> None:
        """Check or uncheck every row."""
        if not self._rows:
            return
        self._rows = [replace(r, checked=checked) for r in self._rows]
        self.dataChanged.emit(
            self.index(0, 0),
            self.index(len(self._rows) - 1, 0),
            [Qt.ItemDataRole.CheckStateRole],
        )

    def duplicate(self, row: int) -> int:
        """Insert a checked copy of ``row`` below it (to run other parameters); return its row."""
        new = ConfigRow(self._rows[row].variant, True)
        self.beginInsertRows(QModelIndex(), row + 1, row + 1)
        self._rows.insert(row + 1, new)
        self.endInsertRows()
        return row + 1

    def remove(self, row: int) -> None:
        """Remove ``row`` (only copies: one row of each variant always stays)."""
        key = self._rows[row].variant.key
        if sum(1 for r in self._rows if r.variant.key == key) < 2:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._rows[row]
        self.endRemoveRows()

    def removable(self, row: int) -> bool:
        """Return whether ``row`` is a copy that :meth:`remove` would remove."""
        if not 0 <= row < len(self._rows):
            return False
        key = self._rows[row].variant.key
        return sum(1 for r in self._rows if r.variant.key == key) > 1

    def _n_rows(self) -> int:
        return len(self._rows)

    def _n_columns(self) -> int:
        return len(ConfigColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(ConfigColumn)
        ):
            return ("Ranking function", "Parameters")[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        """Make the first column checkable (QAbstractTableModel.flags)."""
        if not self._valid(index):
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == ConfigColumn.VARIANT:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not self._valid(index):
            return None
        r = self._rows[index.row()]
        col = ConfigColumn(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return type(r.variant).label if col == ConfigColumn.VARIANT else params_text(r.variant)
        if role == Qt.ItemDataRole.CheckStateRole and col == ConfigColumn.VARIANT:
            return Qt.CheckState.Checked if r.checked else Qt.CheckState.Unchecked
        if role == ROW_ROLE:
            return r
        if role == Qt.ItemDataRole.ToolTipRole:
            return variant_tooltip(type(r.variant))
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Check or uncheck a configuration (QAbstractTableModel.setData)."""
        if (
            not self._valid(index)
            or role != Qt.ItemDataRole.CheckStateRole
            or index.column() != ConfigColumn.VARIANT
        ):
            return False
        state = value.value if isinstance(value, Qt.CheckState) else int(value)
        self.set_checked(index.row(), state == Qt.CheckState.Checked.value)
        return True


# ------------------------------------------------------------------------------------------------
# Results: configuration × metric
# ------------------------------------------------------------------------------------------------


class SummaryModel(_TableModel):
    """One row per configuration, one column per metric; the best value of each metric bold.

    Column 0 is the configuration (with its chart colour), then the metrics, then the time.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._result: ExperimentResult | None = None
        self._best: dict[str, frozenset[int]] = {}
        self._baseline = 0

    def set_result(self, result: ExperimentResult | None, baseline: int = 0) -> None:
        """Show ``result`` (None: empty)."""
        self.beginResetModel()
        self._result = result
        self._baseline = baseline
        self._best = {}
        if result is not None:
            for m in result.metrics:
                self._best[m] = best_indices([c.aggregate[m] for c in result.configs])
        self.endResetModel()

    def set_baseline(self, baseline: int) -> None:
        """Mark configuration ``baseline`` as the baseline."""
        self._baseline = baseline
        if self._n_rows():
            self.dataChanged.emit(self.index(0, 0), self.index(self._n_rows() - 1, 0))

    def best(self, metric: str) -> frozenset[int]:
        """Return the rows holding the best value of ``metric``."""
        return self._best.get(metric, frozenset())

    def _n_rows(self) -> int:
        return len(self._result.configs) if self._result is not None else 0

    def _n_columns(self) -> int:
        return len(self._result.metrics) + 2 if self._result is not None else 0

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return the metric names and their meaning (QAbstractTableModel.headerData)."""
        r = self._result
        if r is None or orientation != Qt.Orientation.Horizontal:
            return None
        if not 0 <= section < len(r.metrics) + 2:
            return None
        if section == 0:
            name = "Configuration"
        elif section == len(r.metrics) + 1:
            name = "Time"
        else:
            name = r.metrics[section - 1]
        if role == Qt.ItemDataRole.DisplayRole:
            return name
        if role == Qt.ItemDataRole.ToolTipRole:
            if section == len(r.metrics) + 1:
                return "time spent searching (evaluation excluded)"
            return METRIC_HELP.get(name)
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not self._valid(index) or self._result is None:
            return None
        r = self._result
        row, col = index.row(), index.column()
        c = r.configs[row]
        n_metrics = len(r.metrics)
        if col == 0:
            if role == Qt.ItemDataRole.DisplayRole:
                text = variant_summary(c.variant)
                return f"{text}  (baseline)" if row == self._baseline else text
            if role == SORT_ROLE:
                return row
            if role == Qt.ItemDataRole.DecorationRole:
                return config_color(row)
            if role == Qt.ItemDataRole.ToolTipRole:
                return c.name
            if role == ROW_ROLE:
                return row
            return None
        if col == n_metrics + 1:
            if role == Qt.ItemDataRole.DisplayRole:
                return f"{c.seconds:.1f} s"
            if role == SORT_ROLE:
                return c.seconds
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return _RIGHT
            return None
        metric = r.metrics[col - 1]
        value = c.aggregate[metric]
        if role == Qt.ItemDataRole.DisplayRole:
            return _fmt(value)
        if role == SORT_ROLE:
            return value if math.isfinite(value) else -math.inf
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT
        if role == Qt.ItemDataRole.FontRole and row in self._best.get(metric, ()):
            return _bold()
        if role == Qt.ItemDataRole.ToolTipRole:
            best = " (best)" if row in self._best.get(metric, ()) else ""
            return f"{metric} of {c.name}: {value!r}{best}, over {len(r.qids)} queries"
        if role == ROW_ROLE:
            return row
        return None


# ------------------------------------------------------------------------------------------------
# Paired tests against the baseline
# ------------------------------------------------------------------------------------------------


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


_TEST_HEADERS = (
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
_TEST_TIPS = {
    TestColumn.WINS: "queries where the configuration scores higher than the baseline",
    TestColumn.LOSSES: "queries where it scores lower",
    TestColumn.TIES: "queries where both score the same",
    TestColumn.P: "two-sided paired randomisation (sign-flip) test of the mean difference; "
    "below 0.05 is shown in colour",
    TestColumn.P_T: "two-sided paired Student t-test",
}


class TestsModel(_TableModel):
    """One row per (metric, configuration): the paired comparison with the baseline."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple[PairedTest, ...] = ()
        self._labels: dict[str, str] = {}

    def set_tests(self, tests: Sequence[PairedTest], labels: Mapping[str, str]) -> None:
        """Show ``tests``; ``labels`` maps a configuration's name to its short label."""
        self.beginResetModel()
        self._rows = tuple(tests)
        self._labels = dict(labels)
        self.endResetModel()

    def test(self, row: int) -> PairedTest:
        """Return the test of ``row``."""
        return self._rows[row]

    def _n_rows(self) -> int:
        return len(self._rows)

    def _n_columns(self) -> int:
        return len(TestColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(TestColumn):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return _TEST_HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return _TEST_TIPS.get(TestColumn(section))
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not self._valid(index):
            return None
        t = self._rows[index.row()]
        col = TestColumn(index.column())
        significant = t.p_value < _SIGNIFICANT
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(t, col)
        if role == SORT_ROLE:
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
            }[col]
        if role == ROW_ROLE:
            return t
        if role == Qt.ItemDataRole.TextAlignmentRole and col not in (
            TestColumn.METRIC,
            TestColumn.CONFIG,
        ):
            return _RIGHT
        if (
            role == Qt.ItemDataRole.ForegroundRole
            and col in (TestColumn.DELTA, TestColumn.P)
            and significant
            and t.delta
        ):
            return status_colors(QApplication.palette())["good" if t.delta > 0 else "bad"]
        if role == Qt.ItemDataRole.FontRole and col == TestColumn.P and significant:
            return _bold()
        if role == Qt.ItemDataRole.ToolTipRole:
            how = "exact" if t.exact else f"{t.permutations:,} random sign flips, seed {t.seed}"
            return (
                f"{t.candidate} against {t.baseline} on {t.metric}, {t.n} paired queries\n"
                f"randomisation test ({how}): p = {t.p_value:.4g}"
            )
        return None

    def _display(self, t: PairedTest, col: TestColumn) -> str:
        if col == TestColumn.METRIC:
            return t.metric
        if col == TestColumn.CONFIG:
            return self._labels.get(t.candidate, t.candidate)
        if col == TestColumn.BASE_MEAN:
            return _fmt(t.baseline_mean)
        if col == TestColumn.MEAN:
            return _fmt(t.candidate_mean)
        if col == TestColumn.DELTA:
            return f"{t.delta:+.4f}"
        if col == TestColumn.WINS:
            return str(t.wins)
        if col == TestColumn.LOSSES:
            return str(t.losses)
        if col == TestColumn.TIES:
            return str(t.ties)
        if col == TestColumn.P:
            return f"{t.p_value:.4f}" if t.p_value >= 1e-4 else f"{t.p_value:.1e}"
        return "—" if t.p_t is None else (f"{t.p_t:.4f}" if t.p_t >= 1e-4 else f"{t.p_t:.1e}")


# ------------------------------------------------------------------------------------------------
# Per query
# ------------------------------------------------------------------------------------------------

_PQ_FIXED = 3  # query id, text, relevant count


class PerQueryModel(_TableModel):
    """One row per evaluated query: id, text, relevant count, then one metric's value per
    configuration (the best of each row bold and tinted)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._result: ExperimentResult | None = None
        self._metric = ""
        self._texts: dict[str, str] = {}
        self._relevant: dict[str, int] = {}
        self._values: list[tuple[float, ...]] = []
        self._best: list[frozenset[int]] = []

    def set_result(
        self,
        result: ExperimentResult | None,
        texts: Mapping[str, str],
        relevant: Mapping[str, int],
        metric: str = "",
    ) -> None:
        """Show ``result``'s per-query values of ``metric`` (default: its first metric)."""
        self.beginResetModel()
        self._result = result
        self._texts = dict(texts)
        self._relevant = dict(relevant)
        self._metric = ""
        self._compute(metric)
        self.endResetModel()

    def set_metric(self, metric: str) -> None:
        """Show another metric."""
        self.beginResetModel()
        self._compute(metric)
        self.endResetModel()

    def metric(self) -> str:
        """Return the metric shown."""
        return self._metric

    def qid(self, row: int) -> str:
        """Return the query id of ``row``."""
        assert self._result is not None
        return self._result.qids[row]

    def text(self, row: int) -> str:
        """Return the query text of ``row``."""
        return self._texts.get(self.qid(row), "")

    def best(self, row: int) -> frozenset[int]:
        """Return the configurations (positions) with the best value on ``row``."""
        return self._best[row]

    def _compute(self, metric: str) -> None:
        r = self._result
        self._values, self._best = [], []
        if r is None:
            self._metric = ""
            return
        self._metric = metric if metric in r.metrics else r.metrics[0]
        columns = [c.evaluation.per_query[self._metric] for c in r.configs]
        for i in range(len(r.qids)):
            row = tuple(float(col[i]) for col in columns)
            self._values.append(row)
            self._best.append(best_indices(row))

    def _n_rows(self) -> int:
        return len(self._result.qids) if self._result is not None else 0

    def _n_columns(self) -> int:
        return _PQ_FIXED + len(self._result.configs) if self._result is not None else 0

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        r = self._result
        if r is None or orientation != Qt.Orientation.Horizontal:
            return None
        if not 0 <= section < _PQ_FIXED + len(r.configs):
            return None
        if section < _PQ_FIXED:
            if role == Qt.ItemDataRole.DisplayRole:
                return ("Query", "Text", "Relevant")[section]
            if role == Qt.ItemDataRole.ToolTipRole and section == 2:
                return "documents judged relevant for the query"
            return None
        c = r.configs[section - _PQ_FIXED]
        if role == Qt.ItemDataRole.DisplayRole:
            return short_label(c.variant)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{self._metric} of {c.name}"
        if role == Qt.ItemDataRole.DecorationRole:
            return config_color(section - _PQ_FIXED)
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not self._valid(index) or self._result is None:
            return None
        row, col = index.row(), index.column()
        qid = self._result.qids[row]
        if role == ROW_ROLE:
            return qid
        if col == 0:
            if role == Qt.ItemDataRole.DisplayRole:
                return qid
            if role == SORT_ROLE:
                return _qid_key(qid)
            return None
        if col == 1:
            text = self._texts.get(qid, "")
            if role == Qt.ItemDataRole.DisplayRole:
                return text if len(text) <= 160 else text[:159] + "…"
            if role == SORT_ROLE:
                return text.lower()
            if role == Qt.ItemDataRole.ToolTipRole:
                return text
            return None
        if col == 2:
            n = self._relevant.get(qid, 0)
            if role == Qt.ItemDataRole.DisplayRole:
                return str(n)
            if role == SORT_ROLE:
                return n
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return _RIGHT
            return None
        i = col - _PQ_FIXED
        value = self._values[row][i]
        best = i in self._best[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return _fmt(value)
        if role == SORT_ROLE:
            return value if math.isfinite(value) else -math.inf
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT
        if role == Qt.ItemDataRole.FontRole and best:
            return _bold()
        if role == Qt.ItemDataRole.BackgroundRole and best:
            pal = QApplication.palette()
            return highlight_background(status_colors(pal)["good"], pal, 0.22)
        return None


# ------------------------------------------------------------------------------------------------
# One query's relevant documents
# ------------------------------------------------------------------------------------------------


class DocColumn(IntEnum):
    """Columns of :class:`RelevantDocsModel`."""

    RANK = 0
    STATUS = 1
    SCORE = 2
    RELEVANCE = 3
    DOCID = 4
    TITLE = 5


_DOC_HEADERS = ("Rank", "Where", "Score", "Grade", "Document", "Title")


def doc_status(doc: RelevantDoc, cutoff: int) -> str:
    """Return where a relevant document ended up, in words."""
    if not doc.in_index:
        return "not indexed"
    if doc.rank is None:
        return "no match"
    if doc.rank <= cutoff:
        return f"top {cutoff}"
    return f"{doc.rank - cutoff:,} below"


class RelevantDocsModel(_TableModel):
    """The judged-relevant documents of one query, with their rank under one configuration."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._detail: QueryDetail | None = None
        self._rows: tuple[RelevantDoc, ...] = ()

    def set_detail(self, detail: QueryDetail | None) -> None:
        """Show ``detail`` (None: empty)."""
        self.beginResetModel()
        self._detail = detail
        self._rows = detail.docs if detail is not None else ()
        self.endResetModel()

    def detail(self) -> QueryDetail | None:
        """Return the query shown."""
        return self._detail

    def doc(self, row: int) -> RelevantDoc:
        """Return the document of ``row``."""
        return self._rows[row]

    def _n_rows(self) -> int:
        return len(self._rows)

    def _n_columns(self) -> int:
        return len(DocColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles (QAbstractTableModel.headerData)."""
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(DocColumn):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return _DOC_HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole and section == DocColumn.RELEVANCE:
            return "relevance grade in the judgements (larger is more relevant)"
        if role == Qt.ItemDataRole.ToolTipRole and section == DocColumn.STATUS:
            return (
                "top k: inside the cut-off; n below: that many places below it; no match: "
                "contains no query term; not indexed: judged but not in the index"
            )
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Return cell data (QAbstractTableModel.data)."""
        if not self._valid(index) or self._detail is None:
            return None
        d = self._rows[index.row()]
        col = DocColumn(index.column())
        cutoff = self._detail.cutoff
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                DocColumn.RANK: str(d.rank) if d.rank is not None else "—",
                DocColumn.DOCID: d.docid,
                DocColumn.TITLE: d.title,
                DocColumn.RELEVANCE: str(d.relevance),
                DocColumn.SCORE: f"{d.score:.4f}" if d.score is not None else "—",
                DocColumn.STATUS: doc_status(d, cutoff),
            }[col]
        if role == SORT_ROLE:
            return {
                DocColumn.RANK: d.rank if d.rank is not None else 10**12,
                DocColumn.DOCID: _qid_key(d.docid),
                DocColumn.TITLE: d.title.lower(),
                DocColumn.RELEVANCE: d.relevance,
                DocColumn.SCORE: d.score if d.score is not None else -math.inf,
                DocColumn.STATUS: d.rank if d.rank is not None else 10**12,
            }[col]
        if role == ROW_ROLE:
            return d
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (
            DocColumn.RANK,
            DocColumn.RELEVANCE,
            DocColumn.SCORE,
        ):
            return _RIGHT
        if role == Qt.ItemDataRole.ForegroundRole and col == DocColumn.STATUS:
            colors = status_colors(QApplication.palette())
            if d.rank is not None and d.rank <= cutoff:
                return colors["good"]
            return (
                colors["bad"]
                if d.in_index
                else QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            where = (
                f"{d.rank - cutoff:,} places below the top {cutoff}"
                if d.rank is not None and d.rank > cutoff
                else doc_status(d, cutoff)
            )
            return f"{d.docid}: {d.title}\n{where}" if d.title else f"{d.docid}\n{where}"
        return None
