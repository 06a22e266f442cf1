"""The "why" panel: the score ledger of the selected document, its sum check, and copy.

The ledger lists one row per query term. Numbers that are the same on every row (N, L, Lavg)
are said once in the heading; the formulas of the selected term, with its numbers, are written out
under the table (and in the idf and tf-part cells' tooltips), so the table fits its pane.
"""

from __future__ import annotations

import math
from html import escape

from PySide6.QtCore import QModelIndex, Qt, Slot
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QScrollArea,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Explanation, TermExplanation
from bm25desk.engine.scoring.variants import _g
from bm25desk.ui.common.colors import TermColors, muted_text, status_colors
from bm25desk.ui.common.elided_label import ElidedLabel
from bm25desk.ui.common.ledger_model import TERM_ROLE, Column, LedgerModel, term_label
from bm25desk.ui.common.plain_text import plain_tooltip
from bm25desk.ui.common.table_view import setup_view
from bm25desk.ui.common.variant_picker import variant_html

HIDDEN_COLUMNS = (Column.N, Column.L, Column.LAVG, Column.IDF_FORMULA, Column.TF_FORMULA)
"""Said once in the heading (N, L, Lavg) or under the table (the formulas)."""

EMPTY = "Select a result to see why it ranked where it did."


def shown(x: float) -> str:
    """Return ``x`` as the ledger shows it: six significant digits, a round-off residue as 0.

    One rounding only: rounding to six decimals first and then to six digits showed 4.8218749 as
    4.82188 in the sum line beside 4.82187 in the contribution line.
    """
    return _g(0.0 if abs(x) < 5e-7 else x)


SUM_PARTS_SHOWN = 8
"""Parts written out in the sum line; a longer sum (a pasted abstract) is cut in the middle."""


def sum_check(explanation: Explanation, most: int | None = None) -> tuple[bool, str]:
    """Return whether the parts add up to the score, and the line that says so.

    With ``most``, a sum of more parts shows its first ``most - 2`` and last two around
    "… (n parts)": the whole sum of a 100-word query on one line widened the window past the
    screen.
    """
    total = explanation.parts_sum
    ok = math.isclose(total, explanation.score, rel_tol=1e-9, abs_tol=1e-12)
    weights = [shown(t.weight) for t in explanation.terms if t.status == "matched"]
    if most is not None and len(weights) > most:
        weights = [*weights[: most - 2], f"… ({len(weights)} parts)", *weights[-2:]]
    parts = " + ".join(weights) or "0"
    verdict = "= the score ✓" if ok else f"≠ the score {_g(explanation.score)} ✗"
    return ok, f"Σ parts = {parts} = {shown(total)} {verdict}"


