"""The score ledger: one row per query term against one document, with formulas and numbers."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.engine import Explanation, TermExplanation
from bm25desk.engine.scoring.variants import _g
from bm25desk.ui.common.colors import TermColors, status_colors
from bm25desk.ui.common.table_model import ROW_ROLE, SORT_ROLE, RowTableModel

TERM_ROLE = ROW_ROLE
"""The row's :class:`TermExplanation`."""

__all__ = ["SORT_ROLE", "TERM_ROLE", "Column", "LedgerModel", "term_label"]


class Column(IntEnum):
    """Columns of :class:`LedgerModel`."""

    TERM = 0
    STATUS = 1
    QTF = 2
    TF = 3
    DF = 4
    N = 5
    IDF = 6
    L = 7
    LAVG = 8
    TF_PART = 9
    WEIGHT = 10
    SHARE = 11
    IDF_FORMULA = 12
    TF_FORMULA = 13


HEADERS = {
    Column.TERM: "Query term",
    Column.STATUS: "Status",
    Column.QTF: "qtf",
    Column.TF: "tf",
    Column.DF: "df",
    Column.N: "N",
    Column.IDF: "idf",
    Column.L: "L",
    Column.LAVG: "Lavg",
    Column.TF_PART: "tf part",
    Column.WEIGHT: "Contribution",
    Column.SHARE: "Share",
    Column.IDF_FORMULA: "idf = …",
    Column.TF_FORMULA: "tf part = …",
}
HEADER_TIPS = {
    Column.QTF: "occurrences of the term in the analysed query",
    Column.TF: "occurrences of the term in this document",
    Column.DF: "documents containing the term",
    Column.N: "documents in the index",
    Column.L: "length of this document in analysed tokens",
    Column.LAVG: "average document length",
    Column.WEIGHT: "qtf · idf · tf part",
    Column.SHARE: "contribution / score",
}
STATUS_TEXT = {
    "matched": "matched",
    "unmatched": "absent",
    "unknown": "in no document",
    "stop": "stop word",
    "short": "too short",
    "prohibited": "excluded (−)",
}
_NUMERIC = frozenset(Column) - {Column.TERM, Column.STATUS, Column.IDF_FORMULA, Column.TF_FORMULA}


def term_label(t: TermExplanation) -> str:
    """Return ``as typed → analysed``."""
    if t.term is None or t.term == t.surface:
        return t.surface
    return f"{t.surface} → {t.term}"


