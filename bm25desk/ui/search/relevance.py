"""The Search tab's relevance marks: marking results relevant and re-ranking with feedback.

The user marks results relevant (a star); "Re-rank with feedback" ranks the same query again with
the Robertson/Sparck Jones weight in place of every term's idf. Marks are kept per query by a
:class:`~bm25desk.ui.search.feedback.MarksMemory`; the bar above the results shows them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtGui import QAction

from bm25desk.ui.search.feedback import FeedbackBar, Marks, MarksMemory
from bm25desk.ui.search.results_model import ResultsModel
from bm25desk.ui.search.results_view import ResultsView
from bm25desk.ui.search.work import SearchOutcome

MARK_HINT = "Tip: mark a result relevant (click its ☆ or press Space), then re-rank with feedback"


class RelevanceMarks:
    """The relevance-marks part of :class:`~bm25desk.ui.search.panel.SearchPanel` (a mixin).

    The panel provides the results (:attr:`model`, :attr:`view`), the ranking on screen
    (:attr:`_outcome`), :meth:`search_now` and the ``marks_changed`` signal.
    """

    model: ResultsModel
    view: ResultsView
    _outcome: SearchOutcome | None
    marks_changed: Any
    status_hint: Any

    def _show_feedback_bar(self) -> None:
        """Show the bar above the results when there are results and marks or judgements."""
        listed = self._outcome is not None and bool(self._outcome.rows)
        self.feedback_bar.setVisible(listed and self.feedback_bar.wanted(self.marks.current))

    def search_now(self) -> None:
        """Search again (the panel's)."""
        raise NotImplementedError

    def _make_relevance(self) -> None:
        """Create the marks, the feedback bar and the menu actions."""
        self.marks = MarksMemory()
        self.feedback_action = QAction("Re-rank with feedback", self.view)
        self.feedback_action.setCheckable(True)
        self.feedback_action.triggered.connect(self.set_feedback)
        self.clear_marks_action = QAction("Clear relevance marks", self.view)
        self.clear_marks_action.triggered.connect(self.clear_marks)
        self.feedback_bar = FeedbackBar()
        self.feedback_bar.feedback_requested.connect(self.set_feedback)
        self.feedback_bar.clear_requested.connect(self.clear_marks)
        self.feedback_bar.judged_requested.connect(self.mark_judged)

    def current_marks(self) -> Marks:
        """Return the relevance marks of the query on screen."""
        return self.marks.current

    def toggle_mark(self, docid: str) -> None:
        """Mark document ``docid`` relevant for the current query, or unmark it."""
        self._apply_marks(self.marks.toggle(docid))

    @Slot()
    def toggle_selected_mark(self) -> None:
        """Mark the selected result relevant, or unmark it (Space)."""
        hit = self.view.selected_hit()
        if hit is not None:
            self.toggle_mark(hit.docid)

    def mark(self, docids: frozenset[str]) -> None:
        """Mark ``docids`` relevant for the current query."""
        self._apply_marks(self.marks.mark(frozenset(docids)))

    @Slot()
    def mark_judged(self) -> None:
        """Mark every document judged relevant for the current query (those in the index)."""
        missing = self._outcome.missing if self._outcome is not None else frozenset()
        self.mark(self.marks.current.judged - missing)

    @Slot(bool)
    def set_feedback(self, on: bool) -> None:
        """Rank with relevance feedback from the marked documents, or without it."""
        self._apply_marks(self.marks.set_enabled(on))

    @Slot()
    def clear_marks(self) -> None:
        """Remove the user's relevance marks of the current query (plain ranking)."""
        self._apply_marks(self.marks.clear())

    def _apply_marks(self, marks: Marks) -> None:
        """Show changed marks; re-rank when the ranking depends on them."""
        outcome = self._outcome
        used = outcome.feedback if outcome is not None else None
        self._show_marks(marks)
        self.marks_changed.emit(marks)
        if marks.active or used is not None:  # feedback turned on, off, or its set changed
            self.search_now()

    def _show_marks(self, marks: Marks) -> None:
        self.model.set_marks(marks.marked, marks.judged)
        self.feedback_bar.show_marks(marks, self._outcome)
        self._show_feedback_bar()
        self.status_hint.emit("" if marks.marked or self._outcome is None else MARK_HINT)
        self.feedback_action.setChecked(marks.active)
        self.feedback_action.setEnabled(bool(marks.marked))
        self.clear_marks_action.setEnabled(bool(marks.marked))