class LedgerPanel(QWidget):
    """Shows an :class:`Explanation` as a ledger table with a sum check and copy actions."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = LedgerModel(self)
        self.title = ElidedLabel()
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.heading = QLabel(EMPTY)
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.constraints = QLabel()
        self.constraints.setWordWrap(True)
        self.constraints.setTextFormat(Qt.TextFormat.RichText)
        self.constraints.hide()
        self._make_copy_button()
        self.view = setup_view(QTableView(), compact=True)
        self.view.setModel(self.model)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(Column.TERM, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        for column in HIDDEN_COLUMNS:
            self.view.setColumnHidden(column, True)
        self.view.selectionModel().currentRowChanged.connect(self._on_view_current_row_changed)
        self.check = QLabel()
        self.check.setWordWrap(True)  # a narrow pane: the sum wraps at its "+" signs
        self.formulas = QLabel()
        self.formulas.setWordWrap(True)
        self.formulas.setTextFormat(Qt.TextFormat.RichText)
        self.formulas.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.formulas.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # A long formula (BM25Adpt) scrolls rather than pushing the ledger's rows out of view.
        self.formulas_area = QScrollArea()
        self.formulas_area.setWidget(self.formulas)
        self.formulas_area.setWidgetResizable(True)
        self.formulas_area.setFrameShape(QFrame.Shape.NoFrame)
        self.formulas_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lines = self.fontMetrics().lineSpacing()
        self.formulas_area.setMinimumHeight(3 * lines + 4)
        self.formulas_area.setMaximumHeight(4 * lines + 6)
        head = QVBoxLayout()
        head.setSpacing(0)
        head.addWidget(self.title)
        head.addWidget(self.heading)
        head.addWidget(self.constraints)
        top = QHBoxLayout()
        top.addLayout(head, 1)
        top.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.check)
        layout.addWidget(self.formulas_area)
        self._colors = TermColors()
        self._remark = ""

    def _make_copy_button(self) -> None:
        self.copy_button = QToolButton()
        self.copy_button.setToolTip("Copy the ledger (Ctrl+Shift+C: as text)")
        self.copy_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        menu = QMenu(self.copy_button)
        self.copy_text_action = QAction("Copy as text", self)
        self.copy_text_action.setShortcut(QKeySequence("Ctrl+Shift+C"))
        self.copy_markdown_action = QAction("Copy as Markdown", self)
        self.copy_json_action = QAction("Copy as JSON", self)
        for action in (self.copy_text_action, self.copy_markdown_action, self.copy_json_action):
            menu.addAction(action)
            self.addAction(action)
        self.copy_text_action.triggered.connect(lambda: self.copy("text"))
        self.copy_markdown_action.triggered.connect(lambda: self.copy("markdown"))
        self.copy_json_action.triggered.connect(lambda: self.copy("json"))
        self.copy_button.setMenu(menu)
        self.copy_button.setDefaultAction(self.copy_text_action)
        self.copy_button.setText("Copy")
        self.copy_button.setEnabled(False)

    def set_remark(self, text: str) -> None:
        """Show ``text`` under the heading of the next explanations (e.g. "relevance feedback")."""
        self._remark = text
        if self.model.explanation is not None:
            self._show_heading(self.model.explanation)

    def set_explanation(self, explanation: Explanation | None, colors: TermColors) -> None:
        """Show ``explanation`` (None: the empty state)."""
        self._colors = colors
        self.model.set_explanation(explanation, colors)
        self.copy_button.setEnabled(explanation is not None)
        self._show_constraints(explanation)
        if explanation is None:
            self.title.set_full_text("")
            self.heading.setText(EMPTY)
            self.check.setText("")
            self.formulas.setText("")
            return
        e = explanation
        self._show_heading(e)
        ok, text = sum_check(e, SUM_PARTS_SHOWN)
        color = status_colors(self.palette())["good" if ok else "bad"].name()
        self.check.setText(f"<span style='color:{color}'>{escape(text)}</span>")
        meaning = (
            "The contributions of the matched terms add up to the document's score"
            if ok
            else "The contributions do not add up to the score: please report this"
        )
        whole = sum_check(e)[1]
        self.check.setToolTip(
            plain_tooltip(meaning if whole == text else f"{meaning}:\n{whole}") or ""
        )
        first = next((i for i, t in enumerate(e.terms) if t.status == "matched"), 0)
        if e.terms:
            self.view.selectRow(first)
            self._show_formulas(first)

    def _show_heading(self, e: Explanation) -> None:
        rank = f"#{e.rank} " if e.rank else ""
        self.title.set_full_text(f"{rank}{e.title or e.docid}")
        muted = muted_text(self.palette()).name()
        not_match = "" if e.matches else f" — <i>not a match: {escape(e.reason)}</i>"
        remark = ""
        if self._remark:
            color = status_colors(self.palette())["warn"].name()
            remark = f" · <span style='color:{color}'>{escape(self._remark)}</span>"
        self.heading.setText(
            f"score <b>{shown(e.score)}</b> under {variant_html(e.variant)}"
            f"{not_match}<br><small style='color:{muted}'>L = {e.length} terms, "
            f"Lavg = {e.avgdl:.2f}, N = {e.n_docs:,} documents{remark}</small>"
        )

    def _show_constraints(self, e: Explanation | None) -> None:
        """Say, per phrase, +word, −word or title:, whether this document satisfied it."""
        checks = e.constraints if e is not None else ()
        self.constraints.setVisible(bool(checks))
        if not checks:
            self.constraints.setText("")
            self.constraints.setToolTip("")
            return
        colors = status_colors(self.palette())
        parts = []
        for check in checks:
            c = check.constraint
            mark, color = ("✓", colors["good"]) if check.held else ("✗", colors["bad"])
            words = " ".join(
                f"{escape(t)}{'✓' if present else '✗'}"
                for t, present in zip(c.terms, check.present, strict=False)
            )
            detail = f" <small>({words})</small>" if len(c.terms) > 1 else ""
            parts.append(
                f"<span style='color:{color.name()}'>{mark}</span> {escape(c.label)}{detail}"
            )
        self.constraints.setText(" &nbsp;·&nbsp; ".join(parts))
        self.constraints.setToolTip(
            plain_tooltip("\n".join(f"{ch.constraint.label}: {ch.reason}" for ch in checks)) or ""
        )

    def explanation(self) -> Explanation | None:
        """Return the explanation shown."""
        return self.model.explanation

    def copy(self, fmt: str) -> str:
        """Copy the ledger as ``text``, ``markdown`` or ``json``; return what was copied."""
        e = self.model.explanation
        if e is None:
            return ""
        text = {"text": e.as_text, "markdown": e.as_markdown, "json": e.as_json}[fmt]()
        QGuiApplication.clipboard().setText(text)
        return text

    def _show_formulas(self, row: int) -> None:
        if not 0 <= row < self.model.rowCount():
            self.formulas.setText("")
            return
        t = self.model.data(self.model.index(row, 0), TERM_ROLE)
        self.formulas.setText(formulas_html(t, self._colors, self))

    @Slot(QModelIndex, QModelIndex)
    def _on_view_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_formulas(current.row())


def formulas_html(t: TermExplanation, colors: TermColors, widget: QWidget) -> str:
    """Return one term's formulas with its numbers (rich text; "" for an unscored term)."""
    if t.status not in ("matched", "unmatched"):
        return ""
    muted = muted_text(widget.palette()).name()
    swatch = colors.color(t.term).name()
    head = f"<span style='color:{swatch}'>■</span> <b>{escape(term_label(t))}</b>: "
    idf = f"idf = {escape(t.idf_text)}"
    # BM25Adpt: why this term's k1* is what it is, in words, before the numbers.
    plain = f"{head}<i>in plain words,</i> {escape(t.plain)}" if t.plain else ""
    lines = [plain, idf] if plain else [head + idf]
    if t.status == "matched":
        lines.append(f"tf part = {escape(t.tf_text)}")
        lines.append(
            f"contribution = qtf · idf · tf part = {t.qtf} · {_g(t.idf)} · {_g(t.tf_part)}"
            f" = <b>{_g(t.weight)}</b>"
        )
    lines.extend(f"<span style='color:{muted}'>{escape(n)}</span>" for n in t.notes)
    return "<br>".join(lines)
