"""Relevance feedback in the Search tab: the marks per query and the bar above the results.

The user marks results relevant (a star); "Re-rank with feedback" ranks the same query again with
the Robertson/Sparck Jones weight in place of every term's idf, R being the marked documents and
r those of them containing the term (docs/scoring.md). Marks belong to one query of one index:
they stay while the query text stays the same (up to spaces), and come back when the user returns
to a query they marked before. Documents judged relevant (opened from the Evaluation view) are kept
apart from the user's marks: they show as a muted tick and count for feedback only once the user
marks them.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from html import escape

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from bm25desk.ui.common.colors import muted_text, status_colors
from bm25desk.ui.search.delegates import judged_color, star_color
from bm25desk.ui.search.results_model import movement
from bm25desk.ui.search.work import SearchOutcome


def query_key(text: str) -> str:
    """Return the text marks are kept under: the query with its spaces normalised."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Marks:
    """The relevance marks of one query (document ids) and whether feedback is on."""

    marked: frozenset[str] = frozenset()
    judged: frozenset[str] = frozenset()
    enabled: bool = False

    @property
    def active(self) -> bool:
        """Return whether the ranking should use feedback (on, with something marked)."""
        return self.enabled and bool(self.marked)


class MarksMemory:
    """Marks per (index, query), for the current query and the last :attr:`LIMIT` others.

    Qt-free state owned by the search panel. Marks made before any index is open (a query
    opened with its judgements while the index loads) join the next index opened.
    """

    LIMIT = 64

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[str, str], Marks] = OrderedDict()
        self._index = ""
        self._query = ""

    @property
    def current(self) -> Marks:
        """Return the marks of the current query."""
        return self._entries.get((self._index, self._query), Marks())

    @property
    def query(self) -> str:
        """Return the current query (normalised)."""
        return self._query

    def peek(self, query: str) -> Marks:
        """Return the marks of ``query`` without making it the current one."""
        return self._entries.get((self._index, query_key(query)), Marks())

    def set_index(self, name: str | None) -> None:
        """Make ``name`` the current index (None: no index open; the marks are kept)."""
        if name is None or name == self._index:
            return
        for (index, query), marks in list(self._entries.items()):
            if index == "":
                del self._entries[(index, query)]
                self._entries.setdefault((name, query), marks)
        self._index = name

    def switch(self, query: str) -> Marks:
        """Make ``query`` the current one; return its marks (none if it was never marked)."""
        self._query = query_key(query)
        key = (self._index, self._query)
        if key in self._entries:
            self._entries.move_to_end(key)
        return self.current

    def update(self, marks: Marks) -> Marks:
        """Replace the current query's marks (feedback turns off when nothing is marked)."""
        if not marks.marked:
            marks = replace(marks, enabled=False)
        key = (self._index, self._query)
        if marks == Marks():
            self._entries.pop(key, None)
        else:
            self._entries[key] = marks
            self._entries.move_to_end(key)
            while len(self._entries) > self.LIMIT:
                self._entries.popitem(last=False)
        return marks

    def toggle(self, docid: str) -> Marks:
        """Mark ``docid`` relevant, or unmark it; return the new marks."""
        m = self.current
        marked = m.marked - {docid} if docid in m.marked else m.marked | {docid}
        return self.update(replace(m, marked=marked))

    def mark(self, docids: frozenset[str]) -> Marks:
        """Add ``docids`` to the marked documents."""
        m = self.current
        return self.update(replace(m, marked=m.marked | docids))

    def set_enabled(self, on: bool) -> Marks:
        """Turn feedback on or off for the current query."""
        return self.update(replace(self.current, enabled=on))

    def set_judged(self, docids: frozenset[str]) -> Marks:
        """Set the documents judged relevant for the current query."""
        return self.update(replace(self.current, judged=frozenset(docids)))

    def clear(self) -> Marks:
        """Unmark everything the user marked and turn feedback off (judgements stay)."""
        return self.update(replace(self.current, marked=frozenset(), enabled=False))