class LedgerModel(RowTableModel[TermExplanation]):
    """Adapts :attr:`Explanation.terms` for a table view; owns no logic."""

    headers = tuple(HEADERS[c] for c in Column)
    header_tips = tuple(HEADER_TIPS.get(c) for c in Column)
    numeric = _NUMERIC

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._explanation: Explanation | None = None
        self._colors = TermColors()

    def set_explanation(self, explanation: Explanation | None, colors: TermColors) -> None:
        """Show the ledger of ``explanation`` (None: empty)."""
        self._explanation = explanation
        self._colors = colors
        self.set_rows(explanation.terms if explanation is not None else ())

    @property
    def explanation(self) -> Explanation | None:
        """Return the explanation shown."""
        return self._explanation

    def term_row(self, row: int) -> TermExplanation:
        """Return the ledger row ``row``."""
        return self.row(row)

    def display(self, row: TermExplanation, column: int) -> str:
        """Return a cell's text."""
        assert self._explanation is not None
        return self._display(self._explanation, row, Column(column))

    def sort_key(self, row: TermExplanation, column: int) -> Any:
        """Return a cell's raw value."""
        assert self._explanation is not None
        return self._sort(self._explanation, row, Column(column))

    def tooltip(self, row: TermExplanation, column: int) -> str | None:
        """Return what a cell's number means for this term."""
        assert self._explanation is not None
        return self._tooltip(self._explanation, row, Column(column))

    def cell_data(self, row: TermExplanation, column: int, role: int) -> Any:
        """Return the term colour, and muted or warning text colours."""
        t, col = row, Column(column)
        matched = t.status == "matched"
        if role == Qt.ItemDataRole.DecorationRole and col == Column.TERM and t.term and matched:
            return self._colors.color(t.term)
        if role == Qt.ItemDataRole.ForegroundRole:
            pal = QApplication.palette()
            if col == Column.IDF and t.term is not None and t.status != "unknown" and t.idf <= 0:
                return status_colors(pal)["bad" if t.idf < 0 else "warn"]
            if col == Column.WEIGHT and matched and t.weight < 0:
                return status_colors(pal)["bad"]
            if not matched:
                return pal.color(QPalette.ColorRole.PlaceholderText)
        return None

    def _display(self, e: Explanation, t: TermExplanation, col: Column) -> str:
        matched = t.status == "matched"
        scored = t.status in ("matched", "unmatched")
        if col == Column.TERM:
            return term_label(t)
        if col == Column.STATUS:
            return STATUS_TEXT.get(t.status, t.status)
        if col == Column.QTF:
            return str(t.qtf) if t.qtf else ""
        if col == Column.TF:
            return str(t.tf) if scored else ""
        if col == Column.DF:
            return f"{t.df:,}" if scored else ""
        if col == Column.N:
            return f"{e.n_docs:,}" if scored else ""
        if col == Column.IDF:
            return f"{t.idf:.4f}" if scored else ""
        if col == Column.L:
            return str(e.length) if matched else ""
        if col == Column.LAVG:
            return f"{e.avgdl:.2f}" if matched else ""
        if col == Column.TF_PART:
            return f"{t.tf_part:.4f}" if matched else ""
        if col == Column.WEIGHT:
            return f"{t.weight:.4f}" if matched else "0"
        if col == Column.SHARE:
            return f"{t.share:.1%}" if matched else ""
        if col == Column.IDF_FORMULA:
            return t.idf_text if scored else ""
        return t.tf_text if matched else ""

    def _sort(self, e: Explanation, t: TermExplanation, col: Column) -> Any:
        return {
            Column.TERM: t.surface.lower(),
            Column.STATUS: t.status,
            Column.QTF: t.qtf,
            Column.TF: t.tf,
            Column.DF: t.df,
            Column.N: e.n_docs,
            Column.IDF: t.idf,
            Column.L: e.length,
            Column.LAVG: e.avgdl,
            Column.TF_PART: t.tf_part,
            Column.WEIGHT: t.weight,
            Column.SHARE: t.share,
            Column.IDF_FORMULA: t.idf_text,
            Column.TF_FORMULA: t.tf_text,
        }[col]

    def _tooltip(self, e: Explanation, t: TermExplanation, col: Column) -> str | None:
        if col == Column.IDF_FORMULA and t.idf_text:
            return "idf = " + t.idf_text + ("\n" + "\n".join(t.notes) if t.notes else "")
        if col == Column.TF_FORMULA and t.tf_text:
            return "tf part = " + t.tf_text
        if col == Column.IDF and t.status in ("matched", "unmatched"):
            lines = [f"idf = {t.idf_text}", *([t.plain] if t.plain else []), *t.notes]
            if t.idf < 0:
                lines.append(
                    "negative idf: this term is in more than half the documents, so it lowers "
                    "the score"
                )
            elif t.idf == 0:
                lines.append("zero idf: this term does not help ranking")
            return "\n".join(lines)
        if col == Column.TF_PART and t.status == "matched":
            return f"tf part = {t.tf_text}" + (f"\n{t.plain}" if t.plain else "")
        if col == Column.WEIGHT and t.status == "matched":
            return f"{t.qtf} · {_g(t.idf)} · {_g(t.tf_part)} = {_g(t.weight)}"
        if col == Column.STATUS:
            return {
                "unmatched": f"{t.term!r} does not occur in this document (df {t.df})",
                "unknown": f"{t.term!r} occurs in no document of the index",
                "stop": f"{t.surface!r} is on the stop list: it is not indexed or scored",
                "short": f"{t.surface!r} is shorter than the minimum length",
                "prohibited": f"{t.surface!r} is excluded with −: not scored",
            }.get(t.status)
        return None
