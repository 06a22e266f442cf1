"""The ranked results as a table model.

Relevance mark, rank, score, the stacked contribution bar, title, snippet and source; with relevance
feedback also each document's rank without it and how it moved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any, Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.engine import TIE_RULE, Hit
from bm25desk.engine.scoring.variants import _g
from bm25desk.ui.common.colors import TermColors, highlight_background, status_colors
from bm25desk.ui.common.table_model import ROW_ROLE, SORT_ROLE, RowTableModel
from bm25desk.ui.search.work import ResultRow, Snippet

HIT_ROLE = ROW_ROLE  # the row's Hit
PARTS_ROLE = Qt.ItemDataRole.UserRole + 3  # tuple[(term, QColor, weight)], in query order
SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 4  # (Snippet, TermColors)
SCALE_ROLE = Qt.ItemDataRole.UserRole + 5  # the largest bar total in the list (for bar lengths)
MARK_ROLE = Qt.ItemDataRole.UserRole + 6  # (marked relevant by the user, judged relevant)
MOVE_ROLE = Qt.ItemDataRole.UserRole + 7  # Movement, or None without feedback

__all__ = ["HIT_ROLE", "MARK_ROLE", "PARTS_ROLE", "SCALE_ROLE", "SNIPPET_ROLE", "SORT_ROLE"]


class Column(IntEnum):
    """Columns of :class:`ResultsModel`, in logical order.

    Columns added later come last, so a header layout saved by an earlier version still fits
    the columns it knew; the view shows them in :data:`VISUAL_ORDER`.
    """

    RANK = 0
    SCORE = 1
    PARTS = 2
    TITLE = 3
    SNIPPET = 4
    SOURCE = 5
    MARK = 6
    BEFORE = 7
    MOVE = 8


VISUAL_ORDER = (
    Column.MARK,
    Column.RANK,
    Column.BEFORE,
    Column.MOVE,
    Column.SCORE,
    Column.PARTS,
    Column.TITLE,
    Column.SNIPPET,
    Column.SOURCE,
)
FEEDBACK_COLUMNS = (Column.BEFORE, Column.MOVE)
"""Shown only while the ranking uses relevance feedback."""

HEADERS = {
    Column.RANK: "#",
    Column.SCORE: "Score",
    Column.PARTS: "Contributions",
    Column.TITLE: "Title",
    Column.SNIPPET: "Snippet",
    Column.SOURCE: "Source",
    Column.MARK: "★",
    Column.BEFORE: "Before",
    Column.MOVE: "Move",
}
HEADER_TIPS = {
    Column.RANK: (
        "Rank by score; '=' marks documents tied on score with a neighbour (equal scores are "
        "listed in index order)"
    ),
    Column.PARTS: (
        "Each coloured segment is one query term's share of the score "
        "(colours as in the query chips)"
    ),
    Column.MARK: (
        "Relevant: click the star (or press Space) to mark a result relevant, then re-rank with "
        "feedback. ✓ judged relevant in the relevance judgements."
    ),
    Column.BEFORE: "Rank without relevance feedback",
    Column.MOVE: (
        "How relevance feedback moved the document: ▲ up, ▼ down, = same place, "
        "new: outside the list without feedback"
    ),
}
_NUMERIC = (Column.RANK, Column.SCORE, Column.BEFORE)

MoveKind = Literal["up", "down", "same", "new"]


@dataclass(frozen=True, slots=True)
class Movement:
    """Where relevance feedback moved a document: from rank ``before`` to rank ``after``."""

    kind: MoveKind
    before: int
    after: int

    @property
    def shift(self) -> int:
        """Return how many places the document rose (negative: fell)."""
        return self.before - self.after

    @property
    def text(self) -> str:
        """Return the arrow text: ``▲3``, ``▼2``, ``=`` or ``new``."""
        if self.kind == "up":
            return f"▲{self.shift}"
        if self.kind == "down":
            return f"▼{-self.shift}"
        return "=" if self.kind == "same" else "new"


def movement(row: ResultRow, listed: int) -> Movement | None:
    """Return how feedback moved ``row`` in a list of ``listed`` hits (None: no feedback).

    A document ranked below the list's length without feedback is "new" to the list. (Feedback
    changes weights, not which documents match, so every row of a feedback ranking has a rank
    without it.)
    """
    before, after = row.before, row.hit.rank
    if before is None:
        return None
    if before > listed:
        return Movement("new", before, after)
    if before > after:
        return Movement("up", before, after)
    if before < after:
        return Movement("down", before, after)
    return Movement("same", before, after)


def hit_source(hit: Hit) -> str:
    """Return where a hit lives: its file path or URL, else its id in the corpus."""
    return hit.location or f"id {hit.docid}"


class ResultsModel(RowTableModel[ResultRow]):
    """Adapts a ranking (``tuple[ResultRow, ...]``) and the relevance marks; owns no logic."""

    headers = tuple(HEADERS[c] for c in Column)
    header_tips = tuple(HEADER_TIPS.get(c) for c in Column)
    numeric = frozenset(_NUMERIC)
    centered = frozenset({Column.MARK, Column.MOVE})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._moves: tuple[Movement | None, ...] = ()
        self._move_of: dict[int, Movement | None] = {}
        self._ties: dict[int, list[int]] = {}  # tie group → the ranks listed in it
        self._colors = TermColors()
        self._scale = 1.0
        self._marked: frozenset[str] = frozenset()
        self._judged: frozenset[str] = frozenset()

    def set_rows(self, rows: Sequence[ResultRow], colors: TermColors | None = None) -> None:
        """Show a new ranking in the colours of its query terms (model reset)."""
        rows = tuple(rows)
        self._moves = tuple(movement(r, len(rows)) for r in rows)
        self._move_of = {r.hit.docno: m for r, m in zip(rows, self._moves, strict=True)}
        self._colors = colors if colors is not None else TermColors()
        totals = [sum(abs(c.weight) for c in r.hit.contributions) for r in rows]
        self._scale = max(totals, default=0.0) or 1.0
        self._ties = {}  # tie group → the ranks listed in it
        for r in rows:
            if r.hit.tie_group is not None:
                self._ties.setdefault(r.hit.tie_group, []).append(r.hit.rank)
        super().set_rows(rows)

    def set_snippets(self, snippets: Mapping[int, Snippet]) -> None:
        """Fill in the snippets of rows shown blank (by docno), without resetting the view."""
        rows = list(self._rows)
        changed = [i for i, r in enumerate(rows) if r.hit.docno in snippets]
        for i in changed:
            rows[i] = replace(rows[i], snippet=snippets[rows[i].hit.docno])
        self._rows = tuple(rows)
        if changed:
            self.dataChanged.emit(
                self.index(min(changed), Column.SNIPPET), self.index(max(changed), Column.SNIPPET)
            )

    def set_marks(self, marked: frozenset[str], judged: frozenset[str] = frozenset()) -> None:
        """Show which documents (by id) the user marked relevant and which are judged relevant."""
        if marked == self._marked and judged == self._judged:
            return
        self._marked, self._judged = frozenset(marked), frozenset(judged)
        self.emit_column_changed(
            Column.MARK,
            [Qt.ItemDataRole.DisplayRole, MARK_ROLE, SORT_ROLE, Qt.ItemDataRole.ToolTipRole],
        )

    @property
    def colors(self) -> TermColors:
        """Return the term colours of the current query."""
        return self._colors

    @property
    def has_feedback(self) -> bool:
        """Return whether the ranking shown uses relevance feedback (rows know their "before")."""
        return any(m is not None for m in self._moves)

    def hit(self, row: int) -> Hit:
        """Return the hit of ``row``."""
        return self._rows[row].hit

    def hits(self) -> tuple[Hit, ...]:
        """Return every hit, in rank order."""
        return tuple(r.hit for r in self._rows)

    def movement(self, row: int) -> Movement | None:
        """Return how feedback moved the document of ``row`` (None without feedback)."""
        return self._moves[row]

    def movements(self) -> tuple[Movement | None, ...]:
        """Return every row's movement, in rank order."""
        return self._moves

    def row_of_docno(self, docno: int) -> int:
        """Return the row showing ``docno`` (-1 when absent)."""
        return next((i for i, r in enumerate(self._rows) if r.hit.docno == docno), -1)

    def row_of_docid(self, docid: str) -> int:
        """Return the row showing the document ``docid`` (-1 when absent)."""
        return next((i for i, r in enumerate(self._rows) if r.hit.docid == docid), -1)

    # -- cells -----------------------------------------------------------------------------------

    def row_data(self, row: ResultRow) -> Hit:
        """Return the row's :class:`Hit` (:data:`HIT_ROLE`)."""
        return row.hit

    def display(self, row: ResultRow, column: int) -> str:
        """Return a cell's text."""
        hit, col = row.hit, Column(column)
        if col == Column.RANK:
            return f"={hit.rank}" if hit.tie_group is not None else str(hit.rank)
        if col == Column.SCORE:
            return f"{hit.score:.3f}"
        if col == Column.PARTS:
            return ""
        if col == Column.TITLE:
            return hit.title or hit.docid
        if col == Column.SNIPPET:
            return row.snippet.text
        if col == Column.MARK:
            marked, judged = self._mark(hit)
            return ("★" if marked else "☆") + ("✓" if judged else "")
        if col == Column.BEFORE:
            return "" if row.before is None else str(row.before)
        if col == Column.MOVE:
            move = self._move(row)
            return "" if move is None else move.text
        return hit_source(hit)

    def sort_key(self, row: ResultRow, column: int) -> Any:
        """Return a cell's raw value."""
        hit, col = row.hit, Column(column)
        if col == Column.MARK:
            marked, judged = self._mark(hit)
            # Marked first, then judged (descending sort), rank order within each.
            return 2 * marked + judged - hit.rank / (len(self._rows) + 1)
        if col == Column.MOVE:
            move = self._move(row)
            return move.shift if move is not None and move.kind != "new" else 10**9
        return {
            Column.RANK: hit.rank,
            Column.SCORE: hit.score,
            Column.PARTS: hit.score,
            Column.TITLE: (hit.title or hit.docid).lower(),
            Column.SNIPPET: row.snippet.text.lower(),
            Column.SOURCE: hit_source(hit).lower(),
            Column.BEFORE: row.before if row.before is not None else hit.rank,
        }[col]

    def cell_data(self, row: ResultRow, column: int, role: int) -> Any:
        """Return the painted cells' data (bars, snippets, marks) and muted text colours."""
        hit, col = row.hit, Column(column)
        if role == MARK_ROLE:
            return self._mark(hit)
        if role == MOVE_ROLE:
            return self._move(row)
        if role == PARTS_ROLE:
            return tuple((c.term, self._colors.color(c.term), c.weight) for c in hit.contributions)
        if role == SCALE_ROLE:
            return self._scale
        if role == SNIPPET_ROLE:
            return (row.snippet, self._colors)
        if role == Qt.ItemDataRole.BackgroundRole and hit.tie_group is not None:
            # Tied runs shaded, every other run a little darker, so two runs never merge.
            palette = QApplication.palette()
            runs = sorted(self._ties)
            strength = 0.10 if runs.index(hit.tie_group) % 2 == 0 else 0.18
            return highlight_background(palette.color(QPalette.ColorRole.Mid), palette, strength)
        if role == Qt.ItemDataRole.ForegroundRole:
            palette = QApplication.palette()
            if col in (Column.SOURCE, Column.RANK, Column.BEFORE):
                return palette.color(QPalette.ColorRole.PlaceholderText)
            move = self._move(row)
            if col == Column.MOVE and move is not None:
                if move.kind == "same":
                    return palette.color(QPalette.ColorRole.PlaceholderText)
                colors = status_colors(palette)
                return colors["bad"] if move.kind == "down" else colors["good"]
        return None

    def _tie_text(self, hit: Hit) -> str:
        """Say which ranks tie with ``hit`` and how equal scores are ordered."""
        assert hit.tie_group is not None
        ranks = self._ties.get(hit.tie_group, [hit.rank])
        beyond = " and beyond the list" if ranks[-1] == len(self._rows) else ""
        return (
            f"Tied: ranks {ranks[0]}–{ranks[-1]}{beyond} have the same score, "
            f"{_g(hit.score)}.\n{TIE_RULE}"
        )

    def _move(self, row: ResultRow) -> Movement | None:
        return self._move_of.get(row.hit.docno)

    def _mark(self, hit: Hit) -> tuple[bool, bool]:
        return hit.docid in self._marked, hit.docid in self._judged

    def tooltip(self, row: ResultRow, column: int) -> str | None:
        """Return a cell's tooltip: the score's sum, the full title, the marks, the move."""
        hit, col = row.hit, Column(column)
        move = self._move(row)
        if col == Column.PARTS or col == Column.SCORE:
            lines = [f"score {_g(hit.score)} = sum of:"]
            for c in hit.contributions:
                share = c.weight / hit.score if hit.score else 0.0
                lines.append(
                    f"  {c.term}: {_g(c.weight)} ({share:.0%})  "
                    f"tf {c.tf}, df {c.df}, idf {c.idf:.3f}"
                )
            return "\n".join(lines)
        if col == Column.RANK and hit.tie_group is not None:
            return self._tie_text(hit)
        if col == Column.TITLE:
            return f"{hit.title or hit.docid}\nid {hit.docid} · {hit.length} terms"
        if col == Column.SOURCE:
            return hit_source(hit)
        if col == Column.SNIPPET:
            return row.snippet.text
        if col == Column.MARK:
            marked, judged = self._mark(hit)
            lines = [
                "Marked relevant (click or Space to unmark)"
                if marked
                else "Click (or press Space) to mark as relevant"
            ]
            if judged:
                lines.append("✓ judged relevant in the relevance judgements")
            return "\n".join(lines)
        if col in (Column.BEFORE, Column.MOVE) and move is not None:
            if move.kind == "new":
                return (
                    f"rank {move.before} without feedback (outside the top {len(self._rows)}), "
                    f"now {move.after}"
                )
            return f"rank {move.before} without feedback, {move.after} with it"
        return None