class FeedbackBar(QWidget):
    """The bar above the results: the marks, re-rank and clear, the judgements, what moved.

    It reads "★ N marked relevant [Re-rank with feedback] [Clear]", then the documents judged
    relevant (when the query came from the Evaluation view), and, with feedback on, how many
    results rose, fell or are new compared with the plain ranking. With nothing marked or judged
    it is hidden (the ★ column's tooltip and the status bar say how to mark).

    Signals
    -------
    feedback_requested(bool)
        The user turned feedback on or off.
    clear_requested()
        The user wants every mark removed.
    judged_requested()
        The user wants the judged-relevant documents marked relevant.
    """

    feedback_requested = Signal(bool)
    clear_requested = Signal()
    judged_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.count_label = QLabel()
        self.count_label.setTextFormat(Qt.TextFormat.RichText)
        self.rerank_button = QToolButton()
        self.rerank_button.setText("Re-rank with feedback")
        self.rerank_button.setCheckable(True)
        self.rerank_button.setToolTip(
            "Rank again with the Robertson/Sparck Jones weight in place of each term's idf, "
            "learnt from the documents marked relevant (click again for the plain ranking)"
        )
        self.rerank_button.toggled.connect(self._on_rerank_button_toggled)
        self.clear_button = QToolButton()
        self.clear_button.setText("Clear")
        self.clear_button.setToolTip("Remove every relevance mark and show the plain ranking")
        self.clear_button.clicked.connect(self.clear_requested)
        self.judged_label = QLabel()
        self.judged_label.setTextFormat(Qt.TextFormat.RichText)
        self.judged_button = QToolButton()
        self.judged_button.setText("Mark judged relevant")
        self.judged_button.setToolTip(
            "Mark every document judged relevant for this query (feedback from the judgements)"
        )
        self.judged_button.clicked.connect(self.judged_requested)
        self.summary_label = QLabel()
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.addWidget(self.count_label)
        layout.addWidget(self.rerank_button)
        layout.addWidget(self.clear_button)
        layout.addSpacing(12)
        layout.addWidget(self.judged_label)
        layout.addWidget(self.judged_button)
        layout.addStretch(1)
        layout.addWidget(self.summary_label)
        self.show_marks(Marks(), None)

    def wanted(self, marks: Marks) -> bool:
        """Return whether the bar has something to say (marks or judgements): else it hides."""
        return bool(marks.marked or marks.judged)

    def show_marks(self, marks: Marks, outcome: SearchOutcome | None) -> None:
        """Show the marks of the current query and what feedback did to ``outcome``."""
        palette = self.palette()
        muted = muted_text(palette).name()
        missing = outcome.missing if outcome is not None else frozenset()
        n = len(marks.marked)
        if n:
            gone = len(marks.marked & missing)
            self.count_label.setText(
                f"<span style='color:{star_color(palette).name()}'>★</span> "
                f"<b>{n}</b> marked relevant"
                + (
                    f" <span style='color:{muted}'>({gone} not in this index)</span>"
                    if gone
                    else ""
                )
            )
        else:
            self.count_label.setText(f"<span style='color:{muted}'>☆ nothing marked</span>")
        self.rerank_button.blockSignals(True)
        self.rerank_button.setChecked(marks.active)
        self.rerank_button.blockSignals(False)
        # The checked look is faint in some styles: the text says what a click will do.
        self.rerank_button.setText(
            "Back to the plain ranking" if marks.active else "Re-rank with feedback"
        )
        self.rerank_button.setEnabled(bool(n))
        self.clear_button.setEnabled(bool(n))
        judged = marks.judged
        self.judged_label.setVisible(bool(judged))
        self.judged_button.setVisible(bool(judged))
        if judged:
            listed = 0
            if outcome is not None:
                listed = sum(1 for r in outcome.rows if r.hit.docid in judged)
            gone = len(judged & missing)
            self.judged_label.setText(
                f"<span style='color:{judged_color(palette).name()}'>✓</span> "
                f"{len(judged)} judged relevant, {listed} in the list"
                + (f", {gone} not in this index" if gone else "")
            )
            self.judged_button.setEnabled(not (judged - missing) <= marks.marked)
        self.summary_label.setText(self._summary(outcome, muted))

    def _summary(self, outcome: SearchOutcome | None, muted: str) -> str:
        if outcome is None or outcome.feedback is None:
            return ""
        listed = len(outcome.rows)
        moves = [movement(r, listed) for r in outcome.rows]
        up = sum(1 for m in moves if m is not None and m.kind == "up")
        down = sum(1 for m in moves if m is not None and m.kind == "down")
        new = sum(1 for m in moves if m is not None and m.kind == "new")
        colors = status_colors(self.palette())
        good, bad = colors["good"].name(), colors["bad"].name()
        parts = [
            f"<span style='color:{good}'>▲ {up}</span>",
            f"<span style='color:{bad}'>▼ {down}</span>",
        ]
        if new:
            parts.append(f"<span style='color:{good}'>{new} new</span>")
        r = len(outcome.feedback.relevant)
        return (
            f"<span style='color:{muted}'>{escape('RSJ weight, R = ')}{r}: </span>"
            + " · ".join(parts)
            + f"<span style='color:{muted}'> vs the plain top {listed}</span>"
        )

    @Slot(bool)
    def _on_rerank_button_toggled(self, on: bool) -> None:
        self.feedback_requested.emit(on)
