"""Models of the Evaluation view's per-query drill-down.

Every query's values under every configuration, and one query's relevant documents with their ranks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.evaluation.evaluate import ExperimentResult
from bm25desk.ui.common.colors import highlight_background, status_colors
from bm25desk.ui.common.table_model import LEFT, RowTableModel
from bm25desk.ui.evaluation.labels import bold_font, config_color, fmt_value, qid_key, short_label
from bm25desk.ui.evaluation.work import QueryDetail, RelevantDoc, best_indices

_PQ_FIXED = 3  # query id, text, relevant count


class PerQueryModel(RowTableModel[int]):
    """One row per evaluated query: id, text, relevant count, and a metric per configuration.

    The best value of each row is bold and tinted. A row is the query's position in the
    experiment; :data:`ROW_ROLE` gives its id.
    """

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
        self._result = result
        self._texts = dict(texts)
        self._relevant = dict(relevant)
        self._compute(metric)
        self.set_rows(range(len(result.qids)) if result is not None else ())

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

    def titles(self) -> tuple[str, ...]:
        """Return "Query", "Text", "Relevant" and one short label per configuration."""
        r = self._result
        if r is None:
            return ()
        return ("Query", "Text", "Relevant", *(short_label(c.variant) for c in r.configs))

    def is_numeric(self, column: int) -> bool:
        """Return whether ``column`` holds numbers (the count and the values)."""
        return column >= 2

    def header_data(self, section: int, role: int) -> Any:
        """Return a configuration column's colour."""
        if role == Qt.ItemDataRole.DecorationRole and section >= _PQ_FIXED:
            return config_color(section - _PQ_FIXED)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Return column titles and their meaning (QAbstractTableModel.headerData)."""
        r = self._result
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and role == Qt.ItemDataRole.TextAlignmentRole and section >= _PQ_FIXED:
            # A narrow column shows the start of the name and the whole key (the rest is cut).
            return LEFT
        if r is not None and horizontal and role == Qt.ItemDataRole.ToolTipRole:
            if section == 2:
                return "documents judged relevant for the query"
            if _PQ_FIXED <= section < self.column_count():
                return f"{self._metric} of {r.configs[section - _PQ_FIXED].name}"
            return None
        return super().headerData(section, orientation, role)

    def row_data(self, row: int) -> str:
        """Return the query's id."""
        return self.qid(row)

    def display(self, row: int, column: int) -> str:
        """Return a cell's text (long query texts cut to 160 characters)."""
        qid = self.qid(row)
        if column == 0:
            return qid
        if column == 1:
            text = self._texts.get(qid, "")
            return text if len(text) <= 160 else text[:159] + "…"
        if column == 2:
            return str(self._relevant.get(qid, 0))
        return fmt_value(self._values[row][column - _PQ_FIXED])

    def sort_key(self, row: int, column: int) -> Any:
        """Return a cell's raw value (numeric ids in numeric order)."""
        qid = self.qid(row)
        if column == 0:
            return qid_key(qid)
        if column == 1:
            return self._texts.get(qid, "").lower()
        if column == 2:
            return self._relevant.get(qid, 0)
        value = self._values[row][column - _PQ_FIXED]
        return value if math.isfinite(value) else -math.inf

    def tooltip(self, row: int, column: int) -> str | None:
        """Return the whole query text."""
        return self._texts.get(self.qid(row), "") if column == 1 else None

    def cell_data(self, row: int, column: int, role: int) -> Any:
        """Make the best value of the row bold and tinted."""
        if column < _PQ_FIXED or column - _PQ_FIXED not in self._best[row]:
            return None
        if role == Qt.ItemDataRole.FontRole:
            return bold_font()
        if role == Qt.ItemDataRole.BackgroundRole:
            pal = QApplication.palette()
            return highlight_background(status_colors(pal)["good"], pal, 0.22)
        return None


class DocColumn(IntEnum):
    """Columns of :class:`RelevantDocsModel`."""

    RANK = 0
    STATUS = 1
    SCORE = 2
    RELEVANCE = 3
    DOCID = 4
    TITLE = 5


def doc_status(doc: RelevantDoc, cutoff: int) -> str:
    """Return where a relevant document ended up, in words."""
    if not doc.in_index:
        return "not indexed"
    if doc.rank is None:
        return "no match"
    if doc.rank <= cutoff:
        return f"top {cutoff}"
    return f"{doc.rank - cutoff:,} below"


class RelevantDocsModel(RowTableModel[RelevantDoc]):
    """The judged-relevant documents of one query, with their rank under one configuration."""

    headers = ("Rank", "Where", "Score", "Grade", "Document", "Title")
    header_tips = (
        None,
        "top k: inside the cut-off; n below: that many places below it; no match: "
        "contains no query term; not indexed: judged but not in the index",
        None,
        "relevance grade in the judgements (larger is more relevant)",
    )
    numeric = frozenset({DocColumn.RANK, DocColumn.RELEVANCE, DocColumn.SCORE})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._detail: QueryDetail | None = None

    def set_detail(self, detail: QueryDetail | None) -> None:
        """Show ``detail`` (None: empty)."""
        self._detail = detail
        self.set_rows(detail.docs if detail is not None else ())

    def detail(self) -> QueryDetail | None:
        """Return the query shown."""
        return self._detail

    def doc(self, row: int) -> RelevantDoc:
        """Return the document of ``row``."""
        return self.row(row)

    @property
    def _cutoff(self) -> int:
        assert self._detail is not None
        return self._detail.cutoff

    def display(self, row: RelevantDoc, column: int) -> str:
        """Return a cell's text."""
        d = row
        return {
            DocColumn.RANK: str(d.rank) if d.rank is not None else "—",
            DocColumn.DOCID: d.docid,
            DocColumn.TITLE: d.title,
            DocColumn.RELEVANCE: str(d.relevance),
            DocColumn.SCORE: f"{d.score:.4f}" if d.score is not None else "—",
            DocColumn.STATUS: doc_status(d, self._cutoff),
        }[DocColumn(column)]

    def sort_key(self, row: RelevantDoc, column: int) -> Any:
        """Return a cell's raw value (unranked documents last)."""
        d = row
        return {
            DocColumn.RANK: d.rank if d.rank is not None else 10**12,
            DocColumn.DOCID: qid_key(d.docid),
            DocColumn.TITLE: d.title.lower(),
            DocColumn.RELEVANCE: d.relevance,
            DocColumn.SCORE: d.score if d.score is not None else -math.inf,
            DocColumn.STATUS: d.rank if d.rank is not None else 10**12,
        }[DocColumn(column)]

    def tooltip(self, row: RelevantDoc, column: int) -> str:
        """Return the document and where it ranked, in words."""
        d, cutoff = row, self._cutoff
        where = (
            f"{d.rank - cutoff:,} places below the top {cutoff}"
            if d.rank is not None and d.rank > cutoff
            else doc_status(d, cutoff)
        )
        return f"{d.docid}: {d.title}\n{where}" if d.title else f"{d.docid}\n{where}"

    def cell_data(self, row: RelevantDoc, column: int, role: int) -> Any:
        """Colour where the document ended up: good inside the cut-off, bad below it."""
        if role != Qt.ItemDataRole.ForegroundRole or column != DocColumn.STATUS:
            return None
        colors = status_colors(QApplication.palette())
        if row.rank is not None and row.rank <= self._cutoff:
            return colors["good"]
        if row.in_index:
            return colors["bad"]
        return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
